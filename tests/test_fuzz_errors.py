"""Fuzz: every public algebra function, fed arbitrary (possibly nonsensical) inputs,
either returns or raises ``cute_py.LayoutError`` / ``TypeError`` -- never
AssertionError, IndexError, ZeroDivisionError, KeyError, AttributeError,
RecursionError or any other exception.

When a composition / divide / product returns, the result must be functionally
right (composition: ``R(i) == A(B(i))`` for ``i < size(B)``; divides and
products: the defining composition, evaluated point by point; the zipped /
tiled / flat / blocked / raked forms only regroup the logical result).
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import ComposedLayout, Layout, LayoutLeft, LayoutRight, Swizzle, _
from cute_py import int_tuple as it

from strategies import compact_layouts, divisor_tilers, injective_layouts, layouts, swizzles

ALLOWED = (cute_py.LayoutError, TypeError)
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CAP = 2048  # brute-force checks only for domains up to this size


class _Unset:
    pass


UNSET = _Unset()


def attempt(fn, *args, **kwargs):
    """Call ``fn``; return its result, or UNSET if it raised an allowed error; fail on anything else."""
    try:
        return fn(*args, **kwargs)
    except ALLOWED:
        return UNSET
    except Exception as e:  # noqa: BLE001 - that is the point
        name = getattr(fn, "__name__", repr(fn))
        pytest.fail(f"{name}{_show(args)} raised {type(e).__name__}: {e}", pytrace=False)


def _show(args):
    try:
        return "(" + ", ".join(str(a) if isinstance(a, (Layout, Swizzle, ComposedLayout)) else repr(a)
                               for a in args) + ")"
    except Exception:  # noqa: BLE001
        return "(<unprintable>)"


# ---------------------------------------------------------------------------
# strategies


junk_leaf = st.one_of(
    st.integers(-8, 64),
    st.integers(-(2 ** 40), 2 ** 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.text(max_size=4),
    st.booleans(),
    st.just(_),
    st.sampled_from([LayoutLeft, LayoutRight, (), [], {}, 0, 1, -1]),
)

junk = st.recursive(
    junk_leaf,
    lambda kids: st.one_of(st.lists(kids, max_size=3).map(tuple), st.lists(kids, max_size=3)),
    max_leaves=6,
)

any_layouts = layouts(allow_negative=True, max_size=128)
small_layouts = layouts(allow_negative=True, max_size=32, max_leaves=3)


@st.composite
def composed(draw):
    return ComposedLayout(draw(swizzles()), draw(st.integers(0, 16)), draw(small_layouts))


tiler_leaf = st.one_of(
    small_layouts,
    st.integers(-2, 40),
    st.just(_),
    junk_leaf,
)

tilers = st.one_of(
    small_layouts,
    injective_layouts(max_size=32),
    st.integers(-2, 64),
    st.just(_),
    st.lists(tiler_leaf, max_size=4).map(tuple),
    junk,
    swizzles(),
    composed(),
)

operands = st.one_of(
    any_layouts, any_layouts, any_layouts, compact_layouts(max_size=64),
    junk, swizzles(), composed(),
)


@st.composite
def layout_and_divisor(draw):
    L = draw(compact_layouts(max_size=64))
    return L, draw(divisor_tilers(L))


@st.composite
def vector_and_divisor(draw):
    """A 1-D layout n:d and an injective divisor tiler: always admissible (A is a single mode)."""
    n = draw(st.sampled_from([1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64]))
    L = Layout(n, draw(st.sampled_from([1, 1, 2, 3])))
    return L, draw(divisor_tilers(L))


# ---------------------------------------------------------------------------
# reference checks (independent of the functions under test where possible)


def _is_layout(x):
    return type(x) is Layout


def _size(L):
    return it.product(L.shape)


def _leaf_pairs(L):
    return Counter(zip(it.flatten_to_tuple(L.shape), it.flatten_to_tuple(L.stride)))


def _mode(L, k):
    """Mode k of a layout (an int-shaped layout has one mode, itself)."""
    return cute_py.get(L, k)


def _as_tuple(t):
    """Lists are accepted wherever tuples are (as in ``make_layout``)."""
    if isinstance(t, (list, tuple)):
        return tuple(_as_tuple(x) for x in t)
    return t


def _tiler_as_layout(t):
    if _is_layout(t):
        return t
    if it.is_int(t) and t >= 1:
        return Layout(t)
    return None


def check_composition(A, B, R):
    """R == A o B for a Layout/int/_/tuple tiler B (C++ semantics: a tuple tiler composes mode by mode
    and drops the modes of A it does not reach)."""
    assert _is_layout(R), f"composition returned {R!r}"
    B = _as_tuple(B)
    if B is _:
        assert R == A
        return
    if isinstance(B, tuple):
        assert cute_py.rank(R) == len(B) or (len(B) == 1 and not isinstance(R.shape, tuple)), (A, B, R)
        for k, bk in enumerate(B):
            check_composition(_mode(A, k), bk, _mode(R, k) if isinstance(R.shape, tuple) else R)
        return
    if isinstance(B, Swizzle):  # Layout o Swizzle: R(x) == A(B(x)) on the swizzle's span
        for x in range(min(B.size(), _size(A), CAP)):
            assert R(x) == A(B(x)), (A, B, R, x)
        return
    BL = _tiler_as_layout(B)
    assert BL is not None, f"composition({A}, {B!r}) accepted a non-layout tiler and returned {R}"
    assert _size(R) == _size(BL), (A, BL, R)
    if _size(BL) > CAP:
        return
    for i in range(_size(BL)):
        b = BL(i)
        if b >= 0:  # outside A's domain on the negative side C++ and Python disagree on rounding
            assert R(i) == A(b), f"composition({A}, {BL}) = {R}: R({i}) = {R(i)} != A({b}) = {A(b)}"


def _tiler_layout(check, name, A, T, R):
    """The tiler cases divides and products share: R is a Layout; ``_`` keeps A; a tuple tiler is
    checked mode by mode with ``check`` (A's modes past the tiler kept). Returns the tiler as a
    layout, or None when R is already checked."""
    assert _is_layout(R)
    T = _as_tuple(T)
    if T is _:
        assert R == A
        return None
    if isinstance(T, tuple):
        rA = cute_py.rank(A)
        assert cute_py.rank(R) == rA
        for k in range(rA):
            Ak, Rk = _mode(A, k), _mode(R, k)
            if k < len(T):
                check(Ak, T[k], Rk)
            else:
                assert Rk == Ak
        return None
    TL = _tiler_as_layout(T)
    assert TL is not None, f"{name} accepted tiler {T!r}"
    return TL


def check_logical_divide(A, T, R):
    TL = _tiler_layout(check_logical_divide, "logical_divide", A, T, R)
    if TL is None:
        return
    C = attempt(cute_py.complement, TL, cute_py.coalesce(A).shape)
    assert C is not UNSET, "logical_divide returned although complement(T, shape(coalesce(A))) raised"
    B = cute_py.make_layout(TL, C)
    assert _size(R) == _size(B)
    assert cute_py.rank(R) == 2
    if _size(B) > CAP:
        return
    for j in range(_size(B)):
        b = B(j)
        if b >= 0:
            assert R(j) == A(b), f"logical_divide({A}, {TL}) = {R}: R({j}) = {R(j)} != A({b}) = {A(b)}"


def check_logical_product(A, T, R):
    TL = _tiler_layout(check_logical_product, "logical_product", A, T, R)
    if TL is None:
        return
    assert cute_py.rank(R) == 2
    assert R[0] == A, f"logical_product({A}, {TL}) = {R}: mode 0 is not A"
    C = attempt(cute_py.complement, A, _size(A) * cute_py.cosize(TL))
    R1 = R[1]
    if C is UNSET:                       # only a B of zero strides needs no complement (it composes to B)
        assert all(d == 0 for d in cute_py.int_tuple.flatten_to_tuple(TL.stride)), \
            "logical_product returned although complement(A, size(A)*cosize(B)) raised"
        assert R1 == TL
        return
    assert _size(R1) == _size(TL)
    if _size(TL) > CAP:
        return
    for j in range(_size(TL)):
        b = TL(j)
        if b >= 0:
            assert R1(j) == C(b), f"logical_product({A}, {TL}) = {R}: R[1]({j}) = {R1(j)} != C({b}) = {C(b)}"


def _values(L):
    return Counter(L(i) for i in range(_size(L)))


# ---------------------------------------------------------------------------
# the fuzz tests


@given(operands, tilers)
@FUZZ
def test_fuzz_composition(A, B):
    R = attempt(cute_py.composition, A, B)
    if R is not UNSET and _is_layout(A) and _is_layout(R):
        check_composition(A, B, R)


@given(layout_and_divisor())
@FUZZ
def test_fuzz_composition_divisor_tilers(LT):
    """Divisor tilers of compact layouts: composition and logical_divide raise a LayoutError or are right."""
    A, T = LT
    R = attempt(cute_py.composition, A, T)
    if R is not UNSET:
        check_composition(A, T, R)
    D = attempt(cute_py.logical_divide, A, T)
    if D is not UNSET:
        check_logical_divide(A, T, D)


@given(vector_and_divisor())
@FUZZ
def test_fuzz_composition_admissible_tilers(LT):
    """With tilers CuTe admits, composition and logical_divide must succeed and be right."""
    A, T = LT
    R = attempt(cute_py.composition, A, T)
    assert R is not UNSET, f"composition({A}, {T}) rejected an admissible tiler"
    check_composition(A, T, R)
    D = attempt(cute_py.logical_divide, A, T)
    assert D is not UNSET, f"logical_divide({A}, {T}) rejected an admissible tiler"
    check_logical_divide(A, T, D)


DIVIDES = [cute_py.zipped_divide, cute_py.tiled_divide, cute_py.flat_divide]
PRODUCTS = [cute_py.zipped_product, cute_py.tiled_product, cute_py.flat_product]


@given(operands, tilers)
@FUZZ
def test_fuzz_divides(A, T):
    R = attempt(cute_py.logical_divide, A, T)
    if R is not UNSET and _is_layout(A) and _is_layout(R):
        check_logical_divide(A, T, R)
    for f in DIVIDES:
        X = attempt(f, A, T)
        if X is not UNSET and _is_layout(A):
            assert R is not UNSET, f"{f.__name__} returned but logical_divide raised"
            assert _leaf_pairs(X) == _leaf_pairs(R), f"{f.__name__}({A}, {T}) = {X} is not a regrouping of {R}"


@given(operands, tilers)
@FUZZ
def test_fuzz_products(A, T):
    R = attempt(cute_py.logical_product, A, T)
    if R is not UNSET and _is_layout(A) and _is_layout(R):
        check_logical_product(A, T, R)
    for f in PRODUCTS:
        X = attempt(f, A, T)
        if X is not UNSET and _is_layout(A):
            assert R is not UNSET, f"{f.__name__} returned but logical_product raised"
            assert _leaf_pairs(X) == _leaf_pairs(R), f"{f.__name__}({A}, {T}) = {X} is not a regrouping of {R}"
    for f in (cute_py.blocked_product, cute_py.raked_product):
        X = attempt(f, A, T)
        if X is not UNSET and _is_layout(A) and _tiler_as_layout(T) is not None:
            assert R is not UNSET, f"{f.__name__} returned but logical_product raised"
            assert _size(X) == _size(R)
            if _size(X) <= CAP:
                assert _values(X) == _values(R), f"{f.__name__}({A}, {T}) = {X} has other values than {R}"


@given(operands, st.one_of(junk, st.lists(st.integers(1, 12), min_size=1, max_size=4).map(tuple),
                           st.integers(1, 64)), st.one_of(st.just(LayoutLeft), junk))
@FUZZ
def test_fuzz_tile_to_shape(A, target, order):
    for args in ((A, target), (A, target, order)):
        R = attempt(cute_py.tile_to_shape, *args)
        if R is not UNSET and _is_layout(R) and (it.is_int(target) or isinstance(target, tuple)):
            assert _size(R) == it.product(target)
            if isinstance(target, tuple):
                assert cute_py.rank(R) == len(target)
                assert tuple(_size(R[k]) for k in range(len(target))) == it.product_each(target)


@given(operands, st.one_of(st.none(), junk, st.integers(-4, 300), st.lists(st.integers(1, 16), max_size=3).map(tuple)))
@FUZZ
def test_fuzz_complement(A, cotarget):
    R = attempt(cute_py.complement, A) if cotarget is None else attempt(cute_py.complement, A, cotarget)
    if R is UNSET or not _is_layout(A) or not _is_layout(R):
        return
    if _size(A) > CAP or _size(R) > CAP:
        return
    image = set(A(j) for j in range(_size(A)))
    vals = [R(i) for i in range(_size(R))]
    for i in range(1, len(vals)):
        assert vals[i] not in image, f"complement({A}, {cotarget}) = {R}: R({i}) = {vals[i]} is in A's image"
        assert vals[i] > vals[i - 1], f"complement({A}, {cotarget}) = {R} is not strictly increasing"


@given(operands)
@FUZZ
def test_fuzz_inverses(A):
    R = attempt(cute_py.right_inverse, A)
    if R is not UNSET and _is_layout(A) and _is_layout(R) and _size(R) <= CAP:
        for i in range(_size(R)):
            assert A(R(i)) == i, f"right_inverse({A}) = {R}: A(R({i})) = {A(R(i))}"
    R = attempt(cute_py.left_inverse, A)
    if R is not UNSET and _is_layout(A) and _is_layout(R) and _size(A) <= CAP:
        for i in range(_size(A)):
            assert A(R(A(i))) == A(i), f"left_inverse({A}) = {R}: A(R(A({i}))) != A({i})"


@given(operands, st.one_of(st.none(), junk, st.lists(st.integers(0, 2), max_size=4).map(tuple)))
@FUZZ
def test_fuzz_coalesce_filter_nullspace(A, profile):
    args = (A,) if profile is None else (A, profile)
    R = attempt(cute_py.coalesce, *args)
    if R is not UNSET and _is_layout(A) and _is_layout(R):
        assert _size(R) == _size(A)
        if _size(A) <= CAP:
            assert [R(i) for i in range(_size(A))] == [A(i) for i in range(_size(A))], (A, profile, R)
        if not isinstance(profile, tuple):
            assert it.depth(R.shape) <= 1
    F = attempt(cute_py.filter, *args)
    if F is not UNSET and _is_layout(A) and _is_layout(F) and not isinstance(profile, tuple) and _size(A) <= CAP:
        assert set(F(i) for i in range(_size(F))) == set(A(i) for i in range(_size(A)))
        assert all(d != 0 for d in it.flatten_to_tuple(F.stride)) or F == Layout(1, 0)
    K = attempt(cute_py.nullspace, A)
    if K is not UNSET and _is_layout(A) and _is_layout(K):
        assert all(A(K(i)) == 0 for i in range(min(_size(K), CAP))), (A, K)
        Fz = cute_py.filter(A)
        assert _size(K) * _size(Fz) == _size(A), (A, K, Fz)


@given(operands, st.one_of(st.integers(-2, 64), junk))
@FUZZ
def test_fuzz_recast(A, n):
    for f in (cute_py.upcast, cute_py.downcast):
        R = attempt(f, A, n)
        if R is not UNSET and _is_layout(A):
            assert _is_layout(R)
    m = attempt(cute_py.max_alignment, A)
    if m is not UNSET:
        assert it.is_int(m) and m >= 1


@given(operands, operands)
@FUZZ
def test_fuzz_max_common(A, B):
    R = attempt(cute_py.max_common_layout, A, B)
    n = attempt(cute_py.max_common_vector, A, B)
    if n is not UNSET:
        assert it.is_int(n) and n >= 1
    if R is not UNSET and _is_layout(A) and _is_layout(B) and _is_layout(R):
        assert n is not UNSET and n == _size(R)
        # a negative index is outside both domains, where C++ and Python round differently: only check
        # layouts with non-negative strides
        if min(it.flatten_to_tuple(A.stride) + it.flatten_to_tuple(B.stride) + (0,)) < 0:
            return
        for i in range(min(_size(R), CAP)):
            assert A(R(i)) == i and B(R(i)) == i, f"max_common_layout({A}, {B}) = {R} fails at {i}"


@given(operands, junk, st.one_of(st.integers(-6, 6), junk), st.one_of(st.integers(-6, 6), junk))
@FUZZ
def test_fuzz_modes_and_slicing(A, c, i, j):
    attempt(cute_py.slice_, c, A)
    attempt(cute_py.slice_and_offset, c, A)
    attempt(cute_py.dice, c, A)
    attempt(cute_py.get, A, i)
    attempt(cute_py.get, A, i, j)
    attempt(cute_py.take, A, i, j)
    attempt(cute_py.select, A, i)
    attempt(cute_py.select, A, i, j)
    attempt(cute_py.group, A, i, j)
    attempt(cute_py.size, A, i)
    attempt(cute_py.cosize, A)
    if _is_layout(A):
        attempt(A, c)
        attempt(A.__getitem__, i)


@given(st.one_of(st.text(max_size=24), st.text(alphabet="()_,:@oSw<>-0123456789 ", max_size=24), junk))
@FUZZ
def test_fuzz_parse(text):
    attempt(cute_py.parse, text)


@given(any_layouts, tilers)
@FUZZ
def test_fuzz_layout_methods(A, t):
    attempt(A.compose, t)
    attempt(A.with_shape, t)
    attempt(A.tile, t)


# ---------------------------------------------------------------------------
# deterministic nasty inputs


def _deep(depth, leaf=2):
    x = leaf
    for _k in range(depth):
        x = (x,)
    return x


ALGEBRA_2 = [
    cute_py.composition, cute_py.complement, cute_py.logical_divide, cute_py.zipped_divide,
    cute_py.tiled_divide, cute_py.flat_divide, cute_py.logical_product, cute_py.zipped_product,
    cute_py.tiled_product, cute_py.flat_product, cute_py.blocked_product, cute_py.raked_product,
    cute_py.tile_to_shape, cute_py.coalesce, cute_py.filter, cute_py.upcast, cute_py.downcast,
    cute_py.max_common_layout, cute_py.max_common_vector,
]


@pytest.mark.parametrize("depth", [40, 1000])
@pytest.mark.parametrize("fn", ALGEBRA_2, ids=lambda f: f.__name__)
def test_deeply_nested_second_operand(fn, depth):
    """A tiler / cotarget / profile nested 1000 deep is rejected cleanly, not with RecursionError."""
    attempt(fn, Layout((4, 2)), _deep(depth))


@pytest.mark.parametrize("depth", [40, 1000])
def test_deeply_nested_coordinates_and_modes(depth):
    L = Layout((4, 2))
    attempt(cute_py.slice_, _deep(depth), L)
    attempt(cute_py.dice, _deep(depth), L)
    attempt(L, _deep(depth))
    attempt(cute_py.select, L, _deep(depth))
    attempt(cute_py.get, L, _deep(depth))
    attempt(Layout, _deep(depth))
    attempt(Layout, (4, 2), _deep(depth))


@pytest.mark.parametrize("fn", ALGEBRA_2, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0, -1, -4, 0.5, float("nan"), float("inf"), None, "4", b"4", True, [4, 2], {},
                               (0,), (4, 0), (4, -2), ((),), (_, 0), (Layout(2), "x"), 2 ** 70, -(2 ** 70)],
                         ids=repr)
def test_nonsense_second_operand(fn, x):
    for A in (Layout((4, 2)), Layout((4, 2), (-1, 0)), Layout(1, 0), Layout((), ())):
        attempt(fn, A, x)


@pytest.mark.parametrize("fn", ALGEBRA_2 + [cute_py.right_inverse, cute_py.left_inverse, cute_py.nullspace,
                                            cute_py.max_alignment],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [None, 4, "(4,2):(1,4)", (4, 2), 1.5, [Layout(4)], Swizzle(3, 4, 3)], ids=repr)
def test_non_layout_first_operand(fn, x):
    if fn in (cute_py.right_inverse, cute_py.left_inverse, cute_py.nullspace, cute_py.max_alignment):
        attempt(fn, x)
    else:
        attempt(fn, x, Layout(4))


def test_empty_layout_everywhere():
    E0 = Layout((), ())
    for fn in ALGEBRA_2:
        for t in (E0, Layout(4), 4, (), _):
            attempt(fn, E0, t)
            attempt(fn, Layout((4, 2)), t)
    for fn in (cute_py.right_inverse, cute_py.left_inverse, cute_py.nullspace, cute_py.max_alignment,
               cute_py.coalesce, cute_py.filter, cute_py.complement):
        attempt(fn, E0)


def test_exhaustive_small_compositions_are_right():
    """Every small A o B over a grid of shapes and (negative, zero) strides: raise or be right."""
    strides = (-2, 0, 1, 2, 3)
    As = [Layout(s, d) for s in (1, 2, 4, 6) for d in strides]
    As += [Layout((s0, s1), (d0, d1)) for s0, s1 in ((2, 2), (2, 3), (4, 2)) for d0, d1 in
           itertools.product(strides, repeat=2)]
    Bs = [Layout(s, d) for s in (1, 2, 3, 4) for d in strides] + [Layout((2, 2), (d0, d1)) for d0, d1 in
                                                                   itertools.product(strides, repeat=2)]
    for A in As:
        for B in Bs:
            R = attempt(cute_py.composition, A, B)
            if R is not UNSET:
                check_composition(A, B, R)


# ---------------------------------------------------------------------------
# Messages that name the operation, the argument and the rule (issue 34, section 5)


@pytest.mark.parametrize("atom_layout, bad", [((0, 1, 1), 0), ((-1, 1, 1), -1), ((2, (1, -2), 1), -2),
                                              (Layout((2, 0, 1)), 0)])
def test_make_tiled_mma_names_atom_layout_and_its_rule(atom_layout, bad):
    atom = cute_py.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")
    with pytest.raises(cute_py.LayoutError) as e:
        cute_py.make_tiled_mma(atom, atom_layout)
    msg = str(e.value)
    assert msg.startswith("make_tiled_mma: atom_layout counts the atoms along M, N and K") and \
        "must be a positive int" in msg and f"has {bad}" in msg


@pytest.mark.parametrize("bases, out_dims, expected", [
    ({"offset": [[1.0], [2]]}, {"offset": 16}, "an image's coordinates must be ints: offset: (1.0,) has 1.0 of type "
                                               "float"),
    ({"offset": [[1], [2]]}, {"offset": 16.0}, "every out dim must be a power of two (an int): found 16.0 of type "
                                               "float"),
])
def test_from_linear_layout_names_a_float(bases, out_dims, expected):
    from cute_py.layouts.linear_layout import from_linear_layout
    with pytest.raises(cute_py.LayoutError) as e:
        from_linear_layout({"bases": bases, "out_dims": out_dims})
    assert str(e.value).startswith("from_linear_layout: " + expected), str(e.value)


def test_to_linear_layout_of_a_composed_layout_with_an_offset():
    from cute_py.layouts.linear_layout import to_linear_layout
    with pytest.raises(cute_py.LayoutError) as e:
        to_linear_layout(ComposedLayout(Swizzle(2, 0, 2), 3, Layout(16)))
    msg = str(e.value)
    assert msg.startswith("to_linear_layout: a composed layout with a nonzero offset is affine") and "offset 3" in msg
    assert to_linear_layout(ComposedLayout(Swizzle(2, 0, 2), 0, Layout(16)))(in0=1) == (1,)   # offset 0: linear
