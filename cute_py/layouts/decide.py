"""Deciding static facts about leaves: the predicates of the one algebra core.

A leaf of a shape, stride or coordinate is an ``int`` (CuTe's static integer)
or a sympy integer expression (CuTe's dynamic one; see :mod:`cute_py.symbolic`).
The algebra asks questions about leaves (``lt(a, b)``, ``divides(a, b)``,
``sign(x)``) and gets True, False, or None when sympy cannot decide the fact
for every value of the symbols; the caller then raises
:class:`~cute_py.layouts.errors.SymbolicError` through ``fail``, naming the
operation and the fact. CuTe's rule is the same: a precondition is enforced
where it is statically decidable.

Every predicate answers two ints first, in one type test, so the int path of
the algebra pays no more than a function call for running on the same code as
the symbolic path. sympy is never imported here: a sympy leaf can only exist
once sympy is loaded, so the symbolic branch reads it from ``sys.modules``.

>>> lt(3, 4), divides(4, 12), ceil_div(7, 2)
(True, True, 4)
>>> from cute_py.symbolic import symbols
>>> M = symbols("M")
>>> lt(M, M + 1), lt(M, 4), divides(4, 4 * M), ceil_div(M, 128)
(True, None, True, ceiling(M/128))
"""

from __future__ import annotations

import importlib
import sys
from numbers import Integral

from .errors import DivisibilityError, LayoutError, SymbolicError, layout_error


class _SympyModule:
    """``SP.<name>``: sympy's attribute, imported on first use (only leaves that are not ``int`` reach these paths)."""

    def __getattr__(self, name):
        return getattr(sys.modules.get("sympy") or importlib.import_module("sympy"), name)


SP = _SympyModule()


def is_int(x) -> bool:
    """True for an integer leaf (``int`` or numpy integer, never ``bool``).

    >>> is_int(3), is_int(True), is_int((3,))
    (True, False, False)
    """
    return type(x) is int or (isinstance(x, Integral) and not isinstance(x, bool))


def is_sym(x) -> bool:
    """True for a sympy expression leaf (a symbolic extent, stride or coordinate; see :mod:`cute_py.symbolic`).

    Never imports sympy: without it loaded, nothing can be a sympy expression.

    >>> import sympy
    >>> is_sym(sympy.Symbol("M", integer=True)), is_sym(4)
    (True, False)
    """
    sp = sys.modules.get("sympy")
    return sp is not None and isinstance(x, sp.Expr)


def symbols_in(x) -> set:
    """The sympy symbols in a leaf, a (nested) tuple of leaves, or anything with ``shape`` and ``stride``."""
    if isinstance(x, tuple):
        return set().union(*(symbols_in(e) for e in x)) if x else set()
    if is_sym(x):
        return x.free_symbols
    inner = getattr(x, "inner", None)          # a composed layout
    if inner is not None and hasattr(inner, "shape"):
        return symbols_in(inner)
    if hasattr(x, "shape") and hasattr(x, "stride"):
        return symbols_in((x.shape, x.stride))
    value = getattr(x, "value", None)          # a ScaledBasis
    return symbols_in(value) if value is not None else set()


def canon(x):
    """sympy numbers (``Integer``) become Python ints, recursively in tuples and basis scales (internal)."""
    if type(x) is int:
        return x
    if isinstance(x, tuple):
        return tuple(canon(e) for e in x)
    if is_sym(x):
        return int(x) if x.is_Integer else x
    value = getattr(x, "value", None)           # a ScaledBasis whose scale became a number
    if is_sym(value) and value.is_Integer:
        return type(x)(int(value), x.mode)
    return x


def check_leaf(x, what: str, op: str):
    """Validate a sympy leaf of a shape, stride or coordinate; return it in canonical form (internal).

    Integer expressions only (``is_integer`` must be True); a shape extent must
    not be provably negative.
    """
    if not is_sym(x):
        raise TypeError(f"{op}: {what} leaves must be integers, got {x!r} of type {type(x).__name__}")
    if x.is_Integer:
        x = int(x)
        if what == "shape" and x < 0:
            raise layout_error(LayoutError, op, "shape extents must be non-negative", f"found {x}")
        return x
    if x.is_integer is not True:
        raise TypeError(f"{op}: {what} leaves must be integers; the sympy expression {x} is not known to be one "
                        f"(make symbols with integer=True, e.g. cute_py.symbolic.symbols(\"M N K\"))")
    if what == "shape" and x.is_negative:
        raise layout_error(LayoutError, op, "shape extents must be non-negative", f"found {x}, which is negative")
    return x


# ---------------------------------------------------------------------------
# Deciding static facts


def _values(*xs) -> str:
    return ", ".join(sorted({str(s) for x in xs for s in symbols_in(x)}))


def fail(op: str, fact: str, detail: str = "", **operands) -> SymbolicError:
    """Build the SymbolicError of ``op`` for the undecidable ``fact`` (internal)."""
    vals = _values(*operands.values()) if operands else ""
    msg = f"needs {fact}"
    if vals:
        msg += f" (symbols {vals})"
    if detail:
        msg += f": {detail}"
    err = layout_error(SymbolicError, op, "a static fact is unknown for symbolic values", msg, **operands)
    err.fact, err.values = fact, vals
    return err


def _diff(a, b):
    return SP.expand(SP.sympify(a) - SP.sympify(b))


