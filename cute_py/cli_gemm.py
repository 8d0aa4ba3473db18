"""``cute-py gemm``: emit, compile and (on a GPU) run, check and time a generated GEMM.

Without a GPU it stops after compiling and prints the resource report (and says so); with ``--check`` or
``--bench`` it then exits with status 4 (:data:`~cute_py.cli_errors.EXIT_NO_GPU`: nothing was checked or timed).
Without the ``cuda`` extra it prints what is missing and the pip command, status 3. On an sm_90 GPU the
arrays come from torch when it is importable, else from plain driver allocations (``--arrays driver``), so
the run needs nothing beyond ``pip install "cute-py[cuda]"``; torch.matmul is timed beside cute_py when
torch is there.
"""

from __future__ import annotations

import math
import statistics
import sys
import time

import numpy as np

from .arch.sm90 import SMEM_ALIGN
from .arraylib import library_dtype
from .cli_errors import EXIT_NO_GPU, CliError, extent
from .dtypes import dtype as dtype_of
from .emit.spec import FP8_DTYPES, INPUT_DTYPES, OUT_DTYPES, SCALES
from .emit.scaling import SCALE_TYPES
from .problem import MAX_EXTENT
from .runtime.timer import EventTimer

__all__ = ["add_parser", "run"]

LAYOUT_MAJORS = {"tn": ("K", "K"), "nn": ("MN", "K"), "nt": ("MN", "MN"), "tt": ("K", "MN")}


DEFAULT_EXTENT = 4096
"""--m, --n and --k when not given."""


def add_parser(sub):
    g = sub.add_parser("gemm", help="generate a warp-specialized sm_90a GEMM from a layout spec; compile, run, time")
    for dim in ("m", "n", "k"):
        g.add_argument(f"--{dim}", type=extent, help=f"{dim.upper()}, 1 to {MAX_EXTENT} (default {DEFAULT_EXTENT})")
    g.add_argument("--dtype", choices=INPUT_DTYPES,
                   help="input type (default bf16); e4m3 / e5m2 run the scaled fp8 GEMM (layout tn only)")
    g.add_argument("--scale", choices=[s for s in SCALES if s],
                   help="fp8 scale mode: tensor (default for fp8), row (scale_a[m], scale_b[n]) or block "
                        "(1x128 blocks of A, 128x128 of B, promoted per K tile)")
    g.add_argument("--fast-accum", action="store_true",
                   help="fp8 with tensor/row scales: accumulate all of K in the tensor core (as torch's "
                        "use_fast_accum; faster, less accurate)")
    g.add_argument("--scale-type", choices=SCALE_TYPES,
                   help="fp8 with row or block scales: the scales' element type, f32 (default) or ue8m0 "
                        "(float8_e8m0fnu: one byte, a power of two)")
    g.add_argument("--groups", type=extent, metavar="G",
                   help="groups along M (mixture of experts): the M rows split unevenly into G groups, each "
                        "times its own B, as torch._grouped_mm (bf16/f16) or torch._scaled_grouped_mm (fp8)")
    g.add_argument("--batch", type=extent, metavar="L", help="a batch of L GEMMs of M x N x K, as torch.bmm")
    g.add_argument("--layout", choices=tuple(LAYOUT_MAJORS),
                   help="BLAS naming: first letter A, second B; t = A K-major / B N-major (default tn: both K-major)")
    g.add_argument("--spec", metavar="FILE", help="a GemmSpec in TOML or JSON, which fixes the types, layout and "
                   "scales (so --dtype, --layout, --scale, --fast-accum and --scale-type are refused with it); "
                   "'example:NAME' for a shipped one")
    g.add_argument("--check", action="store_true",
                   help="on a GPU: small-integer inputs, every element compared with a float64 reference")
    g.add_argument("--bench", action="store_true",
                   help="on a GPU: time batches of back-to-back calls on randn inputs, next to torch.matmul's "
                        "when torch is there")
    g.add_argument("--arrays", choices=("auto", "torch", "driver"),
                   help="device arrays of the GPU run: torch if importable (auto, the default), or cuMemAlloc "
                        "buffers (driver: no array library needed, no torch.matmul comparison)")
    g.add_argument("--emit-only", action="store_true", help="write the CUDA source and stop (no compile, no run)")
    g.add_argument("-o", "--output", metavar="FILE",
                   help="write the CUDA source to FILE (with --emit-only: instead of stdout; without: then compile "
                        "and run it)")
    return g


