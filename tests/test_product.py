"""logical_product, its zipped / tiled / flat forms, blocked / raked products, tile_to_shape.

The ``check_*`` helpers evaluate results over their whole domain against the
defining formulas (CuTe C++ ``layout.hpp``):

* ``logical_product(A, B) = make_layout(A, complement(A, size(A)*cosize(B)) o B)``
* ``blocked_product(A, B) = zip(lp[0], lp[1])`` and ``raked_product = zip(lp[1], lp[0])``
  where ``lp`` is the logical product of A and B padded with ``1:0`` to the same rank
* ``tile_to_shape(blk, trg, ord) = blocked_product(blk', make_ordered_layout(trg / blk', ord))``
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, LayoutLeft, LayoutRight, _, parse
from cute_py.int_tuple import product, product_each
from oracle import called_values, compatible, mode_coords, rank
from strategies import compact_layouts, injective_layouts, layouts

P = parse


# ---------------------------------------------------------------------------
# helpers


def _size(x):
    return cute_py.size(x)


def _injective(L):
    v = called_values(L)
    return len(set(v)) == len(v)


def check_logical_product(A, B, R):
    """Postconditions of ``R == logical_product(A, B)``; returns R."""
    assert isinstance(R, Layout)
    if isinstance(B, tuple):
        assert rank(R) == rank(A)
        for i in range(rank(A)):
            if i < len(B) and B[i] is not _:
                check_logical_product(A[i], B[i], R[i])
            else:
                assert R[i] == A[i]
        return R
    if B is _:
        assert R == A
        return R
    Bl = B if isinstance(B, Layout) else Layout(B)
    assert rank(R) == 2
    assert R[0] == A
    assert compatible(Bl.shape, R[1].shape), (Bl, R)
    assert _size(R) == _size(A) * _size(Bl)
    if all(Bl(j) == 0 for j in range(_size(Bl))):
        # B sends every coordinate to 0: the copies are B itself, whatever A is (no complement is needed, and a
        # non-injective A has none)
        assert all(R[1](j) == 0 for j in range(_size(Bl))), (A, Bl, R)
        return R
    C = cute_py.complement(A, _size(A) * cute_py.cosize(Bl))
    for j in range(_size(Bl)):
        assert R[1](j) == C(Bl(j)), f"R[1]({j})={R[1](j)} but complement(B({j}))={C(Bl(j))}; A={A} B={Bl} R={R}"
    # the repetitions never land on A's image (except offset 0)
    a_img = set(called_values(A))
    for j in range(_size(Bl)):
        v = R[1](j)
        assert v == 0 or v not in a_img or not _injective(A)
    if _injective(A) and _injective(Bl):
        assert _injective(R), f"A={A} B={Bl} R={R}"
    # a compact A repeated by a compact B tiles [0, size(A)*size(B)) exactly
    if sorted(called_values(A)) == list(range(_size(A))) and sorted(called_values(Bl)) == list(range(_size(Bl))):
        assert sorted(called_values(R)) == list(range(_size(R)))
    return R


def _tile_rest(R, B):
    """Block modes and repetition modes of a by-mode product result, in zipped order."""
    tiles, rests = [], []
    for i, _b in enumerate(B):
        assert rank(R[i]) == 2
        tiles.append(R[i][0])
        rests.append(R[i][1])
    rests += [R[i] for i in range(len(B), rank(R))]
    return tiles, rests


def check_zipped_tiled_flat(A, B, R, Z, Ti, F):
    """The zipped/tiled/flat forms regroup R's modes: same offsets, CuTe's structure."""
    assert _size(Z) == _size(Ti) == _size(F) == _size(R)
    assert rank(Z) == 2
    if isinstance(B, tuple):
        tiles, rests = _tile_rest(R, B)
        assert rank(Z[0]) == len(tiles) and rank(Z[1]) == len(rests)
        for j, t in enumerate(tiles):
            assert Z[0][j] == t
        for j, r in enumerate(rests):
            assert Z[1][j] == r
        # Z((t0,t1,..),(r0,r1,..,extra)) == R((t0,r0),(t1,r1),..,extra)
        sizes = [_size(m) for m in tiles + rests]
        k = len(tiles)
        for i in range(_size(Z)):
            idx, x = [], i
            for s in sizes:
                idx.append(x % s)
                x //= s
            coord = tuple((idx[j], idx[k + j]) for j in range(k)) + tuple(idx[2 * k:])
            assert Z(i) == R(coord)
    else:
        assert Z == R
    assert Ti[0] == Z[0]
    assert rank(Ti) == 1 + rank(Z[1])
    assert rank(F) == rank(Z[0]) + rank(Z[1])
    for i in range(_size(Z)):
        assert Ti(i) == Z(i)
        assert F(i) == Z(i)
    assert sorted(called_values(Z)) == sorted(called_values(R))


def all_products(A, B):
    R = cute_py.logical_product(A, B)
    check_logical_product(A, B, R)
    Z, Ti, F = cute_py.zipped_product(A, B), cute_py.tiled_product(A, B), cute_py.flat_product(A, B)
    check_zipped_tiled_flat(A, B, R, Z, Ti, F)
    return R, Z, Ti, F


def _padded(A, B):
    Bl = B if isinstance(B, Layout) else Layout(B)
    r = max(rank(A), rank(Bl))
    return cute_py.append(A, n=r), cute_py.append(Bl, n=r), r


def check_blocked_product(A, B, R, raked=False):
    """Postconditions of ``R == blocked_product(A, B)`` (or raked_product with ``raked``)."""
    pa, pb, r = _padded(A, B)
    lp = cute_py.logical_product(pa, pb)
    check_logical_product(pa, pb, lp)
    assert _size(R) == _size(A) * _size(pb)
    # same multiset of offsets as the logical product of the padded operands
    assert sorted(called_values(R)) == sorted(called_values(lp))
    first, second = (lp[1], pa) if raked else (pa, lp[1])
    if not isinstance(first.shape, tuple):
        # int-shaped rank-1 operands: C++'s zip((a, b)) with a non-tuple first
        # element is make_tuple((a, b)), so the result is rank 1 with mode (A, B')
        assert r == 1
        expected = Layout(((first.shape, second.shape),), ((first.stride, second.stride),))
        assert R == expected, f"{R} != {expected}"
        for i in range(_size(pa)):
            assert R(i * _size(lp[1]) if raked else i) == pa(i)
        return R
    assert rank(R) == r
    for i in range(r):
        # the mode of a rank-1 layout: its tuple mode, or the whole layout for an int shape
        # (B int-shaped: the composition may have split B's single mode into several)
        a_i = pa[i]
        b_i = lp[1] if r == 1 and not isinstance(pb.shape, tuple) else lp[1][i]
        first, second = (b_i, a_i) if raked else (a_i, b_i)
        assert rank(R[i]) == 2
        assert R[i][0] == first and R[i][1] == second, f"mode {i}: {R[i]} vs ({first}, {second})"
    # the block sits at repetition 0 of every mode (blocked), or at the slow
    # position of every mode with repetition 0 (raked)
    for c in mode_coords(pa.shape):
        coord = tuple((0, ci) for ci in c) if raked else tuple((ci, 0) for ci in c)
        assert R(coord) == pa(c)
    return R


def check_tile_to_shape(block, target, R, order=LayoutLeft):
    """Postconditions of ``R == tile_to_shape(block, target, order)`` (a tuple target)."""
    assert isinstance(target, tuple)
    r = len(target)
    assert rank(R) == r
    assert tuple(product_each(R.shape)) == tuple(product_each(target)), f"{R} does not fill {target}"
    pblock = cute_py.append(block, n=r)
    rep = tuple(product(t) // product(b) for t, b in zip(target, pblock.shape))
    reps = cute_py.make_ordered_layout(rep, order)
    assert sorted(called_values(reps)) == list(range(_size(reps)))
    check_blocked_product(pblock, reps, R)
    # the first block of the result is the block itself
    for c in mode_coords(pblock.shape):
        assert R(tuple((ci, 0) for ci in c)) == pblock(c)
    # block j (in the order of ``reps``) is the block shifted by j * cosize-like offsets
    first = [R(tuple((ci, 0) for ci in c)) for c in mode_coords(pblock.shape)]
    for rc in mode_coords(reps.shape):
        shifted = [R(tuple((ci, ri) for ci, ri in zip(c, rc))) for c in mode_coords(pblock.shape)]
        delta = shifted[0] - first[0]
        assert [v - delta for v in shifted] == first
    if _injective(block):
        assert _injective(R)
    if sorted(called_values(block)) == list(range(_size(block))):
        assert sorted(called_values(R)) == list(range(_size(R)))
    return R


# ---------------------------------------------------------------------------
# exact values (reference §1.6)

LOGICAL = [
    ("3:2", "4:1", "(3,(2,2)):(2,(1,6))"),
    ("(2,4):(1,2)", "3:1", "((2,4),3):((1,2),8)"),
    ("(2,2):(1,2)", "(3,3):(3,1)", "((2,2),(3,3)):((1,2),(12,4))"),
    ("3:32", "(8,8):(8,1)", "(3,((4,2),8)):(32,((8,96),1))"),
    ("(4,2):(1,16)", "(4,2):(2,1)", "((4,2),((2,2),2)):((1,16),((8,32),4))"),
    ("(2,2):(1,2)", "(3,4):(1,3)", "((2,2),(3,4)):((1,2),(4,12))"),
]


@pytest.mark.parametrize("a, b, expected", LOGICAL)
def test_logical_product_examples(a, b, expected):
    R, Z, Ti, F = all_products(P(a), P(b))
    assert str(R) == expected


TILED = [
    ("(2,2):(1,2)", "(3,4):(1,3)", "((2,2),3,4):((1,2),4,12)"),
    ("(4,8):(8,1)", "(2,2):(1,2)", "((4,8),2,2):((8,1),32,64)"),
    ("4:1", "(2,3):(1,2)", "(4,2,3):(1,4,8)"),
]


@pytest.mark.parametrize("a, b, expected", TILED)
def test_tiled_product_examples(a, b, expected):
    _r, _z, Ti, _f = all_products(P(a), P(b))
    assert str(Ti) == expected


def test_logical_product_int_tiler_pycute_bug_case():
    """pycute gets the int-B case wrong; C++ treats ``3`` as ``3:1``."""
    R = cute_py.logical_product(P("4:1"), 3)
    assert str(R) == "(4,3):(1,4)"
    check_logical_product(P("4:1"), 3, R)
    assert R == cute_py.logical_product(P("4:1"), Layout(3, 1))


def test_tiled_product_rank1_tuple_wrapping():
    """§1.7 item 5: C++ keeps a rank-1 tiler's repetitions as a rank-1 tuple."""
    B = Layout((6,), (1,))
    Ti = cute_py.tiled_product(P("2:1"), B)
    assert str(Ti) == "(2,(6)):(1,(2))"
    assert called_values(Ti) == list(range(12))
    assert cute_py.tiled_product(P("2:1"), P("(6):(1)")) == Ti


