"""MixedBits: a 32-bit offset whose bits are partly static, partly dynamic (CuTe's ``MixedBits<S, F>``).

A swizzle reads and writes single bits of an offset, so when a swizzled
layout is sliced by a dynamic coordinate CuTe tracks, bit by bit, which bits
of the offset are known statically: ``MixedBits<S, F>`` is the value
``S | (d & F)``, where the set bits ``F`` (the flags) are dynamic, the others
static (``S``), and ``S & F == 0``. It is manipulated by bitwise operations
only (``& | ^ << >>``), each of which keeps every bit static that can be;
added to an offset it becomes its value (C++ converts it to ``uint32_t``).

Here the dynamic part is a sympy integer expression (see
:mod:`cute_py.symbolic`); a bit of it is ``Mod(floor(d / 2^k), 2)``, so the
value is an ordinary sympy expression (``floor`` and ``Mod``) that the
emitter prints as C and :func:`cute_py.symbolic.subs` evaluates.

>>> from cute_py.symbolic import indices
>>> m = indices("m")
>>> x = to_mixed_bits(Layout(8, 64), m)         # bits 6-8 of 64*m: dynamic
>>> print(x)
M_0|(64*(Mod(m,8))&448)=64*(Mod(m,8))
>>> print(x ^ 0b1000000011)                     # bits 0, 1 and 9: all static
M_515|(64*(Mod(m,8))&448)=64*(Mod(m,8))+515
>>> print(x & 0b111000000 ^ x, (x >> 6).subs({m: 13}))
0 5
"""

from __future__ import annotations

from . import int_tuple as it
from .decide import SP, canon, is_sym
from .errors import LayoutError, layout_error, _r
from .layout import Layout

__all__ = ["MixedBits", "make_mixed_bits", "to_mixed_bits"]

M32 = (1 << 32) - 1
"""C++'s MixedBits is a ``uint32_t``: masks and shifts stay within 32 bits."""


def _runs(mask: int):
    """The contiguous runs of set bits of ``mask``: [(first bit, length), ...]."""
    out, k = [], 0
    while mask:
        if mask & 1:
            n = (~mask & (mask + 1)).bit_length() - 1
            out.append((k, n))
            mask >>= n
            k += n
        else:
            low = (mask & -mask).bit_length() - 1
            mask >>= low
            k += low
    return out


def bits_of(d, mask: int):
    """``d & mask`` for an integer (sympy) expression ``d``: per run ``[a, a+n)`` of the mask,
    ``2^a * Mod(floor(d / 2^a), 2^n)`` (two's complement bits, as C++ reads a negative int). Where ``d`` holds
    a ``Mod`` already the run is ``2^a * (floor(d / 2^a) - 2^n * floor(d / 2^(a+n)))``: sympy 1.14 rewrites a
    ``Mod`` of an expression holding a ``Mod`` wrongly (``Mod(2*Mod(m, 64), 16)`` becomes
    ``2*Mod(Mod(m, 64)**2, 8)``)."""
    if type(d) is int:
        return d & mask
    if d.has(SP.Mod):
        runs = ((SP.floor(d / (1 << a)) - (1 << n) * SP.floor(d / (1 << (a + n)))) * (1 << a) for a, n in _runs(mask))
    else:
        runs = (SP.Mod(SP.floor(d / (1 << a)), 1 << n) * (1 << a) for a, n in _runs(mask))
    return canon(sum(runs, SP.Integer(0)))


def _bit(d, k: int):
    return bits_of(d, 1 << k) / (1 << k) if type(d) is not int else d >> k & 1


