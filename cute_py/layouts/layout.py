"""``Layout``: a function from coordinates to offsets, given by a shape and a stride.

A layout pairs a shape (an IntTuple of extents) with a congruent stride. It
maps a coordinate ``c`` of the shape to ``inner_product(c, stride)``; a 1-D
index is first split colexicographically. Default strides are LayoutLeft
(compact column-major; CuTe gives a size-1 mode stride 0).

>>> L = Layout((4, (2, 2)), (2, (1, 8)))
>>> str(L), L(5), L(1, (1, 0)), L.size(), cosize(L)
('(4,(2,2)):(2,(1,8))', 3, 3, 16, 16)
"""

from __future__ import annotations

import operator

import builtins
from numbers import Integral

from . import decide, int_tuple as it
from .basis import ArithmeticTuple, ScaledBasis, tuple_strides
from .f2 import F2, check_f2_strides, f2_span_max
from .errors import CoordinateError, LayoutError, RankError, layout_error, _r, names_caller
from .int_tuple import _, has_underscore, to_str
from .leaves import _int_leaves, _norm

__all__ = [
    "Layout", "LayoutLeft", "LayoutRight", "is_layout", "cosize", "coshape", "coprofile", "get", "crd2idx",
]


class _Tag:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


LayoutLeft = _Tag("LayoutLeft")
"""Tag for compact column-major strides (CuTe's ``LayoutLeft`` / ``GenColMajor``)."""
LayoutRight = _Tag("LayoutRight")
"""Tag for compact row-major strides (CuTe's ``LayoutRight`` / ``GenRowMajor``)."""


class _Algebra:
    """The operations the convenience methods ``Layout.compose``, ``with_shape``, ``tile``, ``filter`` and
    ``squeeze`` call.

    They are defined above this module (``algebra.composition``, ``tiling.tiled_divide``, ...), in modules that
    import Layout; each sets its entry here when it loads, as C++ declares the free functions that the
    members of ``layout.hpp`` call. ``cute_py.layouts`` loads both, so a Layout never sees them unset.
    """

    composition = None
    tiled_divide = None
    filter = None
    squeeze = None


ALGEBRA = _Algebra()


