"""``torch.ops.cute_py``: cute_py's GEMM as PyTorch custom operators.

An operator is one :func:`define` call, which registers with ``torch.library``:

- the schema, read from the CUDA kernel's Python signature;
- the CUDA kernel: :func:`cute_py.gemm`, launched on torch's current stream (so the op is ordered with
  torch's work, runs on ``torch.cuda.stream(s)`` and is captured by ``torch.cuda.graph``);
- the CPU kernel: the same arithmetic in torch (float32 accumulation), a reference for tests and CPU models;
- the fake kernel: the result's shape, dtype and strides, which ``torch.compile`` and ``FakeTensorMode``
  propagate without running anything;
- for functional operators, the autograd formula (whose GEMMs are this operator again, with the majorness of
  each operand given by the strides of a transposed view, never by a transposing copy).

The fake and CPU kernels check their arguments with :meth:`cute_py.problem.Problem.from_arrays`, the one reader
of the product path, on records of the tensors' shapes and strides (:func:`problem_of`); the CUDA kernel reads the
real tensors through the same reader inside :func:`cute_py.gemm`. So all three refuse the same inputs with a
:class:`~cute_py.problem.GemmInputError`, before anything is launched.

    torch.ops.cute_py.gemm(a, b, c=None, bias=None, alpha=1., beta=0., activation=None, out_dtype=None) -> Tensor
    torch.ops.cute_py.gemm_out(a, b, out, c=None, bias=None, alpha=1., beta=0., activation=None) -> ()
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor
from torch.multiprocessing.reductions import StorageWeakRef

from ..emit.spec import SCALE_BLOCK
from ..gemm import gemm as _cute_gemm, scaled_gemm as _cute_scaled_gemm
from ..problem import GemmInputError, Problem
from ..runtime import as_device_array

__all__ = ["define", "gemm", "gemm_cuda", "gemm_out", "scaled_gemm", "problem_of", "usable", "describe", "mm_like",
           "NAMESPACE", "TYPE_NAMES", "FP8_TYPE_NAMES", "COLLECTORS"]

NAMESPACE = "cute_py"
TYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
"""torch dtype -> cute_py element type, for the types cute_py's GEMMs read or write."""
FP8_TYPE_NAMES = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2",
                  **({torch.float8_e8m0fnu: "ue8m0"} if hasattr(torch, "float8_e8m0fnu") else {})}
"""torch dtype -> cute_py element type of the fp8 operands :data:`scaled_gemm` reads (and of UE8M0 scales, where
this torch has the type: 2.7 and later)."""
_FAKE_ADDRESS = 1 << 40
"""A stand-in base address for tensors without one (fake, CPU): aligned like every CUDA allocation, so a record's
alignment is its storage offset's. The storages of one call are given the bases 1, 2, 3, ... times it
(:func:`_records`), so records of one storage overlap where the tensors do and records of two never do."""
COLLECTORS: list = []
"""Lists that the CUDA kernels append each launched problem to, as a :func:`describe` record (see
:func:`cute_py.torch.autotune`)."""


def define(name: str, cuda, *, cpu, fake, mutates_args=(), backward=None, setup_context=None):
    """Register ``torch.ops.cute_py.<name>``: schema and CUDA kernel from ``cuda``, plus its CPU and fake kernels
    and (optionally) its autograd formula; return the operator (callable like the function).

    >>> torch.ops.cute_py.gemm.default._schema.name
    'cute_py::gemm'
    """
    op = torch.library.custom_op(f"{NAMESPACE}::{name}", mutates_args=mutates_args, device_types="cuda")(cuda)
    op.register_kernel("cpu")(cpu)
    op.register_fake(fake)
    if backward is not None:
        op.register_autograd(backward, setup_context=setup_context)
    return op


# ---------------------------------------------------------------------------------------------------------------
# Reading tensors


def _concrete(*tensors) -> bool:
    return all(isinstance(v, int) for t in tensors if t is not None
               for v in (*t.shape, *t.stride(), t.storage_offset()))


def _record(t: Tensor | None, what: str, op: str, base: int = _FAKE_ADDRESS):
    """A :class:`~cute_py.runtime.DeviceArray` record of ``t``'s shape, strides and type at a stand-in address
    (its storage at ``base``)."""
    if t is None:
        return None
    name = TYPE_NAMES.get(t.dtype) or FP8_TYPE_NAMES.get(t.dtype)
    if name is None:
        raise GemmInputError(f"{op}: {what} has dtype {t.dtype}; supported: torch.bfloat16, torch.float16 "
                             f"(and torch.float32 for out, c, bias and scales; torch.float8_e4m3fn and "
                             f"torch.float8_e5m2 for scaled_gemm's a and b, torch.float8_e8m0fnu for its scales)")
    address = base + t.storage_offset() * t.element_size()
    return as_device_array(address, shape=tuple(t.shape), strides=tuple(t.stride()), dtype=name)


