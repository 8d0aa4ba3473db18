"""cute_py.torch on the CPU: operator registration and schemas, fake-tensor propagation, ``opcheck``, the
autograd formulas against float64 references, ``torch.compile(fullgraph=True)`` without graph breaks, Linear's
state_dict both ways, swap_linear's report. The CUDA kernels are tested in tests/gpu/test_gpu_torch.py."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import cute_py.torch as ct  # noqa: E402
from cute_py import GemmInputError  # noqa: E402
from cute_py.torch.ops import problem_of  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

BF16, F16, F32 = torch.bfloat16, torch.float16, torch.float32


def small_ints(*shape, dtype=BF16, lo=-3, hi=4, seed=0):
    """Small integers: exact in bf16/f16, so a float32-accumulated GEMM equals the float64 reference."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def reference(a, b, c=None, bias=None, alpha=1.0, beta=0.0, activation=None):
    z = alpha * (a.double() @ b.double())
    if c is not None:
        z = z + beta * c.double()
    if bias is not None:
        z = z + (bias.double() if bias.shape[0] == b.shape[1] else bias.double()[:, None])
    return {None: z, "relu": torch.relu(z), "gelu": torch.nn.functional.gelu(z)}[activation]


def test_importing_cute_py_imports_no_torch():
    code = "import sys, cute_py, cute_py.gemm, cute_py.autotune; print([m for m in sys.modules if m.startswith('torch')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_schemas():
    assert str(torch.ops.cute_py.gemm.default._schema) == (
        "cute_py::gemm(Tensor a, Tensor b, Tensor? c=None, Tensor? bias=None, float alpha=1., float beta=0., "
        "str? activation=None, ScalarType? out_dtype=None) -> Tensor")
    written = re.sub(r"\(a\d+!\)", "(a!)", str(torch.ops.cute_py.gemm_out.default._schema))  # alias set's name
    assert written == (
        "cute_py::gemm_out(Tensor a, Tensor b, Tensor(a!) out, Tensor? c=None, Tensor? bias=None, float alpha=1., "
        "float beta=0., str? activation=None) -> ()")


# every major combination, both bias modes, each activation, f32 output, C with beta
CASES = [
    dict(a=(32, 16, "K"), b=(16, 24, "K")),
    dict(a=(32, 16, "MN"), b=(16, 24, "K"), bias="col", activation="relu"),
    dict(a=(32, 16, "K"), b=(16, 24, "MN"), bias="row", activation="gelu"),
    dict(a=(32, 16, "MN"), b=(16, 24, "MN"), c=True, beta=0.5, alpha=2.0),
    dict(a=(32, 16, "K"), b=(16, 24, "K"), out_dtype=F32, bias="col", c=True, beta=-1.0),
    dict(a=(8, 16, "K"), b=(16, 8, "K"), dtype=F16, activation="relu"),
]


def operands(case, requires_grad=False):
    dt = case.get("dtype", BF16)
    out_t = case.get("out_dtype") or dt

    def matrix(rows, cols, major, seed):
        m = small_ints(rows, cols, dtype=dt, seed=seed) if major == "K" else small_ints(cols, rows, dtype=dt,
                                                                                       seed=seed).t()
        return m.requires_grad_(requires_grad)
    (M, K, am), (_, N, bm) = case["a"], case["b"]
    a = matrix(M, K, am, 1)
    b = matrix(K, N, "MN" if bm == "K" else "K", 2)    # b (K, N): "K"-major b has K contiguous, i.e. column-major
    bias = {"col": small_ints(N, dtype=out_t, seed=3), "row": small_ints(M, dtype=out_t, seed=3), None: None}[
        case.get("bias")]
    c = small_ints(M, N, dtype=out_t, seed=4) if case.get("c") else None
    for t in (bias, c):
        if t is not None:
            t.requires_grad_(requires_grad)
    return a, b, c, bias