def _given(args, name: str) -> bool:
    return getattr(args, name) not in (None, False)


def check_options(args) -> None:
    """Refuse options the chosen path would not use, and options that conflict, naming both (CliError)."""
    if args.groups and args.batch:
        raise CliError("--groups and --batch exclude each other (groups along M, or a batch of equal GEMMs)")
    if args.emit_only:
        for name in ("check", "bench", "arrays"):
            if _given(args, name):
                raise CliError(f"--emit-only writes the source and stops, so --{name} would be ignored: drop one")
    if not args.spec:
        return
    for name, what in (("dtype", "input type"), ("layout", "operand majors"), ("scale", "fp8 scale mode"),
                       ("fast_accum", "fp8 accumulation"), ("scale_type", "scales' element type")):
        if _given(args, name):
            option = "--" + name.replace("_", "-")
            raise CliError(f"--spec {args.spec} fixes the kernel's {what}, so {option} would be ignored: set it in "
                           f"the spec, or drop --spec")
    if args.emit_only:
        for name in ("m", "n", "k", "groups", "batch"):
            if _given(args, name):
                raise CliError(f"--emit-only --spec {args.spec} writes the spec's kernel, which --{name} does not "
                               f"change (it sizes a run): drop --{name}")


def fp8_scale(dtype: str, layout: str, scale, fast_accum: bool, scale_type=None):
    """The fp8 scale mode of ``--dtype``/``--scale`` (``"tensor"`` unless told; None for bf16/f16), after refusing
    the combinations that do not run (CliError naming the options)."""
    fp8 = dtype in FP8_DTYPES
    if not fp8 and (scale or fast_accum or scale_type):
        raise CliError(f"--scale, --fast-accum and --scale-type apply to fp8 (--dtype {' or '.join(FP8_DTYPES)}), "
                       f"not --dtype {dtype}")
    if scale_type == "ue8m0" and scale not in ("row", "block"):
        raise CliError(f"--scale-type ue8m0 applies to --scale row or block, not {scale or 'tensor (the default)'}")
    if fp8 and layout != "tn":
        raise CliError(f"--dtype {dtype} needs --layout tn: Hopper's fp8 wgmma reads both operands K-major")
    if scale == "block" and fast_accum:
        raise CliError("--fast-accum applies to --scale tensor or row (blockwise scales always promote)")
    return (scale or "tensor") if fp8 else None


def _spec(args):
    from .emit import GemmSpec, example_specs
    from .problem import Problem
    from .selection import heuristic
    if args.spec:
        if args.spec.startswith("example:"):
            ex = example_specs()
            name = args.spec.split(":", 1)[1]
            if name not in ex:
                raise CliError(f"no example spec {name!r}; shipped: {', '.join(ex)}")
            spec = GemmSpec.from_file(ex[name])
        else:
            spec = GemmSpec.from_file(args.spec)
        _check_grouping(args, spec)
        return spec
    layout, dtype = args.layout or "tn", args.dtype or "bf16"
    if args.batch and dtype in FP8_DTYPES:
        raise CliError(f"--batch runs bf16 and f16; fp8 (--dtype {dtype}) runs one GEMM or --groups (groups along M)")
    scale = fp8_scale(dtype, layout, args.scale, args.fast_accum, args.scale_type)
    a, b = LAYOUT_MAJORS[layout]
    grouping = "m" if args.groups else "batch" if args.batch else None
    return heuristic(Problem(args.m, args.n, args.k, a, b, dtype, "bf16" if scale else dtype, scale=scale,
                             fast_accum=args.fast_accum, scale_type=args.scale_type or "f32", grouping=grouping,
                             groups=args.groups or args.batch or 1))


_GROUPINGS = {"m": ("--groups G", "groups along M"), "batch": ("--batch L", "a batch"), None: ("", "one GEMM")}


def _check_grouping(args, spec) -> None:
    """--groups / --batch must ask for what the spec's kernel computes (a run needs the count; --emit-only not)."""
    asked = "m" if args.groups else "batch" if args.batch else None
    if asked == spec.grouping or (asked is None and args.emit_only):
        return
    kernel = f"--spec {args.spec} is a kernel for {_GROUPINGS[spec.grouping][1]} ({spec.name})"
    if asked is None:
        raise CliError(f"{kernel}: pass {_GROUPINGS[spec.grouping][0]} to size the run")
    option = f"--groups {args.groups}" if args.groups else f"--batch {args.batch}"
    raise CliError(f"{option} asks for {_GROUPINGS[asked][1]}, but {kernel}: drop one")