def test_zipped_flat_product_structure():
    # a layout tiler: the logical result already is ((block),(tiler))
    R, Z, Ti, F = all_products(P("(2,2):(1,2)"), P("(3,4):(1,3)"))
    assert str(Z) == "((2,2),(3,4)):((1,2),(4,12))"
    assert str(F) == "(2,2,3,4):(1,2,4,12)"
    # a tuple tiler multiplies mode by mode: 2:1 x 3:1 and 2:2 x 4:1
    R, Z, Ti, F = all_products(P("(2,2):(1,2)"), (Layout(3), Layout(4)))
    assert str(R) == "((2,3),(2,(2,2))):((1,2),(2,(1,4)))"
    assert str(Z) == "((2,2),(3,(2,2))):((1,2),(2,(1,4)))"
    assert str(Ti) == "((2,2),3,(2,2)):((1,2),2,(1,4))"
    assert str(F) == "(2,2,3,(2,2)):(1,2,2,(1,4))"


def test_tuple_tiler_keeps_extra_modes():
    A = Layout((4, 6, 2))
    R, Z, Ti, F = all_products(A, (2, 3))
    assert R[2] == A[2]
    assert str(R) == "((4,2),(6,3),2):((1,4),(4,1),24)"
    assert str(Z) == "((4,6),(2,3,2)):((1,4),(4,1,24))"
    assert str(Ti) == "((4,6),2,3,2):((1,4),4,1,24)"
    assert str(F) == "(4,6,2,3,2):(1,4,4,1,24)"


