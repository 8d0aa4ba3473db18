"""F2 strides: offsets combined with XOR, so that a swizzle is an ordinary layout.

A stride ``F2(v)`` makes its mode a linear map over GF(2): bit ``j`` of the
mode's coordinate contributes ``v << j``, and contributions are combined with
XOR instead of ``+``. A mode of extent ``2^k`` with stride ``F2(v)`` is the
carry-less product ``c (x) v``; a layout whose strides are F2 (or 0) is
``L(c) = XOR over modes of c_mode (x) v_mode``. Where no two contributions
share a bit, XOR is ``+`` and the F2 layout is the ordinary layout with the
same strides; where they do, it is a swizzle:

>>> from cute_py import Layout, Swizzle
>>> L = Layout((128, 8), (F2(1), F2(0x90)))   # bits 0-6 kept, bit 7+j flips bit 4+j: Sw<3,4,3>
>>> print(L), all(L(i) == Swizzle(3, 4, 3)(i) for i in range(1024))
(128,8):(^1,^144)
(None, True)

Text form: ``^v`` (``(128,8):(^1,^144)``), read back by :func:`cute_py.parse`.
The algebra on such layouts (composition, complement, the inverses,
coalesce) is linear algebra over GF(2) on their bit matrices
(:mod:`cute_py.layouts.f2_algebra`); Triton's LinearLayout is the same
object, bit by bit (:func:`cute_py.to_linear_layout`).
"""

from __future__ import annotations

from numbers import Integral

from .errors import LayoutError, layout_error
from .int_tuple import flatten_to_tuple

__all__ = ["F2", "is_f2", "clmul"]


def clmul(c: int, v: int) -> int:
    """The carry-less product ``c (x) v``: XOR of ``v << j`` over the set bits ``j`` of ``c``.

    >>> clmul(0b11, 0b101), clmul(5, 1)
    (15, 5)
    """
    r, j = 0, 0
    while c:
        if c & 1:
            r ^= v << j
        c >>= 1
        j += 1
    return r


class F2:
    """An F2 stride or offset: a non-negative int combined with XOR (``+`` is XOR, ``c * F2(v)`` is
    :func:`clmul`). Immutable and hashable; ``F2(v) == F2(w)`` iff ``v == w``.

    >>> F2(6) + F2(3), 3 * F2(5), str(F2(144)), F2(5) + 0
    (F2(5), F2(15), '^144', F2(5))
    """

    __slots__ = ("value",)
    _is_f2 = True
    made = False
    """True once any F2 value exists: until then no layout can have an F2 stride, and the algebra's int
    path skips looking for one (as it skips sympy until sympy is loaded)."""

    def __init__(self, value):
        if isinstance(value, F2):
            value = value.value
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
            raise TypeError(f"F2: the value must be a non-negative int, got {value!r:.60}")
        object.__setattr__(self, "value", int(value))
        F2.made = True

    def __setattr__(self, name, value):
        raise AttributeError("F2 is immutable")

    def __reduce__(self):
        return (F2, (self.value,))

    def __add__(self, other):
        if isinstance(other, F2):
            return F2(self.value ^ other.value)
        if type(other) is int and other == 0:        # a stride-0 mode's contribution
            return self
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, c):
        if isinstance(c, Integral) and not isinstance(c, bool) and c >= 0:
            return F2(clmul(int(c), self.value))
        return NotImplemented

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, F2) and other.value == self.value

    def __hash__(self):
        return hash((F2, self.value))

    def __int__(self):
        """The bit vector as the int it spells: ``int(F2(5)) == 5`` (an explicit conversion; F2 values add by
        XOR, so an F2 is no index)."""
        return self.value

    def __lt__(self, other):
        """The order of the ints the bit vectors spell (the order ``make_layout_like`` sorts F2 strides by: the
        higher bit is the larger stride)."""
        return self.value < other.value if isinstance(other, F2) else NotImplemented

    def __le__(self, other):
        return self.value <= other.value if isinstance(other, F2) else NotImplemented

    def __gt__(self, other):
        return self.value > other.value if isinstance(other, F2) else NotImplemented

    def __ge__(self, other):
        return self.value >= other.value if isinstance(other, F2) else NotImplemented

    def __repr__(self):
        return f"F2({self.value})"

    def __str__(self):
        return f"^{self.value}"


def is_f2(x) -> bool:
    """True for an :class:`F2` leaf."""
    return isinstance(x, F2)


def log2_exact(s: int):
    """``k`` with ``s == 2**k``, or None."""
    return s.bit_length() - 1 if type(s) is int and s > 0 and s & (s - 1) == 0 else None


def bit_images(fs, fd):
    """The image of each bit of the 1-D (colexicographic) index of the flat modes ``fs:fd``: for a mode of
    extent ``2^k`` and stride ``d`` (an int >= 0 or an F2), the images ``d << j`` for ``j < k``.

    ``None`` where a mode's extent is not a power of two or a stride is negative or symbolic (no bit
    matrix exists).

    >>> bit_images((4, 2), (1, F2(12)))
    [1, 2, 12]
    """
    out = []
    for s, d in zip(fs, fd):
        k = log2_exact(s)
        v = d.value if type(d) is F2 else d
        if k is None or type(v) is not int or v < 0:
            return None
        out.extend(v << j for j in range(k))
    return out


def disjoint(images) -> bool:
    """True if no two bit images share a bit: then XOR is ``+`` and the F2 map is an ordinary layout."""
    seen = 0
    for v in images:
        if seen & v:
            return False
        seen |= v
    return True


def echelon(vectors):
    """A GF(2) basis of the span of ``vectors`` (ints as bit vectors), as ``{top bit: vector}`` with each
    top bit set in exactly one vector (reduced)."""
    basis = {}
    for v in vectors:
        for top in sorted(basis, reverse=True):
            if v >> top & 1:
                v ^= basis[top]
        if v:
            top = v.bit_length() - 1
            for t in basis:
                if basis[t] >> top & 1:
                    basis[t] ^= v
            basis[top] = v
    return basis


def f2_span_max(fs, fd) -> int:
    """The largest offset of the F2 layout ``fs:fd`` (the largest XOR of a subset of its bit images)."""
    images = bit_images(fs, fd)
    r = 0
    for top, v in sorted(echelon(images).items(), reverse=True):
        if not r >> top & 1:
            r ^= v
    return r


def check_f2_strides(shape, stride):
    """A layout with an F2 stride: every other stride is F2 or 0, and every F2 mode has a power-of-two
    extent (else a LayoutError of ``Layout``)."""
    for s, d in zip(flatten_to_tuple(shape), flatten_to_tuple(stride)):
        if type(d) is not F2 and d != 0:
            raise layout_error(LayoutError, "Layout", "F2 strides combine with XOR, so every other stride of "
                               "the layout must be F2 (or 0)", f"found stride {d}", shape=shape, stride=stride)
        if type(d) is F2 and log2_exact(s) is None:
            raise layout_error(LayoutError, "Layout", "a mode with an F2 stride needs a power-of-two extent",
                               f"found {s}:{d}", shape=shape, stride=stride)
