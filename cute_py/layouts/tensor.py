"""Host tensors: a layout over a numpy array, or over coordinates (CuTe's ``tensor_impl.hpp``).

``Tensor(engine, layout, offset)`` is an immutable *view*: element ``c`` is
``engine[offset + layout(c)]``. The engine is a 1-D numpy array (shared, never
copied) or the :class:`IdentityEngine` of coordinate tensors, whose element
``c`` is the coordinate ``offset + layout(c)`` itself. Slicing with ``_``,
the divides, ``composition`` and the partitions (:mod:`~cute_py.layouts.partition`) give new views of the same
engine, so writes through any of them are seen by all.

>>> from cute_py import make_tensor, make_identity_tensor
>>> import numpy as np
>>> t = make_tensor(np.arange(32, dtype=np.float32), Layout((4, 8)))
>>> print(t)
tensor<f32>[32] o (4,8):(1,4)
>>> float(t(1, 2)), float(t[1, 2]), t(_, 2).values().tolist()
(9.0, 9.0, [8.0, 9.0, 10.0, 11.0])
>>> from cute_py import zipped_divide
>>> print(zipped_divide(t, (2, 4)))
tensor<f32>[32] o ((2,4),(2,2)):((1,4),(2,16))
>>> print(make_identity_tensor((4, 8))(_, 2))
ArithTuple(0,2) o (4):(1@0)
"""

from __future__ import annotations

import sys

from . import int_tuple as it
from .algebra import composition
from .basis import ArithmeticTuple, ScaledBasis
from .bounds import first_outside
from .dtypes import dtype as _dtype
from .errors import CoordinateError, LayoutError, layout_error, _r
from .int_tuple import _, has_underscore, is_int, to_str
from . import layout as _layout, queries as _queries
from .layout import Layout, is_layout
from .slicing import slice_and_offset
from .modes import domain_offset
from .offsets import _int_strides, _offsets, np_module
from .tiling import tiled_divide

__all__ = ["Tensor", "IdentityEngine"]


class IdentityEngine:
    """The engine of coordinate tensors: element ``c`` is the coordinate ``offset + layout(c)``.

    It plays the part of CuTe's counting iterator (``ArithmeticTupleIterator``);
    there is one instance.

    >>> IdentityEngine() is IdentityEngine()
    True
    """

    __slots__ = ()
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __repr__(self):
        return "IdentityEngine()"

    def __reduce__(self):
        return (IdentityEngine, ())


def _to_at(x):
    """Coordinates as nested ArithmeticTuples (so that ``+`` adds them element-wise)."""
    if isinstance(x, ScaledBasis):
        x = x.to_tuple()
    if isinstance(x, tuple):
        return ArithmeticTuple(_to_at(e) for e in x)
    return x


def _plain(x):
    """Coordinates as nested plain tuples of ints."""
    if isinstance(x, ScaledBasis):
        x = x.to_tuple()
    if isinstance(x, tuple):
        return tuple(_plain(e) for e in x)
    return int(x)


def _in_domain(c, s) -> bool:
    """Each integer of the coordinate lies inside its mode (``_`` always does)."""
    if c is _:
        return True
    if isinstance(c, tuple):
        return isinstance(s, tuple) and len(c) == len(s) and all(_in_domain(a, b) for a, b in zip(c, s))
    return 0 <= c < it.product(s)