def _records(op: str, named: dict) -> list:
    """:func:`_record` of each tensor of ``named`` (what -> tensor or None), one stand-in base per storage: tensors
    sharing a storage keep their offsets from each other, so the reader sees where they overlap."""
    bases: dict = {}                            # storage -> its index

    def base(t):
        return _FAKE_ADDRESS * (1 + bases.setdefault(StorageWeakRef(t.untyped_storage()), len(bases)))
    return [None if t is None else _record(t, what, op, base(t)) for what, t in named.items()]


def _checked(op: str, tensors, out_dtype) -> bool:
    """What the records cannot say: the tensors on one device, ``out_dtype`` one cute_py writes. False when a size
    or stride is symbolic (the CUDA kernel checks then)."""
    devices = sorted({str(t.device) for t in tensors if t is not None})
    if len(devices) > 1:
        raise GemmInputError(f"{op}: the tensors are on different devices {devices}")
    if out_dtype is not None and out_dtype not in TYPE_NAMES:
        raise GemmInputError(f"{op}: out_dtype {out_dtype} is not one cute_py writes (torch.bfloat16, "
                             f"torch.float16, torch.float32)")
    return _concrete(*tensors)


def problem_of(op: str, a, b, c=None, bias=None, alpha=1.0, beta=0.0, activation=None, out=None,
               out_dtype=None) -> Problem | None:
    """The :class:`~cute_py.problem.Problem` of a GEMM op's tensors (any device, fake ones included), read by
    :meth:`~cute_py.problem.Problem.from_arrays`; None when a size is symbolic (the CUDA kernel checks then).
    Raises :class:`~cute_py.problem.GemmInputError` naming ``op``, also for tensors on different devices.

    >>> a, w = torch.ones(64, 32, dtype=torch.bfloat16), torch.ones(48, 32, dtype=torch.bfloat16)
    >>> problem_of("gemm", a, w.t()).shape, problem_of("gemm", a, w.t()).b_major
    ('64x48x32', 'K')
    >>> problem_of("gemm", a, w)
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: gemm: inner dimensions differ: a is (64, 32), b is (48, 32) (K 32 vs 48)
    """
    tensors = (a, b, c, bias, out)
    if not _checked(op, tensors, out_dtype):
        return None
    ra, rb, rc, rbias, rout = _records(op, dict(zip(("a", "b", "c", "bias", "out"), tensors)))
    return Problem.from_arrays(ra, rb, rc, alpha=alpha, beta=beta, bias=rbias, activation=activation, out=rout,
                               out_dtype=TYPE_NAMES.get(out_dtype) if out_dtype is not None else None, op=op)


def usable(t: Tensor) -> Tensor:
    """``t`` when a GEMM can read it in place (one dimension contiguous, or of extent 1, at any alignment: what
    TMA cannot read goes through the GEMM's staging copy), else a contiguous copy of it. Every kernel of the
    operators applies it to ``a`` and ``b`` (an expanded gradient has stride 0 along both), so they take any
    strides.

    >>> x = torch.ones(16, 16, dtype=torch.bfloat16)
    >>> usable(x.t()).stride(), usable(x[:, 1:]).stride()      # column-major; rows starting 2 bytes in
    ((1, 16), (16, 1))
    >>> usable(x[:1, ::5]).stride()                            # one row, elements 5 apart: read in place
    (16, 5)
    >>> usable(torch.ones(1, dtype=torch.bfloat16).expand(4, 8)).stride()   # nothing contiguous: copied
    (8, 1)
    """
    if t.dim() != 2 or 1 in t.shape or 1 in t.stride():      # as Problem reads a major (extent 1: any stride)
        return t
    return t.contiguous()


def _tensors(op: str, **named) -> tuple:
    """The tensors ``named`` (what -> argument), in order, after checking that they are tensors: torch's dispatcher
    lets None through for a Tensor argument when another argument says the device, and the kernels read them."""
    for what, t in named.items():
        if not isinstance(t, Tensor):
            raise GemmInputError(f"{op}: {what} must be a torch.Tensor, got {type(t).__name__}")
    return tuple(named.values())


