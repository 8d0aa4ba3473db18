"""Making host tensors (CuTe's ``make_tensor``, ``make_identity_tensor``, ``make_tensor_like``,
``make_fragment_like``) and ``recast``: the factories of :class:`~cute_py.layouts.tensor.Tensor` views.

>>> import numpy as np
>>> print(make_tensor(np.arange(8, dtype=np.int32), (2, 4)))
tensor<s32>[8] o (2,4):(1,2)
"""

from __future__ import annotations

from . import int_tuple as it
from .dtypes import dtype as _dtype
from .errors import DivisibilityError, LayoutError, layout_error, _r, names_caller
from .int_tuple import is_int
from .layout import Layout, coshape, is_layout
from .make import make_identity_layout, make_layout_like
from .offsets import _offset_range, np_module
from .recast import recast_by, recast_layout
from .tensor import IdentityEngine, Tensor, _new_tensor
from .tiling import tiled_product

__all__ = ["make_tensor", "make_identity_tensor", "make_tensor_like", "make_fragment_like", "recast"]


def _flatten_data(arr):
    """``arr.reshape(-1)`` in memory order, which must be a view (C- or F-contiguous)."""
    if arr.ndim == 1 and arr.flags.contiguous:
        return arr
    if arr.flags.c_contiguous:
        return arr.reshape(-1)
    if arr.flags.f_contiguous:
        return arr.reshape(-1, order="F")
    raise layout_error(LayoutError, "make_tensor", "data must be a contiguous numpy array",
                       f"shape {arr.shape}, strides {arr.strides}: reshape(-1) would copy")


@names_caller
def make_tensor(data, layout_or_shape=None, offset=0, *, dtype=None):
    """A tensor over ``data``: element ``c`` is ``data.reshape(-1)[offset + layout(c)]``.

    ``data`` is a contiguous numpy array (flattened in memory order, a view:
    writes go to ``data``) or a list (copied into a new array).
    ``layout_or_shape`` is a Layout / ComposedLayout, a shape (compact
    column-major, as in CuTe), or None: the array's own shape and strides, so
    that ``t(i, j) == data[i, j]``. ``dtype`` names a type numpy lacks (e.g.
    ``"bf16"`` over ``uint16`` bits).

    Preconditions: every ``offset + layout(c)`` lies in ``[0, data.size)``
    (else LayoutError naming the layout and the data size); ``data`` is
    contiguous (else LayoutError).

    >>> import numpy as np
    >>> a = np.arange(12).reshape(3, 4)
    >>> t = make_tensor(a)
    >>> print(t), int(t(2, 1)), int(a[2, 1])
    tensor<s64>[12] o (3,4):(4,1)
    (None, 9, 9)
    >>> print(make_tensor(a, (4, 3)))
    tensor<s64>[12] o (4,3):(1,4)
    >>> make_tensor(a, (4, 4))
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.LayoutError: make_tensor: layout does not fit in the data: offsets 0..15 ...
    """
    dt = _dtype(dtype) if dtype is not None else None
    np = np_module()
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, (list, tuple, range)):
        if dt is not None and dt.numpy is None:
            raise TypeError(f"make_tensor: numpy has no {dt}; give its bits as a numpy array of {dt.storage}")
        try:
            arr = np.asarray(data, dtype=dt.numpy if dt is not None else None)
        except ValueError as e:
            raise ValueError(f"make_tensor: data is not a rectangular array of numbers: {e}") from None
    else:
        raise TypeError(f"make_tensor: data must be a numpy array or a list, got {type(data).__name__}")
    engine = _flatten_data(arr)
    if layout_or_shape is None:
        if arr.ndim == 0:
            layout = Layout(1)
        else:
            strides = [s // arr.itemsize for s in arr.strides]
            layout = Layout(tuple(arr.shape), tuple(strides)) if arr.ndim > 1 else Layout(arr.shape[0], strides[0])
    elif is_layout(layout_or_shape):
        layout = layout_or_shape
    elif is_int(layout_or_shape) or isinstance(layout_or_shape, (tuple, list)):
        layout = Layout(layout_or_shape)
    else:
        raise TypeError(f"make_tensor: expected a layout or a shape, got {_r(layout_or_shape)}")
    t = Tensor(engine, layout, offset, dtype=dt)
    lo, hi = _offset_range(layout)
    if offset + lo < 0 or offset + hi >= engine.shape[0]:
        raise layout_error(LayoutError, "make_tensor", "layout does not fit in the data",
                           f"offsets {lo}..{hi} with offset {offset}, data has {engine.shape[0]} elements",
                           layout=layout)
    return t


@names_caller
def make_identity_tensor(shape):
    """The coordinate tensor of ``shape``: element ``c`` is the (hierarchical) coordinate ``c``.

    ``make_identity_layout(shape)`` over the :class:`IdentityEngine`, offset 0
    (CuTe's counting tensor). Partitioning it as a data tensor is partitioned
    tells which coordinates each piece holds.

    >>> c = make_identity_tensor((4, 8))
    >>> print(c), c(1, 2), c(9)
    ArithTuple(0,0) o (4,8):(1@0,1@1)
    (None, (1, 2), (1, 2))
    """
    layout = make_identity_layout(shape)
    return Tensor(IdentityEngine(), layout, it.repeat_like(coshape(layout), 0))


@names_caller
def make_tensor_like(x, dtype=None):
    """A new zeroed tensor with ``make_layout_like(layout)``: same shape, compact, same stride order.

    ``x`` is a Tensor (``dtype`` defaults to its dtype) or a layout (``dtype``
    required). A swizzled layout gives its inner layout's shape and order.

    >>> import numpy as np
    >>> t = make_tensor(np.arange(24.0), Layout((4, 3), (6, 1)))
    >>> print(make_tensor_like(t))
    tensor<f64>[12] o (4,3):(3,1)
    >>> print(make_tensor_like(Layout((2, 2)), "bf16"))
    tensor<bf16>[4] o (2,2):(1,2)
    """
    def like(layout):
        return make_layout_like(layout.inner if getattr(layout, "_is_composed_layout", False) else layout)
    like.__name__ = "make_tensor_like"  # _make_like's messages name the public function

    if getattr(x, "_is_tensor", False):
        return x._make_like(like, _dtype(dtype) if dtype is not None else None)
    if not is_layout(x):
        raise TypeError(f"make_tensor_like: expected a Tensor or a layout, got {_r(x)}")
    if dtype is None:
        raise TypeError("make_tensor_like: a layout needs dtype=")
    return _new_tensor(like(x), dtype)


@names_caller
def make_fragment_like(layout, dtype=None):
    """Register-fragment layout like ``layout`` (CuTe's rule).

    Mode 0 becomes compact column-major (its stride-0 leaves stay 0); the other
    modes are ordered like ``layout``'s strides and placed after mode 0
    (``tiled_product``). A shape, or a rank-1 layout, gives a compact layout.

    >>> print(make_fragment_like(Layout((2, 4, 3), (12, 1, 4))))
    (2,4,3):(1,2,8)
    >>> print(make_fragment_like(Layout((4, 2), (0, 1))))
    (4,(2)):(0,(1))

    A Tensor gives a new zeroed tensor (same dtype, or ``dtype``) with that
    layout; a layout with ``dtype`` too (CuTe's ``make_fragment_like<T>``).
    """
    if getattr(layout, "_is_tensor", False):
        return layout._make_like(make_fragment_like, dtype)
    if dtype is not None:
        return make_tensor_like(make_fragment_like(layout), dtype)
    if getattr(layout, "_is_composed_layout", False):
        return make_fragment_like(layout.inner)
    if not isinstance(layout, Layout):
        return Layout(layout)
    if not isinstance(layout.shape, tuple) or len(layout.shape) <= 1:
        return Layout(layout.shape)
    s0, d0 = layout.shape[0], layout.stride[0]
    first = Layout._make(s0, it.compact_col_major(it.filter_zeros(d0, s0)))
    rest = Layout._make(layout.shape[1:], it.compact_order(layout.shape[1:], layout.stride[1:]))
    return tiled_product(first, rest)


def _require_tensor(op, t):
    if not getattr(t, "_is_tensor", False):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}: {_r(t)}")


