"""Errors raised by the layout algebra.

Every rejected input raises a subclass of :class:`LayoutError` (itself a
``ValueError``). The message names the operation, the rule that was broken (in
the words CuTe's headers use), the failing mode and its values, and the operands
in CuTe notation, e.g.::

    composition: stride divisibility condition violated at mode 0 of the
    coalesced A (shape 6, stride 1): B's stride 4 ... ; A = (6,4):(1,10), B = 4:4
"""

from __future__ import annotations

import functools
import re
import reprlib

__all__ = [
    "LayoutError",
    "RankError",
    "DivisibilityError",
    "InjectivityError",
    "CoordinateError",
    "ParseError",
    "SymbolicError",
    "SizeLimitError",
    "layout_error",
    "size_limit_error",
    "in_operation",
    "names_caller",
]


class LayoutError(ValueError):
    """Base class of every error the algebra raises for a rejected input.

    Attributes:
        op: the public operation that rejected the input (e.g. ``"composition"``).
        rule: the violated condition, in CuTe's words.

    >>> import cute_py
    >>> try:
    ...     cute_py.composition(cute_py.parse("(6,4):(1,10)"), cute_py.parse("4:4"))
    ... except cute_py.LayoutError as e:
    ...     print(type(e).__name__, e.op, "|", e.rule)
    DivisibilityError composition | stride divisibility condition
    """

    def __init__(self, message: str, *, op: str = "", rule: str = ""):
        super().__init__(message)
        self.op = op
        self.rule = rule


class RankError(LayoutError):
    """Ranks or profiles of the operands do not match what the operation needs.

    >>> import cute_py
    >>> cute_py.get(cute_py.Layout((4, 8)), 2)
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.RankError: get: mode index out of range: mode 2 of a rank-2 layout; layout = (4,8):(1,4)
    """


class DivisibilityError(LayoutError):
    """A shape or stride divisibility condition of the algebra is violated.

    >>> import cute_py
    >>> cute_py.tile_to_shape(cute_py.Layout((2, 2)), (4, 6)).shape
    ((2, 2), (2, 3))
    >>> cute_py.tile_to_shape(cute_py.Layout((4, 4)), (4, 6))
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.DivisibilityError: tile_to_shape: block shape does not divide the target shape: mode 1: 6 % 4 != 0; block = (4,4):(1,4), target_shape = (4,6)
    """


class InjectivityError(LayoutError):
    """The operation needs an injective layout (e.g. complement).

    >>> import cute_py
    >>> cute_py.complement(cute_py.parse("(2,2):(1,1)"))
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.InjectivityError: complement: non-injective layout in complement: stride 1 overlaps the modes below it (which reach 2); layout = (2,2):(1,1)
    """


class CoordinateError(LayoutError):
    """A coordinate is not congruent with the shape it indexes.

    >>> import cute_py
    >>> cute_py.Layout((4, 8))((1, 2, 3))
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.CoordinateError: Layout.__call__: coordinate is not congruent with the shape; coord = (1,2,3), layout = (4,8):(1,4)
    """


class ParseError(LayoutError):
    """Text could not be parsed as a layout, swizzle or IntTuple.

    Attributes:
        text: the input text.
        pos: index of the offending character.

    >>> import cute_py
    >>> try:
    ...     cute_py.parse("(4,2]:(1,4)")
    ... except cute_py.ParseError as e:
    ...     print(e.pos)
    4
    """

    def __init__(self, message: str, *, text: str = "", pos: int = 0):
        super().__init__(message, op="parse", rule="syntax")
        self.text = text
        self.pos = pos


class SymbolicError(LayoutError):
    """A static fact the operation needs is unknown for the symbolic extents it was given.

    CuTe decides some conditions at compile time (a divisibility, a comparison of
    two extents); with a dynamic integer it either cannot compile or computes at
    run time. cute_py decides them with sympy and raises this error, naming the
    operation, the fact it needs and the symbolic values, when they cannot be
    decided for every value of the symbols.

    Attributes:
        fact: the condition that is needed, e.g. ``"M % 128 == 0"``.
        values: the symbolic values it involves, as text.

    >>> import cute_py
    >>> from cute_py.symbolic import symbols
    >>> M = symbols("M")
    >>> try:
    ...     cute_py.tile_to_shape(cute_py.Layout((64, 64)), (M, 64))
    ... except cute_py.SymbolicError as e:
    ...     print(e.op, "|", e.fact)
    tile_to_shape | M % 64 == 0
    """

    def __init__(self, message: str, *, op: str = "", rule: str = "", fact: str = "", values: str = ""):
        super().__init__(message, op=op, rule=rule)
        self.fact = fact
        self.values = values


