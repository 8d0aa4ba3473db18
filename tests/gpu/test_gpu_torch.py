"""cute_py in PyTorch on the GPU: plain ``cute_py.gemm`` and the ``torch.ops.cute_py`` operators inside CUDA graph
capture and on non-default streams, ``torch.compile(fullgraph=True)`` of an MLP of ``cute_py.torch.Linear``
against eager and ``nn.Linear``, gradients against float64, a transformers model swapped and trained a step, and
``cute_py.torch.autotune`` on a model."""

from __future__ import annotations

import copy

import pytest

import cute_py
from cute_py import GemmInputError

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)

import cute_py.torch as ct  # noqa: E402

BF16 = torch.bfloat16


def ints(*shape, seed=0, dtype=BF16):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randint(-3, 4, shape, generator=g, device="cuda").to(dtype)


def exact(got, ref):
    torch.testing.assert_close(got.double(), ref.to(got.dtype).double(), rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------------------------
# plain cute_py.gemm: streams and graph capture


@pytest.mark.parametrize("warm", (True, False), ids=("warmed-up", "first-call-in-capture"))
def test_plain_gemm_is_captured_and_replayed(warm):
    a, b = ints(256, 128, seed=1), ints(192, 128, seed=2).t()
    d = torch.empty(256, 192, dtype=BF16, device="cuda")
    if warm:
        cute_py.gemm(a, b, out=d)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cute_py.gemm(a, b, out=d)
        fresh = cute_py.gemm(a, b, activation="relu")         # D allocated inside the capture (graph pool)
    a.copy_(ints(256, 128, seed=3))
    d.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    exact(d, a.double() @ b.double())
    exact(fresh, torch.relu(a.double() @ b.double()))


def test_stream_outside_the_capture_is_refused():
    a, b = ints(128, 64), ints(64, 128)
    other = torch.cuda.Stream()
    cute_py.gemm(a, b, stream=other)                          # no capture: any stream is fine
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(GemmInputError, match="being captured into a CUDA graph"):
        with torch.cuda.graph(graph):
            cute_py.gemm(a, b, stream=other)


def test_side_stream_that_joined_the_capture_and_split_k_workspace():
    from dataclasses import replace
    from cute_py.problem import Problem
    from cute_py.selection import heuristic
    a, b = ints(384, 512, seed=15), ints(512, 256, seed=16)
    d = torch.empty(384, 256, dtype=BF16, device="cuda")
    split = replace(heuristic(Problem.from_arrays(a, b, out=d)), split_k=2)
    side = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        side.wait_stream(torch.cuda.current_stream())       # `side` joins the capture
        cute_py.gemm(a, b, out=d, stream=side, spec=split)  # first call in a capture: its own workspace
        torch.cuda.current_stream().wait_stream(side)
    for seed in (17, 18):                                   # counters must be back to zero for the second replay
        new_a = ints(384, 512, seed=seed)
        a.copy_(new_a)
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        exact(d, new_a.double() @ b.double())
    exact(cute_py.gemm(a, b, spec=split), a.double() @ b.double())    # eager: the launch was not cached


def test_default_launch_is_on_torchs_current_stream():
    a, b = ints(512, 256, seed=4), ints(256, 512, seed=5)
    new_a = ints(512, 256, seed=6)
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(100_000_000)                        # ~50 ms of spinning ahead of the copy on `side`
        a.copy_(new_a)
        d = cute_py.gemm(a, b)                                # must run after the copy: same stream
    torch.cuda.synchronize()
    exact(d, new_a.double() @ b.double())


# ---------------------------------------------------------------------------------------------------------------
# the operators


def test_ops_on_a_side_stream_and_in_a_graph():
    x, w, bias = ints(300, 128, seed=7), ints(96, 128, seed=8), ints(96, seed=9)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x2 = x * 1                                            # produced on `side` after the sleep
        y = torch.ops.cute_py.gemm(x2, w.t(), bias=bias, activation="relu")
    torch.cuda.current_stream().wait_stream(side)
    exact(y, torch.relu(x.double() @ w.t().double() + bias.double()))

    lin = ct.Linear(128, 96, activation="relu", dtype=BF16, device="cuda")
    with torch.no_grad():
        lin.weight.copy_(w)
        lin.bias.copy_(bias)
    static_x = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(2):
            lin(static_x)                                     # warm-up on a side stream, as torch's docs ask
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_y = lin(static_x)
    new_x = ints(300, 128, seed=10)
    static_x.copy_(new_x)
    graph.replay()
    torch.cuda.synchronize()
    exact(static_y, torch.relu(new_x.double() @ w.t().double() + bias.double()))


@pytest.mark.parametrize("activation", (None, "relu", "gelu"))
def test_gradients_against_float64(activation):
    x = ints(200, 64, seed=11).requires_grad_()
    lin = ct.Linear(64, 72, activation=activation, dtype=BF16, device="cuda")
    with torch.no_grad():
        lin.weight.copy_(ints(72, 64, seed=12))
        lin.bias.copy_(ints(72, seed=13))
    grad = ints(200, 72, seed=14)
    y = lin(x)
    got = torch.autograd.grad(y, (x, lin.weight, lin.bias), grad)
    leaves = [t.detach().double().requires_grad_() for t in (x, lin.weight, lin.bias)]
    z = leaves[0] @ leaves[1].t() + leaves[2]
    ref = {None: z, "relu": torch.relu(z), "gelu": torch.nn.functional.gelu(z)}[activation]
    want = torch.autograd.grad(ref, leaves, grad.double())
    for g, w in zip(got, want):
        if activation == "gelu":          # gelu'(z) * grad is rounded to bf16 before the GEMMs read it
            assert float((g.double() - w).norm() / w.norm()) < 1e-2
        else:
            exact(g, w)
    assert lin.weight.grad is None        # autograd.grad leaves .grad alone


def test_compiled_mlp_matches_eager_and_nn_linear():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).to(
        "cuda", BF16)
    mine = copy.deepcopy(ref)
    assert ct.swap_linear(mine).swapped == ["0", "2"]
    compiled = torch.compile(mine, fullgraph=True)
    x = torch.randn(512, 256, device="cuda", dtype=BF16, requires_grad=True)
    outs = {}
    for name, model in (("nn", ref), ("eager", mine), ("compiled", compiled)):
        y = model(x)
        grads = torch.autograd.grad(y.float().square().mean(), (x, *model.parameters()))
        outs[name] = (y, *grads)
    for name in ("eager", "compiled"):
        for got, want in zip(outs[name], outs["nn"]):
            rel = float((got.double() - want.double()).norm() / want.double().norm())
            assert rel < 2e-2, (name, rel)
    for got, want in zip(outs["compiled"], outs["eager"]):
        rel = float((got.double() - want.double()).norm() / want.double().norm())
        assert rel < 1e-2, rel


