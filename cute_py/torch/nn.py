"""``cute_py.torch.Linear`` (a drop-in for ``torch.nn.Linear``) and ``swap_linear`` (put it into a model)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import torch

from ..emit.spec import ACTIVATIONS
from ..options import flag
from ..problem import GemmInputError
from .functional import matmul

__all__ = ["Linear", "swap_linear", "SwapReport", "why_not_swapped"]

_GEMM_TYPES = (torch.bfloat16, torch.float16)
_TAKES = "cute_py's GEMMs take torch.bfloat16 and torch.float16"
_HOOKS = tuple(h for h in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
                           "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_backward_pre_hooks",
                           "_backward_hooks") if hasattr(torch.nn.Module(), h))
"""A module's hook tables, which :meth:`Linear.from_linear` shares with the module it replaces."""


class Linear(torch.nn.Linear):
    """``y = act(x @ weight.T + bias)`` with cute_py's GEMMs (bias and activation fused into the epilogue).

    A subclass of ``torch.nn.Linear`` with the same parameters (``weight`` (out_features, in_features),
    ``bias`` (out_features)), initialisation and ``state_dict`` keys, so weights load both ways and
    ``isinstance(m, nn.Linear)`` holds. The weight is read as ``weight.t()``, a K-major operand, without a copy;
    under autograd the backward pass runs cute_py GEMMs too (see :data:`cute_py.torch.ops.gemm`). The types are
    bfloat16 or float16, the types cute_py's GEMMs take (any ``in_features`` and ``out_features``): ``dtype``
    None is torch's default dtype when that is one of them, else bfloat16 (``nn.Linear`` would make float32
    weights, which no cute_py GEMM reads); another ``dtype`` is refused. On the CPU the same arithmetic runs in
    torch, with the same types.

    >>> m = Linear(64, 32, activation="relu")
    >>> m, m.weight.dtype
    (cute_py.torch.Linear(in_features=64, out_features=32, bias=True, activation='relu'), torch.bfloat16)
    >>> m(torch.randn(5, 64, dtype=torch.bfloat16)).shape
    torch.Size([5, 32])
    >>> sorted(m.state_dict()) == sorted(torch.nn.Linear(64, 32).state_dict())
    True
    >>> Linear(64, 32, dtype=torch.float32)
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: Linear: dtype torch.float32: cute_py's GEMMs take torch.bfloat16 and torch.float16
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, activation: str | None = None,
                 device=None, dtype=None):
        if activation not in ACTIVATIONS:
            raise GemmInputError(f"Linear: activation {activation!r} not in {ACTIVATIONS}")
        bias = flag("Linear", "bias", bias, GemmInputError)
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
                raise GemmInputError(f"Linear: {name} must be an int >= 0, got {type(n).__name__} {n!r:.60}")
        if device is not None:
            try:
                torch.device(device)
            except (RuntimeError, TypeError) as e:
                raise GemmInputError(f"Linear: device {device!r:.60} is not a torch device: {e}") from None
        if dtype is None:
            dtype = torch.get_default_dtype() if torch.get_default_dtype() in _GEMM_TYPES else torch.bfloat16
        if dtype not in _GEMM_TYPES:
            raise GemmInputError(f"Linear: dtype {dtype}: {_TAKES}")
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        if w.dtype not in _GEMM_TYPES:                 # converted after construction (model.float())
            raise GemmInputError(f"cute_py.torch.Linear: weight is {w.dtype}; {_TAKES} (convert the module: "
                                 f".to(torch.bfloat16))")
        if isinstance(x, torch.Tensor) and x.dtype != w.dtype:
            raise GemmInputError(f"cute_py.torch.Linear: the input is {x.dtype} but the weight is {w.dtype}; "
                                 f"convert the input (x.to({w.dtype}))")
        return matmul(x, w.t(), bias=self.bias, activation=self.activation)

    def _get_name(self) -> str:                    # the name a model's repr shows: which layers were swapped
        return "cute_py.torch.Linear"

    def extra_repr(self) -> str:
        act = f", activation={self.activation!r}" if self.activation is not None else ""
        return super().extra_repr() + act

    @classmethod
    def from_linear(cls, m: torch.nn.Linear, activation: str | None = None) -> "Linear":
        """A :class:`Linear` sharing ``m``'s parameter tensors (no copy), training mode and forward hooks. Raises
        TypeError when ``m`` is no ``torch.nn.Linear`` and :class:`~cute_py.problem.GemmInputError` when its weight
        is of a type cute_py's GEMMs do not take.

        >>> base = torch.nn.Linear(16, 8, dtype=torch.bfloat16)
        >>> Linear.from_linear(base).weight is base.weight
        True
        >>> Linear.from_linear(torch.nn.Conv1d(2, 2, 1))
        Traceback (most recent call last):
        ...
        TypeError: Linear.from_linear: m must be a torch.nn.Linear, got Conv1d
        """
        if not isinstance(m, torch.nn.Linear):
            raise TypeError(f"Linear.from_linear: m must be a torch.nn.Linear, got {type(m).__name__}")
        if m.weight.dtype not in _GEMM_TYPES:
            raise GemmInputError(f"Linear.from_linear: m's weight is {m.weight.dtype}; {_TAKES} (convert m first: "
                                 f"m.to(torch.bfloat16))")
        new = cls(m.in_features, m.out_features, bias=m.bias is not None, activation=activation, device="meta",
                  dtype=m.weight.dtype)
        new.weight = m.weight
        new.bias = m.bias
        new.train(m.training)
        for hooks in _HOOKS:                   # the same dicts: handles made before the swap still remove them
            setattr(new, hooks, getattr(m, hooks))
        return new


def why_not_swapped(m: torch.nn.Module) -> str | None:
    """Why :func:`swap_linear` leaves ``m`` as it is (None: it would swap it).

    >>> why_not_swapped(torch.nn.Linear(64, 64, dtype=torch.bfloat16)) is None
    True
    >>> why_not_swapped(torch.nn.Linear(64, 50, dtype=torch.bfloat16)) is None    # any sizes
    True
    >>> why_not_swapped(torch.nn.Linear(64, 64))
    "weight is torch.float32; cute_py's GEMMs take torch.bfloat16 and torch.float16 (convert the model first)"
    """
    if isinstance(m, Linear):
        return "already a cute_py.torch.Linear"
    if type(m) is not torch.nn.Linear:
        return f"a subclass of nn.Linear ({type(m).__name__}), whose forward may differ"
    if not isinstance(m.weight, torch.nn.Parameter):
        return "its weight is computed by a hook (pruning, weight norm, a parametrization), not a parameter"
    if m.weight.dtype not in _GEMM_TYPES:
        return f"weight is {m.weight.dtype}; {_TAKES} (convert the model first)"
    return None


@dataclass
class SwapReport:
    """What :func:`swap_linear` did: the qualified names it swapped, and ``(name, reason)`` for each nn.Linear it
    skipped.

    >>> print(SwapReport(["fc1"], [("head", "weight is torch.float32")]))
    swapped 1 nn.Linear module for cute_py.torch.Linear; skipped 1:
      head: weight is torch.float32
    """

    swapped: list = field(default_factory=list)
    skipped: list = field(default_factory=list)

    def __str__(self) -> str:
        n = len(self.swapped)
        head = f"swapped {n} nn.Linear module{'s' if n != 1 else ''} for cute_py.torch.Linear"
        if not self.skipped:
            return head
        return "\n".join([f"{head}; skipped {len(self.skipped)}:"] +
                         [f"  {name or '(the model itself)'}: {why}" for name, why in self.skipped])


def swap_linear(model: torch.nn.Module) -> SwapReport:
    """Replace, in place, every eligible ``nn.Linear`` inside ``model`` by a :class:`Linear` sharing its
    parameters (:meth:`Linear.from_linear`); return a :class:`SwapReport` naming what was swapped and, with the
    reason (:func:`why_not_swapped`), what was not. Raises TypeError when ``model`` is no ``torch.nn.Module``.

    >>> model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10, dtype=torch.float32))
    >>> print(swap_linear(model.to(torch.bfloat16).append(torch.nn.Linear(10, 10))))
    swapped 2 nn.Linear modules for cute_py.torch.Linear; skipped 1:
      3: weight is torch.float32; cute_py's GEMMs take torch.bfloat16 and torch.float16 (convert the model first)
    >>> type(model[0]).__module__
    'cute_py.torch.nn'
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"swap_linear: model must be a torch.nn.Module, got {type(model).__name__}")
    report = SwapReport()
    if isinstance(model, torch.nn.Linear):
        report.skipped.append(("", "the model itself is an nn.Linear; use cute_py.torch.Linear.from_linear(model)"))
        return report
    swapped: dict = {}                  # id(old module) -> its replacement: a module used twice stays one module
    for parent_name, parent in list(model.named_modules(remove_duplicate=False)):
        for name, child in list(parent._modules.items()):
            if not isinstance(child, torch.nn.Linear) or isinstance(child, Linear):
                continue
            qualified = f"{parent_name}.{name}" if parent_name else name
            why = why_not_swapped(child)
            if why is not None:
                report.skipped.append((qualified, why))
                continue
            if id(child) not in swapped:
                swapped[id(child)] = Linear.from_linear(child)
            setattr(parent, name, swapped[id(child)])
            report.swapped.append(qualified)
    return report
