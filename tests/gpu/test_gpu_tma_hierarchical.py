"""TMA from a hierarchical gmem layout whose parts are not contiguous in gmem (issue 16), on the GPU.

A torch tensor is permuted so that the (MN, K) matrix it stands for is no
strided 2-D tensor: its MN (or K) mode walks several tensor dims in another
order. That matrix's layout over the tensor's storage is hierarchical, read
off the permuted tensor's own strides; ``make_tma_params`` turns each part
into a TMA dim (3-D and 5-D tensor maps here), ``TmaParams.tma_coords`` splits
the tile coordinates over them, and the tile that lands in shared memory must
equal torch's own ``permute(...).reshape(MN, K)`` of the tensor, element for
element, at cute_py's smem offsets.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import cases
from cute_py import Layout
from cute_py import runtime as rt
from cute_py.interop import layout_of

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")


def hierarchical_layout(permuted, mn_dims: int) -> Layout:
    """The (MN, K) layout of ``permuted.reshape(MN, K)`` over the storage: the first ``mn_dims`` dims (outer to
    inner) are MN's parts, the rest K's; parts go innermost first, as CuTe's colexicographic coordinates do."""
    lay = layout_of(permuted)
    shape, stride = lay.shape, lay.stride

    def mode(lo, hi):
        s, d = tuple(reversed(shape[lo:hi])), tuple(reversed(stride[lo:hi]))
        return (s, d) if len(s) > 1 else (s[0], d[0])

    (ms, md), (ks, kd) = mode(0, mn_dims), mode(mn_dims, len(shape))
    return Layout((ms, ks), (md, kd))


@pytest.mark.parametrize("name", sorted(cases.HIER_CASES))
def test_tma_hierarchical_gmem(name):
    case = cases.hier_tma_case(name)
    values = case.gmem_values(seed=zlib.crc32(case.id.encode()))          # bf16 bits, C order
    base = torch.from_numpy(values.view(np.int16)).cuda().view(torch.bfloat16)
    permuted = base.permute(*case.extra["axes"])
    mn_dims = len(case.gmem.shape[0]) if isinstance(case.gmem.shape[0], tuple) else 1
    assert hierarchical_layout(permuted, mn_dims) == case.gmem           # the layout is the torch view's own
    tmap = rt.tensor_map(base, case.params)
    assert tmap.args["globalDim"] == case.params.global_dim and tmap.args["tensorRank"] == case.params.rank
    kernel = rt.compile(case.source).kernel(case.kernel)
    coords = torch.tensor([c for _, cs in case.copies for c in cs], dtype=torch.int32, device="cuda")
    out = torch.zeros(case.tile_bytes // 4, dtype=torch.int32, device="cuda")
    status = torch.zeros(1, dtype=torch.int32, device="cuda")
    rt.launch(kernel, grid=1, block=128, smem=case.dyn_smem, args=(tmap, coords, out, status))
    rt.synchronize()
    assert int(status[0]) == 1, f"{case.id}: the mbarrier never completed (TMA did not land)"
    got = out.view(torch.bfloat16)
    # torch's own matrix: the tile (i, j) of permuted.reshape(MN, K), placed at cute_py's smem offsets
    (mn, k), (i, j) = case.tile, case.tile_coord
    tile = permuted.reshape(case.extra["matrix"])[i * mn:(i + 1) * mn, j * k:(j + 1) * k]
    offs = torch.from_numpy(cases.smem_offsets(case.smem, mn, k)).cuda()
    want = torch.zeros(mn * k, dtype=torch.bfloat16, device="cuda")
    want[offs.reshape(-1)] = tile.reshape(-1)
    bad = (got.view(torch.int16) != want.view(torch.int16)).nonzero().flatten()
    assert bad.numel() == 0, (f"{case.id}: {bad.numel()} of {want.numel()} smem elements differ from torch's "
                              f"matrix at cute_py's offsets (box {case.params.box_dim}, first at {bad[:4].tolist()})")