def test_underscore_tiler():
    A = Layout((4, 6))
    assert cute_py.logical_product(A, _) == A
    R = cute_py.logical_product(A, (_, 2))
    check_logical_product(A, (_, 2), R)
    assert R[0] == A[0]


# C++-only products (reference §1.6, verified in C++)


def test_blocked_product_example():
    A, B = P("(2,5):(5,1)"), P("(3,4):(1,3)")
    R = cute_py.blocked_product(A, B)
    assert str(R) == "((2,3),(5,4)):((5,10),(1,30))"
    check_blocked_product(A, B, R)


def test_raked_product_example():
    A, B = P("(2,5):(5,1)"), P("(3,4):(1,3)")
    R = cute_py.raked_product(A, B)
    assert str(R) == "((3,2),(4,5)):((10,5),(30,1))"
    check_blocked_product(A, B, R, raked=True)


def test_blocked_product_pads_rank():
    A, B = P("4:1"), P("(2,3):(1,2)")
    R = cute_py.blocked_product(A, B)
    assert str(R) == "((4,2),(1,3)):((1,4),(0,8))"
    check_blocked_product(A, B, R)


def test_raked_product_row_major():
    A, B = P("(4,8):(8,1)"), P("(2,2):(1,2)")
    R = cute_py.raked_product(A, B)
    assert str(R) == "((2,4),(2,8)):((32,8),(64,1))"
    check_blocked_product(A, B, R, raked=True)


