"""The ``make_*`` constructors of layouts (CuTe's ``make_layout`` family).

>>> print(make_layout((4, 8), LayoutRight), make_ordered_layout((2, 2, 2), (1, 2, 0)))
(4,8):(8,1) (2,2,2):(2,4,1)
"""

from __future__ import annotations

from . import int_tuple as it
from .basis import ScaledBasis, make_basis_like
from .errors import LayoutError, layout_error, names_caller
from .f2 import F2, check_f2_strides
from .layout import Layout, LayoutLeft, LayoutRight, _require_layout, is_layout
from .leaves import _norm

__all__ = ["make_layout", "make_ordered_layout", "make_layout_like", "make_identity_layout", "tiler_to_layout"]


@names_caller
def make_layout(*args):
    """Build a layout, CuTe-style.

    * ``make_layout(shape)``: compact column-major;
    * ``make_layout(shape, stride)``, ``make_layout(shape, LayoutLeft | LayoutRight)``;
    * ``make_layout(L0, L1, ...)``: concatenation, one mode per layout
      (postcondition: ``rank(result) == n`` and ``result[i] == Li``); with one layout, as in C++, a rank-1
      layout whose mode is ``L`` (``make_layout(Layout((4, 8)))`` is ``((4,8)):((1,4))``);
      ``make_layout(Sw)``: ``Sw o 0 o 2^(B+M+|S|):1``.

    >>> print(make_layout((4, 8), LayoutRight))
    (4,8):(8,1)
    >>> print(make_layout(Layout(4, 2), Layout((2, 2), (1, 8))))
    (4,(2,2)):(2,(1,8))
    """
    if not args:
        raise TypeError("make_layout: expected a shape or layouts")
    if len(args) == 1 and getattr(args[0], "_is_swizzle", False):
        return args[0]._make_layout()
    if all(isinstance(a, Layout) for a in args):
        shape, stride = tuple(a.shape for a in args), tuple(a.stride for a in args)
        if F2.made and F2 in map(type, it.flatten_to_tuple(stride)):
            check_f2_strides(shape, stride)      # XOR and + do not mix in one layout
        return Layout._make(shape, stride)
    if any(is_layout(a) for a in args):
        raise TypeError("make_layout: cannot mix layouts with shapes, or concatenate composed layouts")
    if len(args) == 1:
        return Layout(args[0])
    if len(args) == 2:
        shp, order = args
        if order is LayoutLeft:
            return Layout(shp)
        if order is LayoutRight:
            shp = _norm(shp, "shape", "make_layout")
            return Layout._make(shp, it.compact_row_major(shp))
        return Layout(shp, order)
    raise TypeError(f"make_layout: expected (shape[, stride|tag]) or layouts, got {len(args)} arguments")


def make_ordered_layout(shape, order):
    """Compact layout whose strides increase in the order given by ``order``.

    ``order`` is a tuple weakly congruent with ``shape`` (or ``LayoutLeft`` /
    ``LayoutRight``); ties go left to right.

    >>> print(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)))
    (2,2,2,2):(1,4,8,2)
    """
    shape = _norm(shape, "shape", "make_ordered_layout")
    if order is LayoutLeft or order is LayoutRight:
        return make_layout(shape, order)
    return Layout._make(shape, it.compact_order(shape, order, "make_ordered_layout"))


def make_layout_like(layout: Layout) -> Layout:
    """Compact layout with the shape of ``layout`` and the same stride order; stride-0 modes stay 0.

    >>> print(make_layout_like(Layout((4, 3, 2), (6, 0, 1))))
    (4,3,2):(2,0,1)

    Basis strides order by codomain mode, then value; F2 strides by the int their bits spell (C++ orders
    neither); a mix of kinds has no order and is refused:

    >>> from cute_py import E
    >>> print(make_layout_like(Layout((2, 3), (E(1), E(0)))), make_layout_like(Layout((2, 4), (F2(8), F2(1)))))
    (2,3):(3,1) (2,4):(4,1)
    """
    return compact_like("make_layout_like", layout)