def _usable(op: str, a, b, **more) -> tuple:
    """``(usable(a), usable(b))`` of tensors ``a`` and ``b`` (:func:`_tensors`, with ``more``)."""
    _tensors(op, a=a, b=b, **more)
    return usable(a), usable(b)


def describe(a, b, c, bias, out, **scalars) -> dict:
    """A GEMM call's tensors as ``(shape, strides, dtype, device)`` (None where absent) plus its scalars: what
    is needed to make arrays of the same problem, without keeping the call's tensors alive.

    >>> describe(torch.ones(4, 8), torch.ones(8, 2), None, None, torch.ones(4, 2), alpha=1.0)["b"]
    ((8, 2), (2, 1), torch.float32, device(type='cpu'))
    """
    meta = {k: None if t is None else (tuple(t.shape), tuple(t.stride()), t.dtype, t.device)
            for k, t in (("a", a), ("b", b), ("c", c), ("bias", bias), ("out", out))}
    return {**meta, **scalars}


def _reference(a, b, c, bias, alpha, beta, activation, out_dtype):
    """``act(alpha * a @ b + beta * c + bias)`` in float32, as the kernel's epilogue computes it."""
    z = alpha * (a.float() @ b.float())
    if c is not None and beta != 0:
        z = z + beta * c.float()
    if bias is not None:
        z = z + (bias.float() if bias.shape[0] == b.shape[1] else bias.float()[:, None])
    if activation == "relu":
        z = torch.relu(z)
    elif activation == "gelu":
        z = torch.nn.functional.gelu(z)
    return z.to(out_dtype)


# ---------------------------------------------------------------------------------------------------------------
# gemm


def gemm_cuda(a: Tensor, b: Tensor, c: Optional[Tensor] = None, bias: Optional[Tensor] = None, alpha: float = 1.0,
              beta: float = 0.0, activation: Optional[str] = None, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    """:data:`gemm`'s CUDA kernel: :func:`cute_py.gemm` on torch's current stream, ``a`` and ``b`` made
    :func:`usable` first.

    >>> gemm_cuda(torch.ones(8, 8), torch.ones(8, 8))               # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: gemm: a: as_device_array: the array lives on the CPU device, ...
    """
    a, b, out = _usable("torch.ops.cute_py.gemm", a, b) + (None,)
    if out_dtype is not None and out_dtype != a.dtype:
        out = a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)
    d = _cute_gemm(a, b, c, alpha=alpha, beta=beta, bias=bias, activation=activation, out=out)
    if COLLECTORS:
        COLLECTORS[-1].append(describe(a, b, c, bias, d, alpha=alpha, beta=beta, activation=activation))
    return d


def _gemm_cpu(a, b, c=None, bias=None, alpha=1.0, beta=0.0, activation=None, out_dtype=None):
    a, b = _usable("torch.ops.cute_py.gemm", a, b)
    problem_of("torch.ops.cute_py.gemm", a, b, c, bias, alpha, beta, activation, out_dtype=out_dtype)
    return _reference(a, b, c, bias, alpha, beta, activation, out_dtype or a.dtype)


def _gemm_fake(a, b, c=None, bias=None, alpha=1.0, beta=0.0, activation=None, out_dtype=None):
    a, b = _usable("torch.ops.cute_py.gemm", a, b)
    problem_of("torch.ops.cute_py.gemm", a, b, c, bias, alpha, beta, activation, out_dtype=out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or a.dtype)


def _setup_gemm(ctx, inputs, output):
    a, b, c, bias, alpha, beta, activation, out_dtype = inputs
    kept = {"c": c, "bias": bias, "out": output if activation == "relu" else None}   # relu' from the output
    ctx.kept = [k for k, t in kept.items() if t is not None]
    ctx.save_for_backward(a, b, *(kept[k] for k in ctx.kept))
    ctx.alpha, ctx.beta, ctx.activation = alpha, beta, activation
    ctx.bias_per_row = bias is not None and bias.shape[0] != b.shape[1]


def mm_like(x: Tensor, y: Tensor, like: Tensor, alpha: float = 1.0) -> Tensor:
    """``alpha * x @ y`` in ``like``'s type and majorness: a column-major ``like`` gets ``(y^T @ x^T)^T``, so
    gradients land in their tensor's layout without a transposing copy.

    >>> w = torch.ones(8, 16, dtype=torch.bfloat16)
    >>> mm_like(torch.ones(16, 4, dtype=torch.bfloat16), torch.ones(4, 8, dtype=torch.bfloat16), w.t()).stride()
    (1, 16)
    """
    if like.stride(0) == 1 and like.stride(1) != 1:
        return gemm(y.t(), x.t(), alpha=alpha, out_dtype=like.dtype).t()
    return gemm(x, y, alpha=alpha, out_dtype=like.dtype)


