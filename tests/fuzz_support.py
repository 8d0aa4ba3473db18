"""Support for tests/test_fuzz_api.py: the value strategies and the guarded call.

:func:`guarded` runs one call under a wall-clock limit (SIGALRM) and an address-space limit
(``RLIMIT_AS``: the current size plus :data:`MEM_HEADROOM`), and sorts its outcome into
``"ok"`` (returned, and the result prints), ``"documented"`` (a documented error) or
``"delegate"`` (see :func:`classify`) or ``"undocumented"`` (anything else: a bare TypeError/ValueError that does not name the function, an
IndexError, ZeroDivisionError, RecursionError, MemoryError, AttributeError, a timeout ...).
"""

from __future__ import annotations

import io
import re
import resource
import signal
import sys
from collections import Counter
from contextlib import contextmanager, redirect_stdout

import numpy as np
import sympy
from hypothesis import strategies as st

import cute_py
from cute_py import ComposedLayout, Layout, LayoutLeft, LayoutRight, Swizzle, _

from strategies import compact_layouts, layouts, shapes, swizzles

TIME_LIMIT_S = 2.0
MEM_HEADROOM = 2 << 30  # bytes of address space a call may add

# Documented errors: the layout algebra's, the spec's, the GEMM front end's, and every error class
# cute_py exports (cute_py.ERRORS: AtomError, EmitError, ... each documented where raised).
DOCUMENTED = tuple({cute_py.LayoutError, cute_py.SpecError, cute_py.GemmInputError, cute_py.AutotuneError,
                    *(getattr(cute_py, n) for n in cute_py.ERRORS)})

COUNTS: Counter = Counter()  # inputs run, by harness part and outcome (printed by test_fuzz_api with -s)


class CallTimeout(BaseException):
    """Raised in the call by the SIGALRM handler (a BaseException, so ``except Exception`` in the library
    does not swallow it)."""


def _vm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return None


@contextmanager
def limits(seconds=TIME_LIMIT_S, headroom=MEM_HEADROOM):
    """Wall-clock (SIGALRM) and address-space (RLIMIT_AS) limits around a block (Linux, main thread)."""
    def on_alarm(signum, frame):
        raise CallTimeout(f"over {seconds} s")

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    old_as = resource.getrlimit(resource.RLIMIT_AS)
    vm = _vm_bytes()
    if vm is not None and old_as[0] == resource.RLIM_INFINITY:
        resource.setrlimit(resource.RLIMIT_AS, (vm + headroom, old_as[1]))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, old_as)


def names_function(exc, name):
    """Whether a TypeError/ValueError's message names the function (``name``, or its last dotted part)."""
    msg = str(exc)
    short = name.rsplit(".", 1)[-1]
    return short in msg or name in msg


_LEAD = re.compile(r"^([A-Za-z_][\w.]*)(?:\(\))?:")


def classify(exc, name):
    """How an exception raised by the public function ``name`` counts: ``"documented"`` (a documented class,
    or a TypeError/ValueError naming the function), ``"delegate"`` (a TypeError/ValueError whose message is
    led by the name of *another* function, the one the call delegated to: clear, but not naming the function
    called) or ``"undocumented"`` (anything else)."""
    if isinstance(exc, DOCUMENTED):
        return "documented"
    if type(exc) in (TypeError, ValueError):
        if names_function(exc, name):
            return "documented"
        if _LEAD.match(str(exc)):
            return "delegate"
    return "undocumented"


def guarded(fn, name, args=(), kwargs=None):
    """Call ``fn(*args, **kwargs)`` under the limits; return ``(outcome, exception_or_None)``."""
    kwargs = kwargs or {}
    old_depth = sys.getrecursionlimit()
    try:
        with limits(), redirect_stdout(io.StringIO()):  # print_layout & co. print to stdout
            result = fn(*args, **kwargs)
            if isinstance(result, (Layout, ComposedLayout, Swizzle)):
                str(result)  # a returned layout must print
        return "ok", None
    except CallTimeout as e:
        return "undocumented", e
    except RecursionError as e:
        return "undocumented", e
    except Exception as e:  # noqa: BLE001 - sorting every error is the point
        return classify(e, name), e
    finally:
        sys.setrecursionlimit(old_depth)


