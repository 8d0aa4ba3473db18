"""Every pair of features that composes (cute_py.emit.collectives.features) runs exactly on the GPU.

Each composing pair's spec runs once through the entry point its problem needs (gemm, scaled_gemm, grouped_gemm
or bmm) on small integers (scales of one), so D must equal the float64 reference rounded once to bf16; GELU is
compared within bf16 rounding. Shapes are ragged (M, N, K not tile multiples) and give several tiles per CTA
where the schedule has them.

Each pair runs in a process of its own, so that a fault in one cannot be charged to the next. (Run one after
another in one process, groups along K after groups along M once hit an illegal address: the ragged K map's base
lay before the operand, in unmapped memory when the operand began a fresh allocation; benchmarks/NOTES.md, version
10c, and benchmarks/pair_sequence.py, which runs pairs in one process.)
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import cute_py
from cute_py.emit.collectives.features import feature_pairs, spec_of

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
COMPOSING = [pair for pair, out in feature_pairs().items() if out == "composes"]
M, N, K = 1160, 1304, 640
MS, NS = 296, 328                                  # the extents of a batch's and of groups along K's D
SIZES = [0, 1, 127, 128, 129, 0, 389, 51]


def ints(rng, *shape):
    return rng.integers(-3, 4, size=shape).astype(np.float64)


def k_major(x64, dtype):
    """A device copy of (..., K, N) float64 with K contiguous (a transposed row-major (..., N, K))."""
    return torch.from_numpy(np.swapaxes(x64, -1, -2).copy()).to(dtype).cuda().transpose(-2, -1)


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def epilogue_of(spec, rng, c_shape, bias_shape) -> tuple:
    """``(keyword arguments, C, bias)`` of ``spec``'s epilogue: with ``spec.beta``, small-integer C of
    ``c_shape`` and bias of ``bias_shape`` (float64, None without), beta = 1 and the spec's activation."""
    if not spec.beta:
        return {}, None, None
    c, bias = ints(rng, *c_shape), ints(rng, *bias_shape)
    return (dict(c=torch.from_numpy(c).bfloat16().cuda(), bias=torch.from_numpy(bias).bfloat16().cuda(), beta=1.0,
                 activation=spec.activation), c, bias)


def finish(spec, d, x, c, bias_rows):
    """``(D, reference, exact)``: ``x`` (A @ B) plus C and the bias broadcast to its rows, through GELU."""
    if c is None:
        return d, x, True
    return d, gelu(x + c + bias_rows), False


def a_operand(a, t, spec):
    """The device copy of a (..., M, K) row-major float64 ``a``; read without TMA, a padded view whose rows allow
    8-byte loads at most."""
    if not spec.load_a:
        return torch.from_numpy(a).to(t).cuda()
    pad = 8 // (1 if t == torch.float8_e4m3fn else 2)
    dev = torch.zeros(*a.shape[:-1], a.shape[-1] + pad, dtype=t, device="cuda")[..., pad:]
    dev.copy_(torch.from_numpy(a).to(t))
    return dev


