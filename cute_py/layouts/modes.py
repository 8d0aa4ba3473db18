"""Selecting and rearranging a layout's modes: take, select, group, flatten, append, zip, ... (CuTe's
``layout.hpp``). Each takes a Layout (or a Tensor, for which it acts on the layout) and returns one.

>>> from cute_py import Layout
>>> L = Layout((2, 3, 4), (1, 2, 6))
>>> print(select(L, 2, 0), group(L, 1, 3), append(L, Layout(5, 24)))
(4,2):(6,1) (2,(3,4)):(1,(2,6)) (2,3,4,5):(1,2,6,24)
"""

from __future__ import annotations

import builtins

from . import int_tuple as it
from .errors import LayoutError, RankError, layout_error, _r, names_caller
from .layout import ALGEBRA, Layout, _index, _is_tensor, _modes, _require_layout
from .make import compact_like, stride_key, stride_kind

__all__ = [
    "take", "select", "group", "flatten", "unflatten", "append", "prepend", "replace", "zip", "transform_layout", "domain_offset", "squeeze",
    "concat", "sort", "iter_layout",
]


def take(layout, begin: int, end: int):
    """Modes ``[begin, end)`` as a layout (CuTe's ``take<B,E>``).

    >>> print(take(Layout((2, 3, 4, 5)), 1, 3))
    (3,4):(2,6)
    """
    if _is_tensor(layout):
        return layout._apply(take, begin, end)
    _require_layout("take", layout)
    begin, end = _index("take", "begin", begin), _index("take", "end", end)
    s, d = _modes(layout)
    if not (0 <= begin <= end <= len(s)):
        raise layout_error(RankError, "take", "need 0 <= begin <= end <= rank",
                           f"begin={begin}, end={end}, rank={len(s)}", layout=layout)
    return Layout._make(s[begin:end], d[begin:end])


def select(layout, *modes):
    """The layout made of the chosen top-level modes, in the order given.

    >>> print(select(Layout((2, 3, 4)), 2, 0))
    (4,2):(6,1)
    """
    if _is_tensor(layout):
        return layout._apply(select, *modes)
    _require_layout("select", layout)
    s, d = _modes(layout)
    for i in modes:
        if not isinstance(i, int) or not -len(s) <= i < len(s):
            raise layout_error(RankError, "select", "mode index out of range",
                               f"mode {_r(i)} of a rank-{len(s)} layout", layout=layout)
    return Layout._make(tuple(s[i] for i in modes), tuple(d[i] for i in modes))


def group(layout, begin: int, end: int):
    """Group modes ``[begin, end)`` into one mode (CuTe's ``group<B,E>``).

    >>> print(group(Layout((2, 3, 4, 5)), 1, 3))
    (2,(3,4),5):(1,(2,6),24)
    """
    if _is_tensor(layout):
        return layout._apply(group, begin, end)
    _require_layout("group", layout)
    begin, end = _index("group", "begin", begin), _index("group", "end", end)
    s, d = _modes(layout)
    if not (0 <= begin <= end <= len(s)):
        raise layout_error(RankError, "group", "need 0 <= begin <= end <= rank",
                           f"begin={begin}, end={end}, rank={len(s)}", layout=layout)
    return Layout._make(s[:begin] + (s[begin:end],) + s[end:], d[:begin] + (d[begin:end],) + d[end:])


def flatten(layout):
    """Flatten shape and stride (an int-shaped layout is unchanged).

    Postcondition: ``depth(result) <= 1`` and ``result(i) == layout(i)``.

    >>> print(flatten(Layout((4, (2, 3)))))
    (4,2,3):(1,4,8)
    """
    if _is_tensor(layout):
        return layout._apply(flatten)
    if getattr(layout, "_is_composed_layout", False):
        return layout._with_inner(flatten(layout.inner))
    _require_layout("flatten", layout)
    return Layout._make(it.flatten(layout.shape), it.flatten(layout.stride))


def unflatten(layout, profile):
    """Re-nest a flat layout like ``profile`` (the inverse of :func:`flatten`).

    >>> print(unflatten(Layout((4, 2, 3)), (0, (0, 0))))
    (4,(2,3)):(1,(4,8))
    """
    _require_layout("unflatten", layout)
    s, d = _modes(layout)
    return Layout._make(it.unflatten(s, profile), it.unflatten(d, profile))


_ONE = Layout._make(1, 0)  # the 1:0 layout append/prepend pad with


