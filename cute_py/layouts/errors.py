"""Errors raised by the layout algebra.

Every rejected input raises a subclass of :class:`LayoutError` (itself a
``ValueError``). The message names the operation, the rule that was broken (in
the words CuTe's headers use), the failing mode and its values, and the operands
in CuTe notation, e.g.::

    composition: stride divisibility condition violated at mode 0 of the
    coalesced A (shape 6, stride 1): B's stride 4 ... ; A = (6,4):(1,10), B = 4:4
"""

from __future__ import annotations

__all__ = [
    "LayoutError",
    "RankError",
    "DivisibilityError",
    "InjectivityError",
    "CoordinateError",
    "ParseError",
    "layout_error",
    "in_operation",
]


class LayoutError(ValueError):
    """Base class of every error the algebra raises for a rejected input.

    Attributes:
        op: the public operation that rejected the input (e.g. ``"composition"``).
        rule: the violated condition, in CuTe's words.
    """

    def __init__(self, message: str, *, op: str = "", rule: str = ""):
        super().__init__(message)
        self.op = op
        self.rule = rule


class RankError(LayoutError):
    """Ranks or profiles of the operands do not match what the operation needs."""


class DivisibilityError(LayoutError):
    """A shape or stride divisibility condition of the algebra is violated."""


class InjectivityError(LayoutError):
    """The operation needs an injective layout (e.g. complement, left_inverse)."""


class CoordinateError(LayoutError):
    """A coordinate is not congruent with (or out of the domain of) a shape."""


class ParseError(LayoutError):
    """Text could not be parsed as a layout, swizzle or IntTuple.

    Attributes:
        text: the input text.
        pos: index of the offending character.
    """

    def __init__(self, message: str, *, text: str = "", pos: int = 0):
        super().__init__(message, op="parse", rule="syntax")
        self.text = text
        self.pos = pos


def _fmt(x) -> str:
    from .int_tuple import to_str

    return to_str(x)


def layout_error(cls, op: str, rule: str, detail: str = "", **operands) -> LayoutError:
    """Build an error of class ``cls``: ``"<op>: <rule>[: detail]; A = ..., B = ..."``."""
    msg = f"{op}: {rule}"
    if detail:
        msg += f": {detail}"
    if operands:
        msg += "; " + ", ".join(f"{k} = {_fmt(v)}" for k, v in operands.items())
    return cls(msg, op=op, rule=rule)


def in_operation(err: LayoutError, op: str, **operands) -> LayoutError:
    """Re-frame an error raised by an inner step as an error of the public operation ``op``.

    The new error has the same class and rule; its message names ``op`` and its
    operands, then the inner reason.
    """
    msg = f"{op}: {err.rule or 'rejected input'}"
    if operands:
        msg += " for " + ", ".join(f"{k} = {_fmt(v)}" for k, v in operands.items())
    msg += f"\n  because {err}"
    return type(err)(msg, op=op, rule=err.rule) if not isinstance(err, ParseError) else err
