"""logical_divide and its zipped / tiled / flat forms.

Every example is also run through the brute-force ``check_*`` helpers, which
evaluate the result over its whole domain against the defining formula
``logical_divide(A, T) = A o make_layout(T, complement(T, shape(coalesce(A))))``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, _, parse
from oracle import compatible, rank
from strategies import compact_layouts, divisor_tilers, injective_layouts, layouts, shapes

P = parse


# ---------------------------------------------------------------------------
# helpers


def _size(x):
    return cute_py.size(x)


def _tile_rest_of_mode(R, tiler):
    """Tile modes and rest modes of a by-mode divide result (a flat tuple tiler), in zipped order."""
    tiles, rests = [], []
    for i, t in enumerate(tiler):
        assert not isinstance(t, tuple), "nested tilers are not generated here"
        assert rank(R[i]) == 2, f"divided mode {R[i]} is not (tile, rest)"
        tiles.append(R[i][0])
        rests.append(R[i][1])
    rests += [R[i] for i in range(len(tiler), rank(R))]
    return tiles, rests


def check_logical_divide(A, T, R):
    """Postconditions of ``R == logical_divide(A, T)``; returns R."""
    assert isinstance(R, Layout)
    if isinstance(T, tuple):
        # mode by mode; modes of A beyond the tiler are kept unchanged
        assert rank(R) == rank(A)
        for i in range(rank(A)):
            if i < len(T) and T[i] is not _:
                sub = T[i]
                check_logical_divide(A[i], sub, R[i])
            else:
                assert R[i] == A[i]
        assert _size(R) >= _size(A)
        return R
    if T is _:
        assert R == A
        return R
    Tl = T if isinstance(T, Layout) else Layout(T)
    M = cute_py.make_layout(Tl, cute_py.complement(Tl, cute_py.coalesce(A).shape))
    assert rank(R) == 2
    assert compatible(Tl.shape, R[0].shape), (Tl, R)
    assert compatible(M.shape, R.shape), (M, R)
    assert _size(R) == _size(M)
    for i in range(_size(M)):
        assert R(i) == A(M(i)), f"R({i})={R(i)} but A(M({i}))={A(M(i))}; A={A} T={Tl} R={R}"
    for i in range(_size(Tl)):
        assert R[0](i) == A(Tl(i))
    # the tiles cover A
    assert _size(R) >= _size(A), f"size(R)={_size(R)} < size(A)={_size(A)}; A={A} T={Tl} R={R}"
    return R


def _rest_layouts(R, T):
    """Tile and rest modes of the logical result, in zipped order."""
    if isinstance(T, tuple):
        tiles, rests = _tile_rest_of_mode(R, T)
        return tiles, rests
    return [R[0]], [R[1]]


def _zipped_coord_to_logical(R, T):
    """A function index-in-zipped-order -> offset, built from R's tile/rest modes."""
    tiles, rests = _rest_layouts(R, T)
    modes = tiles + rests
    sizes = [_size(m) for m in modes]
    ntile = len(tiles)

    def value(i):
        # colexicographic split over ((tiles), (rests)); each part evaluated by its own layout
        vals = []
        for s in sizes:
            vals.append(i % s)
            i //= s
        # tile sizes / rest sizes line up with the original modes of R
        if isinstance(T, tuple):
            return _eval_tuple_divided(R, T, vals[:ntile], vals[ntile:])
        return R((vals[0], vals[1]))

    return value


def _eval_tuple_divided(R, T, tile_idx, rest_idx):
    """R evaluated at the coordinate whose mode i is (tile_idx[i], rest_idx[i]) (extra modes: rest)."""
    coord = []
    k = len(T)
    for i in range(rank(R)):
        if i < k:
            coord.append((tile_idx[i], rest_idx[i]))
        else:
            coord.append(rest_idx[i])
    return R(tuple(coord))


