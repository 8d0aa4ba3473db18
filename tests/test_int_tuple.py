"""IntTuple helpers (``cute_py.int_tuple``): exact values and properties.

Exact values come from pycute's ``test_int_tuple.py`` (CUTE_REFERENCE §1.5),
CuTe's ``compact_xmajor.cpp`` and ``int_tuple.cpp`` (weakly_congruent /
evenly_divides truth tables) and the semantics in §1.2, §2.1 and §2.3.
The ordering properties are CuTe's ``compare.cpp`` postconditions.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, LayoutLeft, LayoutRight, _, make_layout
from cute_py import int_tuple as it
from oracle import all_coords

from strategies import shapes

PROPS = settings(max_examples=100, deadline=None)


# ---------------------------------------------------------------------------
# helpers


nested_ints = st.recursive(
    st.integers(-20, 20),
    lambda kids: st.lists(kids, max_size=4).map(tuple),
    max_leaves=10,
)


# ---------------------------------------------------------------------------
# §1.5 exact values (pycute test_int_tuple.py)


def test_product_exact():
    assert it.product((3, 2)) == 6
    assert it.product(((2, 3), 4)) == 24
    assert it.product(5) == 5
    assert it.product(()) == 1


def test_inner_product_exact():
    assert it.inner_product((1, 2), (3, 2)) == 7
    assert it.inner_product(((2, 3), 4), ((2, 1), 2)) == 15
    assert it.inner_product(3, 4) == 12


@pytest.mark.parametrize("a, b", [((1, 2), (3, 2, 1)), ((1, 2), 3), (3, (1, 2)), (((1, 2), 3), ((1, 2, 3), 4))])
def test_inner_product_rejects_non_congruent(a, b):
    with pytest.raises(cute_py.LayoutError):
        it.inner_product(a, b)


@pytest.mark.parametrize("a, b, expected", [
    ((3, 4), 6, (1, 2)),
    ((3, 4), 12, (1, 1)),
    ((3, 4), 36, (1, 1)),
    (((3, 4), 6), 36, ((1, 1), 2)),
    ((6, (3, 4)), 36, (1, (1, 2))),
    # int/int is ceil(a/b) when one divides the other
    (8, 4, 2),
    (4, 8, 1),
    (12, (2, 3), 2),        # int / tuple divides by product(b)
    ((4, 6), (2, 3), (2, 2)),  # tuple / tuple mode-wise
])
def test_shape_div_exact(a, b, expected):
    assert it.shape_div(a, b) == expected


def test_shape_div_requires_divisibility():
    with pytest.raises(cute_py.DivisibilityError):
        it.shape_div(3, 4)
    with pytest.raises(cute_py.LayoutError):
        it.shape_div((4, 6), (2, 3, 1))


@pytest.mark.parametrize("a, expected", [
    (2, 1),
    ((3, 2), (1, 3)),
    ((3, 2, 4), (1, 3, 6)),
    (((2, 3), 4), ((1, 2), 6)),
    (((2, 3), (2, 1, 2), (5, 2, 1)), ((1, 2), (6, 12, 12), (24, 120, 240))),
])
def test_prefix_product_exact(a, expected):
    assert it.prefix_product(a) == expected


def test_prefix_product_init():
    assert it.prefix_product((3, 2), 5) == (5, 15)
    # a tuple init is applied per mode
    assert it.prefix_product(((2, 3), 4), (1, 7)) == ((1, 2), 7)


@given(nested_ints.filter(lambda t: isinstance(t, tuple)))
@PROPS
def test_prefix_product_congruent(t):
    pos = it.repeat_like(t, 2)
    p = it.prefix_product(pos)
    assert it.congruent(p, pos)
    flat = it.flatten_to_tuple(p)
    assert flat == tuple(2 ** k for k in range(len(flat)))


# ---------------------------------------------------------------------------
# compact_col_major / compact_row_major (compact_xmajor.cpp, static cases)


@pytest.mark.parametrize("shape, current, expected", [
    (1, 1, 0),
    (1, 3, 0),
    (8, 1, 1),
    (8, 3, 3),
    ((4, 8), 1, (1, 4)),
    ((4, 8, 2), 1, (1, 4, 32)),
    ((4, 8, 1, 2), 1, (1, 4, 0, 32)),
    (((4, 8), 1, 2), 1, ((1, 4), 0, 32)),
    ((4, (8, 1, 2)), 1, (1, (4, 0, 32))),
    ((4, (8, 1, (2, 3))), 1, (1, (4, 0, (32, 64)))),
])
def test_compact_col_major(shape, current, expected):
    assert it.compact_col_major(shape, current) == expected


@pytest.mark.parametrize("shape, current, expected", [
    (1, 1, 0),
    (1, 3, 0),
    (8, 1, 1),
    (8, 3, 3),
    ((4, 8), 1, (8, 1)),
    ((4, 8, 2), 1, (16, 2, 1)),
    ((4, 8, 1, 2), 1, (16, 2, 0, 1)),
    (((4, 8), 1, 2), 1, ((16, 2), 0, 1)),
    ((4, (8, 1, 2)), 1, (16, (2, 0, 1))),
    ((4, (8, 1, (2, 3))), 1, (48, (6, 0, (3, 1)))),
])
def test_compact_row_major(shape, current, expected):
    assert it.compact_row_major(shape, current) == expected


def test_compact_major_defaults():
    assert it.compact_col_major((4, 8, 1, 2)) == (1, 4, 0, 32)
    assert it.compact_col_major(1) == 0
    assert it.compact_row_major(1) == 0
    assert it.compact_col_major((1,)) == (0,)


@given(shapes())
@PROPS
def test_compact_major_is_bijective(shape):
    n = it.product(shape)
    for gen in (it.compact_col_major, it.compact_row_major):
        stride = gen(shape)
        assert it.congruent(stride, shape)
        offs = sorted(it.crd2idx(c, shape, stride) for c in all_coords(shape))
        assert offs == list(range(n)), (gen.__name__, shape, stride)
        for s, d in zip(it.flatten_to_tuple(shape), it.flatten_to_tuple(stride)):
            if s == 1:
                assert d == 0


# ---------------------------------------------------------------------------
# compact_order


@pytest.mark.parametrize("shape, order, expected", [
    ((2, 2, 2, 2), (0, 2, 3, 1), (1, 4, 8, 2)),
    ((2, 3, 4), (2, 1, 0), (12, 4, 1)),
    ((2, 3, 4), (0, 1, 2), (1, 2, 6)),
    ((2, 3), (0, 0), (1, 2)),               # ties go left to right
    ((2, 1, 4), (0, 1, 2), (1, 0, 2)),      # size-1 mode gets stride 0
    (((2, 2), 3), (1, 0), ((3, 6), 1)),     # an int order covers a whole sub-shape
    ((3, 5), (7, -1), (5, 1)),
])
def test_compact_order_exact(shape, order, expected):
    assert it.compact_order(shape, order) == expected


def test_compact_order_requires_weak_congruence():
    with pytest.raises(cute_py.LayoutError):
        it.compact_order((2, 3), (0, 1, 2))


@given(st.data())
@PROPS
def test_compact_order_property(data):
    shape = data.draw(shapes())
    flat = it.flatten_to_tuple(shape)
    order_flat = data.draw(st.lists(st.integers(-3, 5), min_size=len(flat), max_size=len(flat)))
    order = it.unflatten(tuple(order_flat), shape) if isinstance(shape, tuple) else order_flat[0]
    stride = it.compact_order(shape, order)
    # compact: a bijection onto [0, size)
    offs = sorted(it.crd2idx(c, shape, stride) for c in all_coords(shape))
    assert offs == list(range(it.product(shape)))
    # strides follow the order (ties left to right) among non-trivial modes
    fd = it.flatten_to_tuple(stride)
    live = [i for i in range(len(flat)) if flat[i] != 1]
    for i, j in itertools.combinations(live, 2):
        if (order_flat[i], i) < (order_flat[j], j):
            assert fd[i] < fd[j]


# ---------------------------------------------------------------------------
# congruent / weakly_congruent / compatible / evenly_divides


def test_congruent():
    assert it.congruent(1, 5)
    assert it.congruent((1, (2, 3)), (4, (5, 6)))
    assert it.congruent((), ())
    assert not it.congruent((1, 2), (1, (2, 3)))
    assert not it.congruent(1, (1,))
    assert not it.congruent((1,), 1)
    assert not it.congruent((1, 2), (1, 2, 3))


# int_tuple.cpp WeaklyCongruent
_a, _b = 1, 2
_a0, _b0 = (1,), (2,)
_a1, _b1 = (1, 1), (2, 2)
_a2, _b2 = (1, (1, 1)), (2, (2, 2))
_b3 = ((2, 2), (2, 2))

WEAKLY_CONGRUENT = [
    (_a, _a, True), (_b, _b, True), (_a, _b, True),
    (_a, _a0, True), (_b, _b0, True), (_a, _b0, True), (_b, _a0, True),
    (_a0, _a, False), (_b0, _b, False), (_a0, _b, False), (_b0, _a, False),
    (_a0, _a0, True), (_b0, _b0, True), (_a0, _b0, True),
    (_a, _a1, True), (_a0, _a1, False), (_a1, _a1, True),
    (_a, _a2, True), (_a0, _a2, False), (_a1, _a2, True),
    (_b, _b1, True), (_b0, _b1, False), (_a1, _b1, True),
    (_a2, _b0, False), (_a2, _a1, False), (_a2, _b2, True),
    (_a0, _b3, False), (_a1, _b3, True), (_a2, _b3, True),
]


@pytest.mark.parametrize("a, b, expected", WEAKLY_CONGRUENT)
def test_weakly_congruent_table(a, b, expected):
    assert it.weakly_congruent(a, b) is expected


@given(nested_ints, nested_ints)
@PROPS
def test_congruent_implies_weakly_congruent(a, b):
    if it.congruent(a, b):
        assert it.weakly_congruent(a, b) and it.weakly_congruent(b, a)
    if it.weakly_congruent(a, b) and it.weakly_congruent(b, a):
        assert it.congruent(a, b)
    assert it.weakly_congruent(a, a)
    assert it.weakly_congruent(0, a)


# int_tuple.cpp Divides (static and dynamic sections agree)
_A, _B, _C = 16, 12, 8
_A0 = (16,)
_A1 = (2, 8)
_A2 = ((2, 8),)
_A3 = ((2, (4, 2)),)

EVENLY_DIVIDES = [
    (_A, _A, True), (_B, _B, True), (_C, _C, True),
    (_A, _B, False), (_A, _C, True), (_C, _A, False),
    (_A0, _A0, True), (_A, _A0, True), (_A0, _A, True), (_C, _A0, False),
    (_A0, _C, True), (_B, _A0, False), (_A0, _B, False),
    (_A1, _A1, True), (_A, _A1, False), (_A0, _A1, False), (_A1, _A0, False),
    (_A1, (2, (2, 4)), False),
    (_A2, _A2, True), (_A, _A2, False), (_C, _A2, False), (_A0, _A2, False), (_A2, _A0, True),
    (_A3, _A3, True), (_A, _A3, False), (_C, _A3, False), (_A0, _A3, False), (_A3, _A0, True),
    (_A2, _A3, False), (_A3, _A2, True),
    ((32, 64), 128, True),
    ((8, 6), (4, 3), True),
    ((8, 6), (4, 4), False),
    ((8, 6), (4,), True),
    ((8, 6), (4, 3, 2), False),
]


@pytest.mark.parametrize("shape, tiler, expected", EVENLY_DIVIDES)
def test_evenly_divides_table(shape, tiler, expected):
    assert cute_py.evenly_divides(shape, tiler) is expected


@pytest.mark.parametrize("tiler, expected", [
    ((Layout(8, 2), 32), True),
    # 8:3 cannot tile 32 without a gap: complement(8:3, 32) is (3,2):(1,24), size 6, 8*6 != 32
    ((Layout(8, 3), 32), False),
])
def test_evenly_divides_layout_tiler(tiler, expected):
    """int_tuple.cpp: evenly_divides((32,64), Tile<Layout<_8,_s>, _32>): a layout tiler counts by
    ceil_div(shape, Layout) = shape(complement(tiler, shape)), not just its size."""
    assert cute_py.evenly_divides((32, 64), tiler) is expected


@pytest.mark.parametrize("shape, tiler", [(s, t) for s, t, e in EVENLY_DIVIDES if e])
def test_evenly_divides_true_means_logical_divide_keeps_size(shape, tiler):
    """The C++ test's check: evenly_divides(a, b) => size(a) == size(logical_divide(make_layout(a), b))."""
    assert cute_py.size(cute_py.logical_divide(make_layout(shape), tiler)) == it.product(shape)


