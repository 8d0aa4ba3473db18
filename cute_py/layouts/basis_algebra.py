"""Basis strides in complement and the inverses.

A layout whose strides are basis elements ``v@i`` (or 0) maps into the
coordinates of its codomain ``C = coshape(L)``.

* ``complement(L, C)`` is taken per codomain mode: the leaves ``s:v@i`` of
  mode ``i`` form an int layout whose complement in ``C[i]`` is the result's
  mode ``i`` (its strides ``@i`` again), so ``L`` and the result together
  reach every point of ``C``;
* for the inverses, numbering the codomain's coordinates colexicographically
  turns ``L`` into an int layout (``v@i`` becomes ``v * prod(C[:i])``), whose
  inverses are CuTe's own: ``left_inverse(L)`` takes a codomain coordinate to
  the index (for an identity layout, the compact layout of its shape);
  ``right_inverse(L)`` takes the colexicographic number of a codomain
  coordinate to an index (its strides are indices, not coordinates).

>>> from cute_py import Layout, E, complement, left_inverse, make_identity_layout
>>> print(left_inverse(make_identity_layout((4, 5))))
(4,5):(1,4)
>>> print(complement(Layout(4, E(1)), (3, 8)))
(3,2):(1@0,4@1)
>>> print(complement(Layout((2, 2), (3 * E(0), E(1))), (8, 8)))
((3,2),4):((1@0,6@0),2@1)

A multi-term stride (``(1,1)``, ``1@0 + 1@1``) moves along several codomain
modes at once: the codomain is then no set of independent axes, and
complement, the inverses, and composition with such a layout on the right
refuse it (``refuse_multi_term``).
"""

from __future__ import annotations

import builtins

from . import int_tuple as it
from .basis import ScaledBasis
from .errors import LayoutError, in_operation, layout_error
from .layout import Layout, coshape, flat_modes

__all__ = ["is_basis_layout"]


def is_basis_layout(x) -> bool:
    """True for a Layout with at least one basis stride."""
    return type(x) is Layout and ScaledBasis in builtins.map(type, flat_modes(x)[1])


def refuse_multi_term(op: str, layout: Layout, **operands) -> None:
    """Raise a LayoutError naming ``op`` and the first multi-term stride of ``layout`` (a ScaledBasis with no
    mode, e.g. ``(1,1)``), if it has one; ``operands`` are named in the message (default: the layout)."""
    for d in flat_modes(layout)[1]:
        if type(d) is ScaledBasis and not d.mode:
            raise layout_error(LayoutError, op, "strides must be single basis terms v@i",
                               f"the multi-term stride {d} moves along several codomain modes at once, so the "
                               f"codomain is no set of independent axes", **(operands or {"layout": layout}))


def _check_strides(op: str, layout: Layout) -> None:
    """The strides must be ``v@i`` (one codomain mode, ``v >= 0``) or 0."""
    refuse_multi_term(op, layout)
    for d in flat_modes(layout)[1]:
        if not (type(d) is int and d == 0) and not (
                isinstance(d, ScaledBasis) and len(d.mode) == 1 and type(d.value) is int and d.value >= 0):
            raise layout_error(LayoutError, op, "basis strides must be v@i with v >= 0 and i a codomain mode "
                               "(and the other strides 0)", f"found {d}", layout=layout)


def _static_extents(op: str, layout: Layout, c: tuple) -> None:
    if not all(type(x) is int and x >= 1 for x in it.flatten_to_tuple(c)):
        raise layout_error(LayoutError, op, "the codomain of a basis-strided layout must have static extents",
                           f"got {c}", layout=layout)


def codomain_of(op: str, layout: Layout, cotarget=None) -> tuple:
    """The codomain extents: ``cotarget`` (a shape) or ``coshape(layout)``, as a flat tuple; the strides are
    checked to be ``v@i`` (one codomain mode, ``v >= 0``) or 0 first."""
    _check_strides(op, layout)
    c = coshape(layout) if cotarget is None else cotarget
    c = tuple(it.flatten_to_tuple(c)) if isinstance(c, tuple) else (c,)
    _static_extents(op, layout, c)
    return c