def describe(args, kwargs=None):
    """A short, printable rendering of an argument list (for failure messages)."""
    def one(a):
        try:
            text = str(a) if isinstance(a, (Layout, Swizzle, ComposedLayout)) else repr(a)
        except Exception:  # noqa: BLE001
            text = f"<unprintable {type(a).__name__}>"
        return text if len(text) < 120 else text[:117] + "..."
    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in (kwargs or {}).items()]
    return "(" + ", ".join(parts) + ")"


# ---------------------------------------------------------------------------------------------------------------
# value strategies

M, K = sympy.symbols("M K", positive=True, integer=True)

junk_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-8, 64),
    st.integers(-(2 ** 70), 2 ** 70),
    st.sampled_from([2 ** 31, 2 ** 63, 10 ** 30, -(2 ** 64)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 2.0, -1.0, float("nan"), float("inf")]),
    st.text(max_size=6),
    st.sampled_from(["(4,8):(8,1)", "(M,K):(K,1)", "8:1", "Sw<3,4,3>", "bf16", "f32", "", "((", "m", "n"]),
    st.sampled_from([M, K, M * K, sympy.Integer(4), sympy.Rational(1, 2)]),
    st.sampled_from([np.int64(4), np.int32(-3), np.uint8(8), np.float32(2.5), np.float64(1e30), np.bool_(True)]),
    st.sampled_from([_, LayoutLeft, LayoutRight, (), [], {}, b"x", object, len]),
)

junk = st.recursive(
    junk_leaf,
    lambda kids: st.one_of(st.lists(kids, max_size=3).map(tuple), st.lists(kids, max_size=3),
                           st.dictionaries(st.sampled_from(["a", "shape", "m", 0]), kids, max_size=2)),
    max_leaves=6,
)


@st.composite
def composed(draw):
    return ComposedLayout(draw(swizzles()), draw(st.integers(0, 16)), draw(layouts(max_size=32, max_leaves=3)))


@st.composite
def tensors(draw):
    L = draw(compact_layouts(max_size=32, max_leaves=3))
    kind = draw(st.integers(0, 1))
    if kind == 0:
        return cute_py.make_tensor(np.arange(cute_py.size(L)), L)
    return cute_py.make_identity_tensor(L.shape)


host_arrays = st.one_of(
    st.tuples(st.integers(0, 5), st.integers(0, 5)).map(lambda s: np.zeros(s, dtype=np.float32)),
    st.sampled_from([np.zeros((4, 4), np.float16), np.zeros((8,), np.float32), np.zeros((2, 2, 2), np.int8),
                     np.zeros((4, 4), np.complex64), np.array(["a", "b"])]),
)

def _atoms():
    """A few atoms and tilings (built once): an MMA atom, a TiledMMA, a copy atom, a TiledCopy."""
    from cute_py import atoms
    mma = atoms.get("SM80_16x8x16_F16F16F16F16_TN")
    copy = cute_py.make_copy_atom("UniversalCopy<uint32_t>", "f32")
    tiled = cute_py.make_tiled_mma(mma, (2, 2, 1))
    return [mma, tiled, copy, cute_py.make_tiled_copy(copy, Layout((32, 4), (4, 1))),
            "SM80_16x8x16_F16F16F16F16_TN", "SM90_64x128x16_F32BF16BF16_SS", "UniversalCopy<uint32_t>"]


atom_values = st.sampled_from(_atoms())
dtype_names = st.sampled_from(["f16", "bf16", "f32", "s8", "u4", "b1", "e4m3", "f64", np.float16, np.int8])