def _gemm_backward(ctx, grad):
    a, b, *rest = ctx.saved_tensors
    kept = dict(zip(ctx.kept, rest))
    c, bias, out = kept.get("c"), kept.get("bias"), kept.get("out")
    g = grad
    if ctx.activation == "relu":
        g = g.masked_fill(out <= 0, 0)                  # relu(z) > 0 exactly where z > 0
    elif ctx.activation == "gelu":                      # recompute the pre-activation z: one more GEMM
        z = gemm(a, b, c, bias, ctx.alpha, ctx.beta, None, grad.dtype)
        g = torch.ops.aten.gelu_backward(g, z)
    need_a, need_b, need_c, need_bias = (*ctx.needs_input_grad, False, False)[:4]   # shorter when c, bias omitted
    ga = g.to(a.dtype)
    da = mm_like(ga, b.t(), a, ctx.alpha) if need_a else None
    db = mm_like(a.t(), ga, b, ctx.alpha) if need_b else None
    dc = (g * ctx.beta).to(c.dtype) if need_c and c is not None else None
    dbias = (g.sum(1) if ctx.bias_per_row else g.sum(0)).to(bias.dtype) if need_bias and bias is not None else None
    return da, db, dc, dbias, None, None, None, None


gemm = define("gemm", gemm_cuda, cpu=_gemm_cpu, fake=_gemm_fake, backward=_gemm_backward,
              setup_context=_setup_gemm)
"""``torch.ops.cute_py.gemm``: ``act(alpha * a @ b + beta * c + bias)`` as a new row-major tensor of type
``out_dtype`` (default a's), with autograd."""


# ---------------------------------------------------------------------------------------------------------------
# gemm_out


def _gemm_out_cuda(a: Tensor, b: Tensor, out: Tensor, c: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                   alpha: float = 1.0, beta: float = 0.0, activation: Optional[str] = None) -> None:
    a, b = _usable("torch.ops.cute_py.gemm_out", a, b, out=out)
    _cute_gemm(a, b, c, alpha=alpha, beta=beta, bias=bias, activation=activation, out=out)
    if COLLECTORS:
        COLLECTORS[-1].append(describe(a, b, c, bias, out, alpha=alpha, beta=beta, activation=activation))


def _gemm_out_cpu(a, b, out, c=None, bias=None, alpha=1.0, beta=0.0, activation=None):
    a, b = _usable("torch.ops.cute_py.gemm_out", a, b, out=out)
    problem_of("torch.ops.cute_py.gemm_out", a, b, c, bias, alpha, beta, activation, out=out)
    out.copy_(_reference(a, b, c, bias, alpha, beta, activation, out.dtype))


def _gemm_out_fake(a, b, out, c=None, bias=None, alpha=1.0, beta=0.0, activation=None):
    a, b = _usable("torch.ops.cute_py.gemm_out", a, b, out=out)
    problem_of("torch.ops.cute_py.gemm_out", a, b, c, bias, alpha, beta, activation, out=out)


def _gemm_out_autograd(a, b, out, c=None, bias=None, alpha=1.0, beta=0.0, activation=None):
    """:data:`gemm_out`'s autograd kernel (on the AutogradCPU and AutogradCUDA keys: the custom operator keeps
    its own Autograd kernel, which runs the op with grad mode off). As torch's own out= operators, it refuses
    inputs that require grad while grad mode is on (``out`` would silently carry no gradient); else it runs the
    operator below autograd."""
    needs = [w for w, t in (("a", a), ("b", b), ("c", c), ("bias", bias), ("out", out))
             if t is not None and t.requires_grad]
    if needs and torch.is_grad_enabled():
        raise GemmInputError(f"torch.ops.cute_py.gemm_out: operators with out= don't support automatic "
                             f"differentiation, but {' and '.join(needs)} require{'s' if len(needs) == 1 else ''} "
                             f"grad; use torch.ops.cute_py.gemm (or cute_py.torch.matmul without out=), or call "
                             f"under torch.no_grad()")
    with torch._C._AutoDispatchBelowAutograd():
        gemm_out(a, b, out, c, bias, alpha, beta, activation)


