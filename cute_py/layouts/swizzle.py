"""Swizzles and the layouts composed with them (CuTe's ``swizzle.hpp``, ``layout_composed.hpp``,
``swizzle_layout.hpp``).

``Swizzle(B, M, S)``: CuTe's XOR swizzle functor on offsets.

``Sw<B,M,S>(x) = x ^ ((x & yyy) >> S)`` where the ``yyy`` mask is ``B`` bits
starting at bit ``M + max(0, S)`` and the ``zzz`` mask (the bits that get
flipped) is ``B`` bits starting at ``M - min(0, S)``. ``Sw<3,4,3>`` on byte
addresses is the 128-byte swizzle of Hopper's TMA and wgmma; on 16-bit element
offsets the same pattern is ``Sw<3,3,3>``.

>>> sw = Swizzle(3, 4, 3)
>>> print(sw), sw(0x80), sw(0x90)
Sw<3,4,3>
(None, 144, 128)

``ComposedLayout(outer, offset, inner)``: the function ``c -> outer(offset + inner(c))``.

CuTe's argument order: the *outer* function first (a Swizzle or a Layout),
then the offset, then the *inner* layout that gives the domain (shape). Most of
the algebra acts on the inner layout and re-wraps the result.

>>> from cute_py.layouts.layout import Layout
>>> L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
>>> print(L), L(1, 8)
Sw<3,3,3> o 0 o (8,64):(64,1)
(None, 64)
"""


from __future__ import annotations

import math
from numbers import Integral

from . import int_tuple as it
from .algebra import composition
from .inverse import left_inverse, right_inverse
from .domain import max_common_layout
from .f2_algebra import f2_layout
from .errors import LayoutError, layout_error, _r
from .decide import is_sym, symbols_in
from .int_tuple import has_underscore, is_int, to_str
from .layout import Layout, cosize, get
from .slicing import _dice_tuple, dice, slice_, slice_and_offset
from .mixed_bits import M32, MixedBits, make_mixed_bits, to_mixed_bits

__all__ = ["Swizzle", "make_swizzle", "shiftr", "shiftl", "ComposedLayout", "get_swizzle_portion",
           "get_nonswizzle_portion"]


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
        """``offset ^ shiftr(offset & yyy_msk, S)``; a dynamic (sympy) offset is read bit by bit as a 32-bit
        :class:`~cute_py.layouts.mixed_bits.MixedBits`, a MixedBits gives a MixedBits."""
        if type(offset) is not int and is_sym(offset):
            r = self(make_mixed_bits(0, offset, M32))
            return r.value if isinstance(r, MixedBits) else r
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

    # -- the algebra: the operations a Swizzle answers (operands.by_owner) -----
    _algebra_operand = True

    def _composition(self, public, b):
        if isinstance(b, Swizzle):             # two XOR maps: their composition is linear over GF(2)
            n = max(self.size(), b.size())
            return composition(f2_layout(self, n), f2_layout(b, n))
        if not isinstance(b, Layout) and not getattr(b, "_is_composed_layout", False):
            b = Layout(b) if (is_int(b) or isinstance(b, tuple)) else b
        if self.bits == 0:
            return b
        return ComposedLayout(self, 0, b)

    def _composition_from_left(self, a):
        return compose_layout_swizzle(a, self)

    def _make_layout(self):
        """``make_layout(sw)``: ``sw o 0 o 2^(B+M+|S|):1``."""
        return ComposedLayout(self, 0, Layout._make(self.size(), 1))

    def _right_inverse(self, public):
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


# ---------------------------------------------------------------------------
# Composed layouts


