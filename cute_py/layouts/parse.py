"""Read CuTe's printed forms back: IntTuples, layouts, swizzles, composed layouts.

Grammar (spaces are ignored; ``_N`` static ints and ``S<...>`` are accepted too)::

    composed := item ("o" item)*           # outer o offset o inner
    item     := swizzle | layout | inttuple
    swizzle  := ("Sw" | "S") "<" int "," int "," int ">"
    layout   := inttuple ":" inttuple
    inttuple := "_" | elem | "(" [inttuple ("," inttuple)*] ")"
    elem     := int ("@" int)*            # v@i is v*E<i> (basis strides)

>>> print(parse("(4,(2,2)):(2,(1,8))"))
(4,(2,2)):(2,(1,8))
>>> parse("(4)")
(4,)
>>> print(parse("Sw<3,4,3> o 0 o (8,64):(64,1)"))
Sw<3,4,3> o 0 o (8,64):(64,1)
"""

from __future__ import annotations

from .basis import ScaledBasis
from .errors import ParseError, _r
from .int_tuple import _

__all__ = ["parse"]

_DIGITS = "0123456789"


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

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
                return tuple(items)
        if self.peek("_") and not (self.pos + 1 < len(self.text) and self.text[self.pos + 1] in _DIGITS + "-"):
            self.pos += 1
            return _
        return self.elem()

    def item(self):
        from .layout import Layout
        from .swizzle import Swizzle

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
                return Layout(shape, stride)
            except (ValueError, TypeError) as e:
                self.pos = start
                raise self.error(f"not a valid layout ({e})") from None
        return shape

    def composed(self):
        from .composed import ComposedLayout

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


def parse(text: str):
    """Parse CuTe notation into a Layout, Swizzle, ComposedLayout or IntTuple.

    Every form cute_py prints is read back: ``parse(str(x)) == x``. Malformed
    text raises :class:`ParseError` whose message points at the bad character.

    >>> parse("(8,64):(64,1)")
    Layout((8, 64), (64, 1))
    >>> parse("Sw<3,4,3>")
    Swizzle(3, 4, 3)
    >>> parse("((2,3),4)")
    ((2, 3), 4)
    """
    if not isinstance(text, str):
        raise TypeError(f"parse: expected a string, got {type(text).__name__}")
    return _Parser(text).composed()
