"""The runtime on a real GPU: primary context shared with torch/cupy, array interop (bf16 included),
argument packing through an actual launch, dynamic smem above 48 KB, error paths."""

from __future__ import annotations

import numpy as np
import pytest

from cute_py.interop import layout_of

from cute_py import runtime as rt

pytestmark = pytest.mark.gpu

SCALE = r"""
extern "C" __global__ void scale(float* x, float s, int n, unsigned long long tag, unsigned long long* tag_out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
  if (i == 0) tag_out[0] = tag;
}
"""

BIG_SMEM = r"""
extern "C" __global__ void __launch_bounds__(256, 1) big_smem(unsigned int* out, int words) {
  extern __shared__ unsigned int buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = 2654435761u * (unsigned)i;
  __syncthreads();
  for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = buf[words - 1 - i];
}
"""


def test_device_is_hopper():
    d = rt.device()
    assert d.compute_capability == (9, 0) and d.arch == "sm_90a"
    assert d.max_smem_optin >= 227 * 1024
    assert rt.device() is d


def test_primary_context_is_shared_with_torch():
    torch = pytest.importorskip("torch")
    from cuda.bindings import driver

    torch.zeros(1, device="cuda")                       # torch initializes its context
    err, torch_ctx = driver.cuCtxGetCurrent()
    assert int(err) == 0
    assert int(torch_ctx) == int(rt.device().context)


def test_scale_kernel_on_torch_and_cupy():
    kernel = rt.compile(SCALE).kernel("scale")
    for lib in ("torch", "cupy"):
        mod = pytest.importorskip(lib)
        if lib == "torch":
            x = mod.arange(1000, dtype=mod.float32, device="cuda")
            tag = mod.zeros(1, dtype=mod.int64, device="cuda")
        else:
            x = mod.arange(1000, dtype=mod.float32)
            tag = mod.zeros(1, dtype=mod.uint64)
        rt.launch(kernel, grid=4, block=256, args=(x, np.float32(2.5), np.int32(1000),
                                                    np.uint64(0xDEADBEEF12345678), tag))
        rt.synchronize()
        host = x.cpu().numpy() if lib == "torch" else mod.asnumpy(x)
        np.testing.assert_array_equal(host, np.arange(1000, dtype=np.float32) * np.float32(2.5))
        t = (tag.cpu().numpy() if lib == "torch" else mod.asnumpy(tag)).view(np.uint64)[0]
        assert t == 0xDEADBEEF12345678


def test_torch_bf16_and_views():
    torch = pytest.importorskip("torch")
    x = torch.zeros((64, 32), dtype=torch.bfloat16, device="cuda")
    a = rt.as_device_array(x)
    assert a.dtype.name == "bf16" and a.ptr == x.data_ptr() and a.strides == (32, 1)
    assert str(layout_of(x.t())) == "(32,64):(1,32)"
    with pytest.raises(rt.ArrayError, match="CPU"):
        rt.as_device_array(torch.zeros(4))
    f8 = getattr(torch, "float8_e4m3fn", None)
    if f8 is not None:
        assert rt.as_device_array(torch.zeros(16, device="cuda").to(f8)).dtype.name == "e4m3"


def test_cupy_array():
    cupy = pytest.importorskip("cupy")
    x = cupy.zeros((8, 16), dtype=cupy.float16)[:, ::2]
    a = rt.as_device_array(x)
    assert a.dtype.name == "f16" and a.strides == (16, 2) and a.ptr == x.data.ptr


def test_dynamic_smem_above_48k(mem):
    prog = rt.compile(BIG_SMEM)
    kernel = prog.kernel("big_smem")
    words = 200 * 1024 // 4
    out = mem.zeros(words)
    rt.launch(kernel, grid=1, block=256, smem=words * 4, args=(out, np.int32(words)))
    rt.synchronize()
    assert kernel.max_dynamic_smem == words * 4
    got = mem.to_host(out, np.uint32)
    want = (np.uint32(2654435761) * np.arange(words, dtype=np.uint32))[::-1]
    np.testing.assert_array_equal(got, want)


def test_unknown_kernel_and_bad_launch():
    prog = rt.compile(SCALE)
    with pytest.raises(KeyError, match="scale"):
        prog.kernel("scal")
    k = prog.kernel("scale")
    with pytest.raises(rt.LaunchError, match="divisible"):
        rt.launch(k, grid=3, block=32, cluster=2, args=())
    with pytest.raises(rt.PackError):
        rt.launch(k, grid=1, block=32, args=(1.0,))


def test_tensor_map_words_deterministic(mem):
    from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem

    x = mem.to_device(np.zeros((256, 128), dtype=np.uint16))
    a = rt.as_device_array(x, dtype="bf16")
    p = make_tma_params(layout_of(a), tile_smem(smem_atom("K", 128, "bf16"), 64, 64), "bf16")
    t1, t2 = rt.tensor_map(a, p), rt.tensor_map(a, p)
    assert t1.words == t2.words and any(t1.words)