def flatten_codomain(op: str, layout: Layout, codomain: tuple) -> Layout:
    """``layout`` with each basis stride ``v@i`` replaced by ``v * prod(codomain[:i])``."""
    offsets = it.prefix_product(codomain)

    def flat(d):
        if isinstance(d, tuple):
            return tuple(flat(x) for x in d)
        if type(d) is int and d == 0:
            return 0
        if d.mode[0] < len(codomain):                  # v@i, checked by codomain_of
            return d.value * offsets[d.mode[0]]
        raise layout_error(LayoutError, op, "a basis stride selects a mode the codomain does not have",
                           f"found {d} for codomain {codomain}", layout=layout)

    return Layout._make(layout.shape, flat(layout.stride))


def complement_by_mode(layout: Layout, cotarget, complement) -> Layout:
    """``complement(layout, cotarget)`` for basis strides, one codomain mode at a time.

    The codomain is ``cotarget`` (a shape: mode ``i`` is an extent, or a shape as an int complement's
    cotarget is) or ``coshape(layout)``. The leaves ``s:v@i`` of codomain mode ``i`` form the int layout
    ``L_i``; ``complement(L_i, cotarget_i)`` (``complement``: the int algebra's, passed in, as this module
    lies below it), its strides made ``@i``, is mode ``i`` of the result. Modes of size 1 are left out
    (``1:0`` when every one is). So ``layout`` and the result together reach every point of the codomain,
    each once (where each ``L_i`` is injective), which is CuTe's postcondition read per codomain mode.
    """
    _check_strides("complement", layout)
    c = coshape(layout) if cotarget is None else cotarget
    c = tuple(c) if isinstance(c, tuple) else (c,)
    _static_extents("complement", layout, c)
    fs, fd = flat_modes(layout)
    for d in fd:
        if type(d) is ScaledBasis and d.mode[0] >= len(c):
            raise layout_error(LayoutError, "complement", "a basis stride selects a mode the codomain does not "
                               "have", f"found {d} for codomain {c}", layout=layout, cotarget=cotarget)
    shapes, strides = [], []
    for i, n in enumerate(c):
        leaves = [(s, d.value) for s, d in builtins.zip(fs, fd) if type(d) is ScaledBasis and d.mode == (i,)]
        sub = Layout._make(tuple(s for s, _ in leaves), tuple(v for _, v in leaves)) if leaves else Layout._make(1, 0)
        try:
            r = complement(sub, n)
        except LayoutError as e:
            raise in_operation(e, "complement", layout=layout, cotarget=cotarget, codomain_mode=i) from None
        if it.product(r.shape) != 1:
            shapes.append(r.shape)
            strides.append(_at(r.stride, i))
    if not shapes:
        return Layout._make(1, 0)
    if len(shapes) == 1:
        return Layout._make(shapes[0], strides[0])
    return Layout._make(tuple(shapes), tuple(strides))


def _at(stride, i: int):
    """Each int leaf ``d`` of ``stride`` as ``d@i`` (0 stays 0)."""
    if isinstance(stride, tuple):
        return tuple(_at(d, i) for d in stride)
    return ScaledBasis(stride, (i,)) if stride else 0


def left_inverse_by_mode(layout: Layout, codomain: tuple, left_inverse, compose) -> Layout:
    """The left inverse over codomain coordinates, one codomain mode at a time: the leaves ``s:v@i`` of
    codomain mode ``i`` form the int layout ``L_i``; its left inverse, mapped to the leaves' places in the
    layout's index (their compact strides), takes coordinate ``c_i`` (a 1-D index into mode ``i`` of the
    result, whose size is at least the codomain's extent) to its part of the index. ``left_inverse`` and
    ``compose`` are the int algebra's (passed in: this module lies below it)."""
    fs, fd = flat_modes(layout)
    where = it.compact_col_major(fs)
    modes = []
    for i, n in enumerate(codomain):
        leaves = [(s, d.value, g) for s, d, g in builtins.zip(fs, fd, where)
                  if isinstance(d, ScaledBasis) and d.mode == (i,) and s > 1]
        if not leaves:
            modes.append(Layout._make(n, 0))
            continue
        sub = Layout._make(tuple(s for s, _v, _g in leaves), tuple(v for _s, v, _g in leaves))
        place = Layout._make(tuple(s for s, _v, _g in leaves), tuple(g for _s, _v, g in leaves))
        modes.append(compose(place, left_inverse(sub)))   # its size covers the n values of mode i
    return Layout._make(tuple(m.shape for m in modes), tuple(m.stride for m in modes))