def check_zipped_tiled_flat(A, T, R, Z, Ti, F):
    """Zipped/tiled/flat forms regroup R's modes: same offsets, structure per CuTe."""
    assert _size(Z) == _size(Ti) == _size(F) == _size(R)
    # zipped: rank 2, mode 0 the tile
    assert rank(Z) == 2
    if isinstance(T, tuple):
        tiles, rests = _tile_rest_of_mode(R, T)
        assert rank(Z[0]) == len(tiles)
        assert rank(Z[1]) == len(rests)
        for j, t in enumerate(tiles):
            assert Z[0][j] == t
        for j, r in enumerate(rests):
            assert Z[1][j] == r
        # Z((t...),(r...)) == R(((t0,r0),(t1,r1),...,extra)) for every index
        zval = _zipped_coord_to_logical(R, T)
        for i in range(_size(Z)):
            assert Z(i) == zval(i)
    else:
        # a layout tiler: the logical form already is ((tile),(rest))
        assert Z == R
        for i in range(_size(Z)):
            assert Z(i) == R(i)
    # tiled: ((tile), rest0, rest1, ...): rank 1 + rank(rest)
    assert Ti[0] == Z[0]
    assert rank(Ti) == 1 + rank(Z[1])
    # flat: every tile and rest mode at the top
    assert rank(F) == rank(Z[0]) + rank(Z[1])
    # splicing keeps colexicographic order: same function on 1-D indices
    for i in range(_size(Z)):
        assert Ti(i) == Z(i)
        assert F(i) == Z(i)
    # and the same multiset of offsets as the logical result
    assert sorted(Z(i) for i in range(_size(Z))) == sorted(R(i) for i in range(_size(R)))


def all_divides(A, T):
    R = cute_py.logical_divide(A, T)
    check_logical_divide(A, T, R)
    Z, Ti, F = cute_py.zipped_divide(A, T), cute_py.tiled_divide(A, T), cute_py.flat_divide(A, T)
    check_zipped_tiled_flat(A, T, R, Z, Ti, F)
    return R, Z, Ti, F


# ---------------------------------------------------------------------------
# exact values (reference §1.6, verified in CuTe C++ and pycute)

LOGICAL = [
    ("24:1", "4:2", "(4,(2,3)):(2,(1,8))"),
    ("6:1", "(2,3):(3,1)", "((2,3),1):((3,1),0)"),
    ("(6,6):(12,1)", "(6,3):(3,1)", "(((2,3),3),2):(((36,1),12),3)"),
    ("32:1", "2:8", "(2,(8,2)):(8,(1,16))"),
    ("(8,8):(8,1)", "32:2", "((4,8),2):((16,1),8)"),
    ("2:1", "32:1", "(32,1):(1,0)"),
    ("48:1", "32:1", "(32,2):(1,32)"),
]


@pytest.mark.parametrize("a, t, expected", LOGICAL)
def test_logical_divide_examples(a, t, expected):
    A, T = P(a), P(t)
    R, _z, _t, _f = all_divides(A, T)
    assert str(R) == expected


TUPLE_ROWS = [
    (P("(9,(4,8)):(59,(13,1))"), (P("3:3"), P("(2,4):(1,8)")),
     "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
     "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))",
     "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))"),
    (P("(12,32):(32,1)"), (4, 8),
     "((4,3),(8,4)):((32,128),(1,8))",
     "((4,8),(3,4)):((32,1),(128,8))",
     "((4,8),3,4):((32,1),128,8)"),
    (Layout((16, 16, 4)), (P("8:1"), P("8:1")),
     "((8,2),(8,2),4):((1,8),(16,128),256)",
     "((8,8),(2,2,4)):((1,16),(8,128,256))",
     "((8,8),2,2,4):((1,16),8,128,256)"),
    (Layout((8, 8)), (P("4:1"),),
     "((4,2),8):((1,4),8)",
     "((4),(2,8)):((1),(4,8))",
     "((4),2,8):((1),4,8)"),
]


@pytest.mark.parametrize("A, T, logical, zipped, tiled", TUPLE_ROWS)
def test_divide_table_tuple_tilers(A, T, logical, zipped, tiled):
    R, Z, Ti, _f = all_divides(A, T)
    assert str(R) == logical
    assert str(Z) == zipped
    assert str(Ti) == tiled


def test_tuple_tiler_with_shape_string():
    """A tiler given as the parsed shape ``(4,8)`` (a tuple of ints) divides by mode."""
    A = P("(12,32):(32,1)")
    assert cute_py.logical_divide(A, P("(4,8)")) == cute_py.logical_divide(A, (4, 8))


def test_flat_divide_example():
    R, Z, Ti, F = all_divides(Layout((8, 8)), (4, 2))
    assert str(F) == "(4,2,2,4):(1,8,4,16)"


def test_flat_divide_table_row():
    _r, _z, _t, F = all_divides(P("(9,(4,8)):(59,(13,1))"), (P("3:3"), P("(2,4):(1,8)")))
    assert str(F) == "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))"


# §5: CuTe's logical_divide.cpp exact checks (dynamic inputs)


