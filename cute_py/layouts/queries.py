"""The size, rank, depth, shape and stride of a layout (or an IntTuple), or of one of its modes: CuTe's free query
functions over :class:`~cute_py.layouts.layout.Layout`; and the predicates and coordinate maps the tensor-layouts
library names (``is_empty``, ``is_affine``, ``is_stride_scalar``, ``crd2flat``, ``crd2offset``).

>>> from cute_py import Layout
>>> size(Layout((4, (2, 3)))), rank(Layout((4, (2, 3)))), shape(Layout((4, (2, 3))), 1)
(24, 2, (2, 3))
"""

from __future__ import annotations

from . import int_tuple as it
from .basis import ArithmeticTuple, ScaledBasis
from .errors import _r, names_caller
from .f2 import F2
from .layout import Layout, _require_layout, _sub, crd2idx, is_layout
from .leaves import _norm

__all__ = ["size", "rank", "depth", "shape", "stride", "is_empty", "is_affine", "is_stride_scalar", "crd2flat",
           "crd2offset"]


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


@names_caller
def is_empty(x) -> bool:
    """Whether a layout (or IntTuple) has no coordinates: an extent of 0 somewhere (size 0).

    >>> from cute_py import Layout
    >>> is_empty(Layout((4, 0))), is_empty(Layout((4, 8))), is_empty((2, (0, 3))), is_empty([2, 0])
    (True, False, True, True)
    """
    if is_layout(x):
        return size(x) == 0
    if not (isinstance(x, (tuple, list)) or it.is_int(x) or it.is_sym(x)):
        raise TypeError(f"is_empty: expected a Layout or an IntTuple, got {type(x).__name__}: {_r(x)}")
    return size(_norm(x, "x", "is_empty")) == 0


def is_affine(x) -> bool:
    """Whether ``x`` is a plain :class:`~cute_py.layouts.layout.Layout`, a function of its coordinate through its
    strides alone (whatever their kind); a ComposedLayout (a swizzle, an offset and an inner layout), a Swizzle or
    anything else is not.

    >>> from cute_py import Layout, Swizzle, composition
    >>> is_affine(Layout((4, 8))), is_affine(composition(Swizzle(3, 3, 3), Layout((8, 64)))), is_affine((4, 8))
    (True, False, False)
    """
    return isinstance(x, Layout)


def is_stride_scalar(x) -> bool:
    """Whether ``x`` is one stride, not a tuple of them: an int (not a bool), a symbolic integer, a basis stride
    (``ScaledBasis``, or a sum of basis terms, ``ArithmeticTuple``) or an F2 value: the leaves the algebra's
    strides are made of.

    >>> from cute_py import E
    >>> [is_stride_scalar(d) for d in (4, E(1), 4 * E(2) + 2 * E(3), F2(5), (1, 4), True, 2.5)]
    [True, True, True, True, False, False, False]
    """
    return it.is_int(x) or it.is_sym(x) or isinstance(x, (ScaledBasis, ArithmeticTuple, F2))


@names_caller
def crd2flat(coord, shape) -> int:
    """The index of ``coord`` in the compact column-major layout of ``shape`` (a shape or a layout, whose shape
    counts): CuTe's two-argument ``crd2idx``, the inverse of ``idx2crd``.

    >>> from cute_py import Layout
    >>> crd2flat((1, 1), (4, 4)), crd2flat((1, (0, 2)), Layout((4, (2, 3)), (3, (1, 100))))
    (5, 17)
    """
    s = shape.shape if isinstance(shape, Layout) else shape
    return crd2idx(coord, Layout(s))


@names_caller
def crd2offset(coord, shape, stride=None) -> int:
    """The offset of ``coord`` under ``shape:stride`` (or a layout as ``shape``): CuTe's three-argument
    ``crd2idx``. An int coordinate is an index into the shape, colexicographically.

    >>> from cute_py import Layout
    >>> crd2offset((1, 1), (4, 4), (1, 100)), crd2offset((1, 1), Layout((4, 4), (1, 100))), crd2offset(5, (4, 4), (1, 100))
    (101, 101, 101)
    """
    if is_layout(shape):
        if stride is not None or not isinstance(shape, Layout):
            raise TypeError(f"crd2offset: a layout carries its strides: pass crd2offset(coord, layout) for a plain "
                            f"Layout, or (coord, shape, stride); got {type(shape).__name__} and stride={stride!r}")
        return crd2idx(coord, shape)
    return crd2idx(coord, Layout(shape, stride))
