"""cute_py.scaled_gemm on the GPU: exact results on small integers with power-of-two scales over ragged shapes,
every scale mode, both fp8 types and every output type; accuracy on random inputs against a float64 reference
(and torch._scaled_mm on the same inputs); bad inputs raise before any launch.

Exactness: a and b hold integers in [-3, 3] (exact in e4m3 and e5m2), the scales are powers of two, so every
product, every partial sum (|sum| <= 9 K < 2^24) and every scaled sum is exact in f32; D must equal the float64
reference rounded once to D's type. For blockwise scales the reference dequantizes each 1 x 128 block of a and
128 x 128 block of b explicitly before one float64 product.
"""

from __future__ import annotations

import numpy as np
import pytest

import cute_py
from cute_py.gemm import GemmInputError

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

F8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
OUT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
BLOCK = 128


def fp8_operands(M, N, K, t, rng):
    """float64 a (M, K), b (K, N) of small integers and their fp8 device copies, both K-major."""
    a = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    b = rng.integers(-3, 4, size=(K, N)).astype(np.float64)
    a8 = torch.from_numpy(a).to(F8[t]).cuda()
    b8 = torch.from_numpy(b.T.copy()).to(F8[t]).cuda().t()          # (K, N) with K contiguous
    return a, b, a8, b8


def pow2(rng, shape):
    return np.exp2(rng.integers(-2, 3, size=shape)).astype(np.float64)


