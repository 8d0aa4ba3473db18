"""Fake device arrays for tests without a GPU: cute_py reads them through ``__cuda_array_interface__``."""

from __future__ import annotations


class FakeArray:
    """A device array as cute_py reads it: shape, strides (elements), type; nothing behind the pointer."""

    _TYPESTR = {"f16": "<f2", "bf16": "<V2", "f32": "<f4"}

    def __init__(self, shape, strides=None, dtype="bf16", ptr=1 << 40):
        shape = tuple(shape)
        if strides is None:
            strides = (shape[1], 1) if len(shape) == 2 else (1,)
        item = 4 if dtype == "f32" else 2
        self.dtype = "bfloat16" if dtype == "bf16" else dtype       # what torch's .dtype says for bf16
        self.__cuda_array_interface__ = {"version": 3, "data": (ptr, False), "shape": shape,
                                         "typestr": self._TYPESTR[dtype],
                                         "strides": tuple(s * item for s in strides)}
        self._args = shape, tuple(strides), dtype, ptr

    @property
    def shape(self):
        return self._args[0]

    def swapaxes(self, i, j):
        """The view with its last two dimensions swapped (as numpy's and cupy's ``swapaxes(-2, -1)``)."""
        assert (i, j) == (-2, -1)
        shape, strides, dtype, ptr = self._args
        return FakeArray(shape[:-2] + shape[-2:][::-1], strides[:-2] + strides[-2:][::-1], dtype, ptr)


def operands(M, N, K, layout="tn", dtype="bf16"):
    """``a`` (M, K) and ``b`` (K, N) with BLAS layout ``layout`` (t = A K-major / B N-major)."""
    a = FakeArray((M, K), (K, 1) if layout[0] == "t" else (1, M), dtype)
    b = FakeArray((K, N), (N, 1) if layout[1] == "t" else (1, K), dtype, ptr=1 << 41)
    return a, b
