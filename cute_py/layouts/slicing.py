"""Slicing a layout or an IntTuple by a coordinate with ``_`` (CuTe's ``slice`` and ``dice``).

``slice_(c, L)`` keeps the modes of ``L`` where ``c`` is ``_`` and
``dice(c, L)`` the modes where ``c`` is an integer; ``slice_and_offset`` also
returns the offset of the integers. ``slice_modes`` / ``dice_modes`` do the
same to a bare IntTuple (CuTe's ``slice`` / ``dice`` on tuples;
tensor-layouts' names). Kept modes nested inside a mode are spliced into its
level, as in C++.

>>> print(slice_((_, 2), Layout((4, 8))), slice_modes((1, (_, 0)), (4, (2, 3))))
(4):(1) (2,)
"""

from __future__ import annotations

from . import int_tuple as it
from .errors import names_caller, _r
from .int_tuple import _
from .layout import Layout, _coord, _require_layout, _slice_tuple, crd2idx

__all__ = ["slice_", "slice_and_offset", "dice", "slice_modes", "dice_modes"]


def _dice_tuple(c, t, op):
    """The leaves and modes of ``t`` where ``c`` is an integer (CuTe's ``dice`` on tuples)."""
    return _slice_tuple(c, t, op, dice=True)


@names_caller
def slice_(coord, layout):
    """The sub-layout of the modes marked ``_`` in ``coord`` (CuTe's ``slice``).

    Nested kept modes are flattened into the parent level, as in C++;
    ``slice_(_, L)`` is ``L``.

    >>> print(slice_((_, 2), Layout((4, 8))))
    (4):(1)
    >>> print(slice_((1, (_, 0)), Layout((4, (2, 3)))))
    (2):(4)
    """
    if getattr(layout, "_is_composed_layout", False):
        return layout(coord)
    _require_layout("slice", layout)
    it.check_depth("slice", coord)
    coord = _coord("slice", coord)
    return Layout._make(_slice_tuple(coord, layout.shape, "slice"),
                        _slice_tuple(coord, layout.stride, "slice"))


@names_caller
def slice_and_offset(coord, layout):
    """``(slice_(coord, layout), layout(coord with _ as 0))``.

    >>> L, off = slice_and_offset((_, 2), Layout((4, 8)))
    >>> print(L, off)
    (4):(1) 8
    """
    if getattr(layout, "_is_composed_layout", False):
        return layout._slice_and_offset(coord)
    return slice_(coord, layout), crd2idx(coord, layout)


def dice(coord, layout):
    """The sub-layout of the modes given by integers in ``coord`` (the complement of slice).

    >>> print(dice((_, 2), Layout((4, 8))))
    (8):(4)
    """
    _require_layout("dice", layout)
    it.check_depth("dice", coord)
    return Layout._make(_dice_tuple(coord, layout.shape, "dice"),
                        _dice_tuple(coord, layout.stride, "dice"))


def _marker(op, coord, depth=0):
    """``coord`` with ``None`` read as ``_`` (tensor-layouts and the CuTe DSL write ``None``), lists as
    tuples; the leaves are checked as :func:`~cute_py.layouts.layout.crd2idx` checks them."""
    if isinstance(coord, (tuple, list)):
        if depth > it.MAX_DEPTH:
            raise TypeError(f"{op}: the coordinate nests deeper than {it.MAX_DEPTH} levels")
        return tuple(_marker(op, c, depth + 1) for c in coord)
    return _ if coord is None else _coord(op, coord, depth)


def _int_tuple(op, t, what="t"):
    for x in it.flatten_to_tuple(t) if isinstance(t, (tuple, list)) else (t,):
        if isinstance(x, bool) or not (it.is_int(x) or it.is_sym(x)):
            raise TypeError(f"{op}: {what} must be an IntTuple (ints, symbols or tuples of those), got {_r(t)}")
    it.check_depth(op, t)


def slice_modes(coord, t):
    """The leaves and modes of the IntTuple ``t`` where ``coord`` is ``_`` (or ``None``): CuTe's ``slice(coord,
    t)`` on tuples. A tuple coordinate gives a tuple (kept modes nested in a mode are spliced into its level);
    ``slice_modes(_, t) == t`` and an integer coordinate gives ``()``.

    Precondition: ``coord`` is congruent with ``t`` where it is a tuple. Postcondition: ``slice_modes(c,
    L.shape) == slice_(c, L).shape`` for a tuple ``c``.

    >>> slice_modes((_, 0), (3, 4)), slice_modes((None, (0, _)), (3, (4, 5))), slice_modes(_, (3, 4))
    ((3,), (3, 5), (3, 4))
    """
    _int_tuple("slice_modes", t)
    return _slice_tuple(_marker("slice_modes", coord), t, "slice_modes")


def dice_modes(coord, t):
    """The leaves and modes of the IntTuple ``t`` where ``coord`` is an integer: CuTe's ``dice(coord, t)`` on
    tuples, the complement of :func:`slice_modes`. ``dice_modes(_, t) == ()`` and an integer coordinate
    gives ``t``.

    >>> dice_modes((_, 0), (3, 4)), dice_modes((None, (0, _)), (3, (4, 5))), dice_modes(2, (3, 4))
    ((4,), (4,), (3, 4))
    """
    _int_tuple("dice_modes", t)
    return _dice_tuple(_marker("dice_modes", coord), t, "dice_modes")