gemm_out = define("gemm_out", _gemm_out_cuda, cpu=_gemm_out_cpu, fake=_gemm_out_fake, mutates_args=("out",))
"""``torch.ops.cute_py.gemm_out``: :data:`gemm` writing into ``out`` (row- or column-major, any type cute_py
writes; ``c`` may be ``out`` itself, no other operand may share its memory); no autograd (``out`` is mutated):
with grad mode on, inputs that require grad are refused, as torch refuses them for its out= operators."""
_LIBRARY = torch.library.Library(NAMESPACE, "IMPL")
for _key in ("AutogradCPU", "AutogradCUDA"):
    _LIBRARY.impl("gemm_out", _gemm_out_autograd, _key)


# ---------------------------------------------------------------------------------------------------------------
# scaled_gemm


def _k_major(a: Tensor, b: Tensor) -> tuple:
    """``a`` (M, K) and ``b`` (K, N) with K contiguous (fp8 wgmma reads only K-major operands): copied when not."""
    if a.dim() == 2 and a.stride(1) != 1 and a.shape[1] > 1:
        a = a.contiguous()
    if b.dim() == 2 and b.stride(0) != 1 and b.shape[0] > 1:
        b = b.t().contiguous().t()
    return a, b


def _scaled_problem(op, a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum):
    """The scaled problem of the tensors (validated), None when a size is symbolic."""
    tensors = (a, b, scale_a, scale_b, bias)
    if not _checked(op, tensors, out_dtype):
        return None
    ra, rb, rsa, rsb, rbias = _records(op, dict(zip(("a", "b", "scale_a", "scale_b", "bias"), tensors)))
    return Problem.from_arrays(ra, rb, bias=rbias, scale_a=rsa, scale_b=rsb, fast_accum=use_fast_accum,
                               out_dtype=TYPE_NAMES.get(out_dtype or torch.bfloat16), op=op)


def _scaled_cuda(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Optional[Tensor] = None,
                 out_dtype: Optional[torch.dtype] = None, use_fast_accum: bool = False) -> Tensor:
    a, b = _k_major(*_tensors("torch.ops.cute_py.scaled_gemm", a=a, b=b, scale_a=scale_a, scale_b=scale_b)[:2])
    return _cute_scaled_gemm(a, b, scale_a, scale_b, out_dtype=TYPE_NAMES.get(out_dtype or torch.bfloat16),
                             bias=bias, use_fast_accum=use_fast_accum)


def _dequantized(x: Tensor, scale: Tensor, mode: str, which: str) -> Tensor:
    """``x`` (a (M, K) or b (K, N)) in float32 times its scale, blocks expanded as the kernel applies them."""
    x = x.float()
    if mode != "block":
        return x * scale.float()
    s = scale.float()
    if which == "a":                                    # (M, KB): 1 x 128 blocks along K
        return x * s.repeat_interleave(SCALE_BLOCK, 1)[:, :x.shape[1]]
    return x * s.repeat_interleave(SCALE_BLOCK, 0).repeat_interleave(SCALE_BLOCK, 1)[:x.shape[0], :x.shape[1]]


def _scaled_cpu(a, b, scale_a, scale_b, bias=None, out_dtype=None, use_fast_accum=False):
    a, b = _k_major(*_tensors("torch.ops.cute_py.scaled_gemm", a=a, b=b, scale_a=scale_a, scale_b=scale_b)[:2])
    p = _scaled_problem("torch.ops.cute_py.scaled_gemm", a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum)
    z = _dequantized(a, scale_a, p.scale, "a") @ _dequantized(b, scale_b, p.scale, "b")
    if bias is not None:
        z = z + (bias.float() if bias.shape[0] == b.shape[1] else bias.float()[:, None])
    return z.to(out_dtype or torch.bfloat16)


def _scaled_fake(a, b, scale_a, scale_b, bias=None, out_dtype=None, use_fast_accum=False):
    a, b = _k_major(*_tensors("torch.ops.cute_py.scaled_gemm", a=a, b=b, scale_a=scale_a, scale_b=scale_b)[:2])
    _scaled_problem("torch.ops.cute_py.scaled_gemm", a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype or torch.bfloat16)


scaled_gemm = define("scaled_gemm", _scaled_cuda, cpu=_scaled_cpu, fake=_scaled_fake)
"""``torch.ops.cute_py.scaled_gemm``: :func:`cute_py.scaled_gemm` (``(scale_a * a) @ (scale_b * b) + bias`` for fp8
``a`` and ``b``, the scales' shapes choosing the mode) as a new row-major tensor of type ``out_dtype`` (default
bf16); MN-major operands are copied K-major first; no autograd (as ``torch._scaled_mm``)."""
