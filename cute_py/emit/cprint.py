"""Print symbolic index expressions (sympy) as integer CUDA C.

sympy's own C printers are not integer C: ``floor(i/M)`` becomes an ambiguous
floating-point overload, ``floor(i/8)`` becomes floating point, ``Min``
becomes ``fmin``. :func:`to_c` prints only integer operations:

=========================  ======================================
sympy                      C
=========================  ======================================
``floor(a/b)``             ``a / b``  (integer division)
``ceiling(a/b)``           ``(a + b - 1) / b``
``Mod(a, b)``              ``a % b``
``Min(a, b)``/``Max``      ``min(a, b)`` / ``max(a, b)``
``a**n`` (0 <= n <= 16)    ``a * a * ... * a``
symbols, ints              names, ints (``ll`` suffix with ``int64``)
``a < b``, ``And``, ...    ``a < b``, ``&&``, ``||``, ``!``
=========================  ======================================

Operands of ``/`` and ``%`` that are not atoms are parenthesized, and so is a
division or remainder used as a factor, so C's left-to-right evaluation of
``*``, ``/`` and ``%`` can never regroup an integer division.

**Assumption: the operands of every division and remainder are
non-negative** (divisors positive), as they are for layout offsets, extents
and indices. Then C's truncating ``/`` and ``%`` agree with ``floor`` and
sympy's ``Mod``. ``to_c`` cannot check this in general; it refuses only what
is provably wrong (a provably negative divisor) and anything that is not an
integer (a rational coefficient or a negative power outside ``floor`` /
``ceiling``, a float, an unknown function), with :class:`CPrintError`.

With ``int64=True`` every symbol is cast (``(long long)M``) and every literal
gets ``ll``, so the whole computation is 64-bit even when the symbols are
``int`` kernel parameters; otherwise the expression has the type of its
operands (overflow is the caller's concern).

sympy is imported when the first expression is printed, not with this module
(``import cute_py`` does not load it).

>>> from cute_py.symbolic import symbols, indices
>>> from cute_py import Layout, logical_divide
>>> M, K = symbols("M K")
>>> i = indices("i")
>>> to_c(logical_divide(Layout((M, K), (K, 1)), (128, 64)).shape[0][1])
'(M + 127) / 128'
>>> to_c(Layout((128, M), (K, 128 * K))(i))
'K * (i % 128) + 128 * K * (i / 128)'
>>> to_c(M * K + 1, int64=True)
'(long long)K * (long long)M + 1ll'
"""

from __future__ import annotations

from collections.abc import Mapping

import re

__all__ = ["to_c", "CPrintError", "commented"]