class ComposedLayout:
    """``outer o offset o inner``; immutable and hashable; its shape is ``inner``'s.

    >>> C = ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))
    >>> [C(1, j) for j in range(4)]
    [5, 4, 7, 6]
    """

    __slots__ = ("outer", "offset", "inner")
    _is_composed_layout = True

    @staticmethod
    def _max_common(op, a, b):
        """max_common_layout / max_common_vector (``op``) where ``a`` or ``b`` is a composed layout."""
        return _max_common_composed(op, a, b)

    def __init__(self, outer, offset, inner):
        if not (isinstance(outer, (Swizzle, Layout)) or getattr(outer, "_is_composed_layout", False)):
            raise TypeError(f"ComposedLayout: outer must be a Swizzle or a layout, got {_r(outer)}")
        if not (isinstance(inner, Layout) or getattr(inner, "_is_composed_layout", False)):
            raise TypeError(f"ComposedLayout: inner must be a layout, got {_r(inner)}")
        if not (is_int(offset) or isinstance(offset, (tuple, MixedBits)) or is_sym(offset)):
            raise TypeError(f"ComposedLayout: offset must be an int, a MixedBits or a sympy expression, got "
                            f"{_r(offset)}")
        object.__setattr__(self, "outer", outer)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "inner", inner)

    def __setattr__(self, name, value):
        raise AttributeError("ComposedLayout is immutable")

    def __reduce__(self):
        return (ComposedLayout, (self.outer, self.offset, self.inner))

    # CuTe accessor names
    def layout_a(self):
        """The outer function (CuTe's ``layout_a()``)."""
        return self.outer

    def layout_b(self):
        """The inner layout (CuTe's ``layout_b()``)."""
        return self.inner

    # PyCuTe / tensor-layouts accessor names
    @property
    def swizzle(self):
        """The outer function when it is a Swizzle; AttributeError when it is a layout (read ``outer``).

        >>> ComposedLayout(Swizzle(2, 0, 2), 3, Layout(4)).swizzle
        Swizzle(2, 0, 2)
        """
        if not isinstance(self.outer, Swizzle):
            raise AttributeError(f"ComposedLayout.swizzle: the outer function is not a Swizzle, it is "
                                 f"{_r(self.outer)}; read .outer")
        return self.outer

    @property
    def preoffset(self):
        """The offset added before the outer function (``offset``)."""
        return self.offset

    @property
    def layout(self):
        """The inner layout (``inner``)."""
        return self.inner

    @property
    def shape(self):
        """The inner layout's shape."""
        return self.inner.shape

    def size(self) -> int:
        """Size of the domain: ``size(inner)``."""
        return it.product(self.inner.shape)

    def cosize(self) -> int:
        """``cosize(inner)``, as in CuTe."""
        return cosize(self.inner)

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        if isinstance(i, tuple):
            return self._with_inner(get(self.inner, *i))
        return self._with_inner(self.inner[i])

    def __call__(self, *coord):
        """``outer(offset + inner(coord))``; a coordinate with ``_`` slices (the offset folds in)."""
        if len(coord) == 1:
            coord = coord[0]
        if has_underscore(coord):
            return self._slice_and_offset(coord)[0]
        return self.outer(self.offset + self.inner(coord))

    def __eq__(self, other):
        return (isinstance(other, ComposedLayout) and self.outer == other.outer
                and self.offset == other.offset and self.inner == other.inner)

    def __hash__(self):
        return hash((ComposedLayout, self.outer, self.offset, self.inner))

    def __str__(self):
        return f"{self.outer} o {to_str(self.offset)} o {self.inner}"

    def __repr__(self):
        return f"ComposedLayout({self.outer!r}, {self.offset!r}, {self.inner!r})"

    # -- the algebra: the operations a composed layout answers (operands.by_owner) --
    _algebra_operand = True

    def _with_inner(self, inner):
        return ComposedLayout(self.outer, self.offset, inner)

    def _apply(self, public, *args):
        """``public(inner, *args)`` under the same outer function and offset: an operation on the domain."""
        return ComposedLayout(self.outer, self.offset, public(self.inner, *args))

    _composition = _logical_divide = _zipped_divide = _tiled_divide = _flat_divide = _tile_unzip = _apply
    _logical_product = _zipped_product = _tiled_product = _flat_product = _apply
    _blocked_product = _raked_product = _tile_to_shape = _coalesce = _filter = _apply

    def _complement(self, public, cotarget):
        """The offsets the inner layout does not reach (the outer function permutes offsets, as C++ reads it)."""
        return public(self.inner, cotarget)

    def _composition_from_left(self, a):
        if self.offset != 0:
            raise layout_error(LayoutError, "composition", "A o (outer o offset o inner) needs offset 0",
                               A=a, B=self)
        return ComposedLayout(composition(a, self.outer), 0, self.inner)

    def _slice_and_offset(self, coord):
        if isinstance(self.outer, Swizzle) and symbols_in(coord) and type(self.offset) is int and self.offset == 0:
            return _swizzle_slice_and_offset(self, coord)
        sub, off = slice_and_offset(coord, self.inner)
        return ComposedLayout(self.outer, self.offset + off, sub), 0

    def _domain_offset(self, coord):
        return ComposedLayout(self.outer, self.offset + self.inner(coord), self.inner), 0

    def _right_inverse(self, public):
        if self.offset != 0:
            raise layout_error(LayoutError, "right_inverse", "inverse of a composed layout needs offset 0",
                               layout=self)
        return composition(right_inverse(self.inner), right_inverse(self.outer))

    def _left_inverse(self, public):
        if self.offset != 0:
            raise layout_error(LayoutError, "left_inverse", "inverse of a composed layout needs offset 0",
                               layout=self)
        return composition(left_inverse(self.inner), left_inverse(self.outer))

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def _swizzle_slice_and_offset(layout: ComposedLayout, coord):
    """CuTe's ``slice_and_offset`` of ``Sw o 0 o L`` by a coordinate with a dynamic (sympy) part.

    Only for the offset 0: C++ joins the offset to the sliced-out part by XOR, which is its sum only where
    their bits are disjoint; with another offset the caller keeps ``Sw o (O + L(c)) o slice(L)``, which
    evaluates through MixedBits all the same. ``L``'s modes must not share bits (``to_mixed_bits``).

    The sliced-out (diced) part of the offset splits in two: the bits the swizzle reads or writes (its Y and
    Z bits) join ``O`` as a :class:`MixedBits` (static where the coordinate is), the others pass through the
    swizzle and are returned as the offset. If the kept modes reach a Y bit and its Z bit, the result stays
    ``Sw o O' o slice(L)``; otherwise it decays to a plain layout, the swizzle linearised around ``O'`` (a
    stride is ``+-Z`` or ``Y+-Z`` by the offset's bit, a sympy expression where that bit is dynamic), plus
    the offset ``Sw(O') + rest``.
    """
    sw = layout.outer
    b, m, s = sw.bits, sw.base, abs(sw.shift)
    shape = (1 << m, 1 << b, 1 << (s - b), 1 << b, 1)
    anti_zy = Layout._make(shape, (1, 0, 1 << (m + b), 0, 1 << (m + b + s)))
    only_zy = Layout._make(shape, (0, 1 << m, 0, 1 << (m + s), 0))
    sliced = slice_(coord, layout.inner)
    diced, diced_coord = dice(coord, layout.inner), _dice_tuple(coord, coord, "slice")
    offset_zy = layout.offset ^ to_mixed_bits(composition(only_zy, diced), diced_coord)
    offset_anti = composition(anti_zy, diced)(diced_coord)
    zy = composition(only_zy, sliced)
    active = zy(it.product(zy.shape) - 1)
    if active & ~sw(active) & M32:               # the kept modes reach a Y bit and its Z bit
        return ComposedLayout(sw, offset_zy, sliced), offset_anti
    z, y = sw.zzz_msk & -sw.zzz_msk, sw.yyy_msk & -sw.yyy_msk

    def strides(z_bits):                        # the strides of the Z (or Y) bit positions, bit i of B
        out = []
        for i in range(b):
            bit = offset_zy & ((y if z_bits else z) << i)
            up, down = ((z << i, -(z << i)) if z_bits else ((y + z) << i, (y - z) << i))
            out.append(up if bit == 0 else down if is_int(bit) else up + (down - up) * bit.value / bit.flags)
        return tuple(out) if b != 1 else out[0]

    lo, hi = strides(z < y), strides(z > y)
    mode = (tuple([2] * b) if b != 1 else 2) if b else 1
    linear = Layout((1 << m, mode, 1 << (s - b), mode, 1),
                    (1, lo if b else 0, 1 << (m + b), hi if b else 0, 1 << (m + b + s)))
    return composition(linear, sliced), sw(offset_zy) + offset_anti


