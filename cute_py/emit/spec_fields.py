"""The fields of a :class:`~cute_py.emit.GemmSpec` one at a time: their allowed values, their normal forms, and
why a given value is not one of them.

A spec is checked where it is made; this module holds the checks that read one field (its Python type, its range,
the form of a gmem layout), each returning the reasons as text that names the field, the value and the rule
(``[]``: no reason). The rules that relate fields (a tile and its budgets, a schedule and its consumers) are the
spec's and its collectives'.

>>> type_problems({"persistent": "no", "tile": (128, 128), "stages": None})
["persistent = 'no' must be True or False", 'tile = (128, 128) must be a tuple of 3 positive ints (BM, BN, BK)']
>>> value_problems({"consumers": 3, "group": 100, "schedule": "cooperative"})
['consumers = 3 not in (1, 2)', 'group = 100 not an int in [1, 64]']
>>> default_tile("bf16"), default_tile("e4m3")
((128, 128, 64), (128, 128, 128))
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from ..layouts import Layout, parse
from ..layouts.errors import LayoutError
from .grouping import GROUP_MODE
from .scaling import FP8_DTYPES, SCALE_BLOCK

__all__ = ["DTYPES", "INPUT_DTYPES", "OUT_DTYPES", "SWIZZLES", "BIAS", "ACTIVATIONS", "EPILOGUES", "CLUSTERS",
           "SCHEDULES", "RASTERS", "MAX_STAGES", "MAX_SPLIT_K", "MAX_EPI_BUFFERS", "GMEM_MODES", "BOOL_FIELDS",
           "INT_FIELDS", "PAIR_FIELDS", "plain_bool", "type_name", "gmem_layout", "default_tile", "gmem_problems",
           "type_problems", "value_problems", "is_int"]

DTYPES = ("bf16", "f16")
"""Input types of the unscaled GEMM (``cute_py.gemm``)."""
INPUT_DTYPES = DTYPES + FP8_DTYPES
OUT_DTYPES = ("bf16", "f16", "f32")
SWIZZLES = (None, 0, 32, 64, 128)
BIAS = (None, "row", "col")
ACTIVATIONS = (None, "relu", "gelu")
EPILOGUES = ("tma", "direct")
CLUSTERS = ((1, 1), (2, 1), (1, 2))
SCHEDULES = ("cooperative", "pingpong")
RASTERS = ("m", "n")
MAX_STAGES = 16
MAX_SPLIT_K = 16
MAX_EPI_BUFFERS = 8
MAX_GROUP = 64
_ALIASES = {"fp16": "f16", "half": "f16", "float16": "f16", "bfloat16": "bf16", "fp32": "f32", "float32": "f32"}
GMEM_MODES = {"a": ("M", "K"), "b": ("N", "K"), "c": ("M", "N")}
"""The mode names of each gmem layout: A is ``(M,K)``, B ``(N,K)``, C/D ``(M,N)``."""

BOOL_FIELDS = ("persistent", "alpha", "beta", "fast_accum")
"""Fields that take True or False only (Python's or numpy's bools; not "yes", "no", 0 or 1)."""
INT_FIELDS = {"consumers": False, "group": False, "split_k": False, "stages": True, "swizzle": True,
              "epi_buffers": False, "load_a": False, "load_b": False}
"""Fields that take an int (never a bool) -> whether None is allowed too."""
PAIR_FIELDS = {"tile": 3, "cluster": 2}
"""Fields that take a tuple (or list) of that many positive ints (never bools)."""


def is_int(x) -> bool:
    """True for a Python int that is not a bool."""
    return isinstance(x, int) and not isinstance(x, bool)


def plain_bool(v):
    """``v`` as a Python bool if it is a numpy bool (without importing numpy), else ``v`` itself.

    >>> import numpy as np
    >>> plain_bool(np.bool_(True)) is True, plain_bool(1)
    (True, 1)
    """
    t = type(v)
    return bool(v) if t.__module__ == "numpy" and t.__name__ in ("bool_", "bool") else v


def type_name(t):
    """An element type's name in its normal form: lower case, aliases resolved ("fp16", "half" -> "f16").

    >>> type_name("BFloat16"), type_name(None)
    ('bf16', None)
    """
    if t is None:
        return None
    t = str(t).lower()
    return _ALIASES.get(t, t)


@lru_cache(maxsize=256)
def _parsed(text: str):
    """The Layout CuTe text parses to, or the text itself when it is not a layout (reported by validation)."""
    try:
        x = parse(text)
    except LayoutError:
        return text
    return x if isinstance(x, Layout) else text


def gmem_layout(value):
    """A gmem layout field as held: CuTe text parsed to a Layout (symbols for the extents); anything else as given
    (:func:`gmem_problems` says why it is not one)."""
    return _parsed(value) if isinstance(value, str) else value


def default_tile(dtype) -> tuple:
    """The tile of a spec that names none: (128, 128, 64) for 16-bit inputs, (128, 128, 128) for fp8, whose
    promoting mainloops (blockwise scales, and tensor or row scales without ``fast_accum``) take K tiles of one
    scale block (:data:`~cute_py.emit.scaling.SCALE_BLOCK`)."""
    return (128, 128, SCALE_BLOCK) if dtype in FP8_DTYPES else (128, 128, 64)


def _is_symbol(x) -> bool:
    return getattr(x, "is_Symbol", False)


def gmem_problems(layout, modes: tuple) -> list:
    """Why ``layout`` is not a gmem layout of a GEMM operand with modes ``modes`` (empty: it is one).

    It must be a rank-2 Layout over the symbolic extents ``modes`` (the problem size is a launch parameter)
    whose strides are ``1`` (the contiguous mode, exactly one) and a symbol (the leading dimension); or rank 3
    with the group mode ``L`` last, its stride a symbol too (:mod:`cute_py.emit.grouping`).

    >>> gmem_problems(parse("(M,N):(1,ldd)"), ("M", "N"))
    []
    >>> gmem_problems(parse("(N,K,L):(K,1,ldl)"), ("N", "K"))
    []
    >>> gmem_problems(parse("(K,M):(1,K)"), ("M", "K"))
    ["gmem layout '(K,M):(1,K)': modes must be named ('M', 'K'), found ('K', 'M')"]
    >>> gmem_problems(parse("((64,M1),K):((1,ldm),lda)"), ("M", "K"))[0][:67]
    "gmem layout '((64,M1),K):((1,ldm),lda)': a hierarchical mode is not"
    >>> gmem_problems("(M,K):(K,1", ("M", "K"))[0][:65]
    "gmem layout '(M,K):(K,1' is not of the form '(M,K):(s0,s1)' (CuTe"
    """
    if isinstance(layout, Layout):              # hashable: asked once per layout (specs are made often)
        return list(_layout_problems(layout, tuple(modes)))
    text = layout if isinstance(layout, str) else repr(layout)
    return [f"gmem layout {text!r:.80} is not of the form '({modes[0]},{modes[1]}):(s0,s1)' "
            f"(CuTe notation, symbolic extents; a third mode {GROUP_MODE} for groups or batches)"]


@lru_cache(maxsize=256)
def _layout_problems(layout: Layout, modes: tuple) -> tuple:
    text = str(layout)
    if not isinstance(layout.shape, tuple) or len(layout.shape) not in (2, 3):
        return (f"gmem layout {text!r} is not of the form '({modes[0]},{modes[1]}):(s0,s1)' "
                f"(CuTe notation, symbolic extents; a third mode {GROUP_MODE} for groups or batches)",)
    shape, stride = layout.shape, layout.stride
    if any(isinstance(x, tuple) for x in shape):
        return (f"gmem layout {text!r}: a hierarchical mode is not emitted (the kernel prints one TMA coordinate "
                f"per flat mode); make_tma_params builds TMA parameters for it, one TMA dim per part",)
    problems = []
    if len(shape) == 3:
        modes = modes + (GROUP_MODE,)
        if stride[2] == 1:
            problems.append(f"gmem layout {text!r}: the group mode {GROUP_MODE} cannot be the contiguous one")
    names = tuple(x.name if _is_symbol(x) else str(x) for x in shape)
    if names != modes or not all(_is_symbol(x) for x in shape):
        problems.append(f"gmem layout {text!r}: modes must be named {modes}, found {names}")
    if sum(1 for d in stride if d == 1) != 1:
        problems.append(f"gmem layout {text!r}: exactly one stride must be 1 (the contiguous mode), "
                        f"found {tuple(str(d) for d in stride)}")
    for d in stride:
        if d != 1 and not _is_symbol(d):
            problems.append(f"gmem layout {text!r}: stride {d} must be 1 or a symbol (the leading dimension)")
    return tuple(problems)


def _type_problem(name: str, v) -> str | None:
    """Why field ``name`` cannot hold ``v`` by its Python type, or None."""
    if name in BOOL_FIELDS and not isinstance(v, bool):
        return f"{name} = {v!r:.80} must be True or False"
    if name in INT_FIELDS and not (is_int(v) or (INT_FIELDS[name] and v is None)):
        what = "an int" + (" or None" if INT_FIELDS[name] else "")
        return f"{name} = {v!r:.80} must be {what}" + (", not a bool" if isinstance(v, bool) else "")
    n = PAIR_FIELDS.get(name)
    if n and not (isinstance(v, tuple) and len(v) == n and all(is_int(x) and x > 0 for x in v)):
        what = " (BM, BN, BK)" if name == "tile" else " (CTAs along M, along N)"
        return f"{name} = {v!r:.80} must be a tuple of {n} positive ints{what}"
    return None


def type_problems(values: Mapping) -> list:
    """Why the spec fields in ``values`` have the wrong Python type (empty: every type is right).

    Bool fields take bools only; int fields ints that are not bools; tile and cluster tuples (or lists) of
    positive ints of the right length.

    >>> type_problems({"persistent": "no", "consumers": True, "tile": 128, "cluster": (1, 1), "stages": None})
    ["persistent = 'no' must be True or False", 'consumers = True must be an int, not a bool', \
'tile = 128 must be a tuple of 3 positive ints (BM, BN, BK)']
    """
    return [p for p in (_type_problem(k, v) for k, v in values.items()) if p]


def value_problems(values: Mapping) -> list:
    """Why the spec fields in ``values`` are out of their range (empty: every one is in it), each field alone
    (the rules that relate fields are the spec's); a field of the wrong type is :func:`type_problems`'.

    >>> value_problems({"dtype": "f32", "split_k": 0, "group": "8", "bias": "diag"})
    ["dtype = 'f32' not in ('bf16', 'f16', 'e4m3', 'e5m2')", 'split_k = 0 not an int in [1, 16]', \
"bias = 'diag' not in (None, 'row', 'col')"]
    """
    rules = {
        "dtype": (lambda x: x in INPUT_DTYPES, f"not in {INPUT_DTYPES}"),
        "out_dtype": (lambda x: x in OUT_DTYPES, f"not in {OUT_DTYPES}"),
        "acc_dtype": (lambda x: x == "f32", "not f32: only f32 accumulation is emitted"),
        "consumers": (lambda x: x in (1, 2), "not in (1, 2)"),
        "schedule": (lambda x: x in SCHEDULES, f"not in {SCHEDULES}"),
        "cluster": (lambda x: x in CLUSTERS, f"not in {CLUSTERS}"),
        "epilogue": (lambda x: x in EPILOGUES, f"not in {EPILOGUES}"),
        "group": (lambda x: 1 <= x <= MAX_GROUP, f"not an int in [1, {MAX_GROUP}]"),
        "raster": (lambda x: x in RASTERS, f"not in {RASTERS}"),
        "split_k": (lambda x: 1 <= x <= MAX_SPLIT_K, f"not an int in [1, {MAX_SPLIT_K}]"),
        "swizzle": (lambda x: x in SWIZZLES, f"not in {SWIZZLES}"),
        "epi_buffers": (lambda x: 1 <= x <= MAX_EPI_BUFFERS, f"not in [1, {MAX_EPI_BUFFERS}]"),
        "bias": (lambda x: x in BIAS, f"not in {BIAS}"),
        "activation": (lambda x: x in ACTIVATIONS, f"not in {ACTIVATIONS}"),
    }
    return [f"{name} = {v!r:.80} {rules[name][1]}" for name, v in values.items()
            if name in rules and _type_problem(name, v) is None and not rules[name][0](v)]
