"""The emitter's own checks: every constant the kernel prints is checked against the layouts it came from.

A failed check is a bug in a derivation (never a user error: a spec that no
kernel can implement is a :class:`~cute_py.emit.spec.SpecError` first), so the
message says which operation derived the fact, which condition broke, where it
first breaks (for a check over a whole domain) and with which values. The checks
are explicit ``if``s, not ``assert`` statements, so ``python -O`` keeps them.

>>> import numpy as np
>>> require(np.arange(4) < 3, "example", "every index is below 3", at=("i",), values={"index": np.arange(4)})
Traceback (most recent call last):
...
cute_py.emit.checks.EmitError: example: every index is below 3: fails at i=3 (index = 3)
"""

from __future__ import annotations

from ..layouts.errors import LayoutError, layout_error

__all__ = ["EmitError", "require"]


class EmitError(LayoutError):
    """A fact the emitter would print does not hold for the layouts it was derived from.

    ``op`` is the derivation (e.g. ``"gemm_plan"``), ``rule`` the broken condition.

    >>> from cute_py import LayoutError
    >>> issubclass(EmitError, LayoutError)
    True
    """


def require(ok, op: str, rule: str, *, at=(), values=None, **operands) -> None:
    """Raise :class:`EmitError` unless ``ok`` holds: a bool, or a numpy bool array that must hold everywhere.

    For an array, ``at`` names its axes and the message gives the first failing place, with each of
    ``values`` (name -> array broadcastable to ``ok``'s shape) there; ``operands`` (name -> value, e.g. a
    layout) are named after it, as in every :class:`~cute_py.layouts.LayoutError`.
    """
    import numpy as np

    if not hasattr(ok, "shape"):
        if not ok:
            raise layout_error(EmitError, op, rule, **operands)
        return
    if ok.all():
        return
    bad = np.argwhere(~np.asarray(ok))[0]
    place = ", ".join(f"{name}={int(i)}" for name, i in zip(at, bad))
    detail = f"fails at {place}" if place else "fails"
    shown = []
    for name, arr in (values or {}).items():
        arr = np.broadcast_to(np.asarray(arr), ok.shape)
        shown.append(f"{name} = {arr[tuple(bad)].tolist()}")
    if shown:
        detail += f" ({', '.join(shown)})"
    raise layout_error(EmitError, op, rule, detail, **operands)
