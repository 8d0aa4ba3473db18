"""Element types: :class:`DType` and the constants ``bf16``, ``f16``, ``f32``, ``e4m3`` ...

A :class:`DType` is a small immutable record: its name (CuTe / PTX spelling),
its width in bits, its kind (``"float"``, ``"int"``, ``"uint"`` or ``"bits"``)
and the PTX type suffix. :func:`dtype` turns a name, an alias
(``"half"``, ``"bfloat16"``, ``"float32"`` ...), a numpy dtype or a DType into
a DType. numpy itself is only imported when a numpy dtype is asked for.

>>> dtype("bfloat16"), dtype("half").bits
(DType(name='bf16', bits=16, kind='float', ptx='bf16'), 16)
>>> import numpy as np
>>> dtype(np.float32) is f32, f32.numpy
(True, dtype('float32'))
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DType", "dtype",
    "b1", "s4", "u4", "e2m1", "b8", "s8", "u8", "e4m3", "e5m2", "ue8m0",
    "f16", "bf16", "s16", "u16", "b16", "tf32", "f32", "s32", "u32", "b32",
    "f64", "s64", "u64", "b64", "u128",
]

# name -> numpy dtype name, for the types numpy represents exactly
_NUMPY = {
    "s8": "int8", "u8": "uint8", "f16": "float16", "s16": "int16", "u16": "uint16",
    "f32": "float32", "s32": "int32", "u32": "uint32", "f64": "float64", "s64": "int64", "u64": "uint64",
}
# name -> numpy dtype name used to *store* the bits of a type numpy does not have
_STORAGE = {
    "b8": "uint8", "e4m3": "uint8", "e5m2": "uint8", "ue8m0": "uint8", "bf16": "uint16", "b16": "uint16",
    "tf32": "float32", "b32": "uint32", "b64": "uint64", "u128": "V16",
}


@dataclass(frozen=True)
class DType:
    """An element type: ``name`` (CuTe/PTX spelling), ``bits``, ``kind`` and ``ptx`` suffix.

    Invariants: ``bits >= 1``; ``kind`` is one of ``"float"``, ``"int"``,
    ``"uint"``, ``"bits"``; ``dtype(d.name) is d`` for every constant.

    >>> bf16
    DType(name='bf16', bits=16, kind='float', ptx='bf16')
    >>> str(e4m3), e4m3.bits, e4m3.numpy is None, e4m3.storage
    ('e4m3', 8, True, dtype('uint8'))
    """

    name: str
    bits: int
    kind: str
    ptx: str

    def __str__(self) -> str:
        return self.name

    @property
    def numpy(self):
        """The numpy dtype of exactly this type, or ``None`` (bf16, tf32, fp8, bit types, sub-byte types).

        >>> f16.numpy, bf16.numpy
        (dtype('float16'), None)
        """
        name = _NUMPY.get(self.name)
        if name is None:
            return None
        import numpy as np

        return np.dtype(name)

    @property
    def storage(self):
        """The numpy dtype that holds the bits of one element (``numpy`` where it exists).

        bf16/b16 are stored as ``uint16``, e4m3/e5m2/b8 as ``uint8``, tf32 as
        ``float32``, u128 as 16-byte void; sub-byte types have no storage (``None``).

        >>> bf16.storage, tf32.storage, s4.storage
        (dtype('uint16'), dtype('float32'), None)
        """
        name = _NUMPY.get(self.name) or _STORAGE.get(self.name)
        if name is None:
            return None
        import numpy as np

        return np.dtype(name)

    def decode(self, bits):
        """Values of stored elements as numpy floats or ints (bf16, e4m3, e5m2, ue8m0 decoded to float32).

        ``bits`` is a numpy array (or scalar) of :attr:`storage` values; types numpy
        represents are returned unchanged.

        >>> import numpy as np
        >>> bf16.decode(np.array([0x3F80, 0xC000], dtype=np.uint16))
        array([ 1., -2.], dtype=float32)
        >>> e4m3.decode(np.array([0x38, 0x7E, 0x01], dtype=np.uint8)).tolist()
        [1.0, 448.0, 0.001953125]
        >>> ue8m0.decode(np.array([127, 130, 120], dtype=np.uint8)).tolist()
        [1.0, 8.0, 0.0078125]
        """
        import numpy as np

        if self.name == "bf16":
            return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        if self.name in ("e4m3", "e5m2", "ue8m0"):
            return _fp8_table(self.name)[np.asarray(bits, dtype=np.uint8)]
        return bits


_FP8 = {}


def _fp8_table(name):
    """The 256 float32 values of an 8-bit float format (e4m3: OCP ``float8_e4m3fn``; e5m2: IEEE-like; ue8m0: OCP
    ``float8_e8m0fnu``, the exponent alone: ``2^(e - 127)``, 255 NaN)."""
    if name not in _FP8:
        import numpy as np

        if name == "ue8m0":
            _FP8[name] = np.array([2.0 ** (e - 127) for e in range(255)] + [float("nan")], dtype=np.float32)
            return _FP8[name]

        ebits, mbits = (4, 3) if name == "e4m3" else (5, 2)
        bias = (1 << (ebits - 1)) - 1
        vals = []
        for b in range(256):
            sign = -1.0 if b & 0x80 else 1.0
            e = (b >> mbits) & ((1 << ebits) - 1)
            m = b & ((1 << mbits) - 1)
            if name == "e4m3" and e == 15 and m == 7:
                v = float("nan")
            elif name == "e5m2" and e == 31:
                v = float("inf") if m == 0 else float("nan")
            elif e == 0:
                v = m / (1 << mbits) * 2.0 ** (1 - bias)
            else:
                v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
            vals.append(sign * v)
        _FP8[name] = np.array(vals, dtype=np.float32)
    return _FP8[name]


b1 = DType("b1", 1, "bits", "b1")
s4 = DType("s4", 4, "int", "s4")
u4 = DType("u4", 4, "uint", "u4")
e2m1 = DType("e2m1", 4, "float", "e2m1")
b8 = DType("b8", 8, "bits", "b8")
s8 = DType("s8", 8, "int", "s8")
u8 = DType("u8", 8, "uint", "u8")
e4m3 = DType("e4m3", 8, "float", "e4m3")
e5m2 = DType("e5m2", 8, "float", "e5m2")
ue8m0 = DType("ue8m0", 8, "float", "ue8m0")
f16 = DType("f16", 16, "float", "f16")
bf16 = DType("bf16", 16, "float", "bf16")
s16 = DType("s16", 16, "int", "s16")
u16 = DType("u16", 16, "uint", "u16")
b16 = DType("b16", 16, "bits", "b16")
tf32 = DType("tf32", 32, "float", "tf32")
f32 = DType("f32", 32, "float", "f32")
s32 = DType("s32", 32, "int", "s32")
u32 = DType("u32", 32, "uint", "u32")
b32 = DType("b32", 32, "bits", "b32")
f64 = DType("f64", 64, "float", "f64")
s64 = DType("s64", 64, "int", "s64")
u64 = DType("u64", 64, "uint", "u64")
b64 = DType("b64", 64, "bits", "b64")
u128 = DType("u128", 128, "uint", "b128")

_ALL = (b1, s4, u4, e2m1, b8, s8, u8, e4m3, e5m2, ue8m0, f16, bf16, s16, u16, b16, tf32, f32, s32, u32, b32,
        f64, s64, u64, b64, u128)
_BY_NAME = {d.name: d for d in _ALL}
_ALIASES = {
    "u1": b1, "bin1": b1, "i4": s4, "int4": s4, "uint4": u4, "fp4": e2m1, "float4_e2m1fn": e2m1,
    "i8": s8, "int8": s8, "uint8": u8,
    "fp8_e4m3": e4m3, "float8_e4m3": e4m3, "float8_e4m3fn": e4m3, "float_e4m3": e4m3,
    "fp8_e5m2": e5m2, "float8_e5m2": e5m2, "float_e5m2": e5m2,
    "e8m0": ue8m0, "float8_e8m0fnu": ue8m0, "float_ue8m0": ue8m0,
    "fp16": f16, "half": f16, "float16": f16, "half_t": f16,
    "bfloat16": bf16, "bfloat16_t": bf16, "i16": s16, "int16": s16, "uint16": u16,
    "tfloat32": tf32, "tfloat32_t": tf32,
    "fp32": f32, "float": f32, "float32": f32, "i32": s32, "int32": s32, "uint32": u32,
    "fp64": f64, "double": f64, "float64": f64, "i64": s64, "int64": s64, "uint64": u64,
    "uint128": u128, "b128": u128,
}
_NUMPY_TO = {"int8": s8, "uint8": u8, "float16": f16, "int16": s16, "uint16": u16, "float32": f32,
             "int32": s32, "uint32": u32, "float64": f64, "int64": s64, "uint64": u64}


def _valid_names() -> str:
    return ", ".join(d.name for d in _ALL) + " (aliases: " + ", ".join(sorted(_ALIASES)) + ")"


def dtype(x) -> DType:
    """The :class:`DType` named by ``x``: a DType, a name or alias (case-insensitive), or a numpy dtype.

    Names are CuTe/PTX spellings (``"bf16"``, ``"f32"``, ``"e4m3"``, ``"s8"`` ...);
    aliases include ``"half"``, ``"float16"``, ``"bfloat16"``, ``"float"``
    (32-bit, as in C), ``"double"``, ``"int8"``, ``"fp8_e4m3"``. numpy dtypes
    (or scalar types) map where one type matches: ``float16 -> f16``,
    ``int32 -> s32`` ...

    Raises TypeError, listing the valid names, for anything else.

    >>> dtype("F32") is f32, dtype("fp8_e5m2").name, dtype(u8) is u8
    (True, 'e5m2', True)
    >>> import numpy as np
    >>> dtype(np.dtype("int8")).name, dtype(np.uint32).ptx
    ('s8', 'u32')
    """
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        key = x.strip().lower()
        found = _BY_NAME.get(key) or _ALIASES.get(key)
        if found is not None:
            return found
        raise TypeError(f"dtype: unknown type name {x!r}; valid names: {_valid_names()}")
    np = _numpy_if_loaded(x)
    if np is not None:
        try:
            d = np.dtype(x)
        except TypeError:
            d = None
        if d is not None and d.name in _NUMPY_TO:
            return _NUMPY_TO[d.name]
        raise TypeError(f"dtype: numpy type {x!r} has no cute_py DType; valid names: {_valid_names()}")
    raise TypeError(f"dtype: expected a DType, a type name or a numpy dtype, got {type(x).__name__} {x!r}; "
                    f"valid names: {_valid_names()}")


def _numpy_if_loaded(x):
    """numpy, if ``x`` is a numpy dtype or numpy scalar type (without importing numpy otherwise)."""
    import sys

    np = sys.modules.get("numpy")
    if np is None:
        return None
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return np
    return None
