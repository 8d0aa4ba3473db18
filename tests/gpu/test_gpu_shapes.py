"""Every shape cuBLAS takes, on the GPU: odd extents in all four majors, leading dimensions wider than the extent,
bases 2 bytes off, K = 0, M = 0 and N = 0, with every epilogue option; all exact on small integers.

Operands that TMA cannot read (a base or leading dimension that is not a multiple of 16 bytes) go through the
staging copy (:mod:`cute_py.emit.stage_copy`); D and C with such strides through the direct epilogue. References
are float64 on the GPU (the random shapes reach 4095 x 4095 x 4096): integers in [-3, 3] keep every f32 partial
sum exact, so D equals the reference rounded once to D's type.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import cute_py
from cute_py.problem import Problem
from cute_py.selection import select

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

TDT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
EXTENTS = (1, 7, 8, 64, 127, 128, 129, 200, 255, 256, 384, 1000, 1024, 2047, 4095)
KS = (8, 16, 64, 120, 128, 1000, 1024, 4096)
LAYOUTS = ("tn", "nn", "nt", "tt")     # BLAS naming: 't' = A K-major / B N-major


def ints(shape, gen, dtype="bf16"):
    """Integers in [-3, 3] on the GPU in ``dtype`` (float64 copies are exact)."""
    return torch.randint(-3, 4, shape, generator=gen, device="cuda").to(TDT[dtype])


def laid_out(x, contiguous_dim: int):
    """``x`` with dimension ``contiguous_dim`` of stride 1 (compact)."""
    return x.contiguous() if contiguous_dim == 1 else x.t().contiguous().t()


def check(got, want64, dtype: str, what: str):
    want = want64.to(TDT[dtype]).float()
    g = got.float()
    assert not torch.isnan(g).any(), f"{what}: {int(torch.isnan(g).sum())} elements never written"
    bad = (g != want).nonzero()
    assert bad.numel() == 0, f"{what}: {bad.shape[0]} of {want.numel()} wrong; first (m, n) {bad[:5].tolist()}"


def random_cases(n=160, seed=19):
    rng = np.random.default_rng(seed)
    return [(int(rng.choice(EXTENTS)), int(rng.choice(EXTENTS)), int(rng.choice(KS)), LAYOUTS[rng.integers(4)],
             ("bf16", "f16")[rng.integers(2)]) for _ in range(n)]


def test_160_random_shapes_are_exact_and_none_is_refused():
    """The issue's check: M, N and K drawn from its lists, all four majors, bf16 and f16 (seeded)."""
    gen = torch.Generator(device="cuda").manual_seed(19)
    staged = 0
    for M, N, K, layout, dtype in random_cases():
        a = laid_out(ints((M, K), gen, dtype), 1 if layout[0] == "t" else 0)
        b = laid_out(ints((K, N), gen, dtype), 1 if layout[1] == "t" else 0)
        staged += bool(Problem.from_arrays(a, b).staging)
        out = torch.full((M, N), float("nan"), dtype=TDT[dtype], device="cuda")
        cute_py.gemm(a, b, out=out)
        check(out, a.double() @ b.double(), dtype, f"{layout} {dtype} {M}x{N}x{K}")
    assert staged > 40                                   # the draw does exercise the staging copy


@pytest.mark.parametrize("layout", LAYOUTS)
def test_slices_wider_rows_and_bases_two_bytes_off(layout):
    """Operands as slices of larger tensors: leading dimensions above the extent (aligned and not) and bases
    one element past an aligned address; D a slice too (odd leading dimension, 2 bytes off)."""
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(layout.encode()))
    M, N, K = 301, 173, 259
    for pad_a, off_a, pad_b, off_b in ((8, 0, 16, 0), (3, 1, 5, 1), (0, 1, 1, 0), (1, 0, 0, 1)):
        big_a = ints((M + 2, K + pad_a + 1), gen) if layout[0] == "t" else ints((K + 2, M + pad_a + 1), gen)
        big_b = ints((K + 2, N + pad_b + 1), gen) if layout[1] == "t" else ints((N + 2, K + pad_b + 1), gen)
        a = big_a[1:M + 1, off_a:off_a + K] if layout[0] == "t" else big_a[1:K + 1, off_a:off_a + M].t()
        b = big_b[1:K + 1, off_b:off_b + N] if layout[1] == "t" else big_b[1:N + 1, off_b:off_b + K].t()
        big_d = torch.full((M + 1, N + 3), float("nan"), dtype=torch.bfloat16, device="cuda")
        out = big_d[1:, 1:N + 1]                         # rows N + 3 elements apart, starting 2 bytes off
        cute_py.gemm(a, b, out=out)
        check(out, a.double() @ b.double(), "bf16", f"{layout} pads {pad_a, off_a, pad_b, off_b}")
        assert torch.isnan(big_d[0]).all() and torch.isnan(big_d[:, 0]).all() and torch.isnan(big_d[:, N + 1:]).all()


