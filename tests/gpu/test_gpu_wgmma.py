"""wgmma 64xNx16 (bf16 -> f32) with descriptors from cute_py.arch.sm90.make_gmma_desc over tile_smem tiles.

A and B are placed in shared memory through cute_py's smem layouts (host-built images copied verbatim),
the kernel runs K/16 wgmma instructions advancing the descriptors by k_block_step, and every thread
stores its accumulators through the GMMA C TV layout; the result must equal A @ B^T exactly
(small integers: exact in bf16 and f32).
"""

from __future__ import annotations

import numpy as np
import pytest

import cases
from cute_py import runtime as rt

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n", cases.WGMMA_NS)
@pytest.mark.parametrize("major", cases.MAJORS)
@pytest.mark.parametrize("swizzle", cases.SWIZZLES)
def test_wgmma(n, major, swizzle, mem):
    case = cases.wgmma_case(n, major, swizzle)
    a, b, a_img, b_img = case.inputs(seed=n + swizzle)
    prog = rt.compile(case.source)
    assert prog.spills[case.kernel] == 0
    kernel = prog.kernel(case.kernel)
    c_out = mem.zeros(64 * n, np.float32)
    rt.launch(kernel, grid=1, block=128, smem=case.dyn_smem,
              args=(mem.to_device(a_img), mem.to_device(b_img), mem.to_device(case.c_index), c_out,
                    np.uint64(case.desc_a.value), np.uint64(case.desc_b.value)))
    rt.synchronize()
    got = mem.to_host(c_out, np.float32).reshape(n, 64).T          # c_out[m + 64 n]
    want = a @ b.T
    bad = np.argwhere(got != want)
    assert bad.size == 0, (
        f"{case.id}: {len(bad)} of {want.size} accumulators wrong; first (m, n): {bad[:5].tolist()} "
        f"got {[float(got[tuple(x)]) for x in bad[:5]]} want {[float(want[tuple(x)]) for x in bad[:5]]}\n"
        f"A desc {case.desc_a}\nB desc {case.desc_b}")


def test_wgmma_detects_a_wrong_descriptor(mem):
    """Negative control: B's descriptor with the wrong layout type (B64 for a B128 tile) gives wrong results."""
    case = cases.wgmma_case(64, "K", 128)
    a, b, a_img, b_img = case.inputs(seed=3)
    kernel = rt.compile(case.source).kernel(case.kernel)
    wrong_b = case.desc_b.value & ~(3 << 62) | (2 << 62)          # layout type B64
    c_out = mem.zeros(64 * 64, np.float32)
    rt.launch(kernel, grid=1, block=128, smem=case.dyn_smem,
              args=(mem.to_device(a_img), mem.to_device(b_img), mem.to_device(case.c_index), c_out,
                    np.uint64(case.desc_a.value), np.uint64(wrong_b)))
    rt.synchronize()
    got = mem.to_host(c_out, np.float32).reshape(64, 64).T
    assert not np.array_equal(got, a @ b.T)
