"""cute_py.grouped_gemm and cute_py.bmm on the GPU: exact results on small integers against a float64 reference
per group (uneven and empty groups, both majors of b, bf16 and f16, explicit specs), torch's grouped_mm
semantics, and bad input refused before any launch.

Exactness: a and b hold integers in [-3, 3], so every partial sum (|sum| <= 9 K < 2^24) is exact in f32 and D
must equal the float64 reference rounded once to D's type.
"""

from __future__ import annotations

import numpy as np
import pytest

import cute_py
from cute_py.emit import GemmSpec
from cute_py.gemm import GemmInputError

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

T = {"bf16": torch.bfloat16, "f16": torch.float16}


def ints(rng, shape):
    return rng.integers(-3, 4, size=shape).astype(np.float64)


def moe_operands(sizes, N, K, t, rng, b_major="K"):
    """a (total_M, K), b (G, K, N) (K-major: stored (G, N, K) and transposed, as expert weights are), offs."""
    M, G = sum(sizes), len(sizes)
    a, b = ints(rng, (M, K)), ints(rng, (G, K, N))
    da = torch.from_numpy(a).to(T[t]).cuda()
    if b_major == "K":
        db = torch.from_numpy(b.transpose(0, 2, 1).copy()).to(T[t]).cuda().transpose(-2, -1)
    else:
        db = torch.from_numpy(b).to(T[t]).cuda()
    offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    return a, b, da, db, offs


def moe_reference(a, b, sizes):
    out, row = np.zeros((a.shape[0], b.shape[2])), 0
    for g, n in enumerate(sizes):
        out[row:row + n] = a[row:row + n] @ b[g]
        row += n
    return out


def check_moe(sizes, N, K, t="bf16", b_major="K", spec=None, seed=0):
    rng = np.random.default_rng(seed)
    a, b, da, db, offs = moe_operands(sizes, N, K, t, rng, b_major)
    d = cute_py.grouped_gemm(da, db, offs, spec=spec, out_dtype=spec.out_dtype if spec else None)
    ot = {"f32": torch.float32, **T}[spec.out_dtype if spec else t]
    want = torch.from_numpy(moe_reference(a, b, sizes)).to(ot).cuda()
    assert d.shape == want.shape and d.dtype == ot
    bad = (d.double() - want.double()).abs()
    assert torch.equal(d, want), (sizes[:8], N, K, t, b_major, bad.max().item(), bad.nonzero()[:4].tolist())
    return d, da, db, offs


def uneven(G, tile, rng, total=None):
    """Group sizes with zeros, 1, tile - 1, tile, tile + 1 and random ones."""
    special = [0, 1, tile - 1, tile, tile + 1, 0, 3 * tile + 5]
    sizes = [special[g] if g < len(special) else int(rng.integers(0, 3 * tile)) for g in range(G)]
    return sizes


@pytest.mark.parametrize("G", [1, 8, 64, 128])
@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_moe_uneven_groups(G, t):
    rng = np.random.default_rng(G)
    sizes = [300] if G == 1 else uneven(G, 128, rng)
    check_moe(sizes, 256, 192, t, seed=G)


@pytest.mark.parametrize("b_major", ["K", "MN"])
def test_moe_both_majors_of_b(b_major):
    rng = np.random.default_rng(5)
    check_moe(uneven(8, 128, rng), 320, 256, b_major=b_major)


def test_moe_all_tokens_in_one_group():
    check_moe([0, 0, 0, 777, 0, 0, 0, 0], 384, 128)
    check_moe([777, 0, 0, 0], 384, 128)
    check_moe([0, 0, 0, 777], 384, 128)


def test_moe_every_group_empty_and_zero_rows():
    rng = np.random.default_rng(1)
    a, b, da, db, offs = moe_operands([0, 0, 0], 128, 64, "bf16", rng)
    d = cute_py.grouped_gemm(da, db, offs)
    assert d.shape == (0, 128)


