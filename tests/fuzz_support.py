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
