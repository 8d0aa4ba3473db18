"""The bridge to Triton's LinearLayout: the same map, written bit by bit.

Triton (and Gluon) describe every register and shared-memory layout as a
*LinearLayout*: for each input dimension (``register``, ``lane``, ``warp``,
``offset``, ...) the image of each of its bits, a vector with one coordinate
per output dimension, and the value at an input is the XOR of the images of
its set bits. A CuTe layout whose extents are powers of two and whose strides
are F2 values or ints with disjoint bit images (XOR is ``+`` there) is such a
map: its top-level modes are the input dimensions, and its offset, split
colexicographically over ``out_shape``, gives the output coordinates.

>>> from cute_py import Layout, Swizzle, f2_layout
>>> tv = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))   # (thread, value) -> offset in a 8x16 tile
>>> ll = to_linear_layout(tv, in_dims=("lane", "register"), out_shape=(8, 16))
>>> print(ll)
 - lane=1 -> (0, 4)
   lane=2 -> (0, 8)
   lane=4 -> (1, 0)
   lane=8 -> (2, 0)
   lane=16 -> (4, 0)
 - register=1 -> (0, 2)
   register=2 -> (0, 1)
where out dims are: [dim0 (size 8), dim1 (size 16)]
>>> from_linear_layout(ll, out_shape=(8, 16)) == tv
True
>>> print(to_linear_layout(f2_layout(Swizzle(1, 0, 1)), in_dims=("offset",)))
 - offset=1 -> (1)
   offset=2 -> (3)
where out dims are: [offset (size 4)]
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from . import int_tuple as it
from .basis import ScaledBasis
from .errors import LayoutError, RankError, layout_error, names_caller, _r
from .f2 import F2, bit_images, disjoint, log2_exact
from .f2_algebra import f2_form, from_bits
from .layout import Layout, coshape, flat_modes

__all__ = ["LinearLayout", "to_linear_layout", "from_linear_layout"]


@dataclass(frozen=True)
class LinearLayout:
    """Triton's LinearLayout as data.

    ``bases``: ``((in_dim, (image of bit 0, image of bit 1, ...)), ...)``, each image a tuple with one
    coordinate per output dimension; ``out_dims``: ``((name, size), ...)``, sizes powers of two. Calling it
    with one int per input dimension (by keyword) gives the output coordinates.

    >>> ll = LinearLayout((("lane", ((1,), (2,))),), (("offset", 4),))
    >>> ll(lane=3), ll.as_dict()
    ((3,), {'bases': {'lane': [[1], [2]]}, 'out_dims': {'offset': 4}})
    """

    bases: tuple
    out_dims: tuple

    def __call__(self, **inputs) -> tuple:
        unknown = set(inputs) - {name for name, _b in self.bases}
        if unknown:
            raise TypeError(f"LinearLayout: no input dimension {sorted(unknown)[0]!r}")
        out = [0] * len(self.out_dims)
        for name, images in self.bases:
            x = inputs.get(name, 0)
            if not (isinstance(x, int) and 0 <= x < 1 << len(images)):
                raise ValueError(f"LinearLayout: {name}={x!r} is outside [0, {1 << len(images)})")
            for j, image in enumerate(images):
                if x >> j & 1:
                    out = [o ^ v for o, v in builtins.zip(out, image)]
        return tuple(out)

    def as_dict(self) -> dict:
        """``{"bases": {in_dim: [[...], ...]}, "out_dims": {name: size}}``: the lists Triton's constructors
        take."""
        return {"bases": {name: [list(v) for v in images] for name, images in self.bases},
                "out_dims": dict(self.out_dims)}

    def __str__(self):
        lines = []
        for name, images in self.bases:
            for j, image in enumerate(images):
                lead = " - " if j == 0 else "   "
                lines.append(f"{lead}{name}={1 << j} -> ({', '.join(str(v) for v in image)})")
        dims = ", ".join(f"{n} (size {s})" for n, s in self.out_dims)
        lines.append(f"where out dims are: [{dims}]")
        return "\n".join(lines)


def _pow2(op, what, s, **operands) -> int:
    k = log2_exact(s)
    if k is None:
        kind = "" if type(s) is int else f" of type {type(s).__name__}"
        raise layout_error(LayoutError, op, f"{what} must be a power of two (an int)", f"found {s!r}{kind}",
                           **operands)
    return k


@names_caller
def to_linear_layout(layout, in_dims=None, out_shape=None) -> LinearLayout:
    """The LinearLayout of ``layout``: each offset is split over ``out_shape`` (powers of two,
    colexicographic as CuTe's coordinates, so CuTe mode ``i`` of a tile is Triton's ``dim<i>``; default: one
    dimension ``offset`` of the cosize rounded up to a power of two). A layout with basis strides maps to its
    codomain modes (``dim0``, ``dim1``, ...) instead.

    ``in_dims`` names the input dimensions, by one rule: either one distinct name per top-level mode (default
    ``in0``, ``in1``, ...), or a single name, which takes the whole 1-D index (the layout as a function of one
    int, as Triton's shared layouts take ``offset``; a swizzle or an inverse is such a function whatever its
    rank). Any other count, or a repeated name, is refused: to join some modes into one input dimension,
    group them into one mode first.

    Preconditions (checked): extents are powers of two; strides are F2, basis, or non-negative ints whose
    bit images are disjoint (where ``+`` carries, the map is not linear over GF(2)). A Swizzle or a swizzle
    composed with a layout (offset 0) is taken as :func:`~cute_py.layouts.f2_algebra.f2_layout` of it.

    Postcondition: ``ll(**{in_dims[i]: c_i}) == out coordinates of layout(c_0, c_1, ...)`` for every
    coordinate (checked by brute force in the tests, and against Triton's own conversions where it is
    installed).

    >>> ll = to_linear_layout(Layout((4, 8), (8, 1)), in_dims=("row", "col"), out_shape=(8, 4))
    >>> ll.as_dict()["bases"], ll(row=1, col=3)
    ({'row': [[0, 1], [0, 2]], 'col': [[1, 0], [2, 0], [4, 0]]}, (3, 1))
    >>> to_linear_layout(Layout((4, 8), (8, 1)), in_dims=("offset",), out_shape=(8, 4))(offset=5)
    (1, 1)
    """
    if not isinstance(layout, Layout):
        layout = f2_form("to_linear_layout", layout)
    if in_dims is not None and not (isinstance(in_dims, (tuple, list)) and all(isinstance(n, str) for n in in_dims)):
        raise TypeError(f"to_linear_layout: in_dims must be a tuple of names, got {_r(in_dims)}")
    if out_shape is not None and not all(type(s) is int for s in it.flatten_to_tuple(
            tuple(out_shape) if isinstance(out_shape, (tuple, list)) else out_shape)):
        raise TypeError(f"to_linear_layout: out_shape must be an int or a tuple of ints, got {_r(out_shape)}")
    modes = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    strides = layout.stride if isinstance(layout.stride, tuple) else (layout.stride,)
    if in_dims is not None and len(in_dims) == 1:
        modes, strides = (layout.shape,), (layout.stride,)      # one input dimension: the whole 1-D index
    names = tuple(in_dims) if in_dims is not None else tuple(f"in{i}" for i in range(len(modes)))
    if len(names) != len(modes):
        raise layout_error(RankError, "to_linear_layout", "in_dims must name each top-level mode of the layout, "
                           "or give a single name for the whole 1-D index",
                           f"{len(names)} names {names} for {len(modes)} modes", layout=layout)
    if len(set(names)) != len(names):
        raise layout_error(LayoutError, "to_linear_layout", "in_dims must be distinct names (one input "
                           "dimension per top-level mode)", f"got {names}; to make several modes one input "
                           "dimension, group them into one mode first, or give a single name for the whole "
                           "1-D index", layout=layout)
    fd_all = flat_modes(layout)[1]
    if ScaledBasis in builtins.map(type, fd_all):
        return _basis_linear_layout(layout, modes, strides, names)
    for s in flat_modes(layout)[0]:
        _pow2("to_linear_layout", "every extent", s, layout=layout)
    images = bit_images(*flat_modes(layout))
    if images is None:
        raise layout_error(LayoutError, "to_linear_layout", "strides must be F2 or non-negative ints",
                           layout=layout)
    if F2 not in builtins.map(type, fd_all) and not disjoint(images):
        raise layout_error(LayoutError, "to_linear_layout", "the layout is not linear over GF(2)",
                           "two bit images share a bit, so + carries where XOR does not", layout=layout)
    if out_shape is None:
        top = max(images, default=0).bit_length()
        out_shape, out_names = (1 << top,), ("offset",)
    else:
        out_shape = tuple(out_shape) if isinstance(out_shape, (tuple, list)) else (out_shape,)
        out_names = tuple(f"dim{i}" for i in range(len(out_shape)))
    widths = [_pow2("to_linear_layout", "every extent of out_shape", s, out_shape=out_shape) for s in out_shape]
    bases, k = [], 0
    for name, s in builtins.zip(names, modes):
        n = log2_exact(it.product(s))
        bases.append((name, tuple(_split(v, widths, layout) for v in images[k:k + n])))
        k += n
    return LinearLayout(tuple(bases), tuple(builtins.zip(out_names, out_shape)))


def _split(v: int, widths, layout) -> tuple:
    """Offset ``v`` as colexicographic coordinates of extents ``2^widths``."""
    out = []
    for w in widths:
        out.append(v & ((1 << w) - 1))
        v >>= w
    if v:
        raise layout_error(LayoutError, "to_linear_layout", "an offset lies outside out_shape",
                           f"{v << sum(widths)} and up", layout=layout)
    return tuple(out)


def _basis_linear_layout(layout, modes, strides, names) -> LinearLayout:
    """A layout with basis strides ``v@i``: the output dimensions are its codomain modes."""
    cs = coshape(layout)
    sizes = tuple(1 << max(int(c) - 1, 0).bit_length() for c in (cs if isinstance(cs, tuple) else (cs,)))
    bases = []
    for name, s, d in builtins.zip(names, modes, strides):
        images = []
        for ls, ld in builtins.zip(it.flatten_to_tuple(s), it.flatten_to_tuple(d)):
            k = _pow2("to_linear_layout", "every extent", ls, layout=layout)
            vec = [0] * len(sizes)
            if isinstance(ld, ScaledBasis) and len(ld.mode) == 1 and type(ld.value) is int and ld.value >= 0:
                vec[ld.mode[0]] = ld.value
            elif ld != 0:
                raise layout_error(LayoutError, "to_linear_layout", "basis strides must be v@i with v >= 0 "
                                   "(and the other strides 0)", f"found {ld}", layout=layout)
            images.extend(tuple(x << j for x in vec) for j in range(k))
        bases.append((name, tuple(images)))
    return LinearLayout(tuple(bases), tuple((f"dim{i}", sz) for i, sz in enumerate(sizes)))


@names_caller
def from_linear_layout(ll, out_shape=None) -> Layout:
    """The CuTe layout of a LinearLayout (or its ``as_dict()`` form): one top-level mode per input dimension,
    whose bit images are the output coordinates folded colexicographically over ``out_shape`` (default: the
    LinearLayout's out dims). Int strides where the images are disjoint bits, F2 strides otherwise; each mode
    is grouped into shift chains.

    Raises a LayoutError saying why no layout exists: an out dim that is not a power of two, or an image
    outside its out dim.

    Postcondition: ``to_linear_layout(from_linear_layout(ll), in_dims=<ll's in dims>, out_shape=<ll's out
    sizes>)`` has ``ll``'s bases (the out dims come back named ``dim0``, ``dim1``, ...).

    >>> print(from_linear_layout({"bases": {"offset": [[1], [2], [12]]}, "out_dims": {"offset": 16}}))
    (4,2):(1,12)
    >>> print(from_linear_layout({"bases": {"offset": [[1], [3]]}, "out_dims": {"offset": 4}}))
    (2,2):(^1,^3)
    """
    if isinstance(ll, dict):
        try:
            ll = LinearLayout(tuple((n, tuple(tuple(v) for v in b)) for n, b in ll["bases"].items()),
                              tuple(ll["out_dims"].items()))
        except (KeyError, AttributeError, TypeError):
            raise TypeError("from_linear_layout: a dict must be {'bases': {in_dim: [[...], ...]}, "
                            "'out_dims': {name: size}}") from None
    if not isinstance(ll, LinearLayout):
        raise TypeError(f"from_linear_layout: expected a LinearLayout or its as_dict(), got {_r(ll)}")
    if out_shape is not None and not isinstance(out_shape, (tuple, list)):
        out_shape = (out_shape,)
    sizes = tuple(out_shape) if out_shape is not None else tuple(s for _n, s in ll.out_dims)
    widths = [_pow2("from_linear_layout", "every out dim", s, out_dims=ll.out_dims) for s in sizes]
    images = []
    shape = []
    for name, basis in ll.bases:
        shape.append(1 << len(basis))
        for image in basis:
            if len(image) != len(widths):
                raise layout_error(LayoutError, "from_linear_layout", "an image needs one coordinate per out dim",
                                   f"{name}: {image} for {len(widths)} out dims")
            v, shift = 0, 0
            for x, w in builtins.zip(image, widths):
                if type(x) is not int:
                    raise layout_error(LayoutError, "from_linear_layout", "an image's coordinates must be ints",
                                       f"{name}: {image} has {x!r} of type {type(x).__name__}")
                if not 0 <= x < 1 << w:
                    raise layout_error(LayoutError, "from_linear_layout", "an image lies outside its out dim",
                                       f"{name}: {image} for out dims of {sizes}")
                v |= x << shift
                shift += w
            images.append(v)
    return from_bits(tuple(shape) if len(shape) != 1 else shape[0], images)