def test_tile_to_shape_examples():
    blk = P("(2,2):(2,1)")
    R = cute_py.tile_to_shape(blk, (4, 6))
    assert str(R) == "((2,2),(2,3)):((2,4),(1,8))"
    check_tile_to_shape(blk, (4, 6), R)
    R2 = cute_py.tile_to_shape(blk, (4, 6), (1, 0))
    assert str(R2) == "((2,2),(2,3)):((2,12),(1,4))"
    check_tile_to_shape(blk, (4, 6), R2, (1, 0))


def test_tile_to_shape_layout_right_and_layout_target():
    blk = P("(2,2):(2,1)")
    assert cute_py.tile_to_shape(blk, (4, 6), LayoutRight) == cute_py.tile_to_shape(blk, (4, 6), (1, 0))
    assert cute_py.tile_to_shape(blk, Layout((4, 6))) == cute_py.tile_to_shape(blk, (4, 6))


def test_tile_to_shape_pads_block_rank():
    blk = P("4:1")
    R = cute_py.tile_to_shape(blk, (8, 6))
    assert str(R) == "((4,2),(1,6)):((1,4),(0,8))"
    check_tile_to_shape(blk, (8, 6), R)


def test_blocked_raked_product_rank1_int_operands():
    """C++ ``zip(4:1, 2:4)`` is ``make_tuple((4,2))``: the result of a product of two
    rank-1 int-shaped layouts is rank 1 (max of the ranks), ``((4,2)):((1,4))``."""
    A, B = Layout(4), Layout(2)
    R = cute_py.blocked_product(A, B)
    assert str(R) == "((4,2)):((1,4))"
    check_blocked_product(A, B, R)
    K = cute_py.raked_product(A, B)
    assert str(K) == "((2,4)):((4,1))"
    check_blocked_product(A, B, K, raked=True)


def test_blocked_product_rank1_tuple_operands():
    A, B = P("(4):(1)"), P("(2):(1)")
    R = cute_py.blocked_product(A, B)
    assert str(R) == "((4,2)):((1,4))"
    check_blocked_product(A, B, R)


def test_tile_to_shape_int_target():
    """A rank-1 target gives a rank-1 result whose mode has the target's size; the product shape of an int
    target stays a 1-tuple, as host-compiled C++ prints it: tile_to_shape(Layout<_4,_1>, Int<16>) is
    ((4,(4))):((1,(4)))."""
    R = cute_py.tile_to_shape(Layout(4), 8)
    assert rank(R) == 1
    assert product_each(R.shape) in (8, (8,))
    assert str(R) == "((4,(2))):((1,(4)))"
    assert called_values(R) == list(range(8))
    assert str(cute_py.tile_to_shape(Layout(4, 1), 16)) == "((4,(4))):((1,(4)))"


def test_tile_to_shape_non_dividing_target():
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.tile_to_shape(P("(2,2):(2,1)"), (5, 6))
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.tile_to_shape(P("(2,2):(2,1)"), (4, 7))


def test_tile_to_shape_block_rank_too_large():
    with pytest.raises(cute_py.RankError):
        cute_py.tile_to_shape(P("(2,2,2):(1,2,4)"), (4, 6))


def test_make_ordered_layout_example():
    assert str(cute_py.make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1))) == "(2,2,2,2):(1,4,8,2)"


def test_zip_example():
    assert str(cute_py.zip(Layout(((2, 3), (4, 5))))) == "((2,4),(3,5)):((1,6),(2,24))"


