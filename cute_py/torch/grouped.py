"""``torch.ops.cute_py.grouped_mm``: :func:`cute_py.grouped_gemm` as a PyTorch custom operator, with autograd.

    torch.ops.cute_py.grouped_mm(a, b, offs=None, out_dtype=None) -> Tensor

The forms of ``torch._grouped_mm`` (bf16, f16): a (total_M, K) x b (G, K, N) with ``offs`` (groups along M),
a (M, total_K) x b (total_K, N) with ``offs`` (groups along K), a (G, M, K) x b (G, K, N) (a batch). The
gradients are grouped GEMMs again: for groups along M, ``da = grouped_mm(grad, b^T, offs)`` and ``db =
grouped_mm(a^T, grad, offs)`` (groups along K: each group's ``a[g]^T @ grad[g]``); for a batch, two batches.
The fake and CPU kernels read the tensors' shapes and strides with the product path's reader
(:func:`cute_py.problem_groups.grouped_problem`), so all kernels refuse the same inputs; the CPU kernel computes
each group in float32 (a reference for tests), and the CUDA kernel reads ``offs`` on the device without a host
synchronisation (``check_offs=False``: the operator must stay capturable; bad offsets are clamped).

>>> import torch, cute_py.torch
>>> x, w = torch.ones(6, 16, dtype=torch.bfloat16), torch.ones(2, 8, 16, dtype=torch.bfloat16)
>>> offs = torch.tensor([2, 6], dtype=torch.int32)
>>> torch.ops.cute_py.grouped_mm(x, w.transpose(-2, -1), offs).shape          # on the CPU: torch's arithmetic
torch.Size([6, 8])
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from ..gemm import grouped_gemm as _cute_grouped_gemm
from ..problem import GemmInputError
from ..problem_groups import check_device_offsets, grouped_problem
from ..runtime import as_device_array
from .ops import _FAKE_ADDRESS, TYPE_NAMES, _checked, _record, define

__all__ = ["grouped_mm"]

_OP = "torch.ops.cute_py.grouped_mm"


def _problem(a, b, offs, out_dtype):
    """The grouped problem of the tensors (validated on records of their shapes and strides), None when a size is
    symbolic."""
    if not _checked(_OP, (a, b, offs), out_dtype):
        return None
    ro = None
    if offs is not None:
        if offs.dtype != torch.int32:
            raise GemmInputError(f"{_OP}: offs must be a contiguous 1-D int32 array, got {offs.dtype}")
        ro = as_device_array(_FAKE_ADDRESS, shape=tuple(offs.shape), strides=tuple(offs.stride()), dtype="s32")
    return grouped_problem(_record(a, "a", _OP), _record(b, "b", _OP), ro, check_offs=False, op=_OP,
                           out_dtype=TYPE_NAMES.get(out_dtype) if out_dtype is not None else None)


def _out_shape(a, b, offs) -> tuple:
    """D's shape: a batch's (G, M, N), groups along M (total_M, N), groups along K (G, M, N)."""
    if a.dim() == 3:
        return (a.shape[0], a.shape[1], b.shape[2])
    if b.dim() == 3:
        return (a.shape[0], b.shape[2])
    return (offs.shape[0], a.shape[0], b.shape[1])


def _grouped_cuda(a: Tensor, b: Tensor, offs: Optional[Tensor] = None,
                  out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _cute_grouped_gemm(a, b, offs, out_dtype=TYPE_NAMES.get(out_dtype) if out_dtype else None,
                              check_offs=False)


def _grouped_cpu(a, b, offs=None, out_dtype=None):
    _problem(a, b, offs, out_dtype)
    t = out_dtype or a.dtype
    if a.dim() == 3:
        return torch.bmm(a.float(), b.float()).to(t)
    check_device_offsets(a, b, offs, _OP)
    ends, along_m = [int(x) for x in offs.tolist()], b.dim() == 3
    out = a.new_empty(_out_shape(a, b, offs), dtype=t)
    for g, (s, e) in enumerate(zip([0] + ends[:-1], ends)):
        if along_m:
            out[s:e] = (a[s:e].float() @ b[g].float()).to(t)
        else:
            out[g] = (a[:, s:e].float() @ b[s:e].float()).to(t)
    return out


def _grouped_fake(a, b, offs=None, out_dtype=None):
    _problem(a, b, offs, out_dtype)
    return a.new_empty(_out_shape(a, b, offs), dtype=out_dtype or a.dtype)


def _setup(ctx, inputs, output):
    a, b, offs, out_dtype = inputs
    ctx.save_for_backward(a, b, offs)


def _backward(ctx, grad):
    a, b, offs = ctx.saved_tensors
    need_a, need_b = ctx.needs_input_grad[:2]
    g = grad.to(a.dtype).contiguous()
    if a.dim() == 3:                                    # a batch: two batches
        da = grouped_mm(g, b.transpose(-2, -1)) if need_a else None
        db = grouped_mm(a.transpose(-2, -1), g) if need_b else None
    elif b.dim() == 3:                                  # groups along M: da along M again, db along K
        da = grouped_mm(g, b.transpose(-2, -1), offs) if need_a else None
        db = grouped_mm(a.contiguous().t(), g, offs) if need_b else None
    else:                                               # groups along K: both gradients are groups along M
        da = grouped_mm(b, g.transpose(-2, -1), offs).t() if need_a else None   # da[:, g] = (b[g] @ grad[g]^T)^T
        db = grouped_mm(a.t(), g, offs) if need_b else None                      # db[g] = a[:, g]^T @ grad[g]
    return da, db, None, None


grouped_mm = define("grouped_mm", _grouped_cuda, cpu=_grouped_cpu, fake=_grouped_fake, backward=_backward,
                    setup_context=_setup)
"""``torch.ops.cute_py.grouped_mm``: :func:`cute_py.grouped_gemm` (``torch._grouped_mm``'s forms) as a new tensor
of type ``out_dtype`` (default a's), with autograd."""
