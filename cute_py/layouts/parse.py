"""Read CuTe's printed forms back: IntTuples, layouts, swizzles, composed layouts.

Grammar (spaces are ignored; ``_N`` static ints and ``S<...>`` are accepted too)::

    composed := item ("o" item)*           # outer o offset o inner
    item     := swizzle | layout | inttuple
    swizzle  := ("Sw" | "S") "<" int "," int "," int ">"
    layout   := inttuple ":" inttuple     # a stride tuple at a leaf of the shape is a sum of basis terms
    inttuple := "_" | elem | expr | "(" [inttuple ("," inttuple)*] ")"
    elem     := int ("@" int)*            # v@i is v*E<i> (basis strides)
    expr     := a symbolic integer expression (below)

Symbolic extents: an identifier (an ASCII letter, then letters, digits or
``_``; ``o`` is reserved for composed layouts) is a sympy integer symbol, and a
leaf may be an integer expression of symbols and ints with ``+ - * / **``,
parentheses and the functions ``floor``, ``ceiling``, ``Mod``, ``Min``,
``Max`` and ``Abs``: every form ``str`` prints. Arithmetic needs a symbol in
the leaf (``4*2`` stays malformed). Names not given in ``symbols=`` become
positive integer symbols, the ones :func:`cute_py.symbolic.symbols` makes.

>>> print(parse("(4,(2,2)):(2,(1,8))"))
(4,(2,2)):(2,(1,8))
>>> parse("(4)")
(4,)
>>> print(parse("Sw<3,4,3> o 0 o (8,64):(64,1)"))
Sw<3,4,3> o 0 o (8,64):(64,1)
>>> print(parse("((128,ceiling(M/128)),K):((ld,128*ld),1)"))
((128,ceiling(M/128)),K):((ld,128*ld),1)
>>> parse("(4,4):((1,1),3@1)")(1, 1)
(1,4)
"""

from __future__ import annotations

from .basis import ScaledBasis, tuple_strides
from .f2 import F2
from .errors import ParseError, _r
from .int_tuple import _, is_sym
from .layout import Layout
from .swizzle import ComposedLayout, Swizzle

__all__ = ["parse"]

_DIGITS = "0123456789"
_ID_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ID_CHARS = _ID_START + _DIGITS + "_"
_FUNCTIONS = ("floor", "ceiling", "Mod", "Min", "Max", "Abs")
_MAX_POWER = 64


