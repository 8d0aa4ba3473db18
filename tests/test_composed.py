"""ComposedLayout(outer, offset, inner): ``c -> outer(offset + inner(c))``, and swizzled layouts."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import ComposedLayout, Layout, Swizzle, _, parse
from cute_py.int_tuple import product_each
from strategies import compact_layouts, pow2_layouts, swizzles

P = parse
SW128_F16 = P("Sw<3,3,3> o 0 o (8,64):(64,1)")   # the 128-byte swizzle atom for 16-bit elements


def _size(x):
    return cute_py.size(x)


def _coords2(L):
    m, n = cute_py.size(L, 0), cute_py.size(L, 1)
    return [(i, j) for j in range(n) for i in range(m)]


def check_composed(C):
    """``C(c) == outer(offset + inner(c))`` over the whole domain, for 1-D and natural coordinates."""
    assert isinstance(C, ComposedLayout)
    assert C.shape == C.inner.shape
    assert _size(C) == _size(C.inner)
    assert cute_py.cosize(C) == cute_py.cosize(C.inner)
    assert cute_py.rank(C) == cute_py.rank(C.inner)
    for i in range(_size(C)):
        assert C(i) == C.outer(C.offset + C.inner(i))
    if isinstance(C.shape, tuple) and len(C.shape) == 2:
        for (i, j) in _coords2(C):
            assert C(i, j) == C((i, j)) == C.outer(C.offset + C.inner(i, j))
    return C


def check_slices(C):
    """Slicing with ``_`` folds the offset in: C(_, j)(i) == C(i, j) == C(i, _)(j)."""
    m, n = cute_py.size(C, 0), cute_py.size(C, 1)
    for j in range(n):
        col = C(_, j)
        assert _size(col) == m
        for i in range(m):
            assert col(i) == C(i, j)
    for i in range(m):
        row = C(i, _)
        assert _size(row) == n
        for j in range(n):
            assert row(j) == C(i, j)


def check_right_inverse(C, R):
    """``C(R(i)) == i`` for all ``i < size(R)``."""
    for i in range(_size(R)):
        assert C(R(i)) == i, f"C(R({i})) = {C(R(i))}; C = {C}, R = {R}"


def check_left_inverse(C, R):
    """``R(C(i)) == i`` for all ``i < size(C)`` (C injective)."""
    for i in range(_size(C)):
        assert R(C(i)) == i, f"R(C({i})) = {R(C(i))}; C = {C}, R = {R}"


# ---------------------------------------------------------------------------
# construction and evaluation


def test_evaluation_outer_offset_inner():
    C = ComposedLayout(Layout(8, 2), 3, Layout((2, 2), (1, 2)))
    assert [C(i) for i in range(4)] == [6, 8, 10, 12]
    assert C(1, 1) == 2 * (3 + 3)
    assert str(C) == "8:2 o 3 o (2,2):(1,2)"
    check_composed(C)


def test_accessors():
    C = SW128_F16
    assert C.layout_a() == Swizzle(3, 3, 3) == C.outer
    assert C.layout_b() == Layout((8, 64), (64, 1)) == C.inner
    assert C.offset == 0
    assert cute_py.shape(C) == (8, 64)
    assert _size(C) == 512 and cute_py.cosize(C) == 512
    assert cute_py.rank(C) == 2 == len(C)
    with pytest.raises(TypeError):
        cute_py.stride(C)


def test_composition_swizzle_layout_example():
    C = cute_py.composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    assert isinstance(C, ComposedLayout)
    assert str(C) == "Sw<3,3,3> o 0 o (8,64):(64,1)"
    assert C(1, 8) == 64
    assert C(1, 0) == 72
    assert C == SW128_F16
    check_composed(C)


def test_composition_identity_swizzle_is_plain_layout():
    L = Layout((8, 64), (64, 1))
    assert cute_py.composition(Swizzle(0, 4, 3), L) == L
    assert isinstance(cute_py.composition(Swizzle(0, 4, 3), L), Layout)


def test_composition_layout_then_swizzle():
    """§2.7: ``(8,64):(64,1) o Sw<3,3,3>`` is ``Sw<3,0,3> o (8,64):(64,1)``."""
    L = Layout((8, 64), (64, 1))
    R = cute_py.composition(L, Swizzle(3, 3, 3))
    assert str(R) == "Sw<3,0,3> o 0 o (8,64):(64,1)"
    sw = Swizzle(3, 3, 3)
    for x in range(512):
        assert R(x) == L(sw(x))


def test_composed_then_tiler_acts_on_inner():
    C = SW128_F16
    T = P("(4,8):(1,4)")
    R = cute_py.composition(C, T)
    assert R.inner == cute_py.composition(C.inner, T)
    for i in range(_size(T)):
        assert R(i) == C(T(i))


def test_layout_after_composed_needs_zero_offset():
    C = ComposedLayout(Swizzle(3, 3, 3), 8, Layout((8, 64), (64, 1)))
    with pytest.raises(cute_py.LayoutError):
        cute_py.composition(Layout(1024, 2), C)
    R = cute_py.composition(Layout(1024, 2), SW128_F16)
    for i in range(512):
        assert R(i) == 2 * SW128_F16(i)


def test_constructor_type_errors():
    with pytest.raises(TypeError):
        ComposedLayout((8, 64), 0, Layout(8))
    with pytest.raises(TypeError):
        ComposedLayout(Swizzle(3, 3, 3), 0, (8, 64))
    with pytest.raises(TypeError):
        ComposedLayout(Swizzle(3, 3, 3), "0", Layout(8))


def test_immutable_hash_eq_pickle():
    C = SW128_F16
    D = cute_py.composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    assert C == D and hash(C) == hash(D)
    assert C != ComposedLayout(Swizzle(3, 3, 3), 8, C.inner)
    assert C != ComposedLayout(Swizzle(3, 4, 3), 0, C.inner)
    assert C != ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64)))
    assert C != C.inner and C.inner != C
    assert len({C, D, C.inner}) == 2
    with pytest.raises(AttributeError):
        C.offset = 3
    assert pickle.loads(pickle.dumps(C)) == C
    assert P(str(C)) == C
    assert eval(repr(C), {"ComposedLayout": ComposedLayout, "Swizzle": Swizzle, "Layout": Layout}) == C


def test_swizzle_portions():
    assert cute_py.get_swizzle_portion(SW128_F16) == Swizzle(3, 3, 3)
    assert cute_py.get_nonswizzle_portion(SW128_F16) == Layout((8, 64), (64, 1))
    L = Layout((4, 8))
    assert cute_py.get_swizzle_portion(L) == Swizzle(0, 4, 3)
    assert cute_py.get_nonswizzle_portion(L) == L


def test_modes_of_composed():
    C = SW128_F16
    assert C[0].inner == Layout(8, 64) and C[0].outer == C.outer
    assert C[1].inner == Layout(64, 1)
    for i in range(8):
        assert C[0](i) == C(i, 0)
    for j in range(64):
        assert C[1](j) == C(0, j)


# ---------------------------------------------------------------------------
# slicing


def test_slice_folds_offset():
    C = SW128_F16
    col = C(_, 3)
    assert col.offset == 3 and col.inner == Layout((8,), (64,))
    row = C(2, _)
    assert row.offset == 128
    check_slices(C)
    assert C(_, _) == C
    assert C(_) == C


def test_slice_and_offset_and_domain_offset():
    C = SW128_F16
    sub, off = cute_py.slice_and_offset((_, 3), C)
    assert off == 0
    for i in range(8):
        assert sub(i) == C(i, 3)
    D, off = cute_py.domain_offset((1, 2), C)
    assert off == 0
    for (i, j) in [(0, 0), (1, 1), (3, 7), (6, 61)]:
        assert D(i, j) == C.outer(C.inner(1, 2) + C.inner(i, j))


def test_swizzle_layout_slices_like_cute_unit_test():
    """swizzle_layout.cpp: row / column slices of swizzled layouts give the same values."""
    for C in (P("Sw<3,0,3> o 0 o (8,8):(8,1)"), P("Sw<3,0,-3> o 0 o (8,8):(8,1)"),
              P("Sw<2,1,3> o 0 o ((2,2,2),(2,2,2)):((32,2,8),(4,1,16))")):
        check_composed(C)
        check_slices(C)


# ---------------------------------------------------------------------------
# inverses


def test_right_inverse_example():
    R = cute_py.right_inverse(SW128_F16)
    assert str(R) == "Sw<3,0,-6> o 0 o (64,8):(8,1)"
    assert _size(R) == 512
    check_right_inverse(SW128_F16, R)


def test_left_inverse_example():
    R = cute_py.left_inverse(SW128_F16)
    check_left_inverse(SW128_F16, R)


def test_inverse_needs_zero_offset():
    C = ComposedLayout(Swizzle(3, 3, 3), 8, Layout((8, 64), (64, 1)))
    with pytest.raises(cute_py.LayoutError):
        cute_py.right_inverse(C)
    with pytest.raises(cute_py.LayoutError):
        cute_py.left_inverse(C)


# ---------------------------------------------------------------------------
# divides, products, tile_to_shape: act on the inner layout, keep the function


@pytest.mark.parametrize("op, tiler", [
    ("logical_divide", (2, 8)), ("zipped_divide", (2, 8)), ("tiled_divide", (2, 8)), ("flat_divide", (2, 8)),
    ("logical_divide", Layout(16, 1)), ("zipped_divide", (Layout(4, 1), Layout(8, 1))),
    ("logical_product", Layout((2, 2))), ("zipped_product", (Layout(2), Layout(3))),
    ("tiled_product", Layout((2, 2))), ("flat_product", Layout((2, 2))),
    ("blocked_product", Layout((2, 2))), ("raked_product", Layout((2, 2))),
    ("coalesce", None), ("flatten", None),
])
def test_algebra_acts_on_inner(op, tiler):
    C = SW128_F16
    f = getattr(cute_py, op)
    out = f(C) if tiler is None else f(C, tiler)
    ref = f(C.inner) if tiler is None else f(C.inner, tiler)
    assert isinstance(out, ComposedLayout)
    assert out.outer == C.outer and out.offset == C.offset
    assert out.inner == ref
    check_composed(out)
    for i in range(_size(out)):
        assert out(i) == C.outer(ref(i))


def test_divide_keeps_function():
    C = SW128_F16
    R = cute_py.logical_divide(C, Layout(16, 1))
    # 16:1 on (8,64):(64,1): coordinate i of the divide is coordinate M(i) of C
    M = cute_py.make_layout(Layout(16, 1), cute_py.complement(Layout(16, 1), 512))
    for i in range(512):
        assert R(i) == C(M(i))


def test_tile_to_shape_swizzled_atom():
    C = SW128_F16
    R = cute_py.tile_to_shape(C, (128, 64))
    inner_tiled = cute_py.tile_to_shape(C.inner, (128, 64))
    assert isinstance(R, ComposedLayout)
    assert R.outer == Swizzle(3, 3, 3) and R.offset == 0
    assert R.inner == inner_tiled
    assert str(inner_tiled) == "((8,16),(64,1)):((64,512),(1,0))"
    assert product_each(R.shape) == (128, 64)
    for m in range(128):
        for k in range(64):
            assert R(m, k) == Swizzle(3, 3, 3)(inner_tiled(m, k))
    # the tiled layout is still a bijection onto [0, 128*64)
    assert sorted(R(i) for i in range(128 * 64)) == list(range(128 * 64))
    # the first 8x64 block is the atom itself
    for m in range(8):
        for k in range(64):
            assert R(m, k) == C(m, k)


def test_tile_to_shape_swizzled_atom_row_order():
    C = SW128_F16
    R = cute_py.tile_to_shape(C, (16, 128), (1, 0))
    inner = cute_py.tile_to_shape(C.inner, (16, 128), (1, 0))
    assert R.inner == inner
    for i in range(_size(R)):
        assert R(i) == Swizzle(3, 3, 3)(inner(i))


# ---------------------------------------------------------------------------
# upcast / downcast


def test_upcast_downcast_composed():
    C = SW128_F16
    U = cute_py.upcast(C, 2)
    assert str(U) == "Sw<3,2,3> o 0 o (8,32):(32,1)"
    D = cute_py.downcast(C, 2)
    assert str(D) == "Sw<3,4,3> o 0 o (8,128):(128,1)"
    for r in range(8):
        for j in range(32):
            assert U(r, j) * 2 == C(r, 2 * j)
        for j in range(128):
            assert D(r, j) == C(r, j // 2) * 2 + j % 2
    assert cute_py.downcast(U, 2) == C
    assert cute_py.upcast(D, 2) == C


def test_recast_composed():
    C = SW128_F16
    assert cute_py.recast_layout(C, 16, 32) == cute_py.upcast(C, 2)
    assert cute_py.recast_layout(C, 16, 8) == cute_py.downcast(C, 2)
    assert cute_py.recast_layout(C, "f16", "bf16") == C


def test_upcast_composed_with_offset():
    C = ComposedLayout(Swizzle(3, 3, 3), 64, Layout((8, 64), (64, 1)))
    U = cute_py.upcast(C, 2)
    assert U.offset == 32
    for r in range(8):
        for j in range(32):
            assert U(r, j) * 2 == C(r, 2 * j)


def test_max_alignment_and_common_vector_capped_by_swizzle():
    C = SW128_F16
    assert cute_py.max_alignment(C) == 8
    assert cute_py.max_common_vector(C, C) == 8


# ---------------------------------------------------------------------------
# the point of the swizzle: no shared-memory bank conflicts


def test_swizzle_bank_conflict_free_16B_chunks():
    """Sw<3,3,3> o (8,64):(64,1) with 16-bit elements: for each 8-column block, the 8
    rows' 16-byte chunks are contiguous and land in 8 distinct 16-byte slots mod 128 B."""
    C = SW128_F16
    elem_bytes = 2
    for block in range(8):
        slots = []
        for r in range(8):
            start = C(r, 8 * block)
            # the 8 elements of the chunk are contiguous and 16-byte aligned
            assert [C(r, 8 * block + k) for k in range(8)] == [start + k for k in range(8)]
            assert (start * elem_bytes) % 16 == 0
            slots.append((start * elem_bytes % 128) // 16)
        assert sorted(slots) == list(range(8)), f"column block {block}: slots {slots}"
    # without the swizzle every row's chunk lands in the same slot
    L = C.inner
    assert len({(L(r, 0) * elem_bytes % 128) // 16 for r in range(8)}) == 1


def test_swizzle_bank_conflict_free_columns():
    """Reading one column (8 rows, same k) touches 8 different 4-byte banks groups."""
    C = SW128_F16
    for k in range(64):
        chunks = {(C(r, k) * 2 % 128) // 16 for r in range(8)}
        assert len(chunks) == 8


# ---------------------------------------------------------------------------
# properties


@st.composite
def _swizzled_pow2(draw):
    L = draw(pow2_layouts())
    n = _size(L)
    # the swizzle's span must fit in the layout's codomain (strategies.swizzles only
    # bounds it when B + |S| leaves room for M)
    sw = draw(swizzles(max_span_bits=n.bit_length() - 1).filter(lambda s: s.size() <= n))
    return sw, L


@settings(max_examples=50, deadline=None)
@given(_swizzled_pow2(), st.integers(0, 3))
def test_property_swizzled_layout_is_bijection(case, off_k):
    sw, L = case
    C = cute_py.composition(sw, L)
    n = _size(L)
    if sw.bits == 0:
        assert C == L
        return
    check_composed(C)
    check_slices(C)
    assert sorted(C(i) for i in range(n)) == list(range(n))
    # an offset that is a multiple of the swizzle span shifts the image
    off = off_k * sw.size()
    D = ComposedLayout(sw, off, L)
    check_composed(D)
    assert sorted(D(i) for i in range(n)) == list(range(off, off + n))


@settings(max_examples=75, deadline=None)
@given(_swizzled_pow2())
def test_property_swizzled_inverses(case):
    sw, L = case
    C = cute_py.composition(sw, L)
    if sw.bits == 0:
        return
    try:
        R = cute_py.right_inverse(C)
    except cute_py.LayoutError:
        R = None
    if R is not None:
        assert _size(R) == _size(L)
        check_right_inverse(C, R)
    try:
        K = cute_py.left_inverse(C)
    except cute_py.LayoutError:
        return
    check_left_inverse(C, K)


@settings(max_examples=50, deadline=None)
@given(_swizzled_pow2(), st.sampled_from([1, 2, 4]))
def test_property_upcast_downcast_swizzled(case, n):
    sw, L = case
    C = ComposedLayout(sw, 0, L)
    rows, cols = L.shape
    D = cute_py.downcast(C, n)
    for r in range(rows):
        for j in range(cols * n):
            assert D(r, j) == C(r, j // n) * n + j % n
    if sw.base >= n.bit_length() - 1 and cols % n == 0:
        U = cute_py.upcast(C, n)
        for r in range(rows):
            for j in range(cols // n):
                assert U(r, j) * n == C(r, j * n)


@settings(max_examples=50, deadline=None)
@given(_swizzled_pow2(), st.data())
def test_property_tile_to_shape_swizzled(case, data):
    sw, L = case
    C = ComposedLayout(sw, 0, L)
    a, b = data.draw(st.sampled_from([1, 2, 4])), data.draw(st.sampled_from([1, 2]))
    target = (L.shape[0] * a, L.shape[1] * b)
    order = data.draw(st.sampled_from([cute_py.LayoutLeft, (1, 0)]))
    R = cute_py.tile_to_shape(C, target, order)
    inner = cute_py.tile_to_shape(L, target, order)
    assert R.inner == inner and R.outer == sw and R.offset == 0
    assert product_each(R.shape) == target
    for i in range(_size(R)):
        assert R(i) == sw(inner(i))


@settings(max_examples=50, deadline=None)
@given(compact_layouts(max_size=64), st.sampled_from([Swizzle(1, 0, 1), Swizzle(2, 0, 2), Swizzle(1, 1, 2)]),
       st.integers(0, 5))
def test_property_composed_evaluation_any_layout(L, sw, off):
    C = ComposedLayout(sw, off, L)
    check_composed(C)
    if isinstance(L.shape, tuple) and len(L.shape) == 2:
        check_slices(C)