valid = st.one_of(
    atom_values,
    dtype_names,
    layouts(allow_negative=True, max_size=64),
    compact_layouts(max_size=64),
    swizzles(),
    composed(),
    shapes(max_size=64),
    st.integers(1, 16),
    tensors(),
)

values = st.one_of(valid, valid, junk)


# ---------------------------------------------------------------------------------------------------------------
# invalid values, one strategy per kind of field (tests/test_fuzz_constructors.py)

_NOT_BOOL = ["no", "yes", "True", "", 0, 1, 1.0, None, np.int64(1), [], (True,)]


def not_bools():
    """Values a bool field must refuse: truthy and falsy non-bools (numpy's bool is a bool, so never drawn)."""
    return st.sampled_from(_NOT_BOOL)


def bad_ints(lo=None, hi=None, allowed=None, none_ok=False):
    """Values an int field in ``[lo, hi]`` (or one of ``allowed``) must refuse: other types (bools, floats, digit
    strings, one-element sequences; None unless ``none_ok``), and ints out of the range or set."""
    wrong_type = ["2", 2.0, 2.5, True, False, [2], (2,), b"2", float("nan")] + ([] if none_ok else [None])
    ints = st.integers(-(2 ** 40), 2 ** 40)
    if allowed is not None:
        out_of_range = ints.filter(lambda v: v not in allowed)
    else:
        parts = ([st.integers(max_value=lo - 1)] if lo is not None else []) + \
                ([st.integers(min_value=hi + 1)] if hi is not None else [])
        out_of_range = st.one_of(*parts)
    return st.one_of(st.sampled_from(wrong_type), out_of_range)


def unknown_names(allowed, none_ok=False, normal=str.lower):
    """Values a name field (one of ``allowed``) must refuse: other strings (``normal(s)`` not allowed: the field
    may read case or aliases) and other types (None unless ``none_ok``)."""
    fixed = ["", "nope", "x" * 9, 3, 1.5, True, b"bf16", ("bf16",)] + ([] if none_ok else [None])
    return st.one_of(st.sampled_from(fixed),
                     st.text(max_size=8).filter(lambda s: s not in allowed and normal(s) not in allowed))


def bad_int_tuples(n, allowed=None):
    """Values a field of ``n`` positive ints (one of ``allowed`` when given) must refuse: other lengths, an
    element that is not a positive int, other types; and tuples outside ``allowed``."""
    bad_leaf = st.sampled_from([0, -1, 2.5, True, "8", None, 64.0])
    good_leaf = st.sampled_from([1, 2, 64, 128])

    @st.composite
    def one_bad(draw):
        items = [draw(good_leaf) for _ in range(n)]
        items[draw(st.integers(0, n - 1))] = draw(bad_leaf)
        return tuple(items)

    wrong = st.one_of(
        st.lists(good_leaf, min_size=0, max_size=n + 2).filter(lambda t: len(t) != n).map(tuple),
        one_bad(),
        st.sampled_from([128, "128x128x64", None, {"bm": 128}, "(1,1)", 1.0]),
    )
    if allowed is None:
        return wrong
    return st.one_of(wrong, st.tuples(*[st.integers(1, 8)] * n).filter(lambda t: t not in allowed))


def bad_gmem_layouts(modes):
    """Values a gmem layout field with modes ``modes`` (e.g. ("M", "K")) must refuse: malformed CuTe text,
    layouts with other mode names, no contiguous mode, concrete extents, and other types."""
    m, k = modes
    return st.sampled_from([
        f"({m},{k}):({k},1", "((", "", "x", f"({k},{m}):(1,{k})", f"({m},{k}):(1,1)", f"({m},{k}):({k},{m})",
        f"({m},{k}):(2,1)", "(4,8):(8,1)", f"(({m},2),{k}):((1,{m}),{k})", f"{m}:1", f"({m},{k},L):({k},1,1)",
        7, None, 1.5, (m, k), Layout((4, 8), (8, 1)),
    ])
