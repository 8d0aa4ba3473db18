"""``cute_py.interop``: device arrays as cute_py layouts.

:func:`cute_py.runtime.as_device_array` reads any device array (torch,
cupy, jax, anything with ``__cuda_array_interface__`` or ``__dlpack__``, or
a raw pointer) into a plain record of ints; runtime takes ints and buffers,
not Layouts. This module, above both runtime and the algebra, turns such a
record into a :class:`~cute_py.Layout`, e.g. to derive TMA parameters from
the array itself.

>>> from cute_py.runtime import as_device_array
>>> print(layout_of(as_device_array(0x10000, shape=(128, 64), dtype="f16")))
(128,64):(64,1)
"""

from __future__ import annotations

from .layouts import Layout
from .runtime.arrays import DeviceArray, as_device_array

__all__ = ["layout_of"]


def layout_of(array) -> Layout:
    """The cute_py Layout of an array: its shape with its element strides, mode ``i`` = array dimension ``i``.

    ``array`` is a :class:`~cute_py.runtime.DeviceArray` or anything
    :func:`~cute_py.runtime.as_device_array` accepts.

    Postcondition: ``layout_of(a)(i0, i1, ...)`` is the element offset of
    ``a[i0, i1, ...]`` from ``a.ptr``. A C-contiguous ``(M, K)`` array is
    ``(M,K):(K,1)`` (CuTe reads coordinates column-major, but the strides
    are the array's own, so the function is the array's indexing). A 0-d
    array is ``1:0``; a 1-d array has a rank-1 (unwrapped) layout.

    >>> from cute_py.runtime import as_device_array
    >>> print(layout_of(as_device_array(0x10000, shape=(64, 32), dtype="bf16")))
    (64,32):(32,1)
    >>> print(layout_of(as_device_array(0x10000, shape=(64, 32), strides=(1, 64), dtype="bf16")))
    (64,32):(1,64)
    >>> layout_of(as_device_array(0x10000, shape=(64, 32), dtype="bf16"))(3, 2) == 3 * 32 + 2
    True
    """
    a = array if isinstance(array, DeviceArray) else as_device_array(array)
    if not a.shape:
        return Layout(1, 0)
    if len(a.shape) == 1:
        return Layout(a.shape[0], a.strides[0])
    return Layout(tuple(a.shape), tuple(a.strides))