class SizeLimitError(LayoutError):
    """The input is too large for an operation that visits every element (it would take too much memory or time).

    Drawing every cell of a layout, or analysing every element an access touches,
    costs time and memory in proportion to the layout's size; above a stated limit
    these operations refuse at once instead of running out of memory.

    Attributes:
        operand: the name of the input that is too large.
        size: how many elements (cells) the operation would visit.
        limit: the largest size the operation accepts.

    >>> import cute_py
    >>> try:
    ...     cute_py.viz.to_text(cute_py.Layout((100000, 100000)), full=True)
    ... except cute_py.SizeLimitError as e:
    ...     print(e.op, "|", e.operand, e.size, ">", e.limit)
    to_text | layout 10000000000 > 1048576
    """

    def __init__(self, message: str, *, op: str = "", rule: str = "", operand: str = "", size: int = 0,
                 limit: int = 0):
        super().__init__(message, op=op, rule=rule)
        self.operand = operand
        self.size = size
        self.limit = limit


_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxtuple = _REPR.maxlist = 12
_REPR.maxstring = 60


def to_str(x) -> str:
    """CuTe's text form of an IntTuple (no spaces; a 1-tuple is ``(4)``).

    >>> to_str(((2, 3), 4))
    '((2,3),4)'
    >>> to_str((4,))
    '(4)'
    """
    if isinstance(x, tuple):
        return "(" + ",".join(to_str(e) for e in x) + ")"
    if type(x) is int:
        return str(x)
    return str(x).replace(" ", "")  # a sympy expression: "3 - M" prints as "3-M"


MAX_DEPTH = 32


def check_depth(op: str, x, limit: int = MAX_DEPTH) -> None:
    """Raise a LayoutError if the tuple ``x`` nests deeper than ``limit`` (guards every recursion)."""
    level = [x]
    for _d in range(limit + 1):
        level = [e for t in level if isinstance(t, tuple) for e in t]
        if not level:
            return
    raise layout_error(LayoutError, op, f"operand nests deeper than {limit} levels")


def _r(x) -> str:
    """A short, recursion-safe repr for error messages (any input, however deep or long)."""
    try:
        return _REPR.repr(x)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        return f"<{type(x).__name__}>"


def _fmt(x) -> str:
    try:
        if isinstance(x, tuple):
            check_depth("format", x, 8)
        return to_str(x)
    except (LayoutError, RecursionError):
        return _r(x)


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
    if isinstance(err, ParseError):
        return err
    new = type(err)(msg, op=op, rule=err.rule)
    if isinstance(err, SymbolicError):
        new.fact, new.values = err.fact, err.values
    return new


def size_limit_error(op: str, operand: str, value, size: int, limit: int, unit: str = "elements",
                     hint: str = "") -> SizeLimitError:
    """A :class:`SizeLimitError`: ``"<op>: <operand> is too large: <size> <unit> > limit <limit>[; hint]; <operand> = ..."``.

    >>> print(size_limit_error("to_svg", "layout", "(4096,4096):(1,4096)", 16777216, 262144, "cells"))
    to_svg: layout is too large: 16777216 cells > limit 262144; layout = (4096,4096):(1,4096)
    """
    msg = f"{op}: {operand} is too large: {size} {unit} > limit {limit}"
    if hint:
        msg += f"; {hint}"
    msg += f"; {operand} = {value if isinstance(value, str) else _fmt(value)}"
    return SizeLimitError(msg, op=op, rule="size limit", operand=operand, size=size, limit=limit)


_LEAD = re.compile(r"^([A-Za-z_][\w.]*)(?:\(\))?:")


def names_caller(fn=None, *, op=None):
    """Decorate a public function that delegates: a plain TypeError/ValueError led by the name of the function
    it delegated to (``"logical_divide: expected a Layout ..."``) is re-raised led by ``fn``'s own name too, so
    the message names the function the user called (LayoutError subclasses already do, via :func:`in_operation`).
    ``op`` names the user's function where ``fn`` has another name.

    >>> @names_caller
    ... def outer(x):
    ...     raise TypeError("inner: expected a Layout, got 1")
    >>> outer(1)
    Traceback (most recent call last):
      ...
    TypeError: outer: inner: expected a Layout, got 1
    """
    if fn is None:
        return functools.partial(names_caller, op=op)
    op = op or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            led = led_by(op, e)
            if led is None:
                raise
            raise led from e

    return wrapper


def led_by(op: str, e: Exception):
    """``e`` led by ``op`` (``"op: inner: ..."``) where ``e`` is a plain TypeError/ValueError whose message
    another function leads; None where it is led by ``op`` already, is led by nothing, or is a subclass
    (LayoutError subclasses name their operation through :func:`in_operation`)."""
    if type(e) not in (TypeError, ValueError):
        return None
    msg = str(e)
    m = _LEAD.match(msg)
    if not m or m.group(1) == op:
        return None
    return type(e)(f"{op}: {msg}")
