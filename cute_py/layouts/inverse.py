"""The inverses of a layout: ``right_inverse`` and ``left_inverse`` (CuTe's ``layout.hpp``).

Semantics are CuTe C++'s, except where C++ returns a layout that is not an inverse (a stride whose sign
changes along the chain): every result satisfies the postcondition its docstring states, which the
test-suite checks by brute force. F2 and basis strides go to their own algebras.
"""

from __future__ import annotations

from . import basis_algebra, f2_algebra
from .algebra import composition
from .basis import ScaledBasis
from .coalescing import _UNIT_FLAT, _bw_coalesce, _unwrap, coalesced_flat
from .decide import canon, fail, lt
from .errors import DivisibilityError, InjectivityError, LayoutError, layout_error
from .f2 import F2
from .int_tuple import is_sym
from . import int_tuple as it
from .layout import Layout
from .operands import by_owner

__all__ = ["right_inverse", "left_inverse"]


def right_inverse(layout):
    """A layout ``R`` with ``layout(R(i)) == i`` for all ``i < size(R)``, as large as CuTe finds.

    It follows the strides 1, s0*d0, ... of the coalesced layout (stride-0
    modes are skipped, and the chain stops where the stride's sign changes,
    where C++ would return a wrong inverse); ``1:0`` if no stride is ±1.
    Symbolic strides are skipped too, as C++ skips dynamic ones.
    ``right_inverse(_)`` is ``_``.

    >>> print(right_inverse(Layout((8, 4), (4, 1))))
    (4,8):(8,1)
    >>> print(right_inverse(Layout((4, 2, 3), (2, 1, 0))))
    (2,4):(4,1)
    """
    if type(layout) is not Layout:
        return by_owner("right_inverse", right_inverse, layout)
    s, d = layout.shape, layout.stride
    if type(s) is int and type(d) is int and s > 1:     # the one fast path: one mode is itself where |d| == 1
        return layout if d == 1 or d == -1 else Layout._make(1, 0, _UNIT_FLAT)
    return _right_inverse(layout)


def _right_inverse(layout: Layout) -> Layout:
    fs, fd = coalesced_flat(layout)
    astride = [abs(d) if type(d) is int else None for d in fd]  # C++ skips dynamic strides
    if None in astride:
        kind = _stride_kind(fd)
        if kind is F2:
            return f2_algebra.right_inverse(layout)
        if kind is ScaledBasis:                        # from the colex number of a codomain coordinate
            codomain = basis_algebra.codomain_of("right_inverse", layout)
            return _right_inverse(basis_algebra.flatten_codomain("right_inverse", layout, codomain))
    seq = []
    nxt = 1
    while type(nxt) is int and nxt in astride:
        k = astride.index(nxt)
        if seq and (fd[k] > 0) != (fd[seq[0]] > 0):
            break  # a sign change would break L(R(i)) == i (C++ keeps going and is wrong there)
        seq.append(k)
        nxt2 = fs[k] * astride[k]
        if nxt2 == nxt:
            break
        nxt = nxt2
    if not seq:
        return Layout._make(1, 0)
    pre, p = [], 1                      # the compact column-major strides of fs (coalesced: no extent 1)
    for s in fs:
        pre.append(p)
        p *= s
    return _unwrap([fs[k] for k in seq], [pre[k] if fd[k] > 0 else -pre[k] if fd[k] else 0 for k in seq])


def left_inverse(layout):
    """A layout ``R`` with ``R(layout(i)) == i`` for all ``i < size(layout)``.

    Stride-0 modes are ignored (then ``layout(R(layout(i))) == layout(i)``).
    Preconditions (checked): non-negative integer strides; sorted by stride,
    each non-zero stride is a multiple of the previous one and lies beyond its
    span (CuTe's construction; a non-injective layout fails this).
    Strides must be static (not symbolic), as in C++; extents may be symbolic.
    ``left_inverse(_)`` is ``_``.

    >>> print(left_inverse(Layout((4, 8), (1, 5))))
    (5,8):(1,4)
    >>> print(left_inverse(Layout(4, 2)))
    (2,4):(0,1)
    """
    if type(layout) is not Layout:
        return by_owner("left_inverse", left_inverse, layout)
    s, d = layout.shape, layout.stride
    if type(s) is int and type(d) is int and s > 1 and d > 0:   # the one fast path: s:d inverts to (d,s):(0,1)
        return layout if d == 1 else Layout._make((d, s), (0, 1), ((d, s), (0, 1)))
    return _left_inverse(layout)


