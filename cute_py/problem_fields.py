"""The fields of a :class:`~cute_py.problem.Problem` one at a time: why a value is not one the field takes.

A Problem is made by :meth:`~cute_py.problem.Problem.from_arrays` (which reads arrays and refuses what a GEMM
cannot take) or directly from sizes (the CLI, the autotuner, the docs); either way its constructor asks
:func:`field_problems`, so a Problem with a size that is not an int, an unknown major or type, or a flag that
is not a bool does not exist, and the kernel choice can rely on every field.

>>> field_problems({"M": "x", "a_major": "k", "beta": "no", "ldd": None, "grouping": "q"})
["M = 'x' must be an int in [0, 2147483647]", "a_major = 'k' not in ('K', 'MN')", "beta = 'no' must be True or \
False", "grouping = 'q' not in (None, 'batch', 'm', 'k')"]
"""

from __future__ import annotations

from collections.abc import Mapping

from .emit.scaling import SCALE_TYPES, SCALES
from .emit.spec_fields import ACTIVATIONS, BIAS, INPUT_DTYPES, OUT_DTYPES, is_int

__all__ = ["MAX_EXTENT", "GROUPINGS", "MAJORS", "SHARED_FEATURES", "field_problems"]

MAX_EXTENT = 2 ** 31 - 1
"""The kernel takes M, N and K as 32-bit ints."""
GROUPINGS = (None, "batch", "m", "k")
MAJORS = ("K", "MN")

SHARED_FEATURES = ("a_major", "b_major", "dtype", "out_dtype", "beta", "bias", "activation", "c_row_major", "scale",
                   "fast_accum", "scale_type", "grouping")
"""The features a :class:`~cute_py.problem.Problem` and a :class:`~cute_py.emit.spec.GemmSpec` both have, by the
same name (a spec's majors and grouping are read from its layouts): a spec fits a problem only where they are
equal (:meth:`~cute_py.problem.Problem.mismatches`)."""

_CHOICES = {"a_major": MAJORS, "b_major": MAJORS, "dtype": INPUT_DTYPES, "out_dtype": OUT_DTYPES, "bias": BIAS,
            "activation": ACTIVATIONS, "scale": SCALES, "scale_type": SCALE_TYPES, "grouping": GROUPINGS}
_BOOLS = ("beta", "c_row_major", "d_tma", "fast_accum", "scale_a_tma")
_INTS = {"M": MAX_EXTENT, "N": MAX_EXTENT, "K": MAX_EXTENT, "groups": None,
         "lda": None, "ldb": None, "ldc": None, "ldd": None}
"""Int fields (never bools, at least 0) -> their largest value (None: no bound); the leading dimensions may be
None too (compact)."""
_INT_TUPLES = {"scale_strides": 4, "batch_strides": 7, "align": 2}
"""Fields holding a tuple of ints -> the most entries (``batch_strides`` may leave trailing zeros out)."""


def _problem(name: str, v) -> str | None:
    if name in _CHOICES and not (v in _CHOICES[name] and (v is None or isinstance(v, str))):
        return f"{name} = {v!r:.80} not in {_CHOICES[name]}"
    if name in _BOOLS and not isinstance(v, bool):
        return f"{name} = {v!r:.80} must be True or False"
    if name in _INTS and not (v is None and name.startswith("ld")):
        top = _INTS[name]
        if not is_int(v) or v < 0 or (top is not None and v > top):
            return f"{name} = {v!r:.80} must be an int in [0, {top if top is not None else 'inf'}]"
    n = _INT_TUPLES.get(name)
    if n and not (isinstance(v, tuple) and len(v) <= n and all(is_int(x) for x in v)):
        return f"{name} = {v!r:.80} must be a tuple of at most {n} ints"
    if name == "staging" and not isinstance(v, tuple):
        return f"staging = {v!r:.80} must be a tuple of Staging"
    return None


def field_problems(values: Mapping) -> list:
    """Why the Problem fields in ``values`` have the wrong type or are out of range (empty: none), each field
    alone."""
    return [p for p in (_problem(k, v) for k, v in values.items()) if p]