def kwargs(case):
    return dict(alpha=case.get("alpha", 1.0), beta=case.get("beta", 0.0), activation=case.get("activation"))


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_cpu_kernel_matches_float64(case):
    a, b, c, bias = operands(case)
    d = torch.ops.cute_py.gemm(a, b, c, bias, out_dtype=case.get("out_dtype"), **kwargs(case))
    ref = reference(a, b, c, bias, **kwargs(case))
    assert d.dtype == (case.get("out_dtype") or a.dtype) and d.shape == ref.shape and d.stride() == (ref.shape[1], 1)
    tol = 1e-6 if case.get("activation") == "gelu" else 0     # gelu in float32 vs float64: an ulp before rounding
    torch.testing.assert_close(d.double(), ref.to(d.dtype).double(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_opcheck(case):
    a, b, c, bias = operands(case, requires_grad=True)
    torch.library.opcheck(torch.ops.cute_py.gemm, (a, b, c, bias),
                          dict(out_dtype=case.get("out_dtype"), **kwargs(case)))
    a, b, c, bias = operands(case)
    out = torch.empty(a.shape[0], b.shape[1], dtype=case.get("out_dtype") or a.dtype)
    torch.library.opcheck(torch.ops.cute_py.gemm_out, (a, b, out, c, bias), kwargs(case))


def test_fake_tensors_propagate_shape_dtype_and_strides():
    with FakeTensorMode():
        a, w = torch.empty(4096, 1024, dtype=BF16), torch.empty(512, 1024, dtype=BF16)
        d = torch.ops.cute_py.gemm(a, w.t(), out_dtype=F32)
        assert (d.shape, d.dtype, d.stride()) == ((4096, 512), F32, (512, 1))
        with pytest.raises(GemmInputError, match="inner dimensions differ"):
            torch.ops.cute_py.gemm(a, w)
        d = torch.ops.cute_py.gemm(torch.empty(64, 12, dtype=BF16), torch.empty(12, 64, dtype=BF16))
        assert d.shape == (64, 64)                       # 24-byte rows: staged for TMA, not refused


@pytest.mark.parametrize("bad, match", [
    (lambda: (small_ints(8, 16), small_ints(16, 8, dtype=F16)), "a is bf16 but b is f16"),
    (lambda: (small_ints(8, 16, dtype=torch.float64), small_ints(16, 8)), "dtype torch.float64"),
])
def test_bad_input_is_refused_by_every_kernel(bad, match):
    a, b = bad()
    with pytest.raises(GemmInputError, match=match):
        torch.ops.cute_py.gemm(a, b)
    with FakeTensorMode() as mode:
        with pytest.raises(GemmInputError, match=match):
            torch.ops.cute_py.gemm(mode.from_tensor(a), mode.from_tensor(b))


def test_operands_in_any_strides_are_read():
    x = small_ints(16, 33)[:, 1:]                        # starts 2 bytes into a row: copied inside the kernel
    w = small_ints(8, 32)
    torch.testing.assert_close(torch.ops.cute_py.gemm(x, w.t()).double(), reference(x, w.t()), rtol=0, atol=0)
    ones = torch.ones(1, 1, dtype=BF16).expand(16, 32)   # an expanded gradient (strides 0)
    torch.testing.assert_close(torch.ops.cute_py.gemm(ones, w.t()).double(), reference(ones, w.t()), rtol=0, atol=0)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_gradients_match_float64(case):
    a, b, c, bias = operands(case, requires_grad=True)
    d = torch.ops.cute_py.gemm(a, b, c, bias, out_dtype=case.get("out_dtype"), **kwargs(case))
    grad = small_ints(*d.shape, dtype=d.dtype, seed=9)
    leaves = [t for t in (a, b, c, bias) if t is not None]
    got = torch.autograd.grad(d, leaves, grad)
    ref_leaves = [t.detach().double().requires_grad_() for t in leaves]
    it = iter(ref_leaves)
    ra, rb = next(it), next(it)
    rc = next(it) if c is not None else None
    rbias = next(it) if bias is not None else None
    want = torch.autograd.grad(reference(ra, rb, rc, rbias, **kwargs(case)), ref_leaves, grad.double())
    for g, w, t in zip(got, want, leaves):
        assert g.shape == t.shape and g.dtype == t.dtype
        if case.get("activation") == "gelu":     # gelu'(z) * grad is rounded to bf16 before the GEMMs read it
            assert float((g.double() - w).norm() / w.norm()) < 1e-2
        else:                                    # small integers throughout: exact
            torch.testing.assert_close(g.double(), w.to(g.dtype).double(), rtol=0, atol=0)


def test_weight_gradient_keeps_the_weights_layout():
    m = ct.Linear(32, 16, dtype=BF16)
    m(small_ints(8, 32)).float().sum().backward()
    assert m.weight.grad.stride() == m.weight.stride() == (32, 1)


def test_matmul_shapes():
    x, w = small_ints(2, 3, 32), small_ints(16, 32)
    assert ct.matmul(x, w.t()).shape == (2, 3, 16)
    torch.testing.assert_close(ct.matmul(x, w.t()).double(), x.double() @ w.t().double(), rtol=0, atol=0)
    xb, wb = small_ints(4, 8, 32), small_ints(4, 32, 16)
    torch.testing.assert_close(ct.matmul(xb, wb).double(), torch.bmm(xb.double(), wb.double()), rtol=0, atol=0)
    out = torch.empty(2, 3, 16, dtype=BF16)
    assert ct.matmul(x, w.t(), out=out) is out
    torch.testing.assert_close(out.double(), x.double() @ w.t().double(), rtol=0, atol=0)
    with pytest.raises(GemmInputError, match="b must be 2-D"):
        ct.matmul(xb, small_ints(2, 32, 16))
    with pytest.raises(GemmInputError, match="out= has no autograd"):
        ct.matmul(x.requires_grad_(), w.t(), out=out)


def test_linear_is_a_drop_in():
    torch.manual_seed(0)
    base = torch.nn.Linear(64, 32, dtype=BF16)
    mine = ct.Linear(64, 32, dtype=BF16)
    mine.load_state_dict(base.state_dict())
    base.load_state_dict(mine.state_dict())
    x = small_ints(5, 64)
    torch.testing.assert_close(mine(x).double(), base(x).double(), rtol=1e-2, atol=1e-2)
    assert isinstance(mine, torch.nn.Linear) and "activation" not in repr(mine)
    with pytest.raises(GemmInputError, match="activation 'tanh'"):
        ct.Linear(8, 8, activation="tanh")


class Sub(torch.nn.Linear):
    """A subclass of nn.Linear: swap_linear leaves it (its forward may differ)."""


def test_swap_linear_reports_and_keeps_parameters():
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(),
                                torch.nn.Sequential(torch.nn.Linear(64, 48), torch.nn.Linear(48, 10))).to(BF16)
    model[2][1] = Sub(48, 10, dtype=BF16)
    weight = model[0].weight
    seen = []
    model[0].register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
    report = ct.swap_linear(model)
    assert report.swapped == ["0", "2.0"]
    assert report.skipped == [("2.1", ct.why_not_swapped(Sub(48, 10)))] and "subclass" in report.skipped[0][1]
    assert ct.why_not_swapped(torch.nn.Linear(48, 10, dtype=BF16)) is None        # any sizes
    assert isinstance(model[0], ct.Linear) and model[0].weight is weight
    model(small_ints(3, 64))
    assert seen == [(3, 64)]
    assert ct.swap_linear(model).swapped == []
    assert "float32" in ct.swap_linear(torch.nn.Sequential(torch.nn.Linear(8, 8))).skipped[0][1]


def test_compile_fullgraph_has_no_graph_break_and_matches_eager():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(ct.Linear(64, 128, activation="gelu", dtype=BF16), ct.Linear(128, 64, dtype=BF16),
                              ct.Linear(64, 64, activation="relu", dtype=BF16))
    x = torch.randn(8, 64, dtype=BF16, requires_grad=True)
    assert torch._dynamo.explain(mlp)(x).graph_break_count == 0
    compiled = torch.compile(mlp, fullgraph=True, backend="aot_eager")
    y = compiled(x)
    gx, = torch.autograd.grad(y.float().sum(), x)
    y_eager = mlp(x)
    gx_eager, = torch.autograd.grad(y_eager.float().sum(), x)
    torch.testing.assert_close(y, y_eager, rtol=0, atol=0)
    torch.testing.assert_close(gx, gx_eager, rtol=0, atol=0)


def test_problem_of_reads_alignment_from_the_storage_offset():
    a = small_ints(16, 40)
    assert problem_of("op", a[:, 8:], small_ints(32, 8)).lda == 40
    staged = problem_of("op", a[:, 1:33], small_ints(32, 8))          # starts 2 bytes in: a staging copy
    assert [(s.which, s.rows, s.row_bytes, s.src_ld, s.ld, s.vec) for s in staged.staging] == [("a", 16, 64, 80, 64, 2)]
    assert staged.lda == 32
    with pytest.raises(GemmInputError, match="different devices"):
        problem_of("op", a, torch.empty(40, 8, dtype=BF16, device="meta"))


def test_out_dtype_outside_cute_pys_types_is_refused():
    with pytest.raises(GemmInputError, match="out_dtype torch.float64"):
        torch.ops.cute_py.gemm(small_ints(8, 16), small_ints(16, 8), out_dtype=torch.float64)


def test_swap_linear_keeps_shared_modules_shared_and_hooks_removable():
    lin = torch.nn.Linear(16, 16, dtype=BF16)
    calls = []
    handle = lin.register_forward_hook(lambda mod, args, kwargs, out: calls.append(1), with_kwargs=True)
    model = torch.nn.Sequential(lin, torch.nn.ReLU(), lin)
    assert ct.swap_linear(model).swapped == ["0", "2"]
    assert model[0] is model[2] and isinstance(model[0], ct.Linear)
    model(small_ints(2, 16))
    assert calls == [1, 1]
    handle.remove()                                   # a handle made before the swap still removes its hook
    model(small_ints(2, 16))
    assert calls == [1, 1]


def test_swap_linear_skips_a_pruned_linear():
    import torch.nn.utils.prune as prune
    model = torch.nn.Sequential(torch.nn.Linear(16, 16, dtype=BF16))
    prune.l1_unstructured(model[0], "weight", amount=0.5)
    report = ct.swap_linear(model)
    assert report.swapped == [] and "computed by a hook" in report.skipped[0][1]


def test_vmap_over_matmul_goes_through_the_operator():
    xs, w = small_ints(3, 8, 16), small_ints(16, 8)
    got = torch.vmap(lambda x: ct.matmul(x, w))(xs)
    torch.testing.assert_close(got.double(), xs.double() @ w.double(), rtol=0, atol=0)


def test_collect_runs_inference_without_grad():
    seen = []

    class Probe(torch.nn.Module):
        def forward(self, x):
            seen.append(torch.is_grad_enabled())
            return x

    assert ct.collect(Probe(), (torch.ones(2),), backward=False) == [] and seen == [False]
    from cute_py.torch.ops import COLLECTORS
    assert COLLECTORS == []


# ---------------------------------------------------------------------------------------------------------------
# torch.ops.cute_py.scaled_gemm (fp8)

E4M3 = torch.float8_e4m3fn


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_scaled_gemm_cpu_kernel_and_opcheck(mode):
    """The CPU kernel dequantizes each scale block explicitly: exact on small integers with power-of-two scales.
    (opcheck's schema test cannot run: torch has no CPU fp8 comparison; the others run.)"""
    M, N, K = 40, 72, 304                               # K: 16-byte fp8 rows, not a multiple of 128
    a, w = small_ints(M, K, dtype=E4M3), small_ints(N, K, dtype=E4M3, seed=1)
    kb, nb = -(-K // 128), -(-N // 128)
    g = torch.Generator().manual_seed(2)
    pow2 = lambda *s: torch.exp2(torch.randint(-2, 3, s, generator=g).float())  # noqa: E731
    sa, sb = {"tensor": (pow2(), pow2()), "row": (pow2(M, 1), pow2(1, N)), "block": (pow2(M, kb), pow2(kb, nb))}[mode]
    d = torch.ops.cute_py.scaled_gemm(a, w.t(), sa, sb, out_dtype=F32)
    ea = sa.double().repeat_interleave(128, 1)[:, :K] if mode == "block" else sa.double()
    eb = (sb.double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:K, :N] if mode == "block"
          else sb.double())
    assert torch.equal(d.double(), (a.double() * ea) @ (w.double().t() * eb))
    torch.library.opcheck(torch.ops.cute_py.scaled_gemm, (a, w.t(), sa, sb), {"out_dtype": F32},
                          test_utils=("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))


def test_scaled_gemm_fake_compile_and_refusals():
    a, w, one = small_ints(64, 128, dtype=E4M3), small_ints(32, 128, dtype=E4M3), torch.ones(())
    with FakeTensorMode() as mode:
        fa, fw, fone = mode.from_tensor(a), mode.from_tensor(w), mode.from_tensor(one)
        y = torch.ops.cute_py.scaled_gemm(fa, fw.t(), fone, fone)
    assert (y.shape, y.dtype) == ((64, 32), BF16)
    compiled = torch.compile(lambda x, y: torch.ops.cute_py.scaled_gemm(x, y, one, one) * 2, fullgraph=True)
    assert torch.equal(compiled(a, w.t()), torch.ops.cute_py.scaled_gemm(a, w.t(), one, one) * 2)
    assert torch.equal(torch.ops.cute_py.scaled_gemm(a, w.contiguous().t().contiguous(), one, one),
                       torch.ops.cute_py.scaled_gemm(a, w.t(), one, one))          # an N-major b is copied K-major
    with pytest.raises(GemmInputError, match="name no scale mode"):
        torch.ops.cute_py.scaled_gemm(a, w.t(), torch.ones(3, 3), one)
    with pytest.raises(GemmInputError, match="blockwise scales always promote"):
        torch.ops.cute_py.scaled_gemm(a, w.t(), torch.ones(64, 1), torch.ones(1, 1), use_fast_accum=True)


# ---------------------------------------------------------------------------------------------------------------
# Options honoured or refused, junk refused by name (issue 34)

def test_gemm_out_refuses_an_out_that_aliases_an_input():
    x, w2 = small_ints(8, 8), small_ints(8, 8, seed=1)
    with pytest.raises(GemmInputError, match="gemm_out: out shares memory with a"):
        torch.ops.cute_py.gemm_out(x, w2, x)
    with pytest.raises(GemmInputError, match="out shares memory with b"):
        torch.ops.cute_py.gemm_out(x, w2, w2.t())
    big = small_ints(8, 16)
    torch.ops.cute_py.gemm_out(big[:, :8], w2, big[:, 8:])   # two column blocks of one tensor: disjoint
    torch.testing.assert_close(big[:, 8:].double(), big[:, :8].double() @ w2.double(), rtol=0, atol=0)
    c = small_ints(8, 8, seed=2)
    want = x.double() @ w2.double() + c.double()
    torch.ops.cute_py.gemm_out(x, w2, c, c, beta=1.0)        # out may be c itself
    torch.testing.assert_close(c.double(), want, rtol=0, atol=0)
    with FakeTensorMode() as mode:                            # fake tensors keep their storages apart too
        fx, fw = mode.from_tensor(x), mode.from_tensor(w2)
        torch.ops.cute_py.gemm_out(fx, fw, mode.from_tensor(c))
        with pytest.raises(GemmInputError, match="out shares memory with a"):
            torch.ops.cute_py.gemm_out(fx, fw, fx)


def test_gemm_with_beta_and_no_c_is_refused():
    with pytest.raises(GemmInputError, match="torch.ops.cute_py.gemm: beta=1.0 scales c, but no c was given"):
        torch.ops.cute_py.gemm(small_ints(4, 8), small_ints(8, 6), beta=1.0)
    with pytest.raises(GemmInputError, match="beta=2.0 scales c"):
        ct.matmul(small_ints(4, 8), small_ints(8, 6), beta=2.0)


def test_operands_with_a_dimension_of_extent_1_are_read_in_place():
    """Issue 34: (1, n) with strides (1, 5) and (n, 1) with strides (2, 1) are ordinary matrices."""
    from cute_py.torch.ops import usable
    row = torch.as_strided(small_ints(5 * 40), (1, 40), (1, 5))
    col = torch.as_strided(small_ints(2 * 30), (30, 1), (2, 1))
    assert usable(row) is row and usable(col) is col
    p = problem_of("op", col, row)
    assert (p.shape, p.a_major, p.b_major) == ("30x40x1", "K", "K")
    torch.testing.assert_close(torch.ops.cute_py.gemm(col, row).double(), col.double() @ row.double(), rtol=0,
                               atol=0)


def test_matmul_refuses_what_is_not_a_tensor_by_name():
    w = small_ints(8, 4)
    with pytest.raises(GemmInputError, match=r"^matmul: a is a list; a, b, c, bias and out are torch.Tensors$"):
        ct.matmul([[1.0]], w.t())
    with pytest.raises(GemmInputError, match=r"^matmul: b is a NoneType, bias is a str;"):
        ct.matmul(w, None, bias="x")


def test_swap_linear_and_from_linear_refuse_other_modules_by_name():
    with pytest.raises(TypeError, match="swap_linear: model must be a torch.nn.Module, got str"):
        ct.swap_linear("model")
    with pytest.raises(TypeError, match="Linear.from_linear: m must be a torch.nn.Linear, got Conv1d"):
        ct.Linear.from_linear(torch.nn.Conv1d(2, 2, 1))
    with pytest.raises(GemmInputError, match=r"from_linear: m's weight is torch.float32; cute_py's GEMMs take "
                                             r"torch.bfloat16 and torch.float16 \(convert m first"):
        ct.Linear.from_linear(torch.nn.Linear(8, 8))
    assert ct.Linear.from_linear(torch.nn.Linear(8, 8, dtype=F16)).weight.dtype == F16


def test_linear_makes_weights_its_gemms_read_and_refuses_other_types():
    """Linear(128, 4) gets bf16 weights (nn.Linear's float32 default is no type cute_py reads; torch's default
    dtype counts when it is one); an explicit other dtype is refused when the module is made, and a module
    converted to another type later says so at its first call."""
    m = ct.Linear(128, 4)
    assert m.weight.dtype == m.bias.dtype == BF16
    torch.testing.assert_close(m(small_ints(3, 128)).double(), small_ints(3, 128).double() @ m.weight.double().t()
                               + m.bias.double(), rtol=1e-2, atol=1e-2)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(F16)
    try:
        assert ct.Linear(8, 8).weight.dtype == F16
    finally:
        torch.set_default_dtype(previous)
    with pytest.raises(GemmInputError, match=r"Linear: dtype torch.float32: cute_py's GEMMs take torch.bfloat16 "
                                             r"and torch.float16"):
        ct.Linear(128, 4, dtype=F32)
    with pytest.raises(GemmInputError, match=r"Linear: weight is torch.float32; .* \(convert the module"):
        ct.Linear(8, 8).float()(torch.ones(2, 8))
    with pytest.raises(GemmInputError, match=r"the input is torch.float32 but the weight is torch.bfloat16; "
                                             r"convert the input \(x.to\(torch.bfloat16\)\)"):
        ct.Linear(8, 8)(torch.ones(2, 8))
    with pytest.raises(GemmInputError, match="Linear: bias must be True or False, got 'no'"):
        ct.Linear(8, 8, bias="no")


def test_autotune_refuses_junk_and_a_run_without_a_gpu(monkeypatch):
    from cute_py.autotune import AutotuneError
    from cute_py.runtime import CudaRuntimeError
    model, x = ct.Linear(8, 8), small_ints(2, 8)
    with pytest.raises(AutotuneError, match="cute_py.torch.autotune: model must be callable .*got str"):
        ct.autotune("m", (1,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ct.autotune(model, (x,), bogus=1)
    with pytest.raises(AutotuneError, match="cute_py.torch.autotune: reps must be an int >= 1, got 0"):
        ct.autotune(model, (x,), reps=0)
    with pytest.raises(AutotuneError, match="cute_py.torch.autotune: backward must be True or False, got 'no'"):
        ct.autotune(model, (x,), backward="no")
    with pytest.raises(AutotuneError, match="cute_py.torch.collect: backward must be True or False, got 1"):
        ct.collect(model, (x,), backward=1)
    if not torch.cuda.is_available():
        with pytest.raises(CudaRuntimeError):               # NoDeviceError / CudaNotInstalledError: no GPU to time on
            ct.autotune(model, (x,))
    import cute_py.torch.tune as tune
    monkeypatch.setattr(tune, "device", lambda: None)       # a GPU, but the model's GEMMs run on the CPU
    with pytest.raises(AutotuneError, match="made no cute_py GEMM on a CUDA device, so there is nothing to tune"):
        ct.autotune(model, (x,))


def test_gemm_out_refuses_inputs_that_require_grad_as_torch_out_ops_do():
    x, w, out = small_ints(4, 8), small_ints(6, 8), torch.empty(4, 6, dtype=BF16)
    with pytest.raises(GemmInputError, match="gemm_out: operators with out= don't support automatic "
                                             "differentiation, but a requires grad; use torch.ops.cute_py.gemm"):
        torch.ops.cute_py.gemm_out(x.clone().requires_grad_(), w.t(), out)
    with pytest.raises(GemmInputError, match="but b and bias require grad"):
        torch.ops.cute_py.gemm_out(x, w.t().clone().requires_grad_(), out, bias=small_ints(6).requires_grad_())
    with torch.no_grad():                                # no graph is being recorded: nothing is lost
        torch.ops.cute_py.gemm_out(x.clone().requires_grad_(), w.t(), out)
    torch.testing.assert_close(out.double(), x.double() @ w.t().double(), rtol=0, atol=0)
    torch.ops.cute_py.gemm_out(x, w.t(), out, beta=0.0, activation="relu")   # keywords pass through the kernel
    torch.testing.assert_close(out.double(), torch.relu(x.double() @ w.t().double()), rtol=0, atol=0)