def test_compatible():
    assert it.compatible(24, (4, 6))
    assert it.compatible((4, 6), ((2, 2), 6))
    assert it.compatible((4, 6), (4, (2, 3)))
    assert it.compatible((4, 6), (4, 6))
    assert not it.compatible((4, 6), 24)
    assert not it.compatible(24, 25)
    assert not it.compatible((4, 6), (6, 4))
    assert not it.compatible((4, 6), (4, 6, 1))
    assert not it.compatible((4, (6,)), (4, 6))


@given(shapes())
@PROPS
def test_compatible_with_coalesced_and_self(shape):
    assert it.compatible(shape, shape)
    assert it.compatible(it.product(shape), shape)
    # every coordinate of a compatible shape is one of the other (crd2idx is defined)
    if isinstance(shape, tuple):
        assert it.compatible(it.product_each(shape), shape)


# ---------------------------------------------------------------------------
# crd2idx / idx2crd / crd2crd


def test_crd2idx_exact():
    assert it.crd2idx((1, 2), (4, 8), (1, 4)) == 9
    assert it.crd2idx(9, (4, 8), (2, 16)) == 2 * 1 + 16 * 2
    assert it.crd2idx((1, 2), (4, 8)) == 9
    assert it.crd2idx(5, (4, 8)) == 5
    assert it.crd2idx((1, (1, 2)), (4, (2, 3)), (1, (4, 8))) == 1 + 4 + 16
    assert it.crd2idx((1, 5), (4, (2, 3)), (1, (4, 8))) == 1 + 4 * 1 + 8 * 2  # 1-D into a tuple mode
    assert it.crd2idx(3, 4, 5) == 15
    # the last mode takes the remainder of an out-of-range 1-D index
    assert it.crd2idx(100, (4, 8), (1, 4)) == 100