class _Parser:
    def __init__(self, text: str, symbols=None):
        self.text = text
        self.pos = 0
        self.symbols = symbols

    def error(self, what: str):
        t = self.text
        shown = repr(t[self.pos]) if self.pos < len(t) else "end of input"
        msg = f"parse: {what}, found {shown} at position {self.pos}\n  {t}\n  {' ' * self.pos}^"
        return ParseError(msg, text=t, pos=self.pos)

    def skip(self):
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def expect(self, s: str):
        if not self.peek(s):
            raise self.error(f"expected {_r(s)}")
        self.pos += len(s)

    def int_(self) -> int:
        self.skip()
        t, start = self.text, self.pos
        if self.pos < len(t) and t[self.pos] == "_" and self.pos + 1 < len(t) and (
                t[self.pos + 1] in _DIGITS or t[self.pos + 1] == "-"):
            self.pos += 1
        if self.pos < len(t) and t[self.pos] in "+-":
            self.pos += 1
        d0 = self.pos
        while self.pos < len(t) and t[self.pos] in _DIGITS:
            self.pos += 1
        if self.pos == d0:
            self.pos = start
            raise self.error("expected an integer")
        return int(t[start:self.pos].lstrip("_"))

    def elem(self):
        if self.peek("^"):                     # ^v: an F2 stride
            self.pos += 1
            v = self.int_()
            if v < 0:
                raise self.error("an F2 stride must be non-negative")
            return F2(v)
        v = self.int_()
        modes = []
        while self.peek("@"):
            self.pos += 1
            m = self.int_()
            if m < 0:
                raise self.error("basis mode must be non-negative")
            modes.append(m)
        if modes:
            return ScaledBasis(v, tuple(reversed(modes)))
        return v

    def inttuple(self, depth=0):
        self.skip()
        if self.peek("("):
            if depth >= 32:
                raise self.error("nesting deeper than 32 levels")
            self.pos += 1
            items = []
            if self.peek(")"):
                self.pos += 1
                return ()
            while True:
                items.append(self.inttuple(depth + 1))
                if self.peek(","):
                    self.pos += 1
                    continue
                self.expect(")")
                if len(items) == 1 and self._symbolic(items[0]) and self._at_operator():
                    return self.leaf_expr(items[0])  # "(M+1)*K": a parenthesized expression, not a 1-tuple
                return tuple(items)
        if self.peek("_") and not (self.pos + 1 < len(self.text) and self.text[self.pos + 1] in _DIGITS + "-"):
            self.pos += 1
            return _
        if self._at_identifier() or (self.peek("-") and not self._at_digit(self.pos + 1)):
            return self.leaf_expr()
        start = self.pos
        v = self.elem()
        if type(v) is int and self._at_operator():
            self.pos = start
            return self.leaf_expr()
        return v

    # -- symbolic expressions ----------------------------------------------
    def _at_digit(self, i):
        return i < len(self.text) and self.text[i] in _DIGITS

    def _at_identifier(self):
        self.skip()
        return self.pos < len(self.text) and self.text[self.pos] in _ID_START and not self._at_separator()

    def _at_separator(self):
        """The composed-layout separator ``o`` (a lone ``o``, not the start of a longer name)."""
        t, i = self.text, self.pos
        return t.startswith("o", i) and not (i + 1 < len(t) and t[i + 1] in _ID_CHARS)

    def _at_operator(self):
        self.skip()
        return self.pos < len(self.text) and self.text[self.pos] in "+-*/"

    @staticmethod
    def _symbolic(x):
        return is_sym(x)

    def leaf_expr(self, first=None):
        """A symbolic leaf: an integer expression with at least one identifier."""
        import sympy

        self.skip()
        start = self.pos
        self._idents = first is not None
        self._first_op = None
        self._depth = 0
        value = self.sum_(first)
        if not self._idents:
            self.pos = self._first_op if self._first_op is not None else start
            raise self.error("arithmetic needs a symbol (an identifier); integer arithmetic is not notation")
        value = sympy.sympify(value)
        if value.is_Integer:
            return int(value)
        if value.is_integer is not True:
            self.pos = start
            raise self.error(f"{value} is not an integer expression")
        return value

    def _note_op(self):
        if self._first_op is None:
            self._first_op = self.pos

    def sum_(self, first=None):
        v = self.term(first)
        while True:
            self.skip()
            if self.peek("+") or self.peek("-"):
                self._note_op()
                neg = self.text[self.pos] == "-"
                self.pos += 1
                w = self.term()
                v = v - w if neg else v + w
            else:
                return v

    def term(self, first=None):
        v = self.unary(first)
        while True:
            self.skip()
            if self.peek("**"):
                return v  # handled in power()
            if self.peek("*") or self.peek("/"):
                self._note_op()
                div = self.text[self.pos] == "/"
                self.pos += 1
                w = self.unary()
                if div:
                    if w == 0:
                        raise self.error("division by zero")
                    import sympy

                    v = sympy.sympify(v) / w
                else:
                    v = v * w
            else:
                return v

    def unary(self, first=None):
        if first is None:
            self.skip()
            if self.peek("-") or self.peek("+"):
                self._note_op()
                neg = self.text[self.pos] == "-"
                self.pos += 1
                v = self.unary()
                return -v if neg else v
        return self.power(first)

    def power(self, first=None):
        v = self.atom() if first is None else first
        self.skip()
        if self.peek("**"):
            self._note_op()
            self.pos += 2
            self.skip()
            start = self.pos
            e = self.int_()
            if not 0 <= e <= _MAX_POWER:
                self.pos = start
                raise self.error(f"exponent must be an integer in [0, {_MAX_POWER}]")
            v = v ** e
        return v

    def atom(self):
        import sympy

        self.skip()
        t = self.text
        if self.peek("("):
            self._nest()
            v = self.sum_()
            self.expect(")")
            self._depth -= 1
            return v
        if self._at_identifier():
            start = self.pos
            while self.pos < len(t) and t[self.pos] in _ID_CHARS:
                self.pos += 1
            name = t[start:self.pos]
            self._idents = True
            if self.peek("("):
                if name not in _FUNCTIONS:
                    self.pos = start
                    raise self.error(f"unknown function {name!r} (known: {', '.join(_FUNCTIONS)})")
                self._nest()
                args = [self.sum_()]
                while self.peek(","):
                    self.pos += 1
                    args.append(self.sum_())
                self.expect(")")
                self._depth -= 1
                n_args = {"floor": 1, "ceiling": 1, "Abs": 1, "Mod": 2}.get(name)
                if (n_args is not None and len(args) != n_args) or not args:
                    self.pos = start
                    raise self.error(f"{name} takes {n_args} argument(s), got {len(args)}")
                return getattr(sympy, name)(*args)
            return self.symbol(name)
        if self.pos < len(t) and t[self.pos] == "_" and self._at_digit(self.pos + 1):
            return self.int_()
        if self._at_digit(self.pos):
            return self.int_()
        raise self.error("expected an integer, a symbol or '('")

    def _nest(self):
        if self._depth >= 32:
            raise self.error("nesting deeper than 32 levels")
        self._depth += 1
        self.pos += 1

    def symbol(self, name):
        import sympy

        if self.symbols is not None and name in self.symbols:
            return self.symbols[name]
        return sympy.Symbol(name, integer=True, positive=True)

    def item(self):
        for head in ("Sw<", "S<"):
            if self.peek(head):
                self.pos += len(head)
                b = self.int_()
                self.expect(",")
                m = self.int_()
                self.expect(",")
                start = self.pos
                s = self.int_()
                self.expect(">")
                try:
                    return Swizzle(b, m, s)
                except ValueError as e:
                    self.pos = start
                    raise self.error(str(e)) from None
        start = self.pos
        shape = self.inttuple()
        if self.peek(":"):
            self.pos += 1
            stride = self.inttuple()
            try:
                return Layout(shape, tuple_strides(shape, stride, kind=tuple))
            except (ValueError, TypeError) as e:
                self.pos = start
                raise self.error(f"not a valid layout ({e})") from None
        return shape

    def composed(self):
        items = [self.item()]
        while self.peek("o"):
            self.pos += 1
            items.append(self.item())
        self.skip()
        if self.pos != len(self.text):
            raise self.error("unexpected trailing text")
        if len(items) == 1:
            return items[0]
        if len(items) != 3:
            raise ParseError(f"parse: a composed layout has three parts (outer o offset o inner), got {len(items)}"
                             f"\n  {self.text}", text=self.text, pos=0)
        try:
            return ComposedLayout(*items)
        except TypeError as e:
            raise ParseError(f"parse: {e}\n  {self.text}", text=self.text, pos=0) from None