def eq(a, b):
    """``a == b`` for every value of the symbols: True, False (provably different) or None."""
    if type(a) is int and type(b) is int:
        return a == b
    d = _diff(a, b)
    if d == 0:
        return True
    if d.is_zero is False:
        return False
    return None


def lt(a, b):
    """``a < b`` decided for every value of the symbols: True, False or None."""
    if type(a) is int and type(b) is int:
        return a < b
    d = _diff(b, a)
    if d.is_positive:
        return True
    if d.is_nonpositive:
        return False
    return None


def le(a, b):
    """``a <= b`` decided for every value of the symbols: True, False or None."""
    if type(a) is int and type(b) is int:
        return a <= b
    d = _diff(b, a)
    if d.is_nonnegative:
        return True
    if d.is_negative:
        return False
    return None


def divides(a, b):
    """``b % a == 0`` for every value of the symbols: True, False (never) or None (``a != 0``)."""
    if type(a) is int and type(b) is int:
        return b % a == 0
    m = SP.Mod(b, a)
    if m.is_Number:
        return m == 0
    q = SP.cancel(SP.sympify(b) / a)
    if q.is_integer:
        return True
    return None


def exact_div(a, b):
    """``a / b`` where ``b`` divides ``a`` (decided by the caller)."""
    if type(a) is int and type(b) is int:
        return a // b
    q = SP.sympify(a) / b
    if not q.is_integer:
        q = SP.cancel(q)
    return canon(q)


def floor_div(a, b):
    """``floor(a / b)`` for positive ``a``, ``b``: the exact quotient where ``b`` divides ``a``."""
    if type(a) is int and type(b) is int:
        return a // b
    if divides(b, a):
        return exact_div(a, b)
    return canon(SP.floor(SP.sympify(a) / b))


def ceil_div(a, b):
    """``ceil(a / b)`` for positive ``a``, ``b`` (CuTe's ``ceil_div``), simplified when decided."""
    if type(a) is int and type(b) is int:
        return -((-a) // b)
    if divides(b, a):
        return exact_div(a, b)
    if le(a, b) and lt(0, a):
        return 1
    return canon(SP.ceiling(SP.sympify(a) / b))


def sign(x, op: str, **operands) -> int:
    """The sign of ``x`` (-1, 0, 1), or SymbolicError when it is unknown."""
    if type(x) is int:
        return (x > 0) - (x < 0)
    x = SP.sympify(x)
    if x.is_positive:
        return 1
    if x.is_negative:
        return -1
    if x.is_zero:
        return 0
    raise fail(op, f"the sign of {x}", **operands)


def expand(x):
    """``sympy.expand`` of a symbolic value, ints as ints (cosize and the like read better expanded)."""
    if type(x) is int:
        return x
    return canon(SP.expand(x))


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _not(a):
    return None if a is None else not a


def require_divides(op: str, b, t, rule: str, where: str = "", **operands):
    """Raise unless ``b`` provably divides ``t``: DivisibilityError when it provably does not (its detail led
    by ``where``), SymbolicError when sympy cannot decide."""
    dv = divides(b, t)
    if dv is None:
        raise fail(op, f"{t} % {b} == 0", rule, **operands)
    if not dv:
        raise layout_error(DivisibilityError, op, rule, f"{where}{t} % {b} != 0", **operands)


def decided_ranks(values, op, **operands) -> list:
    """Indices of ``values`` in increasing order, ties left to right, each comparison decided (insertion sort).

    A comparison that holds only weakly for every value of the symbols (``1 <= M``) orders the smaller-or-equal
    value first: the two differ in order only where they are equal.
    """
    ranked = []
    for i, v in enumerate(values):
        pos = len(ranked)
        for p, j in enumerate(ranked):
            before = lt(v, values[j])
            if before is None:
                before = True if le(v, values[j]) else (False if le(values[j], v) else None)
            if before is None:
                raise fail(op, f"{v} < {values[j]} or {v} >= {values[j]}", "the order of the modes",
                                  **operands)
            if before:
                pos = p
                break
        ranked.insert(pos, i)
    return ranked


# ---------------------------------------------------------------------------
# Leaf arithmetic with symbolic values


def divmod_(a, b):
    """``(a // b, a % b)`` as sympy ``floor`` and ``Mod`` (indices are non-negative)."""
    if type(a) is int and type(b) is int:
        return divmod(a, b)
    return canon(SP.floor(SP.sympify(a) / b)), canon(SP.Mod(a, b))


def shape_div(a, b, op: str):
    """``shape_div`` of two leaves: ``a / b`` where ``b`` divides ``a``, else ``sign(a) * sign(b)`` where ``a``
    divides ``b``; one of the two must hold (decided, for symbolic leaves)."""
    if type(a) is int and type(b) is int and b:
        if a % b == 0:
            return a // b
        if b % a == 0:
            return (1 if (a > 0) == (b > 0) else -1)
    if b == 0:
        raise layout_error(DivisibilityError, op, "division by a zero extent", a=a, b=b)
    if divides(b, a):
        return exact_div(a, b)
    if divides(a, b):
        return sign(a, op, a=a, b=b) * sign(b, op, a=a, b=b)
    if divides(b, a) is False and divides(a, b) is False:
        raise layout_error(DivisibilityError, op, "shape divisibility condition",
                           f"neither {a} % {b} == 0 nor {b} % {a} == 0", a=a, b=b)
    raise fail(op, f"{a} % {b} == 0 or {b} % {a} == 0", "the shape divisibility condition", a=a, b=b)
