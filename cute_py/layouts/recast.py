"""Changing the element type under a layout: upcast, downcast, recast_layout, max_alignment.

``upcast(L, n)`` views a layout of elements as a layout of ``n``-element
vectors (strides shrink by ``n``, a stride-1 mode's extent shrinks by ``n``);
``downcast(L, n)`` does the reverse. ``recast_layout(L, old, new)`` picks the
one the bit widths ask for; ``recast_by(L, num/den)`` takes the ratio itself.
"""

from __future__ import annotations

import math
from fractions import Fraction

from . import int_tuple as it
from .inverse import right_inverse
from .coalescing import coalesce
from .decide import _or, canon, ceil_div, divides, fail, sign
from .basis import ScaledBasis
from .dtypes import dtype
from .f2 import F2
from .errors import DivisibilityError, LayoutError, in_operation, layout_error, _r, names_caller
from .int_tuple import is_int
from .layout import Layout, flat_modes
from .swizzle import ComposedLayout, Swizzle
from .tiling import logical_divide

__all__ = ["upcast", "downcast", "recast_layout", "recast_by", "max_alignment", "sizeof_bits"]


def sizeof_bits(t) -> int:
    """Bit width of a type: an int (a bit width), a DType, a name or a numpy dtype.

    Names are those of :func:`~cute_py.layouts.dtypes.dtype` (``"bf16"``,
    ``"f32"``, ``"e4m3"``, aliases like ``"half"``); it is ``dtype(t).bits``.

    >>> sizeof_bits("bf16"), sizeof_bits(32), sizeof_bits("u128")
    (16, 32, 128)
    """
    if is_int(t):
        if t < 1:
            raise layout_error(LayoutError, "sizeof_bits", "bit width must be positive", f"got {t}")
        return int(t)
    try:
        return dtype(t).bits
    except TypeError as e:
        raise TypeError(f"sizeof_bits: {e}; or give a bit width") from None


def _check_n(op, n):
    if not is_int(n) or n < 1:
        raise layout_error(LayoutError, op, "the factor must be a positive int", f"n={_r(n)}")


def _upcast_leaf(s, d, n, layout):
    if type(d) is int and d == 0:
        return s, d
    if isinstance(d, (F2, ScaledBasis)):
        raise layout_error(LayoutError, "upcast", "strides must be ints or symbolic", f"found stride {d}",
                           layout=layout, n=n)
    sg = sign(d, "upcast", layout=layout, n=n)
    ad = d * sg
    if s == 1:  # a size-1 mode's stride is never used: no divisibility needed
        return s, canon(sg * ceil_div(ad, n))
    dv = _or(divides(n, ad), divides(ad, n))
    if dv is None:
        raise fail("upcast", f"{ad} % {n} == 0 or {n} % {ad} == 0", "the divisibility condition of upcast",
                   layout=layout, n=n)
    if not dv:
        raise layout_error(DivisibilityError, "upcast", "divisibility condition",
                           f"stride {d} and factor {n}: neither divides the other", layout=layout, n=n)
    return canon(ceil_div(s, ceil_div(n, ad))), canon(sg * ceil_div(ad, n))


