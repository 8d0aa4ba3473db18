"""A layout evaluated over its whole domain at once: numpy arrays of offsets.

:func:`layout_offsets` is the vectorized ``[L(i) for i in range(size(L))]``
the emitter, the bank analysis and host tensors use for Layouts and swizzled
(composed) layouts with integer strides, and layouts with F2 strides (their
contributions combine with XOR).
"""

from __future__ import annotations

from . import int_tuple as it
from .errors import SymbolicError, layout_error
from .f2 import F2, f2_span_max
from .f2_algebra import is_f2_layout
from .int_tuple import is_int
from .layout import Layout, flat_modes
from .swizzle import Swizzle

__all__ = ["layout_offsets"]


def np_module():
    """numpy, imported on first use (``import cute_py`` does not load it)."""
    import numpy

    return numpy


def _int_strides(layout) -> bool:
    if isinstance(layout, Layout):
        return all(type(d) is int or type(d) is F2 or is_int(d) for d in flat_modes(layout)[1])
    if getattr(layout, "_is_composed_layout", False):
        return (is_int(layout.offset) and _int_strides(layout.inner)
                and (isinstance(layout.outer, Swizzle) or _int_strides(layout.outer)))
    return False


def _eval_1d(f, idx):
    """``f(i)`` for a numpy array of 1-D indices (a Layout, a Swizzle or a ComposedLayout of those)."""
    np = np_module()
    if isinstance(f, Layout):
        fs, fd = flat_modes(f)
        acc = np.zeros_like(idx)
        rem = idx
        for k, (s, d) in enumerate(zip(fs, fd)):
            if k == len(fs) - 1:
                c = rem
            else:
                c, rem = rem % s, rem // s
            if type(d) is F2:                  # XOR of d << j over the set bits j of c (a power-of-two extent)
                for j in range(s.bit_length() - 1):
                    acc = acc ^ (((c >> j) & 1) * (d.value << j))
            else:
                acc = acc + c * int(d)
        return acc
    if isinstance(f, Swizzle):
        return f(idx)
    return _eval_1d(f.outer, _eval_1d(f.inner, idx) + int(f.offset))


def _offsets(layout):
    """``[layout(i) for i in range(size(layout))]`` as an int64 array (integer strides)."""
    np = np_module()
    return _eval_1d(layout, np.arange(it.product(layout.shape), dtype=np.int64))


def layout_offsets(layout):
    """``layout(i)`` for every ``i`` in ``range(size(layout))``, as one int64 numpy array (a vectorized evaluation).

    ``layout`` is a Layout, or a ComposedLayout of Layouts and Swizzles, with integer shape and strides; the
    1-D index ``i`` is colexicographic, so for a rank-2 layout of shape ``(m, n)`` element ``i + m * j`` is
    ``layout(i, j)``. Postcondition: ``layout_offsets(L)[i] == L(i)`` for every ``i``. Raises
    :class:`SymbolicError` for symbolic extents or strides.

    >>> layout_offsets(Layout((2, 3), (3, 1))).tolist()
    [0, 3, 1, 4, 2, 5]
    >>> from cute_py import composition
    >>> layout_offsets(composition(Swizzle(1, 0, 1), Layout(4))).tolist()
    [0, 1, 3, 2]
    >>> layout_offsets(Layout((2, 2), (F2(1), F2(3)))).tolist()     # F2 strides: contributions XOR
    [0, 1, 3, 2]
    """
    shape = layout.shape if isinstance(layout, Layout) else getattr(layout, "shape", None)
    if not (is_int(it.product(shape)) and _int_strides(layout)):
        raise layout_error(SymbolicError, "layout_offsets", "needs integer extents and strides", layout=layout)
    return _offsets(layout)


def _offset_range(layout):
    """(smallest, largest) offset of ``layout`` over its domain (integer or F2 strides)."""
    if is_f2_layout(layout):
        return 0, f2_span_max(*flat_modes(layout))          # XOR of non-negative images: 0 is the least
    if isinstance(layout, Layout):
        lo = hi = 0
        for s, d in zip(*flat_modes(layout)):
            if d < 0:
                lo += (s - 1) * d
            else:
                hi += (s - 1) * d
        return lo, hi
    offs = _offsets(layout)
    return int(offs.min()), int(offs.max())