class Layout:
    """A CuTe layout ``shape:stride``; immutable and hashable.

    ``Layout(shape)`` uses compact column-major strides (size-1 modes get
    stride 0, as in CuTe). Call it with a coordinate to get an offset; with a
    coordinate containing ``_`` to get the sub-layout of the kept modes.

    Precondition: ``congruent(shape, stride)``; shape extents are non-negative ints (0: an empty domain).
    Leaves may also be sympy integer expressions (symbolic extents, strides,
    coordinates; see :mod:`cute_py.symbolic`).

    >>> Layout((4, 8))
    Layout((4, 8), (1, 4))
    >>> print(Layout((4, 8), (8, 1)))
    (4,8):(8,1)
    >>> Layout((4, 8), (8, 1))(_, 3)
    Layout((4,), (8,))
    """

    __slots__ = ("shape", "stride", "_flat", "_ev")

    def __init__(self, shape, stride=None):
        fs = _int_leaves(shape)
        if fs is not None and min(fs, default=0) >= 0:       # plain ints: nothing to convert or reject
            if stride is None:
                stride = it.compact_col_major(shape)
                fd = it.flatten_to_tuple(stride)
            else:
                fd = _int_leaves(stride)
            if fd is not None and it.congruent(shape, stride):
                _set_shape(self, shape)
                _set_stride(self, stride)
                _set_flat(self, (fs, fd))
                return
        shape = _norm(shape, "shape", "Layout")
        if stride is None:
            stride = it.compact_col_major(shape)
        else:
            kinds = set()
            stride = _norm(stride, "stride", "Layout", kinds=kinds)
            if ArithmeticTuple in kinds:
                stride = tuple_strides(shape, stride)
            if not it.congruent(shape, stride):
                raise layout_error(RankError, "Layout", "shape and stride must be congruent",
                                   shape=shape, stride=stride)
            if F2 in kinds:
                check_f2_strides(shape, stride)
        _set_shape(self, shape)
        _set_stride(self, stride)
        _set_flat(self, (it.flatten_to_tuple(shape), it.flatten_to_tuple(stride)))

    @staticmethod
    def _make(shape, stride, flat=None):
        """Fast constructor for an already-validated shape and stride (internal); ``flat`` is their
        ``flatten_to_tuple`` where the caller has it."""
        self = _Fresh()
        self.shape = shape
        self.stride = stride
        self._flat = flat
        self.__class__ = Layout
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Layout is immutable")

    def __delattr__(self, name):
        raise AttributeError("Layout is immutable")

    def __reduce__(self):
        return (Layout, (self.shape, self.stride))

    # -- value semantics ---------------------------------------------------
    def __eq__(self, other):
        return (type(other) is Layout and self.shape == other.shape
                and self.stride == other.stride)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((self.shape, self.stride))

    def __str__(self):
        return f"{to_str(self.shape)}:{to_str(self.stride)}"

    def __repr__(self):
        return f"Layout({self.shape!r}, {self.stride!r})"

    # -- evaluation --------------------------------------------------------
    def __call__(self, *coord):
        """Offset of a coordinate (1-D, n-D or h-D), or the sub-layout for a coordinate with ``_``."""
        if len(coord) == 1:
            coord = coord[0]
            if type(coord) is int and coord >= 0:         # an index into an int layout: split over the leaves
                ev = _plan(self)
                if ev is not None:
                    r = 0
                    for s, d in ev[0]:
                        r += coord % s * d
                        coord //= s
                    return r + coord * ev[1]
        elif not coord:
            raise TypeError("Layout.__call__: expected a coordinate")
        else:                                                 # one int per mode of an int layout
            ev = _plan(self)
            if ev is not None and len(coord) == len(ev[2]):
                r = 0
                for c, (pairs, last) in zip(coord, ev[2]):
                    if type(c) is not int or c < 0:
                        break
                    for s, d in pairs:
                        r += c % s * d
                        c //= s
                    r += c * last
                else:
                    return r
        if isinstance(coord, tuple):
            it.check_depth("Layout.__call__", coord)
        if has_underscore(coord):             # CuTe's slice (cute_py.layouts.slicing.slice_)
            coord = _coord("slice", coord)
            return Layout._make(_slice_tuple(coord, self.shape, "slice"), _slice_tuple(coord, self.stride, "slice"))
        if isinstance(coord, ScaledBasis):     # v@i: the coordinate with v in mode i and 0 elsewhere
            coord = coord.as_coordinate(self.shape)
        _check_coord("Layout.__call__", coord, self)
        r = it.crd2idx(coord, self.shape, self.stride)
        if type(r) is int:
            return r
        if type(r) is F2:                     # an F2 layout's offset is an int like any other
            return r.value
        if type(r) is ScaledBasis and not r.mode:   # a sum of multi-term strides: its ArithmeticTuple
            return r.value
        return decide.canon(r) if it.is_sym(r) else r

    def __getitem__(self, i):
        """Mode ``i`` (``L[i]`` is CuTe's ``layout<i>(L)``); a tuple indexes nested modes."""
        if isinstance(i, tuple):
            return get(self, *i)
        return get(self, i)

    def __len__(self):
        return it.rank(self.shape)

    def __iter__(self):
        for i in range(len(self)):
            yield get(self, i)

    # -- CuTe member functions ---------------------------------------------
    def size(self) -> int:
        """Number of coordinates: ``product(shape)``."""
        return it.product(self.shape)

    def cosize(self) -> int:
        """Size of the codomain: one past the largest offset (``cosize`` below)."""
        return cosize(self)

    def rank(self) -> int:
        """Number of top-level modes."""
        return it.rank(self.shape)

    def depth(self) -> int:
        """Nesting depth of the shape."""
        return it.depth(self.shape)

    def get_hier_coord(self, idx):
        """The hierarchical coordinate ``c`` with ``self(c) == idx`` (compact layouts).

        Postcondition: ``crd2idx(result, shape, stride) == idx`` and ``congruent(result, shape)``.

        >>> Layout((4, 8), (8, 1)).get_hier_coord(9)
        (1, 1)
        """
        return it.idx2crd(idx, self.shape, self.stride)

    def get_flat_coord(self, idx):
        """Like :meth:`get_hier_coord`, with each top-level mode as one 1-D coordinate.

        >>> Layout(((2, 2), 8), ((1, 2), 4)).get_flat_coord(7)
        (3, 1)
        """
        return it.crd2crd(self.get_hier_coord(idx), self.shape, it.product_each(self.shape))

    def get_1d_coord(self, idx):
        """The colexicographic 1-D coordinate ``i`` with ``self(i) == idx`` (compact layouts).

        >>> Layout((4, 8), (8, 1)).get_1d_coord(9)
        5
        """
        return it.crd2idx(self.get_hier_coord(idx), self.shape)

    def compose(self, *tilers):
        """``composition(self, tilers)`` (one tiler or one per mode)."""
        return ALGEBRA.composition(self, tilers[0] if len(tilers) == 1 else tilers)

    def with_shape(self, *shape):
        """``composition(self, make_layout(shape))``: view this layout through a new shape."""
        shape = shape[0] if len(shape) == 1 else shape
        return ALGEBRA.composition(self, Layout(shape) if not isinstance(shape, Layout) else shape)

    def tile(self, *tilers):
        """``tiled_divide(self, tilers)``."""
        return ALGEBRA.tiled_divide(self, tilers)

    def filter(self):
        """``filter(self)``: without stride-0 and size-1 modes, coalesced."""
        return ALGEBRA.filter(self)

    def squeeze(self):
        """``squeeze(self)``: without its modes of extent 1."""
        return ALGEBRA.squeeze(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


class _Fresh(Layout):
    """A Layout while :meth:`Layout._make` fills it in, then made a Layout (the slots are the same).

    Its plain attribute stores are the fast path the interpreter specializes; Layout's own
    ``__setattr__`` refuses every store, which leaves only descriptor calls, at twice the cost of the whole
    ``_make``.
    """

    __slots__ = ()
    __init__ = object.__init__
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


_set_shape = Layout.shape.__set__
_set_stride = Layout.stride.__set__
_set_flat = Layout._flat.__set__
_set_ev = Layout._ev.__set__


def _plan(layout: Layout):
    """How :meth:`Layout.__call__` evaluates int coordinates of ``layout`` without the general ``crd2idx``
    (internal; made once, kept on the layout): ``(pairs, last stride, modes)``, ``pairs`` the (extent, stride) of
    every leaf but the last (an index is split colexicographically, the last leaf taking the rest, as ``crd2idx``
    splits it), ``modes`` the same per top-level mode. None for a leaf that is not an int (symbolic, F2, basis),
    an extent of 0 or an empty tuple anywhere in the shape (``crd2idx`` splits an index past the size there
    otherwise than over the leaves)."""
    try:
        return layout._ev
    except AttributeError:
        pass
    fs, fd = layout._flat or flat_modes(layout)
    plan = None
    if (fs and all(type(s) is int and s > 0 for s in fs) and all(type(d) is int for d in fd)
            and not _has_empty(layout.shape)):               # an empty tuple anywhere: the general path's split
        shape, stride = layout.shape, layout.stride
        modes = []
        for s, d in (builtins.zip(shape, stride) if type(shape) is tuple else ((shape, stride),)):
            ms, md = it.flatten_to_tuple(s), it.flatten_to_tuple(d)
            modes.append((tuple(builtins.zip(ms[:-1], md[:-1])), md[-1]))
        plan = (tuple(builtins.zip(fs[:-1], fd[:-1])), fd[-1], tuple(modes))
    _set_ev(layout, plan)
    return plan


def _has_empty(t) -> bool:
    """Whether the IntTuple ``t`` has an empty tuple anywhere."""
    return type(t) is tuple and (not t or any(_has_empty(x) for x in t))


def int_layout(n: int) -> Layout:
    """``Layout(n)`` for a Python int ``n >= 0`` without the constructor's checks (internal): ``n:1``, and
    ``1:0`` for ``n == 1``."""
    d = 0 if n == 1 else 1
    return Layout._make(n, d, ((n,), (d,)))


def flat_modes(layout: Layout):
    """``(flatten_to_tuple(shape), flatten_to_tuple(stride))``, computed once per layout (internal)."""
    f = layout._flat
    if f is None:
        f = (it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride))
        _set_flat(layout, f)
    return f