def scales(mode, M, N, K, rng):
    """float64 scales as the reference applies them (per element of a and b) and their device arrays."""
    kb, nb = -(-K // BLOCK), -(-N // BLOCK)
    if mode == "tensor":
        sa, sb = pow2(rng, ()), pow2(rng, ())
        return np.full((M, K), sa), np.full((K, N), sb), torch.tensor(sa, dtype=torch.float32, device="cuda"), \
            torch.tensor(sb, dtype=torch.float32, device="cuda")
    if mode == "row":
        sa, sb = pow2(rng, (M, 1)), pow2(rng, (1, N))
        return (np.broadcast_to(sa, (M, K)), np.broadcast_to(sb.T, (N, K)).T,
                torch.from_numpy(sa).float().cuda(), torch.from_numpy(sb).float().cuda())
    sa, sb = pow2(rng, (M, kb)), pow2(rng, (kb, nb))
    ea = np.repeat(sa, BLOCK, axis=1)[:, :K]                                   # each 1 x 128 block of a
    eb = np.repeat(np.repeat(sb, BLOCK, axis=0), BLOCK, axis=1)[:K, :N]         # each 128 x 128 block of b
    dev_a = torch.from_numpy(sa.T.copy()).float().cuda().t()                  # M-major, as PyTorch's blockwise
    return ea, eb, dev_a, torch.from_numpy(sb).float().cuda()


SHAPES = [(1, 1, 16), (7, 9, 16), (64, 128, 128), (127, 129, 144), (200, 255, 1040), (256, 384, 1024),
          (1000, 600, 512)]


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_exact_small_integers(mode, M, N, K):
    rng = np.random.default_rng(M * 7919 + N * 31 + K)
    t = "e4m3" if (M + N) % 2 else "e5m2"
    a, b, a8, b8 = fp8_operands(M, N, K, t, rng)
    ea, eb, sa, sb = scales(mode, M, N, K, rng)
    ref = (a * ea) @ (b * eb)
    for out_t in OUT:
        d = cute_py.scaled_gemm(a8, b8, sa, sb, out_dtype=out_t)
        assert d.dtype == OUT[out_t] and d.shape == (M, N)
        want = torch.from_numpy(ref).to(OUT[out_t]).cuda()
        assert torch.equal(d, want), (mode, t, out_t, (d.double() - want.double()).abs().max().item())


@pytest.mark.parametrize("layout,tma", [("M-major", True), ("K-major", False), ("M-major, padded rows", True),
                                        ("M-major, 4 bytes past an aligned base", False), ("odd M", False)])
def test_blockwise_scale_a_in_any_layout(layout, tma):
    """The kernel's tensor map reads an M-major scale_a with 16-byte aligned base and K-block stride as it is; any
    other scale_a is gathered into that layout first (cute_py.emit.scaling.reads_scale_a): exact either way."""
    from cute_py.problem import Problem
    M = 301 if layout == "odd M" else 300
    N, K = 256, 1024
    rng = np.random.default_rng(11)
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    ea, eb, _, sb = scales("block", M, N, K, rng)
    host = np.ascontiguousarray(ea[:, ::BLOCK])                                 # (M, KB)
    kb = host.shape[1]
    if layout == "K-major":
        sa = torch.from_numpy(host).float().cuda()
    elif layout == "M-major, padded rows":
        sa = torch.zeros(kb, M + 4, device="cuda")[:, :M].t()
        sa.copy_(torch.from_numpy(host))
    elif layout == "M-major, 4 bytes past an aligned base":
        sa = torch.zeros(kb * M + 1, device="cuda")[1:].view(kb, M).t()
        sa.copy_(torch.from_numpy(host))
    else:
        sa = torch.from_numpy(host.T.copy()).float().cuda().t()
    assert Problem.from_arrays(a8, b8, scale_a=sa, scale_b=sb, op="scaled_gemm").scale_a_tma is tma
    d = cute_py.scaled_gemm(a8, b8, sa, sb, out_dtype="f32")
    assert torch.equal(d, torch.from_numpy((a * ea) @ (b * eb)).float().cuda()), layout


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_bias_and_out(mode):
    """bias[n] is added after scaling; ``out`` (a strided view) is written, its padding left alone."""
    M, N, K = 300, 264, 384
    rng = np.random.default_rng(5)
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    ea, eb, sa, sb = scales(mode, M, N, K, rng)
    bias = rng.integers(-8, 9, size=N).astype(np.float64)
    buf = torch.full((M, N + 8), float("nan"), dtype=torch.bfloat16, device="cuda")
    out = buf[:, :N]
    d = cute_py.scaled_gemm(a8, b8, sa, sb, bias=torch.from_numpy(bias).bfloat16().cuda(), out=out)
    assert d.data_ptr() == out.data_ptr()
    want = torch.from_numpy((a * ea) @ (b * eb) + bias).bfloat16().cuda()
    assert torch.equal(out, want)
    assert torch.isnan(buf[:, N:]).all()


def test_explicit_specs_every_schedule():
    """Other tiles (blockwise tiles that straddle two scale blocks among them), ping-pong, a 2-CTA cluster, split-K
    and stream-K give the same exact D."""
    from cute_py.emit import GemmSpec
    M, N, K = 520, 640, 2048
    rng = np.random.default_rng(11)
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    for mode, extra in [("tensor", dict(tile=(128, 256, 128), fast_accum=True)),
                        ("row", dict(tile=(128, 256, 128), fast_accum=True, split_k=2)),
                        ("row", dict(tile=(64, 128, 128), consumers=1)),
                        ("tensor", dict(tile=(128, 128, 128), cluster=(2, 1))),
                        ("row", dict(tile=(128, 128, 128), split_k=3)),
                        ("block", dict(tile=(64, 128, 128), consumers=2, schedule="pingpong")),
                        ("block", dict(tile=(128, 64, 128), split_k=2)),
                        ("block", dict(tile=(128, 128, 128), cluster=(1, 2))),
                        ("block", dict(tile=(128, 192, 128))),             # 3 promotion chunks of 64 columns
                        ("block", dict(tile=(128, 160, 128))),             # 5 chunks of 32; 5 staging chunks
                        ("block", dict(tile=(128, 144, 128), split_k=2)),  # over two scale blocks: 0, 16, .. 64 in
                        ("block", dict(tile=(64, 160, 128), consumers=1, scheduler="stream_k")),  # 0, 32, 64, 96
                        ("block", dict(tile=(128, 80, 128), epilogue="direct")),
                        ("tensor", dict(tile=(128, 160, 128))),            # the whole tile promoted at once
                        ("row", dict(tile=(128, 144, 128), out_dtype="f32")),
                        ("row", dict(tile=(128, 192, 128), split_k=2)),
                        ("tensor", dict(tile=(64, 256, 128), consumers=1)),  # 2 chunks of 128
                        ("block", dict(tile=(128, 128, 128), scheduler="stream_k")),
                        ("row", dict(tile=(128, 128, 128), scheduler="stream_k", schedule="pingpong",
                                     fast_accum=True))]:
        ea, eb, sa, sb = scales(mode, M, N, K, rng)
        spec = GemmSpec(dtype="e4m3", scale=mode, **extra)
        d = cute_py.scaled_gemm(a8, b8, sa, sb, spec=spec, use_fast_accum=spec.fast_accum, out_dtype=spec.out_dtype)
        assert torch.equal(d, torch.from_numpy((a * ea) @ (b * eb)).to(OUT[spec.out_dtype]).cuda()), spec.name


def _quantize(x, t):
    return x.to(F8[t])


@pytest.mark.parametrize("mode,fast", [("tensor", False), ("row", False), ("block", False), ("tensor", True),
                                       ("row", True)])
def test_random_accuracy(mode, fast):
    """Random fp8 inputs (randn quantized), K = 4096, f32 out, against float64 on the same fp8 values.

    Hopper's fp8 wgmma keeps about 14 bits in its accumulator. Promoted (the default, and always for blockwise
    scales), each 128-wide K tile is summed in the tensor core and added in f32: measured relative Frobenius
    error 1.3e-4 here, as torch._scaled_mm's default; bound 2e-4. With fast accumulation the tensor core sums
    all of K: measured 1.3e-3, as torch's use_fast_accum=True; bound 3e-3. Both also within 1.5x of torch on
    the same inputs.
    """
    M, N, K = 1024, 1536, 4096
    gen = torch.Generator(device="cuda").manual_seed(7)
    a8 = _quantize(torch.randn(M, K, device="cuda", generator=gen), "e4m3")
    b8 = _quantize(torch.randn(N, K, device="cuda", generator=gen), "e4m3").t()
    kb, nb = -(-K // BLOCK), -(-N // BLOCK)
    if mode == "tensor":
        sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
        ea, eb = sa.double(), sb.double()
    elif mode == "row":
        sa, sb = torch.rand(M, 1, device="cuda", generator=gen) + 0.5, torch.rand(1, N, device="cuda", generator=gen) + 0.5
        ea, eb = sa.double(), sb.double()
    else:
        sa = (torch.rand(kb, M, device="cuda", generator=gen) + 0.5).t()
        sb = torch.rand(kb, nb, device="cuda", generator=gen) + 0.5
        ea = sa.double().repeat_interleave(BLOCK, 1)[:, :K]
        eb = sb.double().repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)[:K, :N]
    ref = (a8.double() * ea) @ (b8.double() * eb)
    d = cute_py.scaled_gemm(a8, b8, sa, sb, out_dtype="f32", use_fast_accum=fast)
    err = float((d.double() - ref).norm() / ref.norm())
    assert err <= (3e-3 if fast else 2e-4), err
    if mode != "block":
        t = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.float32, use_fast_accum=fast)
        err_t = float((t.double() - ref).norm() / ref.norm())
        assert err <= 1.5 * err_t, (err, err_t)


