"""The array library an array comes from (torch or cupy), used without importing it ourselves.

cute_py reads arrays through ``__cuda_array_interface__`` / DLPack and never
imports torch. Where it must make arrays (D when ``out`` is None, the split-K
workspace) or compute on them (autotune's result check), it asks the library
of an array the caller passed, found in ``sys.modules``. Element types are
cute_py's names ("bf16", "f16", "f32", "s32"); cupy has no bf16 and holds it
as raw uint16 words.
"""

from __future__ import annotations

import struct
import sys

from .dtypes import dtype
from .problem import GemmInputError

__all__ = ["library", "library_dtype", "current_stream", "allocator", "zeros", "swap_last", "host_ints", "f32_copy", "fill", "rel_err", "LIBRARIES", "ArrayLibraryError"]

LIBRARIES = ("torch", "cupy")
_TORCH = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "s32": "int32"}


class ArrayLibraryError(GemmInputError):
    """An array whose library cute_py cannot allocate with or compute on (neither torch nor cupy).

    >>> from cute_py import GemmInputError
    >>> issubclass(ArrayLibraryError, GemmInputError)
    True
    """


def library(x) -> str:
    """The top-level module of ``x``'s type: ``"torch"``, ``"cupy"``, ...

    >>> import numpy as np
    >>> library(np.zeros(2))
    'numpy'
    """
    return type(x).__module__.split(".")[0]


def library_dtype(mod, t: str):
    """The dtype object of library ``mod`` (the torch or cupy module) for cute_py's element type ``t``
    ("bf16", "f16", "f32", "s32"; cupy's bf16 is raw ``uint16``).

    >>> import numpy
    >>> library_dtype(numpy, "f16")          # numpy names its types as cupy does
    <class 'numpy.float16'>
    """
    if mod.__name__ == "torch":
        return getattr(mod, _TORCH[t])
    return getattr(mod, dtype(t).storage.name)        # numpy's naming: cupy keeps bf16 as its uint16 storage


def current_stream(x) -> int:
    """The stream the library of ``x`` launches its own work on for ``x``'s device, as a ``CUstream`` handle:
    torch's current stream, cupy's current stream, the ``stream`` of a version-3 CUDA array interface; 0 (the
    legacy default stream) when the array says nothing. Launching there orders a kernel with the library's own
    work on ``x`` and, while that stream is being captured, puts it in the CUDA graph.

    >>> import numpy as np
    >>> current_stream(np.zeros(2))
    0
    >>> class Producer:               # a CUDA array interface v3 producer working on stream 0x5000
    ...     __cuda_array_interface__ = {"version": 3, "data": (1 << 40, False), "shape": (2,), "typestr": "<f2",
    ...                                 "stream": 0x5000}
    >>> hex(current_stream(Producer()))
    '0x5000'
    """
    lib = library(x)
    if lib == "torch":
        dev = x.device
        if dev.type != "cuda":
            return 0
        torch = sys.modules["torch"]
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)      # the handle without a Stream object
        return raw(dev.index) if raw is not None else torch.cuda.current_stream(dev).cuda_stream
    if lib == "cupy":
        return sys.modules["cupy"].cuda.get_current_stream().ptr
    cai = getattr(x, "__cuda_array_interface__", None)
    s = cai.get("stream") if isinstance(cai, dict) else None
    return s if isinstance(s, int) and not isinstance(s, bool) else 0


_OUT_HINT = "pass out= (or torch/cupy arrays)"


def _module(x, op: str, doing: str, hint: str = "pass torch or cupy arrays"):
    """``(library name, module)`` of ``x``; raises :class:`ArrayLibraryError` "``op``: cannot ``doing`` a <type>"."""
    lib = library(x)
    if lib not in LIBRARIES:
        raise ArrayLibraryError(f"{op}: cannot {doing} a {type(x).__name__} (only torch and cupy arrays); {hint}")
    return lib, sys.modules[lib]


def allocator(like, op: str = "gemm", what: str = "the output", hint: str = _OUT_HINT):
    """``new(shape, dtype_name)``: empty device arrays from the library (and device) of ``like``, without
    keeping ``like`` alive. Raises :class:`ArrayLibraryError` (naming ``what`` it was to make) when it is
    called for an unknown library (``hint``: what the caller can do instead).

    >>> import numpy as np
    >>> allocator(np.zeros(2))((4, 4), "bf16")                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: ...only torch and cupy arrays...
    """
    lib = library(like)
    if lib not in LIBRARIES:
        def refuse(shape, dtype_name):
            _module(like, op, f"make {what} like", hint)
        return refuse
    mod, dev = sys.modules[lib], like.device
    if lib == "torch":
        return lambda shape, t: mod.empty(shape, dtype=library_dtype(mod, t), device=dev)

    def new(shape, t):
        with dev:
            return mod.empty(shape, dtype=library_dtype(mod, t))
    return new