class Tensor:
    """An immutable view ``engine o offset o layout``: element ``c`` is ``engine[offset + layout(c)]``.

    ``engine`` is a 1-D contiguous numpy array (or the :class:`IdentityEngine`
    of coordinate tensors, where the element is the coordinate ``offset +
    layout(c)``); ``layout`` a Layout or ComposedLayout; ``offset`` an int (a
    coordinate for identity tensors); ``dtype`` the element
    :class:`~cute_py.layouts.dtypes.DType` (default: from the numpy dtype; it
    must have the array's item size, e.g. ``bf16`` over ``uint16``).

    * ``t(*coord)`` / ``t[coord]``: an element; a coordinate containing ``_``
      gives the sub-tensor (``slice_and_offset``; a ComposedLayout takes the
      offset in, as in CuTe). Raises CoordinateError for a coordinate outside
      the shape or an element outside the engine.
    * ``t[coord] = value`` writes through to the array (a sliced coordinate
      writes every element: a scalar, or ``size`` values in colex order).
    * ``size()``, ``rank``, ``depth``, ``shape``, ``stride``, ``len(t) ==
      size(t)``; iteration, :meth:`values` and :meth:`to_numpy` go over the
      elements in colexicographic order.
    * The free functions of the algebra (``composition``, the divides,
      ``coalesce``, ``group``, ``take`` ...) accept a tensor and return a view
      of the same engine with the transformed layout.

    >>> import numpy as np
    >>> a = np.zeros(8, dtype=np.int32)
    >>> t = Tensor(a, Layout((2, 4), (4, 1)))
    >>> t[1, 2] = 7
    >>> a.tolist(), t.rank, t.shape, len(t)
    ([0, 0, 0, 0, 0, 0, 7, 0], 2, (2, 4), 8)
    """

    __slots__ = ("engine", "layout", "offset", "dtype", "_coords", "_extent")
    # _coords: for a view derived from a data tensor (by the algebra, a partition, a slice of such a view), the
    # coordinate tensor that maps the view's coordinates to the data's (the identity over the data's shape,
    # transformed alike), the data's shape being _extent; None where every element is inside the shape.
    _is_tensor = True

    @staticmethod
    def _max_common(op, a, b):
        """max_common_layout / max_common_vector (``op``) where ``a`` or ``b`` is a tensor."""
        return _max_common(op, a, b)

    def __init__(self, engine, layout, offset=0, *, dtype=None):
        np = sys.modules.get("numpy")
        if not is_layout(layout):
            raise TypeError(f"Tensor: expected a Layout or ComposedLayout, got {_r(layout)}")
        if isinstance(engine, IdentityEngine):
            if dtype is not None:
                raise TypeError("Tensor: an identity tensor has no dtype")
            if not (is_int(offset) or isinstance(offset, (tuple, ScaledBasis))):
                raise TypeError(f"Tensor: the offset of an identity tensor is a coordinate, got {_r(offset)}")
            offset = _to_at(offset) if not is_int(offset) else int(offset)
        elif np is not None and isinstance(engine, np.ndarray):
            if engine.ndim != 1:
                raise TypeError(f"Tensor: the engine must be a 1-D numpy array, got {engine.ndim}-D "
                                f"(make_tensor flattens arrays)")
            if not engine.flags.contiguous:
                raise layout_error(LayoutError, "Tensor", "the engine must be a contiguous array",
                                   f"strides {engine.strides}")
            if not is_int(offset):
                raise TypeError(f"Tensor: offset must be an int, got {_r(offset)}")
            offset = int(offset)
            if dtype is None:
                try:
                    dtype = _dtype(engine.dtype)
                except TypeError:
                    dtype = None
            else:
                dtype = _dtype(dtype)
                if dtype.bits != engine.dtype.itemsize * 8:
                    raise TypeError(f"Tensor: dtype {dtype} ({dtype.bits} bits) does not match the "
                                    f"engine's {engine.dtype} ({engine.dtype.itemsize * 8} bits)")
            if not _int_strides(layout):
                raise TypeError(f"Tensor: a data tensor needs integer strides, got {layout}")
        else:
            raise TypeError(f"Tensor: the engine must be a 1-D numpy array or IdentityEngine(), "
                            f"got {type(engine).__name__}")
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "_coords", None)
        object.__setattr__(self, "_extent", None)

    @classmethod
    def _view(cls, engine, layout, offset, dtype):
        """A tensor derived from a valid one (no re-validation)."""
        self = object.__new__(cls)
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "offset", _to_at(offset) if isinstance(offset, (tuple, ScaledBasis)) else offset)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "_coords", None)
        object.__setattr__(self, "_extent", None)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Tensor is immutable (write elements with t[coord] = value)")

    def __delattr__(self, name):
        raise AttributeError("Tensor is immutable")

    @property
    def is_identity(self) -> bool:
        """True for a coordinate tensor (engine is the :class:`IdentityEngine`)."""
        return isinstance(self.engine, IdentityEngine)

    # -- shape queries -------------------------------------------------------
    @property
    def shape(self):
        """The layout's shape."""
        return self.layout.shape

    @property
    def stride(self):
        """The layout's stride (TypeError for a ComposedLayout, which has none)."""
        return _queries.stride(self.layout)

    @property
    def rank(self) -> int:
        """Number of top-level modes."""
        return it.rank(self.layout.shape)

    @property
    def depth(self) -> int:
        """Nesting depth of the shape."""
        return it.depth(self.layout.shape)

    def size(self) -> int:
        """Number of elements, ``size(layout)``."""
        return it.product(self.layout.shape)

    def __len__(self):
        return self.size()

    # -- elements --------------------------------------------------------------
    def __call__(self, *coord):
        if not coord:
            raise TypeError("Tensor.__call__: expected a coordinate")
        return self._at(coord[0] if len(coord) == 1 else coord)

    def __getitem__(self, coord):
        return self._at(coord)

    def _at(self, coord):
        if isinstance(coord, list):
            coord = tuple(coord)
        if isinstance(coord, tuple):
            it.check_depth("Tensor", coord)
        if has_underscore(coord):
            sub, off = slice_and_offset(coord, self.layout)
            self._check_domain(coord)
            coords = None if self._coords is None else self._coords._at(coord)
            return self._derive(sub, self.offset + off, coords)
        off = self.layout(coord)
        self._check_domain(coord)
        if self.is_identity:
            return _plain(self.offset + off)
        self._check_in_shape(coord)
        return self.engine[self._index(self.offset + off, coord)]

    def _derive(self, layout, offset, coords):
        """A view of the same engine, tracking the data's coordinates ``coords`` (see ``__slots__``)."""
        t = Tensor._view(self.engine, layout, offset, self.dtype)
        if coords is not None:
            object.__setattr__(t, "_coords", coords)
            object.__setattr__(t, "_extent", self.layout.shape if self._extent is None else self._extent)
        return t

    def _coords_view(self):
        """This view's coordinate tensor: ``_coords``, or for the data tensor itself the identity over its shape
        (one basis element per leaf of the shape, so that each coordinate is flat)."""
        if self._coords is not None:
            return self._coords
        leaves = it.flatten_to_tuple(self.layout.shape)
        basis = it.unflatten(tuple(ScaledBasis(1, (k,)) for k in range(len(leaves))), self.layout.shape)
        return Tensor._view(IdentityEngine(), Layout(self.layout.shape, basis), ArithmeticTuple((0,) * len(leaves)),
                            None)

    def _track(self, step):
        """``step`` (a tensor -> tensor function) applied to the coordinate tensor; None for an identity tensor,
        and where the step does not take basis strides (the view is then not checked)."""
        if self.is_identity:
            return None
        try:
            return step(self._coords_view())
        except (LayoutError, TypeError):
            return None

    def _check_in_shape(self, coord):
        """Reading element ``coord`` of a view that reaches past the data's shape raises CoordinateError."""
        if self._coords is None:
            return
        c = _plain(self._coords._at(coord))
        extent = it.flatten_to_tuple(self._extent)
        c = c if isinstance(c, tuple) else (c,)
        if not all(0 <= x < e for x, e in zip(c, extent)):
            raise _outside_error(coord, c, self)

    def _check_domain(self, coord):
        if not _in_domain(coord, self.layout.shape):
            raise layout_error(CoordinateError, "Tensor", "coordinate out of range",
                               coord=coord, shape=self.layout.shape)

    def _index(self, idx, coord):
        n = self.engine.shape[0]
        if not 0 <= idx < n:
            raise layout_error(CoordinateError, "Tensor", "element outside the engine",
                               f"index {idx} not in [0, {n})", coord=coord, tensor=str(self))
        return idx

    def __setitem__(self, coord, value):
        if self.is_identity:
            raise TypeError("Tensor: an identity tensor is read-only")
        if isinstance(coord, list):
            coord = tuple(coord)
        if not has_underscore(coord):
            off = self.layout(coord)
            self._check_domain(coord)
            self._check_in_shape(coord)
            self.engine[self._index(self.offset + off, coord)] = value
            return
        sub = self._at(coord)
        idx = sub._indices()
        np = np_module()
        v = np.asarray(value)
        if v.ndim == 0:
            self.engine[idx] = v
        elif v.size == idx.size:
            self.engine[idx] = v.reshape(-1, order="F")
        else:
            raise layout_error(LayoutError, "Tensor", "value does not match the slice",
                               f"{v.size} values for {idx.size} elements", coord=coord)

    def _indices(self):
        """Engine indices of all elements, colex order, checked against the engine."""
        if self._coords is not None:
            out = first_outside(self._coords, it.flatten_to_tuple(self._extent))
            if out is not None:
                raise _outside_error(out[0], out[1], self)
        idx = _offsets(self.layout) + self.offset
        n = self.engine.shape[0]
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx[(idx < 0) | (idx >= n)][0])
            raise layout_error(CoordinateError, "Tensor", "element outside the engine",
                               f"index {bad} not in [0, {n})", tensor=str(self))
        return idx

    def values(self):
        """The elements in colexicographic order: a numpy array (a copy) of ``size`` elements.

        For an identity tensor, a list of coordinate tuples.

        >>> from cute_py import make_tensor, make_identity_tensor
        >>> import numpy as np
        >>> make_tensor(np.arange(6), Layout((2, 3), (3, 1))).values().tolist()
        [0, 3, 1, 4, 2, 5]
        >>> make_identity_tensor((2, 2)).values()
        [(0, 0), (1, 0), (0, 1), (1, 1)]
        """
        if self.is_identity:
            return [_plain(self.offset + self.layout(i)) for i in range(self.size())]
        return self.engine[self._indices()]

    def __iter__(self):
        return iter(self.values())

    def to_numpy(self):
        """A numpy array of shape ``product_each(shape)`` with ``result[i, j, ...] == t(i, j, ...)``.

        A copy (column-major order of the tensor's modes); for an identity
        tensor an object array of coordinate tuples.

        >>> from cute_py import make_tensor
        >>> import numpy as np
        >>> make_tensor(np.arange(6), (2, 3)).to_numpy().tolist()
        [[0, 2, 4], [1, 3, 5]]
        """
        np = np_module()
        shp = it.product_each(self.layout.shape)
        shp = shp if isinstance(shp, tuple) else (shp,)
        vals = self.values()
        if self.is_identity:
            arr = np.empty(len(vals), dtype=object)
            for i, v in enumerate(vals):
                arr[i] = v
            vals = arr
        return vals.reshape(shp, order="F")

    # -- algebra ----------------------------------------------------------------
    def _apply(self, op, *args):
        """``op(layout, *args)`` as a tensor over the same engine and offset (the free functions' hook)."""
        return self._derive(op(self.layout, *args), self.offset, self._track(lambda c: c._apply(op, *args)))

    # the algebra's operations on the domain, answered on the tensor's layout (operands.by_owner)
    _algebra_operand = True
    _composition = _logical_divide = _zipped_divide = _tiled_divide = _flat_divide = _apply
    _coalesce = _filter = _filter_zeros = _apply

    def _domain_offset(self, coord):
        layout, off = domain_offset(coord, self.layout)
        return self._derive(layout, self.offset + off, self._track(lambda c: c._domain_offset(coord)))

    def _make_like(self, make, dtype=None):
        """A new zeroed tensor with layout ``make(layout)`` (make_tensor_like / make_fragment_like)."""
        dt = dtype if dtype is not None else self.dtype
        if dt is None:
            raise TypeError(f"{make.__name__}: give dtype= for a tensor without a DType ({self})")
        # coordinates have no stride order: an identity tensor is taken as column-major
        return _new_tensor(make(Layout(self.shape) if self.is_identity else self.layout), dt, make.__name__)

    def compose(self, *tilers):
        """``composition(self, tilers)`` (one tiler, or one per mode).

        >>> from cute_py import make_identity_tensor
        >>> print(make_identity_tensor((4, 8)).compose((2, 4)))
        ArithTuple(0,0) o (2,4):(1@0,1@1)
        """
        return self._apply(composition, tilers[0] if len(tilers) == 1 else tilers)

    def tile(self, *tilers):
        """``tiled_divide(self, tilers)`` (CuTe's ``Tensor::tile``)."""
        return self._apply(tiled_divide, tilers)

    def with_layout(self, layout):
        """The same engine and offset viewed through another layout.

        >>> from cute_py import make_tensor
        >>> import numpy as np
        >>> make_tensor(np.arange(8), 8).with_layout(Layout(4, 2)).values().tolist()
        [0, 2, 4, 6]
        """
        if not is_layout(layout):
            raise TypeError(f"with_layout: expected a layout, got {_r(layout)}")
        if self.is_identity:
            return Tensor(self.engine, layout, self.offset)
        return Tensor(self.engine, layout, self.offset, dtype=self.dtype)

    # -- printing -----------------------------------------------------------------
    def _engine_str(self):
        if self.is_identity:
            off = _plain(self.offset)
            return f"ArithTuple({off})" if isinstance(off, int) else f"ArithTuple{to_str(off)}"
        name = self.dtype.name if self.dtype is not None else self.engine.dtype.name
        head = f"tensor<{name}>[{self.engine.shape[0]}]"
        return head + (f"+{self.offset}" if self.offset > 0 else f"{self.offset}" if self.offset else "")

    def __str__(self):
        return f"{self._engine_str()} o {self.layout}"

    def __repr__(self):
        return f"Tensor({self})"

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def _outside_error(coord, data_coord, tensor):
    return layout_error(
        CoordinateError, "Tensor", "element outside the data's shape",
        f"element {coord} of the view is the data's coordinate {data_coord}, outside its shape "
        f"{to_str(tensor._extent)} (the tile reaches past the data: predicate the partition with "
        f"make_identity_tensor and elem_less, as CuTe does)", tensor=str(tensor))


# ---------------------------------------------------------------------------
# Builders


def _new_tensor(layout, dt, op="make_tensor_like"):
    dt = _dtype(dt)
    if dt.storage is None:
        raise TypeError(f"{op}: a tensor of {dt} needs a numpy storage type; {dt} has none")
    return Tensor(np_module().zeros(_layout.cosize(layout), dtype=dt.storage), layout, 0, dtype=dt)


def _max_common(op, a, b):
    """max_common_vector / max_common_layout of two tensors (C++: 0 / ``1:0`` unless both hold the same type)."""
    if not (getattr(a, "_is_tensor", False) and getattr(b, "_is_tensor", False)):
        raise TypeError(f"{op.__name__}: give two tensors or two layouts, got {type(a).__name__} "
                        f"and {type(b).__name__}")
    same = (not a.is_identity and not b.is_identity and a.engine.dtype == b.engine.dtype
            and a.dtype == b.dtype)
    if same:
        return op(a.layout, b.layout)
    return 0 if op.__name__ == "max_common_vector" else Layout(1, 0)