@pytest.mark.parametrize("case", ["alpha_beta", "bias_col", "bias_row", "relu", "gelu", "f32_out", "col_major_out"])
@pytest.mark.parametrize("K", (0, 7, 1001))
def test_every_epilogue_option_on_unaligned_and_empty_k(case, K):
    """K = 0 gives act(beta * C + bias); odd K stages a and b; C and D odd-width, some column-major."""
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(f"{case}{K}".encode()))
    M, N = 131, 77
    out_t = "f32" if case == "f32_out" else "bf16"
    a, b = ints((M, K), gen), laid_out(ints((K, N), gen), 0)
    ref = a.double() @ b.double()
    kw = {}
    if case == "alpha_beta":
        c = ints((M, N), gen, out_t)
        kw, ref = dict(c=c, alpha=2.0, beta=-1.0), 2.0 * ref - c.double()
    if case in ("bias_col", "bias_row"):
        bias = ints((N if case == "bias_col" else M,), gen, out_t)
        kw = dict(bias=bias)
        ref = ref + (bias.double()[None, :] if case == "bias_col" else bias.double()[:, None])
    if case == "relu":
        bias = ints((N,), gen)
        kw, ref = dict(activation="relu", bias=bias), torch.relu(ref + bias.double()[None, :])
    out = (torch.full((N, M), float("nan"), dtype=TDT[out_t], device="cuda").t() if case == "col_major_out" else
           torch.full((M, N), float("nan"), dtype=TDT[out_t], device="cuda"))
    if case == "gelu":
        d = cute_py.gemm(a, b, activation="gelu", out=torch.empty(M, N, dtype=torch.float32, device="cuda"))
        torch.testing.assert_close(d.double(), torch.nn.functional.gelu(ref), rtol=1e-5, atol=1e-5)
        return
    cute_py.gemm(a, b, out=out, **kw)
    check(out, ref, out_t, f"{case} K={K}")


@pytest.mark.parametrize("M, N, K, a_strides, b_strides", [
    (152, 2696, 1, (2, 1), (1, 5)),          # K = 1, a rank-1 update: a column 2 apart, a row 5 apart
    (152, 2696, 1, (1, 3), (7, 1)),          # K = 1 again, each single stride 1 and the other odd
    (300, 1, 64, (64, 1), (3, 1)),           # N = 1: b a column 3 apart
    (1, 300, 64, (1, 7), (300, 1)),          # M = 1: a a row 7 apart
    (1, 1, 77, (1, 9), (5, 1)),              # M = N = 1
])
def test_a_dimension_of_extent_1_takes_any_stride(M, N, K, a_strides, b_strides):
    """A dimension of extent 1 has no stride that matters (torch.matmul takes these): a (1, n) operand with
    strides (1, 5) is n elements 5 apart, read in place or through the staging copy; exact."""
    gen = torch.Generator(device="cuda").manual_seed(M + 7 * N + 11 * K)

    def strided(shape, strides):
        span = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        return torch.as_strided(ints((span,), gen), shape, strides)
    a, b = strided((M, K), a_strides), strided((K, N), b_strides)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    cute_py.gemm(a, b, out=out)
    check(out, a.double() @ b.double(), "bf16", f"{M}x{N}x{K} a strides {a_strides} b strides {b_strides}")


def test_empty_m_or_n_returns_an_empty_result():
    gen = torch.Generator(device="cuda").manual_seed(3)
    for M, N, K in ((0, 64, 64), (64, 0, 7), (0, 0, 0)):
        d = cute_py.gemm(ints((M, K), gen), ints((K, N), gen))
        assert d.shape == (M, N)


def test_k_zero_is_beta_c_plus_bias_for_every_major():
    gen = torch.Generator(device="cuda").manual_seed(4)
    for layout in LAYOUTS:
        a = laid_out(torch.empty(300, 0, dtype=torch.bfloat16, device="cuda"), 1 if layout[0] == "t" else 0)
        b = laid_out(torch.empty(0, 200, dtype=torch.bfloat16, device="cuda"), 1 if layout[1] == "t" else 0)
        c, bias = ints((300, 200), gen), ints((200,), gen)
        d = cute_py.gemm(a, b, c, beta=3.0, bias=bias)
        check(d, 3.0 * c.double() + bias.double()[None, :], "bf16", f"K=0 {layout}")


