"""``cute_py.torch``'s entry points on generated junk raise documented errors (issue 34, Build (d)).

``matmul``, ``Linear``, ``Linear.from_linear``, ``swap_linear``, ``autotune``, ``collect`` and the
``torch.ops.cute_py`` operators (on CPU tensors, where they run torch's arithmetic) are called with arguments
drawn from valid ones mixed with junk (tensors of other types, ranks and shapes, lists, strings, numbers,
modules). The property: each call returns, or raises what its docstring documents -- GemmInputError,
AutotuneError, the runtime's errors (``cute_py.ERRORS``: NoDeviceError without a GPU), or a TypeError/ValueError
naming the function -- never an AttributeError or a bare TypeError from inside. Calling an operator directly with
an argument of a type its schema does not take is refused by torch's dispatcher with a RuntimeError naming the
operator and the argument (``cute_py::gemm() Expected a value of type 'Tensor' for argument 'a'``): documented
by torch for every custom operator, and accepted here for ``torch.ops`` calls only.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import cute_py  # noqa: E402
import cute_py.torch as ct  # noqa: E402

from fuzz_support import COUNTS, classify, describe, limits  # noqa: E402

JUNK = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))  # per entry point

_TYPES = [torch.bfloat16, torch.float16, torch.float32, torch.int8, torch.float8_e4m3fn, torch.int32]


@st.composite
def cpu_tensors(draw):
    """A CPU tensor of a drawn type, rank 0 to 3 and small shape, sometimes transposed or requiring grad."""
    dtype = draw(st.sampled_from(_TYPES[:3] * 3 + _TYPES))
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 4, 8, 16]), min_size=0, max_size=3)))
    t = torch.zeros(shape, dtype=torch.float32).to(dtype) if dtype != torch.float8_e4m3fn else \
        torch.zeros(shape).to(dtype)
    if t.dim() == 2 and draw(st.booleans()):
        t = t.t()
    if dtype.is_floating_point and dtype != torch.float8_e4m3fn and draw(st.integers(0, 4)) == 0:
        t.requires_grad_(True)
    return t


def _valid():
    x = torch.ones(8, 16, dtype=torch.bfloat16)
    w = torch.ones(4, 16, dtype=torch.bfloat16)
    return x, w


_junk_scalars = st.sampled_from([None, "x", "relu", 1, 0, 2.5, True, float("nan"), [1.0], (), {}, b"x", torch.bfloat16,
                                 "bf16", -1, 2 ** 40, object()])
junk_args = st.one_of(cpu_tensors(), cpu_tensors(), _junk_scalars,
                      st.sampled_from([torch.nn.Linear(4, 4), torch.nn.Conv1d(2, 2, 1), torch.nn.Identity(), len]))
_not_models = _junk_scalars.filter(lambda x: not callable(x))
"""Junk for a model argument: a callable junk model (nn.Linear on bf16 inputs) raises its own errors, which
collect and autotune pass on as they are."""
_ACTIVATIONS = st.sampled_from([None, "relu", "gelu", "x", 3, "", "RELU"])


def _arg(data, label, valid, junk=junk_args):
    """The valid argument most of the time, else junk."""
    return valid if data.draw(st.integers(0, 2), label=f"{label} valid?") else data.draw(junk, label=label)


def _matmul(data):
    x, w = _valid()
    kw = {k: data.draw(v, label=k) for k, v in {"alpha": _junk_scalars, "beta": _junk_scalars,
                                                   "activation": _ACTIVATIONS, "bias": junk_args,
                                                   "out_dtype": _junk_scalars, "out": junk_args}.items()
          if data.draw(st.integers(0, 3), label=f"use {k}") == 0}
    return ct.matmul, (_arg(data, "a", x), _arg(data, "b", w.t())), kw


def _linear(data):
    kw = {k: data.draw(v, label=k) for k, v in {"bias": _junk_scalars, "activation": _ACTIVATIONS,
                                                   "device": st.sampled_from(["cpu", "nope", 3, None, "meta"]),
                                                   "dtype": _junk_scalars}.items()
          if data.draw(st.booleans(), label=f"use {k}")}
    return ct.Linear, (_arg(data, "in_features", 16), _arg(data, "out_features", 4)), kw


def _forward(data):
    m = ct.Linear(16, 4, activation=data.draw(st.sampled_from([None, "relu", "gelu"]), label="act"))
    return m, (_arg(data, "x", torch.ones(3, 16, dtype=torch.bfloat16)),), {}


def _from_linear(data):
    m = torch.nn.Linear(16, 4, dtype=data.draw(st.sampled_from([torch.bfloat16, torch.float32]), label="dtype"))
    return ct.Linear.from_linear, (_arg(data, "m", m),), {"activation": data.draw(_ACTIVATIONS, label="activation")}


def _swap(data):
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU()).to(torch.bfloat16)
    return ct.swap_linear, (_arg(data, "model", model),), {}


def _autotune(data):
    x, _ = _valid()
    kw = {k: data.draw(v, label=k) for k, v in {"reps": _junk_scalars, "warmup": _junk_scalars, "batch": _junk_scalars,
                                                   "progress": _junk_scalars, "cache": _junk_scalars,
                                                   "check": _junk_scalars, "backward": _junk_scalars,
                                                   "candidates": _junk_scalars}.items()
          if data.draw(st.integers(0, 3), label=f"use {k}") == 0}
    return ct.autotune, (_arg(data, "model", ct.Linear(16, 4), _not_models), _arg(data, "example_inputs", (x,))), kw


def _collect(data):
    x, _ = _valid()
    return ct.collect, (_arg(data, "model", ct.Linear(16, 4), _not_models), _arg(data, "example_inputs", (x,))), \
        {"backward": data.draw(_junk_scalars, label="backward")} if data.draw(st.booleans(), label="kw") else {}


def _op(name):
    def call(data):
        x, w = _valid()
        if name == "scaled_gemm":
            x8, w8 = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn).t()
            args = (_arg(data, "a", x8), _arg(data, "b", w8), _arg(data, "scale_a", torch.ones(1)),
                    _arg(data, "scale_b", torch.ones(1)))
        elif name == "grouped_mm":
            args = (_arg(data, "a", x), _arg(data, "b", torch.ones(2, 16, 4, dtype=torch.bfloat16)),
                    _arg(data, "offs", torch.tensor([3, 8], dtype=torch.int32)))
        elif name == "gemm_out":
            args = (_arg(data, "a", x), _arg(data, "b", w.t()), _arg(data, "out", torch.empty(8, 4, dtype=torch.bfloat16)))
        else:
            args = (_arg(data, "a", x), _arg(data, "b", w.t()), _arg(data, "c", None), _arg(data, "bias", None))
        return getattr(torch.ops.cute_py, name), args, {}
    return call


ENTRY_POINTS = {"cute_py.torch.matmul": _matmul, "cute_py.torch.Linear": _linear,
                "cute_py.torch.Linear.forward": _forward, "cute_py.torch.Linear.from_linear": _from_linear,
                "cute_py.torch.swap_linear": _swap, "cute_py.torch.autotune": _autotune,
                "cute_py.torch.collect": _collect,
                **{f"torch.ops.cute_py.{n}": _op(n) for n in ("gemm", "gemm_out", "scaled_gemm", "grouped_mm")}}

_SCHEMA = re.compile(r"^cute_py::(\w+)\(\) Expected a value of type '[^']+' for argument '\w+'")


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
@JUNK
@given(data=st.data())
def test_entry_point_on_junk(name, data):
    fn, args, kwargs = ENTRY_POINTS[name](data)
    COUNTS["torch", name] += 1
    try:
        with limits(seconds=10):
            fn(*args, **kwargs)
        return
    except RuntimeError as e:                          # torch's dispatcher: an argument of a type the schema refuses
        if name.startswith("torch.ops.") and _SCHEMA.match(str(e)):
            return
        exc = e
    except Exception as e:  # noqa: BLE001 - sorting every error is the point
        exc = e
    short = name.rsplit(".", 1)[-1]
    outcome = classify(exc, "Linear" if short in ("forward", "from_linear") else short)
    if outcome != "documented" and name.startswith("torch.ops.") and str(exc).startswith(f"{name}:"):
        outcome = "documented"
    assert outcome == "documented", \
        f"{name}{describe(args, kwargs)} raised {type(exc).__name__}: {str(exc)[:300]}"


# Found by the property above (each raised what the comment says before its fix).
FIXED = [
    lambda: torch.ops.cute_py.gemm(None, torch.ones(16, 4, dtype=torch.bfloat16)),   # AttributeError: no 'dim'
    lambda: torch.ops.cute_py.gemm_out(torch.ones(8, 16, dtype=torch.bfloat16), None,
                                       torch.empty(8, 4, dtype=torch.bfloat16)),   # AttributeError: no 'dim'
    lambda: ct.matmul(torch.ones(8, 16, dtype=torch.bfloat16), torch.ones(16, 4, dtype=torch.bfloat16),
                      out_dtype="f32"),     # RuntimeError: Expected 'Optional[int]' for argument 'out_dtype'
    lambda: ct.matmul(torch.ones(8, 16, dtype=torch.bfloat16), torch.ones(16, 4, dtype=torch.bfloat16),
                      alpha="2"),                          # RuntimeError from the dispatcher, naming cute_py::gemm
    lambda: ct.Linear("16", 4),                            # TypeError: empty(): argument 'size' failed to unpack
    lambda: ct.Linear(-1, 4),                              # RuntimeError: negative dimension -1
    lambda: ct.Linear(16, 4, device="nope"),               # RuntimeError: Expected one of cpu, cuda, ...
]


@pytest.mark.parametrize("case", range(len(FIXED)))
def test_fixed_junk_stays_refused(case):
    with pytest.raises(cute_py.GemmInputError):
        FIXED[case]()