def _check_coord(op, coord, layout):
    if isinstance(coord, tuple):
        if not _coord_fits(coord, layout.shape):
            raise layout_error(CoordinateError, op, "coordinate is not congruent with the shape",
                               coord=coord, layout=layout)
    elif (not isinstance(coord, Integral) or isinstance(coord, bool)) and not it.is_sym(coord):
        raise TypeError(f"{op}: a coordinate must be an int or a tuple, got {_r(coord)}")


def _coord_fits(coord, shape) -> bool:
    if isinstance(coord, tuple):
        return (isinstance(shape, tuple) and len(coord) == len(shape)
                and all(_coord_fits(c, s) for c, s in builtins.zip(coord, shape)))
    return isinstance(coord, Integral) and not isinstance(coord, bool) or coord is _ or it.is_sym(coord)


def _is_tensor(x) -> bool:
    """True for a :class:`~cute_py.layouts.tensor.Tensor` (the free functions' dispatch check)."""
    return getattr(x, "_is_tensor", False)


def is_layout(x) -> bool:
    """True for a :class:`Layout` or a ComposedLayout (anything with layout semantics).

    >>> is_layout(Layout(4)), is_layout((4,))
    (True, False)
    """
    return isinstance(x, Layout) or getattr(x, "_is_composed_layout", False)