def test_crd2idx_underscore_is_zero():
    assert it.crd2idx((1, _), (4, 8), (1, 4)) == 1
    assert it.crd2idx(_, (4, 8), (1, 4)) == 0


def test_crd2idx_rejects_non_congruent():
    with pytest.raises(cute_py.LayoutError):
        it.crd2idx((1, 2, 3), (4, 8), (1, 4))
    with pytest.raises(cute_py.LayoutError):
        it.crd2idx((1, 2, 3), (4, 8))


def test_idx2crd_exact():
    assert it.idx2crd(9, (4, 8)) == (1, 2)
    assert it.idx2crd(9, ((2, 2), 8)) == ((1, 0), 2)
    assert it.idx2crd(9, (4, 8), (8, 1)) == (1, 1)
    assert it.idx2crd(5, (4, 1, 2)) == (1, 0, 1)
    assert it.idx2crd(5, (4, 1, 2), (1, 0, 4)) == (1, 0, 1)   # size-1 mode gives 0
    assert it.idx2crd(7, 8) == 7
    # last mode takes the remainder
    assert it.idx2crd(40, (4, 8)) == (0, 10)


@given(shapes())
@PROPS
def test_idx2crd_crd2idx_round_trip(shape):
    n = it.product(shape)
    seen = set()
    for c in all_coords(shape):
        i = it.crd2idx(c, shape)
        assert 0 <= i < n
        assert it.idx2crd(i, shape) == c
        seen.add(i)
    assert seen == set(range(n))
    for i in range(n):
        c = it.idx2crd(i, shape)
        assert it.congruent(c, shape)
        assert it.crd2idx(c, shape) == i


