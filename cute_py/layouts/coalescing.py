"""coalesce and filter: the same function on fewer, larger modes (CuTe's ``layout.hpp``).

>>> from cute_py import Layout
>>> print(coalesce(Layout((2, (1, 6)), (1, (6, 2)))), filter(Layout((4, 2, 3), (0, 1, 8))))
12:1 (2,3):(1,8)
"""

from __future__ import annotations

import builtins

from . import int_tuple as it
from .errors import _r, names_caller
from .f2 import F2, bit_images, disjoint
from .layout import ALGEBRA, Layout, flat_modes
from .modes import transform_layout
from .operands import by_owner

__all__ = ["coalesce", "coalesce_z", "filter", "filter_zeros"]

def _unwrap(s, d):
    if len(s) == 1:
        return Layout._make(s[0], d[0])
    return Layout._make(tuple(s), tuple(d))


def _bw_coalesce(fs, fd, last_s, last_d) -> Layout:
    """CuTe's back-to-front coalesce of the flat modes ``fs:fd``, the last mode taken as ``last_s:last_d``."""
    shape, stride = flat = bw_coalesce_flat(fs, fd, last_s, last_d)
    if len(shape) == 1:
        return Layout._make(shape[0], stride[0], flat)
    return Layout._make(shape, stride, flat)


def bw_coalesce_flat(fs, fd, last_s, last_d):
    """:func:`_bw_coalesce` on flat tuples: the coalesced ``(shapes, strides)``, ``((1,), (0,))`` for size 1."""
    out_s, out_d = [], []
    cs, cd = last_s, last_d                  # the mode being grown, front-most so far
    for i in range(len(fs) - 2, -1, -1):
        s = fs[i]
        if s == 1:
            continue
        d = fd[i]
        if cs == 1:
            cs, cd = s, d
        elif s * d == cd:                    # symbolic leaves: equal as sympy expressions (canonical forms)
            cs *= s
            cd = d
        else:
            out_s.append(cs)
            out_d.append(cd)
            cs, cd = s, d
    if not out_s:
        return _UNIT_FLAT if cs == 1 else ((cs,), (cd,))
    out_s.append(cs)
    out_d.append(cd)
    out_s.reverse()
    out_d.reverse()
    return tuple(out_s), tuple(out_d)


_UNIT_FLAT = ((1,), (0,))


def _coalesce(layout: Layout) -> Layout:
    flat = layout._flat or flat_modes(layout)
    c = coalesce_flat(flat)
    if c is flat and type(layout.shape) is not tuple:     # one mode with nothing to merge: the layout itself
        return layout
    shape, stride = c
    if len(shape) == 1:
        return Layout._make(shape[0], stride[0], c)
    return Layout._make(shape, stride, c)


def coalesced_flat(layout: Layout):
    """The flat modes ``(shapes, strides)`` of ``coalesce(layout)``."""
    return coalesce_flat(layout._flat or flat_modes(layout))


def coalesce_flat(flat):
    """:func:`coalesced_flat` of the flat modes ``flat = (shapes, strides)`` (``flat`` itself where one mode is
    left as it is)."""
    fs, fd = flat
    if not fs:
        return _UNIT_FLAT
    if F2.made and F2 in builtins.map(type, fd):
        fd = _f2_as_int(fs, fd)
        flat = fs, fd
    if len(fs) == 1:                         # one mode: itself, or 1:0
        return flat if fs[0] != 1 else _UNIT_FLAT
    return bw_coalesce_flat(fs, fd, fs[-1], fd[-1])


def _f2_as_int(fs, fd) -> tuple:
    """F2 strides as ints where no two bit images share a bit (XOR is + there); else unchanged. (Chains of
    F2 strides merge in _bw_coalesce as int ones do: ``clmul(2^k, v) == v << k``.)"""
    if not disjoint(bit_images(fs, fd)):
        return fd
    return tuple(d.value if type(d) is F2 else d for d in fd)