@pytest.mark.parametrize("spec", [
    dict(tile=(128, 256, 64)), dict(tile=(64, 64, 64), consumers=1), dict(tile=(128, 128, 64), cluster=(2, 1)),
    dict(tile=(128, 128, 64), cluster=(1, 2)), dict(tile=(128, 128, 64), schedule="pingpong"),
    dict(tile=(64, 256, 64), schedule="pingpong"), dict(tile=(128, 128, 64), raster="n", group=2),
    dict(tile=(128, 128, 64), persistent=False), dict(tile=(128, 192, 64), epilogue="direct"),
    dict(tile=(128, 128, 64), out_dtype="f32"), dict(tile=(128, 128, 64), scheduler="stream_k"),
    dict(tile=(128, 256, 64), scheduler="stream_k", cluster=(2, 1)),
    dict(tile=(128, 128, 64), scheduler="stream_k", schedule="pingpong")])
def test_moe_explicit_specs(spec):
    """Every schedule, cluster and raster over uneven groups; the TMA-store epilogue stores every tile through
    the ragged map of D (a group's last tile writes no row of the next group; also with f32 D), the direct
    epilogue with masked stores."""
    rng = np.random.default_rng(11)
    s = GemmSpec(b="(N,K,L):(K,1,ldb_l)", **spec)
    check_moe(uneven(12, s.tile[0], rng), 512, 320, spec=s, seed=11)


def test_moe_matches_torch_grouped_mm():
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("torch has no _grouped_mm")
    rng = np.random.default_rng(3)
    sizes = uneven(16, 128, rng)
    _, _, da, db, offs = moe_operands(sizes, 256, 512, "bf16", rng)
    d = cute_py.grouped_gemm(da, db, offs)
    assert torch.equal(d, torch._grouped_mm(da, db, offs=offs))


def test_moe_repeated_call_reads_new_offsets_in_place():
    """The prepared launch is reused for the same arrays; offsets changed in place are read on the device."""
    rng = np.random.default_rng(4)
    sizes = [100, 0, 200, 50]
    a, b, da, db, offs = moe_operands(sizes, 128, 64, "bf16", rng)
    cute_py.grouped_gemm(da, db, offs)
    new = [0, 250, 300, 350]
    offs.copy_(torch.tensor(new, dtype=torch.int32))
    d = cute_py.grouped_gemm(da, db, offs)
    want = moe_reference(a, b, [0, 250, 50, 50])
    assert torch.equal(d, torch.from_numpy(want).to(torch.bfloat16).cuda())


def test_moe_out_and_unchecked_bad_offsets_stay_in_bounds():
    rng = np.random.default_rng(6)
    sizes = [64, 64, 64]
    a, b, da, db, offs = moe_operands(sizes, 128, 64, "bf16", rng)
    big = torch.full((200, 128), 7.0, dtype=torch.bfloat16, device="cuda")
    out = big[4:196]
    cute_py.grouped_gemm(da, db, offs, out=out)
    assert torch.equal(out, torch.from_numpy(moe_reference(a, b, sizes)).to(torch.bfloat16).cuda())
    assert (big[:4] == 7).all() and (big[196:] == 7).all()
    offs.copy_(torch.tensor([100, 50, 5000], dtype=torch.int32))          # out of order and past M: clamped
    cute_py.grouped_gemm(da, db, offs, out=out, check_offs=False)
    torch.cuda.synchronize()
    assert (big[:4] == 7).all() and (big[196:] == 7).all()