@given(shapes(), st.data())
@PROPS
def test_crd2idx_with_stride_is_inner_product(shape, data):
    flat = it.flatten_to_tuple(shape)
    strides = data.draw(st.lists(st.integers(-16, 16), min_size=len(flat), max_size=len(flat)))
    stride = it.unflatten(tuple(strides), shape) if isinstance(shape, tuple) else strides[0]
    for i, c in enumerate(all_coords(shape)):
        v = it.crd2idx(c, shape, stride)
        assert v == it.inner_product(c, stride)
        # the 1-D coordinate of c gives the same offset
        assert it.crd2idx(it.crd2idx(c, shape), shape, stride) == v


@given(shapes())
@PROPS
def test_idx2crd_with_compact_stride_inverts_crd2idx(shape):
    for gen in (it.compact_col_major, it.compact_row_major):
        stride = gen(shape)
        for c in all_coords(shape):
            assert it.idx2crd(it.crd2idx(c, shape, stride), shape, stride) == c


def test_idx2crd_stride_zero_nontrivial_mode_rejected():
    with pytest.raises(cute_py.LayoutError):
        it.idx2crd(3, 4, 0)


def test_crd2crd_exact():
    assert it.crd2crd((1, 2), (4, 8), 32) == 9
    assert it.crd2crd(9, 32, (4, 8)) == (1, 2)
    assert it.crd2crd((1, 2), (4, 8), ((2, 2), 8)) == ((1, 0), 2)
    # mode-wise when all three are tuples
    assert it.crd2crd((9, 3), (32, 4), ((4, 8), (2, 2))) == ((1, 2), (1, 1))


