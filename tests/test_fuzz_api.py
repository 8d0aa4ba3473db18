"""The API fuzz harness (issue 14, "The harness"): every public function of ``cute_py``, ``cute_py.viz`` and
``cute_py.emit``, the GemmSpec loaders, the GEMM front ends' argument checks and the ``cute-py`` command, fed
arbitrary values mixed with valid layouts.

The property: each call, under a time limit (``fuzz_support.TIME_LIMIT_S``) and an address-space limit,
returns normally (a returned layout prints), or raises a documented error -- a subclass of
``cute_py.LayoutError``, ``SpecError``, ``GemmInputError``, ``AutotuneError`` or another class in
``cute_py.ERRORS``, or a TypeError/ValueError whose message names the function. The CLI exits 0 or 2 (3/4 for
``gemm``/``autotune`` without the cuda extra or a GPU, see ``cute_py.cli_errors``) with no traceback.

Failures not fixed yet are listed in :data:`KNOWN_FAILURES`, which may only shrink:
``test_known_failures_still_fail`` fails when an entry is no longer hit (then delete the entry).
Hypothesis is derandomized here (tests/conftest.py), so the inputs are the same every run; ``pytest -s``
prints how many ran.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cute_py
import cute_py.emit as emit
import cute_py.viz as viz
from cute_py.emit import GemmSpec

from fuzz_support import COUNTS, describe, guarded, host_arrays, junk, junk_leaf, values

FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))  # per function; deep: x20

# Functions handled by their own tests below (they need a GPU past argument validation).
GPU_ONLY = {"cute_py.gemm", "cute_py.autotune"}


def _public():
    """``{qualified name: callable}`` for every public callable of the three namespaces (exception classes and
    modules excluded; classes included, their constructors are public)."""
    found = {}
    for mod, prefix in ((cute_py, "cute_py"), (viz, "cute_py.viz"), (emit, "cute_py.emit")):
        for name in mod.__all__:
            obj = getattr(mod, name)
            qual = f"{prefix}.{name}"
            if qual in GPU_ONLY or isinstance(obj, types.ModuleType) and not callable(obj):
                continue
            if not callable(obj) or isinstance(obj, type) and issubclass(obj, BaseException):
                continue
            if any(obj is seen for seen in found.values()):  # re-exports (explain, SpecError ...) once
                continue
            found[qual] = obj
    return found


PUBLIC = _public()
FOUND: list = []  # FUZZ_COLLECT=1: every undocumented outcome, printed at the end

# The functions that still fail on some input class: {qualified name: {kind: input class}}, where kind is the
# exception's type name (a bare error) or "delegate" (a clear TypeError/ValueError, but led by the name of the
# function the call delegated to, not the one called: e.g. flat_divide(1, ...) -> "logical_divide: expected a
# Layout"). This table only shrinks: test_known_failures_still_fail, run after the fuzz tests, fails for an
# entry the (derandomized, so always identical) inputs no longer hit -- delete the entry then.
KNOWN_FAILURES: dict = {
    # (empty: the one entry, viz.bank_conflicts on a tuple smem_layout with non-int leaves -- a message led by
    # "Layout:" -- is fixed by @names_caller on cute_py/arch/sm90/banks.py:bank_conflicts)
}
KNOWN_HITS: set = set()
TESTED: set = set()  # the functions test_public_function ran on this session


def _keywords(fn):
    """The names of ``fn``'s optional keyword arguments (fuzzed too, a few at a time)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values()
            if p.default is not p.empty and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
            and not p.name.startswith("_")]


def _positional_names(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _arity(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return 0, 3
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in params)
    var = any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())
    return required, len(params) + (2 if var else 0)


def _kind(outcome, exc):
    return "delegate" if outcome == "delegate" else type(exc).__name__


def _check(name, outcome, exc, args, kwargs=None, part="api"):
    COUNTS[part, outcome] += 1
    if outcome in ("ok", "documented"):
        return
    if os.environ.get("FUZZ_COLLECT"):  # survey mode: record every failure, fail none
        FOUND.append((name, _kind(outcome, exc), str(exc)[:200], describe(args, kwargs)))
        return
    if _kind(outcome, exc) in KNOWN_FAILURES.get(name, {}):
        COUNTS[part, "known"] += 1
        KNOWN_HITS.add((name, _kind(outcome, exc)))
        return
    pytest.fail(f"{name}{describe(args, kwargs)} raised {type(exc).__name__}: {str(exc)[:300]}"
                + (" (the message names another function)" if outcome == "delegate" else ""), pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def _in_tmp_dir(tmp_path_factory):
    """Run in a scratch folder (``viz.save`` and ``-o FILE`` write files) and print the counts at the end."""
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("fuzz_api"))
    yield
    os.chdir(old)
    total = sum(v for (part, outcome), v in COUNTS.items() if outcome in ("ok", "documented", "undocumented"))
    print(f"\nfuzz_api: {total} generated inputs ran; by part and outcome: "
          + ", ".join(f"{p}/{o}={v}" for (p, o), v in sorted(COUNTS.items())))
    for row in FOUND:
        print("FOUND", *row, sep=" | ")