def append(layout, x=None, n=None):
    """Append mode ``x`` (default ``1:0``); with ``n``, pad with ``x`` up to rank ``n``.

    >>> print(append(Layout(4), Layout(3, 4)))
    (4,3):(1,4)
    >>> print(append(Layout((4, 2)), n=4))
    (4,2,1,1):(1,4,0,0)
    """
    _require_layout("append", layout)
    x = _ONE if x is None else x
    _require_layout("append", x)
    n = None if n is None else _index("append", "n", n)
    s, d = _modes(layout)
    if n is None:
        return Layout._make(s + (x.shape,), d + (x.stride,))
    if n <= len(s):
        return layout
    return Layout._make(s + (x.shape,) * (n - len(s)), d + (x.stride,) * (n - len(s)))


def prepend(layout, x=None, n=None):
    """Prepend mode ``x`` (default ``1:0``); with ``n``, pad at the front up to rank ``n``.

    >>> print(prepend(Layout(4), Layout(3, 4)))
    (3,4):(4,1)
    """
    _require_layout("prepend", layout)
    x = _ONE if x is None else x
    _require_layout("prepend", x)
    n = None if n is None else _index("prepend", "n", n)
    s, d = _modes(layout)
    if n is None:
        return Layout._make((x.shape,) + s, (x.stride,) + d)
    if n <= len(s):
        return layout
    return Layout._make((x.shape,) * (n - len(s)) + s, (x.stride,) * (n - len(s)) + d)


def replace(layout, i: int, x):
    """Replace top-level mode ``i`` by layout ``x``.

    >>> print(replace(Layout((4, 8)), 1, Layout(2, 32)))
    (4,2):(1,32)
    """
    _require_layout("replace", layout)
    _require_layout("replace", x)
    i = _index("replace", "i", i)
    s, d = _modes(layout)
    if not -len(s) <= i < len(s):
        raise layout_error(RankError, "replace", "mode index out of range",
                           f"mode {i} of a rank-{len(s)} layout", layout=layout)
    i %= len(s)
    return Layout._make(s[:i] + (x.shape,) + s[i + 1:], d[:i] + (x.stride,) + d[i + 1:])


def _zip_tuple(t):
    """CuTe's tuple ``zip``: transpose a rank-R0 x rank-R1 tuple; a tuple of non-tuples is wrapped."""
    if not isinstance(t, tuple):
        return t
    if t and isinstance(t[0], tuple):
        n = len(t[0])
        if any(not isinstance(e, tuple) or len(e) != n for e in t):
            raise layout_error(RankError, "zip", "mismatched ranks: modes to zip must all have the same rank",
                               tuple=t)
        return tuple(tuple(e[i] for e in t) for i in range(n))
    return (t,)


def zip(layout, other=None):  # noqa: A001 - CuTe's name
    """Transpose a rank-R-of-rank-K layout into rank-K-of-rank-R; ``zip(A, B)`` zips two layouts.

    >>> print(zip(Layout(((2, 3), (4, 5)))))
    ((2,4),(3,5)):((1,6),(2,24))
    >>> print(zip(Layout(4), Layout(2, 4)))
    ((4,2)):((1,4))
    """
    _require_layout("zip", layout)
    if other is not None:
        _require_layout("zip", other)
        return Layout._make(_zip_tuple((layout.shape, other.shape)),
                            _zip_tuple((layout.stride, other.stride)))
    return Layout._make(_zip_tuple(layout.shape), _zip_tuple(layout.stride))


def transform_layout(a, b, f, keep_trailing=True, op="transform_layout"):
    """``make_layout(f(a[i], b[i]) ...)`` over the common modes of ``a`` (a layout) and ``b`` (a tuple).

    With ``keep_trailing`` the unmatched trailing modes of ``a`` are kept (CuTe's
    2-argument ``transform_layout``, as the divides and products apply a tiler), else they are dropped (as
    composition does). ``op`` names the operation in an error.
    """
    s, d = (a.shape, a.stride) if type(a.shape) is tuple else ((a.shape,), (a.stride,))
    if len(b) > len(s):
        raise layout_error(RankError, op, "more tiler modes than layout modes",
                           f"{len(b)} > {len(s)}", layout=a, tiler=b)
    shapes, strides = [], []
    for i, t in enumerate(b):
        si = s[i]
        r = f(Layout._make(si, d[i], None if type(si) is tuple else ((si,), (d[i],))), t)
        if type(r) is not Layout:
            raise TypeError(f"{op}: mode results must be plain layouts, got {r}")
        shapes.append(r.shape)
        strides.append(r.stride)
    if keep_trailing:
        shapes += s[len(b):]
        strides += d[len(b):]
    return Layout._make(tuple(shapes), tuple(strides))