def compose_layout_swizzle(layout: Layout, sw: Swizzle):
    """``layout o sw`` rewritten as ``sw' o layout`` by mapping the swizzle's bits through ``layout``.

    Works when ``layout`` maps each bit of the swizzle's masks to one bit and
    is bit-linear on the swizzle's span (power-of-two modes and strides);
    raises otherwise.
    """
    if sw.bits == 0:
        return layout

    def image(mask):
        out = 0
        for b in range(mask.bit_length()):
            if mask >> b & 1:
                v = layout(1 << b)
                if not it.is_int(v) or v <= 0 or v & (v - 1):
                    raise layout_error(LayoutError, "composition", "layout o swizzle needs each swizzle bit "
                                       "to map to a single bit", f"bit {b} maps to {v}", A=layout, B=sw)
                out |= v
        return out

    new = make_swizzle(image(sw.yyy_msk), image(sw.zzz_msk))
    n = min(sw.size(), it.product(layout.shape))
    for x in range(n):
        if layout(sw(x)) != new(layout(x)):
            raise layout_error(LayoutError, "composition", "layout o swizzle is not a swizzle of the layout",
                               f"mismatch at {x}", A=layout, B=sw)
    return ComposedLayout(new, 0, layout) if new.bits else layout


def get_swizzle_portion(layout):
    """The swizzle of a swizzled layout, ``Sw<0,4,3>`` (the identity) for a plain one.

    >>> get_swizzle_portion(ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1))))
    Swizzle(3, 3, 3)
    >>> get_swizzle_portion(Layout(8))
    Swizzle(0, 4, 3)
    """
    if getattr(layout, "_is_composed_layout", False) and isinstance(layout.outer, Swizzle):
        return layout.outer
    return Swizzle(0, 4, 3)


def get_nonswizzle_portion(layout):
    """The layout under the swizzle of a swizzled layout (the layout itself if plain).

    >>> print(get_nonswizzle_portion(ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))))
    (8,64):(64,1)
    """
    if getattr(layout, "_is_composed_layout", False) and isinstance(layout.outer, Swizzle):
        return layout.inner
    return layout


def _pow2_part(x: int) -> int:
    return x & -x if x else 1 << 62


def _max_common_composed(op, a, b):
    """max_common_layout (or max_common_vector, as ``op``) with swizzled operands: that of the inner layouts,
    capped at 2^M."""
    cap = 1 << 62
    parts = []
    for x in (a, b):
        if getattr(x, "_is_composed_layout", False):
            if not isinstance(x.outer, Swizzle):
                return Layout._make(1, 0) if op is max_common_layout else 1
            cap = min(cap, 1 << x.outer.base, _pow2_part(x.offset) if is_int(x.offset) else 1)
            parts.append(x.inner)
        else:
            parts.append(x)
    common = max_common_layout(*parts)
    n = math.gcd(it.product(common.shape), cap)
    if op is not max_common_layout:
        return n
    return composition(common, Layout(n)) if n > 1 else Layout._make(1, 0)
