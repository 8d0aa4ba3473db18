"""``ComposedLayout(outer, offset, inner)``: the function ``c -> outer(offset + inner(c))``.

CuTe's argument order: the *outer* function first (a Swizzle or a Layout),
then the offset, then the *inner* layout that gives the domain (shape). Most of
the algebra acts on the inner layout and re-wraps the result.

>>> from cute_py.layouts.swizzle import Swizzle
>>> from cute_py.layouts.layout import Layout
>>> L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
>>> print(L), L(1, 8)
Sw<3,3,3> o 0 o (8,64):(64,1)
(None, 64)
"""

from __future__ import annotations

import math

from . import int_tuple as it
from .errors import LayoutError, layout_error, _r
from .int_tuple import has_underscore, is_int, to_str
from .layout import Layout, slice_and_offset
from .swizzle import Swizzle, make_swizzle

__all__ = ["ComposedLayout", "get_swizzle_portion", "get_nonswizzle_portion"]


class ComposedLayout:
    """``outer o offset o inner``; immutable and hashable; its shape is ``inner``'s.

    >>> from cute_py.layouts.swizzle import Swizzle
    >>> C = ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 4), (4, 1)))
    >>> [C(1, j) for j in range(4)]
    [5, 4, 7, 6]
    """

    __slots__ = ("outer", "offset", "inner")
    _is_composed_layout = True

    def __init__(self, outer, offset, inner):
        if not (isinstance(outer, (Swizzle, Layout)) or getattr(outer, "_is_composed_layout", False)):
            raise TypeError(f"ComposedLayout: outer must be a Swizzle or a layout, got {_r(outer)}")
        if not (isinstance(inner, Layout) or getattr(inner, "_is_composed_layout", False)):
            raise TypeError(f"ComposedLayout: inner must be a layout, got {_r(inner)}")
        if not (is_int(offset) or isinstance(offset, tuple)):
            raise TypeError(f"ComposedLayout: offset must be an int, got {_r(offset)}")
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

    @property
    def shape(self):
        """The inner layout's shape."""
        return self.inner.shape

    def size(self) -> int:
        """Size of the domain: ``size(inner)``."""
        return it.product(self.inner.shape)

    def cosize(self) -> int:
        """``cosize(inner)``, as in CuTe."""
        from .layout import cosize

        return cosize(self.inner)

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, i):
        if isinstance(i, tuple):
            from .layout import get

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

    # -- algebra hooks -------------------------------------------------------
    def _with_inner(self, inner):
        return ComposedLayout(self.outer, self.offset, inner)

    def _compose(self, tiler):
        from .algebra import composition

        return self._with_inner(composition(self.inner, tiler))

    def _compose_from_left(self, a):
        from .algebra import composition

        if self.offset != 0:
            raise layout_error(LayoutError, "composition", "A o (outer o offset o inner) needs offset 0",
                               A=a, B=self)
        return ComposedLayout(composition(a, self.outer), 0, self.inner)

    def _slice_and_offset(self, coord):
        sub, off = slice_and_offset(coord, self.inner)
        return ComposedLayout(self.outer, self.offset + off, sub), 0

    def _domain_offset(self, coord):
        return ComposedLayout(self.outer, self.offset + self.inner(coord), self.inner), 0

    def _right_inverse(self):
        from .algebra import composition, right_inverse

        if self.offset != 0:
            raise layout_error(LayoutError, "right_inverse", "inverse of a composed layout needs offset 0",
                               layout=self)
        return composition(right_inverse(self.inner), right_inverse(self.outer))

    def _left_inverse(self):
        from .algebra import composition, left_inverse

        if self.offset != 0:
            raise layout_error(LayoutError, "left_inverse", "inverse of a composed layout needs offset 0",
                               layout=self)
        return composition(left_inverse(self.inner), left_inverse(self.outer))

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


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


def _max_common_composed(a, b):
    """max_common_layout with swizzled operands: that of the inner layouts, capped at 2^M."""
    from .algebra import composition, max_common_layout

    cap = 1 << 62
    parts = []
    for x in (a, b):
        if getattr(x, "_is_composed_layout", False):
            if not isinstance(x.outer, Swizzle):
                return Layout._make(1, 0)
            cap = min(cap, 1 << x.outer.base, _pow2_part(x.offset) if is_int(x.offset) else 1)
            parts.append(x.inner)
        else:
            parts.append(x)
    common = max_common_layout(*parts)
    n = math.gcd(it.product(common.shape), cap)
    return composition(common, Layout(n)) if n > 1 else Layout._make(1, 0)
