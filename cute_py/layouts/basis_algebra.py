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


def codomain_of(op: str, layout: Layout, cotarget=None) -> tuple:
    """The codomain extents: ``cotarget`` (a shape) or ``coshape(layout)``, as a flat tuple; the strides are
    checked to be ``v@i`` (one codomain mode, ``v >= 0``) or 0 first."""
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
    """``flat`` with each int stride ``d`` written as the basis element of codomain coordinate ``d``."""
    def back(d):
        if isinstance(d, tuple):
            return tuple(back(x) for x in d)
        if d == 0:
            return 0
        crd = it.idx2crd(d, codomain)
        crd = crd if isinstance(crd, tuple) else (crd,)
        nz = [(i, v) for i, v in enumerate(crd) if v]
        if len(nz) != 1:
            raise layout_error(LayoutError, op, "a stride of the result spans two codomain modes",
                               f"offset {d} is coordinate {crd} of {codomain}", layout=layout)
        return ScaledBasis(nz[0][1], (nz[0][0],))

    return Layout._make(flat.shape, back(flat.stride))
