"""Host tensors over a partial tile (issue 33): a view derived from a tensor never returns an element from outside
the data's shape; predication with an identity tensor and elem_less reads the rest."""

from __future__ import annotations

import numpy as np
import pytest

from cute_py import (
    CoordinateError, Layout, _, atoms, local_partition, local_tile, make_identity_tensor, make_tensor,
    make_tiled_mma, size, zipped_divide,
)
from cute_py.int_tuple import elem_less

A = np.arange(100 * 100).reshape(100, 100)


def partition_c(t):
    mma = make_tiled_mma(atoms.get("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))
    return mma.get_slice(0).partition_C(t)


def test_the_issue_partition_refuses_the_element_past_the_data():
    p = partition_c(make_tensor(A))
    with pytest.raises(CoordinateError, match=r"coordinate \(8, 121\), outside its shape \(100,100\)"):
        p(63)                                           # was a[9, 21], silently
    with pytest.raises(CoordinateError, match="outside its shape"):
        p.values()
    with pytest.raises(CoordinateError, match="outside its shape"):
        p[63] = 0


def test_predication_reads_every_element_inside():
    p, cp = partition_c(make_tensor(A)), partition_c(make_identity_tensor(A.shape))
    inside = [i for i in range(size(p)) if elem_less(cp(i), A.shape)]
    assert 0 < len(inside) < size(p)
    assert [int(p(i)) for i in inside] == [int(A[cp(i)]) for i in inside]


def test_a_partition_keeps_the_dtype():
    p = partition_c(make_tensor(A.astype(np.float32)))
    assert p.dtype is not None and p.dtype.name == "f32"


@pytest.mark.parametrize("coord", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_local_tile_over_a_partial_matrix(coord):
    t = make_tensor(np.arange(10 * 12).reshape(10, 12))
    g = local_tile(t, (8, 8), coord)
    c = local_tile(make_identity_tensor((10, 12)), (8, 8), coord)
    if coord == (0, 0):
        assert g.to_numpy().tolist() == np.arange(10 * 12).reshape(10, 12)[:8, :8].tolist()
    else:
        with pytest.raises(CoordinateError, match="outside its shape"):
            g.to_numpy()
    for i in range(size(g)):
        if elem_less(c(i), (10, 12)):
            assert g(i) == t(c(i))
        else:
            with pytest.raises(CoordinateError):
                g(i)


def test_slices_and_thread_partitions_stay_checked():
    t = make_tensor(np.arange(6 * 6).reshape(6, 6))
    tiles = zipped_divide(t, (4, 4))
    assert tiles((3, 3), (0, 0)) == t(3, 3)
    with pytest.raises(CoordinateError, match=r"coordinate \(6, 0\)"):
        tiles(_, (1, 0))(2)                               # tile row 1 starts at row 4
    part = local_partition(local_tile(t, (4, 4), (1, 1)), Layout((2, 2)), 0)
    assert part(0) == t(4, 4)
    with pytest.raises(CoordinateError):
        part(1)                                           # (6, 4)


def test_make_tensor_takes_an_f2_layout():
    """The bounds check of make_tensor evaluates F2 strides (their contributions XOR): offsets 0..3 fit 4 elements,
    not 3."""
    import numpy as np

    from cute_py import F2, Layout, LayoutError, make_tensor

    t = make_tensor(np.arange(4), Layout((2, 2), (F2(1), F2(3))))
    assert [int(t(i)) for i in range(4)] == [0, 1, 3, 2]
    with pytest.raises(LayoutError, match="layout does not fit in the data"):
        make_tensor(np.arange(3), Layout((2, 2), (F2(1), F2(3))))
