"""Every public constructor refuses each invalid field value it is given (issue 34, Build (a)).

Each constructor is listed with a valid set of arguments and, for every field, the kind of value the field takes
(a bool, an int in a range or a set, a name from a set, a tuple of ints, a gmem layout, an object of a class);
the kind gives the invalid values (``fuzz_support``: wrong types, out-of-range ints, unknown names, malformed
layout text). The property: the valid arguments with one field replaced by an invalid value raise a documented
error (``fuzz_support.DOCUMENTED``, or a TypeError/ValueError) whose message names the field (``field =``,
``field:`` or ``field must``), never an internal AttributeError/TypeError from deep inside, and never a value.

GemmSpec's and Problem's kinds are read from their modules' field tables, and every dataclass field must have a
kind here, so a new field is fuzzed as soon as it exists (``test_every_field_has_a_kind``).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, Swizzle, atoms
from cute_py.emit import GemmSpec
from cute_py.emit import spec_fields as sf
from cute_py.emit.collectives.schedulers import SCHEDULERS
from cute_py.emit.loads import LOAD_BYTES
from cute_py.emit.scaling import SCALE_TYPES, SCALES
from cute_py.problem import Problem
from cute_py import problem_fields as pf

from fuzz_support import (COUNTS, DOCUMENTED, bad_gmem_layouts, bad_int_tuples, bad_ints, not_bools,
                          unknown_names)

FIELDS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))  # per field; deep: x10


def _spec_kinds() -> dict:
    """{GemmSpec field: invalid values}, from the tables of cute_py.emit.spec_fields (and the collectives')."""
    ranges = {"consumers": dict(allowed=(1, 2)), "group": dict(lo=1, hi=sf.MAX_GROUP),
              "split_k": dict(lo=1, hi=sf.MAX_SPLIT_K), "stages": dict(lo=2, hi=32),
              "swizzle": dict(allowed=sf.SWIZZLES), "epi_buffers": dict(lo=1, hi=sf.MAX_EPI_BUFFERS),
              "load_a": dict(allowed=LOAD_BYTES), "load_b": dict(allowed=LOAD_BYTES)}
    names = {"dtype": (sf.INPUT_DTYPES, False), "out_dtype": (sf.OUT_DTYPES, True), "acc_dtype": (("f32",), False),
             "schedule": (sf.SCHEDULES, False), "raster": (sf.RASTERS, False), "epilogue": (sf.EPILOGUES, True),
             "bias": (sf.BIAS, True), "activation": (sf.ACTIVATIONS, True), "scale": (SCALES, True),
             "scale_type": (SCALE_TYPES, False), "scheduler": (tuple(SCHEDULERS), True)}
    kinds = {name: not_bools() for name in sf.BOOL_FIELDS}
    kinds.update({name: bad_ints(**ranges[name], none_ok=none_ok) for name, none_ok in sf.INT_FIELDS.items()})
    kinds.update({"tile": bad_int_tuples(3), "cluster": bad_int_tuples(2, allowed=sf.CLUSTERS)})
    kinds.update({name: unknown_names(allowed, none_ok, normal=sf.type_name) for name, (allowed, none_ok)
                  in names.items()})
    kinds.update({name: bad_gmem_layouts(modes) for name, modes in sf.GMEM_MODES.items()})
    return kinds


def _problem_kinds() -> dict:
    """{Problem field: invalid values}, from the tables of cute_py.problem_fields."""
    kinds = {name: unknown_names(allowed, None in allowed, normal=lambda s: s) for name, allowed in pf._CHOICES.items()}
    kinds.update({name: not_bools() for name in pf._BOOLS})
    kinds.update({name: bad_ints(lo=0, hi=top, none_ok=name.startswith("ld")) for name, top in pf._INTS.items()})
    kinds.update({name: st.sampled_from([5, "x", None, [1, 2], (1.5,), ("a",), (0,) * (n + 1)])
                  for name, n in pf._INT_TUPLES.items()})
    kinds["staging"] = st.sampled_from([5, "x", None, [1]])
    return kinds


_MMA = atoms.get("SM80_16x8x16_F16F16F16F16_TN")
_COPY = cute_py.make_copy_atom("UniversalCopy<uint32_t>", "f32")
_LAYOUT_ARGS = st.sampled_from(["x", 2.5, True, -1, (4, "8"), (4, None), (4, 2.5), [1, [2, "x"]], {"a": 1}])
_NOT_LAYOUT = st.sampled_from(["x", 2.5, True, None, -3, {}, (4, "x"), Swizzle(1, 2, 3), object()])
_NOT_INT = st.one_of(st.sampled_from(["3", 3.0, 2.5, None, True, [3], (3,)]))
_NAMES = st.one_of(st.sampled_from(["", "nope", "SM80_nope", 5, None, 2.5, b"x"]), st.text(max_size=6))

# name -> (constructor, valid keyword arguments, {field: invalid values}). Each field listed is replaced alone.
CONSTRUCTORS = {
    "GemmSpec": (GemmSpec, {}, _spec_kinds()),
    "Problem": (Problem, dict(M=64, N=64, K=64, a_major="K", b_major="K", dtype="bf16", out_dtype="bf16"),
                _problem_kinds()),
    "Layout": (Layout, dict(shape=(4, 8), stride=(8, 1)), {"shape": _LAYOUT_ARGS, "stride": _LAYOUT_ARGS}),
    "Swizzle": (Swizzle, dict(bits=3, base=4, shift=3),
                {"bits": st.one_of(_NOT_INT, st.integers(-64, -1)), "base": st.one_of(_NOT_INT, st.integers(-64, -1)),
                 "shift": st.one_of(_NOT_INT, st.integers(-2, 2))}),
    "ComposedLayout": (cute_py.ComposedLayout, dict(outer=Swizzle(3, 4, 3), offset=0, inner=Layout((8, 64), (64, 1))),
                       {"outer": st.sampled_from(["x", 5, None, 2.5]), "offset": st.sampled_from(["x", 2.5, None, []]),
                        "inner": _NOT_LAYOUT}),
    "MMAAtom (atoms.get)": (atoms.get, dict(name="SM80_16x8x16_F16F16F16F16_TN"), {"name": _NAMES}),
    "make_copy_atom": (cute_py.make_copy_atom, dict(op="UniversalCopy<uint32_t>", value_type="f32"),
                       {"op": _NAMES, "value_type": _NAMES}),
    "CopyAtom": (cute_py.CopyAtom, dict(op=_COPY.op, value_type=_COPY.value_type),
                 {"op": _NAMES, "value_type": _NAMES}),
    "make_tiled_mma": (cute_py.make_tiled_mma, dict(atom=_MMA, atom_layout=(2, 2, 1)),
                       {"atom": _NAMES, "atom_layout": st.one_of(_LAYOUT_ARGS, st.sampled_from([(0, 1, 1), (-1, 1, 1)])),
                        "permutation": st.sampled_from([0, "x", 2.5, (1, 2, 3, 4, 5), ("x", None, 1.5)])}),
    "TiledMMA": (cute_py.TiledMMA, dict(atom=_MMA, atom_layout=Layout((2, 2, 1))),
                 {"atom": _NAMES, "atom_layout": _NOT_LAYOUT}),
    "make_tiled_copy": (cute_py.make_tiled_copy, dict(atom=_COPY, thr_layout=Layout((32, 4), (4, 1))),
                        {"atom": _NAMES, "thr_layout": _LAYOUT_ARGS, "val_layout": _LAYOUT_ARGS}),
    "TiledCopy": (cute_py.TiledCopy, dict(atom=_COPY, layout_tv=Layout((32, 1), (1, 0)), tiler_mn=(32, 1)),
                  {"atom": _NAMES, "layout_tv": _NOT_LAYOUT, "tiler_mn": st.sampled_from(["x", 0, None, 2.5, (4, "x")])}),
    "Tensor": (cute_py.Tensor, dict(engine=np.arange(32), layout=Layout((4, 8))),
               {"engine": st.sampled_from(["x", 5, None, [1, 2], np.zeros((2, 2))]), "layout": _NOT_LAYOUT,
                "offset": st.sampled_from(["x", 2.5, None, [], True])}),
    "F2": (cute_py.F2, dict(value=5), {"value": st.sampled_from(["x", 2.5, None, -1, True])}),
    "ScaledBasis": (cute_py.ScaledBasis, dict(value=1, mode=(0,)), {"mode": st.sampled_from(["x", 2.5, None, -1, (-1,)])}),
    "ArithmeticTuple": (cute_py.ArithmeticTuple, dict(items=(1, 2)), {"items": st.sampled_from([5, None, 2.5, "x"])}),
}

CASES = [(ctor, field) for ctor, (_, _, kinds) in CONSTRUCTORS.items() for field in kinds]

def names_field(message: str, field: str, aliases=()) -> bool:
    """Whether ``message`` names ``field`` (or one of its aliases): as a word, and for a name of one or two
    letters (GemmSpec's ``a``, ``b``, ``c``; CuTe's ``B``, ``M``, ``S``) as the subject, ``a:`` or ``a =``."""
    for f in (field, *aliases):
        tail = r"(?:\s*=|:|\s+must\b)" if len(f) <= 2 else r"(?![\w(])"
        if re.search(r"(?<![\w.])" + re.escape(f) + tail, message):
            return True
    return False


# The names a constructor's messages use for a field (CuTe's letters for Swizzle's B, M, S; "dtype" for a type).
ALIASES = {("Swizzle", "bits"): ("B",), ("Swizzle", "base"): ("M",), ("Swizzle", "shift"): ("S",),
           ("make_copy_atom", "value_type"): ("dtype",), ("CopyAtom", "value_type"): ("dtype",),
           # an argument named by the type it must have ("expected a CopyAtom, got str")
           ("make_copy_atom", "op"): ("CopyOp", "copy op"), ("make_tiled_copy", "atom"): ("CopyAtom",),
           ("TiledCopy", "atom"): ("CopyAtom",), ("Tensor", "layout"): ("Layout",)}


@pytest.mark.parametrize("ctor, field", CASES, ids=[f"{c}.{f}" for c, f in CASES])
@FIELDS
@given(data=st.data())
def test_constructor_refuses_invalid_field(ctor, field, data):
    fn, valid, kinds = CONSTRUCTORS[ctor]
    value = data.draw(kinds[field], label=field)
    COUNTS["fields", ctor] += 1
    try:
        made = fn(**{**valid, field: value})
    except DOCUMENTED + (TypeError, ValueError) as e:
        message = str(e)
        assert type(e) not in (AttributeError,), message
        assert names_field(message, field, ALIASES.get((ctor, field), ())), \
            f"{ctor}({field}={value!r}) raised {type(e).__name__} without naming {field}: {message[:300]}"
        return
    pytest.fail(f"{ctor}({field}={value!r}) was accepted: {made!r:.200}", pytrace=False)


def test_every_field_has_a_kind():
    """A new field of GemmSpec, Problem, or a constructor listed above is fuzzed once it exists: each must have
    a kind of invalid values here."""
    for name, (fn, _, kinds) in CONSTRUCTORS.items():
        if dataclasses.is_dataclass(fn):
            missing = {f.name for f in dataclasses.fields(fn) if f.compare} - set(kinds)
            assert not missing, f"{name}: fields without invalid values in CONSTRUCTORS: {sorted(missing)}"


def test_valid_arguments_are_accepted():
    """The base arguments each field is varied from are valid (else the property would prove nothing)."""
    for name, (fn, valid, _) in CONSTRUCTORS.items():
        if valid or name == "GemmSpec":
            fn(**valid)


# Found by the property above; each was accepted, or refused without naming the field, before its fix.
FIXED = [
    ("GemmSpec", "out_dtype", ""),            # accepted: "" read as "use the default"
    ("GemmSpec", "a", "(M,K):(K,1"),           # SpecError that never said the bad layout was a's
    ("GemmSpec", "epi_buffers", -2 ** 40),     # 2**40 iterations of the smem budget's loop before the refusal
    ("Problem", "M", "x"),                     # accepted: Problem checked nothing ("x" * 64 as its size)
    ("Problem", "grouping", "q"),              # accepted, then KeyError in .shape
    ("Problem", "ldd", "x"),                   # TypeError: not all arguments converted during string formatting
    ("CopyAtom", "op", "x"),                   # accepted
    ("make_tiled_mma", "permutation", "x"),    # accepted: tile_size ('x', 8, 16)
    ("make_tiled_mma", "atom_layout", "x"),    # "make_layout: Layout: shape leaves must be integers" (no atom_layout)
    ("make_tiled_copy", "thr_layout", "x"),    # "Layout: shape leaves must be integers" (no thr_layout)
    ("TiledCopy", "tiler_mn", "x"),            # accepted
    ("ArithmeticTuple", "items", "xy"),        # accepted as ('x', 'y')
]


@pytest.mark.parametrize("ctor, field, value", FIXED, ids=[f"{c}.{f}" for c, f, _ in FIXED])
def test_fixed_fields_stay_refused(ctor, field, value):
    fn, valid, _ = CONSTRUCTORS[ctor]
    with pytest.raises(DOCUMENTED + (TypeError, ValueError)) as e:
        fn(**{**valid, field: value})
    assert names_field(str(e.value), field, ALIASES.get((ctor, field), ())), str(e.value)
