"""``print_tensor``: a host tensor's elements printed as CuTe's ``print_tensor`` prints them."""

from __future__ import annotations

from .int_tuple import to_str
from .tensor_make import _require_tensor

__all__ = ["print_tensor"]


def _formatter(t):
    """CuTe's ``pretty_print`` widths for the tensor's element type."""
    if t.is_identity:
        return lambda v: "  " + to_str(v)
    dt = t.dtype
    kind = t.engine.dtype.kind
    if dt is not None and dt.name in ("f16", "bf16", "e4m3", "e5m2"):
        return lambda v: f"{float(v):8.2f}"
    if dt is not None and dt.name in ("f32", "tf32"):
        return lambda v: f"{float(v):10.2e}"
    if dt is not None and dt.name == "f64":
        return lambda v: f"{float(v):11.3e}"
    if kind == "b":
        return lambda v: f"{int(v):3d}"
    if kind in "iu":
        return lambda v: f"{int(v):5d}"
    return lambda v: "  " + str(v)


def _body(arr, fmt, lines):
    if arr.ndim == 0:
        lines.append(fmt(arr[()]))
    elif arr.ndim == 1:
        lines.extend(fmt(v) for v in arr)
    elif arr.ndim == 2:
        lines.extend("".join(fmt(v) for v in row) for row in arr)
    else:
        sep = ("-" if arr.ndim == 3 else "=") * (5 * arr.shape[1])
        for k in range(arr.shape[-1]):
            if k:
                lines.append(sep)
            _body(arr[..., k], fmt, lines)


def print_tensor(t, file=None):
    """Print the tensor's header and its elements, as CuTe's ``print_tensor``.

    The header is ``str(t)`` followed by ``:``. Rank 1: one element per line;
    rank 2: one row per ``m``; rank 3 (4, ...): the rank-2 (rank-3 ...) slices
    along the last mode, separated by a line of ``-`` (``=``). Widths are
    CuTe's ``pretty_print``: ints ``%5d``, f32 ``%10.2e``, f64 ``%11.3e``,
    f16/bf16/fp8 ``%8.2f`` (bf16 and fp8 bits decoded), coordinates
    ``"  (m,n)"``.

    >>> import numpy as np
    >>> from cute_py import make_identity_tensor, make_tensor
    >>> print_tensor(make_tensor(np.arange(6, dtype=np.int32), (2, 3)))
    tensor<s32>[6] o (2,3):(1,2):
        0    2    4
        1    3    5
    >>> print_tensor(make_identity_tensor((2, 2)))
    ArithTuple(0,0) o (2,2):(1@0,1@1):
      (0,0)  (0,1)
      (1,0)  (1,1)
    """
    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"print_tensor: file must be a text stream with .write (or None), got {type(file).__name__}")
    _require_tensor("print_tensor", t)
    arr = t.to_numpy()
    if t.dtype is not None and not t.is_identity:
        arr = t.dtype.decode(arr)
    lines = [f"{t}:"]
    _body(arr, _formatter(t), lines)
    print("\n".join(lines), file=file)
