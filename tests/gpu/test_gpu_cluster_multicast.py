"""A cluster launch with TMA multicast: each CTA issues one slice of the box (make_tma_params(multicast=n))
to every CTA of its cluster; every CTA must end up with the whole tile, placed as cute_py's smem layout says."""

from __future__ import annotations

import numpy as np
import pytest

import cases
from cute_py import runtime as rt
from test_gpu_tma_roundtrip import describe_mismatch

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("cluster", (2, 4))
def test_cluster_multicast(cluster, mem):
    case = cases.multicast_case(cluster)
    values = case.gmem_values(seed=cluster)
    arr = rt.as_device_array(mem.to_device(values), dtype=case.dtype)
    tmap = rt.tensor_map(arr, case.params)
    assert tmap.args["boxDim"] == case.params.box_dim != case.params.full_box_dim
    kernel = rt.compile(case.source).kernel(case.kernel)
    per_cluster = case.extra["per_cluster"]
    coords = mem.to_device(np.array([c for copies in per_cluster for _, cs in copies for c in cs], dtype=np.int32))
    out = mem.zeros(case.grid * case.tile_bytes // 4)
    status = mem.zeros(case.grid)
    rt.launch(kernel, grid=(case.grid, 1, 1), block=128, smem=case.dyn_smem, cluster=(cluster, 1, 1),
              args=(tmap, coords, out, status))
    rt.synchronize()
    st = mem.to_host(status, np.uint32)
    for blk in range(case.grid):
        assert st[blk] & 0xFF == 1, f"CTA {blk}: the mbarrier never completed (status {st[blk]:#x})"
        assert (st[blk] >> 8) & 0xFF == blk % cluster, f"CTA {blk}: %cluster_ctarank is {(st[blk] >> 8) & 0xFF}"
        assert st[blk] >> 16 == blk // cluster, f"CTA {blk}: %clusterid.x is {st[blk] >> 16}"
    got = mem.to_host(out, np.uint32).view(values.dtype).reshape(case.grid, -1)
    for blk in range(case.grid):
        c = blk // cluster
        want = case.expected_image(values, tile_coord=(c, 1))
        assert np.array_equal(got[blk], want), f"CTA {blk} (cluster {c}, rank {blk % cluster}): " + \
            describe_mismatch(case, values, got[blk], want)
