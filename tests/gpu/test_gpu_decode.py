"""Decode-size M on the GPU: ``cute_py.gemm`` without a spec runs M <= 32 as swap-AB (``D^T = b^T a^T``, D written
through its transpose); exact on small integers for every M from 1 to 40 around the switch, all four majors,
unaligned operands, C, bias, activation, a given and an allocated D, repeated calls (the prepared launch) and
CUDA-graph capture."""

from __future__ import annotations

import pytest

import cute_py
from cute_py.problem import Problem
from cute_py.selection import swaps_ab

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

from test_gpu_shapes import check, ints, laid_out  # noqa: E402


def operands(M, N, K, layout, gen, dtype="bf16"):
    a = laid_out(ints((M, K), gen, dtype), 1 if layout[0] == "t" else 0)
    b = laid_out(ints((K, N), gen, dtype), 1 if layout[1] == "t" else 0)
    return a, b


@pytest.mark.parametrize("layout", ["tn", "tt", "nn", "nt"])
def test_every_m_around_the_switch_is_exact(layout):
    gen = torch.Generator(device="cuda").manual_seed(3)
    for M in list(range(1, 41)) + [64, 128]:
        a, b = operands(M, 1000, 520, layout, gen)
        d = cute_py.gemm(a, b)
        assert d.shape == (M, 1000) and d.stride() == (1000, 1)
        check(d, a.double() @ b.double(), "bf16", f"M = {M} {layout}")
        assert swaps_ab(Problem.from_arrays(a, b)) == (M <= 32)


def test_epilogue_options_unaligned_operands_and_a_given_out():
    gen = torch.Generator(device="cuda").manual_seed(5)
    for M, N, K in ((1, 4096, 4096), (7, 2112, 1001), (16, 300, 999), (32, 1000, 64)):
        a, b = operands(M, N, K, "tn", gen, "f16")
        c, bias = ints((M, N), gen, "f16"), ints((N,), gen, "f16")
        out = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
        d = cute_py.gemm(a, b, c, beta=1.0, bias=bias, activation="relu", out=out)
        assert d is out
        check(d, torch.relu(a.double() @ b.double() + c.double() + bias.double()), "f16", f"{M}x{N}x{K}")
        rows = ints((M,), gen, "f16")                          # a bias of length M: one per row of D
        check(cute_py.gemm(a, b, bias=rows), a.double() @ b.double() + rows.double()[:, None], "f16", "row bias")


def test_repeated_calls_and_graph_capture():
    gen = torch.Generator(device="cuda").manual_seed(7)
    a, b = operands(8, 4096, 2048, "tn", gen)
    want = a.double() @ b.double()
    first, second = cute_py.gemm(a, b), cute_py.gemm(a, b)        # the second call: the prepared launch
    assert first.data_ptr() != second.data_ptr()
    check(first, want, "bf16", "first")
    check(second, want, "bf16", "second")
    out = torch.empty(8, 4096, dtype=torch.bfloat16, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        cute_py.gemm(a, b, out=out)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cute_py.gemm(a, b, out=out)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    check(out, want, "bf16", "graph replay")


def test_linear_layer_decode_step():
    """nn.Linear's layout (x @ W.T + b, W (N, K) row-major) through cute_py.torch.Linear at one token."""
    from cute_py.torch import Linear
    gen = torch.Generator(device="cuda").manual_seed(9)
    layer = Linear(512, 4096, bias=True, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        layer.weight.copy_(ints((4096, 512), gen))
        layer.bias.copy_(ints((4096,), gen))
        x = ints((1, 512), gen)
        got = layer(x)
    check(got, x.double() @ layer.weight.double().t() + layer.bias.double(), "bf16", "Linear")


@pytest.mark.parametrize("scale,fast", [("tensor", True), ("tensor", False), ("row", True), ("row", False)])
def test_fp8_decode_swaps_and_trades_the_scales(scale, fast):
    """fp8 at M <= 32 runs swapped, scale_a and scale_b trading places (and a row-wise scale its transpose)."""
    gen = torch.Generator(device="cuda").manual_seed(11)
    for M, N, K in ((1, 4096, 512), (8, 2112, 384), (32, 512, 512)):   # |sums| < 2^13: exact with fast_accum
        x, w = ints((M, K), gen, "f16"), ints((N, K), gen, "f16")
        x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
        if scale == "tensor":
            sa, sb = torch.full((), 2.0, device="cuda"), torch.full((), 4.0, device="cuda")
            want = (x.double() @ w.double().t()) * 8.0
        else:
            sa = (torch.arange(M, device="cuda", dtype=torch.float32)[:, None] % 4 + 1) / 4     # dyadic: the
            sb = (torch.arange(N, device="cuda", dtype=torch.float32)[None, :] % 4) / 2         # products exact
            want = sa.double() * (x.double() @ w.double().t()) * sb.double()
        d = cute_py.scaled_gemm(x8, w8.t(), sa, sb, out_dtype="f32", use_fast_accum=fast)
        p = Problem.from_arrays(x8, w8.t(), scale_a=sa, scale_b=sb, fast_accum=fast, out_dtype="f32",
                                op="scaled_gemm")
        assert swaps_ab(p)
        check(d, want, "f32", f"{scale} {fast} {M}x{N}x{K}")