def run(spec, rng):
    """``(D, float64 reference, exact)`` of ``spec`` on small-integer operands."""
    fp8 = spec.dtype == "e4m3"
    t = torch.float8_e4m3fn if fp8 else torch.bfloat16
    if spec.grouping == "m":
        Mt, G = sum(SIZES), len(SIZES)
        a, b = ints(rng, Mt, K), ints(rng, G, K, N)
        offs = torch.tensor(np.cumsum(SIZES), dtype=torch.int32, device="cuda")
        kw = {}
        if fp8:
            kw = dict(scale_a=torch.ones(Mt, device="cuda"), scale_b=torch.ones(G, N, device="cuda"),
                      use_fast_accum=spec.fast_accum)
            if spec.scale == "tensor":
                kw.update(scale_a=torch.ones((), device="cuda"), scale_b=torch.ones((), device="cuda"))
            if spec.scale == "block":
                kw.update(scale_a=torch.ones(Mt, -(-K // 128), device="cuda"),
                          scale_b=torch.ones(G, -(-K // 128), -(-N // 128), device="cuda"))
        ekw, c, bias = epilogue_of(spec, rng, (Mt, N), (G, N))          # a bias per group (expert)
        group = np.repeat(np.arange(G), SIZES)
        x = np.einsum("mk,mkn->mn", a, b[group])
        d = cute_py.grouped_gemm(a_operand(a, t, spec), k_major(b, t), offs, spec=spec, **kw, **ekw)
        return finish(spec, d, x, c, None if bias is None else bias[group])
    if spec.grouping == "k":
        Kt, G = sum(SIZES), len(SIZES)
        x, dy = ints(rng, Kt, MS), ints(rng, Kt, NS)
        offs = torch.tensor(np.cumsum(SIZES), dtype=torch.int32, device="cuda")
        ekw, c, bias = epilogue_of(spec, rng, (G, MS, NS), (NS,))     # one bias for every group
        ends = np.cumsum(SIZES)
        ref = np.stack([x[e - s:e].T @ dy[e - s:e] for s, e in zip(SIZES, ends)])
        d = cute_py.grouped_gemm(torch.from_numpy(x).to(t).cuda().t(), torch.from_numpy(dy).to(t).cuda(), offs,
                                 spec=spec, **ekw)
        return finish(spec, d, ref, c, bias)
    if spec.grouping == "batch":
        L = 3
        a, b = ints(rng, L, MS, K), ints(rng, L, K, NS)
        if fp8:                                            # a batch of fp8 GEMMs: grouped_gemm of 3-D operands
            sk = {"tensor": (torch.ones((), device="cuda"), torch.ones((), device="cuda")),
                  "row": (torch.ones(L, MS, device="cuda"), torch.ones(L, NS, device="cuda")),
                  "block": (torch.ones(L, MS, -(-K // 128), device="cuda"),
                            torch.ones(L, -(-K // 128), -(-NS // 128), device="cuda"))}[spec.scale]
            d = cute_py.grouped_gemm(a_operand(a, t, spec), k_major(b, t), scale_a=sk[0], scale_b=sk[1], spec=spec,
                                     use_fast_accum=spec.fast_accum)
            return d, a @ b, True
        ekw, c, bias = epilogue_of(spec, rng, (L, MS, NS), (L, NS))    # a bias per batch entry
        d = cute_py.bmm(a_operand(a, t, spec), k_major(b, t), spec=spec, **ekw)
        return finish(spec, d, a @ b, c, None if bias is None else bias[:, None, :])
    a, b = ints(rng, M, K), ints(rng, K, N)
    a_dev = a_operand(a, t, spec)
    if fp8:
        ones = {"tensor": (torch.ones((), device="cuda"), torch.ones((), device="cuda")),
                "row": (torch.ones(M, 1, device="cuda"), torch.ones(1, N, device="cuda")),
                "block": (torch.ones(-(-K // 128), M, device="cuda").t(),
                          torch.ones(-(-K // 128), -(-N // 128), device="cuda"))}[spec.scale]
        d = cute_py.scaled_gemm(a_dev, k_major(b, t), *ones, spec=spec, use_fast_accum=spec.fast_accum)
        return d, a @ b, True
    ekw, c, bias = epilogue_of(spec, rng, (M, N), (N,))
    return finish(spec, cute_py.gemm(a_dev, k_major(b, t), spec=spec, **ekw), a @ b, c, bias)


UNREACHABLE = {p: "scaled_gemm takes no C, beta or activation: the kernel compiles (tests/test_feature_pairs.py) but "
                  "no entry point runs it" for p in COMPOSING if "beta, bias, gelu" in p and p[0].startswith("fp8")}


def check_pair(pair):
    """Run ``pair`` here and compare D with its reference (an AssertionError says what is wrong)."""
    spec = spec_of(*pair)
    rng = np.random.default_rng(len(pair[0]) * 31 + len(pair[1]))
    d, ref, exact = run(spec, rng)
    torch.cuda.synchronize()
    want = torch.from_numpy(ref).bfloat16().float()
    got = d.float().cpu()
    assert got.shape == want.shape, (spec.name, got.shape, want.shape)
    if exact:
        bad = (got != want).sum().item()
        assert bad == 0, f"{spec.name}: {bad} of {want.numel()} elements wrong"
    else:
        assert torch.allclose(got, want, rtol=1e-2, atol=1e-2), spec.name


@pytest.mark.parametrize("pair", COMPOSING, ids=lambda p: f"{p[0]} + {p[1]}")
def test_composing_pair_is_exact(pair):
    if pair in UNREACHABLE:
        pytest.skip(UNREACHABLE[pair])
    code = (f"import sys; sys.path[:0] = [{ROOT!r}, {HERE!r}]\n"
            f"import test_gpu_feature_pairs as t\nt.check_pair({pair!r})\n")
    run_ = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run_.returncode == 0, run_.stderr.strip().splitlines()[-1] if run_.stderr.strip() else run_.returncode