class MixedBits:
    """``static_int | (dynamic_int & flags)``: the ``flags`` bits are dynamic (``dynamic_int``, a sympy
    expression with bits only there), the others static. Invariants: ``flags != 0``, ``static_int & flags ==
    0``. Made by :func:`make_mixed_bits` (which returns an int where nothing is dynamic); immutable.

    Printed as CuTe prints it, ``M_S|(d&F)=value``.

    >>> d = SP.Symbol("d", integer=True, nonnegative=True)
    >>> x = MixedBits(0b0001, 2 * SP.Mod(d, 2), 0b0010)      # bit 1 dynamic, bit 0 set
    >>> print(x, x | 0b0110, x.subs({d: 1}))           # | sets bit 1: no bit left dynamic
    M_1|(2*(Mod(d,2))&2)=2*(Mod(d,2))+1 7 3
    """

    __slots__ = ("static_int", "dynamic_int", "flags")

    def __init__(self, static_int: int, dynamic_int, flags: int):
        if not (it.is_int(static_int) and it.is_int(flags)) or flags <= 0 or static_int & flags \
                or not 0 <= static_int <= M32 or flags > M32:
            raise layout_error(LayoutError, "MixedBits", "need 32-bit masks with flags != 0 and static & flags "
                               "== 0", f"static={_r(static_int)}, flags={_r(flags)}")
        if not is_sym(dynamic_int):
            raise TypeError(f"MixedBits: the dynamic part must be a sympy expression (use make_mixed_bits for a "
                            f"static one), got {_r(dynamic_int)}")
        object.__setattr__(self, "static_int", int(static_int))
        object.__setattr__(self, "dynamic_int", dynamic_int)
        object.__setattr__(self, "flags", int(flags))

    def __setattr__(self, name, value):
        raise AttributeError("MixedBits is immutable")

    def __reduce__(self):
        return (MixedBits, (self.static_int, self.dynamic_int, self.flags))

    @property
    def value(self):
        """The offset, ``static_int + dynamic_int`` (their bits are disjoint), a sympy expression."""
        return self.dynamic_int + self.static_int

    def subs(self, values):
        """The MixedBits with ``values`` substituted for symbols (an int once nothing dynamic is left)."""
        return make_mixed_bits(self.static_int, canon(self.dynamic_int.subs(values)), self.flags)

    # C++: a MixedBits converts to uint32_t where arithmetic needs a number
    def __add__(self, other):
        return canon(self.value + (other.value if isinstance(other, MixedBits) else other))

    __radd__ = __add__

    def __and__(self, other):
        return _combine("&", self, other)

    def __or__(self, other):
        return _combine("|", self, other)

    def __xor__(self, other):
        return _combine("^", self, other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, s):
        if not it.is_int(s) or s < 0:
            return NotImplemented
        f = self.flags << s & M32
        if f == 0:
            return self.static_int << s & M32
        d = self.dynamic_int * (1 << s)
        return _make(self.static_int << s & M32, d if f == self.flags << s else bits_of(d, f), f)

    def __rshift__(self, s):
        if not it.is_int(s) or s < 0:
            return NotImplemented
        return _make(self.static_int >> s, canon(SP.floor(self.dynamic_int / (1 << s))), self.flags >> s)

    def __eq__(self, other):
        return isinstance(other, MixedBits) and (self.static_int, self.flags) == (other.static_int, other.flags) \
            and SP.simplify(self.dynamic_int - other.dynamic_int) == 0

    def __hash__(self):
        return hash((MixedBits, self.static_int, self.flags))

    def __str__(self):
        d, v = it.to_str(self.dynamic_int), it.to_str(canon(SP.expand(self.value)))
        return f"M_{self.static_int}|({d}&{self.flags})={v}"

    def __repr__(self):
        return f"MixedBits({self.static_int}, {self.dynamic_int!r}, {self.flags})"


def _make(s: int, d, f: int):
    """The MixedBits ``s | d`` with ``d`` already masked to ``f`` (an int where ``f == 0`` or ``d`` is
    static)."""
    d = canon(d)
    if f == 0:
        return s
    if type(d) is int:
        return s | d
    return MixedBits(s, d, f)


def make_mixed_bits(s: int, d, f: int):
    """``s | (d & f)`` with the bits of ``f`` not in ``s`` dynamic (static bits take precedence): a
    :class:`MixedBits`, or an int when ``d`` is static or no bit is left dynamic.

    >>> make_mixed_bits(0b100, 13, 0b111), make_mixed_bits(0b111, SP.Symbol("d", integer=True), 0b111)
    (5, 7)
    """
    if not (it.is_int(s) and it.is_int(f)) or s < 0 or f < 0:
        raise TypeError(f"make_mixed_bits: s and f must be non-negative int masks, got {_r(s)}, {_r(f)}")
    if not (it.is_int(d) or is_sym(d)):
        raise TypeError(f"make_mixed_bits: d must be an int or a sympy integer expression, got {_r(d)}")
    s, f = int(s) & M32, int(f) & M32
    new_f, d = f & ~s, canon(d)
    if new_f == 0:
        return s
    if not is_sym(d):
        return s | (int(d) & new_f)
    return _make(s, bits_of(d, new_f), new_f)


def _parts(x):
    if isinstance(x, MixedBits):
        return x.static_int, x.dynamic_int, x.flags
    if it.is_int(x):
        return int(x) & M32, 0, 0
    if is_sym(x):                                 # a plain dynamic int: all 32 bits dynamic
        return 0, bits_of(x, M32), M32
    raise TypeError(f"MixedBits: cannot combine with {_r(x)}")