# ---------------------------------------------------------------------------
# Construction


def _require_layout(op, x):
    if not isinstance(x, Layout):
        raise TypeError(f"{op}: expected a Layout, got {type(x).__name__}: {_r(x)}")


def require_nonempty(op, **layouts):
    """Raise a LayoutError naming ``op`` if a layout has an extent of 0: the operations that divide by
    extents (composition, complement and what is built on them) have no meaning for an empty domain (internal)."""
    for name, x in layouts.items():
        if 0 in flat_modes(x)[0]:
            raise layout_error(LayoutError, op, "needs layouts of positive size", f"{name} has an extent of 0",
                               **layouts)


def _index(op, name, i):
    """``i`` as an int (numpy ints too), or a TypeError naming ``op`` and the argument ``name``."""
    if isinstance(i, bool):
        raise TypeError(f"{op}: {name} must be an int, got bool: {i}")
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {type(i).__name__}: {_r(i)}") from None


# ---------------------------------------------------------------------------
# Queries


def _sub(op, x, modes):
    """Sub-layout / sub-tuple at nested mode indices (shared by get/size/shape/...)."""
    if _is_tensor(x):
        x = x.layout
    for i in modes:
        if isinstance(x, Layout):
            x = get(x, i)
        elif getattr(x, "_is_composed_layout", False):
            x = x[i]
        else:
            if not isinstance(i, int):
                raise TypeError(f"{op}: mode index must be an int, got {_r(i)}")
            if isinstance(x, tuple):
                if not -len(x) <= i < len(x):
                    raise layout_error(RankError, op, "mode index out of range",
                                       f"mode {i} of a rank-{len(x)} tuple", tuple=x)
                x = x[i]
            elif i not in (0, -1):
                raise layout_error(RankError, op, "mode index out of range",
                                   f"mode {i} of an int", value=x)
    return x


@names_caller
def coshape(layout, *modes):
    """Extent of the codomain: the smallest ``C`` with ``layout(c) < C`` element-wise.

    For integer strides this is ``sum((s-1)*|d|) + 1`` (correct for negative
    strides); for basis strides it is a tuple.

    >>> from cute_py import make_identity_layout
    >>> coshape(Layout((4, 2), (-1, 4))), coshape(make_identity_layout((4, 8)))
    (8, (4,8))
    """
    layout = _sub("coshape", layout, modes)
    if getattr(layout, "_is_composed_layout", False):
        return coshape(layout.inner)
    _require_layout("coshape", layout)
    fs, fd = flat_modes(layout)
    empty = 0 in fs                              # an empty domain reaches no offset: a coshape of zeros
    if F2 in builtins.map(type, fd):
        return 0 if empty else f2_span_max(fs, fd) + 1
    last = 0
    for s, d in builtins.zip(fs, fd):
        last = last + (s - 1) * abs(d)
    if isinstance(last, ScaledBasis):
        last = last.to_tuple()
    if isinstance(last, tuple):
        return ArithmeticTuple(it.repeat_like(last, 0) if empty else _plus_one(last))
    if empty:
        return 0
    if type(last) is not int and it.is_sym(last):
        return decide.expand(last + 1)
    return last + 1


def _plus_one(t):
    if isinstance(t, tuple):
        return tuple(_plus_one(x) for x in t)
    return t + 1


def cosize_flat(fs, fd):
    """The cosize of the flat modes ``fs:fd`` with int strides (symbolic extents too); None for other strides
    (internal: :func:`cosize` without its checks)."""
    if 0 in fs:                                  # an empty domain reaches no offset
        return 0
    last = 0
    for s, d in builtins.zip(fs, fd):
        if type(d) is not int:
            return None
        last += (s - 1) * (d if d >= 0 else -d)
    if type(last) is not int:                    # a symbolic extent
        return decide.expand(last + 1)
    return last + 1