def test_upcast_downcast_examples():
    L = P("(8,64):(64,1)")
    assert str(cute_py.upcast(L, 2)) == "(8,32):(32,1)"
    assert str(cute_py.downcast(L, 2)) == "(8,128):(128,1)"


def test_max_common_vector_and_layout_examples():
    L = P("(8,64):(64,1)")
    assert cute_py.max_common_vector(L, L) == 512
    row, col = P("(8,64):(64,1)"), P("(8,64):(1,8)")
    assert str(cute_py.max_common_layout(row, col)) == "1:0"
    assert cute_py.max_common_vector(row, col) == 1


def test_nullspace_examples():
    assert str(cute_py.nullspace(P("(2,3,4):(0,1,0)"))) == "(2,4):(1,6)"
    assert str(cute_py.nullspace(P("(2,4,6):(1,2,0)"))) == "6:8"


def test_composed_products_act_on_inner():
    C = cute_py.composition(cute_py.Swizzle(2, 0, 2), P("(4,4):(4,1)"))
    B = P("(2,2):(1,2)")
    for f in (cute_py.logical_product, cute_py.zipped_product, cute_py.tiled_product,
              cute_py.flat_product, cute_py.blocked_product, cute_py.raked_product):
        out = f(C, B)
        assert out.inner == f(C.inner, B)
        for i in range(_size(out)):
            assert out(i) == C.outer(out.inner(i))


def _rejected_or_checked(A, B):
    try:
        R = cute_py.logical_product(A, B)
    except cute_py.LayoutError:
        return None
    return check_logical_product(A, B, R)


def test_logical_product_gapped_block_keeps_function():
    """complement((1,2):(3,9), 22) = (9,2):(1,18); composing it with (2,2):(2,8) must
    either be refused or give C(B(j)) for every j (B(3) = 10 crosses C's first mode)."""
    _rejected_or_checked(P("(1,2):(3,9)"), P("(2,2):(2,8)"))


def test_logical_product_non_divisible_block_is_injective():
    """(2,2):(3,15) is injective but its strides do not divide; the product with 3:3
    must either be refused or stay injective (offset 15 must not appear twice)."""
    _rejected_or_checked(P("(2,2):(3,15)"), P("3:3"))


def test_blocked_product_rejects_composed_tiler():
    C = cute_py.composition(cute_py.Swizzle(2, 0, 2), P("(4,4):(4,1)"))
    with pytest.raises(TypeError):
        cute_py.blocked_product(P("(2,2):(1,2)"), C)
    with pytest.raises(TypeError):
        cute_py.raked_product(P("(2,2):(1,2)"), C)


def test_product_too_many_tiler_modes():
    with pytest.raises(cute_py.RankError):
        cute_py.logical_product(Layout((4, 6)), (2, 3, 2))


# ---------------------------------------------------------------------------
# properties

SMALL = dict(max_leaves=3, max_size=32)


def _checked_product(A, B):
    try:
        R = cute_py.logical_product(A, B)
    except cute_py.LayoutError:
        for f in (cute_py.zipped_product, cute_py.tiled_product, cute_py.flat_product):
            with pytest.raises(cute_py.LayoutError):
                f(A, B)
        return None
    check_logical_product(A, B, R)
    if not (isinstance(B, tuple) and any(b is _ for b in B)):
        check_zipped_tiled_flat(A, B, R, cute_py.zipped_product(A, B), cute_py.tiled_product(A, B),
                                cute_py.flat_product(A, B))
    return R


@settings(max_examples=100, deadline=None)
@given(compact_layouts(**SMALL), compact_layouts(**SMALL))
def test_property_product_compact(A, B):
    R = _checked_product(A, B)
    # compact operands: the complement is size(A):... and nothing can go wrong
    assert R is not None


@settings(max_examples=100, deadline=None)
@given(injective_layouts(**SMALL), injective_layouts(**SMALL))
def test_property_product_injective(A, B):
    _checked_product(A, B)


@settings(max_examples=75, deadline=None)
@given(layouts(max_leaves=3, max_size=32, max_stride=16), layouts(max_leaves=3, max_size=32, max_stride=16))
def test_property_product_arbitrary(A, B):
    _checked_product(A, B)