@pytest.mark.parametrize("K", (8, 24, 1000))
def test_fp8_with_k_rows_under_16_bytes(K):
    """fp8 rows of K bytes: K = 8 and 24 (not multiples of 16) are staged; exact with power-of-two scales."""
    gen = torch.Generator(device="cuda").manual_seed(K)
    M, N = 200, 136
    a, w = ints((M, K), gen, "f16"), ints((N, K), gen, "f16")
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    sa, sb = torch.full((M, 1), 0.5, device="cuda"), torch.full((1, N), 2.0, device="cuda")
    d = cute_py.scaled_gemm(a8, w8.t(), sa, sb, out_dtype="f32")
    check(d, a.double() @ w.double().t(), "f32", f"fp8 K={K}")


def test_a_staged_gemm_captured_in_a_cuda_graph_reads_the_new_values_at_replay():
    gen = torch.Generator(device="cuda").manual_seed(5)
    a = ints((257, 999), gen)                           # 1998-byte rows: staged
    b = laid_out(ints((999, 129), gen), 0)
    out = torch.empty(257, 129, dtype=torch.bfloat16, device="cuda")
    cute_py.gemm(a, b, out=out)                          # compile outside the capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        cute_py.gemm(a, b, out=out)
    a.copy_(ints((257, 999), gen))
    g.replay()
    torch.cuda.synchronize()
    check(out, a.double() @ b.double(), "bf16", "graph replay")


def test_staged_calls_on_two_streams_do_not_share_a_buffer():
    gen = torch.Generator(device="cuda").manual_seed(6)
    a1, a2 = ints((512, 1001), gen), ints((512, 1001), gen)
    b = laid_out(ints((1001, 256), gen), 0)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s1):
        d1 = cute_py.gemm(a1, b)
    with torch.cuda.stream(s2):
        d2 = cute_py.gemm(a2, b)
    torch.cuda.synchronize()
    check(d1, a1.double() @ b.double(), "bf16", "stream 1")
    check(d2, a2.double() @ b.double(), "bf16", "stream 2")


def _moe_reference(a, b, offs):
    out, start = [], 0
    for g, end in enumerate(offs.tolist()):
        out.append(a[start:end].double() @ b[g].double())
        start = end
    return torch.cat(out)


@pytest.mark.parametrize("K, N, b_major", [(511, 255, "K"), (511, 255, "N"), (64, 129, "N"), (1001, 64, "K")])
def test_grouped_gemm_with_odd_rows_is_exact(K, N, b_major):
    """Groups along M whose a rows (K odd) or expert rows (N or K odd) TMA cannot read: staged, 3-D for b."""
    gen = torch.Generator(device="cuda").manual_seed(K * N)
    sizes = [0, 1, 127, 129, 300, 64, 1, 250]
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
    a = ints((sum(sizes), K), gen)
    b = ints((len(sizes), K, N), gen)
    if b_major == "K":
        b = b.transpose(1, 2).contiguous().transpose(1, 2)
    d = cute_py.grouped_gemm(a, b, offs)
    check(d, _moe_reference(a, b, offs), "bf16", f"grouped K={K} N={N} b {b_major}-major")


def test_groups_along_k_with_odd_m_and_n_are_exact():
    gen = torch.Generator(device="cuda").manual_seed(8)
    M, N, sizes = 129, 77, [0, 65, 300, 1, 127]
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
    x, dy = ints((sum(sizes), M), gen), ints((sum(sizes), N), gen)     # row-major: a = x.t() is M-major
    d = cute_py.grouped_gemm(x.t(), dy, offs)
    start, want = 0, []
    for end in offs.tolist():
        want.append(x[start:end].double().t() @ dy[start:end].double())
        start = end
    check(d, torch.stack(want), "bf16", "groups along K, odd M and N")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_bmm_with_odd_extents_and_broadcasts_is_exact(layout):
    gen = torch.Generator(device="cuda").manual_seed(zlib.crc32(f"bmm{layout}".encode()))
    L, M, N, K = 5, 131, 77, 301
    a = ints((L, M, K), gen) if layout[0] == "t" else ints((L, K, M), gen).transpose(1, 2)
    b = ints((L, K, N), gen) if layout[1] == "t" else ints((L, N, K), gen).transpose(1, 2)
    check(cute_py.bmm(a, b), a.double() @ b.double(), "bf16", f"bmm {layout}")
    shared = b[:1].expand(L, K, N)                                     # one matrix for every batch entry
    check(cute_py.bmm(a, shared), a.double() @ shared.double(), "bf16", f"bmm {layout} broadcast b")


def test_grouped_fp8_with_k_under_16_bytes_is_exact():
    gen = torch.Generator(device="cuda").manual_seed(9)
    sizes, K, N = [33, 0, 100], 24, 136
    offs = torch.tensor(sizes, device="cuda", dtype=torch.int32).cumsum(0).to(torch.int32)
    a, w = ints((sum(sizes), K), gen, "f16"), ints((len(sizes), N, K), gen, "f16")
    sa = torch.full((sum(sizes),), 2.0, device="cuda")
    sb = torch.full((len(sizes), N), 0.5, device="cuda")
    d = cute_py.grouped_gemm(a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn).transpose(1, 2), offs,
                             scale_a=sa, scale_b=sb, out_dtype="f32")
    check(d, _moe_reference(a, w.transpose(1, 2), offs), "f32", "fp8 grouped K=24")