def compact_like(op: str, layout: Layout) -> Layout:
    """:func:`make_layout_like` for operation ``op`` (whose name its errors carry): the compact layout of
    ``layout``'s shape whose strides keep the order of ``layout``'s."""
    _require_layout(op, layout)
    shp, std = layout.shape, layout.stride
    flat = it.flatten_to_tuple(std)
    if stride_kind(op, layout) != "int":
        std = _ranks(std, sorted({d for d in flat if not _is_zero(d)}, key=lambda d: stride_key(op, d)))
    return Layout._make(shp, it.compact_order(it.filter_zeros(std, shp), std, op))


def stride_kind(op: str, layout: Layout) -> str:
    """The kind of ``layout``'s nonzero strides, ``"int"`` (ints and symbols), ``"ScaledBasis"`` or ``"F2"``: the
    kinds :func:`stride_key` orders; a mix of kinds, or another kind, is refused naming ``op``."""
    kinds = {"int" if it.is_int(d) or it.is_sym(d) else type(d).__name__
             for d in it.flatten_to_tuple(layout.stride) if not _is_zero(d)}
    if len(kinds) > 1 or kinds - {"int", "ScaledBasis", "F2"}:
        raise layout_error(LayoutError, op, "strides of one kind to order",
                           f"strides of kinds {sorted(kinds)} have no common order", layout=layout)
    return kinds.pop() if kinds else "int"


def _is_zero(d) -> bool:
    return (type(d) is int and d == 0) or (isinstance(d, ScaledBasis) and d.value == 0) or (
        isinstance(d, F2) and d.value == 0)


def stride_key(op: str, d):
    """The order of basis strides (by codomain mode, then value: mode 0 varies fastest, as a colexicographic
    coordinate does) and of F2 strides (by the int their bits spell); a zero of either kind first. Ints order as
    themselves (the caller keeps one kind: :func:`stride_kind`)."""
    if _is_zero(d):
        return (), 0
    if it.is_int(d) or it.is_sym(d):
        return d
    if isinstance(d, ScaledBasis):
        if not it.is_int(d.value):
            raise layout_error(LayoutError, op, "basis strides of one term with an int value",
                               f"stride {d} is not one basis term with an int value", stride=d)
        return d.mode, d.value
    return (), int(d)


def _ranks(t, order):
    """``t`` with each stride replaced by 1 + its rank in ``order`` (zeros stay 0): int strides in the order of
    the originals, which :func:`~cute_py.layouts.int_tuple.compact_order` can sort."""
    if isinstance(t, tuple):
        return tuple(_ranks(x, order) for x in t)
    return 0 if _is_zero(t) else 1 + order.index(t)


@names_caller
def make_identity_layout(shape) -> Layout:
    """``shape : make_basis_like(shape)``: maps each coordinate to itself.

    >>> L = make_identity_layout((4, 8))
    >>> print(L), L(9)
    (4,8):(1@0,1@1)
    (None, (1,2))
    """
    shape = _norm(shape, "shape", "make_identity_layout")
    return Layout._make(shape, make_basis_like(shape))


@names_caller
def tiler_to_layout(tiler):
    """A tiler as one layout: each extent ``n`` of mode ``i`` becomes ``n:E<i>`` (a coordinate of that mode),
    each layout stays; an int is ``n:1``. The result maps a tile coordinate to the coordinate it selects.

    >>> print(tiler_to_layout((4, 5)), tiler_to_layout((Layout(2, 3), 8)))
    (4,5):(1@0,1@1) (2,8):(3@0,1@1)
    """
    if isinstance(tiler, Layout):
        return tiler
    if it.is_int(tiler):
        return Layout(tiler)
    if not isinstance(tiler, tuple) or not tiler:
        raise TypeError(f"tiler_to_layout: expected a Layout, an int or a tuple of those, got {tiler!r:.80}")
    shapes, strides = [], []
    for i, t in enumerate(tiler):
        if isinstance(t, Layout):
            shapes.append(t.shape)
            strides.append(_scaled(t.stride, i))
        elif it.is_int(t) and t >= 1:
            shapes.append(int(t))
            strides.append(ScaledBasis(1, (i,)))
        else:
            raise TypeError(f"tiler_to_layout: mode {i} must be a positive int or a Layout, got {t!r:.80}")
    return Layout(tuple(shapes), tuple(strides))


def _scaled(d, i):
    """Stride ``d`` of a tiler's layout mode ``i``, moved into coordinate mode ``i`` (``d@i``)."""
    if isinstance(d, tuple):
        return tuple(_scaled(x, i) for x in d)
    return ScaledBasis(d, (i,)) if d else 0