def test_out_dtype_spellings_and_empty_results():
    a8 = torch.ones(64, 128, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.ones(32, 128, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    d = cute_py.scaled_gemm(a8, b8, one, one, out_dtype=torch.float32)
    assert d.dtype == torch.float32 and torch.equal(d, torch.full((64, 32), 128.0, device="cuda"))
    assert cute_py.scaled_gemm(a8, b8[:, :0], one, one).shape == (64, 0)
    assert cute_py.scaled_gemm(a8[:0], b8, one, one).shape == (0, 32)


def test_bad_inputs_raise_before_launch():
    M, N, K = 256, 256, 256
    a8 = torch.zeros(M, K, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.zeros(N, K, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    cases = [
        ((a8, b8.contiguous(), one, one), "must be K-major"),                         # b N-major
        ((a8.t().contiguous().t(), b8, one, one), "must be K-major"),                 # a M-major
        ((a8, b8, one.half(), one), "scale_a has element type f16"),
        ((a8, b8, torch.ones(M, 2, device="cuda"), one), "name no scale mode"),
        ((a8, b8.to(torch.float8_e5m2), one, one), "both must have one type"),
        ((a8, b8, one, one.cpu()), "scale_b: "),
        ((a8.to(torch.bfloat16), b8.to(torch.bfloat16), one, one), "supported: e4m3, e5m2"),
    ]
    for args, match in cases:
        with pytest.raises(GemmInputError, match=match):
            cute_py.scaled_gemm(*args)
    with pytest.raises(GemmInputError, match="fp8 operands need scales"):
        cute_py.gemm(a8, b8)
    with pytest.raises(GemmInputError, match="out_dtype 'e4m3' is not a type cute_py writes"):
        cute_py.scaled_gemm(a8, b8, one, one, out_dtype="e4m3")
    with pytest.raises(GemmInputError, match="scales are 2-D"):
        cute_py.scaled_gemm(a8, b8, torch.ones(M, 1, device="cuda"), torch.ones(1, 1, N, device="cuda"))
    with pytest.raises(GemmInputError, match="blockwise scales always promote"):
        cute_py.scaled_gemm(a8, b8, torch.ones(M, 2, device="cuda"), torch.ones(2, 2, device="cuda"),
                            use_fast_accum=True)


@pytest.mark.parametrize("mode", ["row", "block"])
@pytest.mark.parametrize("M,N,K", [(7, 9, 16), (127, 129, 144), (200, 640, 1040)])
def test_ue8m0_scales_exact(mode, M, N, K):
    """UE8M0 scales (float8_e8m0fnu, the exponent byte of a power of two) give the f32 scales' exact D: through
    cute_py.scaled_gemm, a blockwise tile over two scale blocks, and torch.ops.cute_py.scaled_gemm; mixed scale
    types are refused before launch."""
    import cute_py.torch  # noqa: F401 - registers torch.ops.cute_py
    from cute_py.emit import GemmSpec
    rng = np.random.default_rng(M * 31 + N + K)
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    ea, eb, sa, sb = scales(mode, M, N, K, rng)
    e8 = torch.float8_e8m0fnu
    want = torch.from_numpy((a * ea) @ (b * eb)).bfloat16().cuda()
    assert torch.equal(cute_py.scaled_gemm(a8, b8, sa.to(e8), sb.to(e8)), want)
    assert torch.equal(torch.ops.cute_py.scaled_gemm(a8, b8, sa.to(e8), sb.to(e8)), want)
    if mode == "block":
        spec = GemmSpec(dtype="e4m3", scale="block", scale_type="ue8m0", tile=(64, 160, 128), consumers=1,
                        epilogue="direct")                                        # D rows of 9 or 129: no TMA
        assert torch.equal(cute_py.scaled_gemm(a8, b8, sa.to(e8), sb.to(e8), spec=spec), want)
    with pytest.raises(GemmInputError, match="scale_a is ue8m0 but scale_b is f32"):
        cute_py.scaled_gemm(a8, b8, sa.to(e8), sb)


@pytest.mark.parametrize("tile,consumers,scale_type", [((128, 144, 128), 2, "f32"), ((128, 80, 128), 2, "f32"),
                                                        ((128, 80, 128), 2, "ue8m0"), ((64, 160, 128), 1, "f32"),
                                                        ((64, 160, 128), 1, "ue8m0")])
def test_blockwise_tiles_over_two_scale_blocks_every_offset(tile, consumers, scale_type):
    """A tile over two scale blocks starts at every offset its width allows into a block (N = 1152 + 40: for 144
    columns 0, 16, ..., 112, then a ragged last tile), with f32 and UE8M0 scales."""
    from cute_py.emit import GemmSpec, gemm_plan
    M, N, K = 260, 1192, 640
    rng = np.random.default_rng(tile[1])
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    ea, eb, sa, sb = scales("block", M, N, K, rng)
    want = torch.from_numpy((a * ea) @ (b * eb)).bfloat16().cuda()
    spec = GemmSpec(dtype="e4m3", scale="block", tile=tile, consumers=consumers, epilogue="direct",
                    scale_type=scale_type)
    assert gemm_plan(spec).promotion.straddles                     # the whole tile, over two blocks
    if scale_type == "ue8m0":
        sa, sb = sa.to(torch.float8_e8m0fnu), sb.to(torch.float8_e8m0fnu)
    assert torch.equal(cute_py.scaled_gemm(a8, b8, sa, sb, spec=spec), want), spec.name


def test_ue8m0_extreme_exponents():
    """UE8M0 byte 255 is NaN (its rows of D are NaN) and byte 0 is 2^-127 (a denormal scale, kept: no flush to
    zero), as torch reads them."""
    M, N, K = 64, 128, 256
    rng = np.random.default_rng(3)
    a, b, a8, b8 = fp8_operands(M, N, K, "e4m3", rng)
    raw_a = np.full((M, 2), 127, dtype=np.uint8)
    raw_a[5, :], raw_a[9, 1] = 255, 0                  # row 5: NaN; row 9, second K block: 2^-127
    raw_b = np.array([[127], [130]], dtype=np.uint8)   # (KB, NB): 1 and 8
    sa = torch.from_numpy(raw_a.T.copy()).cuda().view(torch.float8_e8m0fnu).t()
    sb = torch.from_numpy(raw_b).cuda().view(torch.float8_e8m0fnu)
    d = cute_py.scaled_gemm(a8, b8, sa, sb, out_dtype="f32")
    ea = np.repeat(sa.float().cpu().double().numpy(), 128, axis=1)
    eb = np.repeat(np.repeat(sb.float().cpu().double().numpy(), 128, axis=0), 128, axis=1)[:, :N]
    want = torch.from_numpy((a * ea) @ (b * eb)).float().cuda()
    rest = torch.arange(M, device="cuda") != 5
    assert torch.isnan(d[5]).all() and not torch.isnan(d[rest]).any()
    assert torch.equal(d[rest], want[rest])
    assert float(torch.from_numpy(ea)[9, 200]) == 2.0 ** -127


@pytest.mark.parametrize("argv", [["--dtype", "e4m3", "--scale", "block"],
                                  ["--dtype", "e4m3", "--scale", "block", "--scale-type", "ue8m0"],
                                  ["--dtype", "e4m3", "--scale", "row", "--fast-accum"],
                                  ["--spec", "example:tn_e4m3_tensor_fastaccum_128x256"]])   # the spec fixes e4m3
def test_cli_checks_and_times_fp8(argv, capsys):
    """cute-py gemm --dtype e4m3 ... --check --bench: exact on small integers, timed next to torch."""
    from cute_py import cli
    assert cli.main(["gemm", "--m", "1000", "--n", "600", "--k", "512", "--check", "--bench", *argv]) == 0
    out = capsys.readouterr().out
    assert "check     PASS: 600000 of 600000 elements equal" in out and "TFLOP/s" in out


def test_autotune_times_fp8_candidates_and_records_the_winner(tmp_path, monkeypatch):
    """cute_py.autotune with scales: candidates run through scaled_gemm and are checked against the default spec;
    the recorded winner is what scaled_gemm then selects."""
    from cute_py.emit import GemmSpec
    from cute_py.problem import Problem
    from cute_py.selection import select
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))           # a tuned table of its own
    M, N, K = 1024, 1024, 2048
    a8 = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
    sa = (torch.rand(K // 128, M, device="cuda") + 0.5).t()
    sb = torch.rand(K // 128, N // 128, device="cuda") + 0.5
    cands = [GemmSpec(dtype="e4m3", scale="block", tile=t, consumers=t[0] // 64)
             for t in ((128, 128, 128), (64, 128, 128))]
    res = cute_py.autotune(a8, b8, scale_a=sa, scale_b=sb, candidates=cands, reps=2, progress=False)
    assert res.best in cands and all(r.ok for r in res.rows)
    assert select(Problem.from_arrays(a8, b8, scale_a=sa, scale_b=sb, op="scaled_gemm")) == res.best