def test_a_transformers_model_swapped_and_run_forward_and_backward():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    torch.manual_seed(0)
    ref = transformers.LlamaForCausalLM(config).to("cuda", BF16)
    model = copy.deepcopy(ref)
    report = ct.swap_linear(model)
    assert len(report.swapped) == 2 * 7 + 1 and not report.skipped, str(report)   # q k v o gate up down, lm_head
    ids = torch.randint(0, 512, (4, 64), device="cuda")
    losses = []
    for m in (ref, model):
        out = m(input_ids=ids, labels=ids)
        out.loss.backward()
        losses.append(out.loss.float())
    assert abs(float(losses[0] - losses[1])) < 2e-2 * float(losses[0])
    for (name, p), q in zip(ref.named_parameters(), model.parameters()):
        rel = float((q.grad.double() - p.grad.double()).norm() / p.grad.double().norm().clamp_min(1e-30))
        assert rel < 5e-2, (name, rel)


def test_autotune_a_model_fills_the_tuned_table(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))
    from cute_py import tuned
    from cute_py.autotune import candidate_specs
    from cute_py.selection import heuristic
    tuned.clear_cache()
    lin = ct.Linear(512, 256, dtype=BF16, device="cuda")
    x = torch.randn(1024, 512, device="cuda", dtype=BF16)
    calls = ct.collect(lin, (x,), backward=False)
    assert len(calls) == 1 and calls[0]["a"][0] == (1024, 512)

    def two(problem):
        return candidate_specs(problem.M, problem.N, problem.K, heuristic(problem))[:2]
    from cute_py.problem import Problem
    problem = Problem.from_arrays(x, lin.weight.t(), bias=lin.bias)
    results = ct.autotune(lin, (x,), backward=False, progress=False, candidates=two(problem), reps=2, warmup=1,
                          batch=2)
    assert len(results) == 1
    (key, result), = results.items()
    assert tuned.lookup(problem) == result.best


def test_scaled_gemm_operator_matches_the_function_and_compiles():
    """torch.ops.cute_py.scaled_gemm runs cute_py.scaled_gemm (blockwise here), also under torch.compile."""
    M, N, K = 512, 384, 1024
    g = torch.Generator(device="cuda").manual_seed(3)
    a = torch.randn(M, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
    w = torch.randn(N, K, device="cuda", generator=g).to(torch.float8_e4m3fn)
    sa = (torch.rand(K // 128, M, device="cuda", generator=g) + 0.5).t()
    sb = torch.rand(K // 128, N // 128, device="cuda", generator=g) + 0.5
    want = cute_py.scaled_gemm(a, w.t(), sa, sb)
    assert torch.equal(torch.ops.cute_py.scaled_gemm(a, w.t(), sa, sb), want)
    f = torch.compile(lambda x, y: torch.ops.cute_py.scaled_gemm(x, y, sa, sb), fullgraph=True)
    assert torch.equal(f(a, w.t()), want)