def test_divide_2_by_32():
    R, *_ = all_divides(Layout(2), Layout(32))
    assert R[0] == Layout(32, 1)
    assert R.shape[1] == 1
    assert str(R) == "(32,1):(1,0)"


def test_divide_48_by_32():
    R, *_ = all_divides(Layout(48), Layout(32))
    assert str(R) == "(32,2):(1,32)"


def test_divide_32_by_48():
    R, *_ = all_divides(Layout(32), Layout(48))
    assert R.shape == (48, 1)
    assert R[0] == Layout(48, 1)


def test_divide_32_4_4_by_64():
    """C++ ``(_32,_4,4) / _64`` gives ``(_64,(_2,4)):(_1,(_64,_128))``.

    The nested rest ``(2,4)`` only exists in C++ because the last extent is
    dynamic and C++ refuses to coalesce it; with every int known (cute_py's
    model, and C++ with all ``Int<N>``) coalesce merges it and the result is
    ``(64,8):(1,64)``. Either way, the function is the same.
    """
    A = Layout((32, 4, 4))
    R, *_ = all_divides(A, Layout(64))
    assert R[0] == Layout(64, 1)
    cxx = P("(64,(2,4)):(1,(64,128))")
    assert _size(R) == _size(cxx) == 512
    for i in range(512):
        assert R(i) == cxx(i)
    assert str(R) == "(64,8):(1,64)"
    # int tiler is the same as the layout tiler n:1
    assert cute_py.logical_divide(A, 64) == R


def test_divide_size1_with_stride_cxx_semantics():
    """§1.7 item 4: C++ keeps ``1:1`` linear outside its domain (pycute gives ``(6,1):(0,0)``)."""
    R = cute_py.logical_divide(P("1:1"), P("6:1"))
    assert str(R) == "(6,1):(1,0)"
    check_logical_divide(P("1:1"), P("6:1"), R)


def test_tuple_tiler_keeps_extra_modes():
    A = Layout((4, 6, 2))
    R, Z, Ti, F = all_divides(A, (2, 3))
    assert str(R) == "((2,2),(3,2),2):((1,2),(4,12),24)"
    assert R[2] == A[2]
    assert str(Z) == "((2,3),(2,2,2)):((1,4),(2,12,24))"
    assert str(Ti) == "((2,3),2,2,2):((1,4),2,12,24)"
    assert str(F) == "(2,3,2,2,2):(1,4,2,12,24)"


def test_underscore_tilers():
    A = Layout((4, 6, 2))
    assert cute_py.logical_divide(A, _) == A
    R = cute_py.logical_divide(A, (2, _))
    assert str(R) == "((2,2),6,2):((1,2),4,24)"
    check_logical_divide(A, (2, _), R)


def test_int_tiler_is_n_colon_1():
    A = Layout((4, 6))
    assert cute_py.logical_divide(A, 3) == cute_py.logical_divide(A, Layout(3, 1))
    R = cute_py.logical_divide(A, 3)
    assert str(R) == "(3,8):(1,3)"
    check_logical_divide(A, 3, R)


def test_tiled_rank1_rest_stays_wrapped():
    """§1.7 item 5: the tiled form keeps a rank-1 rest mode as a rank-1 tuple."""
    Ti = cute_py.tiled_divide(Layout((8, 8)), (P("4:1"),))
    assert Ti[0].shape == (4,)


def test_composed_divisions_match_inner():
    C = cute_py.composition(cute_py.Swizzle(3, 3, 3), P("(8,64):(64,1)"))
    for f in (cute_py.logical_divide, cute_py.zipped_divide, cute_py.tiled_divide, cute_py.flat_divide):
        out = f(C, (2, 8))
        assert out.inner == f(C.inner, (2, 8))
        for i in range(_size(out)):
            assert out(i) == C.outer(out.inner(i))


def _rejected_or_checked(A, T):
    try:
        R = cute_py.logical_divide(A, T)
    except cute_py.LayoutError:
        return None
    return check_logical_divide(A, T, R)


def test_divide_by_strided_tiler_keeps_function():
    """M = (2:5, complement) = (2,5):(5,1) reaches offset 6, which lies in A's second
    mode: A(6) = 12. The divide must either refuse or give R(3) == A(M(3)) == 12."""
    _rejected_or_checked(P("(6,2):(1,12)"), P("2:5"))


def test_divide_by_strided_tiler_keeps_function_2():
    _rejected_or_checked(P("(3,2):(9,10)"), P("2:2"))


