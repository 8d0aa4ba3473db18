"""Host tensors: element access, views, the algebra on tensors, partitioning, recast, printing.

Partitions are checked by brute force against numpy: every tile equals the numpy
slice it should be, every element is covered exactly once, and identity-tensor
partitions name the coordinates the data-tensor partitions hold.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import (
    ComposedLayout, CoordinateError, DivisibilityError, IdentityEngine, Layout, LayoutError, RankError,
    Swizzle, Tensor, _, coalesce, composition, domain_offset, filter, flat_divide, flatten, get, group,
    inner_partition, local_partition, local_tile, logical_divide, make_identity_tensor, make_tensor,
    make_tensor_like, max_common_layout, max_common_vector, outer_partition, print_tensor, recast, select,
    take, tiled_divide, zipped_divide,
)
from cute_py.int_tuple import idx2crd, product_each
from oracle import called_values
from strategies import compact_layouts, divisor_tilers


def _printed(t):
    buf = io.StringIO()
    print_tensor(t, file=buf)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# construction and element access


def test_make_tensor_from_a_row_major_array_uses_its_own_layout():
    a = np.arange(12).reshape(3, 4)
    t = make_tensor(a)
    assert t.layout == Layout((3, 4), (4, 1))
    for i, j in itertools.product(range(3), range(4)):
        assert t(i, j) == a[i, j] == t[i, j] == t[(i, j)]
    assert np.shares_memory(t.engine, a)


def test_make_tensor_from_a_column_major_array_is_a_view_in_memory_order():
    a = np.asfortranarray(np.arange(12).reshape(3, 4))
    t = make_tensor(a)
    assert t.layout == Layout((3, 4), (1, 3))
    assert np.shares_memory(t.engine, a)
    for i, j in itertools.product(range(3), range(4)):
        assert t(i, j) == a[i, j]
    t[2, 3] = -1
    assert a[2, 3] == -1


def test_a_shape_gives_compact_column_major_over_the_flattened_data():
    a = np.arange(12)
    t = make_tensor(a, (3, 4))
    assert t.layout == Layout((3, 4), (1, 3))
    assert t.to_numpy().tolist() == a.reshape(4, 3).T.tolist()
    assert make_tensor(a, 12).layout == Layout(12, 1)


def test_make_tensor_from_a_list_copies():
    data = [1.0, 2.0, 3.0, 4.0]
    t = make_tensor(data, (2, 2))
    assert t.dtype is cute_py.dtypes.f64
    t[0, 1] = 9
    assert data[2] == 3.0 and t(0, 1) == 9
    assert make_tensor([1, 2], 2, dtype="s8").engine.dtype == np.int8


def test_writes_go_through_every_view():
    a = np.zeros((4, 8), dtype=np.float32)
    t = make_tensor(a)
    t[1, 2] = 5
    t(_, 3)[2] = 7
    local_tile(t, (2, 4), (1, 1))[0, 0] = 11
    assert a[1, 2] == 5 and a[2, 3] == 7 and a[2, 4] == 11


def test_setitem_on_a_slice():
    a = np.zeros((3, 4), dtype=np.int32)
    t = make_tensor(a)
    t[_, 1] = 5
    assert a[:, 1].tolist() == [5, 5, 5]
    t[2, _] = [1, 2, 3, 4]
    assert a[2].tolist() == [1, 2, 3, 4]
    t[_] = np.arange(12).reshape(3, 4)          # numpy values line up with to_numpy's shape
    assert a.tolist() == np.arange(12).reshape(3, 4).tolist()
    with pytest.raises(LayoutError):
        t[_, 1] = [1, 2]


def test_non_contiguous_data_is_rejected():
    a = np.arange(16).reshape(4, 4)
    with pytest.raises(LayoutError, match="contiguous"):
        make_tensor(a[:, ::2], (4, 2))
    with pytest.raises(LayoutError, match="contiguous"):
        Tensor(np.arange(8)[::2], Layout(4))


def test_layout_must_fit_in_the_data():
    with pytest.raises(LayoutError) as e:
        make_tensor(np.arange(12), (4, 4))
    msg = str(e.value)
    assert "12" in msg and "(4,4):(1,4)" in msg and "make_tensor" in msg
    with pytest.raises(LayoutError):
        make_tensor(np.arange(16), (4, 4), offset=1)
    with pytest.raises(LayoutError):
        make_tensor(np.arange(8), Layout(4, -1))                # reaches -3
    t = make_tensor(np.arange(8), Layout(4, -1), offset=3)      # reversed view
    assert t.values().tolist() == [3, 2, 1, 0]
    with pytest.raises(LayoutError):
        make_tensor(np.arange(15), composition(Swizzle(2, 0, 2), Layout((4, 4), (4, 1))))


@pytest.mark.parametrize("args", [
    ("abc", 4), ({1: 2}, 4), (np.arange(4), "x"), (np.arange(4), 4.0), (np.arange(4), 4, 0.5),
])
def test_make_tensor_bad_types(args):
    with pytest.raises(TypeError):
        make_tensor(*args)


def test_tensor_constructor_bad_types():
    with pytest.raises(TypeError):
        Tensor(np.zeros((2, 2)), Layout(4))                     # not 1-D
    with pytest.raises(TypeError):
        Tensor([0, 1, 2, 3], Layout(4))
    with pytest.raises(TypeError):
        Tensor(np.zeros(4), (4,))
    with pytest.raises(TypeError):
        Tensor(np.zeros(4), cute_py.make_identity_layout((2, 2)))  # basis strides over data
    with pytest.raises(TypeError):
        Tensor(np.zeros(4, dtype=np.float32), Layout(4), dtype="f16")  # width mismatch
    with pytest.raises(TypeError):
        Tensor(IdentityEngine(), Layout(4), dtype="f32")
    with pytest.raises(TypeError):
        make_tensor([1.0], 1, dtype="bf16")                     # numpy cannot hold bf16 values


def test_coordinate_errors_are_layout_errors_never_index_errors():
    t = make_tensor(np.arange(8), (2, 4))
    for bad in [(2, 0), (0, 4), (-1, 0), 8, -1, (1, 2, 3)]:
        with pytest.raises(CoordinateError):
            t(bad)
    with pytest.raises(CoordinateError):
        t(_, 4)
    # a layout reaching past the engine: constructible as a view, rejected on access
    v = Tensor(np.arange(4), Layout(8))
    assert v(3) == 3
    with pytest.raises(CoordinateError, match="outside the engine"):
        v(4)
    with pytest.raises(CoordinateError):
        v.values()
    neg = Tensor(np.arange(4), Layout(2, -1))
    with pytest.raises(CoordinateError):
        neg(1)                                                  # index -1 must not wrap around
    with pytest.raises(TypeError):
        t()


def test_attributes_len_iter_and_immutability():
    a = np.arange(24, dtype=np.float32)
    t = make_tensor(a, Layout((4, (2, 3)), (1, (4, 8))), offset=0)
    assert t.shape == (4, (2, 3)) and t.stride == (1, (4, 8))
    assert t.rank == 2 and t.depth == 2 and t.size() == 24 and len(t) == 24
    assert cute_py.size(t) == 24 and cute_py.rank(t) == 2 and cute_py.shape(t, 1) == (2, 3)
    assert cute_py.cosize(t) == 24 and cute_py.depth(t) == 2
    assert list(t) == t.values().tolist() == list(range(24))
    assert t.offset == 0 and t.engine is a
    with pytest.raises(AttributeError):
        t.layout = Layout(4)
    sw = make_tensor(np.arange(16), composition(Swizzle(2, 0, 2), Layout((4, 4), (4, 1))))
    with pytest.raises(TypeError):
        sw.stride


def test_str_and_repr():
    t = make_tensor(np.zeros(64, dtype=np.float32), Layout((4, 8)))
    assert str(t) == "tensor<f32>[64] o (4,8):(1,4)"
    assert repr(t) == "Tensor(tensor<f32>[64] o (4,8):(1,4))"
    assert str(t(_, 3)) == "tensor<f32>[64]+12 o (4):(1)"
    assert str(make_identity_tensor((4, 8))) == "ArithTuple(0,0) o (4,8):(1@0,1@1)"
    assert str(make_identity_tensor((4, 8))(1, _)) == "ArithTuple(1,0) o (8):(1@1)"
    assert str(make_identity_tensor(8)) == "ArithTuple(0) o 8:1"
    sw = make_tensor(np.zeros(512, dtype=np.float16), composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    assert str(sw) == "tensor<f16>[512] o Sw<3,3,3> o 0 o (8,64):(64,1)"
    assert str(make_tensor(np.zeros(4, dtype=np.complex64), 4)) == "tensor<complex64>[4] o 4:1"
    assert str(recast(t, "bf16")) == "tensor<bf16>[128] o (8,8):(1,8)"


# ---------------------------------------------------------------------------
# whole-domain properties over compact layouts


@settings(max_examples=60, deadline=None)
@given(compact_layouts())
def test_elements_follow_the_layout(L):
    n = cute_py.size(L)
    data = np.arange(n) * 10 + 3
    t = make_tensor(data, L)
    offs = called_values(L)
    assert t.values().tolist() == [data[o] for o in offs]
    for i in range(n):
        assert t(i) == data[offs[i]]
    arr = t.to_numpy()
    assert arr.shape == (product_each(L.shape) if isinstance(L.shape, tuple) else (L.shape,))
    assert arr.reshape(-1, order="F").tolist() == t.values().tolist()


@settings(max_examples=60, deadline=None)
@given(compact_layouts())
def test_identity_tensor_gives_hierarchical_coordinates(L):
    c = make_identity_tensor(L.shape)
    vals = c.values()
    assert vals == [idx2crd(i, L.shape) for i in range(cute_py.size(L))]
    # partitioning coordinates and data the same way agrees
    t = make_tensor(np.arange(cute_py.size(L)), L)
    for i in range(cute_py.size(L)):
        assert t(c(i)) == t(i)


@settings(max_examples=60, deadline=None)
@given(compact_layouts().flatmap(lambda L: st.tuples(st.just(L), divisor_tilers(L))))
def test_divides_on_tensors_keep_the_engine_and_the_elements(LT):
    L, T = LT
    data = np.arange(cute_py.size(L)) + 100
    t = make_tensor(data, L, offset=0)
    for op in (logical_divide, zipped_divide, tiled_divide, flat_divide, composition):
        try:
            want = op(L, T)
        except LayoutError:
            with pytest.raises(LayoutError):                   # rejected for tensors alike
                op(t, T)
            continue
        r = op(t, T)
        assert isinstance(r, Tensor) and r.engine is t.engine and r.offset == t.offset
        assert r.layout == want
        assert r.values().tolist() == [data[o] for o in called_values(want)]
        if op is not composition:
            assert sorted(r.values().tolist()) == sorted(data.tolist())  # a divisor tiler permutes


@settings(max_examples=60, deadline=None)
@given(compact_layouts())
def test_layout_only_operations_on_tensors(L):
    data = np.arange(cute_py.size(L))
    t = make_tensor(data, L)
    assert coalesce(t).values().tolist() == t.values().tolist()
    assert flatten(t).values().tolist() == t.values().tolist()
    assert set(filter(t).values().tolist()) == set(t.values().tolist())
    assert coalesce(t).layout == coalesce(L) and filter(t).layout == filter(L)
    assert cute_py.filter_zeros(t).layout == cute_py.filter_zeros(L)
    r = cute_py.rank(L)
    assert group(t, 0, r).layout == group(L, 0, r)
    assert take(t, 0, 1).layout == take(L, 0, 1)
    assert select(t, *reversed(range(r))).layout == select(L, *reversed(range(r)))
    assert get(t, 0).layout == get(L, 0)
    assert max_common_vector(t, t) == max_common_vector(L, L)
    assert max_common_layout(t, t) == max_common_layout(L, L)


def test_domain_offset_shifts_the_tensor():
    a = np.arange(32)
    t = make_tensor(a, (4, 8))
    s = domain_offset((1, 2), t)
    assert s.layout == t.layout and s.offset == 9
    assert s(0, 0) == t(1, 2) and s(2, 3) == t(3, 5)
    c = domain_offset((1, 2), make_identity_tensor((4, 8)))
    assert c(0, 0) == (1, 2) and c(2, 3) == (3, 5)


def test_max_common_needs_same_type_data_tensors():
    L = Layout((8, 8))
    a, b = make_tensor(np.zeros(64, np.float32), L), make_tensor(np.zeros(64, np.float16), L)
    assert max_common_vector(a, a) == 64
    assert max_common_vector(a, b) == 0 and max_common_layout(a, b) == Layout(1, 0)
    assert max_common_vector(a, make_identity_tensor((8, 8))) == 0
    with pytest.raises(TypeError):
        max_common_vector(a, L)


def test_slicing_and_swizzled_tensors():
    data = np.arange(16) * 2
    L = composition(Swizzle(2, 0, 2), Layout((4, 4), (4, 1)))
    t = make_tensor(data, L)
    for i, j in itertools.product(range(4), range(4)):
        assert t(i, j) == data[L(i, j)]
    for i in range(4):
        row = t(i, _)
        assert isinstance(row.layout, ComposedLayout) and row.offset == 0   # the offset folds in
        assert row.values().tolist() == [t(i, j) for j in range(4)]
    col = make_tensor(data, (4, 4))(_, 2)
    assert col.offset == 8 and col.values().tolist() == data[8:12].tolist()


def test_compose_tile_with_layout():
    t = make_tensor(np.arange(32), (4, 8))
    assert t.compose(Layout(4, 2)).layout == composition(t.layout, Layout(4, 2))
    assert t.compose(2, 4).layout == composition(t.layout, (2, 4))
    assert t.tile(2, 4).layout == tiled_divide(t.layout, (2, 4))
    v = t.with_layout(Layout(8, 4))
    assert v.values().tolist() == list(range(0, 32, 4)) and v.engine is t.engine
    with pytest.raises(TypeError):
        t.with_layout((8,))


# ---------------------------------------------------------------------------
# partitioning


TILINGS = [((8, 12), (4, 3)), ((16, 32), (4, 8)), ((6, 6), (6, 2)), ((8, 8), (1, 8))]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape, tile", TILINGS)
def test_local_tile_covers_every_element_once_and_matches_numpy(shape, tile, order):
    a = np.arange(shape[0] * shape[1]).reshape(shape, order=order)
    t = make_tensor(a)
    M, N = shape[0] // tile[0], shape[1] // tile[1]
    seen = np.zeros(a.size, dtype=int)
    for m, n in itertools.product(range(M), range(N)):
        g = local_tile(t, tile, (m, n))
        assert g.shape == tile
        want = a[m * tile[0]:(m + 1) * tile[0], n * tile[1]:(n + 1) * tile[1]]
        assert np.array_equal(g.to_numpy(), want)
        seen[g._indices()] += 1
        # an int coordinate is a 1-D (colex) index into the rest modes
        assert np.array_equal(local_tile(t, tile, m + M * n).to_numpy(), want)
    assert (seen == 1).all()


def test_local_tile_keeps_extra_modes_and_takes_underscore():
    a = np.arange(8 * 6 * 3).reshape(8, 6, 3)
    t = make_tensor(a)
    g = local_tile(t, (4, 3), (1, 1))
    assert g.shape == (4, 3, 3)
    assert np.array_equal(g.to_numpy(), a[4:8, 3:6, :])
    g2 = local_tile(t, (4, 3), (1, _))
    assert g2.shape == (4, 3, 2, 3)
    for n in range(2):
        assert np.array_equal(g2.to_numpy()[:, :, n, :], a[4:8, 3 * n:3 * n + 3, :])
    with pytest.raises(RankError):
        local_tile(t, (4, 3), (0, 0, 0, 0))


def test_local_tile_with_projection_is_cute_step():
    M, N, K = 8, 12, 6
    bm, bn, bk = 4, 6, 2
    A, B = np.arange(M * K).reshape(M, K), np.arange(N * K).reshape(N, K)
    C = np.arange(M * N).reshape(M, N)
    tA, tB, tC = make_tensor(A), make_tensor(B), make_tensor(C)
    tiler = (bm, bn, bk)
    for m, n in itertools.product(range(M // bm), range(N // bn)):
        coord = (m, n, _)
        gA = local_tile(tA, tiler, coord, proj=(1, None, 1))
        gB = local_tile(tB, tiler, coord, proj=(None, 1, 1))
        gC = local_tile(tC, tiler, coord, proj=(1, 1, None))
        assert gA.shape == (bm, bk, K // bk) and gB.shape == (bn, bk, K // bk) and gC.shape == (bm, bn)
        for k in range(K // bk):
            assert np.array_equal(gA.to_numpy()[:, :, k], A[m * bm:(m + 1) * bm, k * bk:(k + 1) * bk])
            assert np.array_equal(gB.to_numpy()[:, :, k], B[n * bn:(n + 1) * bn, k * bk:(k + 1) * bk])
        assert np.array_equal(gC.to_numpy(), C[m * bm:(m + 1) * bm, n * bn:(n + 1) * bn])
    # `_` is accepted for X as well
    assert local_tile(tA, tiler, (0, 0, _), proj=(1, _, 1)).layout == \
        local_tile(tA, tiler, (0, 0, _), proj=(1, None, 1)).layout
    with pytest.raises(TypeError):
        local_tile(tA, tiler, (0, 0, _), proj=(1, "x", 1))


@pytest.mark.parametrize("thr", [Layout((4, 8)), Layout((4, 8), (8, 1)), Layout((2, 16)), Layout((16, 2), (2, 1))])
def test_local_partition_covers_the_tensor_once_and_matches_numpy(thr):
    a = np.arange(16 * 32).reshape(16, 32)
    t = make_tensor(a)
    tm, tn = product_each(thr.shape)
    seen = np.zeros(a.size, dtype=int)
    for tid in range(cute_py.size(thr)):
        p = local_partition(t, thr, tid)
        i, j = thr.get_flat_coord(tid)
        assert np.array_equal(p.to_numpy(), a[i::tm, j::tn])
        seen[p._indices()] += 1
    assert (seen == 1).all()


def test_identity_partition_of_thread_zero_by_hand():
    """thr (4,8) col-major over (16,32): thread 0 holds rows 0,4,8,12 and columns 0,8,16,24."""
    c = make_identity_tensor((16, 32))
    p = local_partition(c, Layout((4, 8)), 0)
    assert p.shape == (4, 4)
    expected = [(4 * i, 8 * j) for j in range(4) for i in range(4)]   # colex: i fastest
    assert p.values() == expected
    assert p(1, 2) == (4, 16)
    # thread 5 sits at (1,1) of the 4x8 thread grid
    p5 = local_partition(c, Layout((4, 8)), 5)
    assert p5.values() == [(1 + 4 * i, 1 + 8 * j) for j in range(4) for i in range(4)]
    assert _printed(p).splitlines()[:2] == ["ArithTuple(0,0) o (4,4):(4@0,8@1):", "  (0,0)  (0,8)  (0,16)  (0,24)"]


@pytest.mark.parametrize("order", ["C", "F"])
def test_identity_partitions_name_the_data_partitions_coordinates(order):
    a = np.arange(16 * 32).reshape(16, 32, order=order)
    t, c = make_tensor(a), make_identity_tensor((16, 32))
    thr = Layout((4, 8), (8, 1))
    for tid in range(32):
        pd, pc = local_partition(t, thr, tid), local_partition(c, thr, tid)
        assert pd.values().tolist() == [a[i, j] for i, j in pc.values()]
    for m, n in itertools.product(range(4), range(4)):
        gd, gc = local_tile(t, (4, 8), (m, n)), local_tile(c, (4, 8), (m, n))
        assert gd.values().tolist() == [a[i, j] for i, j in gc.values()]
        # and partitions of partitions
        pd, pc = local_partition(gd, Layout((2, 4)), 5), local_partition(gc, Layout((2, 4)), 5)
        assert pd.values().tolist() == [a[i, j] for i, j in pc.values()]


def test_local_partition_with_projection():
    """CuTe's example: thr (2,16,1):(16,1,0) with Step<_1,X,_1> partitions A (M,K) by rows only."""
    A = np.arange(8 * 6).reshape(8, 6)
    tA = make_tensor(A)
    thr = Layout((2, 16, 1), (16, 1, 0))
    for tid in range(32):
        p = local_partition(tA, thr, tid, proj=(1, None, 1))
        assert p.shape == (4, 6)
        assert np.array_equal(p.to_numpy(), A[tid // 16::2, :])


def test_inner_and_outer_partition():
    a = np.arange(8 * 6).reshape(8, 6)
    t = make_tensor(a)
    assert np.array_equal(inner_partition(t, (4, 3), (1, 0)).to_numpy(), a[4:8, 0:3])
    o = outer_partition(t, (4, 3), (1, 2))
    assert np.array_equal(o.to_numpy(), a[1::4, 2::3])
    assert np.array_equal(outer_partition(t, (4, 3), 1 + 4 * 2).to_numpy(), a[1::4, 2::3])  # 1-D tile coord
    # a layout tiler divides the tensor as a 1-D layout
    flat = make_tensor(np.arange(24), 24)
    assert outer_partition(flat, Layout(4, 6), 1).values().tolist() == [6, 7, 8, 9, 10, 11]
    assert inner_partition(flat, Layout(4, 6), 1).values().tolist() == [1, 7, 13, 19]
    with pytest.raises(RankError):
        outer_partition(t, (4, 3), (0, 0, 0))
    with pytest.raises(TypeError):
        inner_partition(Layout((8, 6)), (4, 3), (0, 0))
    with pytest.raises(TypeError):
        local_partition(t, (4, 8), 0)
    with pytest.raises(TypeError):
        local_partition(t, Layout((4, 8)), 1.5)
    # a thread index past the thread layout is refused (CuTe's get_flat_coord would wrap it to thread 0)
    with pytest.raises(CoordinateError):
        local_partition(t, Layout((4, 3)), 12)


def test_local_partition_refuses_thread_indices_outside_the_thread_layout():
    """Issue 14: local_partition(t, thr_layout, 99) on 6 threads returned thread 3's share (99 % 6 ... wrapped)."""
    t = make_tensor(np.arange(12), (2, 6))
    thr = Layout((2, 3))
    shares = [local_partition(t, thr, i).values().tolist() for i in range(6)]
    assert sorted(v for s in shares for v in s) == list(range(12))     # the 6 threads cover t once
    for bad in (6, 99, -1, -7):
        with pytest.raises(CoordinateError, match=rf"local_partition: thread index out of range: thr_idx = {bad} "
                                                  r"is not in \[0, 6\)"):
            local_partition(t, thr, bad)
    # with a projection, the index is still a thread of the whole thread layout
    with pytest.raises(CoordinateError, match=r"not in \[0, 32\)"):
        local_partition(make_tensor(np.arange(48), (8, 6)), Layout((2, 16, 1), (16, 1, 0)), 32, proj=(1, None, 1))


def test_rank1_tensors_and_int_tilers():
    t = make_tensor(np.arange(16), 16)
    assert local_tile(t, 4, 2).values().tolist() == [8, 9, 10, 11]
    assert local_tile(t, (4,), (2,)).values().tolist() == [8, 9, 10, 11]
    assert local_partition(t, Layout(4), 1).values().tolist() == [1, 5, 9, 13]


# ---------------------------------------------------------------------------
# builders


def test_make_tensor_like_and_fragment_like():
    a = np.arange(24, dtype=np.float32)
    t = make_tensor(a, Layout((4, 3), (6, 1)))
    n = make_tensor_like(t)
    assert n.layout == cute_py.make_layout_like(t.layout) and n.dtype is t.dtype
    assert n.engine.dtype == np.float32 and not n.engine.any() and n.engine is not a
    assert make_tensor_like(t, "f16").engine.dtype == np.float16
    f = cute_py.make_fragment_like(t)
    assert f.layout == cute_py.make_fragment_like(t.layout) and f.dtype is t.dtype and not f.engine.any()
    assert cute_py.make_fragment_like(Layout((4, 2)), "bf16").engine.dtype == np.uint16
    assert cute_py.make_fragment_like(Layout((4, 2))) == cute_py.make_fragment_like(Layout((4, 2)))
    sw = make_tensor(np.zeros(512, np.float16), composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    assert make_tensor_like(sw).layout == Layout((8, 64), (64, 1))
    c = make_identity_tensor((4, 4))
    with pytest.raises(TypeError):
        make_tensor_like(c)
    assert make_tensor_like(c, "s32").layout == Layout((4, 4))      # coordinates have no stride order
    assert cute_py.make_fragment_like(c, "f32").layout == cute_py.make_fragment_like(Layout((4, 4)))
    with pytest.raises(TypeError):
        make_tensor_like(Layout(4))
    with pytest.raises(TypeError):
        make_tensor_like((4, 4), "f32")
    with pytest.raises(TypeError):
        make_tensor_like(Layout(4), "s4")                      # no numpy storage


def test_identity_tensor_is_read_only_and_nested():
    c = make_identity_tensor((4, (2, 3)))
    assert c(5) == (1, (1, 0)) and c(1, (1, 2)) == (1, (1, 2))
    assert c(_, (1, _)).values() == [(i, (1, k)) for k in range(3) for i in range(4)]
    with pytest.raises(TypeError):
        c[0, 0] = 1
    obj = c.to_numpy()
    assert obj.shape == (4, 6) and obj[1, 3] == (1, (1, 1))


# ---------------------------------------------------------------------------
# recast


def test_recast_is_a_view_with_the_recast_layout():
    a = np.arange(16, dtype=np.float16)
    t = make_tensor(a, Layout((4, 4), (4, 1)))
    r = recast(t, "f32")
    assert r.layout == cute_py.recast_layout(t.layout, "f16", "f32") and r.dtype is cute_py.dtypes.f32
    assert np.shares_memory(r.engine, a)
    assert np.array_equal(r.to_numpy(), a.view(np.float32).reshape(4, 2))
    r[0, 0] = 0.0
    assert a[0] == 0 and a[1] == 0
    back = recast(r, np.float16)
    assert back.layout == t.layout and np.array_equal(back.values(), t.values())
    u8 = recast(t, "u8")
    assert u8.layout == Layout((4, 8), (8, 1)) and u8.engine.dtype == np.uint8


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([2, 4, 8]), st.sampled_from([2, 4, 6]), st.integers(0, 3))
def test_recast_matches_numpy_view(m, n, row):
    a = np.arange(m * n, dtype=np.uint16).reshape(m, n)
    t = make_tensor(a)(row % m, _) if row else make_tensor(a)
    r = recast(t, "u32")
    want = a.view(np.uint32)
    want = want[row % m] if row else want
    assert np.array_equal(r.to_numpy(), want)
    assert np.shares_memory(r.engine, a)


def test_recast_errors_and_bf16():
    a = np.arange(8, dtype=np.float16)
    with pytest.raises(DivisibilityError):
        recast(make_tensor(a, 4, offset=1), "f32")              # offset 1 half is not a whole float
    assert recast(make_tensor(a, 4, offset=2), "f32").offset == 1
    with pytest.raises(LayoutError):
        recast(make_tensor(a, Layout(4, -1), offset=3), "f32")
    with pytest.raises(TypeError):
        recast(make_identity_tensor(4), "f32")
    with pytest.raises(TypeError):
        recast(make_tensor(a, 8), "nope")
    with pytest.raises(TypeError):
        recast(make_tensor(a, 8), "s4")
    f = make_tensor(np.array([1.0, -2.5, 3.0], dtype=np.float32), 3)
    b = recast(f, "bf16")
    assert b.dtype is cute_py.dtypes.bf16 and b.engine.dtype == np.uint16 and b.layout == Layout(6, 1)
    top = make_tensor(b.engine, Layout(3, 2), offset=1, dtype="bf16")   # little-endian: odd halves are the top
    assert cute_py.dtypes.bf16.decode(top.values()).tolist() == [1.0, -2.5, 3.0]
    assert _printed(top).splitlines() == ["tensor<bf16>[6]+1 o 3:2:", "    1.00", "   -2.50", "    3.00"]


# ---------------------------------------------------------------------------
# print_tensor


def test_print_tensor_rank1_and_rank2_int():
    t = make_tensor(np.arange(6, dtype=np.int32), (2, 3))
    assert _printed(t) == "tensor<s32>[6] o (2,3):(1,2):\n    0    2    4\n    1    3    5\n"
    assert _printed(t(1, _)) == "tensor<s32>[6]+1 o (3):(2):\n    1\n    3\n    5\n"


def test_print_tensor_float_widths():
    assert _printed(make_tensor(np.array([1.5], np.float32), 1)).splitlines()[1] == "  1.50e+00"
    assert _printed(make_tensor(np.array([1.5], np.float64), 1)).splitlines()[1] == "  1.500e+00"
    assert _printed(make_tensor(np.array([1.5], np.float16), 1)).splitlines()[1] == "    1.50"
    assert _printed(make_tensor(np.array([0x3FC0], np.uint16), 1, dtype="bf16")).splitlines()[1] == "    1.50"
    assert _printed(make_tensor(np.array([True]), 1)).splitlines()[1] == "  1"


def test_print_tensor_rank3_and_rank4_as_slices():
    t = make_tensor(np.arange(12, dtype=np.int32), (2, 3, 2))
    out = _printed(t).splitlines()
    assert out == ["tensor<s32>[12] o (2,3,2):(1,2,6):", "    0    2    4", "    1    3    5",
                   "-" * 15, "    6    8   10", "    7    9   11"]
    t4 = make_tensor(np.arange(16, dtype=np.int32), (2, 2, 2, 2))
    out = _printed(t4).splitlines()
    assert out[0] == "tensor<s32>[16] o (2,2,2,2):(1,2,4,8):"
    assert out[1:] == ["    0    2", "    1    3", "-" * 10, "    4    6", "    5    7", "=" * 10,
                       "    8   10", "    9   11", "-" * 10, "   12   14", "   13   15"]


def test_print_tensor_nested_shapes_print_as_rank2():
    t = make_tensor(np.arange(8, dtype=np.int32), Layout((2, (2, 2))))
    assert _printed(t).splitlines()[1:] == ["    0    2    4    6", "    1    3    5    7"]


# ---------------------------------------------------------------------------
# the guide


def test_tensor_guide_examples_run():
    """Every ``>>>`` example in docs/guide/tensors.md gives the output the guide shows."""
    import doctest
    import pathlib
    import re

    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "guide" / "tensors.md").read_text()
    src = "\n\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    test = doctest.DocTestParser().get_doctest(src, {}, "tensors.md", "docs/guide/tensors.md", 0)
    assert len(test.examples) >= 20
    out = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
