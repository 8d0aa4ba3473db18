"""Device arrays from other libraries, without importing them: a pointer, a shape, strides and a dtype.

:func:`as_device_array` reads, in this order:

1. ``__cuda_array_interface__`` (v2/v3; torch, cupy, numba, jax, cuda.core):
   data pointer, shape, byte strides (``None`` = C-contiguous), typestr.
   torch reports bfloat16 as ``"<V2"`` (raw 2-byte void), like ml_dtypes;
   the object's ``.dtype`` attribute (``torch.bfloat16``, ``bfloat16``)
   disambiguates, or pass ``dtype=``.
2. ``__dlpack__`` / ``__dlpack_device__``: through cuda.core's
   ``StridedMemoryView`` when cuda.core is importable, otherwise by reading
   the DLPack capsule's C struct directly (without taking ownership).
3. a raw integer device pointer, with explicit ``shape`` and ``dtype``
   (``strides`` in elements, default C-contiguous).

torch is never imported. Nothing here needs a GPU or cuda-python: the
result is a plain record of ints (pointer, extents, strides) and an element
type. Runtime takes ints and buffers, not Layouts: the array as a cute_py
:class:`~cute_py.Layout` is :func:`cute_py.interop.layout_of`, one layer up.

>>> class Fake:  # anything with the CUDA array interface
...     __cuda_array_interface__ = {"version": 3, "data": (0x7f0000000000, False), "shape": (128, 64),
...                                 "strides": None, "typestr": "<f2"}
>>> a = as_device_array(Fake())
>>> a.shape, a.strides, a.byte_strides, a.dtype.name
((128, 64), (64, 1), (128, 2), 'f16')
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

# The one import from below runtime's own package: the element-type table, a leaf module (standard library only).
# DeviceArray.dtype is the same DType value that TmaParams and GemmSpec carry, so they compare equal.
from ..dtypes import DType, dtype as _dtype
from .errors import ArrayError

__all__ = ["DeviceArray", "as_device_array"]

_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i1": "s8", "i2": "s16", "i4": "s32", "i8": "s64",
            "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64"}
# substrings of a library's dtype name -> cute_py type, for types the typestr cannot say
_NAMED = (("float8_e4m3fnuz", None), ("float8_e5m2fnuz", None), ("float8_e4m3b11", None),
          ("bfloat16", "bf16"), ("float8_e4m3", "e4m3"), ("float8_e5m2", "e5m2"), ("float8_e8m0fnu", "ue8m0"))
_DL_CODES = {(0, 8): "s8", (0, 16): "s16", (0, 32): "s32", (0, 64): "s64",
             (1, 8): "u8", (1, 16): "u16", (1, 32): "u32", (1, 64): "u64",
             (2, 16): "f16", (2, 32): "f32", (2, 64): "f64", (4, 16): "bf16",
             (10, 8): "e4m3", (12, 8): "e5m2", (14, 8): "ue8m0"}   # DLPack 1.1: kDLFloat8_e8m0fnu = 14
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA pinned host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm",
             13: "CUDA managed", 14: "oneAPI"}


@dataclass(frozen=True)
class DeviceArray:
    """A device array as cute_py sees it; immutable.

    ``ptr`` (device address of element 0), ``shape``, ``strides`` (in
    elements), ``byte_strides``, ``dtype`` (:class:`~cute_py.dtypes.DType`),
    ``device`` (CUDA ordinal when the producer says, else ``None``: the
    current device), ``readonly``, ``protocol`` (``"cuda_array_interface"``,
    ``"dlpack"`` or ``"pointer"``) and ``owner`` (the object the memory
    belongs to, kept alive by this record). It exposes
    ``__cuda_array_interface__`` itself, so it can be passed anywhere one is
    accepted (including kernel arguments).

    >>> a = as_device_array(0x7f0000000000, shape=(4, 8), dtype="bf16")
    >>> a.nbytes, a.is_c_contiguous, a.__cuda_array_interface__["typestr"]
    (64, True, '<V2')
    """

    ptr: int
    shape: tuple
    strides: tuple
    byte_strides: tuple
    dtype: DType
    device: int | None = None
    readonly: bool = False
    protocol: str = "pointer"
    owner: object = field(default=None, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Number of elements."""
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.bits // 8

    @property
    def nbytes(self) -> int:
        """Bytes from the lowest to one past the highest element address (the span; 0 if empty)."""
        if self.size == 0:
            return 0
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.byte_strides) if s > 0)
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.byte_strides) if s < 0)
        return hi - lo + self.itemsize

    @property
    def is_c_contiguous(self) -> bool:
        """Whether the strides are the row-major (C) compact strides of the shape."""
        return self.strides == _c_strides(self.shape) or self.size <= 1

    @property
    def __cuda_array_interface__(self) -> dict:
        typestr = _typestr_of(self.dtype)
        return {"version": 3, "data": (self.ptr, self.readonly), "shape": self.shape,
                "strides": self.byte_strides, "typestr": typestr, "descr": [("", typestr)], "stream": None}