@pytest.mark.parametrize("name", sorted(PUBLIC))
@FUZZ
@given(data=st.data())
def test_public_function(name, data):
    fn = PUBLIC[name]
    TESTED.add(name)
    required, most = _arity(fn)
    n = data.draw(st.one_of(st.just(required), st.integers(0, max(most, required + 1))), label="arity")
    args = tuple(data.draw(values, label=f"arg{i}") for i in range(n))
    kwargs = {}
    keywords = [k for k in _keywords(fn) if k not in _positional_names(fn)[:n]]
    if keywords and data.draw(st.booleans(), label="use keywords"):
        for k in data.draw(st.lists(st.sampled_from(keywords), max_size=2, unique=True), label="keywords"):
            kwargs[k] = data.draw(st.one_of(values, junk_leaf), label=k)
    outcome, exc = guarded(fn, name, args, kwargs)
    _check(name, outcome, exc, args, kwargs)


# ---------------------------------------------------------------------------------------------------------------
# GemmSpec: fields, from_dict, from_file (TOML / JSON text)

FIELD_VALUES = {
    "a": st.sampled_from(["(M,K):(K,1)", "(M,K):(1,M)", "(4,8):(8,1)", "((", cute_py.Layout((4, 8)), "x"]),
    "b": st.sampled_from(["(N,K):(K,1)", "(N,K):(1,N)", "(M,N):(N,1)", 7]),
    "c": st.sampled_from(["(M,N):(N,1)", "(M,N):(1,M)", None]),
    "dtype": st.sampled_from(["bf16", "f16", "f32", "int4", "", None, 3]),
    "out_dtype": st.sampled_from([None, "bf16", "f32", "nope", 1.5]),
    "acc_dtype": st.sampled_from(["f32", "f16", "bf16", None]),
    "tile": st.one_of(st.sampled_from([(128, 128, 64), (128, 256, 64), (64, 64), None, 128, "128x128x64"]),
                      st.tuples(st.integers(-64, 512), st.integers(-64, 512), st.integers(-64, 512))),
    "cluster": st.sampled_from([(1, 1), (2, 1), (1, 2), (0, 1), (3, 1), (1,), True]),
    "stages": st.sampled_from([None, 2, 4, 7, 0, -1, 1000, True, 2.5]),
    "consumers": st.sampled_from([1, 2, 3, 0, True, "2", None]),
    "schedule": st.sampled_from(["cooperative", "pingpong", "x", None]),
    "swizzle": st.sampled_from([None, 32, 64, 128, 100, -1, "128"]),
    "persistent": st.sampled_from([True, False, "no", "yes", 1, None]),
    "group": st.sampled_from([1, 8, 0, -3, 2 ** 40, 1.0]),
    "raster": st.sampled_from(["m", "n", "x", None]),
    "split_k": st.sampled_from([1, 2, 0, -1, 2 ** 33]),
    "epilogue": st.sampled_from([None, "default", "tma", "x", 5]),
    "alpha": st.sampled_from([True, False, "no", 2.0]),
    "beta": st.sampled_from([True, False, None, "yes"]),
    "bias": st.sampled_from([None, "row", "col", "x", 0]),
    "activation": st.sampled_from([None, "relu", "gelu", "silu", "x", 3]),
}

spec_fields = st.fixed_dictionaries({}, optional={k: st.one_of(v, v, v, junk_leaf) for k, v in FIELD_VALUES.items()})


def _from_fields(**fields):
    spec = GemmSpec(**fields)
    spec.validate()
    return emit.emit_gemm(spec)


@settings(FUZZ, max_examples=150)
@given(fields=spec_fields)
def test_gemm_spec_fields(fields):
    outcome, exc = guarded(_from_fields, "GemmSpec", (), fields)
    _check("cute_py.emit.GemmSpec", outcome, exc, (), fields, part="spec")


def _from_dict(data):
    spec = GemmSpec.from_dict(data)
    return emit.emit_gemm(spec)


@settings(FUZZ, max_examples=100)
@given(data=st.one_of(spec_fields, spec_fields.map(lambda d: {"gemm": d}), junk,
                      st.dictionaries(st.text(max_size=5), junk_leaf, max_size=3)))
