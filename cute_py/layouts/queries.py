"""The size, rank, depth, shape and stride of a layout (or an IntTuple), or of one of its modes: CuTe's free query
functions over :class:`~cute_py.layouts.layout.Layout`.

>>> from cute_py import Layout
>>> size(Layout((4, (2, 3)))), rank(Layout((4, (2, 3)))), shape(Layout((4, (2, 3))), 1)
(24, 2, (2, 3))
"""

from __future__ import annotations

from . import int_tuple as it
from .errors import _r, names_caller
from .layout import _require_layout, _sub, is_layout

__all__ = ["size", "rank", "depth", "shape", "stride"]


@names_caller
def size(x, *modes) -> int:
    """Number of elements of a layout (or IntTuple), or of one of its modes.

    >>> from cute_py import Layout
    >>> size(Layout((4, (2, 3)))), size(Layout((4, (2, 3))), 1), size((2, 5))
    (24, 6, 10)
    """
    x = _sub("size", x, modes)
    if hasattr(x, "size") and callable(x.size):
        return x.size()
    try:
        return it.product(x)
    except TypeError:
        raise TypeError(f"size: expected a Layout or an IntTuple of ints, got {type(x).__name__}: {_r(x)}") from None


@names_caller
def rank(x, *modes) -> int:
    """Number of top-level modes of a layout (or IntTuple).

    >>> from cute_py import Layout
    >>> rank(Layout((4, (2, 3)))), rank(Layout(8))
    (2, 1)
    """
    x = _sub("rank", x, modes)
    return len(x) if is_layout(x) else it.rank(x)


@names_caller
def depth(x, *modes) -> int:
    """Nesting depth of a layout's shape (0 for an int shape).

    >>> from cute_py import Layout
    >>> depth(Layout((4, (2, 3)))), depth(Layout(8))
    (2, 0)
    """
    x = _sub("depth", x, modes)
    return it.depth(shape(x)) if is_layout(x) else it.depth(x)


@names_caller
def shape(x, *modes):
    """Shape of a layout (or the IntTuple itself), optionally of a mode.

    >>> from cute_py import Layout
    >>> shape(Layout((4, (2, 3))), 1)
    (2, 3)
    """
    x = _sub("shape", x, modes)
    return x.shape if is_layout(x) else x


@names_caller
def stride(x, *modes):
    """Stride of a layout, optionally of a mode.

    >>> from cute_py import Layout
    >>> stride(Layout((4, (2, 3))), 1)
    (4, 8)
    """
    x = _sub("stride", x, modes)
    if getattr(x, "_is_composed_layout", False):
        raise TypeError("stride: a ComposedLayout has no stride (CuTe deletes it)")
    _require_layout("stride", x)
    return x.stride
