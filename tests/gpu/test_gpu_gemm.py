"""cute_py.gemm on the GPU: exact results on small integers over ragged shapes, all four majors, both input types,
every epilogue option, on torch and on cupy arrays; randn accuracy against torch.matmul at 4096^3 and 8192^3; bad
inputs (a misaligned base pointer among them) raise before any launch.

Inputs are integers in [-3, 3]: every product and partial sum is exact in f32, so D must equal the float64
reference rounded once to D's type. Outputs are poisoned (NaN) and written through a padded view whose padding
must stay poisoned.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import cute_py
from cute_py.gemm import GemmInputError, pick_spec

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

TDT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
LAYOUTS = ("tn", "nn", "nt", "tt")     # BLAS naming: 't' = A K-major (row-major M x K) / B N-major (row-major K x N)


def operand(x64: np.ndarray, contiguous_dim: int, dtype: str):
    """A device copy of the 2-D float64 array with dimension ``contiguous_dim`` of stride 1."""
    t = torch.from_numpy(x64).to(TDT[dtype])
    if contiguous_dim == 1:
        return t.contiguous().cuda()
    return t.t().contiguous().cuda().t()


def make_ab(M, N, K, layout, dtype, rng):
    a = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    b = rng.integers(-3, 4, size=(K, N)).astype(np.float64)
    a_dev = operand(a, 1 if layout[0] == "t" else 0, dtype)        # t: K contiguous
    b_dev = operand(b, 1 if layout[1] == "t" else 0, dtype)        # t: N contiguous (B N-major); n: K contiguous
    return a, b, a_dev, b_dev


def poisoned_out(M, N, dtype, pad=8):
    buf = torch.full((M + 1, N + pad), float("nan"), dtype=TDT[dtype], device="cuda")
    return buf, buf[:M, :N]


def rounded(ref: np.ndarray, dtype: str) -> torch.Tensor:
    return torch.from_numpy(ref).to(TDT[dtype]).float()


def check_exact(got: torch.Tensor, ref: np.ndarray, dtype: str, what: str):
    want = rounded(ref, dtype)
    g = got.float().cpu()
    assert not torch.isnan(g).any(), f"{what}: {int(torch.isnan(g).sum())} elements never written"
    bad = (g != want).nonzero()
    assert bad.numel() == 0, (f"{what}: {bad.shape[0]} of {want.numel()} wrong; first (m, n) {bad[:5].tolist()} "
                              f"got {[float(g[tuple(x)]) for x in bad[:5]]} want {[float(want[tuple(x)]) for x in bad[:5]]}")


def aligned(x, need):
    return -(-x // 8) * 8 if need else x


def shapes_for(layout):
    """Ragged sizes, rounded up to a multiple of 8 only where a dimension is a TMA leading dimension."""
    k_lead = layout[0] == "t" or layout[1] == "n"        # some operand is K-major
    m_lead, n_lead = layout[0] == "n", layout[1] == "t"
    raw = [(1, 1, 1), (7, 129, 7), (127, 64, 127), (129, 1000, 64), (1000, 127, 129), (64, 7, 1000), (300, 520, 4095)]
    return [(aligned(M, m_lead), aligned(N, n_lead), aligned(K, k_lead)) for M, N, K in raw]


@pytest.mark.parametrize("dtype", ("bf16", "f16"))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_exact_sweep(layout, dtype):
    rng = np.random.default_rng(zlib.crc32(f"{layout}{dtype}".encode()))
    for M, N, K in shapes_for(layout):
        a, b, a_dev, b_dev = make_ab(M, N, K, layout, dtype, rng)
        buf, out = poisoned_out(M, N, dtype)
        cute_py.gemm(a_dev, b_dev, out=out)
        torch.cuda.synchronize()
        check_exact(out, a @ b, dtype, f"{layout} {dtype} M={M} N={N} K={K}")
        assert torch.isnan(buf[M:, :]).all() and torch.isnan(buf[:, N:]).all(), "wrote outside D"


@pytest.mark.parametrize("tile,consumers", [((128, 256, 64), 2), ((128, 128, 64), 1), ((64, 128, 64), 1)])
def test_exact_other_tiles(tile, consumers):
    rng = np.random.default_rng(7)
    for layout in ("tn", "nt"):
        M, N, K = 200, 264, 136
        a, b, a_dev, b_dev = make_ab(M, N, K, layout, "bf16", rng)
        spec = cute_py.emit.GemmSpec(a="(M,K):(K,1)" if layout[0] == "t" else "(M,K):(1,M)",
                                     b="(N,K):(K,1)" if layout[1] == "n" else "(N,K):(1,N)",
                                     tile=tile, consumers=consumers)
        buf, out = poisoned_out(M, N, "bf16")
        cute_py.gemm(a_dev, b_dev, out=out, spec=spec)
        torch.cuda.synchronize()
        check_exact(out, a @ b, "bf16", f"{spec.name} M={M} N={N} K={K}")


@pytest.mark.parametrize("case", ["alpha_beta", "bias_col", "bias_row", "relu", "f32_out", "f16_out", "col_major_out"])
def test_epilogue_exact(case):
    rng = np.random.default_rng(11)
    M, N, K = 257, 130, 72
    dtype = "f16" if case == "f16_out" else "bf16"
    out_t = "f32" if case == "f32_out" else dtype
    a, b, a_dev, b_dev = make_ab(M, N, K, "tn", dtype, rng)
    ref = a @ b
    kw = {}
    if case == "alpha_beta":
        c = rng.integers(-3, 4, size=(M, N)).astype(np.float64)
        kw = dict(c=operand(c, 1, out_t), alpha=2.0, beta=-1.0)
        ref = 2.0 * ref - c
    if case == "bias_col":
        bias = rng.integers(-3, 4, size=N).astype(np.float64)
        kw = dict(bias=torch.from_numpy(bias).to(TDT[out_t]).cuda())
        ref = ref + bias[None, :]
    if case == "bias_row":
        bias = rng.integers(-3, 4, size=M).astype(np.float64)
        kw = dict(bias=torch.from_numpy(bias).to(TDT[out_t]).cuda())
        ref = ref + bias[:, None]
    if case == "relu":
        kw = dict(activation="relu")
        ref = np.maximum(ref, 0)
    if case == "col_major_out":
        out = torch.full((N, M), float("nan"), dtype=TDT[out_t], device="cuda").t()
    else:
        _, out = poisoned_out(M, N, out_t)
    cute_py.gemm(a_dev, b_dev, out=out, **kw)
    torch.cuda.synchronize()
    check_exact(out, ref, out_t, case)


def test_gelu_close():
    rng = np.random.default_rng(5)
    M, N, K = 130, 200, 64
    a, b, a_dev, b_dev = make_ab(M, N, K, "tn", "bf16", rng)
    _, out = poisoned_out(M, N, "f32")
    cute_py.gemm(a_dev, b_dev, out=out, activation="gelu")
    torch.cuda.synchronize()
    want = torch.nn.functional.gelu(torch.from_numpy(a @ b))
    assert torch.allclose(out.cpu().double(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", (4096, 8192))
@pytest.mark.parametrize("layout", ("tn", "tt"))
def test_randn_vs_torch(n, layout):
    torch.manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    if layout == "tn":
        b = b.t().contiguous().t()
    d = cute_py.gemm(a, b)
    ref = torch.matmul(a.float(), b.float())
    err = (d.float() - ref).norm() / ref.norm()
    assert err < 1e-2, f"relative error {err:.3e}"


def _cupy_operand(cp, x64: np.ndarray, contiguous_dim: int, dtype: str):
    """A cupy device copy of the float64 array: float16, or bf16 as its raw 16-bit words (cupy has no bfloat16)."""
    if dtype == "f16":
        host = x64.astype(np.float16)
    else:   # small integers are exact in bf16: the upper half of the float32 bits
        host = (x64.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if contiguous_dim == 1:
        return cp.asarray(np.ascontiguousarray(host))
    return cp.asarray(np.ascontiguousarray(host.T)).T


def _cupy_to_f32(cp, x, dtype: str) -> torch.Tensor:
    h = cp.asnumpy(x)
    if dtype == "bf16":
        h = (h.astype(np.uint32) << 16).view(np.float32)
    return torch.from_numpy(h.astype(np.float32))


@pytest.mark.parametrize("dtype", ("bf16", "f16"))
@pytest.mark.parametrize("layout", ("tn", "nt"))
def test_cupy_arrays_exact(layout, dtype):
    """cute_py.gemm on cupy arrays (no torch in the call): the output is allocated by cupy and exact."""
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(zlib.crc32(f"cupy{layout}{dtype}".encode()))
    M, N, K = 304, 264, 200                                         # ragged; leading dimensions 16-byte multiples
    a = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    b = rng.integers(-3, 4, size=(K, N)).astype(np.float64)
    a_dev = _cupy_operand(cp, a, 1 if layout[0] == "t" else 0, dtype)
    b_dev = _cupy_operand(cp, b, 1 if layout[1] == "t" else 0, dtype)
    d = cute_py.gemm(a_dev, b_dev)
    cp.cuda.Device().synchronize()
    assert isinstance(d, cp.ndarray) and d.shape == (M, N)
    check_exact(_cupy_to_f32(cp, d, dtype), a @ b, dtype, f"cupy {layout} {dtype}")
    out = cp.full((M, N), np.nan, dtype=np.float32)                 # f32 output through out=
    spec = pick_spec(M, N, K, "K" if layout[0] == "t" else "MN", "MN" if layout[1] == "t" else "K", dtype, "f32")
    cute_py.gemm(a_dev, b_dev, out=out, spec=spec)
    cp.cuda.Device().synchronize()
    check_exact(torch.from_numpy(cp.asnumpy(out)), a @ b, "f32", f"cupy {layout} {dtype} -> f32")


def test_misaligned_base_is_staged():
    """A view one element past an aligned address breaks TMA's 16-byte base rule: copied to a staging buffer
    TMA can read (cute_py.emit.stage_copy), and exact."""
    flat = torch.arange(64 * 64 + 8, device="cuda").remainder(7).sub(3).to(torch.bfloat16)
    bad = flat[1:1 + 64 * 64].view(64, 64)                          # base 2 bytes past a 16-byte boundary
    good = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
    assert bad.data_ptr() % 16 == 2
    for a, b in ((bad, good), (good, bad.t())):                     # a misaligned; b K-major, misaligned
        _, out = poisoned_out(64, 64, "bf16")
        cute_py.gemm(a, b, out=out)
        torch.cuda.synchronize()
        check_exact(out, a.double().cpu().numpy() @ b.double().cpu().numpy(), "bf16", "2 bytes off")


def test_bad_inputs_raise_before_launch():
    a = torch.ones(64, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(GemmInputError, match="inner dimensions differ"):
        cute_py.gemm(a, torch.ones(32, 64, device="cuda", dtype=torch.bfloat16))
    with pytest.raises(GemmInputError, match="element type"):
        cute_py.gemm(a.float(), a.float())
    with pytest.raises(GemmInputError, match="one type"):
        cute_py.gemm(a, a.half())
    with pytest.raises(GemmInputError, match="not contiguous"):
        cute_py.gemm(torch.ones(64, 128, device="cuda", dtype=torch.bfloat16)[:, ::2], a)
    with pytest.raises(GemmInputError):
        cute_py.gemm(a.cpu(), a)
    with pytest.raises(GemmInputError, match="bias"):
        cute_py.gemm(a, a, bias=torch.ones(3, device="cuda", dtype=torch.bfloat16))


SCHEDULES = [
    dict(tile=(128, 256, 64), cluster=(2, 1)),
    dict(tile=(128, 256, 64), cluster=(1, 2)),
    dict(tile=(128, 128, 64), split_k=3),
    dict(tile=(128, 128, 64), split_k=4, cluster=(2, 1)),
    dict(tile=(256, 128, 64)),
    dict(tile=(128, 128, 64), persistent=False),
    dict(tile=(128, 128, 64), group=1),
    dict(tile=(128, 256, 64), group=16, epilogue="direct"),
    dict(tile=(128, 64, 64)),
    dict(tile=(128, 64, 64), split_k=2, group=32),
    dict(tile=(128, 128, 64), schedule="pingpong"),
    dict(tile=(128, 64, 64), schedule="pingpong", cluster=(1, 2)),
    dict(tile=(64, 128, 64), schedule="pingpong", epilogue="direct", group=1),
    dict(tile=(64, 64, 64), consumers=1, cluster=(2, 1)),
    dict(tile=(64, 64, 64), consumers=1, stages=12, split_k=2),
    dict(tile=(64, 64, 64), consumers=1),                       # pick_spec's small-M choices
    dict(tile=(64, 128, 64), consumers=1),
    dict(tile=(128, 128, 64), raster="n", group=4),             # raster order along N
    dict(tile=(128, 256, 64), raster="n", cluster=(1, 2), group=2),
    dict(tile=(128, 128, 64), scheduler="stream_k"),            # stream-K: whole tiles, then shared k-blocks
    dict(tile=(128, 256, 64), scheduler="stream_k", cluster=(2, 1)),
    dict(tile=(128, 128, 64), scheduler="stream_k", schedule="pingpong"),
    dict(tile=(64, 64, 64), consumers=1, scheduler="stream_k", epilogue="direct", raster="n"),
    dict(tile=(128, 64, 64), split_k=2, schedule="pingpong"),   # split-K with ping-pong consumers
    dict(tile=(128, 160, 64)),                                   # staged in chunks of 32 columns (64-byte rows)
    dict(tile=(128, 144, 64), epilogue="tma", group=4),         # chunks of 16 (32-byte rows)
    dict(tile=(64, 96, 64), consumers=1, split_k=2),
]


@pytest.mark.parametrize("kw", SCHEDULES, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
@pytest.mark.parametrize("layout", ("tn", "nt"))
def test_exact_schedules(kw, layout):
    """Clusters with multicast (odd tile counts leave a cluster half outside D), split-K (uneven splits, twice in a
    row: the workspace and counters must return to zero), stream-K (all tiles shared, and whole waves then shared
    ones), several tiles per persistent CTA, raster groups, the ping-pong schedule (warpgroups taking turns over a
    CTA's tiles) and one-warpgroup 64-row tiles."""
    rng = np.random.default_rng(zlib.crc32(repr(kw).encode() + layout.encode()))
    spec_kw = dict(a="(M,K):(K,1)" if layout[0] == "t" else "(M,K):(1,M)",
                   b="(N,K):(K,1)" if layout[1] == "n" else "(N,K):(1,N)", **kw)
    spec = cute_py.emit.GemmSpec(**spec_kw)
    for M, N, K in ((200, 264, 136), (1160, 2344, 648), (2056, 3080, 200)):
        a, b, a_dev, b_dev = make_ab(M, N, K, layout, "bf16", rng)
        for rep in range(2):
            buf, out = poisoned_out(M, N, "bf16")
            cute_py.gemm(a_dev, b_dev, out=out, spec=spec)
            torch.cuda.synchronize()
            check_exact(out, a @ b, "bf16", f"{spec.name} M={M} N={N} K={K} call {rep}")
            assert torch.isnan(buf[M:, :]).all() and torch.isnan(buf[:, N:]).all(), "wrote outside D"


def test_prepared_launch_reuse_and_new_outputs():
    """The per-problem prepared launch: the same arrays again, a new out (D pointer and TMA map swapped), out=None."""
    rng = np.random.default_rng(3)
    M, N, K = 384, 512, 256
    a, b, a_dev, b_dev = make_ab(M, N, K, "tn", "bf16", rng)
    outs = [poisoned_out(M, N, "bf16")[1] for _ in range(3)]
    for out in outs + outs[:1]:
        out.fill_(float("nan"))
        cute_py.gemm(a_dev, b_dev, out=out)
        torch.cuda.synchronize()
        check_exact(out, a @ b, "bf16", "reused launch")
    d1, d2 = cute_py.gemm(a_dev, b_dev), cute_py.gemm(a_dev, b_dev)
    torch.cuda.synchronize()
    assert d1.data_ptr() != d2.data_ptr()
    for d in (d1, d2):
        check_exact(d, a @ b, "bf16", "out=None")
    a_dev.copy_(torch.from_numpy(-a).to(torch.bfloat16))             # same address, new values
    out = outs[0]
    cute_py.gemm(a_dev, b_dev, out=out)
    torch.cuda.synchronize()
    check_exact(out, -a @ b, "bf16", "new values at the same address")


def test_tma_epilogue_needs_aligned_out():
    """A TMA-store spec refuses an out whose leading dimension is not a 16-byte multiple; the default picks direct."""
    rng = np.random.default_rng(9)
    M, N, K = 64, 60, 64
    a, b, a_dev, b_dev = make_ab(M, N, K, "tn", "bf16", rng)
    buf = torch.full((M, N + 1), float("nan"), dtype=torch.bfloat16, device="cuda")
    out = buf[:, :N]                                                  # ld 61 elements = 122 bytes
    with pytest.raises(GemmInputError, match="epilogue='direct'"):
        cute_py.gemm(a_dev, b_dev, out=out, spec=cute_py.emit.GemmSpec())
    cute_py.gemm(a_dev, b_dev, out=out)
    torch.cuda.synchronize()
    check_exact(out, a @ b, "bf16", "unaligned out, direct epilogue")


@pytest.mark.parametrize("M,N", [(0, 64), (64, 0), (0, 0)])
def test_empty_problems_return_empty_arrays(M, N):
    """M or N = 0: nothing launches; D is an empty array of the right shape and type (allocated, or out)."""
    a = torch.randn(M, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, N, device="cuda", dtype=torch.bfloat16)
    d = cute_py.gemm(a, b)
    assert tuple(d.shape) == (M, N) and d.dtype == torch.bfloat16
    out = torch.empty(M, N, device="cuda", dtype=torch.float32)
    assert cute_py.gemm(a, b, out=out) is out


def test_gemm_keeps_no_user_array_alive():
    """The caches key launches by addresses, never by the arrays: deleting them frees them."""
    import gc
    import weakref
    a = torch.randn(256, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 192, device="cuda", dtype=torch.bfloat16)
    c = torch.randn(256, 192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(256, 192, device="cuda", dtype=torch.bfloat16)
    cute_py.gemm(a, b, c, beta=1.0, out=out)
    torch.cuda.synchronize()
    refs = [weakref.ref(x) for x in (a, b, c, out)]
    del a, b, c, out
    gc.collect()
    assert [r() is None for r in refs] == [True] * 4