@st.composite
def _tuple_product_cases(draw):
    A = draw(compact_layouts(max_leaves=3, max_size=24).filter(
        lambda L: isinstance(L.shape, tuple) and len(L.shape) >= 2))
    k = draw(st.integers(1, len(A.shape)))
    B = tuple(draw(st.one_of(compact_layouts(max_leaves=2, max_size=6), st.sampled_from([1, 2, 3]))) for _ in range(k))
    return A, B


@settings(max_examples=75, deadline=None)
@given(_tuple_product_cases())
def test_property_product_tuple_tilers(case):
    A, B = case
    _checked_product(A, B)


@settings(max_examples=75, deadline=None)
@given(st.one_of(compact_layouts(**SMALL), injective_layouts(**SMALL)), compact_layouts(**SMALL))
def test_property_blocked_raked(A, B):
    pa, pb, _r = _padded(A, B)
    try:
        lp = cute_py.logical_product(pa, pb)
    except cute_py.LayoutError:
        lp = None
    for raked in (False, True):
        f = cute_py.raked_product if raked else cute_py.blocked_product
        if lp is None:
            with pytest.raises(cute_py.LayoutError):
                f(A, B)
            continue
        first, second = (lp[1], pa) if raked else (pa, lp[1])
        if isinstance(first.shape, tuple) and not (
                isinstance(second.shape, tuple) and len(second.shape) == len(first.shape)):
            # a tuple zipped with an int or a tuple of another rank: C++'s zip
            # static-asserts "Mismatched Ranks"
            with pytest.raises(cute_py.RankError):
                f(A, B)
            continue
        check_blocked_product(A, B, f(A, B), raked=raked)


@st.composite
def _tile_to_shape_cases(draw):
    block = draw(st.one_of(compact_layouts(max_leaves=3, max_size=16), injective_layouts(max_leaves=3, max_size=16)))
    r = draw(st.integers(max(rank(block), 2), 3))
    pblock = cute_py.append(block, n=r)
    mult = [draw(st.sampled_from([1, 2, 3])) for _ in range(r)]
    target = tuple(product(b) * m for b, m in zip(pblock.shape, mult))
    order = draw(st.one_of(st.just(LayoutLeft), st.just(LayoutRight), st.permutations(range(r)).map(tuple)))
    return block, target, order


@settings(max_examples=100, deadline=None)
@given(_tile_to_shape_cases())
def test_property_tile_to_shape(case):
    block, target, order = case
    compact = sorted(called_values(block)) == list(range(_size(block)))
    try:
        R = cute_py.tile_to_shape(block, target, order)
    except cute_py.LayoutError:
        # a block with gaps can fail the product's divisibility conditions;
        # a compact block never does
        assert not compact
        return
    check_tile_to_shape(block, target, R, order)


@settings(max_examples=50, deadline=None)
@given(compact_layouts(max_leaves=2, max_size=16), st.lists(st.sampled_from([1, 2, 3, 4, 5]), min_size=2, max_size=2))
def test_property_tile_to_shape_divisibility(block, target):
    target = tuple(target)
    if rank(block) > 2:
        with pytest.raises(cute_py.RankError):
            cute_py.tile_to_shape(block, target)
        return
    bs = product_each(cute_py.append(block, n=2).shape)
    if all(t % b == 0 for t, b in zip(target, bs)):
        R = cute_py.tile_to_shape(block, target)
        check_tile_to_shape(block, target, R)
    else:
        with pytest.raises(cute_py.DivisibilityError):
            cute_py.tile_to_shape(block, target)


def test_a_product_by_a_zero_stride_tiler_needs_no_complement():
    """composition(complement(A), B) is B when B's strides are all 0, so A may have negative strides (CuTe C++
    computes flat_product((16,(4,4)):(-4,(64,1)), (1,2)); cute_py used to refuse it in complement)."""
    from cute_py import complement, composition, cosize, flat_product, logical_product, size
    A = parse("(16,(4,4)):(-4,(64,1))")
    assert str(flat_product(A, (1, 2))) == "(16,(4,4),1,2):(-4,(64,1),0,4)"
    for a in ("16:4", "(4,4):(8,1)", "(2,3):(3,1)", "((2,2),3):((1,8),2)"):
        L = parse(a)
        for t in (Layout(1), Layout(4, 0), parse("(2,3):(0,0)")):
            general = composition(complement(L, size(L) * cosize(t)), t)
            got = logical_product(L, t)
            assert (got[0], got[1]) == (L, general), (a, t)