def _c_strides(shape) -> tuple:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


def _typestr_of(t: DType) -> str:
    for k, v in _TYPESTR.items():
        if v == t.name:
            return ("|" if k.endswith("1") else "<") + k
    return f"<V{t.bits // 8}" if t.bits > 8 else f"|V{t.bits // 8}"


def _hint(obj):
    """The cute_py type a library's ``.dtype`` names when the typestr cannot (bf16, fp8), else None."""
    name = str(getattr(obj, "dtype", "")).lower()
    for key, t in _NAMED:
        if key in name:
            if t is None:
                raise ArrayError(f"as_device_array: dtype {name} is not supported (no cute_py type for it)")
            return _dtype(t)
    return None


def _check_dtype(found: DType | None, requested, what: str) -> DType:
    """Reconcile the detected dtype with ``dtype=``: same-width reinterpretation only of raw storage types."""
    if requested is None:
        if found is None:
            raise ArrayError(f"as_device_array: {what} does not say its element type; pass dtype= "
                             f"(e.g. dtype='bf16')")
        return found
    want = _dtype(requested)
    if found is None or found == want:
        return want
    if found.bits == want.bits and (found.kind in ("uint", "bits") or found.name in ("s8", "s16")):
        return want            # e.g. uint16 storage holding bf16 bits, uint8 holding e4m3
    raise ArrayError(f"as_device_array: wrong dtype: the array holds {found.name} ({found.bits}-bit) but "
                     f"dtype={want.name} was requested; convert the array or pass its own type")


def _finish(ptr, shape, byte_strides, t: DType, device, readonly, protocol, owner, want_shape) -> DeviceArray:
    if t.bits % 8:
        raise ArrayError(f"as_device_array: sub-byte element type {t.name} is not supported for arrays; "
                         f"pack it into u8 storage")
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ArrayError(f"as_device_array: negative extent in shape {shape}")
    if want_shape is not None and tuple(want_shape) != shape:
        raise ArrayError(f"as_device_array: shape {tuple(want_shape)} was requested but the array has {shape}")
    item = t.bits // 8
    byte_strides = tuple(int(s) for s in byte_strides)
    if len(byte_strides) != len(shape):
        raise ArrayError(f"as_device_array: {len(byte_strides)} strides for {len(shape)} dimensions")
    bad = [s for n, s in zip(shape, byte_strides) if n > 1 and s % item]
    if bad:
        raise ArrayError(f"as_device_array: byte strides {byte_strides} are not multiples of the element size "
                         f"{item} ({t.name}); such an array cannot be addressed by element")
    ptr = int(ptr or 0)
    if ptr % item:
        raise ArrayError(f"as_device_array: misaligned pointer {ptr:#x}: {t.name} elements need "
                         f"{item}-byte alignment (a view starting at an odd offset?)")
    strides = tuple(s // item for s in byte_strides)
    return DeviceArray(ptr, shape, strides, byte_strides, t, device, bool(readonly), protocol, owner)


def _from_cai(obj, cai, shape, dtype) -> DeviceArray:
    try:
        ptr, readonly = cai["data"]
        ashape = tuple(cai["shape"])
        typestr = cai["typestr"]
    except (KeyError, TypeError, ValueError) as e:
        raise ArrayError(f"as_device_array: malformed __cuda_array_interface__ ({e}): {cai!r}") from None
    if cai.get("mask") is not None:
        raise ArrayError("as_device_array: masked arrays (__cuda_array_interface__ 'mask') are not supported")
    if typestr[0] not in "<|=":
        raise ArrayError(f"as_device_array: big-endian typestr {typestr!r} is not supported")
    code = typestr[1:]
    hint = _hint(obj)
    if code.startswith("V") or code.startswith("b"):
        found = hint if hint is not None and hint.bits == 8 * int(code[1:] or 0) else None
        if found is None and dtype is None:
            raise ArrayError(f"as_device_array: typestr {typestr!r} is ambiguous (torch reports bfloat16 as '<V2') "
                             f"and the object's dtype {getattr(obj, 'dtype', None)!s} does not name the type; "
                             f"pass dtype= (e.g. dtype='bf16')")
    elif code in _TYPESTR:
        found = _dtype(_TYPESTR[code])
        if hint is not None and hint.bits == found.bits:
            found = hint
    else:
        raise ArrayError(f"as_device_array: unsupported typestr {typestr!r} (complex or boolean element types "
                         f"have no cute_py DType)")
    t = _check_dtype(found, dtype, "the array interface")
    strides = cai.get("strides")
    item = t.bits // 8
    byte_strides = tuple(s * item for s in _c_strides(ashape)) if strides is None else tuple(strides)
    return _finish(ptr, ashape, byte_strides, t, None, readonly, "cuda_array_interface", obj, shape)


def _dlpack_device(obj):
    try:
        dev_type, dev_id = obj.__dlpack_device__()
    except Exception as e:  # noqa: BLE001 - producers raise anything here
        raise ArrayError(f"as_device_array: __dlpack_device__ failed: {e}") from None
    dev_type = int(dev_type)
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise ArrayError(f"as_device_array: the array lives on the {_DL_NAMES.get(dev_type, dev_type)} device, "
                         f"not a CUDA GPU; move it to the GPU first (torch: .cuda(), cupy.asarray, jax.device_put)")
    return int(dev_id)


def _from_cuda_core(obj, shape, dtype, dev_id):
    from cuda.core.utils import StridedMemoryView   # optional dependency; ImportError -> caller falls back

    from_dlpack = getattr(StridedMemoryView, "from_dlpack", None)          # cuda.core >= 1.2
    view = from_dlpack(obj, stream_ptr=-1) if from_dlpack else StridedMemoryView(obj, stream_ptr=-1)
    if not view.is_device_accessible:
        raise ArrayError("as_device_array: the DLPack array is not device accessible; move it to the GPU first")
    name = str(view.dtype)
    found = _dtype(_NAMED_BY_NP.get(name, name)) if name in _NAMED_BY_NP or name in _TYPESTR_NP else None
    t = _check_dtype(found, dtype, f"the DLPack array (dtype {name})")
    item = t.bits // 8
    strides = view.strides if view.strides is not None else _c_strides(view.shape)
    return _finish(view.ptr, view.shape, tuple(s * item for s in strides), t, dev_id, view.readonly, "dlpack",
                   obj, shape)


_NAMED_BY_NP = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float8_e8m0fnu": "ue8m0"}
_TYPESTR_NP = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


def _capsule_pointer(capsule, name: bytes):
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, name):
        return None
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, name)


