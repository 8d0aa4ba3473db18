"""Element types: the DType constants, ``dtype()`` lookup, numpy mapping, decoding, and
``sizeof_bits`` (which reads its widths from ``dtype``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import cute_py
import cute_py.dtypes as public_dtypes
from cute_py.layouts import dtypes as D
from cute_py.layouts import recast as recast_mod

ALL = [getattr(D, n) for n in D.__all__ if isinstance(getattr(D, n), D.DType)]


def test_required_constants_exist_with_ptx_names():
    want = {"bf16": 16, "f16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8,
            "u8": 8, "s32": 32, "u32": 32, "s16": 16, "u16": 16, "b16": 16, "b32": 32, "u64": 64}
    for name, bits in want.items():
        d = getattr(D, name)
        assert d.name == name and d.bits == bits
        assert d.ptx == name  # the PTX type suffix is the CuTe name for all of these
    assert (D.bf16.kind, D.s8.kind, D.u32.kind, D.b16.kind) == ("float", "int", "uint", "bits")


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_each_constant_roundtrips_and_is_consistent(d):
    assert D.dtype(d.name) is d
    assert D.dtype(d.name.upper()) is d
    assert D.dtype(d) is d
    assert d.bits >= 1 and d.kind in ("float", "int", "uint", "bits")
    assert str(d) == d.name
    if d.numpy is not None:
        assert d.numpy.itemsize * 8 == d.bits
        assert D.dtype(d.numpy) is d
        assert D.dtype(d.numpy.type) is d
        assert d.storage == d.numpy
    if d.storage is not None:
        assert d.storage.itemsize * 8 == d.bits
    else:
        assert d.bits < 8  # only sub-byte types have no numpy storage


def test_names_are_unique_and_constants_frozen():
    assert len({d.name for d in ALL}) == len(ALL)
    with pytest.raises(dataclasses.FrozenInstanceError):
        D.f32.bits = 16


@pytest.mark.parametrize("alias, name", [
    ("half", "f16"), ("float16", "f16"), ("fp16", "f16"), ("bfloat16", "bf16"), ("float", "f32"),
    ("float32", "f32"), ("fp32", "f32"), ("double", "f64"), ("float64", "f64"), ("int8", "s8"),
    ("i8", "s8"), ("uint8", "u8"), ("int32", "s32"), ("uint32", "u32"), ("int16", "s16"),
    ("fp8_e4m3", "e4m3"), ("float8_e4m3fn", "e4m3"), ("fp8_e5m2", "e5m2"), ("i4", "s4"),
    ("int64", "s64"), ("uint64", "u64"), ("tfloat32", "tf32"), ("b128", "u128"), (" BF16 ", "bf16"),
])
def test_aliases(alias, name):
    assert D.dtype(alias).name == name


@pytest.mark.parametrize("np_type, name", [
    (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64"), (np.int8, "s8"), (np.uint8, "u8"),
    (np.int16, "s16"), (np.uint16, "u16"), (np.int32, "s32"), (np.uint32, "u32"), (np.int64, "s64"),
    (np.uint64, "u64"),
])
def test_numpy_dtypes_map(np_type, name):
    assert D.dtype(np_type).name == name
    assert D.dtype(np.dtype(np_type)).name == name


def test_types_numpy_lacks_have_no_numpy_but_a_storage():
    for d, storage in ((D.bf16, np.uint16), (D.e4m3, np.uint8), (D.e5m2, np.uint8), (D.tf32, np.float32),
                       (D.b16, np.uint16), (D.b32, np.uint32)):
        assert d.numpy is None
        assert d.storage == np.dtype(storage)


@pytest.mark.parametrize("bad", ["foo", "", "fp8", "f8", "<f2", "float128"])
def test_unknown_names_raise_type_error_listing_valid_names(bad):
    with pytest.raises(TypeError) as e:
        D.dtype(bad)
    assert "bf16" in str(e.value) and "e4m3" in str(e.value)


@pytest.mark.parametrize("bad", [None, 16, 2.5, float, int, object(), np.bool_, np.complex64,
                                 np.dtype("complex128"), [16]])
def test_other_inputs_raise_type_error(bad):
    with pytest.raises(TypeError):
        D.dtype(bad)


def test_bf16_decode_is_the_top_half_of_float32():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    x = (x.view(np.uint32) & 0xFFFF0000).view(np.float32)  # exactly representable in bf16
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    assert np.array_equal(D.bf16.decode(bits), x)


def test_e5m2_decode_is_the_top_byte_of_float16():
    b = np.arange(256, dtype=np.uint8)
    as_f16 = (b.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    got = D.e5m2.decode(b)
    assert np.array_equal(np.isnan(got), np.isnan(as_f16))
    ok = ~np.isnan(got)
    assert np.array_equal(got[ok], as_f16[ok])


def test_e4m3_decode_facts():
    v = D.e4m3.decode(np.arange(256, dtype=np.uint8))
    assert np.isnan(v[0x7F]) and np.isnan(v[0xFF])
    assert np.isfinite(v).sum() == 254           # e4m3fn: no infinities, one NaN per sign
    assert v[0x7E] == 448.0 and v[0xFE] == -448.0  # largest finite
    assert v[0x01] == 2.0 ** -9                   # smallest subnormal
    assert v[0x38] == 1.0 and v[0x40] == 2.0
    pos = v[:0x7F]
    assert np.all(np.diff(pos) > 0)               # codes 0..0x7E increase
    assert np.array_equal(v[0x80:0xFF], -v[:0x7F])


def test_decode_leaves_numpy_types_alone():
    a = np.arange(4, dtype=np.float32)
    assert D.f32.decode(a) is a


def test_sizeof_bits_reads_dtype_and_the_private_table_is_gone():
    assert not hasattr(recast_mod, "_BITS")
    for d in ALL:
        assert cute_py.sizeof_bits(d.name) == d.bits
        assert cute_py.sizeof_bits(d) == d.bits
    assert cute_py.sizeof_bits(np.float16) == 16
    assert cute_py.sizeof_bits("half") == 16
    assert cute_py.sizeof_bits(7) == 7
    with pytest.raises(TypeError, match="sizeof_bits"):
        cute_py.sizeof_bits("nope")
    with pytest.raises(TypeError):
        cute_py.sizeof_bits(None)


def test_recast_layout_accepts_dtypes_and_numpy_types():
    L = cute_py.Layout((8, 64), (64, 1))
    assert cute_py.recast_layout(L, D.f16, np.float32) == cute_py.recast_layout(L, "f16", "f32")
    assert cute_py.recast_layout(L, "e4m3", D.bf16) == cute_py.upcast(L, 2)


def test_public_aliases():
    assert public_dtypes.bf16 is D.bf16
    assert cute_py.dtype("f32") is D.f32
    assert cute_py.DType is D.DType
    assert cute_py.dtypes.f16 is D.f16
