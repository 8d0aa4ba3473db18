"""Which elements of a view lie outside the data's shape (a tile that reaches past a partial matrix).

A view derived from a data tensor carries its coordinate tensor: the identity over the data's shape,
transformed as the view was (CuTe's predication tensor, ``make_identity_tensor`` partitioned alike). An element
whose data coordinate fails ``elem_less(coordinate, shape)`` is outside the data, and reading it raises
:class:`~cute_py.layouts.errors.CoordinateError` instead of returning the element that happens to sit at its
offset.
"""

from __future__ import annotations

from .basis import ScaledBasis
from .layout import Layout
from .offsets import _offsets, np_module

__all__ = ["first_outside"]


def first_outside(coords, extent: tuple):
    """``(i, coordinate)`` for the first element (colex index ``i``) of the coordinate tensor ``coords`` whose
    coordinate is not inside ``extent`` (flat, one extent per coordinate), or None."""
    off = coords.offset if isinstance(coords.offset, tuple) else (coords.offset,)
    bad = None
    for k, e in enumerate(extent):
        try:
            mode = Layout(coords.layout.shape, _basis_part(coords.layout.stride, k))
        except TypeError:                               # not single basis terms: element by element
            for i, v in enumerate(coords.values()):
                v = v if isinstance(v, tuple) else (v,)
                if not all(0 <= x < n for x, n in zip(v, extent)):
                    return i, v
            return None
        x = _offsets(mode) + (off[k] if k < len(off) else 0)
        b = (x < 0) | (x >= e)
        bad = b if bad is None else bad | b
    if bad is None or not bad.any():
        return None
    i = int(np_module().argmax(bad))
    c = coords(i)
    return i, c if isinstance(c, tuple) else (c,)


def _basis_part(stride, k):
    """The int strides of coordinate ``k`` in a coordinate tensor's ``stride`` (``v@k`` gives ``v``, another
    mode or 0 gives 0); TypeError for a stride of several terms."""
    if isinstance(stride, tuple):
        return tuple(_basis_part(d, k) for d in stride)
    if type(stride) is int and stride == 0:
        return 0
    if type(stride) is ScaledBasis and len(stride.mode) == 1 and type(stride.value) is int:
        return stride.value if stride.mode == (k,) else 0
    raise TypeError(f"not a single basis term: {stride}")