# errors


def test_too_many_tiler_modes_is_rank_error():
    with pytest.raises(cute_py.RankError):
        cute_py.logical_divide(Layout((4, 6)), (2, 3, 2))


def test_bad_stride_divisibility_raises():
    # C++ accepts this but returns a wrong layout (§1.7 item 7); cute_py must refuse
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.logical_divide(P("(6,4):(1,10)"), P("4:4"))


def test_non_tiler_is_type_error():
    with pytest.raises(TypeError):
        cute_py.logical_divide(Layout(6), "x")
    with pytest.raises(TypeError, match="logical_divide: expected a Layout .* got str"):
        cute_py.logical_divide("x", Layout(2))
    assert cute_py.logical_divide((6,), Layout(2)) == cute_py.logical_divide(Layout((6,)), Layout(2))   # a shape
    assert cute_py.logical_divide([6], Layout(2)) == cute_py.logical_divide((6,), Layout(2))   # lists as tuples


# ---------------------------------------------------------------------------
# properties


def _pair(layout_strategy):
    return layout_strategy.flatmap(lambda A: st.tuples(st.just(A), divisor_tilers(A)))


def _run_checked(A, T):
    try:
        R = cute_py.logical_divide(A, T)
    except cute_py.LayoutError:
        # a rejected input must be rejected by every form
        for f in (cute_py.zipped_divide, cute_py.tiled_divide, cute_py.flat_divide):
            with pytest.raises(cute_py.LayoutError):
                f(A, T)
        return None
    check_logical_divide(A, T, R)
    if isinstance(T, tuple) and any(t is _ for t in T):
        # CuTe's zip2_by needs a (tile, rest) pair for every tiler mode;
        # an undivided mode is only accepted if it happens to be rank 2
        return R
    check_zipped_tiled_flat(A, T, R, cute_py.zipped_divide(A, T), cute_py.tiled_divide(A, T),
                            cute_py.flat_divide(A, T))
    return R


@settings(max_examples=125, deadline=None)
@given(_pair(compact_layouts()))
def test_property_divide_compact(pair):
    A, T = pair
    R = _run_checked(A, T)
    if R is not None:
        # A is a bijection onto [0, size): dividing by an injective tiler inside
        # its size yields a bijection too
        vals = sorted(R(i) for i in range(_size(R)))
        if _size(R) == _size(A):
            assert vals == list(range(_size(A)))


@settings(max_examples=100, deadline=None)
@given(_pair(shapes().map(Layout)))
def test_property_col_major_divides_never_reject(pair):
    """A compact col-major A coalesces to ``n:1``, which admits every divisor tiler."""
    A, T = pair
    R = cute_py.logical_divide(A, T)
    check_logical_divide(A, T, R)
    # A is the identity on [0, size): R(i) == M(i)
    M = cute_py.make_layout(T, cute_py.complement(T, _size(A)))
    for i in range(_size(R)):
        assert R(i) == M(i)


@settings(max_examples=100, deadline=None)
@given(_pair(layouts()))
def test_property_divide_arbitrary_layouts(pair):
    A, T = pair
    _run_checked(A, T)


@settings(max_examples=75, deadline=None)
@given(_pair(injective_layouts()))
def test_property_divide_injective(pair):
    A, T = pair
    R = _run_checked(A, T)
    if R is not None:
        n = _size(R)
        vals = [R(i) for i in range(n)]
        if n == _size(A):
            assert len(set(vals)) == n


@st.composite
def _tuple_tiler_cases(draw):
    A = draw(compact_layouts(max_leaves=4).filter(lambda L: isinstance(L.shape, tuple) and len(L.shape) >= 2))
    k = draw(st.integers(1, len(A.shape)))
    tiler = []
    for i in range(k):
        choice = draw(st.integers(0, 3))
        if choice == 0:
            tiler.append(_)
        else:
            tiler.append(draw(divisor_tilers(A[i])))
    return A, tuple(tiler)


@settings(max_examples=100, deadline=None)
@given(_tuple_tiler_cases())
def test_property_divide_tuple_tilers(case):
    A, T = case
    _run_checked(A, T)


@settings(max_examples=100, deadline=None)
@given(injective_layouts(max_leaves=3, max_size=64), injective_layouts(max_leaves=2, max_size=8))
def test_property_divide_any_injective_tiler(A, T):
    """Any tiler: either a LayoutError or every postcondition holds."""
    _run_checked(A, T)
