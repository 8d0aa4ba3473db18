"""Partitioning tensors (CuTe's ``inner_partition``, ``outer_partition``, ``local_tile``, ``local_partition``).

Each one is ``zipped_divide`` followed by a slice: ``inner_partition`` keeps the
tile modes and indexes the rest modes (a CTA taking its block),
``outer_partition`` indexes the tile modes and keeps the rest (a thread taking
its element of every tile).

>>> import numpy as np
>>> from cute_py import make_tensor, Layout
>>> t = make_tensor(np.arange(16 * 32).reshape(16, 32))
>>> print(local_tile(t, (4, 8), (1, 2)))
tensor<s64>[512]+144 o (4,8):(32,1)
>>> print(local_partition(t, Layout((4, 8)), 5))
tensor<s64>[512]+33 o (4,4):(128,8)
"""

from __future__ import annotations

from . import int_tuple as it
from .errors import CoordinateError, RankError, layout_error, _r, names_caller
from .int_tuple import _, is_int
from .layout import Layout
from .slicing import _dice_tuple, dice
from .tensor_make import _require_tensor
from .tiling import zipped_divide

__all__ = ["inner_partition", "outer_partition", "local_tile", "local_partition"]


def _rank(s):
    return len(s) if isinstance(s, tuple) else 1


def _pad(op, coord, r):
    """CuTe's ``append<R>(coord, _)`` for a tuple coordinate; an int coordinate indexes the mode 1-D."""
    if isinstance(coord, list):
        coord = tuple(coord)
    if isinstance(coord, tuple):
        if len(coord) > r:
            raise layout_error(RankError, op, "coordinate has more modes than the divided tensor",
                               f"rank {len(coord)} > {r}", coord=coord)
        return coord + (_,) * (r - len(coord))
    if coord is _ or is_int(coord):
        return coord
    raise TypeError(f"{op}: a coordinate is an int, _ or a tuple, got {_r(coord)}")


def _all(r):
    """CuTe's ``repeat<R>(_)``: ``_`` for one mode (kept whole), else one ``_`` per mode."""
    return _ if r == 1 else (_,) * r


@names_caller
def inner_partition(t, tiler, coord):
    """The tile at ``coord``: ``zipped_divide(t, tiler)(repeat(_), coord)``.

    The tile modes are kept (spliced to the top level); ``coord`` indexes the
    rest modes: a tuple is padded with ``_`` to their rank (so extra tensor
    modes stay), an int is a 1-D index into all of them.

    Postcondition: ``shape(result) == tile shape (+ unindexed rest modes)``;
    over all ``coord`` the tiles cover ``t`` (for a dividing tiler, exactly once).

    >>> import numpy as np
    >>> from cute_py import make_tensor
    >>> t = make_tensor(np.arange(8 * 6 * 2), (8, 6, 2))
    >>> print(inner_partition(t, (4, 3), (1, 0)))
    tensor<s64>[96]+4 o (4,3,2):(1,8,48)
    """
    _require_tensor("inner_partition", t)
    tiled = zipped_divide(t, tiler)
    s = tiled.layout.shape
    return tiled(_all(_rank(s[0])), _pad("inner_partition", coord, _rank(s[1])))


@names_caller
def outer_partition(t, tiler, coord):
    """The elements at position ``coord`` of every tile: ``zipped_divide(t, tiler)(coord, repeat(_))``.

    ``coord`` indexes the tile modes (a tuple padded with ``_``, or a 1-D int);
    the rest modes are kept, spliced to the top level.

    Postcondition: over all ``coord`` of the tile the results cover ``t``
    (for a dividing tiler, exactly once).

    >>> import numpy as np
    >>> from cute_py import make_tensor
    >>> t = make_tensor(np.arange(8 * 6), (8, 6))
    >>> print(outer_partition(t, (4, 3), (1, 2)))
    tensor<s64>[48]+17 o (2,2):(4,24)
    """
    _require_tensor("outer_partition", t)
    tiled = zipped_divide(t, tiler)
    s = tiled.layout.shape
    return tiled(_pad("outer_partition", coord, _rank(s[0])), _all(_rank(s[1])))