def _left_inverse(layout: Layout) -> Layout:
    fs, fd = coalesced_flat(layout)
    for d in fd:
        if type(d) is not int:
            kind = _stride_kind(fd)
            if kind is F2:
                return f2_algebra.left_inverse(layout)
            if kind is ScaledBasis:                    # from a codomain coordinate, mode by mode
                codomain = basis_algebra.codomain_of("left_inverse", layout)
                basis_algebra.flatten_codomain("left_inverse", layout, codomain)   # checks the strides
                return basis_algebra.left_inverse_by_mode(layout, codomain, _left_inverse, composition)
            if not is_sym(d):
                raise layout_error(LayoutError, "left_inverse", "strides must be non-negative integers",
                                   f"found stride {d}", layout=layout)
            raise fail("left_inverse", "static strides", f"CuTe's left_inverse requires static strides; found {d}",
                       layout=layout)
        if d < 0:
            raise layout_error(LayoutError, "left_inverse", "strides must be non-negative integers",
                               f"found stride {d}", layout=layout)
    pre = it.prefix_product(fs)
    order = sorted((i for i in range(len(fs)) if fd[i] != 0), key=lambda i: fd[i])
    if not order:                        # every stride 0: C++ gives size(layout):0 (4:0 -> 4:0, (4,12):(0,0) -> 48:0)
        return Layout._make(it.product(fs), 0)
    res_s, res_d = [], []
    prev = None
    for i in order:
        if prev is None:
            res_s.append(fd[i])
            res_d.append(0)
        else:
            reach = fd[prev] * fs[prev]
            inside = fd[i] < reach if type(reach) is int else lt(fd[i], canon(reach))
            if inside is None:
                raise fail("left_inverse", f"{fd[i]} >= {reach}",
                           f"stride {fd[i]} must lie beyond the span of mode {fs[prev]}:{fd[prev]}", layout=layout)
            if inside:
                if all(type(s) is int for s in fs) and not _injective_nonzero(fs, fd):
                    raise layout_error(InjectivityError, "left_inverse", "layout is not injective",
                                       f"stride {fd[i]} falls inside the span of mode {fs[prev]}:{fd[prev]}",
                                       layout=layout)
                raise layout_error(DivisibilityError, "left_inverse", "left inverse divisibility condition",
                                   f"stride {fd[i]} falls inside the span of mode {fs[prev]}:{fd[prev]}: "
                                   f"the modes interleave, so no layout inverts it", layout=layout)
            if fd[i] % fd[prev] != 0:
                raise layout_error(DivisibilityError, "left_inverse", "left inverse divisibility condition",
                                   f"stride {fd[i]} is not a multiple of stride {fd[prev]}", layout=layout)
            res_s.append(fd[i] // fd[prev])
            res_d.append(pre[prev])
        prev = i
    res_s.append(fs[prev])
    res_d.append(pre[prev])
    return _bw_coalesce(res_s, res_d, res_s[-1], res_d[-1])


def _stride_kind(fd):
    """The algebra of the first F2 or basis stride among ``fd`` (``F2``, ``ScaledBasis``), or None."""
    for d in fd:
        if type(d) is F2 or type(d) is ScaledBasis:
            return type(d)
    return None


def _injective_nonzero(fs, fd) -> bool:
    """Brute force (error path only): are the offsets of the non-zero-stride modes distinct?"""
    offs = [0]
    for s, d in zip(fs, fd):
        if d != 0:
            offs = [o + k * d for k in range(s) for o in offs]
    return len(set(offs)) == len(offs)