def read_dlpack_capsule(capsule):
    """``(data_ptr, device_type, device_id, shape, strides_in_elements_or_None, (code, bits, lanes), readonly)``.

    Reads a ``"dltensor"`` or ``"dltensor_versioned"`` capsule without
    consuming it: the producer keeps ownership (its deleter runs when the
    capsule is collected), so the caller must keep the producing object alive.

    >>> import numpy as np
    >>> capsule = np.arange(6, dtype=np.int32).reshape(2, 3).__dlpack__()
    >>> ptr, dev, _, shape, strides, dt, ro = read_dlpack_capsule(capsule)
    >>> dev, shape, dt
    (1, (2, 3), (0, 32, 1))
    """
    p = _capsule_pointer(capsule, b"dltensor")
    readonly = False
    if p is not None:
        t = _DLManagedTensor.from_address(p).dl_tensor
    else:
        p = _capsule_pointer(capsule, b"dltensor_versioned")
        if p is None:
            raise ArrayError("as_device_array: __dlpack__ returned something that is not an unconsumed DLPack "
                             "capsule ('dltensor' or 'dltensor_versioned')")
        mt = _DLManagedTensorVersioned.from_address(p)
        if mt.version.major > 1:
            raise ArrayError(f"as_device_array: DLPack version {mt.version.major}.{mt.version.minor} is not supported")
        readonly = bool(mt.flags & 1)
        t = mt.dl_tensor
    n = t.ndim
    shape = tuple(t.shape[i] for i in range(n))
    strides = tuple(t.strides[i] for i in range(n)) if t.strides else None
    ptr = (t.data or 0) + t.byte_offset
    return (ptr, t.device.device_type, t.device.device_id, shape, strides,
            (t.dtype.code, t.dtype.bits, t.dtype.lanes), readonly)


def _from_dlpack_capsule(obj, shape, dtype, dev_id) -> DeviceArray:
    try:
        capsule = obj.__dlpack__(stream=-1)
    except TypeError:
        capsule = obj.__dlpack__()
    ptr, dev_type, cap_dev, ashape, strides, (code, bits, lanes), readonly = read_dlpack_capsule(capsule)
    if dev_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise ArrayError(f"as_device_array: the DLPack tensor lives on the {_DL_NAMES.get(dev_type, dev_type)} "
                         f"device, not a CUDA GPU; move it to the GPU first")
    if lanes != 1:
        raise ArrayError(f"as_device_array: vector DLPack types (lanes={lanes}) are not supported")
    name = _DL_CODES.get((code, bits))
    if name is None:
        raise ArrayError(f"as_device_array: unsupported DLPack dtype (code {code}, {bits} bits)")
    t = _check_dtype(_dtype(name), dtype, "the DLPack tensor")
    item = t.bits // 8
    strides = strides if strides is not None else _c_strides(ashape)
    return _finish(ptr, ashape, tuple(s * item for s in strides), t, cap_dev, readonly, "dlpack", obj, shape)


