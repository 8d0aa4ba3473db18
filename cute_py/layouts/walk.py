"""Walking a layout: its leaf modes, its coordinates and its values, as iterators.

These are the loops a user writes around a layout in a notebook, named once:
nothing is materialized, so a layout of any size can be walked lazily.

>>> from cute_py import Layout
>>> L = Layout((2, (2, 3)), (1, (6, 2)))
>>> [str(m) for m in leaves(L)], list(coordinates((2, 2)))
(['2:1', '2:6', '3:2'], [(0, 0), (1, 0), (0, 1), (1, 1)])
>>> list(values(Layout((2, 3), (3, 1))))
[0, 3, 1, 4, 2, 5]
"""

from __future__ import annotations

import builtins

from . import int_tuple as it
from .errors import _r, names_caller
from .layout import Layout, flat_modes

__all__ = ["leaves", "coordinates", "values"]


@names_caller
def leaves(x) -> tuple:
    """The leaves, in order: of a Layout its leaf modes as rank-1 layouts ``s:d``; of an IntTuple its ints.

    Postcondition: ``leaves(L) == tuple(Layout(s, d) for s, d in zip(flatten(shape), flatten(stride)))``.

    >>> leaves(((2, 3), 4))
    (2, 3, 4)
    """
    if isinstance(x, Layout):
        return tuple(Layout._make(s, d) for s, d in builtins.zip(*flat_modes(x)))
    if isinstance(x, tuple) or it.is_int(x) or it.is_sym(x):
        return it.flatten_to_tuple(x)
    raise TypeError(f"leaves: expected a Layout or an IntTuple, got {_r(x)}")


@names_caller
def coordinates(shape):
    """Every natural coordinate of ``shape`` (or of a layout's shape) in colexicographic order: the
    coordinate of index ``i`` is ``idx2crd(i, shape)``. A generator.

    >>> list(coordinates(((2, 2), 2)))[:3]
    [((0, 0), 0), ((1, 0), 0), ((0, 1), 0)]
    """
    shape = getattr(shape, "shape", shape)
    if not (isinstance(shape, tuple) or it.is_int(shape)) or not all(
            it.is_int(s) and s >= 0 for s in it.flatten_to_tuple(shape)):
        raise TypeError(f"coordinates: expected a shape of non-negative static extents (or a layout), got {_r(shape)}")
    n = it.product(shape)
    return (it.idx2crd(i, shape) for i in range(n))


@names_caller
def values(layout):
    """``layout(i)`` for ``i`` in ``range(size(layout))``: the layout's offsets in index order, a generator
    (see ``layout_offsets`` for a numpy array at once).

    >>> from cute_py import Swizzle
    >>> list(values(Swizzle(1, 0, 1)))
    [0, 1, 3, 2]
    """
    if getattr(layout, "_is_swizzle", False):
        return (layout(i) for i in range(layout.size()))
    shape = getattr(layout, "shape", None)
    if not (isinstance(layout, Layout) or getattr(layout, "_is_composed_layout", False)) or not all(
            it.is_int(s) for s in it.flatten_to_tuple(shape)):
        raise TypeError(f"values: expected a layout with static extents, got {_r(layout)}")
    n = it.product(shape)
    return (layout(i) for i in range(n))