def test_moe_bad_input_is_refused():
    rng = np.random.default_rng(7)
    _, _, da, db, offs = moe_operands([10, 20, 30], 128, 64, "bf16", rng)
    cases = [
        (torch.tensor([10, 5, 60], dtype=torch.int32, device="cuda"), "offs[1] = 5 < offs[0] = 10"),
        (torch.tensor([10, 30, 59], dtype=torch.int32, device="cuda"), "offs[2] = 59 must be the row count of a, 60"),
        (torch.tensor([10, 30, 60], dtype=torch.int64, device="cuda"), "offs must be a contiguous 1-D int32"),
        (torch.tensor([10, 30, 60], dtype=torch.int32), "offs"),
        (torch.tensor([30, 60], dtype=torch.int32, device="cuda"), "offs has 2 entries but b has 3 groups"),
        (None, "need offs"),
    ]
    for bad, message in cases:
        with pytest.raises(GemmInputError, match="grouped_gemm: .*" + message.replace("[", r"\[").replace("]", r"\]")):
            cute_py.grouped_gemm(da, db, bad)


# ---- batches ----------------------------------------------------------------------------------------------------

def check_bmm(L, M, N, K, t="bf16", a_major="K", b_major="MN", spec=None, seed=0, op=None):
    rng = np.random.default_rng(seed)
    a, b = ints(rng, (L, M, K)), ints(rng, (L, K, N))
    da = torch.from_numpy(a).to(T[t]).cuda()
    db = torch.from_numpy(b).to(T[t]).cuda()
    if a_major == "MN":
        da = da.transpose(1, 2).contiguous().transpose(1, 2)
    if b_major == "K":
        db = db.transpose(1, 2).contiguous().transpose(1, 2)
    d = (op or cute_py.bmm)(da, db, spec=spec)
    want = torch.from_numpy(np.einsum("lmk,lkn->lmn", a, b)).to(T[t]).cuda()
    assert d.shape == (L, M, N) and torch.equal(d, want), (L, M, N, K, t, (d.double() - want.double()).abs().max())
    return d


@pytest.mark.parametrize("L,M,N,K", [(1, 64, 64, 64), (8, 512, 512, 512), (3, 104, 200, 72), (5, 136, 120, 136),
                                     (32, 1024, 1024, 128)])
@pytest.mark.parametrize("a_major,b_major", [("K", "MN"), ("K", "K"), ("MN", "MN"), ("MN", "K")])
def test_bmm_exact(L, M, N, K, a_major, b_major):
    check_bmm(L, M, N, K, "bf16" if (M + N) % 2 == 0 else "f16", a_major, b_major, seed=L + M)


def test_bmm_strided_batches_and_out():
    rng = np.random.default_rng(9)
    a, b = ints(rng, (8, 64, 128)), ints(rng, (8, 128, 96))
    big_a = torch.from_numpy(np.concatenate([a, a], axis=0)).bfloat16().cuda()[::2]       # batch stride 2 M K
    db = torch.from_numpy(b).bfloat16().cuda()
    out = torch.empty((8, 64, 96), dtype=torch.bfloat16, device="cuda")
    cute_py.bmm(big_a, db, out=out)
    want = np.einsum("lmk,lkn->lmn", np.concatenate([a, a], axis=0)[::2], b)
    assert torch.equal(out, torch.from_numpy(want).bfloat16().cuda())
    col = torch.empty((8, 96, 64), dtype=torch.bfloat16, device="cuda").transpose(1, 2)   # column-major D: direct
    cute_py.bmm(big_a, db, out=col)
    assert torch.equal(col, torch.from_numpy(want).bfloat16().cuda())


@pytest.mark.parametrize("spec", [dict(tile=(128, 256, 64)), dict(tile=(64, 128, 64), consumers=1),
                                  dict(tile=(128, 128, 64), cluster=(2, 1)), dict(tile=(128, 128, 64),
                                  schedule="pingpong"), dict(tile=(128, 128, 64), epilogue="direct"),
                                  dict(tile=(128, 128, 64), scheduler="stream_k")])