# ---------------------------------------------------------------------------
# recast, max_common_*


@names_caller
def recast(t, new_dtype):
    """View a data tensor's elements as ``new_dtype``: the array viewed as the new type, the layout recast.

    The layout is ``recast_layout(layout, old, new)`` (upcast or downcast by
    the bit ratio), the offset is rescaled, the numpy array is viewed (not
    copied) as ``new_dtype.storage``; a tail of the array too short for a whole
    new element is left out.

    Preconditions: ``offset * bits(old)`` divisible by ``bits(new)`` (else
    DivisibilityError); the layout's strides admit the recast (see
    :func:`~.upcast`); no negative strides when the
    width changes.

    >>> import numpy as np
    >>> t = make_tensor(np.arange(16, dtype=np.float16), Layout((4, 4), (4, 1)))
    >>> r = recast(t, "f32")
    >>> print(r)
    tensor<f32>[8] o (4,2):(2,1)
    >>> print(recast(t, "bf16"))
    tensor<bf16>[16] o (4,4):(4,1)

    A layout (or swizzle) and a scale in place of the tensor and the type is PyCuTe's
    ``recast(layout, scale)``: :func:`~cute_py.recast_by`.
    """
    if is_layout(t) or getattr(t, "_is_swizzle", False):
        return recast_by(t, new_dtype)
    _require_tensor("recast", t)
    new = _dtype(new_dtype)
    if t.is_identity:
        raise TypeError("recast: an identity tensor has no element type to recast")
    if new.storage is None:
        raise TypeError(f"recast: {new} has no numpy storage type")
    eng = t.engine
    ob = t.dtype.bits if t.dtype is not None else eng.dtype.itemsize * 8
    nb = new.bits
    if ob == nb:
        layout, offset = t.layout, t.offset
    else:
        flat = it.flatten_to_tuple(getattr(t.layout, "inner", t.layout).stride)
        if any(d < 0 for d in flat):
            raise layout_error(LayoutError, "recast", "negative strides are not supported when the width changes",
                               layout=t.layout)
        if (t.offset * ob) % nb:
            raise layout_error(DivisibilityError, "recast", "offset is not a whole number of new elements",
                               f"offset {t.offset} x {ob} bits is not a multiple of {nb} bits", layout=t.layout)
        layout = recast_layout(t.layout, ob, nb)
        offset = t.offset * ob // nb
    keep = eng.shape[0] * ob // nb
    view = eng[: keep * nb // ob].view(new.storage)
    return Tensor(view, layout, offset, dtype=new)