def test_gemm_spec_from_dict(data):
    outcome, exc = guarded(_from_dict, "from_dict", (data,))
    _check("cute_py.emit.GemmSpec.from_dict", outcome, exc, (data,), part="spec")


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v) if v == v and abs(v) != float("inf") else "nan"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def _text_for(fields, kind, garble):
    plain = {k: v for k, v in fields.items() if v is not None and not isinstance(v, cute_py.Layout)}
    if kind == "json":
        text = json.dumps(plain, default=str)
    else:
        text = "\n".join(f"{k} = {_toml_value(v)}" for k, v in plain.items()) + "\n"
    if garble:
        text = text[: len(text) * 2 // 3] + garble
    return text


def _from_file(path):
    return emit.emit_gemm(GemmSpec.from_file(path))


@settings(FUZZ, max_examples=100)
@given(fields=spec_fields, kind=st.sampled_from(["toml", "json"]),
       garble=st.one_of(st.just(""), st.just(""), st.sampled_from(["[[", "=", "\x00", "}", "\"", "\udcff"])))
def test_gemm_spec_from_file(fields, kind, garble):
    path = f"spec_fuzz.{kind}"
    text = _text_for(fields, kind, garble)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    outcome, exc = guarded(_from_file, "from_file", (path,))
    _check("cute_py.emit.GemmSpec.from_file", outcome, exc, (text,), part="spec")


# ---------------------------------------------------------------------------------------------------------------
# the GEMM front ends: argument validation with host arrays (no GPU here, and none needed to refuse bad input)

_bad_operand = st.one_of(host_arrays, junk_leaf, st.lists(st.integers(0, 3), max_size=4))


@settings(FUZZ, max_examples=50)
@given(fn=st.sampled_from(["gemm", "autotune"]), a=_bad_operand, b=_bad_operand,
       kwargs=st.fixed_dictionaries({}, optional={"alpha": junk_leaf, "beta": junk_leaf, "activation": junk_leaf,
                                                  "bias": st.one_of(host_arrays, junk_leaf)}))
def test_gemm_argument_validation(fn, a, b, kwargs):
    """Operands that are not two matching 2-D device-or-host arrays are refused before any GPU work, with the
    front end's own error (GemmInputError / AutotuneError); the runtime's "no CUDA / no GPU" errors count as
    documented too (they are in cute_py.ERRORS)."""
    f = getattr(cute_py, fn)
    if fn == "autotune":
        kwargs = {**kwargs, "progress": False, "cache": False}
    outcome, exc = guarded(f, fn, (a, b), kwargs)
    _check(f"cute_py.{fn}", outcome, exc, (a, b), kwargs, part="gemm")


# ---------------------------------------------------------------------------------------------------------------
# the command line

CLI_TOKENS = ["(4,8):(8,1)", "(M,K):(K,1)", "8:1", "((2,2),4):((1,8),2)", "(100000000,100000000):(1,100000000)",
              "(1000,1000)", "Sw<3,4,3>", "((", "", "x", "--banks", "--access", "vec128", "row128", "--swizzle",
              "3,4,3", "1,2", "--full", "--format", "svg", "latex", "html", "nope", "--dtype", "bf16", "f16", "--m",
              "--n", "--k", "0", "-5", "1e11", "128", "--spec", "example:tn_bf16_128x256", "example:nope",
              "spec_cli.toml", "missing.toml", "--emit-only", "--check", "--layout", "tn", "--tiled", "2,2,1",
              "SM90_64x64x16_F32BF16BF16_SS", "composition", "logical_divide", "--reps", "--no-cache", "-o",
              "out.txt", "--version", "-h"]
CLI_COMMANDS = ["show", "mma", "explain", "gemm", "autotune", "tour", "bogus", ""]
CLI_GPU_EXITS = {"gemm": {3, 4}, "autotune": {3, 4}}


@settings(FUZZ, max_examples=10)  # a process each (about 0.5-1 s); deep: x20
@given(cmd=st.sampled_from(CLI_COMMANDS), rest=st.lists(st.sampled_from(CLI_TOKENS), max_size=4),
       toml=st.sampled_from(["tile = true\n", "tile = [128,128,64]\n", "[[x\n", "consumers = \"2\"\n", ""]))
def test_cli(cmd, rest, toml):
    with open("spec_cli.toml", "w") as f:
        f.write(toml)
    argv = ([cmd] if cmd else []) + rest
    try:
        proc = subprocess.run([sys.executable, "-m", "cute_py", *argv], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    except subprocess.TimeoutExpired:
        COUNTS["cli", "undocumented"] += 1
        pytest.fail(f"cute-py {' '.join(argv)!r} ran over 30 s", pytrace=False)
    ok_codes = {0, 2} | CLI_GPU_EXITS.get(cmd, set())
    bad = proc.returncode not in ok_codes or "Traceback" in proc.stderr
    COUNTS["cli", "undocumented" if bad else ("ok" if proc.returncode == 0 else "documented")] += 1
    if bad:
        if os.environ.get("FUZZ_COLLECT"):
            FOUND.append(("cli", proc.returncode, proc.stderr[-300:], repr(argv)))
            return
        pytest.fail(f"cute-py {argv!r} exited {proc.returncode}; stderr tail: {proc.stderr[-600:]}", pytrace=False)


# ---------------------------------------------------------------------------------------------------------------
# the known failures only shrink


def test_known_failures_still_fail():
    """Every KNOWN_FAILURES entry was hit by this run's inputs (the table only shrinks). Runs after the fuzz
    tests above (file order); skipped when they did not all run (``-k`` selections)."""
    if TESTED != set(PUBLIC) or not COUNTS["spec", "ok"] + COUNTS["spec", "documented"]:
        pytest.skip("the fuzz tests did not all run in this session")
    stale = sorted((name, kind) for name, kinds in KNOWN_FAILURES.items() for kind in kinds
                   if (name, kind) not in KNOWN_HITS)
    assert not stale, f"these no longer fail, delete them from KNOWN_FAILURES: {stale}"


def _L(*a):
    return cute_py.Layout(*a)


# Inputs the harness found failing before the fixes in this commit series (the bare error they raised, in the
# comment); each must now be a documented outcome.
FIXED = [
    ("cute_py.emit.emit_gemm", (_L(1),)),                              # AttributeError: no attribute 'validate'
    ("cute_py.emit.kernel_params", (_L(1),)),                          # AttributeError: no attribute 'out_dtype'
    ("cute_py.emit.gemm_plan", ({},)),                                 # TypeError: unhashable type (lru_cache)
    ("cute_py.emit.operand_plan", (GemmSpec(), {})),                   # TypeError: unhashable type (lru_cache)
    ("cute_py.make_tiled_copy_A", (_L(1), _L(1))),                     # AttributeError: get_layoutA_TV
    ("cute_py.make_tiled_copy_C", (_L(1), _L(1))),                     # AttributeError: get_layoutC_TV
    ("cute_py.tile_unzip", (cute_py.Swizzle(0, 0, -1), _L(1))),        # AttributeError: no attribute 'shape'
    ("cute_py.viz.print_layout", (_L(8, 62), cute_py.Swizzle(1, 4, -3))),  # AttributeError: no attribute 'write'
    ("cute_py.viz.save", (_L(1), _L(1))),                              # TypeError: expected str, bytes or PathLike
    ("cute_py.make_swizzle", (_L(1), _L(1))),                          # TypeError: cannot be interpreted as an int
    ("cute_py.append", (_L(1), _L(1), _L(1))),                         # TypeError: '<=' not supported
    ("cute_py.take", (_L(1), _L(1), _L(1))),                           # TypeError: '<=' not supported
    ("cute_py.crd2idx", (_L(1), _L(1))),                               # TypeError: unsupported operand for *
    ("cute_py.ArithmeticTuple", (5,)),                                 # TypeError: 'int' object is not iterable
    ("cute_py.ScaledBasis", ([], 13)),                                 # TypeError: 'int' object is not iterable
    ("cute_py.E", (_L(1), _L(1))),                                     # returned a basis with Layout modes
    ("cute_py.size", (({"shape": True},),)),                           # TypeError: unsupported operand for *=
    ("cute_py.make_tensor", (((), {}),)),                              # ValueError: numpy inhomogeneous shape
    ("cute_py.zipped_divide", ([], [])),                               # TypeError: unhashable type: 'list'
    ("cute_py.viz.to_latex", ((8, 2), cute_py.Swizzle(1, 3, 4))),      # TypeError: 'Swizzle' is not iterable
    ("cute_py.flat_divide", (1, _L(1))),                               # TypeError led by "logical_divide:"
    ("cute_py.composition", (cute_py.Swizzle(2, 4, -2), "x")),         # TypeError led by "ComposedLayout:"
    ("cute_py.TiledMMA", (_L(1), _L(1))),                              # TypeError led by "make_tiled_mma:"
    ("cute_py.viz.bank_conflicts", (({},), 4, 15)),                    # TypeError led by "Layout:"
    # found once keyword arguments were fuzzed too:
    ("cute_py.emit.to_c", ({"m": {"m": 0, "shape": 0}},)),            # AttributeError inside sympy
    ("cute_py.emit.to_c", (_L(1),), {"names": _L(4)}),                  # AttributeError: no attribute 'items'
    ("cute_py.tile_to_shape", (_L(4), ((8, 4),))),                     # TypeError: 'int' object is not iterable
    ("cute_py.print_tensor", (cute_py.make_identity_tensor(3), cute_py.Swizzle(0, 5, -1))),  # no 'write'
    ("cute_py.make_basis_like", (4, (((6, 2), 2),))),                  # returned a basis with tuple modes
    ("cute_py.viz.to_svg", (_L(3),), {"tile": cute_py.Swizzle(0, 8, 1)}),  # TypeError led by "tile:"
    ("cute_py.viz.compare_swizzle", ((float("nan"), 4), (8, 1), _L(3, 2), cute_py.Swizzle(2, 3, 3))),  # "Layout:"
    # found by HYPOTHESIS_PROFILE=explore runs:
    ("cute_py.domain_distribute", (np.float16, 3)),                    # TypeError: getset_descriptor not an int
    ("cute_py.make_tiled_copy", (cute_py.make_copy_atom("UniversalCopy<uint32_t>", "f32"), "x")),  # "Layout:"
    ("cute_py.make_tiled_mma", (cute_py.atoms.get("SM80_16x8x16_F16F16F16F16_TN"), cute_py.Swizzle(3, 1, 4))),
    #                                                                   ^ AttributeError: no attribute 'stride'
    ("cute_py.parse", ("f32",), {"symbols": -7}),                      # TypeError: 'int' object is not iterable
    ("cute_py.viz.coalescing", (_L(4), ({0: None},), "f16")),           # TypeError led by "Layout:"
    ("cute_py.emit.GemmSpec.from_dict", ({"shape": 1, 0: 2},)),        # TypeError: '<' between int and str
    ("cute_py.composition", (cute_py.make_identity_tensor((1, 8)), cute_py.Swizzle(1, 1, 1))),  # '<=' on tuples
    ("cute_py.TiledCopy", (cute_py.make_copy_atom("UniversalCopy<uint32_t>", "f32"), "u4", "x")),  # % formatting
    ("cute_py.make_tensor_like", (cute_py.make_tensor(np.arange(6), (2, 3)), "u4")),  # message named no function
    ("cute_py.slice_and_offset", ([], cute_py.ComposedLayout(cute_py.Swizzle(0, 4, -1), 0, _L(1, 54)))),  # int + list
    ("cute_py.make_copy_atom", ("UniversalCopy<uint32_t>", "UniversalCopy<uint32_t>")),  # led by "dtype:"
]


@pytest.mark.parametrize("case", FIXED, ids=[f"{c[0]}-{i}" for i, c in enumerate(FIXED)])
def test_fixed_inputs_stay_fixed(case):
    name, args, kwargs = (*case, {})[:3]
    fn = PUBLIC.get(name) or GemmSpec.from_dict
    outcome, exc = guarded(fn, name, args, kwargs)
    assert outcome in ("ok", "documented"), f"{name}{describe(args, kwargs)}: {type(exc).__name__}: {exc}"


def test_list_coordinates_are_tuples():
    """Found with slice_and_offset([], ...): crd2idx took a list coordinate as a sequence to multiply, so
    crd2idx([0], 1:54) returned a list of 54 zeros; lists now read as tuples, as everywhere else."""
    assert cute_py.crd2idx([1, [1, 0]], cute_py.Layout((4, (2, 3)))) == 5
    with pytest.raises(cute_py.CoordinateError):
        cute_py.crd2idx([0], cute_py.Layout(1, 54))


def test_limits_catch_slow_and_hungry_calls():
    """The harness's own limits work: a call past the time limit, or allocating past the memory headroom, is an
    undocumented outcome (not a hang, not a dead test process)."""
    import time
    t0 = time.monotonic()
    outcome, exc = guarded(time.sleep, "sleep", (30,))
    assert outcome == "undocumented" and type(exc).__name__ == "CallTimeout" and time.monotonic() - t0 < 10
    outcome, exc = guarded(bytearray, "bytearray", (8 << 30,))
    assert outcome == "undocumented" and isinstance(exc, MemoryError)
    assert guarded(cute_py.size, "size", ((2, 3),)) == ("ok", None)


def test_harness_covers_every_public_function():
    assert len(PUBLIC) > 100, sorted(PUBLIC)
    for name in ("cute_py.composition", "cute_py.viz.to_svg", "cute_py.emit.emit_gemm", "cute_py.explain"):
        assert name in PUBLIC