@names_caller
def cosize(layout, *modes) -> int:
    """Size of the codomain, ``size(coshape(layout))``; one past the largest offset.

    >>> cosize(Layout((4, 2), (1, 16))), cosize(Layout((4, 2), (-1, 4)))
    (20, 8)
    """
    if modes:
        layout = _sub("cosize", layout, modes)
    if type(layout) is Layout:
        n = cosize_flat(*flat_modes(layout))
        return it.product(coshape(layout)) if n is None else n
    if getattr(layout, "_is_composed_layout", False):
        return layout.cosize()
    return it.product(coshape(layout))


@names_caller
def coprofile(layout):
    """Profile of the codomain: 0 for integer strides, a tuple of 0s for basis strides.

    >>> from cute_py import make_identity_layout
    >>> coprofile(Layout((4, 8))), coprofile(make_identity_layout((4, 8)))
    (0, (0, 0))
    """
    return it.repeat_like(coshape(layout), 0)


def crd2idx(coord, layout):
    """``layout(coord)`` as a free function (``_`` counts as 0).

    >>> crd2idx((1, 2), Layout((4, 8)))
    9
    """
    _require_layout("crd2idx", layout)
    it.check_depth("crd2idx", coord)
    r = it.crd2idx(_coord("crd2idx", coord), layout.shape, layout.stride)
    return r.value if type(r) is ScaledBasis and not r.mode else r


def _coord(op, coord, depth=0):
    """``coord`` with lists made tuples (lists are accepted wherever tuples are); a TypeError naming ``op``
    unless every leaf is an int, a symbol or ``_`` (a LayoutError past ``int_tuple.MAX_DEPTH`` levels)."""
    if isinstance(coord, (tuple, list)):
        if depth > it.MAX_DEPTH:
            raise layout_error(LayoutError, op, f"operand nests deeper than {it.MAX_DEPTH} levels")
        return tuple(_coord(op, c, depth + 1) for c in coord)
    if not (coord is _ or it.is_int(coord) or it.is_sym(coord)):
        raise TypeError(f"{op}: coord leaves must be ints or _, got {type(coord).__name__}: {_r(coord)}")
    return coord


# ---------------------------------------------------------------------------
# Modes


def _modes(layout):
    """(shape modes, stride modes) as tuples; an int-shaped layout has one mode."""
    if isinstance(layout.shape, tuple):
        return layout.shape, layout.stride
    return (layout.shape,), (layout.stride,)


def get(layout, *modes):
    """Sub-layout at (nested) mode indices: ``get(L, 1, 0)`` is CuTe's ``layout<1,0>(L)``.

    An int-shaped layout has one mode, itself.

    >>> print(get(Layout((4, (2, 3))), 1, 0))
    2:4
    """
    if _is_tensor(layout):
        return layout._apply(get, *modes)
    if getattr(layout, "_is_composed_layout", False):
        return layout[modes] if len(modes) != 1 else layout[modes[0]]
    _require_layout("get", layout)
    shp, std = layout.shape, layout.stride
    for i in modes:
        if not isinstance(i, int):
            raise TypeError(f"get: mode index must be an int, got {_r(i)}")
        if isinstance(shp, tuple):
            if not -len(shp) <= i < len(shp):
                raise layout_error(RankError, "get", "mode index out of range",
                                   f"mode {i} of a rank-{len(shp)} layout", layout=layout)
            shp, std = shp[i], std[i]
        elif i not in (0, -1):
            raise layout_error(RankError, "get", "mode index out of range",
                               f"mode {i} of a rank-1 layout", layout=layout)
    return Layout._make(shp, std)


def _slice_tuple(c, t, op, dice=False):
    """The leaves and modes of ``t`` where ``c`` is ``_`` (CuTe's ``slice`` on tuples; with ``dice``, where ``c``
    is an integer: its ``dice``); modes kept inside a mode are spliced into its level."""
    if isinstance(c, tuple):
        if not isinstance(t, tuple) or len(c) != len(t):
            raise layout_error(CoordinateError, op, "coordinate is not congruent with the shape",
                               coord=c, shape=t)
        out = ()
        for ci, ti in builtins.zip(c, t):
            if isinstance(ci, tuple):
                out += _slice_tuple(ci, ti, op, dice)
            elif (ci is _) is not dice:
                out += (ti,)
        return out
    return t if (c is _) is not dice else ()