def _gpu_reason():
    """Why no sm_90 GPU can run the kernel here (a line), or None. Without the cuda extra this raises
    CudaNotInstalledError: the command then says what to install and exits 3, as --help says."""
    from .runtime import device
    from .runtime.errors import CudaNotInstalledError
    try:
        d = device()
        return None if d.arch in ("sm_90", "sm_90a") else f"device 0 is {d.name} ({d.arch}), not sm_90"
    except CudaNotInstalledError:
        raise
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def run(args) -> int:
    from .emit import emit_gemm, gemm_plan
    check_options(args)
    for dim in ("m", "n", "k"):
        if getattr(args, dim) is None:
            setattr(args, dim, DEFAULT_EXTENT)
    spec = _spec(args).validate()
    src = emit_gemm(spec)
    if args.output:
        with open(args.output, "w") as f:
            f.write(src)
        print(f"wrote {args.output} ({len(src.splitlines())} lines): kernel {spec.name}")
    if args.emit_only:
        if not args.output:
            sys.stdout.write(src)
        return 0
    from . import runtime as rt
    plan = gemm_plan(spec)
    start = time.perf_counter()
    prog = rt.compile(src, name=f"{spec.name}.cu")
    seconds = time.perf_counter() - start
    k = spec.name
    nvrtc = ".".join(map(str, prog.nvrtc_version))
    print(f"spec      {k}")
    print(f"          A {spec.a} ({plan.a.major}-major) smem {plan.a.smem}, TMA box {plan.a.tma.box_dim}")
    print(f"          B {spec.b} ({plan.b.major}-major) smem {plan.b.smem}, TMA box {plan.b.tma.box_dim}")
    if prog.cached:
        print(f"compiled  NVRTC {nvrtc}: loaded from the kernel cache in {seconds:.2f} s (the first compile took "
              f"{prog.compile_seconds:.2f} s)")
    else:
        print(f"compiled  NVRTC {nvrtc} in {prog.compile_seconds:.2f} s")
    print(f"resources {prog.registers.get(k)} registers/thread, {prog.spills.get(k)} spill bytes, "
          f"{plan.smem_bytes} B dynamic smem ({plan.stages} stages x {plan.stage_bytes} B"
          f"{f' + {plan.spec.epilogue_smem_bytes() - SMEM_ALIGN} B epilogue staging' if plan.epi else ''}"
          f" + {SMEM_ALIGN}), "
          f"{plan.threads} threads; warnings: {list(prog.warnings) or 'none'}")
    reason = _gpu_reason()
    if reason:
        skipped = " ".join(f for f, on in (("--check", args.check), ("--bench", args.bench)) if on)
        print(f"no GPU: stopping after the compile step{f' (skipping {skipped})' if skipped else ''}.")
        print(f"          reason: {reason}")
        if skipped:
            print(f"cute-py gemm: {skipped} did not run: no usable sm_90 GPU here (exit status {EXIT_NO_GPU})",
                  file=sys.stderr)
            return EXIT_NO_GPU
        return 0
    return _run_on_gpu(args, spec)


def _run_on_gpu(args, spec) -> int:
    from .gemm import gemm
    from .problem import GemmInputError
    xp = _backend(args.arrays or "auto")
    if isinstance(xp, str):
        print(f"cute-py gemm: {xp}", file=sys.stderr)
        return 2
    if spec.grouping:                                 # checked against --groups / --batch by _spec
        from .cli_grouped import run_grouped
        return run_grouped(args, spec, xp)
    if spec.scale:
        from .cli_scaled import run_scaled
        return run_scaled(args, spec, xp)
    M, N, K = args.m, args.n, args.k
    print(f"GPU       {xp.device_name}; arrays from {xp.name}")
    status = 0
    try:
        if args.check:
            status = _check_run(xp, gemm, spec, M, N, K)
        if args.bench:
            _bench(xp, gemm, spec, M, N, K)
        if not (args.check or args.bench):
            _check_run(xp, gemm, spec, M, N, K, report=False)
            print(f"ran       {M}x{N}x{K} once (add --check to compare with a reference, --bench to time it)")
    except GemmInputError as e:
        print(f"cute-py gemm: {e}", file=sys.stderr)
        return 2
    return status


