"""``cute_py.gemm``: ``D = act(alpha * a @ b + beta * c + bias)`` with a kernel generated from a GemmSpec.

Works on torch or cupy device arrays (or anything with
``__cuda_array_interface__`` / ``__dlpack__``) without importing torch.
``a`` is ``(M, K)`` and ``b`` is ``(K, N)``, as in ``torch.matmul``; each may
be row- or column-major (the spec's majorness is read from the strides).
Every input is checked before anything is launched.
"""

from __future__ import annotations

import ctypes
import sys
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from .emit import GemmSpec, emit_gemm, gemm_plan

__all__ = ["gemm", "pick_spec", "compiled", "GemmInputError"]

_KERNELS: dict = {}


class GemmInputError(ValueError):
    """Inputs that the GEMM cannot take (shape, dtype, alignment, contiguity, device); raised before launch."""


def _arr(x, what):
    from .runtime import as_device_array
    try:
        return as_device_array(x)
    except Exception as e:  # noqa: BLE001 - re-raised with the argument's name
        raise GemmInputError(f"gemm: {what}: {e}") from None


def _round8(x):
    return -(-x // 8) * 8


def _operand(x, what):
    """``("inner" | "outer", ld)``: which dimension of the 2-D array ``x`` is contiguous, and the other's stride.

    An extent-1 dimension's stride is never used; its ld is set to a legal value.
    """
    (r, c), (sr, sc) = x.shape, x.strides
    if c > 1 and sc == 1:
        return "inner", (sr if r > 1 else _round8(c))
    if r > 1 and sr == 1:
        return "outer", (sc if c > 1 else _round8(r))
    if r <= 1 and c <= 1:
        return "inner", 8
    raise GemmInputError(f"gemm: {what} with shape {x.shape} and element strides {x.strides} is not contiguous along "
                         f"either dimension (one stride must be 1); make it contiguous first")


def _out_layout(x, what):
    """``(row_major, ld)`` of a 2-D output (no TMA: any leading dimension works)."""
    (r, c), (sr, sc) = x.shape, x.strides
    if sc == 1 or c == 1:
        return True, sr
    if sr == 1 or r == 1:
        return False, sc
    raise GemmInputError(f"gemm: {what} with shape {x.shape} and element strides {x.strides} is not contiguous along "
                         f"either dimension (one stride must be 1)")


@lru_cache(maxsize=1024)
def _tma_params(spec, which, mn, k, ld, major):
    """TmaParams of one operand's concrete gmem layout (cached: the layout algebra runs once per shape)."""
    from .arch.sm90 import make_tma_params
    from .layouts import Layout
    op = gemm_plan(spec).a if which == "A" else gemm_plan(spec).b
    lay = Layout((mn, k), (ld, 1) if major == "K" else (1, ld))
    p = make_tma_params(lay, op.smem, spec.dtype, multicast=op.tma.multicast)
    _same_box("gemm", which, p, op.tma)
    return p


def _same_box(op, which, concrete, planned):
    """The concrete TMA box must be the one the kernel was emitted for (its TMA issues and tx bytes assume it)."""
    if concrete.box_dim != planned.box_dim:
        raise GemmInputError(f"{op}: operand {which}: the TMA box {concrete.box_dim} of the concrete layout differs "
                             f"from the box {planned.box_dim} the kernel was generated for")


_TMAPS: "OrderedDict" = OrderedDict()


def _tensor_map(ptr, params):
    """Encoded tensor map for (address, params); a small LRU, since encoding is a driver call per operand."""
    from . import runtime as rt
    key = (ptr, params)
    hit = _TMAPS.get(key)
    if hit is None:
        hit = rt.tensor_map(ptr, params)
        _TMAPS[key] = hit
        if len(_TMAPS) > 64:
            _TMAPS.popitem(last=False)
    else:
        _TMAPS.move_to_end(key)
    return hit


def pick_spec(M, N, K, a_major, b_major, dtype, out_dtype, *, beta=False, bias=None, activation=None,
              c_row_major=True, d_tma=True, sm_count=132) -> GemmSpec:
    """The spec :func:`gemm` uses for a problem (the heuristic; :func:`cute_py.autotune` can do better).

    Measured on the H100 (benchmarks/NOTES.md, versions 2 and 3):

    - tile 128x256x64 (2 consumer warpgroups, 64x256 wgmma each) when that
      still gives every SM a tile; else 128x128x64 while those tiles fill at
      least 90% of the SMs. 128x128x64 also for heavier epilogues (any of
      beta, bias, activation with an MN-major A; two or more with a K-major
      A), where the 128x256 kernel would spill registers;
    - fewer tiles than that (small M): 64-row tiles with one consumer
      warpgroup, which double the CTAs streaming B: 64x128x64 when they fill
      90% of the SMs, else 64x64x64 (13 stages deep);
    - split-K (2) only for long K (at least 128 k-blocks) when even those
      tiles fill at most half the SMs: the f32 reduction through L2 costs
      more than it gains elsewhere;
    - the TMA-store epilogue for a row-major, 16-byte aligned D (``d_tma``),
      else direct stores;
    - persistent, cooperative, no cluster (neither ping-pong nor 2-CTA
      clusters paid on any measured shape); L2 raster groups of 32 tile rows
      from 8 waves of tiles on, 16 from 2 waves, else 8.

    >>> pick_spec(8192, 8192, 8192, "K", "K", "bf16", "bf16").name
    'cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g32'
    >>> s = pick_spec(128, 4096, 14336, "K", "K", "bf16", "bf16")
    >>> s.tile, s.consumers, s.split_k
    ((64, 64, 64), 1, 1)
    >>> pick_spec(64, 1024, 14336, "K", "K", "bf16", "bf16").split_k
    2
    >>> pick_spec(128, 4096, 4096, "K", "K", "bf16", "bf16").name
    'cute_gemm_sm90_bf16_tn_64x64x64_s13_c1_obf16_dr_g8'
    """
    a = "(M,K):(K,1)" if a_major == "K" else "(M,K):(1,M)"
    b = "(N,K):(K,1)" if b_major == "K" else "(N,K):(1,N)"
    c = "(M,N):(N,1)" if c_row_major else "(M,N):(1,M)"

    def tiles(bm, bn):
        return -(-M // bm) * -(-N // bn)

    extras = int(bool(beta)) + (bias is not None) + (activation is not None)
    light = extras == 0 or (a_major == "K" and extras == 1)
    long_k = -(-K // 64) >= 128
    fill = 0.9 * sm_count
    split = 1
    if tiles(128, 256) >= sm_count and light:
        tile = (128, 256, 64)
    elif tiles(128, 128) >= fill:
        tile = (128, 128, 64)
    elif tiles(64, 128) >= fill:
        tile = (64, 128, 64)
    else:
        tile = (64, 64, 64)
    n = tiles(tile[0], tile[1])
    if n * 2 <= sm_count and long_k:
        split = 2
    group = 32 if n >= 8 * sm_count else 16 if n >= 2 * sm_count else 8
    return GemmSpec(a=a, b=b, c=c, dtype=dtype, out_dtype=out_dtype, tile=tile, consumers=tile[0] // 64, beta=beta,
                    bias=bias, activation=activation, split_k=split, group=group,
                    epilogue="tma" if c_row_major and d_tma else "direct")


def compiled(spec: GemmSpec):
    """``(Program, Kernel)`` for ``spec``: emitted, compiled with NVRTC (disk-cached) and loaded once per process."""
    hit = _KERNELS.get(spec)
    if hit is None:
        from . import runtime as rt
        prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")
        hit = (prog, prog.kernel(spec.name))
        _KERNELS[spec] = hit
    return hit


def _lib_of(x):
    return type(x).__module__.split(".")[0]


def _allocator(like):
    """``new(shape, dtype_name)``: empty device arrays from the library (and device) of ``like``, without keeping
    ``like`` alive and without importing torch ourselves."""
    lib = _lib_of(like)
    mod = sys.modules.get(lib)
    if lib == "torch":
        dev = like.device

        def new(shape, dtype_name):
            tdt = {"bf16": mod.bfloat16, "f16": mod.float16, "f32": mod.float32}[dtype_name]
            return mod.empty(shape, dtype=tdt, device=dev)
        return new
    if lib == "cupy":
        dev = like.device

        def new(shape, dtype_name):
            npdt = {"bf16": np.uint16, "f16": np.float16, "f32": np.float32}[dtype_name]
            with dev:
                return mod.empty(shape, dtype=npdt)
        return new
    kind = type(like).__name__

    def refuse(shape, dtype_name):
        raise GemmInputError(f"gemm: cannot allocate the output like a {kind}; pass out=")
    return refuse


def _alloc(like, shape, dtype_name):
    """An empty device array made by the library ``like`` comes from."""
    return _allocator(like)(shape, dtype_name)


def _dtype_of(x, what, allowed):
    name = x.dtype.name
    if name == "u16":                     # cupy has no bf16: raw 16-bit words are read as bf16
        name = "bf16"
    if name not in allowed:
        raise GemmInputError(f"gemm: {what} has element type {x.dtype.name}; supported: {allowed}")
    return name


def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out=None, spec=None, stream=None):
    """``D = act(alpha * a @ b + beta * c + bias)``; returns D (``out`` if given).

    - ``a`` (M, K), ``b`` (K, N): bf16 or f16 (the same type), each
      contiguous along one dimension with its other stride a multiple of 16
      bytes (a TMA requirement), 16-byte aligned, on one device.
    - ``c`` (M, N), with ``beta``: read in D's layout and type.
    - ``bias``: a vector in D's type; length N adds ``bias[n]`` to every row
      (as ``torch.nn.Linear``), length M (M != N) adds ``bias[m]`` to every column.
    - ``activation``: None, "relu" or "gelu" (erf form).
    - ``out``: (M, N), row- or column-major; default a new row-major array of
      a's type from a's library. ``spec`` overrides the kernel choice (its
      majors and types must match the arrays).

    Raises :class:`GemmInputError` before launching for mismatched shapes,
    unsupported types, misaligned or non-contiguous operands, different devices.

    >>> d = gemm(a, b, bias=bias, activation="relu")          # doctest: +SKIP
    >>> import numpy as np
    >>> gemm(np.ones((64, 64)), np.ones((64, 64)))            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.gemm.GemmInputError: gemm: a: as_device_array: the array lives on the CPU device, not a CUDA GPU; ...
    """
    key = _launch_key(a, b, c, bias, out, alpha, beta, activation, spec, stream)
    if key is not None:
        call = _LAUNCHES.get(key)
        if call is not None:                 # the same arrays, scalars and spec as a checked call before
            _LAUNCHES.move_to_end(key)
            return call.run(out)
    A, B = _arr(a, "a"), _arr(b, "b")
    if len(A.shape) != 2 or len(B.shape) != 2:
        raise GemmInputError(f"gemm: a and b must be 2-D, got shapes {A.shape} and {B.shape}")
    M, K = A.shape
    K2, N = B.shape
    if K != K2:
        raise GemmInputError(f"gemm: inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
    t = _dtype_of(A, "a", ("bf16", "f16"))
    tb = _dtype_of(B, "b", ("bf16", "f16"))
    if t != tb:
        raise GemmInputError(f"gemm: a is {t} but b is {tb}; both must have one type")
    if K == 0:
        raise GemmInputError("gemm: K = 0 (empty inner dimension) is not supported")
    devs = {d for d in (A.device, B.device) if d is not None}
    if len(devs) > 1:
        raise GemmInputError(f"gemm: a and b are on different devices {sorted(devs)}")
    a_inner, lda = _operand(A, "a")
    b_inner, ldb = _operand(B, "b")
    a_major = "K" if a_inner == "inner" else "MN"         # a (M, K): K contiguous -> K-major
    b_major = "MN" if b_inner == "inner" else "K"         # b (K, N): N contiguous -> N-major (B = b^T is (N, K))
    problems = []
    for name, x, ld in (("a", A, lda), ("b", B, ldb)):
        if x.ptr % 16:
            problems.append(f"{name} starts at {x.ptr:#x}, not 16-byte aligned (TMA)")
        if ld * x.itemsize % 16:
            problems.append(f"{name}'s leading dimension {ld} x {x.itemsize} B = {ld * x.itemsize} B is not a multiple "
                            f"of 16 B (TMA); pad it to a multiple of {16 // x.itemsize} elements")
    out_t = t if spec is None else spec.out_dtype
    if out is not None:
        D = _arr(out, "out")
        out_t = _dtype_of(D, "out", ("bf16", "f16", "f32")) if D.dtype.name != "u16" or spec is None else spec.out_dtype
        if D.shape != (M, N):
            problems.append(f"out has shape {D.shape}, expected {(M, N)}")
    else:
        D = None
    if problems:
        raise GemmInputError("gemm: " + "; ".join(problems))
    if M == 0 or N == 0:
        return out if out is not None else _alloc(a, (M, N), out_t)
    if D is None:
        out = _alloc(a, (M, N), out_t)
        D = _arr(out, "out")
    c_row, ldd = _out_layout(D, "out")
    if D.device is not None and devs and D.device not in devs:
        raise GemmInputError(f"gemm: out is on device {D.device}, the inputs on {sorted(devs)}")
    Cd = None
    ldc = ldd
    if c is not None and beta != 0:
        Cd = _arr(c, "c")
        if Cd.shape != (M, N):
            raise GemmInputError(f"gemm: c must have out's shape {(M, N)}; got {Cd.shape}")
        c_row_c, ldc = _out_layout(Cd, "c")
        if c_row_c != c_row and M > 1 and N > 1:
            raise GemmInputError(f"gemm: c is {'row' if c_row_c else 'column'}-major but out is "
                                 f"{'row' if c_row else 'column'}-major; they must agree")
        if _dtype_of(Cd, "c", ("bf16", "f16", "f32")) != out_t:
            raise GemmInputError(f"gemm: c is {Cd.dtype.name}, out is {out_t}")
    bias_mode, Bias = None, None
    if bias is not None:
        Bias = _arr(bias, "bias")
        n = Bias.shape[0] if len(Bias.shape) == 1 else -1
        if len(Bias.shape) != 1 or n not in (M, N) or (Bias.strides[0] != 1 and n > 1):
            raise GemmInputError(f"gemm: bias must be a contiguous vector of length N={N} (per column) or M={M} "
                                 f"(per row); got shape {Bias.shape}")
        bias_mode = "col" if n == N else "row"
        if _dtype_of(Bias, "bias", ("bf16", "f16", "f32")) != out_t:
            raise GemmInputError(f"gemm: bias is {Bias.dtype.name}, out is {out_t}")
    if activation not in (None, "relu", "gelu"):
        raise GemmInputError(f"gemm: activation {activation!r} not in (None, 'relu', 'gelu')")
    if spec is not None:
        want = {"a_major": a_major, "b_major": b_major, "dtype": t, "out_dtype": out_t, "beta": Cd is not None,
                "bias": bias_mode, "activation": activation, "c_row_major": c_row}
        have = {"a_major": spec.a_major, "b_major": spec.b_major, "dtype": spec.dtype, "out_dtype": spec.out_dtype,
                "beta": spec.beta, "bias": spec.bias, "activation": spec.activation, "c_row_major": spec.c_row_major}
        bad = [f"{k}: spec {have[k]!r}, arrays {want[k]!r}" for k in want if want[k] != have[k]]
        if bad:
            raise GemmInputError("gemm: the spec does not match the arguments: " + "; ".join(bad))
    d_tma = c_row and D.ptr % 16 == 0 and (ldd * D.itemsize) % 16 == 0
    if spec is None:                          # an autotuned spec for this problem if one was recorded, else the heuristic
        from .autotune import lookup
        spec = lookup(M, N, K, a_major, b_major, t, out_t, Cd is not None, bias_mode, activation, c_row, d_tma=d_tma)
    if spec is None:
        spec = pick_spec(M, N, K, a_major, b_major, t, out_t, beta=Cd is not None, bias=bias_mode,
                         activation=activation, c_row_major=c_row, d_tma=d_tma, sm_count=_sm_count())
    elif spec.epilogue == "tma" and not d_tma:
        raise GemmInputError(f"gemm: spec {spec.name} stores D with TMA, which needs a row-major out starting on a "
                             f"16-byte boundary with a leading dimension of a multiple of 16 bytes; out is at "
                             f"{D.ptr:#x} with leading dimension {ldd}; use a spec with epilogue='direct'")
    call = _prepare(spec, a, A, B, D, Cd, Bias, M, N, K, lda, ldb, ldd, ldc, a_major, b_major, alpha, beta, stream)
    if key is not None:
        _LAUNCHES[key] = call
        if len(_LAUNCHES) > 256:
            _LAUNCHES.popitem(last=False)
    call.run(out)
    return out


# ---------------------------------------------------------------------------
# launches: prepared once per problem (arrays, scalars, spec, stream), then one driver call per gemm()

_LAUNCHES: "OrderedDict" = OrderedDict()
_WORKSPACES: dict = {}
_GRIDS: dict = {}


def _array_key(x):
    """A cheap identity of a device array (address, shape, strides, type), or None for unknown array types."""
    if x is None:
        return ()
    mod = type(x).__module__
    if mod.startswith("torch"):
        return (x.data_ptr(), x.shape, x.stride(), x.dtype)
    if mod.startswith("cupy"):
        return (x.data.ptr, x.shape, x.strides, x.dtype)
    return None


def _launch_key(a, b, c, bias, out, alpha, beta, activation, spec, stream):
    keys = (_array_key(a), _array_key(b), _array_key(c), _array_key(bias), _array_key(out))
    if None in keys or not isinstance(alpha, (int, float)) or not isinstance(beta, (int, float)):
        return None
    if out is None:
        keys += (type(a).__module__,)
    s = _stream_key(stream)
    if s is None:
        return None
    return keys + (float(alpha), float(beta), activation, spec, s)


def _stream_key(stream):
    """The stream's handle as an int (0: the legacy default stream), or None when it has no cheap handle."""
    if stream is None:
        return 0
    if isinstance(stream, int):
        return stream
    s = getattr(stream, "cuda_stream", None) or getattr(stream, "ptr", None)
    return s if isinstance(s, int) else None


def _sm_count() -> int:
    from . import runtime as rt
    return rt.device().sm_count


def _grid(spec, plan, kernel, M, N) -> int:
    """CTAs to launch: every work unit once, or (persistent) as many clusters as can be resident at once."""
    from . import runtime as rt
    units, cs = plan.work_units(M, N), plan.cluster_size
    if not spec.persistent:
        return units * cs
    wave = _GRIDS.get(spec)
    if wave is None:
        cl = (cs, 1, 1) if cs > 1 else None
        wave = rt.max_active_clusters(kernel, plan.threads, plan.smem_bytes, cl) if cl else _sm_count()
        if wave < 1:
            raise GemmInputError(f"gemm: no cluster of {cs} CTAs of {spec.name} fits on the device")
        _GRIDS[spec] = wave
    return min(units, wave) * cs


def _zeros(like, n, dtype_name):
    """A zeroed 1-D device array of ``n`` elements made by the library ``like`` comes from."""
    lib = _lib_of(like)
    mod = sys.modules.get(lib)
    if lib == "torch":
        return like.new_zeros((n,), dtype={"f32": mod.float32, "s32": mod.int32}[dtype_name])
    if lib == "cupy":
        return mod.zeros((n,), dtype={"f32": np.float32, "s32": np.int32}[dtype_name])
    raise GemmInputError(f"gemm: cannot allocate the split-K workspace like a {type(like).__name__}")


def _workspace(like, device, plan, M, N, stream_key):
    """The split-K f32 workspace (one partial tile per split and tile) and the per-tile counters, which return
    to zero after every launch: one pair serves every call on a stream (calls on one stream are ordered)."""
    bm, bn, _ = plan.spec.tile
    tiles = plan.workspace_tiles(M, N)
    floats = tiles * bm * bn * plan.spec.split_k
    key = (_lib_of(like), device, stream_key)
    ws, cnt = _WORKSPACES.get(key, (None, None))
    if ws is None or ws.shape[0] < floats or cnt.shape[0] < tiles:
        ws, cnt = _zeros(like, floats, "f32"), _zeros(like, tiles, "s32")
        _WORKSPACES[key] = (ws, cnt)
    return ws, cnt


class _GemmCall:
    """A prepared GEMM launch; ``run(out)`` launches it (allocating D first when ``out`` is None)."""

    def __init__(self, launch, like, shape, out_t, d_index, tmd_index, d_params, keep):
        self.launch, self.new, self.shape, self.out_t = launch, _allocator(like), shape, out_t
        self.d_index, self.tmd_index, self.d_params = d_index, tmd_index, d_params
        self.keep = keep
        self.d_ptr = None
        self.d_maps: "OrderedDict" = OrderedDict()

    def run(self, out):
        if out is None:
            out = self.new(self.shape, self.out_t)
        ptr = out.data_ptr() if hasattr(out, "data_ptr") else _arr(out, "out").ptr
        if ptr != self.d_ptr:
            self.launch.set_pointer(self.d_index, ptr)
            if self.tmd_index is not None:
                tm = self.d_maps.get(ptr)
                if tm is None:
                    tm = _tensor_map(ptr, self.d_params)
                    self.d_maps[ptr] = tm
                    if len(self.d_maps) > 8:
                        self.d_maps.popitem(last=False)
                self.launch.set_arg(self.tmd_index, tm)
            self.d_ptr = ptr
        self.launch()
        return out


def _prepare(spec, like, A, B, D, Cd, Bias, M, N, K, lda, ldb, ldd, ldc, a_major, b_major, alpha, beta, stream):
    from . import runtime as rt
    from .emit.params import kernel_params
    plan = gemm_plan(spec)
    _, kernel = compiled(spec)
    null = ctypes.c_void_p(0)
    vals = {"tma_a": _tensor_map(A.ptr, _tma_params(spec, "A", M, K, lda, a_major)),
            "tma_b": _tensor_map(B.ptr, _tma_params(spec, "B", N, K, ldb, b_major)),
            "d": ctypes.c_void_p(D.ptr), "c": Cd if Cd is not None else null,
            "bias": Bias if Bias is not None else null,
            "M": np.int32(M), "N": np.int32(N), "K": np.int32(K), "ld_d": np.int64(ldd), "ld_c": np.int64(ldc),
            "alpha": np.float32(alpha), "beta": np.float32(beta)}
    d_params = None
    if spec.epilogue == "tma":
        d_params = _tma_params_d(spec, M, N, ldd)
        vals["tma_d"] = _tensor_map(D.ptr, d_params)
    keep = []
    if spec.split_k > 1:
        ws, cnt = _workspace(like, A.device, plan, M, N, _stream_key(stream))
        vals["ws"], vals["counters"] = ws, cnt
        keep = [ws, cnt]
    names = tuple(x.name for x in kernel_params(spec))
    cs = plan.cluster_size
    launch = rt.prepare_launch(kernel, grid=(_grid(spec, plan, kernel, M, N), 1, 1), block=plan.threads,
                               smem=plan.smem_bytes, cluster=(cs, 1, 1) if cs > 1 else None, stream=stream,
                               args=tuple(vals[n] for n in names))
    call = _GemmCall(launch, like, (M, N), spec.out_dtype, names.index("d"),
                     names.index("tma_d") if "tma_d" in names else None, d_params, keep)
    call.d_ptr = D.ptr
    if d_params is not None:
        call.d_maps[D.ptr] = vals["tma_d"]
    return call


@lru_cache(maxsize=1024)
def _tma_params_d(spec, M, N, ldd):
    """TmaParams of D's concrete row-major layout for the TMA-store epilogue."""
    from .arch.sm90 import make_tma_params
    from .layouts import Layout
    epi = gemm_plan(spec).epi
    p = make_tma_params(Layout((M, N), (ldd, 1)), epi.smem, spec.out_dtype)
    _same_box("gemm", "D", p, epi.tma)
    return p
