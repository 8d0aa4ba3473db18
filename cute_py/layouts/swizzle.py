"""``Swizzle(B, M, S)``: CuTe's XOR swizzle functor on offsets.

``Sw<B,M,S>(x) = x ^ ((x & yyy) >> S)`` where the ``yyy`` mask is ``B`` bits
starting at bit ``M + max(0, S)`` and the ``zzz`` mask (the bits that get
flipped) is ``B`` bits starting at ``M - min(0, S)``. ``Sw<3,4,3>`` on byte
addresses is the 128-byte swizzle of Hopper's TMA and wgmma; on 16-bit element
offsets the same pattern is ``Sw<3,3,3>``.

>>> sw = Swizzle(3, 4, 3)
>>> print(sw), sw(0x80), sw(0x90)
Sw<3,4,3>
(None, 144, 128)
"""

from __future__ import annotations

from numbers import Integral

from .errors import LayoutError, layout_error, _r
from .int_tuple import is_int

__all__ = ["Swizzle", "make_swizzle", "shiftr", "shiftl"]


def shiftr(a: int, s: int) -> int:
    """``a >> s``, or ``a << -s`` for a negative ``s``."""
    return a >> s if s >= 0 else a << -s


def shiftl(a: int, s: int) -> int:
    """``a << s``, or ``a >> -s`` for a negative ``s``."""
    return a << s if s >= 0 else a >> -s


class Swizzle:
    """The swizzle functor ``Sw<B,M,S>``: ``B`` mask bits, ``M`` least-significant bits kept, shift ``S``.

    Preconditions: ``B >= 0``, ``M >= 0``, ``|S| >= B``. A swizzle is a
    bijection on ``[0, 2^(B+M+|S|))`` and its own inverse.

    >>> Swizzle(3, 3, 3)
    Swizzle(3, 3, 3)
    >>> [Swizzle(2, 0, 2)(i) for i in range(4, 8)]
    [5, 4, 7, 6]
    """

    __slots__ = ("bits", "base", "shift", "yyy_msk", "zzz_msk")
    _is_swizzle = True

    def __init__(self, bits: int, base: int, shift: int):
        for name, v in (("B", bits), ("M", base), ("S", shift)):
            if not is_int(v):
                raise TypeError(f"Swizzle: {name} must be an int, got {_r(v)}")
        bits, base, shift = int(bits), int(base), int(shift)
        if bits < 0 or base < 0 or abs(shift) < bits:
            raise layout_error(LayoutError, "Swizzle", "need B >= 0, M >= 0 and |S| >= B",
                               f"B={bits}, M={base}, S={shift}")
        bit_msk = (1 << bits) - 1
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "shift", shift)
        object.__setattr__(self, "yyy_msk", bit_msk << (base + max(0, shift)))
        object.__setattr__(self, "zzz_msk", bit_msk << (base - min(0, shift)))

    def __setattr__(self, name, value):
        raise AttributeError("Swizzle is immutable")

    def __reduce__(self):
        return (Swizzle, (self.bits, self.base, self.shift))

    @property
    def swizzle_code(self) -> int:
        """``yyy_msk | zzz_msk``: every bit the swizzle reads or writes."""
        return self.yyy_msk | self.zzz_msk

    def __call__(self, offset: int) -> int:
        """``offset ^ shiftr(offset & yyy_msk, S)``."""
        return offset ^ shiftr(offset & self.yyy_msk, self.shift)

    apply = __call__

    def size(self) -> int:
        """``2^(B+M+|S|)``: the span of offsets the swizzle permutes."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        """Same as :meth:`size`."""
        return self.size()

    def __eq__(self, other):
        return isinstance(other, Swizzle) and (self.bits, self.base, self.shift) == (other.bits, other.base, other.shift)

    def __hash__(self):
        return hash((Swizzle, self.bits, self.base, self.shift))

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self):
        return f"Swizzle({self.bits}, {self.base}, {self.shift})"

    # -- algebra hooks -------------------------------------------------------
    def _compose(self, b):
        from .composed import ComposedLayout
        from .layout import Layout

        if isinstance(b, Swizzle):
            raise TypeError("composition: composing two swizzles is not supported; compose each with a layout")
        if not isinstance(b, Layout) and not getattr(b, "_is_composed_layout", False):
            b = Layout(b) if (is_int(b) or isinstance(b, tuple)) else b
        if self.bits == 0:
            return b
        return ComposedLayout(self, 0, b)

    def _right_inverse(self):
        return self

    _left_inverse = _right_inverse

    def upcast(self, n: int) -> "Swizzle":
        """The swizzle on offsets counted in units ``n`` times larger: ``Sw<B, M-log2(n), S>``.

        >>> Swizzle(3, 4, 3).upcast(2)
        Swizzle(3, 3, 3)
        """
        k = _log2(n, "upcast")
        m = self.base - k
        if m >= 0:
            return Swizzle(self.bits, m, self.shift)
        return Swizzle(max(self.bits + m, 0), 0, self.shift)

    def downcast(self, n: int) -> "Swizzle":
        """The swizzle on offsets counted in units ``n`` times smaller: ``Sw<B, M+log2(n), S>``.

        >>> Swizzle(3, 3, 3).downcast(2)
        Swizzle(3, 4, 3)
        """
        return Swizzle(self.bits, self.base + _log2(n, "downcast"), self.shift)


def _log2(n, op) -> int:
    if not is_int(n) or n < 1 or n & (n - 1):
        raise layout_error(LayoutError, op, "swizzles rescale only by powers of two", f"n={n}")
    return n.bit_length() - 1


def make_swizzle(yyy_msk: int, zzz_msk: int) -> Swizzle:
    """The swizzle with the given ``yyy`` (read) and ``zzz`` (flipped) bit masks.

    Precondition: both masks are contiguous runs of the same number of bits.

    >>> make_swizzle(0b1000, 0b0100), make_swizzle(0b11000000, 0b00000110)
    (Swizzle(1, 2, 1), Swizzle(2, 1, 5))
    """
    for name, m in (("yyy_msk", yyy_msk), ("zzz_msk", zzz_msk)):
        if isinstance(m, bool) or not isinstance(m, Integral) or m < 0:
            raise TypeError(f"make_swizzle: {name} must be a non-negative int bit mask, got {type(m).__name__}: "
                            f"{m!r:.60}")
    yyy_msk, zzz_msk = int(yyy_msk), int(zzz_msk)
    by, bz = bin(yyy_msk).count("1"), bin(zzz_msk).count("1")
    if by != bz:
        raise layout_error(LayoutError, "make_swizzle", "number of bits in Y and Z don't match",
                           f"Y={yyy_msk:#b}, Z={zzz_msk:#b}")
    if by == 0:
        return Swizzle(0, 0, 0)
    ty = (yyy_msk & -yyy_msk).bit_length() - 1
    tz = (zzz_msk & -zzz_msk).bit_length() - 1
    sw = Swizzle(by, min(ty, tz), ty - tz)
    if sw.swizzle_code != (yyy_msk | zzz_msk) or sw.yyy_msk != yyy_msk:
        raise layout_error(LayoutError, "make_swizzle", "masks are not contiguous runs of bits",
                           f"Y={yyy_msk:#b}, Z={zzz_msk:#b}")
    return sw
