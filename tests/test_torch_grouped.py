"""torch.ops.cute_py.grouped_mm on the CPU: the three forms against a float64 loop, opcheck, fake tensors under
torch.compile, gradients against float64, and refusals by every kernel. tests/gpu/test_gpu_grouped.py runs the
CUDA kernel."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import cute_py.torch  # noqa: E402,F401  (registers the operators)
from cute_py.problem import GemmInputError  # noqa: E402

BF16 = torch.bfloat16


def ints(*shape, dtype=torch.float64):
    g = torch.Generator().manual_seed(sum(shape))
    return torch.randint(-3, 4, shape, generator=g).to(dtype)


def reference(a, b, offs):
    """float64 per group: the forms of torch._grouped_mm."""
    a, b = a.double(), b.double()
    if a.dim() == 3:
        return a @ b
    ends = offs.tolist()
    starts = [0] + ends[:-1]
    if b.dim() == 3:
        return torch.cat([a[s:e] @ b[g] for g, (s, e) in enumerate(zip(starts, ends))])
    return torch.stack([a[:, s:e] @ b[s:e] for s, e in zip(starts, ends)])


def forms():
    offs_m = torch.tensor([8, 8, 24, 40], dtype=torch.int32)            # an empty group
    offs_k = torch.tensor([16, 16, 48], dtype=torch.int32)
    return {"m": (ints(40, 16, dtype=BF16), ints(4, 24, 16, dtype=BF16).transpose(-2, -1), offs_m),
            "k": (ints(48, 32, dtype=BF16).t(), ints(48, 24, dtype=BF16), offs_k),
            "batch": (ints(3, 16, 32, dtype=BF16), ints(3, 32, 24, dtype=BF16), None)}


@pytest.mark.parametrize("form", ["m", "k", "batch"])
def test_cpu_kernel_matches_float64(form):
    a, b, offs = forms()[form]
    d = torch.ops.cute_py.grouped_mm(a, b, offs)
    assert d.dtype == BF16 and torch.equal(d, reference(a, b, offs).to(BF16))


@pytest.mark.parametrize("form", ["m", "k", "batch"])
def test_opcheck(form):
    a, b, offs = forms()[form]
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    torch.library.opcheck(torch.ops.cute_py.grouped_mm, (a, b, offs), {"out_dtype": torch.float32})


@pytest.mark.parametrize("form", ["m", "k", "batch"])
def test_gradients_match_float64(form):
    a, b, offs = forms()[form]
    a, b = a.detach().requires_grad_(), b.detach().requires_grad_()
    grad = ints(*reference(a, b, offs).shape, dtype=BF16)
    torch.ops.cute_py.grouped_mm(a, b, offs).backward(grad)
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    reference(a64, b64, offs).backward(grad.double())
    assert torch.equal(a.grad, a64.grad.to(BF16)) and torch.equal(b.grad, b64.grad.to(BF16))


def test_compile_fullgraph_matches_eager():
    a, b, offs = forms()["m"]
    f = torch.compile(lambda a, b, o: torch.ops.cute_py.grouped_mm(a, b, o) * 2, fullgraph=True, backend="eager")
    assert torch.equal(f(a, b, offs), torch.ops.cute_py.grouped_mm(a, b, offs) * 2)


@pytest.mark.parametrize("bad,match", [
    (lambda a, b, o: (a, b, o.long()), "offs must be a contiguous 1-D int32 array"),
    (lambda a, b, o: (a, b, torch.tensor([8, 4, 24, 40], dtype=torch.int32)), r"offs\[1\] = 4 < offs\[0\] = 8"),
    (lambda a, b, o: (a, b, o[:3]), "offs has 3 entries but b has 4 groups"),
    (lambda a, b, o: (a.float(), b, o), "a has element type f32; supported: bf16, f16"),
])
def test_bad_input_is_refused(bad, match):
    a, b, offs = forms()["m"]
    with pytest.raises(GemmInputError, match=match):
        torch.ops.cute_py.grouped_mm(*bad(a, b, offs))