def parse(text: str, symbols=None):
    """Parse CuTe notation into a Layout, Swizzle, ComposedLayout or IntTuple.

    Every form cute_py prints is read back: ``parse(str(x)) == x``. Malformed
    text raises :class:`ParseError` whose message points at the bad character.

    Identifiers are symbolic extents (see the module docstring for the
    expression grammar): ``symbols`` maps names to the sympy symbols (or
    ints, or expressions) to use, as a mapping or an iterable of symbols;
    any other name becomes ``Symbol(name, integer=True, positive=True)``.

    >>> parse("(8,64):(64,1)")
    Layout((8, 64), (64, 1))
    >>> parse("Sw<3,4,3>")
    Swizzle(3, 4, 3)
    >>> parse("((2,3),4)")
    ((2, 3), 4)
    >>> print(parse("(M,K):(K,1)"), parse("(M,K):(K,1)", symbols={"K": 64}))
    (M,K):(K,1) (M,64):(64,1)
    """
    if not isinstance(text, str):
        raise TypeError(f"parse: expected a string, got {type(text).__name__}")
    return _Parser(text, _symbol_table(symbols)).composed()


def _symbol_table(symbols):
    if symbols is None:
        return None
    if isinstance(symbols, dict) or hasattr(symbols, "items"):
        table = dict(symbols.items())
    else:
        try:
            table = {getattr(s, "name", None): s for s in symbols}
        except TypeError:
            raise TypeError(f"parse: symbols must be a mapping or an iterable of sympy symbols, "
                            f"got {type(symbols).__name__}") from None
    for k, v in table.items():
        if not isinstance(k, str):
            raise TypeError(f"parse: symbols must map names to symbols or ints, got key {_r(k)}")
        if isinstance(v, bool) or not (isinstance(v, int) or type(v).__module__.startswith("sympy")):
            raise TypeError(f"parse: symbols[{k!r}] must be a sympy expression or an int, got {_r(v)}")
    return table