def test_k_zero_grouped_and_batched_give_zeros():
    offs = torch.tensor([3, 3, 10], device="cuda", dtype=torch.int32)
    d = cute_py.grouped_gemm(torch.empty(10, 0, dtype=torch.bfloat16, device="cuda"),
                             torch.empty(3, 0, 16, dtype=torch.bfloat16, device="cuda"), offs)
    assert d.shape == (10, 16) and not d.float().abs().sum()
    d = cute_py.bmm(torch.empty(2, 5, 0, dtype=torch.bfloat16, device="cuda"),
                    torch.empty(2, 0, 7, dtype=torch.bfloat16, device="cuda"))
    assert d.shape == (2, 5, 7) and not d.float().abs().sum()
    x, dy = torch.empty(0, 40, dtype=torch.bfloat16, device="cuda"), torch.empty(0, 24, dtype=torch.bfloat16,
                                                                               device="cuda")
    d = cute_py.grouped_gemm(x.t(), dy, torch.zeros(3, device="cuda", dtype=torch.int32))
    assert d.shape == (3, 40, 24) and not d.float().abs().sum()


DIRECT_CASES = [  # (M, N, K, layout, load_a, load_b, spec fields): operands read by the producer threads themselves
    (300, 200, 999, "tn", 2, 2, {}),                 # odd K: 2-byte loads of both
    (257, 129, 1002, "tn", 4, 4, {}),                # K = 2 mod 4 elements: 4-byte cp.async
    (257, 129, 1004, "tn", 8, 8, {}),                # 8-byte cp.async
    (257, 129, 1004, "tn", 8, 0, {}),                # a direct, b staged
    (131, 77, 301, "nt", 2, 2, {}),                  # MN-major both
    (131, 1001, 301, "nn", 2, 0, {"tile": (128, 256, 64), "consumers": 2}),
    (64, 136, 4096 + 2, "tn", 4, 4, {"split_k": 2}),
    (100, 264, 998, "tt", 4, 8, {"tile": (64, 128, 64), "consumers": 1}),
    (333, 200, 1000, "tn", 16, 16, {}),              # aligned rows read by cp.async.16 too
    (300, 520, 1004, "tn", 8, 0, {"cluster": (2, 1)}),   # a direct in each CTA, b multicast to the pair
    (300, 520, 1004, "tn", 0, 8, {"cluster": (2, 1)}),   # b (which the pair would share) read whole by each CTA
    (520, 300, 998, "tt", 4, 2, {"cluster": (1, 2)}),    # both direct: a cluster with nothing to multicast
]


@pytest.mark.parametrize("M, N, K, layout, load_a, load_b, fields", DIRECT_CASES)
def test_operands_read_without_tma_are_exact(M, N, K, layout, load_a, load_b, fields):
    gen = torch.Generator(device="cuda").manual_seed(M + N + K)
    a = laid_out(ints((M, K), gen), 1 if layout[0] == "t" else 0)
    b = laid_out(ints((K, N), gen), 1 if layout[1] == "t" else 0)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    p = Problem.from_arrays(a, b, out=out)
    spec = select(p).replace(load_a=load_a, load_b=load_b, **fields)
    cute_py.gemm(a, b, out=out, spec=spec)
    check(out, a.double() @ b.double(), "bf16", spec.name)


def test_fp8_read_without_tma_byte_by_byte():
    gen = torch.Generator(device="cuda").manual_seed(11)
    M, N, K = 200, 136, 1001                             # rows of 1001 bytes: 1-byte loads
    a, w = ints((M, K), gen, "f16"), ints((N, K), gen, "f16")
    a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    p = Problem.from_arrays(a8, w8.t(), scale_a=one, scale_b=one)
    spec = select(p).replace(load_a=1, load_b=1, out_dtype="f32")
    d = cute_py.scaled_gemm(a8, w8.t(), one, one, out_dtype="f32", spec=spec)
    check(d, a.double() @ w.double().t(), "f32", spec.name)


def test_a_load_wider_than_the_rows_allow_is_refused():
    gen = torch.Generator(device="cuda").manual_seed(12)
    a, b = ints((64, 999), gen), laid_out(ints((999, 64), gen), 0)
    spec = select(Problem.from_arrays(a, b)).replace(load_a=4)
    with pytest.raises(cute_py.GemmInputError, match="load_a: spec 4-byte loads, a's address and rows allow 2"):
        cute_py.gemm(a, b, spec=spec)