def _combine(op: str, a, b):
    """``a op b`` for ``op`` in ``& | ^``, a bit static wherever CuTe's truth tables keep it static: a bit
    dynamic in one operand and static in the other passes, flips or becomes static; dynamic in both, it is
    computed bit by bit."""
    try:
        s0, d0, f0 = _parts(a)
        s1, d1, f1 = _parts(b)
    except TypeError:
        return NotImplemented
    n0, n1 = ~s0 & M32, ~s1 & M32
    if op == "&":
        s, f = s0 & s1, (s1 & f0) | (s0 & f1) | (f0 & f1)
        pass0, pass1, flip0, flip1 = f0 & ~f1 & s1, f1 & ~f0 & s0, 0, 0
    elif op == "|":
        s, f = s0 | s1, (n0 & f1) | (n1 & f0)
        pass0, pass1, flip0, flip1 = f0 & ~f1 & n1, f1 & ~f0 & n0, 0, 0
    else:
        s, f = (n0 & s1 & ~f0) | (s0 & n1 & ~f1), f0 | f1
        pass0, pass1, flip0, flip1 = f0 & ~f1 & n1, f1 & ~f0 & n0, f0 & ~f1 & s1, f1 & ~f0 & s0
    d = 0
    for dx, fx, keep, flip in ((d0, f0, pass0, flip0), (d1, f1, pass1, flip1)):
        if keep:
            d = d + (dx if keep == fx else bits_of(dx, keep))
        if flip:
            d = d + flip - bits_of(dx, flip)
    both = f0 & f1
    for k in range(both.bit_length()):
        if both >> k & 1:
            t = _bit(d0, k) + _bit(d1, k)          # 0, 1 or 2
            d = d + (1 << k) * (SP.floor(t / 2) if op == "&" else SP.ceiling(t / 2) if op == "|" else t - 2 * SP.floor(t / 2))
    return _make(s, d, f)


def to_mixed_bits(*args):
    """CuTe's ``to_mixed_bits(layout, coord)`` or ``to_mixed_bits(shape, stride, coord)``: the offset of
    ``coord`` (a 1-D index or coordinate of the layout; congruent with the shape in the flat form) in a layout
    whose modes each have a power-of-two (or zero) ``shape * stride``, as the XOR over modes of
    ``make_mixed_bits(0, c * d, (s - 1) * d)``: the bits a mode reaches are dynamic where its coordinate is.
    The XOR is the offset only where the modes reach disjoint bits (as in C++, which assumes it).

    >>> to_mixed_bits(Layout((2, 4), (1, 8)), (1, 3)), to_mixed_bits((2, 4), (1, 8), (1, 3))
    (25, 25)
    """
    if len(args) in (2, 3):
        for c in it.flatten_to_tuple(args[-1]):
            if isinstance(c, bool) or not (it.is_int(c) or is_sym(c)):
                raise TypeError(f"to_mixed_bits: a coordinate is an int, a sympy expression or a tuple of those, "
                                f"got {_r(args[-1])}")
    if len(args) == 2:
        layout, coord = args
        if not isinstance(layout, Layout):
            raise TypeError(f"to_mixed_bits: expected a Layout, got {_r(layout)}")
        return _to_mixed_bits(layout.shape, layout.stride, it.idx2crd(coord, layout.shape))
    if len(args) != 3:
        raise TypeError(f"to_mixed_bits: expected (layout, coord) or (shape, stride, coord), got {len(args)} "
                        f"arguments")
    return _to_mixed_bits(*args)


def _to_mixed_bits(shape, stride, coord):
    if isinstance(shape, tuple):
        if not (isinstance(stride, tuple) and isinstance(coord, tuple) and len(shape) == len(stride) == len(coord)):
            raise layout_error(LayoutError, "to_mixed_bits", "shape, stride and coordinate must be congruent",
                               shape=shape, stride=stride, coord=coord)
        out = 0
        for s, d, c in zip(shape, stride, coord):
            out = _combine("^", out, _to_mixed_bits(s, d, c))
        return out
    span = shape * stride if it.is_int(shape) and it.is_int(stride) else None
    if span is None or not (span == 0 or (span > 0 and span & (span - 1) == 0)):
        raise layout_error(LayoutError, "to_mixed_bits", "each mode needs a static power-of-two shape * stride",
                           f"found {shape}:{stride}")
    if not (it.is_int(coord) or is_sym(coord)):
        raise TypeError(f"to_mixed_bits: a coordinate leaf must be an int or a sympy expression, got {_r(coord)}")
    return make_mixed_bits(0, canon(coord * stride), (shape - 1) * stride)