# ---------------------------------------------------------------------------------------------------------------
# Device arrays for the GPU run: torch when importable, else cuMemAlloc buffers described by
# __cuda_array_interface__ (which is all cute_py.gemm needs). Host data is numpy float64.



def _bf16_bits(x) -> np.ndarray:
    """float -> bf16 bit patterns (round to nearest even, via float32)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)


def _from_bf16_bits(b) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _round_to(x64: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values rounded once to ``dtype`` and back (what a kernel writing ``dtype`` must produce)."""
    if dtype == "bf16":
        return _from_bf16_bits(_bf16_bits(x64))
    return x64.astype(dtype_of(dtype).storage).astype(np.float64)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26); numpy has none."""
    s, a = np.sign(x), np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t \
        * np.exp(-a * a)
    return s * y


class _DevArray:
    """A 2-D device array in cuMemAlloc memory (or a transposed view of one), for cute_py.gemm."""

    _TYPES = {"bf16": ("<V2", "bfloat16", 2), "f16": ("<f2", "float16", 2), "f32": ("<f4", "float32", 4)}

    def __init__(self, shape, dtype, strides=None, base=None):
        from .runtime.driver import _check, _driver
        self.shape, self.kind = tuple(shape), dtype
        self._typestr, self.dtype, self.itemsize = self._TYPES[dtype]
        self.strides = tuple(strides) if strides else (self.shape[1], 1)
        self.base = base
        if base is None:
            self.nbytes = self.shape[0] * self.shape[1] * self.itemsize
            self.ptr = int(_check(_driver().cuMemAlloc(max(self.nbytes, 1)), "cuMemAlloc"))
        else:
            self.ptr, self.nbytes = base.ptr, base.nbytes

    @property
    def __cuda_array_interface__(self):
        return {"version": 3, "shape": self.shape, "typestr": self._typestr, "data": (self.ptr, False),
                "strides": tuple(x * self.itemsize for x in self.strides)}

    @property
    def T(self):
        return _DevArray(self.shape[::-1], self.kind, self.strides[::-1], base=self.base or self)

    def __del__(self):
        if self.base is None and getattr(self, "ptr", None):
            try:
                from .runtime.driver import _driver
                _driver().cuMemFree(self.ptr)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


class _DriverArrays:
    name = "driver allocations (cuMemAlloc)"
    has_matmul = False

    def __init__(self):
        from .runtime import device
        from .runtime.driver import _check, _driver
        self.d, self.check = _driver(), _check
        self.device_name = device().name

    def _host(self, x64, dtype):
        return _bf16_bits(x64) if dtype == "bf16" else np.ascontiguousarray(x64, dtype=dtype_of(dtype).storage)

    def upload(self, x64: np.ndarray, dtype: str, contiguous_dim: int):
        """(R, C) float64 host array -> device array of ``dtype`` whose dimension ``contiguous_dim`` has stride 1."""
        host = self._host(x64 if contiguous_dim == 1 else x64.T, dtype)
        buf = _DevArray(host.shape, dtype)
        self.check(self.d.cuMemcpyHtoD(buf.ptr, host.ctypes.data, buf.nbytes), "cuMemcpyHtoD")
        return buf if contiguous_dim == 1 else buf.T

    def vector(self, v64: np.ndarray, dtype: str):
        """A 1-D device vector: the row of a (1, n) buffer."""
        row = self.upload(v64[None, :], dtype, 1)
        vec = _DevArray((1, len(v64)), dtype, base=row)
        vec.shape, vec.strides = (len(v64),), (1,)
        return vec

    def poisoned(self, M, N, dtype, row_major=True):
        return self.upload(np.full((M, N), np.nan), dtype, 1 if row_major else 0)

    def randn(self, R, C, dtype, contiguous_dim, rng):
        return self.upload(rng.standard_normal((R, C), dtype=np.float32), dtype, contiguous_dim)

    def empty(self, M, N, dtype):
        return _DevArray((M, N), dtype)

    def to_host(self, x) -> np.ndarray:
        base = x.base or x
        host = np.empty(base.shape, dtype=dtype_of(x.kind).storage)
        self.check(self.d.cuMemcpyDtoH(host.ctypes.data, base.ptr, base.nbytes), "cuMemcpyDtoH")
        host = _from_bf16_bits(host) if x.kind == "bf16" else host.astype(np.float64)
        return host if x.base is None else host.T

    def matmul64(self, a64, b64):
        return a64 @ b64

    def rel_err(self, a, b, d):
        ref = self.to_host(a).astype(np.float32) @ self.to_host(b).astype(np.float32)
        return float(np.linalg.norm(self.to_host(d) - ref) / np.linalg.norm(ref))


class _TorchArrays(_DriverArrays):
    name = "torch"
    has_matmul = True

    def __init__(self, torch):
        super().__init__()
        self.torch = torch
        self.tdt = {t: library_dtype(torch, t) for t in OUT_DTYPES}

    def upload(self, x64, dtype, contiguous_dim):
        t = self.torch.from_numpy(np.ascontiguousarray(x64)).to(self.tdt[dtype])
        return t.contiguous().cuda() if contiguous_dim == 1 else t.t().contiguous().cuda().t()

    def vector(self, v64, dtype):
        return self.torch.from_numpy(v64).to(self.tdt[dtype]).cuda()

    def randn(self, R, C, dtype, contiguous_dim, rng):
        t = self.torch.randn((R, C) if contiguous_dim == 1 else (C, R), device="cuda").to(self.tdt[dtype])
        return t if contiguous_dim == 1 else t.t()

    def empty(self, M, N, dtype):
        return self.torch.empty(M, N, device="cuda", dtype=self.tdt[dtype])

    def to_host(self, x):
        return x.double().cpu().numpy()

    def matmul64(self, a64, b64):                     # float64 on the GPU: exact for these inputs
        t = self.torch
        return (t.from_numpy(a64).cuda() @ t.from_numpy(b64).cuda()).cpu().numpy()

    def matmul(self, a, b, out):
        return self.torch.matmul(a, b, out=out)

    def rel_err(self, a, b, d):
        ref = self.torch.matmul(a.float(), b.float())
        return float((d.float() - ref).norm() / ref.norm())


def _backend(which: str):
    """The array backend for ``--arrays`` (an error string if it cannot be had)."""
    if which in ("auto", "torch"):
        try:
            import torch
            if torch.cuda.is_available():
                return _TorchArrays(torch)
            if which == "torch":
                return "--arrays torch: torch sees no CUDA device"
        except ImportError:
            if which == "torch":
                return "--arrays torch: torch is not installed (pip install torch, or use --arrays driver)"
    return _DriverArrays()


def _operands(xp, spec, a64, b64):
    return (xp.upload(a64, spec.dtype, 1 if spec.a_major == "K" else 0),      # a (M, K): K-major = K contiguous
            xp.upload(b64, spec.dtype, 0 if spec.b_major == "K" else 1))      # b (K, N): K-major = K contiguous


def _check_run(xp, gemm, spec, M, N, K, report=True) -> int:
    """Small integers in [-3, 3]: D must equal the float64 reference rounded once to D's type, everywhere."""
    rng = np.random.default_rng(0)
    ints = lambda *shape: rng.integers(-3, 4, size=shape).astype(np.float64)  # noqa: E731
    a64, b64 = ints(M, K), ints(K, N)
    a, b = _operands(xp, spec, a64, b64)
    kw, ref = {}, xp.matmul64(a64, b64)
    if spec.beta:                                   # C and bias are in D's type
        c64 = ints(M, N)
        kw.update(c=xp.upload(c64, spec.out_dtype, 1 if spec.c_row_major else 0), beta=1.0)
        ref = ref + c64
    if spec.bias:
        bias64 = ints(N if spec.bias == "col" else M)
        kw["bias"] = xp.vector(bias64, spec.out_dtype)
        ref = ref + (bias64[None, :] if spec.bias == "col" else bias64[:, None])
    if spec.activation:
        kw["activation"] = spec.activation
    if spec.activation == "relu":
        ref = np.maximum(ref, 0)
    elif spec.activation == "gelu":
        ref = 0.5 * ref * (1.0 + _erf(ref / math.sqrt(2.0)))
    out = xp.poisoned(M, N, spec.out_dtype, spec.c_row_major)
    gemm(a, b, out=out, spec=spec, **kw)
    got = xp.to_host(out)
    if not report:
        return 0
    want = _round_to(ref, spec.out_dtype)
    unwritten = int(np.isnan(got).sum())
    if spec.activation == "gelu":
        bad = int((~np.isclose(got, want, rtol=1e-2, atol=1e-2)).sum())
        how = "within 1e-2 of"
    else:
        bad = int((got != want).sum())
        how = "equal to"
    print(f"check     {'PASS' if bad == 0 else 'FAIL'}: {M * N - bad} of {M * N} elements {how} the float64 "
          f"reference (small-integer inputs), {unwritten} unwritten")
    return 0 if bad == 0 else 1