_ATOM, _UNARY, _MUL, _ADD, _REL, _EQ, _AND, _OR = 100, 90, 80, 70, 60, 55, 40, 30
_MAX_POWER = 16
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ATOMIC_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")  # an identifier or a member access (threadIdx.x)
_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while min max""".split())


class CPrintError(ValueError):
    """The expression cannot be printed as integer C (not an integer, or an unsupported function).

    >>> from cute_py.symbolic import symbols
    >>> M = symbols("M")
    >>> to_c(M / 2)
    Traceback (most recent call last):
    ...
    cute_py.emit.cprint.CPrintError: to_c: M/2 is not an integer expression: the rational coefficient 1/2 needs floor() or ceiling()
    """


class _Printer:
    def __init__(self, int64: bool, names):
        import sympy

        self.sp = sympy
        self.int64 = int64
        self.names = {}
        for k, v in (names or {}).items():
            self.names[k.name if isinstance(k, self.sp.Symbol) else str(k)] = str(v)
        self.root = None

    def fail(self, why: str):
        return CPrintError(f"to_c: {self.root} {why}")

    # -- leaves --------------------------------------------------------------
    def integer(self, n: int):
        text = f"{n}ll" if self.int64 else str(n)
        return text, (_ATOM if n >= 0 else _UNARY)

    def symbol(self, s):
        text = self.names.get(s.name)
        if text is None:
            if not _IDENT.match(s.name) or s.name in _C_KEYWORDS:
                raise self.fail(f"has the symbol {s.name!r}, which is not a C identifier (pass names={{...}})")
            text = s.name
        elif not _ATOMIC_NAME.match(text):
            text = f"({text})"
        if self.int64:
            return f"(long long){text}", _UNARY
        return text, _ATOM

    # -- helpers -------------------------------------------------------------
    @staticmethod
    def wrap(text_prec, min_prec):
        text, prec = text_prec
        return f"({text})" if prec < min_prec else text

    def operand(self, e):
        """An operand of / or %: anything but an atom is parenthesized (cast symbols count as atoms)."""
        text, prec = self.p(e)
        return text if prec >= _UNARY and not text.startswith("-") else f"({text})"

    def divide(self, num, den):
        if den.is_positive is False or den.is_zero:
            raise self.fail(f"divides by {den}, which is not positive")
        if num.is_negative:
            raise self.fail(f"divides {num}, which is negative (C's / truncates, floor does not)")
        if den == 1:
            return self.p(num)
        return f"{self.operand(num)} / {self.operand(den)}", _MUL

    def fraction(self, arg):
        """Integer numerator and denominator of ``arg`` (the argument of floor / ceiling)."""
        num, den = self.sp.fraction(self.sp.together(arg))
        for part in (num, den):
            if part.is_integer is not True:
                raise self.fail(f"has floor/ceiling of {arg}, whose numerator and denominator are not integers")
        if den.is_negative:
            num, den = -num, -den
        return num, den

    # -- the printer ---------------------------------------------------------
    def p(self, e):
        if isinstance(e, bool) or e is self.sp.true or e is self.sp.false:
            return ("1" if e else "0"), _ATOM
        if isinstance(e, int):
            return self.integer(e)
        if not isinstance(e, self.sp.Basic):               # e.g. a sympy function object inside a Dict
            raise self.fail(f"has {type(e).__name__} {e!r:.40}, which is not an integer expression")
        if e.is_Integer:
            return self.integer(int(e))
        if e.is_Symbol:
            return self.symbol(e)
        if e.is_Rational or e.is_Float or e.is_number and not e.is_Integer:
            raise self.fail(f"has the non-integer number {e}")
        if e.is_Add:
            return self.add(e)
        if e.is_Mul:
            return self.mul(e)
        if e.is_Pow:
            return self.pow(e)
        if isinstance(e, self.sp.floor):
            return self.divide(*self.fraction(e.args[0]))
        if isinstance(e, self.sp.ceiling):
            num, den = self.fraction(e.args[0])
            if den == 1:
                return self.p(num)
            if den.is_positive is False:
                raise self.fail(f"divides by {den}, which is not positive")
            if den.is_Integer:  # (M + 127) / 128
                return f"{self.operand(num + (den - 1))} / {self.operand(den)}", _MUL
            one = self.integer(1)[0]
            top = f"{self.wrap(self.p(num), _ADD)} + {self.wrap(self.p(den), _ADD + 1)} - {one}"
            return f"({top}) / {self.operand(den)}", _MUL
        if isinstance(e, self.sp.Mod):
            a, b = e.args
            for x in (a, b):
                if x.is_integer is not True:
                    raise self.fail(f"has Mod of {x}, which is not an integer")
            if b.is_positive is False:
                raise self.fail(f"takes a remainder by {b}, which is not positive")
            if a.is_negative:
                raise self.fail(f"takes a remainder of {a}, which is negative (C's % truncates, Mod does not)")
            return f"{self.operand(a)} % {self.operand(b)}", _MUL
        if isinstance(e, (self.sp.Min, self.sp.Max)):
            fn = "min" if isinstance(e, self.sp.Min) else "max"
            args = [self.p(a)[0] for a in e.args]
            text = args[-1]
            for a in reversed(args[:-1]):
                text = f"{fn}({a}, {text})"
            return text, _ATOM
        if isinstance(e, self.sp.Abs):
            return f"abs({self.p(e.args[0])[0]})", _ATOM
        if isinstance(e, self.sp.core.relational.Relational):
            return self.relational(e)
        if isinstance(e, (self.sp.And, self.sp.Or)):
            op, prec = (" && ", _AND) if isinstance(e, self.sp.And) else (" || ", _OR)
            return op.join(self.wrap(self.p(a), prec + 1) for a in e.args), prec
        if isinstance(e, self.sp.Not):
            return "!" + self.wrap(self.p(e.args[0]), _UNARY), _UNARY
        raise self.fail(f"has {type(e).__name__} ({e}), which has no integer C form")

    def add(self, e):
        terms = list(e.as_ordered_terms())
        terms.sort(key=lambda t: t.is_number)  # constants last: "M - 1", not "-1 + M"
        out = self.wrap(self.p(terms[0]), _ADD)
        for t in terms[1:]:
            if t.could_extract_minus_sign():
                out += " - " + self.wrap(self.p(-t), _ADD + 1)
            else:
                out += " + " + self.wrap(self.p(t), _ADD + 1)
        return out, _ADD

    def mul(self, e):
        coeff, rest = e.as_coeff_Mul()
        if not coeff.is_Integer:
            raise self.fail(f"is not an integer expression: "
                            f"the rational coefficient {coeff} needs floor() or ceiling()")
        if coeff == -1:
            return "-" + self.wrap(self.p(-e), _UNARY), _UNARY
        factors = [] if coeff == 1 else [self.integer(int(coeff))]
        for f in rest.as_ordered_factors():
            if f.is_Pow and f.exp.is_negative:
                raise self.fail(f"is not an integer expression: it divides by {1 / f}; use floor() or ceiling()")
            factors.append(self.p(f))
        if len(factors) == 1:
            return factors[0]
        # a division or remainder factor is parenthesized so C cannot regroup it: K * (i / 128)
        return " * ".join(f"({text})" if prec <= _MUL else text for text, prec in factors), _MUL

    def pow(self, e):
        b, n = e.args
        if not (n.is_Integer and 0 <= int(n) <= _MAX_POWER):
            raise self.fail(f"has the power {e}; only integer exponents 0..{_MAX_POWER} print as products")
        if int(n) == 0:
            return self.integer(1)
        factor = self.wrap(self.p(b), _MUL + 1)
        if int(n) == 1:
            return self.p(b)
        return " * ".join([factor] * int(n)), _MUL

    def relational(self, e):
        ops = {"<": _REL, "<=": _REL, ">": _REL, ">=": _REL, "==": _EQ, "!=": _EQ}
        op = e.rel_op
        if op not in ops:
            raise self.fail(f"has the relation {op}, which has no C form")
        prec = ops[op]
        lhs = self.wrap(self.p(e.lhs), prec + 1)
        rhs = self.wrap(self.p(e.rhs), prec + 1)
        return f"{lhs} {op} {rhs}", prec


def to_c(expr, *, int64: bool = False, names=None) -> str:
    """Integer CUDA C for a sympy (or int) expression: an index, an extent, an offset, a predicate.

    ``int64``: cast every symbol to ``long long`` and suffix every literal
    with ``ll`` (64-bit offsets). ``names`` maps symbols (or their names) to
    the C text to print for them, e.g. ``{m: "blockIdx.x"}``.

    Assumes the operands of ``/`` and ``%`` are non-negative (see the module
    docstring); raises :class:`CPrintError` for what has no integer C form.

    >>> from cute_py.symbolic import symbols, indices
    >>> M, K = symbols("M K")
    >>> m, i = indices("m i")
    >>> import sympy
    >>> to_c(sympy.Min(M - 128 * m, 128), names={m: "blockIdx.x"})
    'min(128, M - 128 * blockIdx.x)'
    >>> to_c(sympy.ceiling(M / K))
    '(M + K - 1) / K'
    >>> to_c(sympy.floor(sympy.floor(i / 4) / M) * 2)
    '2 * ((i / 4) / M)'
    >>> to_c(7), to_c(7, int64=True)
    ('7', '7ll')
    """
    if isinstance(expr, bool):
        raise TypeError("to_c: expected an integer or a sympy expression, got a bool")
    if names is not None and not isinstance(names, Mapping):
        raise TypeError(f"to_c: names must be a mapping of symbols to C names, got {type(names).__name__}")
    printer = _Printer(int64, names)
    if isinstance(expr, int):
        return printer.integer(expr)[0]
    sp = printer.sp
    if not isinstance(expr, sp.Basic):
        if isinstance(expr, (Mapping, list, tuple, set, frozenset)):
            raise TypeError(f"to_c: expected an integer or a sympy expression, got {type(expr).__name__}")
        try:
            expr = sp.sympify(expr, strict=True)
        except (sp.SympifyError, TypeError):
            raise TypeError(f"to_c: expected an integer or a sympy expression, got {type(expr).__name__}") from None
        if not isinstance(expr, sp.Basic):                  # sympify keeps containers (dict, list) as they are
            raise TypeError(f"to_c: expected an integer or a sympy expression, got {type(expr).__name__}")
    printer.root = expr
    return printer.p(expr)[0]


def commented(code: str, comment: str, column: int = 56) -> str:
    """A line of C, ``code``, with ``// comment`` aligned at ``column`` (one space after longer code).

    >>> commented("constexpr int kStages = 4;", "ring depth", 30)
    'constexpr int kStages = 4;    // ring depth'
    """
    return f"{code}{' ' * max(1, column - len(code))}// {comment}"