def _map_leaves(shape, stride, f):
    if isinstance(shape, tuple):
        parts = [_map_leaves(s, d, f) for s, d in zip(shape, stride)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    return f(shape, stride)


@names_caller
def upcast(layout, n: int):
    """View ``layout`` in units of ``n`` elements: strides ``ceil(|d|/n)``, a stride-1 extent ``/ n``.

    Precondition: every non-zero stride ``d`` has ``d % n == 0 or n % d == 0``.
    Works on Layout, Swizzle (``Sw<B, M-log2 n, S>``) and ComposedLayout.

    >>> print(upcast(Layout((8, 64), (64, 1)), 2))
    (8,32):(32,1)
    """
    _check_n("upcast", n)
    if isinstance(layout, Swizzle):
        return layout.upcast(n)
    if getattr(layout, "_is_composed_layout", False):
        off = layout.offset
        return ComposedLayout(upcast(layout.outer, n), off // n if is_int(off) else off, upcast(layout.inner, n))
    if not isinstance(layout, Layout):
        raise TypeError(f"upcast: expected a layout or swizzle, got {_r(layout)}")
    s, d = _map_leaves(layout.shape, layout.stride, lambda s, d: _upcast_leaf(s, d, n, layout))
    return Layout._make(s, d)


@names_caller
def downcast(layout, n: int):
    """View ``layout`` in units of ``1/n`` element: a stride-±1 extent ``* n``, other strides ``* n``.

    Precondition: some stride is ±1 (the elements are adjacent somewhere).

    >>> print(downcast(Layout((8, 64), (64, 1)), 2))
    (8,128):(128,1)
    """
    _check_n("downcast", n)
    if isinstance(layout, Swizzle):
        return layout.downcast(n)
    if getattr(layout, "_is_composed_layout", False):
        off = layout.offset
        return ComposedLayout(downcast(layout.outer, n), off * n, downcast(layout.inner, n))
    if not isinstance(layout, Layout):
        raise TypeError(f"downcast: expected a layout or swizzle, got {_r(layout)}")
    if not any(d in (1, -1) for d in it.flatten_to_tuple(layout.stride)):
        raise layout_error(LayoutError, "downcast", "downcast requires adjacent elements (a stride-1 mode)",
                           layout=layout, n=n)
    s, d = _map_leaves(layout.shape, layout.stride,
                       lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))
    return Layout._make(s, d)


@names_caller
def recast_layout(layout, old_type, new_type):
    """Re-express a layout of ``old_type`` elements in ``new_type`` elements (up- or downcast by the bit ratio).

    >>> print(recast_layout(Layout((8, 64), (64, 1)), "f16", "f32"))
    (8,32):(32,1)
    >>> recast_layout(Swizzle(3, 4, 3), 8, 16)
    Swizzle(3, 3, 3)
    """
    ob, nb = sizeof_bits(old_type), sizeof_bits(new_type)
    g = math.gcd(ob, nb)
    return _recast(layout, nb // g, ob // g)


def _recast(layout, num: int, den: int):
    """CuTe's ``recast_layout`` for the element-size ratio ``num/den`` (lowest terms): upcast by ``num``, then
    downcast by ``den``."""
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)


def _ratio(scale) -> tuple:
    """``scale`` (a positive int, Fraction or ``(num, den)`` pair of positive ints) as ``(num, den)`` in lowest
    terms."""
    if isinstance(scale, tuple) and len(scale) == 2 and all(is_int(x) and not isinstance(x, bool) for x in scale):
        num, den = int(scale[0]), int(scale[1])
    elif isinstance(scale, Fraction):
        num, den = scale.numerator, scale.denominator
    elif is_int(scale) and not isinstance(scale, bool):
        num, den = int(scale), 1
    else:
        raise TypeError(f"recast_by: the scale is a positive int, a Fraction or a (num, den) pair of ints, "
                        f"got {type(scale).__name__}: {_r(scale)}" + (" (give Fraction(n, d): a float is not "
                                                                     "exact)" if isinstance(scale, float) else ""))
    if num < 1 or den < 1:
        raise layout_error(LayoutError, "recast_by", "the scale must be positive", f"scale = {num}/{den}")
    g = math.gcd(num, den)
    return num // g, den // g


def _check_whole(layout, num: int, scale):
    """Refuse a leaf whose elements do not fill whole new elements: a stride ``d`` with ``|d| < num`` packs
    ``num/|d|`` of its elements into one new element, so its extent must be a multiple of that (upcast would
    round it up)."""
    inner = getattr(layout, "inner", layout)
    if not isinstance(inner, Layout):
        return
    for s, d in zip(*flat_modes(inner)):
        if type(d) is not int or d == 0 or s == 1 or abs(d) >= num or num % abs(d):
            continue
        per = num // abs(d)
        whole = divides(per, s)
        if whole is None:
            raise fail("recast_by", f"{s} % {per} == 0", "whole new elements", layout=layout, scale=scale)
        if not whole:
            raise layout_error(DivisibilityError, "recast_by", "inexact recast",
                               f"the mode {s}:{d} holds {s} elements, {per} to a new element: {s} % {per} != 0",
                               layout=layout, scale=scale)


@names_caller
def recast_by(layout, scale):
    """Re-express ``layout`` in new elements ``scale`` times the size of the old ones: CuTe's
    ``recast_layout`` for the ratio ``scale = num/den`` (``upcast`` by ``num``, then ``downcast`` by ``den``).

    ``scale`` is an int (pack that many elements into one), a ``Fraction`` or a ``(num, den)`` pair
    (``Fraction(1, 2)``: two new elements per old one). PyCuTe's ``recast(layout, scale)``, which
    :func:`~cute_py.layouts.tensor_make.recast` also accepts.

    Preconditions: those of :func:`upcast` and :func:`downcast`, and exactness: a mode whose stride
    ``d`` is smaller than ``num`` holds a whole number of new elements (its extent is a multiple of
    ``num/|d|``); otherwise a DivisibilityError. Postcondition: ``recast_by(L, Fraction(nb, ob)) ==
    recast_layout(L, ob, nb)`` for bit widths ``ob`` and ``nb``.

    >>> from fractions import Fraction
    >>> print(recast_by(Layout((4, 4), (4, 1)), 4), recast_by(Layout((4, 4), (4, 1)), Fraction(1, 2)))
    (4,1):(1,1) (4,8):(8,1)
    >>> print(recast_by(Layout((4, 6), (6, 1)), (2, 3)))
    (4,9):(9,1)
    """
    num, den = _ratio(scale)
    shown = str(Fraction(num, den))
    _check_whole(layout, num, shown)
    try:
        return _recast(layout, num, den)
    except LayoutError as e:
        raise in_operation(e, "recast_by", layout=layout, scale=shown) from None


def max_alignment(layout) -> int:
    """Largest ``n`` such that aligned ``n``-element vectors of the layout stay contiguous.

    For a Layout (CuTe's rule): divide the coalesced layout by its right
    inverse (the contiguous part, in memory order) and take the gcd of that
    part's size and the strides of the rest, then the largest divisor of it
    that every leaf stride admits (upcast does not coalesce). For a Swizzle:
    ``2^M``. For a swizzled layout, the gcd of both.
    ``upcast(layout, max_alignment(layout))`` always succeeds.

    >>> max_alignment(Layout((8, 64), (64, 1))), max_alignment(Layout((4, 8), (16, 1)))
    (512, 8)
    >>> max_alignment(Swizzle(3, 4, 3))
    16
    """
    if isinstance(layout, Swizzle):
        return 1 << layout.base
    if getattr(layout, "_is_composed_layout", False):
        if isinstance(layout.outer, Swizzle) and is_int(layout.offset):
            a = math.gcd(max_alignment(layout.outer), max_alignment(layout.inner))
            return math.gcd(a, layout.offset) if layout.offset else a
        return 1
    if not isinstance(layout, Layout):
        raise TypeError(f"max_alignment: expected a layout, got {_r(layout)}")

    c = coalesce(layout)
    try:
        p = logical_divide(c, right_inverse(c))
    except LayoutError:
        return 1
    g = it.product(p.shape[0])
    for d in it.flatten_to_tuple(p.stride[1]):
        g = math.gcd(g, abs(d))
    # upcast works leaf by leaf (it does not coalesce): keep the largest divisor of g it accepts.
    leaves = [(s, abs(d)) for s, d in zip(*flat_modes(layout)) if d != 0 and s != 1]
    for n in sorted((k for k in range(1, g + 1) if g % k == 0), reverse=True):
        if all(d % n == 0 or n % d == 0 for _, d in leaves):
            return n
    return 1