def _bench(xp, gemm, spec, M, N, K, calls=10, min_batches=10, seconds=1.0):
    """Kernel speed of cute_py (and torch.matmul with torch) on randn inputs, as benchmarks/gemm_vs_cublas.py
    measures it: each sample is one batch of ``calls`` back-to-back calls between two CUDA events (the host
    enqueues ahead of the GPU, so Python's per-call work is hidden wherever the kernel outlasts it), each call
    on the next of several input sets (rotated so the 50 MB L2 does not hold them); the libraries alternate
    batch by batch for at least ``min_batches`` batches and ``seconds``; medians are reported."""
    nbytes = 2 * (M * K + K * N + M * N)
    sets = max(2, min(8, int(3 * 50e6 / max(nbytes, 1)) + 1))
    rng = np.random.default_rng(1)
    inputs = [(xp.randn(M, K, spec.dtype, 1 if spec.a_major == "K" else 0, rng),
               xp.randn(K, N, spec.dtype, 0 if spec.b_major == "K" else 1, rng)) for _ in range(sets)]
    out = xp.empty(M, N, spec.out_dtype) if spec.c_row_major else xp.empty(N, M, spec.out_dtype).T
    kw = {}
    if spec.beta:
        kw.update(c=xp.upload(np.zeros((M, N)), spec.out_dtype, 1 if spec.c_row_major else 0), beta=1.0)
    if spec.bias:
        kw["bias"] = xp.vector(np.zeros(N if spec.bias == "col" else M), spec.out_dtype)
    if spec.activation:
        kw["activation"] = spec.activation
    fns = {"cute_py": lambda i: gemm(*inputs[i % sets], out=out, spec=spec, **kw)}
    if xp.has_matmul:
        out_t = xp.empty(M, N, spec.dtype)
        fns["torch.matmul"] = lambda i: xp.matmul(*inputs[i % sets], out=out_t)
    with EventTimer() as ev:                         # the events are destroyed on the way out
        for fn in fns.values():                          # warm up: load, cuBLAS heuristics, clocks
            ev.per_call(fn, 3)
        err = None
        if not (spec.beta or spec.bias or spec.activation):
            a, b = inputs[0]
            gemm(a, b, out=out, spec=spec)
            err = xp.rel_err(a, b, out)
        times = {k: [] for k in fns}
        i, t0 = 0, time.perf_counter()
        while i < min_batches or time.perf_counter() - t0 < seconds:
            for k, fn in fns.items():
                times[k].append(ev.per_call(lambda j: fn(i * calls + j), calls))
            i += 1
    med = {k: statistics.median(v) for k, v in times.items()}
    fl = 2.0 * M * N * K
    epi = "" if not (spec.beta or spec.bias or spec.activation) else " (with its epilogue)"
    print(f"bench     {M}x{N}x{K}: {i} batches of {calls} back-to-back calls"
          f"{' per library, alternating' if len(fns) > 1 else ''}, {sets} rotated randn input sets; medians:")
    labels = {k: k + (epi if k == "cute_py" else "") for k in med}
    w = max(len(x) for x in labels.values())
    for k, t in med.items():
        print(f"          {labels[k]:<{w}}  {t * 1e3:8.3f} ms  {fl / t / 1e12:6.0f} TFLOP/s")
    if "torch.matmul" in med:
        print(f"          ratio cute_py / torch.matmul = {med['torch.matmul'] / med['cute_py']:.2f}  "
              f"(> 1: cute_py faster)")
    else:
        print("          (torch.matmul not timed: torch is not in use; --arrays torch with torch installed)")
    if err is not None:
        print(f"          relative error vs a float32 product of the same inputs: {err:.2e}")
