"""as_device_array / cute_py.interop.layout_of without a GPU and without torch: fake objects exposing
__cuda_array_interface__ (v2 and v3), DLPack capsules built by hand, raw pointers, and the errors."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cute_py import Layout
from cute_py import runtime as rt
from cute_py.interop import layout_of
from cute_py.runtime import arrays as amod

PTR = 0x7F0000000000


class FakeCAI:
    def __init__(self, shape, typestr, strides=None, ptr=PTR, dtype=None, version=3, readonly=False, **extra):
        cai = {"version": version, "data": (ptr, readonly), "shape": shape, "typestr": typestr}
        if version >= 3 or strides is not None:
            cai["strides"] = strides
        cai.update(extra)
        self.__cuda_array_interface__ = cai
        if dtype is not None:
            self.dtype = dtype


@pytest.mark.parametrize("typestr, name", [
    ("|i1", "s8"), ("|u1", "u8"), ("<i2", "s16"), ("<u2", "u16"), ("<f2", "f16"), ("<i4", "s32"), ("<u4", "u32"),
    ("<f4", "f32"), ("<i8", "s64"), ("<u8", "u64"), ("<f8", "f64"), ("=f4", "f32"),
])
def test_typestrs(typestr, name):
    a = rt.as_device_array(FakeCAI((4, 8), typestr))
    assert a.dtype.name == name
    assert a.strides == (8, 1) and a.byte_strides == (8 * a.itemsize, a.itemsize)
    assert a.ptr == PTR and a.protocol == "cuda_array_interface" and a.device is None


def test_c_contiguous_default_and_explicit_strides():
    a = rt.as_device_array(FakeCAI((128, 64), "<f2"))
    assert a.shape == (128, 64) and a.strides == (64, 1) and a.is_c_contiguous
    b = rt.as_device_array(FakeCAI((64, 128), "<f2", strides=(2, 128)))          # a transposed view
    assert b.strides == (1, 64) and not b.is_c_contiguous and b.nbytes == 64 * 128 * 2
    v2 = rt.as_device_array(FakeCAI((3, 5), "<f4", version=2))                  # v2: no 'strides' key
    assert v2.strides == (5, 1)


def test_torch_bf16_typestr_is_disambiguated_by_the_dtype_attribute():
    a = rt.as_device_array(FakeCAI((16, 16), "<V2", dtype="torch.bfloat16"))
    assert a.dtype.name == "bf16" and a.strides == (16, 1)
    assert rt.as_device_array(FakeCAI((4,), "<V2", dtype="bfloat16")).dtype.name == "bf16"  # jax / ml_dtypes
    assert rt.as_device_array(FakeCAI((4,), "<V2"), dtype="bf16").dtype.name == "bf16"
    with pytest.raises(rt.ArrayError, match="dtype="):
        rt.as_device_array(FakeCAI((4,), "<V2"))
    with pytest.raises(rt.ArrayError, match="dtype="):
        rt.as_device_array(FakeCAI((4,), "<V2", dtype="torch.complex32"))


def test_fp8_names():
    assert rt.as_device_array(FakeCAI((4,), "|u1", dtype="torch.float8_e4m3fn")).dtype.name == "e4m3"
    assert rt.as_device_array(FakeCAI((4,), "|V1", dtype="float8_e5m2")).dtype.name == "e5m2"
    with pytest.raises(rt.ArrayError, match="not supported"):
        rt.as_device_array(FakeCAI((4,), "|u1", dtype="torch.float8_e4m3fnuz"))


def test_dtype_argument_reinterprets_storage_or_complains():
    assert rt.as_device_array(FakeCAI((8,), "<u2"), dtype="bf16").dtype.name == "bf16"
    assert rt.as_device_array(FakeCAI((8,), "<i2"), dtype="bf16").dtype.name == "bf16"
    assert rt.as_device_array(FakeCAI((8,), "|u1"), dtype="e4m3").dtype.name == "e4m3"
    assert rt.as_device_array(FakeCAI((8,), "<f2"), dtype="half").dtype.name == "f16"
    with pytest.raises(rt.ArrayError, match="wrong dtype"):
        rt.as_device_array(FakeCAI((8,), "<f4"), dtype="bf16")
    with pytest.raises(rt.ArrayError, match="wrong dtype"):
        rt.as_device_array(FakeCAI((8,), "<f2"), dtype="bf16")
    with pytest.raises(TypeError):
        rt.as_device_array(FakeCAI((8,), "<f2"), dtype="nonsense")


def test_shape_argument_must_match():
    assert rt.as_device_array(FakeCAI((2, 3), "<f4"), shape=(2, 3)).shape == (2, 3)
    with pytest.raises(rt.ArrayError, match="shape"):
        rt.as_device_array(FakeCAI((2, 3), "<f4"), shape=(3, 2))


@pytest.mark.parametrize("kwargs, match", [
    (dict(shape=(4,), typestr="<f4", ptr=PTR + 2), "misaligned pointer"),
    (dict(shape=(4, 4), typestr="<f4", strides=(6, 4)), "not multiples of the element size"),
    (dict(shape=(4,), typestr=">f4"), "big-endian"),
    (dict(shape=(4,), typestr="<c8"), "unsupported typestr"),
    (dict(shape=(4,), typestr="|b1"), "dtype="),
    (dict(shape=(4,), typestr="<f4", mask=object()), "masked"),
])
def test_errors(kwargs, match):
    with pytest.raises(rt.ArrayError, match=match):
        rt.as_device_array(FakeCAI(**kwargs))


def test_malformed_interface():
    class Bad:
        __cuda_array_interface__ = {"shape": (2,)}

    with pytest.raises(rt.ArrayError, match="malformed"):
        rt.as_device_array(Bad())


def test_readonly_and_empty_arrays():
    a = rt.as_device_array(FakeCAI((0, 4), "<f4", ptr=0, readonly=True))
    assert a.readonly and a.size == 0 and a.nbytes == 0
    assert rt.as_device_array(FakeCAI((4,), "<f4", ptr=PTR + 4)).ptr == PTR + 4   # 4-byte aligned is enough


def test_cpu_arrays_are_refused():
    with pytest.raises(rt.ArrayError, match="CPU"):
        rt.as_device_array(np.zeros((4, 4), np.float32))

    class HostOnly:
        def __array__(self):
            return np.zeros(2)

    with pytest.raises(rt.ArrayError, match="CPU"):
        rt.as_device_array(HostOnly())
    with pytest.raises(rt.ArrayError, match="neither"):
        rt.as_device_array(object())


def test_raw_pointers():
    a = rt.as_device_array(PTR, shape=(64, 32), dtype="bf16")
    assert a.strides == (32, 1) and a.byte_strides == (64, 2) and a.protocol == "pointer" and a.owner is None
    b = rt.as_device_array(ctypes.c_void_p(PTR), shape=(64, 32), strides=(1, 64), dtype="f32")
    assert b.byte_strides == (4, 256)
    c = rt.as_device_array(PTR, shape=16, dtype="u8")
    assert c.shape == (16,) and c.strides == (1,)
    with pytest.raises(rt.ArrayError, match="shape= and dtype="):
        rt.as_device_array(PTR, shape=(4,))
    with pytest.raises(rt.ArrayError, match="misaligned"):
        rt.as_device_array(PTR + 1, shape=(4,), dtype="f16")
    with pytest.raises(rt.ArrayError, match="sub-byte"):
        rt.as_device_array(PTR, shape=(4,), dtype="s4")
    with pytest.raises(rt.ArrayError):
        rt.as_device_array(True, shape=(4,), dtype="f16")
    with pytest.raises(rt.ArrayError, match="only for raw pointers"):
        rt.as_device_array(FakeCAI((4,), "<f4"), strides=(1,))


def test_cuda_bindings_device_pointer():
    d = pytest.importorskip("cuda.bindings.driver")
    assert rt.as_device_array(d.CUdeviceptr(PTR), shape=(2,), dtype="f64").ptr == PTR


def test_device_array_exposes_the_interface_and_round_trips():
    a = rt.as_device_array(FakeCAI((16, 8), "<V2", strides=(2, 32), dtype="torch.bfloat16"))
    cai = a.__cuda_array_interface__
    assert cai["typestr"] == "<V2" and cai["strides"] == (2, 32) and cai["data"] == (PTR, False)
    again = rt.as_device_array(type("X", (), {"__cuda_array_interface__": cai, "dtype": "bfloat16"})())
    assert again == a
    assert rt.as_device_array(a) is a
    assert rt.as_device_array(rt.as_device_array(FakeCAI((4,), "<u2")), dtype="bf16").dtype.name == "bf16"


# ---------------------------------------------------------------------------
# DLPack: capsules built by hand with ctypes, as a CUDA producer would hand them over

_NAME = b"dltensor"
_NAME_V = b"dltensor_versioned"


class FakeDLPack:
    """An object whose __dlpack__ returns a DLPack capsule describing device memory (never dereferenced)."""

    def __init__(self, shape, code, bits, strides=None, device_type=2, versioned=False, byte_offset=0, flags=0):
        n = len(shape)
        self._shape = (ctypes.c_int64 * n)(*shape)
        self._strides = (ctypes.c_int64 * n)(*strides) if strides is not None else None
        t = amod._DLTensor()
        t.data = PTR
        t.device = amod._DLDevice(device_type, 0)
        t.ndim = n
        t.dtype = amod._DLDataType(code, bits, 1)
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        t.byte_offset = byte_offset
        if versioned:
            self._mt = amod._DLManagedTensorVersioned(amod._DLPackVersion(1, 0), None, None, flags, t)
        else:
            self._mt = amod._DLManagedTensor(t, None, None)
        self._versioned = versioned
        self.device_type = device_type
        self.calls = []

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        self.calls.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._mt), _NAME_V if self._versioned else _NAME, None)


@pytest.fixture
def no_cuda_core(monkeypatch):
    """Force the built-in capsule reader (cuda.core may be installed)."""
    def missing(*a, **k):
        raise ImportError("cuda.core")

    monkeypatch.setattr(amod, "_from_cuda_core", missing)


def test_dlpack_capsule_reader(no_cuda_core):
    obj = FakeDLPack((32, 64), code=4, bits=16)                   # kDLBfloat
    a = rt.as_device_array(obj)
    assert a.dtype.name == "bf16" and a.shape == (32, 64) and a.strides == (64, 1) and a.protocol == "dlpack"
    assert a.ptr == PTR and a.device == 0 and a.owner is obj
    assert obj.calls == [-1]                                      # no stream synchronization requested


def test_dlpack_strides_offset_and_versioned(no_cuda_core):
    a = rt.as_device_array(FakeDLPack((8, 4), code=2, bits=32, strides=(1, 8), byte_offset=64))
    assert a.strides == (1, 8) and a.byte_strides == (4, 32) and a.ptr == PTR + 64 and a.dtype.name == "f32"
    b = rt.as_device_array(FakeDLPack((4,), code=10, bits=8, versioned=True, flags=1))   # float8_e4m3fn
    assert b.dtype.name == "e4m3" and b.readonly
    assert rt.as_device_array(FakeDLPack((4,), code=14, bits=8)).dtype.name == "ue8m0"   # float8_e8m0fnu (scales)


def test_dlpack_errors(no_cuda_core):
    with pytest.raises(rt.ArrayError, match="CPU"):
        rt.as_device_array(FakeDLPack((4,), code=2, bits=32, device_type=1))
    with pytest.raises(rt.ArrayError, match="unsupported DLPack dtype"):
        rt.as_device_array(FakeDLPack((4,), code=5, bits=64))     # complex
    with pytest.raises(rt.ArrayError, match="wrong dtype"):
        rt.as_device_array(FakeDLPack((4,), code=2, bits=32), dtype="bf16")


def test_numpy_dlpack_capsule_is_read_exactly():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]
    ptr, dev, _, shape, strides, dt, _ro = amod.read_dlpack_capsule(x.__dlpack__())
    assert (ptr, dev, shape, strides, dt) == (x.ctypes.data, 1, (3, 2), (4, 2), (0, 16, 1))


def test_dlpack_through_cuda_core_if_installed():
    pytest.importorskip("cuda.core.utils", reason="cuda.core not installed (optional)")
    with pytest.raises(rt.ArrayError, match="CPU"):
        rt.as_device_array(FakeDLPack((4,), code=2, bits=32, device_type=1))
    a = amod._from_cuda_core(FakeDLPack((32, 64), code=2, bits=32, strides=(1, 32)), None, None, 0)
    assert a.dtype.name == "f32" and a.strides == (1, 32) and a.ptr == PTR and a.protocol == "dlpack"
    # bf16 without ml_dtypes makes cuda.core give up: the capsule reader takes over
    assert rt.as_device_array(FakeDLPack((4,), code=4, bits=16)).dtype.name == "bf16"


# ---------------------------------------------------------------------------
# layout_of: above runtime, in cute_py.interop (runtime takes ints and buffers, not Layouts)


def test_runtime_has_no_layouts():
    assert not hasattr(rt, "layout_of") and not hasattr(amod, "layout_of") and "layout_of" not in rt.__all__
    assert not hasattr(rt.as_device_array(PTR, shape=(5, 6), dtype="f32"), "layout")


def test_layout_of_follows_the_array_strides():
    assert layout_of(FakeCAI((128, 64), "<f2")) == Layout((128, 64), (64, 1))      # (M,K):(K,1)
    assert layout_of(FakeCAI((64, 128), "<f2", strides=(2, 128))) == Layout((64, 128), (1, 64))
    assert layout_of(FakeCAI((2, 3, 4), "<f4")) == Layout((2, 3, 4), (12, 4, 1))
    assert layout_of(FakeCAI((7,), "<f4")) == Layout(7, 1)
    assert layout_of(FakeCAI((), "<f4")) == Layout(1, 0)
    a = rt.as_device_array(PTR, shape=(5, 6), dtype="f32")
    lay = layout_of(a)
    assert all(lay(i, j) * 4 == i * a.byte_strides[0] + j * a.byte_strides[1] for i in range(5) for j in range(6))


def test_layout_of_feeds_make_tma_params():
    from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem

    a = rt.as_device_array(FakeCAI((512, 256), "<V2", dtype="torch.bfloat16"))
    p = make_tma_params(layout_of(a), tile_smem(smem_atom("K", 128, "bf16"), 128, 64), "bf16")
    assert p.global_dim == (256, 512) and p.global_strides == (512,) and p.box_dim == (64, 128)