@given(shapes(), shapes())
@PROPS
def test_crd2crd_preserves_index(src, dst):
    n = min(it.product(src), it.product(dst))
    for i in range(n):
        c = it.idx2crd(i, src)
        d = it.crd2crd(c, src, it.product(dst))
        assert d == i
        assert it.crd2idx(it.crd2crd(i, it.product(src), dst), dst) == i


# ---------------------------------------------------------------------------
# ceil_div / round_up / elem_scale


@pytest.mark.parametrize("a, b, expected", [
    (10, 4, 3),
    (12, 4, 3),
    (1, 4, 1),
    ((8, 6), 4, (2, 6)),
    ((3, 5), (2,), (2, 5)),           # missing trailing modes of b count as 1
    ((3, 5), (2, 2), (2, 3)),
    (7, (2, 2), 2),                    # int / tuple divides by product
    ((2, 8, 6), 32, (1, 1, 3)),        # tuple / int folds like shape_div, with ceil
])
def test_ceil_div_exact(a, b, expected):
    assert it.ceil_div(a, b) == expected


def test_ceil_div_rejects_longer_divisor():
    with pytest.raises(cute_py.LayoutError):
        it.ceil_div((3,), (1, 2))


@given(st.integers(0, 1000), st.integers(1, 100))
@PROPS
def test_ceil_div_int(a, b):
    q = it.ceil_div(a, b)
    assert (q - 1) * b < a <= q * b or (a == 0 and q == 0)
    r = it.round_up(a, b)
    assert r % b == 0 and a <= r < a + b


@pytest.mark.parametrize("a, b, expected", [
    (10, 4, 12),
    (12, 4, 12),
    ((10, 3), (4, 2), (12, 4)),
    ((10, 3), 4, (12, 4)),
    ((10, 3), (4,), (12, 3)),
])
def test_round_up_exact(a, b, expected):
    assert it.round_up(a, b) == expected


@pytest.mark.parametrize("a, b, expected", [
    ((2, 3), (4, (2, 2)), (8, 12)),
    (2, (3, 4), 24),
    (2, 3, 6),
    (((1, 2), 3), ((4, 5), 6), ((4, 10), 18)),
])
def test_elem_scale_exact(a, b, expected):
    assert it.elem_scale(a, b) == expected