@names_caller
def domain_offset(coord, layout):
    """``(layout, layout(coord))``: the layout and the offset of ``coord`` (composed layouts fold it in).

    >>> domain_offset((1, 2), Layout((4, 8)))
    (Layout((4, 8), (1, 4)), 9)

    A Tensor gives the tensor shifted by that offset (same layout), as in CuTe.
    """
    if _is_tensor(layout):
        return layout._domain_offset(coord)
    if getattr(layout, "_is_composed_layout", False):
        return layout._domain_offset(coord)
    _require_layout("domain_offset", layout)
    return layout, layout(coord)


@names_caller
def squeeze(layout):
    """``layout`` without its modes of extent 1 (at every level; a mode left with one leaf becomes that leaf,
    one left empty goes), ``1:0`` if nothing is left. The function on the domain is unchanged; only the
    coordinates lose those modes.

    >>> print(squeeze(Layout((4, 1, (1, 8)), (1, 0, (0, 4)))))
    (4,8):(1,4)
    """
    if _is_tensor(layout):
        return layout._apply(squeeze)
    _require_layout("squeeze", layout)

    def drop(s, d):
        """(shape, stride) of the mode without its extent-1 leaves (one left: that leaf), or None."""
        if not isinstance(s, tuple):
            return None if s == 1 else (s, d)
        kept = [m for m in builtins.map(drop, s, d) if m is not None]
        if len(kept) <= 1:
            return kept[0] if kept else None
        return tuple(k[0] for k in kept), tuple(k[1] for k in kept)

    kept = drop(layout.shape, layout.stride)
    if kept is None:
        return Layout._make(1, 0)
    return Layout._make(*kept)


ALGEBRA.squeeze = squeeze  # Layout.squeeze calls it


def concat(*layouts) -> Layout:
    """One layout whose modes are those of each of ``layouts`` in turn (an int-shaped layout is one mode): the
    tensor-layouts library's ``concat``, :func:`append` of several at once.

    >>> print(concat(Layout((4, 8)), Layout(2, 32), Layout(((2, 2),), ((64, 128),))))
    (4,8,2,(2,2)):(1,4,32,(64,128))
    """
    shapes, strides = (), ()
    for x in layouts:
        _require_layout("concat", x)
        s, d = _modes(x)
        shapes, strides = shapes + s, strides + d
    return Layout._make(shapes, strides)


def sort(layout) -> Layout:
    """The flat modes of ``layout`` in increasing stride order (ints as numbers, so a negative stride before a
    zero one), ties in their order: the tensor-layouts library's ``sort``. Basis strides order by codomain mode
    then value and F2 strides by the int their bits spell, each kind's zero first, as
    :func:`~cute_py.layouts.make.make_layout_like` orders them; a mix of kinds is refused, and so is a pair of
    symbolic strides whose order is not decided. A sorted compact layout is column-major: ``sort`` undoes a
    permutation of its modes.

    >>> print(sort(Layout((4, (2, 3)), (6, (1, 2)))), sort(Layout((2, 3, 4), (12, 0, 1))))
    (2,3,4):(1,2,6) (3,4,2):(0,1,12)
    """
    _require_layout("sort", layout)
    shapes, strides = it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)
    if stride_kind("sort", layout) != "int":
        keys = [stride_key("sort", d) for d in strides]
    elif all(type(d) is int for d in strides):
        keys = list(strides)
    else:                                   # symbolic: the order the compact layout of the same order decides
        flat = Layout._make(shapes, strides)
        keys = list(it.flatten_to_tuple(compact_like("sort", flat).stride))
    order = sorted(builtins.range(len(keys)), key=lambda i: (keys[i], i))
    return Layout._make(tuple(shapes[i] for i in order), tuple(strides[i] for i in order))


def iter_layout(layout):
    """``(coordinate, offset)`` for every coordinate of ``layout`` (a Layout or ComposedLayout of static
    extents), in the order of its index (colexicographic: mode 0 fastest): the tensor-layouts library's
    ``iter_layout``. The argument is checked at the call, before the first pair.

    >>> list(iter_layout(Layout((2, 2), (1, 4))))
    [((0, 0), 0), ((1, 0), 1), ((0, 1), 4), ((1, 1), 5)]
    """
    if not (isinstance(layout, Layout) or getattr(layout, "_is_composed_layout", False)):
        _require_layout("iter_layout", layout)
    shape = layout.shape
    n = it.product(shape)
    if not it.is_int(n):
        raise layout_error(LayoutError, "iter_layout", "static extents to enumerate",
                           f"the size {n} is symbolic", layout=layout)
    return ((c, layout(c)) for c in (it.idx2crd(i, shape) for i in builtins.range(n)))
