"""The checks of the public API's options that are not arrays: one rule per kind, one message form.

A boolean option (``use_fast_accum``, ``check_offs``, ``progress``, ...) takes ``True`` or ``False`` (numpy's bool
too) and nothing else: ``"no"`` is truthy and ``0`` a number, so reading either as a flag would silently do what the
caller may not have meant.

>>> flag("scaled_gemm", "use_fast_accum", "no", ValueError)
Traceback (most recent call last):
...
ValueError: scaled_gemm: use_fast_accum must be True or False, got 'no' (str)
"""

from __future__ import annotations


__all__ = ["flag"]


def flag(op: str, name: str, value, error: type) -> bool:
    """``value`` as a bool when it is one (a Python bool or ``numpy.bool_``); else raise ``error`` (the calling
    API's error class) naming ``op``, the option ``name`` and the value.

    >>> import numpy as np
    >>> flag("grouped_gemm", "check_offs", np.bool_(False), ValueError), flag("op", "check_offs", True, ValueError)
    (False, True)
    """
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    raise error(f"{op}: {name} must be True or False, got {value!r} ({type(value).__name__})")