def test_elem_scale_tuple_by_int_rejected():
    with pytest.raises(cute_py.LayoutError):
        it.elem_scale((2, 3), 4)


# ---------------------------------------------------------------------------
# flatten / unflatten / depth / rank and small helpers


def test_flatten_exact():
    assert it.flatten(((2, 3), (4, (5,)))) == (2, 3, 4, 5)
    assert it.flatten(7) == 7
    assert it.flatten(()) == ()
    assert it.flatten_to_tuple(7) == (7,)
    assert it.flatten(((), (1, ()), 2)) == (1, 2)


@given(nested_ints)
@PROPS
def test_flatten_unflatten_round_trip(t):
    flat = it.flatten_to_tuple(t)
    assert it.depth(flat) <= 1
    assert all(not isinstance(x, tuple) for x in flat)
    back = it.unflatten(flat, t)
    assert back == t
    assert it.congruent(back, t) or not isinstance(t, tuple)
    assert it.product(t) == it.product(flat)


def test_unflatten_wrong_leaf_count():
    with pytest.raises(cute_py.LayoutError):
        it.unflatten((1, 2, 3), ((0, 0), 0, 0))


@pytest.mark.parametrize("t, depth, rank", [
    (8, 0, 1),
    ((8,), 1, 1),
    ((), 1, 0),
    ((2, 3), 1, 2),
    (((2, 3), 4), 2, 2),
    ((1, (2, (3, 4))), 3, 2),
])
def test_depth_rank(t, depth, rank):
    assert it.depth(t) == depth
    assert it.rank(t) == rank


def test_small_helpers():
    assert it.product_each(((2, 3), 4, (5, 1))) == (6, 4, 5)
    assert it.product_like(((2, 3), (4, 5)), (0, 0)) == (6, 20)
    assert it.sum(((2, 3), 4)) == 9
    assert it.tuple_max((3, (7, 2))) == 7
    assert (it.signum(-3), it.signum(0), it.signum(5)) == (-1, 0, 1)
    assert it.filter_zeros((0, 1, 0), (4, 8, 2)) == (1, 8, 1)
    assert it.repeat_like(((2, 3), 4), 0) == ((0, 0), 0)
    assert it.to_str(((2, 3), 4)) == "((2,3),4)"
    assert it.to_str((4,)) == "(4)"
    assert it.to_str(()) == "()"
    assert it.is_int(3) and not it.is_int(True) and not it.is_int(3.0) and not it.is_int((3,))
    assert it.is_tuple((1,)) and not it.is_tuple([1]) and not it.is_tuple(1)
    assert it.has_underscore((1, (_, 2))) and not it.has_underscore((1, (3, 2)))


# ---------------------------------------------------------------------------
# orderings (compare.cpp)


@pytest.mark.parametrize("shape", [
    (3, 5),                          # simple 2-D
    (2, 3, 5),                       # simple 3-D
    ((3, 2), (5, 2, 2)),             # hierarchical 3-D
])
@pytest.mark.parametrize("tag", ["col", "row"])
def test_compare_cpp(shape, tag):
    """get_hier_coord(i) is inside the shape, and colex_less (col-major) / lex_less (row-major)
    orders the coordinates exactly like their indices."""
    layout = make_layout(shape, LayoutLeft if tag == "col" else LayoutRight)
    less = it.colex_less if tag == "col" else it.lex_less
    coords = [layout.get_hier_coord(i) for i in range(cute_py.size(layout))]
    for i, ci in enumerate(coords):
        assert it.elem_less(ci, cute_py.shape(layout))
        for j, cj in enumerate(coords):
            assert (i < j) == less(ci, cj), (i, j, ci, cj)


