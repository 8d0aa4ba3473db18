"""``cute_py.torch.autotune(model, example_inputs)``: tune every GEMM a model makes, into the tuned table."""

from __future__ import annotations

import sys

import torch

from ..autotune import AutotuneError, autotune as tune_arrays, check_options
from ..options import flag
from ..problem import Problem
from ..runtime import device
from ..tuned import problem_key
from .ops import COLLECTORS

__all__ = ["autotune", "collect"]


def collect(model, example_inputs, *, backward: bool = True) -> list:
    """The GEMM calls (:func:`cute_py.torch.ops.describe` records) that one run of ``model(*example_inputs)``
    makes through the cute_py operators, and, with ``backward`` and an output that requires grad, those of the
    gradient of ``output.sum()`` (computed with ``torch.autograd.grad``: no ``.grad`` is touched). Without
    ``backward`` the model runs under ``torch.no_grad()``, so the problems are inference's (a gelu layer's GEMM
    then carries the activation; under autograd gelu runs outside it: they are different problems).

    >>> collect(torch.nn.Identity(), (torch.ones(2),))      # no cute_py GEMM in it
    []
    """
    _check_model("collect", model)
    backward = flag("cute_py.torch.collect", "backward", backward, AutotuneError)
    calls: list = []
    COLLECTORS.append(calls)
    try:
        inputs = example_inputs if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
        with torch.set_grad_enabled(backward and torch.is_grad_enabled()):
            out = model(*inputs)
            if backward and isinstance(out, torch.Tensor) and out.requires_grad:
                leaves = [p for p in model.parameters() if p.requires_grad] if isinstance(model, torch.nn.Module) \
                    else []
                leaves += [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
                if leaves:
                    torch.autograd.grad(out.float().sum(), leaves, allow_unused=True)
    finally:
        COLLECTORS.pop(next(i for i, c in enumerate(COLLECTORS) if c is calls))
    return calls


def _fresh(meta, fill: bool):
    """A new tensor with the shape, strides, type and device of a :func:`describe` entry (random when ``fill``)."""
    if meta is None:
        return None
    shape, strides, dtype, device = meta
    t = torch.empty_strided(shape, strides, dtype=dtype, device=device)
    return t.normal_() if fill else t


def _check_model(op: str, model) -> None:
    if not callable(model):
        raise AutotuneError(f"cute_py.torch.{op}: model must be callable (a torch.nn.Module or a function), got "
                            f"{type(model).__name__}")


def autotune(model, example_inputs, *, backward: bool = True, progress: bool = True, candidates=None,
             reps: int = 10, warmup: int = 3, batch: int = 10, cache: bool = True, check: bool = True) -> dict:
    """Run ``model`` once on ``example_inputs`` (see :func:`collect`), then tune each distinct GEMM problem it
    made with :func:`cute_py.autotune` on fresh random tensors of the same shapes, strides and types; the winners
    go into the on-disk tuned table, where every later ``cute_py.gemm`` (and so every cute_py operator) finds
    them. Returns ``{problem key: AutotuneResult}``. ``candidates``, ``reps``, ``warmup``, ``batch``, ``cache``
    and ``check`` go to :func:`cute_py.autotune`; ``progress`` prints a line per problem on stderr and shows each
    problem's candidates as :func:`cute_py.autotune` does.

    Raises :class:`~cute_py.autotune.AutotuneError` for a ``model`` that is not callable or bad options, and
    :class:`~cute_py.runtime.CudaRuntimeError` (``NoDeviceError``, ...) when there is no GPU to time on, before the
    model runs; :class:`~cute_py.autotune.AutotuneError` when the run made no cute_py GEMM on a CUDA device
    (nothing to tune).

    >>> results = cute_py.torch.autotune(model, (x,))                   # doctest: +SKIP
    cute_py.torch.autotune: problem 1/3, 16384x14336x4096 (a K-major, b K-major, bf16 -> bf16, bias col, gelu)
    ...
    """
    _check_model("autotune", model)
    backward = flag("cute_py.torch.autotune", "backward", backward, AutotuneError)
    check_options("cute_py.torch.autotune", reps=reps, warmup=warmup, batch=batch, progress=progress, cache=cache,
                  check=check)
    device()                                 # no GPU: say so now (the CPU kernels launch nothing to tune)
    calls = collect(model, example_inputs, backward=backward)
    if not calls:
        raise AutotuneError("cute_py.torch.autotune: model(*example_inputs) made no cute_py GEMM on a CUDA device, "
                            "so there is nothing to tune: put the model and its inputs on the GPU, and its "
                            "nn.Linear layers in cute_py.torch.Linear (cute_py.torch.swap_linear(model))")
    distinct: dict = {}
    for call in calls:
        with torch.no_grad():
            args = {k: _fresh(call[k], fill=k != "out") for k in ("a", "b", "c", "bias", "out")}
        problem = Problem.from_arrays(args["a"], args["b"], args["c"], beta=call["beta"], bias=args["bias"],
                                      activation=call["activation"], out=args["out"], op="cute_py.torch.autotune")
        distinct.setdefault(problem_key(problem), (problem, call, args))
    results = {}
    for i, (key, (problem, call, args)) in enumerate(distinct.items(), 1):
        if progress:
            print(f"cute_py.torch.autotune: problem {i}/{len(distinct)}, {problem.shape} (a {problem.a_major}-major, "
                  f"b {problem.b_major}-major, {problem.dtype} -> {problem.out_dtype}, bias {problem.bias}, "
                  f"{problem.activation})", file=sys.stderr)
        with torch.no_grad():
            results[key] = tune_arrays(args["a"], args["b"], args["c"], alpha=call["alpha"], beta=call["beta"],
                                       bias=args["bias"], activation=call["activation"], out=args["out"],
                                       progress=progress, candidates=candidates, reps=reps, warmup=warmup,
                                       batch=batch, cache=cache, check=check)
    return results
