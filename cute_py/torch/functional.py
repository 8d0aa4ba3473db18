"""``cute_py.torch.matmul``: ``torch.matmul``'s shapes, with cute_py's fused epilogue, over the custom operators.

Everything here is traceable by ``torch.compile`` (``fullgraph=True``): shapes are folded with views and the GEMMs
are the opaque operators of :mod:`cute_py.torch.ops`.
"""

from __future__ import annotations

import torch

from ..problem import GemmInputError
from torch.utils._python_dispatch import _get_current_dispatch_mode as _current_dispatch_mode

from .ops import gemm, gemm_cuda, gemm_out

__all__ = ["matmul"]

_PLAIN = (torch.Tensor, torch.nn.Parameter)
"""Tensor types the direct path takes (a subclass such as FakeTensor or DTensor goes through the dispatcher)."""


def _needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _eager(*tensors) -> bool:
    """Whether a call can skip the dispatcher: plain CUDA tensors, no autograd, no tracing (torch.compile,
    torch.jit.trace), no functorch transform (vmap, grad), no dispatch mode."""
    return (not torch.compiler.is_compiling() and _current_dispatch_mode() is None and not _needs_grad(*tensors)
            and not torch._C._are_functorch_transforms_active() and not torch.jit.is_tracing()
            and all(t is None or (type(t) in _PLAIN and t.is_cuda) for t in tensors))


def _mm(a, b, c, bias, alpha, beta, activation, out_dtype, out):
    """One 2-D GEMM through the operators; gelu under autograd is applied outside the GEMM (saving z for its
    gradient, as ``nn.Linear`` + ``nn.GELU`` does) instead of recomputing z in the backward pass. An eager call
    that needs none of what the dispatcher adds (autograd, fake tensors, tracing) runs the operator's CUDA kernel
    directly: the same function, without the dispatcher's per-call host time."""
    if out is None and _eager(a, b, c, bias):
        return gemm_cuda(a, b, c, bias, alpha, beta, activation, out_dtype)
    if out is not None:
        gemm_out(a, b, out, c, bias, alpha, beta, activation)
        return out
    if activation == "gelu" and _needs_grad(a, b, c, bias):
        return torch.nn.functional.gelu(gemm(a, b, c, bias, alpha, beta, None, out_dtype))
    return gemm(a, b, c, bias, alpha, beta, activation, out_dtype)


def matmul(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, out=None):
    """``act(alpha * a @ b + beta * c + bias)`` on cute_py GEMMs (CUDA) or torch's arithmetic (CPU), with autograd.

    - ``a`` (..., M, K) with ``b`` (K, N): the leading dimensions fold into M (a view when they can, as
      ``nn.Linear`` does), result (..., M, N). ``a`` (B, M, K) with ``b`` (B, K, N): one GEMM per batch entry.
    - ``c`` in the result's shape, read when ``beta != 0``; ``bias`` of length N (added to every row) or of the
      (folded) length M when M != N (added to every column); ``activation`` None, "relu" or "gelu" (erf form).
    - ``out_dtype``: torch.bfloat16 / float16 / float32 (default a's dtype); ``c`` and ``bias`` have this type.
    - ``out``: write into this tensor (row- or column-major); no autograd then.

    Operands are read in place when one dimension is contiguous (``w.t()`` of a row-major weight is read as a
    K-major operand; what TMA cannot read goes through the GEMM's staging copy), else copied once to be contiguous.
    Raises :class:`~cute_py.problem.GemmInputError` for shapes or types the GEMM does not take.

    >>> x, w = torch.ones(2, 3, 64, dtype=torch.bfloat16), torch.ones(32, 64, dtype=torch.bfloat16)
    >>> matmul(x, w.t(), activation="relu").shape
    torch.Size([2, 3, 32])
    >>> matmul(torch.ones(4), w.t())
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: matmul: a and b must have at least 2 dimensions, got shapes (4,) and (64, 32)
    >>> matmul([[1.0]], w.t())
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: matmul: a is a list; a, b, c, bias and out are torch.Tensors
    """
    named = {"a": a, "b": b, "c": c, "bias": bias, "out": out}
    wrong = [f"{k} is a {type(t).__name__}" for k, t in named.items()
             if not isinstance(t, torch.Tensor) and (t is not None or k in ("a", "b"))]
    if wrong:
        raise GemmInputError(f"matmul: {', '.join(wrong)}; a, b, c, bias and out are torch.Tensors")
    for name, x in (("alpha", alpha), ("beta", beta)):      # as the operators' schema reads them, named here
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise GemmInputError(f"matmul: {name} must be a real number (int or float), got {type(x).__name__} "
                                 f"{x!r:.60}")
    if out_dtype is not None and not isinstance(out_dtype, torch.dtype):
        raise GemmInputError(f"matmul: out_dtype must be a torch.dtype (torch.bfloat16, torch.float16, "
                             f"torch.float32) or None, got {type(out_dtype).__name__} {out_dtype!r:.60}")
    if a.dim() < 2 or b.dim() < 2:
        raise GemmInputError(f"matmul: a and b must have at least 2 dimensions, got shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
    if out is not None and _needs_grad(a, b, c, bias):
        raise GemmInputError("matmul: out= has no autograd, but an input requires grad; call without out=")
    if a.dim() == 2 and b.dim() == 2:
        return _mm(a, b, c, bias, alpha, beta, activation, out_dtype, out)
    if b.dim() == 2:
        lead, N = a.shape[:-1], b.shape[1]
        a2 = a.reshape(-1, a.shape[-1])
        c2 = c.reshape(-1, N) if c is not None else None
        out2 = out.view(-1, N) if out is not None and out.dim() != 2 else out
        d = _mm(a2, b, c2, bias, alpha, beta, activation, out_dtype, out2)
        return out if out is not None else d.reshape(*lead, N)
    if a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0]:
        ds = [_mm(a[i], b[i], c[i] if c is not None else None, bias, alpha, beta, activation, out_dtype,
                  out[i] if out is not None else None) for i in range(a.shape[0])]
        return out if out is not None else torch.stack(ds)
    raise GemmInputError(f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)}: b must be 2-D (K, N), or both "
                         f"3-D with one batch extent")