@given(shapes(max_size=48))
@PROPS
def test_colex_lex_order_property(shape):
    for tag, less in (("col", it.colex_less), ("row", it.lex_less)):
        layout = make_layout(shape, LayoutLeft if tag == "col" else LayoutRight)
        coords = [layout.get_hier_coord(i) for i in range(cute_py.size(layout))]
        for i, ci in enumerate(coords):
            assert it.elem_less(ci, shape)
            for j, cj in enumerate(coords):
                # size-1 modes always get coordinate 0, so distinct indices give distinct coordinates
                assert (i < j) == less(ci, cj), (tag, shape, i, j, ci, cj)


@given(shapes())
@PROPS
def test_elem_less_every_coordinate(shape):
    for c in all_coords(shape):
        assert it.elem_less(c, shape)
    assert not it.elem_less(shape, shape)
    # a coordinate at the extent of some mode is not inside
    flat = it.flatten_to_tuple(shape)
    for k in range(len(flat)):
        bad = tuple(flat[i] if i == k else 0 for i in range(len(flat)))
        bad = it.unflatten(bad, shape) if isinstance(shape, tuple) else bad[0]
        assert not it.elem_less(bad, shape)


def test_elem_less_exact():
    assert it.elem_less((1, 2), (4, 8))
    assert not it.elem_less((1, 8), (4, 8))
    assert it.elem_less(((1, 2), 3), ((2, 3), 4))
    assert not it.elem_less(((1, 3), 3), ((2, 3), 4))
    assert it.elem_less((), (1,))           # fewer modes is allowed
    assert not it.elem_less((1, 2, 3), (4, 8))
    assert it.elem_leq((4, 8), (4, 8))
    assert it.elem_geq((4, 8), (4, 8))
    assert it.elem_gtr((5, 9), (4, 8))


def test_lex_less_exact():
    assert it.lex_less((0, 5), (1, 0))
    assert not it.lex_less((1, 0), (0, 5))
    assert not it.lex_less((1, 2), (1, 2))
    assert it.lex_less((1, 2), (1, 3))
    assert it.lex_less((1, (2, 3)), (1, (3, 0)))
    assert it.lex_less(3, 4) and not it.lex_less(4, 4)
    assert it.lex_leq((1, 2), (1, 2)) and it.lex_geq((1, 2), (1, 2))
    assert it.lex_gtr((1, 0), (0, 5))


def test_colex_less_exact():
    assert it.colex_less((5, 0), (0, 1))
    assert not it.colex_less((0, 1), (5, 0))
    assert it.colex_less((0, 1), (1, 1))
    assert not it.colex_less((1, 1), (1, 1))
    assert it.colex_leq((1, 1), (1, 1)) and it.colex_geq((1, 1), (1, 1))
    assert it.colex_gtr((0, 1), (5, 0))


@given(st.data())
@PROPS
def test_lex_colex_match_python_order(data):
    n = data.draw(st.integers(1, 4))
    a = tuple(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    b = tuple(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    assert it.lex_less(a, b) == (a < b)
    assert it.colex_less(a, b) == (a[::-1] < b[::-1])
    assert it.lex_leq(a, b) == (a <= b)
    assert it.colex_geq(a, b) == (a[::-1] >= b[::-1])
    assert it.elem_less(a, b) == all(x < y for x, y in zip(a, b))


def test_orderings_reject_int_vs_tuple():
    for f in (it.lex_less, it.colex_less, it.elem_less):
        with pytest.raises(cute_py.LayoutError):
            f(1, (1, 2))


def test_safe_div():
    """CuTe's safe_div: exact division, element-wise on congruent tuples; a static non-divisor is an error."""
    assert it.safe_div(12, 4) == 3 and it.safe_div((8, (6, 9)), (2, (3, 9))) == (4, (2, 1))
    with pytest.raises(cute_py.DivisibilityError, match="safe_div"):
        it.safe_div(12, 5)
    with pytest.raises(cute_py.RankError, match="safe_div"):
        it.safe_div((8, 6), 2)
    with pytest.raises(TypeError, match="safe_div"):
        it.safe_div(8, 0)
    from cute_py.symbolic import symbols

    M = symbols("M")
    assert it.safe_div(4 * M, 4) == M
    with pytest.raises(cute_py.SymbolicError, match="safe_div"):
        it.safe_div(M, 4)