def zeros(like, n, dtype_name: str | None = None, op: str = "gemm"):
    """A zeroed device array of ``n`` elements (an int) or of shape ``n`` (a tuple), made by the library ``like``
    comes from, of type ``dtype_name`` (default: ``like``'s own).

    >>> import numpy as np
    >>> zeros(np.zeros(2), 8, "f32")                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: ...only torch and cupy arrays...
    """
    lib, mod = _module(like, op, "make a workspace like", _OUT_HINT)
    shape = (n,) if isinstance(n, int) else tuple(n)
    t = like.dtype if dtype_name is None else library_dtype(mod, dtype_name)
    if lib == "torch":
        return like.new_zeros(shape, dtype=t)
    with like.device:
        return mod.zeros(shape, dtype=t)


def swap_last(x):
    """``x`` with its last two dimensions swapped (a view), in its own library.

    >>> import numpy as np
    >>> swap_last(np.zeros((2, 3, 4))).shape
    (2, 4, 3)
    """
    return x.transpose(-2, -1) if library(x) == "torch" else x.swapaxes(-2, -1)


def transposed(x):
    """``x`` with its last two dimensions swapped (:func:`swap_last`) when it has two or more, else ``x`` itself (a
    per-tensor scale's transpose is itself; a row-wise one (M, 1) becomes (1, M); None stays None).

    >>> import numpy as np
    >>> transposed(np.ones((4, 1))).shape, transposed(np.ones(())).shape, transposed(None)
    ((1, 4), (), None)
    """
    return swap_last(x) if len(getattr(x, "shape", ())) >= 2 else x


def swapped_operands(a, b, c=None, out=None, scale_a=None, scale_b=None) -> dict:
    """The operands of the swap-AB form of ``D = a @ b``, ``D^T = b^T a^T``: ``a`` and ``b`` trade places
    transposed, ``c`` and ``out`` are transposed (views of the same memory), and the fp8 scales trade places
    (a row-wise one transposed, :func:`transposed`). None stays None.

    >>> import numpy as np
    >>> ops = swapped_operands(np.zeros((2, 3)), np.zeros((3, 5)), out=np.zeros((2, 5)), scale_a=np.ones((2, 1)))
    >>> ops["a"].shape, ops["b"].shape, ops["out"].shape, ops["c"], ops["scale_b"].shape, ops["scale_a"]
    ((5, 3), (3, 2), (5, 2), None, (1, 2), None)
    """
    return dict(a=swap_last(b), b=swap_last(a), c=None if c is None else swap_last(c),
                out=None if out is None else swap_last(out), scale_a=transposed(scale_b), scale_b=transposed(scale_a))


def host_ints(x, op: str = "host_ints", hint: str = "pass torch or cupy arrays") -> list:
    """The values of a small integer device array, read back to the host (a device-to-host copy: the caller's
    stream synchronises). For another library's array, raises :class:`ArrayLibraryError` naming ``op``, with
    ``hint`` (what the caller can do instead).

    >>> import numpy as np
    >>> host_ints(np.zeros(2), "grouped_gemm")
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: grouped_gemm: cannot read the values of a ndarray (only torch and cupy arrays); pass torch or cupy arrays
    """
    lib, _ = _module(x, op, "read the values of", hint)
    return [int(v) for v in (x.tolist() if lib == "torch" else x.get().tolist())]


def f32_copy(x):
    """A new float32 array with ``x``'s values (cupy bf16 arrives as raw uint16 words).

    >>> import numpy as np
    >>> f32_copy(np.zeros(2))                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: ...only torch and cupy arrays...
    """
    lib, mod = _module(x, "f32_copy", "make a float32 copy of")
    if lib == "torch":
        return x.to(dtype=mod.float32, copy=True)
    if x.dtype == mod.uint16:
        return (x.astype(mod.uint32) << 16).view(mod.float32)
    return x.astype(mod.float32)


def fill(x, value: float) -> None:
    """Fill ``x`` with ``value`` (cupy's raw uint16 words get the bits of ``value`` as a bf16: 0x7FC0 for NaN).

    >>> import numpy as np
    >>> fill(np.zeros(2), float("nan"))                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: ...only torch and cupy arrays...
    """
    lib, mod = _module(x, "fill", "fill")
    if lib == "torch":
        x.fill_(value)
    elif x.dtype == mod.uint16:
        x.fill(int.from_bytes(struct.pack("<f", value), "little") >> 16)
    else:
        x.fill(value)


def rel_err(x, ref) -> float:
    """``||x - ref||_F / ||ref||_F`` (``||x - ref||_F`` when ref is all zeros), computed on the GPU.

    >>> import numpy as np
    >>> rel_err(np.zeros(2), np.zeros(2))                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: ...only torch and cupy arrays...
    """
    diff = f32_copy(x) - ref
    lib, mod = _module(x, "rel_err", "compute the error of")
    norm = (lambda v: float(v.norm())) if lib == "torch" else (lambda v: float(mod.linalg.norm(v)))
    num, den = norm(diff), norm(ref)
    return num / den if den > 0 else num