def as_device_array(obj, *, shape=None, dtype=None, strides=None) -> DeviceArray:
    """A :class:`DeviceArray` record for ``obj``: a device array of any library, or a raw device pointer.

    ``obj`` may be a :class:`DeviceArray` (returned as is, after the checks
    below), anything with ``__cuda_array_interface__`` (preferred) or
    ``__dlpack__``, or an ``int`` / ``ctypes.c_void_p`` / ``CUdeviceptr``
    device address, for which ``shape`` and ``dtype`` are required and
    ``strides`` (elements) default to C-contiguous. For arrays, ``shape``
    (if given) must equal the array's and ``dtype`` disambiguates (torch's
    bf16 ``"<V2"``) or reinterprets same-width raw storage (``uint16`` ->
    ``bf16``); any other mismatch is an error.

    Postconditions: ``ptr`` is aligned to the element size; every stride is
    a whole number of elements; the owner is referenced by the record.

    Raises :class:`~cute_py.runtime.errors.ArrayError` for CPU (host) arrays
    such as numpy's, misaligned pointers, unsupported or ambiguous element
    types, a wrong ``dtype`` or ``shape``.

    >>> as_device_array(0x10000, shape=(2, 3), dtype="f32").byte_strides
    (12, 4)
    >>> import numpy as np
    >>> as_device_array(np.zeros(4))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.runtime.errors.ArrayError: as_device_array: the array lives on the CPU device, not a CUDA GPU; ...
    """
    if strides is not None and _as_address(obj) is None:
        raise ArrayError("as_device_array: strides= is only for raw pointers; an array brings its own strides")
    if isinstance(obj, DeviceArray):
        if shape is not None and tuple(shape) != obj.shape:
            raise ArrayError(f"as_device_array: shape {tuple(shape)} was requested but the array has {obj.shape}")
        if dtype is not None and _dtype(dtype) != obj.dtype:
            t = _check_dtype(obj.dtype, dtype, "the array")
            return _finish(obj.ptr, obj.shape, obj.byte_strides, t, obj.device, obj.readonly, obj.protocol,
                           obj.owner, None)
        return obj
    cai = None
    if not isinstance(obj, (int, ctypes.c_void_p)):
        try:
            cai = getattr(obj, "__cuda_array_interface__", None)
        except Exception:  # noqa: BLE001 - e.g. a CPU torch tensor refuses; fall through to DLPack
            cai = None
    if cai is not None:
        return _from_cai(obj, cai, shape, dtype)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        dev_id = _dlpack_device(obj)
        try:
            return _from_cuda_core(obj, shape, dtype, dev_id)
        except ImportError:
            pass
        except ArrayError:
            raise
        except Exception:  # noqa: BLE001 - cuda.core could not map it (e.g. bf16 without ml_dtypes): read the capsule
            pass
        return _from_dlpack_capsule(obj, shape, dtype, dev_id)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        raise ArrayError(f"as_device_array: {type(obj).__name__} is a CPU (host) array; move it to the GPU first "
                         f"(torch: .cuda(), cupy.asarray(...))")
    ptr = _as_address(obj)
    if ptr is None:
        raise ArrayError(f"as_device_array: cannot read a device array from {type(obj).__name__}: it has neither "
                         f"__cuda_array_interface__ nor __dlpack__ and is not an integer device pointer")
    if shape is None or dtype is None:
        raise ArrayError("as_device_array: a raw pointer needs shape= and dtype= (and strides= in elements "
                         "unless C-contiguous)")
    t = _dtype(dtype)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    el_strides = _c_strides(shape) if strides is None else (tuple(strides) if isinstance(strides, (tuple, list))
                                                              else (strides,))
    if t.bits % 8:
        return _finish(ptr, shape, el_strides, t, None, False, "pointer", None, None)  # raises: sub-byte
    return _finish(ptr, shape, tuple(s * (t.bits // 8) for s in el_strides), t, None, False, "pointer", None, None)


def _as_address(obj):
    if isinstance(obj, bool):
        return None
    if isinstance(obj, int):
        return obj
    if isinstance(obj, ctypes.c_void_p):
        return obj.value or 0
    if type(obj).__name__ == "CUdeviceptr":
        return int(obj)
    return None