def _coalesce_x(layout: Layout, profile=0) -> Layout:
    """Coalesce that also keeps the function outside the domain (CuTe's ``detail::coalesce_x``)."""
    if isinstance(profile, tuple):
        return transform_layout(layout, profile, _coalesce_x)
    fs, fd = flat_modes(layout)
    if not fs:
        return Layout._make(1, 0, _UNIT_FLAT)
    return _bw_coalesce(fs, fd, 2 if fs[-1] == 1 else fs[-1], fd[-1])


def coalesce_x_flat(fs, fd):
    """:func:`_coalesce_x` of the flat modes ``fs:fd`` as flat ``(shapes, strides)``."""
    if not fs:
        return _UNIT_FLAT
    return bw_coalesce_flat(fs, fd, 2 if fs[-1] == 1 else fs[-1], fd[-1])


def coalesce(layout, profile=None):
    """Merge modes without changing the layout as a function on its domain.

    With a tuple ``profile``, coalesce each of the leading modes separately
    (trailing modes are kept).

    Postconditions: ``size(result) == size(layout)``, ``depth(result) <= 1``
    (without profile), and ``result(i) == layout(i)`` for ``0 <= i < size(layout)``.

    With symbolic leaves, modes merge only when ``s0*d0 == d1`` holds for
    every value of the symbols (CuTe merges only on static facts): when both
    sides are the same sympy expression in sympy's canonical form (``M*K`` is
    ``K*M``). ``(M,K):(1,M)`` becomes ``K*M:1``; ``(M,K):(K,1)`` stays.

    >>> print(coalesce(Layout(((2, 2), (2, 2)), ((1, 4), (8, 32)))))
    (2,4,2):(1,4,32)
    >>> print(coalesce(Layout((2, (1, 6)), (1, (6, 2))), (1, 1)))
    (2,6):(1,2)
    """
    if type(layout) is not Layout:
        return by_owner("coalesce", coalesce, layout, profile)
    if isinstance(profile, tuple):
        it.check_depth("coalesce", profile)
        return transform_layout(layout, profile, coalesce, op="coalesce")
    return _coalesce(layout)


def filter_zeros(layout, profile=None):
    """Replace the size of every stride-0 mode (or mode at a 0 of ``profile``) by 1.

    >>> print(filter_zeros(Layout((4, 2, 3), (0, 1, 8))))
    (1,2,3):(0,1,8)
    """
    if type(layout) is not Layout:
        return by_owner("filter_zeros", filter_zeros, layout, profile)
    ref = layout.stride if profile is None else profile
    return Layout._make(it.filter_zeros(ref, layout.shape), layout.stride)


def filter(layout, profile=None):  # noqa: A001 - CuTe's name
    """Remove stride-0 and size-1 modes, then coalesce; ``1:0`` if nothing is left.

    Postcondition: the image of ``result`` equals the image of ``layout`` and
    ``result`` has no stride-0 mode (unless it is ``1:0``).

    >>> print(filter(Layout((4, 2, 3), (0, 1, 8))))
    (2,3):(1,8)
    """
    if type(layout) is not Layout:
        return by_owner("filter", filter, layout, profile)
    if isinstance(profile, tuple):
        it.check_depth("filter", profile)
        return transform_layout(layout, profile, filter, op="filter")
    return _coalesce(filter_zeros(layout))


@names_caller
def coalesce_z(layout, profile=0):
    """Coalesce that keeps the function on the extended domain too (CuTe's ``detail::coalesce_x``): a last
    mode of extent 1 keeps its stride, so indices past ``size(layout)`` still map as the uncoalesced layout
    maps them (``coalesce`` would give ``1:0`` there). Composition uses it on A.

    Postcondition: ``result(i) == layout(i)`` for every ``i``, also ``i >= size(layout)`` (the last mode
    extended).

    >>> print(coalesce(Layout((2, 1), (1, 8))), coalesce_z(Layout((2, 1), (1, 8))))
    2:1 (2,2):(1,8)
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"coalesce_z: expected a Layout, got {_r(layout)}")
    return _coalesce_x(layout, profile)


ALGEBRA.filter = filter  # Layout.filter calls it