def _proj(op, proj):
    """A Step-like projection: ``1`` keeps a mode, ``None`` (or ``_``, CuTe's ``X``) removes it."""
    if isinstance(proj, list):
        proj = tuple(proj)
    if not isinstance(proj, tuple):
        raise TypeError(f"{op}: proj is a tuple of 1 / None per mode, got {_r(proj)}")

    def conv(p):
        if isinstance(p, (tuple, list)):
            return tuple(conv(e) for e in p)
        if p is None or p is _:
            return _
        if is_int(p):
            return 1
        raise TypeError(f"{op}: proj entries are 1 or None, got {_r(p)}")

    return conv(proj)


@names_caller
def local_tile(t, tiler, coord, proj=None):
    """The CTA-level tile of ``t`` at ``coord``: ``inner_partition(t, tiler, coord)``.

    With ``proj`` (a tuple of ``1`` / ``None`` per tiler mode, CuTe's
    ``Step<_1,X,_1>``), the modes marked None are first removed from both
    ``tiler`` and ``coord`` (CuTe's ``dice``), so one (M,N,K) tiler serves A,
    B and C.

    >>> import numpy as np
    >>> from cute_py import make_tensor
    >>> A = make_tensor(np.zeros((8, 12)), (8, 12))         # (M, K)
    >>> print(local_tile(A, (4, 2, 6), (1, 0, _), proj=(1, None, 1)))
    tensor<f64>[96]+4 o (4,6,2):(1,8,48)
    """
    _require_tensor("local_tile", t)
    if proj is not None:
        p = _proj("local_tile", proj)
        tiler = dice(p, tiler) if isinstance(tiler, Layout) else _dice_tuple(p, _tup(tiler), "local_tile")
        coord = _dice_tuple(p, _tup(coord), "local_tile")
    return inner_partition(t, tiler, coord)


def _tup(x):
    return tuple(_tup(e) for e in x) if isinstance(x, (list, tuple)) else x


@names_caller
def local_partition(t, thr_layout, thr_idx, proj=None):
    """Thread ``thr_idx``'s share of ``t`` under ``thr_layout`` (threads repeated over the tensor).

    ``outer_partition(t, product_each(shape(thr_layout)), thr_layout.get_flat_coord(thr_idx))``:
    the thread layout tiles ``t``; the thread takes its position in every tile.
    ``proj`` removes thread modes first, as in :func:`local_tile`.

    Precondition: ``0 <= thr_idx < size(thr_layout)`` (a CoordinateError
    otherwise; CuTe leaves it undefined, the index would wrap to another thread).
    Postcondition: over all ``thr_idx < size(thr_layout)`` (compact
    ``thr_layout`` dividing ``t``) the partitions cover ``t`` exactly once.

    >>> import numpy as np
    >>> from cute_py import make_tensor
    >>> t = make_tensor(np.arange(16 * 64), (16, 64))
    >>> print(local_partition(t, Layout((2, 16)), 3))
    tensor<s64>[1024]+17 o (8,4):(2,256)
    >>> local_partition(t, Layout((2, 16)), 32)
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.CoordinateError: local_partition: thread index out of range: thr_idx = 32 is not in [0, 32) = [0, size(thr_layout)); thr_layout = (2,16):(1,2)
    """
    _require_tensor("local_partition", t)
    if not isinstance(thr_layout, Layout):
        raise TypeError(f"local_partition: thr_layout must be a Layout, got {_r(thr_layout)}")
    if not is_int(thr_idx):
        raise TypeError(f"local_partition: thr_idx must be an int, got {_r(thr_idx)}")
    thr_idx, nthr = int(thr_idx), it.product(thr_layout.shape)
    if thr_idx < 0 or (isinstance(nthr, int) and thr_idx >= nthr):
        raise layout_error(CoordinateError, "local_partition", "thread index out of range",
                           f"thr_idx = {thr_idx} is not in [0, {nthr}) = [0, size(thr_layout))",
                           thr_layout=thr_layout)
    if proj is not None:
        thr_layout = dice(_proj("local_partition", proj), thr_layout)
    return outer_partition(t, it.product_each(thr_layout.shape), thr_layout.get_flat_coord(thr_idx))