def test_bmm_explicit_specs(spec):
    s = GemmSpec(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(1,N,ldb_l)", c="(M,N,L):(N,1,ldd_l)", **spec)
    check_bmm(6, 300, 520, 192, spec=s, seed=2)


def test_grouped_gemm_3d_is_a_batch_and_matches_torch():
    d = check_bmm(4, 256, 128, 64, op=lambda a, b, spec: cute_py.grouped_gemm(a, b, spec=spec))
    if hasattr(torch, "_grouped_mm"):
        rng = np.random.default_rng(0)
        a = torch.from_numpy(ints(rng, (4, 256, 64))).bfloat16().cuda()
        b = torch.from_numpy(ints(rng, (4, 64, 128))).bfloat16().cuda()
        assert torch.equal(cute_py.grouped_gemm(a, b), torch._grouped_mm(a, b.transpose(-2, -1).contiguous()
                                                                             .transpose(-2, -1)))
    assert d.shape == (4, 256, 128)


def test_bmm_bad_input_is_refused():
    a = torch.zeros((4, 64, 64), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(GemmInputError, match="bmm: batch counts differ"):
        cute_py.bmm(a, torch.zeros((3, 64, 64), dtype=torch.bfloat16, device="cuda"))
    with pytest.raises(GemmInputError, match="bmm: a and b must be 3-D"):
        cute_py.bmm(a[0], a[0])
    bcast = a[:1].expand(4, 64, 64)                     # group stride 0: staged (copied once per batch entry)
    torch.testing.assert_close(cute_py.bmm(a, bcast).float(), torch.bmm(a.float(), bcast.float()), rtol=0, atol=0)


# ---- fp8 groups along M -----------------------------------------------------------------------------------------

F8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def fp8_moe(sizes, N, K, mode, t, rng):
    """Small-integer fp8 a (total_M, K), K-major b (G, K, N), offs, power-of-two scales of ``mode``, and the
    float64 reference of D."""
    M, G = sum(sizes), len(sizes)
    a, b = ints(rng, (M, K)), ints(rng, (G, K, N))
    da = torch.from_numpy(a).to(F8[t]).cuda()
    db = torch.from_numpy(b.transpose(0, 2, 1).copy()).to(F8[t]).cuda().transpose(-2, -1)
    offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    p2 = lambda *s: np.exp2(rng.integers(-2, 3, size=s)).astype(np.float64)  # noqa: E731
    kb, nb = -(-K // 128), -(-N // 128)
    if mode == "row":
        sa, sb = p2(M), p2(G, N)
        ea, eb = np.broadcast_to(sa[:, None], (M, K)), np.broadcast_to(sb[:, None, :], (G, K, N))
    else:
        sa, sb = p2(M, kb), p2(G, kb, nb)
        ea = np.repeat(sa, 128, axis=1)[:, :K]
        eb = np.repeat(np.repeat(sb, 128, axis=1), 128, axis=2)[:, :K, :N]
    ref = moe_reference(a * ea, b * eb, sizes)
    return da, db, offs, torch.from_numpy(sa).float().cuda(), torch.from_numpy(sb).float().cuda(), ref


@pytest.mark.parametrize("mode", ["row", "block"])
@pytest.mark.parametrize("fast", [False, True])
def test_fp8_moe_exact(mode, fast):
    if mode == "block" and fast:
        pytest.skip("blockwise scales always promote")
    rng = np.random.default_rng(21)
    sizes = uneven(16, 64, rng)
    t = "e4m3" if fast else "e5m2"
    da, db, offs, sa, sb, ref = fp8_moe(sizes, 384, 272, mode, t, rng)
    for out_t, tt in (("bf16", torch.bfloat16), ("f32", torch.float32)):
        d = cute_py.grouped_gemm(da, db, offs, scale_a=sa, scale_b=sb, use_fast_accum=fast, out_dtype=out_t)
        want = torch.from_numpy(ref).to(tt).cuda()
        assert d.dtype == tt and torch.equal(d, want), (mode, fast, out_t, (d.double() - want.double()).abs().max())


@pytest.mark.parametrize("mode", ["row", "block"])
def test_fp8_moe_ue8m0_scales_exact(mode):
    """DeepSeek-V3.1's MoE layers: groups along M with UE8M0 (float8_e8m0fnu) scales, as exact as f32 ones."""
    rng = np.random.default_rng(24)
    sizes = uneven(8, 96, rng)
    da, db, offs, sa, sb, ref = fp8_moe(sizes, 384, 400, mode, "e4m3", rng)
    e8 = torch.float8_e8m0fnu
    d = cute_py.grouped_gemm(da, db, offs, scale_a=sa.to(e8), scale_b=sb.to(e8))
    assert torch.equal(d, torch.from_numpy(ref).to(torch.bfloat16).cuda()), mode


def test_fp8_moe_explicit_specs():
    rng = np.random.default_rng(22)
    sizes = uneven(9, 128, rng)
    da, db, offs, sa, sb, ref = fp8_moe(sizes, 256, 256, "row", "e4m3", rng)
    for kw in (dict(tile=(128, 256, 128), fast_accum=True), dict(tile=(128, 128, 128)),
               dict(tile=(64, 128, 128), schedule="pingpong"), dict(tile=(128, 128, 128), cluster=(2, 1))):
        s = GemmSpec(dtype="e4m3", scale="row", b="(N,K,L):(K,1,ldb_l)", **kw)
        d = cute_py.grouped_gemm(da, db, offs, scale_a=sa, scale_b=sb, use_fast_accum=s.fast_accum, spec=s)
        assert torch.equal(d, torch.from_numpy(ref).to(torch.bfloat16).cuda()), s.name


def test_fp8_moe_matches_torch_scaled_grouped_mm():
    if not hasattr(torch, "_scaled_grouped_mm"):
        pytest.skip("torch has no _scaled_grouped_mm")
    rng = np.random.default_rng(23)
    sizes = [128, 256, 0, 384]                       # torch's kernel wants groups of 16-row multiples
    da, db, offs, sa, sb, _ = fp8_moe(sizes, 256, 256, "row", "e4m3", rng)
    try:
        want = torch._scaled_grouped_mm(da, db, sa, sb, offs=offs, out_dtype=torch.bfloat16)
    except RuntimeError as e:                        # pragma: no cover - a torch build without the kernel
        pytest.skip(f"torch._scaled_grouped_mm refused: {str(e).splitlines()[0]}")
    assert torch.equal(cute_py.grouped_gemm(da, db, offs, scale_a=sa, scale_b=sb), want)


def test_fp8_moe_bad_scales_are_refused():
    rng = np.random.default_rng(24)
    da, db, offs, sa, sb, _ = fp8_moe([10, 20], 128, 128, "row", "e4m3", rng)
    with pytest.raises(GemmInputError, match="grouped_gemm: scale shapes .* name no scale mode"):
        cute_py.grouped_gemm(da, db, offs, scale_a=sa, scale_b=sb[:1])
    with pytest.raises(GemmInputError, match="fp8 operands need scale_a and scale_b"):
        cute_py.grouped_gemm(da, db, offs)
    with pytest.raises(GemmInputError, match="scale_b is missing"):
        cute_py.grouped_gemm(da, db, offs, scale_a=sa)


# ---- groups along K (the weight gradient) -----------------------------------------------------------------------

def check_k_groups(sizes, M, N, t="bf16", spec=None, seed=0):
    """a = x.t() (M, total_K) and b = dy (total_K, N), both MN-major; D[g] = a[:, group g] @ b[group g, :]."""
    rng = np.random.default_rng(seed)
    K = sum(sizes)
    x, dy = ints(rng, (K, M)), ints(rng, (K, N))
    da = torch.from_numpy(x).to(T[t]).cuda().t()
    db = torch.from_numpy(dy).to(T[t]).cuda()
    offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    d = cute_py.grouped_gemm(da, db, offs, spec=spec)
    ref, k = np.zeros((len(sizes), M, N)), 0
    for g, n in enumerate(sizes):
        ref[g] = x[k:k + n].T @ dy[k:k + n]
        k += n
    want = torch.from_numpy(ref).to(T[t]).cuda()
    assert d.shape == want.shape and torch.equal(d, want), (sizes[:8], M, N, (d.double() - want.double()).abs().max())


@pytest.mark.parametrize("G", [1, 8, 64])
def test_k_groups_uneven(G):
    rng = np.random.default_rng(G + 100)
    sizes = [1000] if G == 1 else uneven(G, 64, rng)          # zeros, 1, 63, 64, 65 columns
    check_k_groups(sizes, 256, 192, "bf16" if G % 2 else "f16", seed=G)


@pytest.mark.parametrize("spec", [dict(tile=(128, 256, 64)), dict(tile=(128, 128, 64), schedule="pingpong"),
                                  dict(tile=(64, 128, 64), consumers=1), dict(tile=(128, 128, 64), epilogue="direct"),
                                  dict(tile=(128, 128, 64), cluster=(2, 1)), dict(tile=(128, 256, 64), cluster=(1, 2)),
                                  dict(tile=(128, 128, 64), scheduler="stream_k"),
                                  dict(tile=(128, 128, 64), scheduler="stream_k", cluster=(2, 1),
                                       schedule="pingpong")])
def test_k_groups_explicit_specs(spec):
    rng = np.random.default_rng(31)
    s = GemmSpec(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)", **spec)
    check_k_groups(uneven(10, 64, rng), 320, 264, spec=s, seed=31)


def test_k_groups_refuse_k_major_and_bad_offsets():
    a = torch.zeros((64, 300), dtype=torch.bfloat16, device="cuda")
    b = torch.zeros((300, 64), dtype=torch.bfloat16, device="cuda")
    offs = torch.tensor([100, 300], dtype=torch.int32, device="cuda")
    with pytest.raises(GemmInputError, match="grouped_gemm: groups along K read a and b with K outermost"):
        cute_py.grouped_gemm(a, b, offs)
    with pytest.raises(GemmInputError, match=r"offs\[1\] = 299 must be the column count of a \(K\), 300"):
        cute_py.grouped_gemm(a.t().contiguous().t(), b, torch.tensor([100, 299], dtype=torch.int32, device="cuda"))


# ---- torch.ops.cute_py.grouped_mm -----------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["m", "k", "batch"])
def test_torch_operator_forward_and_gradients_are_exact(form):
    """The operator's CUDA kernel and its gradients (grouped GEMMs again) against float64 on small integers."""
    import cute_py.torch  # noqa: F401  (registers the operator)
    rng = np.random.default_rng(41)
    t = lambda *s: torch.from_numpy(ints(rng, s)).to(torch.bfloat16).cuda()  # noqa: E731
    if form == "m":
        sizes = [0, 64, 129, 300, 1]
        a, b = t(sum(sizes), 128), t(len(sizes), 192, 128).transpose(-2, -1)
        offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    elif form == "k":
        sizes = [64, 0, 200, 72]
        a, b = t(sum(sizes), 96).t(), t(sum(sizes), 136)
        offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    else:
        a, b, offs = t(4, 136, 64), t(4, 64, 96), None
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    d = torch.ops.cute_py.grouped_mm(a, b, offs)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    if form == "batch":
        ref = a64 @ b64
    else:
        ends = offs.tolist()
        parts = [(s, e) for s, e in zip([0] + ends[:-1], ends)]
        ref = (torch.cat([a64[s:e] @ b64[g] for g, (s, e) in enumerate(parts)]) if form == "m" else
               torch.stack([a64[:, s:e] @ b64[s:e] for s, e in parts]))
    bf = torch.bfloat16                                 # each result is the float64 one rounded once to bf16
    assert torch.equal(d, ref.detach().to(bf))
    grad = t(*d.shape)
    d.backward(grad)
    ref.backward(grad.double())
    assert torch.equal(a.grad, a64.grad.to(bf)) and torch.equal(b.grad, b64.grad.to(bf))


# ---- autotune -------------------------------------------------------------------------------------------------------

def test_autotune_grouped_records_the_winner_that_grouped_gemm_selects():
    """autotune(a, b, offs=...) times grouped candidates through grouped_gemm, checks each against the default's
    result, records the winner under the grouped problem's key; grouped_gemm then runs it."""
    from cute_py import autotune as at, tuned
    from cute_py.problem_groups import grouped_problem
    from cute_py.selection import select
    rng = np.random.default_rng(51)
    _, _, da, db, offs = moe_operands(uneven(16, 64, rng), 512, 256, "bf16", rng)
    base = select(grouped_problem(da, db, offs))
    specs = list(dict.fromkeys([base, base.replace(tile=(128, 128, 64), schedule="cooperative", consumers=2),
                                base.replace(tile=(128, 256, 64), schedule="cooperative", consumers=2, group=8)]))
    res = at.autotune(da, db, offs=offs, candidates=specs, reps=3, warmup=1, progress=False)
    assert res.best in specs and all(r.ok for r in res.rows), [(r.name, r.status) for r in res.rows]
    assert res.problem.grouping == "m" and "groups:m" in tuned.problem_key(res.problem, device=res.device)
    tuned._State.where = None
    assert select(grouped_problem(da, db, offs)) == res.best
    bat = at.autotune(torch.ones(4, 128, 64, dtype=torch.bfloat16, device="cuda"),
                      torch.ones(4, 64, 128, dtype=torch.bfloat16, device="cuda"), reps=2, warmup=0, batch=2,
                      progress=False, cache=False)
    assert bat.problem.grouping == "batch" and bat.best.grouping == "batch"


def test_moe_in_a_cuda_graph_reads_the_offsets_at_replay():
    """No host synchronisation: the launch is captured (check_offs is skipped while capturing by itself), and a
    replay after the offsets changed in place computes the new groups."""
    rng = np.random.default_rng(61)
    sizes = [100, 0, 200, 50]
    a, b, da, db, offs = moe_operands(sizes, 256, 128, "bf16", rng)
    out = torch.full((sum(sizes), 256), 7.0, dtype=torch.bfloat16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):                         # warm up (compile, prepare) outside the capture
        cute_py.grouped_gemm(da, db, offs, out=out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cute_py.grouped_gemm(da, db, offs, out=out)
    for new in ([100, 0, 200, 50], [0, 175, 100, 75], [350, 0, 0, 0]):
        offs.copy_(torch.tensor(np.cumsum(new), dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, torch.from_numpy(moe_reference(a, b, new)).to(torch.bfloat16).cuda()), new


# ---- stream-K over groups and batches: whole tiles for the first waves, the last ones shared by k-blocks ----------

@pytest.mark.parametrize("form", ["batch", "m", "k"])
def test_stream_k_over_more_than_a_wave_of_group_tiles(form):
    """More tiles than a wave (132 SMs), not a whole number of waves: data-parallel tiles, then stream-K tiles
    whose k-blocks are shared by CTAs and fixed up; groups along K with empty groups (an empty tile is one
    iteration, its zeros stored) and ragged ones."""
    rng = np.random.default_rng(77)
    if form == "batch":                                  # 20 x 3 x 5 = 300 tiles: 132 whole, 168 shared
        s = GemmSpec(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(1,N,ldb_l)", c="(M,N,L):(N,1,ldd_l)", scheduler="stream_k")
        check_bmm(20, 300, 520, 192, spec=s, seed=7)
    elif form == "m":
        s = GemmSpec(b="(N,K,L):(K,1,ldb_l)", scheduler="stream_k")
        check_moe(uneven(40, 128, rng), 512, 320, spec=s, seed=7)
    else:                           # 30 groups x 9 tiles = 270 tiles: groups 14 on are stream-K, empty ones too
        s = GemmSpec(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)", scheduler="stream_k")
        sizes = uneven(30, 64, rng)
        sizes[-5:] = [0, 1, 0, 65, 0]
        check_k_groups(sizes, 320, 264, spec=s, seed=7)
