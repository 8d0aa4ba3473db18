"""Basis strides in complement and the inverses: the codomain, flattened.

A layout whose strides are basis elements ``v@i`` (or 0) maps into the
coordinates of its codomain ``C = coshape(L)``. Numbering those coordinates
colexicographically turns it into an int layout (``v@i`` becomes
``v * prod(C[:i])``), on which complement and the inverses are CuTe's own; the
results come back in the codomain's terms:

* ``left_inverse(L)`` takes a codomain coordinate to the index: for an
  identity layout, the compact layout of its shape;
* ``right_inverse(L)`` takes the colexicographic number of a codomain
  coordinate to an index (its strides are indices, not coordinates);
* ``complement(L, C)`` has basis strides again, one codomain mode each.

>>> from cute_py import Layout, E, complement, left_inverse, make_identity_layout
>>> print(left_inverse(make_identity_layout((4, 5))))
(4,5):(1,4)
>>> print(complement(Layout(4, E(1)), (3, 8)))
(3,2):(1@0,4@1)

A multi-term stride (``(1,1)``, ``1@0 + 1@1``) moves along several codomain
modes at once: the codomain is then no set of independent axes, and
complement, the inverses, and composition with such a layout on the right
refuse it (``refuse_multi_term``).
"""

from __future__ import annotations

import builtins

from . import int_tuple as it
from .basis import ScaledBasis
from .errors import LayoutError, layout_error
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


def codomain_of(op: str, layout: Layout, cotarget=None) -> tuple:
    """The codomain extents: ``cotarget`` (a shape) or ``coshape(layout)``, as a flat tuple; the strides are
    checked to be ``v@i`` (one codomain mode, ``v >= 0``) or 0 first."""
    refuse_multi_term(op, layout)
    for d in flat_modes(layout)[1]:
        if not (type(d) is int and d == 0) and not (
                isinstance(d, ScaledBasis) and len(d.mode) == 1 and type(d.value) is int and d.value >= 0):
            raise layout_error(LayoutError, op, "basis strides must be v@i with v >= 0 and i a codomain mode "
                               "(and the other strides 0)", f"found {d}", layout=layout)
    c = coshape(layout) if cotarget is None else cotarget
    c = tuple(it.flatten_to_tuple(c)) if isinstance(c, tuple) else (c,)
    if not all(type(x) is int and x >= 1 for x in c):
        raise layout_error(LayoutError, op, "the codomain of a basis-strided layout must have static extents",
                           f"got {c}", layout=layout)
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


def unflatten_strides(op: str, flat: Layout, codomain: tuple, layout: Layout) -> Layout:
    """``flat`` with each int stride ``d`` written as basis elements of the codomain: a mode whose steps
    leave its codomain mode is split where they do (``4:2`` over ``(4,2)`` is ``(2,2):(2@0,1@1)``)."""
    def back(s, d):
        if isinstance(s, tuple):
            parts = [back(x, y) for x, y in builtins.zip(s, d)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        if d == 0 or s == 1:
            return s, 0
        shapes, strides = [], []
        while True:
            crd = it.idx2crd(d, codomain)
            crd = crd if isinstance(crd, tuple) else (crd,)
            nz = [(i, v) for i, v in enumerate(crd) if v]
            room = codomain[nz[0][0]] // nz[0][1] if len(nz) == 1 else 0
            if len(nz) != 1 or codomain[nz[0][0]] % nz[0][1] or (s > room and s % room):
                raise layout_error(LayoutError, op, "a mode of the result does not stay in codomain modes",
                                   f"steps of offset {d} over codomain {codomain}", layout=layout)
            i, v = nz[0]
            shapes.append(min(s, room))
            strides.append(ScaledBasis(v, (i,)))
            if s <= room:
                break
            s, d = s // room, d * room
        return (shapes[0], strides[0]) if len(shapes) == 1 else (tuple(shapes), tuple(strides))

    return Layout._make(*back(flat.shape, flat.stride))


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
