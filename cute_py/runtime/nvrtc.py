"""Compile CUDA C++ to a CUBIN with NVRTC (no GPU needed), with the ptxas report and an on-disk cache.

:func:`compile` always produces CUBIN for a real architecture (``sm_90a`` by
default), never PTX: the driver on the GPU machine may be older than NVRTC
and unable to JIT its PTX, while it loads the CUBIN. ``--ptxas-options=-v``
is always passed, so the log holds the resource report that
:class:`Program` exposes per kernel (see :mod:`cute_py.runtime.report`).

NVRTC itself comes from the ``nvidia-cuda-nvrtc`` wheel; without it the
first call raises :class:`~cute_py.runtime.errors.NvrtcNotFoundError`
naming the pip command. Sources must be header-free (NVRTC finds no CUDA
headers without ``-I``): raw PTX in inline asm, own typedefs.

>>> from cute_py.runtime import compile
>>> p = compile('extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }')  # doctest: +SKIP
>>> p.cubin[:4], p.registers["k"] > 0, p.spills["k"]                                  # doctest: +SKIP
(b'\\x7fELF', True, 0)
"""

from __future__ import annotations

import re
import time

from . import cache as _cache
from .errors import (
    CompileError, KernelNotFoundError, NvrtcNotFoundError, UnsupportedArchError, _load_bindings, _status_name,
)
from .report import Report, parse_report

__all__ = ["compile", "Program", "nvrtc_version", "supported_archs"]

_NVRTC = None
_VERSION = None
_ARCHS = None
_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")


def _nvrtc():
    """The ``cuda.bindings.nvrtc`` module, imported on first use."""
    global _NVRTC
    if _NVRTC is None:
        _NVRTC = _load_bindings("nvrtc")
    return _NVRTC


def _call(fn, *args):
    """Call an NVRTC function, turning a missing library into :class:`NvrtcNotFoundError`."""
    try:
        return fn(*args)
    except (OSError, RuntimeError) as e:          # cuda.pathfinder's DynamicLibNotFoundError is a RuntimeError
        if "nvrtc" in str(e).lower() or type(e).__name__ == "DynamicLibNotFoundError":
            raise NvrtcNotFoundError.from_exception(e) from e
        raise


def _ok(result, what: str):
    """Check an NVRTC result; the log-free failures (bad options, out of memory) raise CompileError."""
    status = result[0]
    if int(status) != 0:
        raise CompileError(_status_name(status), "", "", summary=f"{what} failed: {_status_name(status)}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


def nvrtc_version() -> tuple:
    """``(major, minor)`` of the loaded NVRTC library (loads it on first call, ~0.1 s).

    >>> nvrtc_version() >= (12, 0)  # doctest: +SKIP
    True
    """
    global _VERSION
    if _VERSION is None:
        nv = _nvrtc()
        res = _call(nv.nvrtcVersion)
        major, minor = _ok(res, "nvrtcVersion")
        _VERSION = (int(major), int(minor))
    return _VERSION


def supported_archs() -> tuple:
    """The compute capabilities this NVRTC can target, e.g. ``(75, 80, ..., 90, 100, 120)``.

    >>> 90 in supported_archs()  # doctest: +SKIP
    True
    """
    global _ARCHS
    if _ARCHS is None:
        nv = _nvrtc()
        res = _call(nv.nvrtcGetSupportedArchs)
        _ARCHS = tuple(int(a) for a in _ok(res, "nvrtcGetSupportedArchs"))
    return _ARCHS


def _arch_number(arch: str) -> int:
    """The compute capability ``arch`` names (``"sm_90a"`` -> 90); raises for anything but a real architecture."""
    m = _ARCH_RE.match(arch) if isinstance(arch, str) else None
    if not m:
        raise UnsupportedArchError(f"compile: arch must name a real GPU architecture such as 'sm_90a' "
                                   f"(CUBIN is always produced, never PTX); got {arch!r}")
    return int(m.group(1))


def _check_arch(arch: str) -> None:
    if _arch_number(arch) not in supported_archs():
        raise UnsupportedArchError(f"compile: NVRTC {nvrtc_version()} cannot target {arch}; it supports "
                                   + ", ".join(f"sm_{a}" for a in supported_archs()))


def _check_options(options) -> tuple:
    out = []
    for o in options:
        if isinstance(o, bytes):
            o = o.decode()
        if not isinstance(o, str):
            raise TypeError(f"compile: options must be strings, got {o!r}")
        if o.startswith(("-arch", "--gpu-architecture", "-gpu-architecture")):
            raise ValueError(f"compile: pass the architecture as arch=..., not as option {o!r}")
        out.append(o)
    return tuple(out)


class Program:
    """A compiled translation unit: the CUBIN, the NVRTC log and the parsed ptxas report.

    Attributes: ``cubin`` (ELF bytes), ``ptx`` (the PTX NVRTC generated on the way to it, the text
    :func:`~cute_py.runtime.census.instruction_census` counts), ``log`` (the full log), ``source``,
    ``name`` (file name used in messages), ``arch``, ``options`` (the user's),
    ``nvrtc_version``, ``cached`` (True when read from the disk cache),
    ``compile_seconds`` (of the NVRTC call that produced it), ``report``
    (:class:`~cute_py.runtime.report.Report`).

    Per-kernel dicts, keyed by kernel (entry function) name, in log order:
    ``registers`` (per thread), ``spills`` (spill store + load bytes; 0 = no
    spilling; the split is in ``kernels[name]``), ``smem_bytes`` (static
    shared memory; dynamic smem is a launch parameter), ``stack_bytes``.
    ``kernels`` maps names to :class:`~cute_py.runtime.report.KernelReport`.
    ``warnings`` is a tuple of :class:`~cute_py.runtime.report.Diagnostic`
    for the whole program; each names its ``kernel`` where the log does.

    Kernel names are as ptxas reports them: ``extern "C"`` names are plain,
    C++ names are mangled.

    >>> p = compile('extern "C" __global__ void k(int* x) { x[0] = 1; }')  # doctest: +SKIP
    >>> list(p.registers), p.warnings                                        # doctest: +SKIP
    (['k'], ())
    """

    def __init__(self, cubin: bytes, log: str, source: str, name: str, arch: str, options: tuple,
                 nvrtc_version: tuple, report: Report, cached: bool = False, compile_seconds: float = 0.0,
                 ptx: str = ""):
        self.cubin = cubin
        self.ptx = ptx
        self.log = log
        self.source = source
        self.name = name
        self.arch = arch
        self.options = options
        self.nvrtc_version = nvrtc_version
        self.report = report
        self.cached = cached
        self.compile_seconds = compile_seconds
        self._module = None

    @property
    def kernels(self) -> dict:
        """Kernel name -> :class:`~cute_py.runtime.report.KernelReport`."""
        return self.report.kernels

    @property
    def registers(self) -> dict:
        """Kernel name -> registers per thread."""
        return {n: k.registers for n, k in self.report.kernels.items()}

    @property
    def spills(self) -> dict:
        """Kernel name -> spill store + spill load bytes (0 means no spilling)."""
        return {n: k.spill_bytes for n, k in self.report.kernels.items()}

    @property
    def smem_bytes(self) -> dict:
        """Kernel name -> static shared memory bytes."""
        return {n: k.smem_bytes for n, k in self.report.kernels.items()}

    @property
    def stack_bytes(self) -> dict:
        """Kernel name -> stack frame bytes."""
        return {n: k.stack_bytes for n, k in self.report.kernels.items()}

    @property
    def warnings(self) -> tuple:
        """Every diagnostic of the log (ptxas codes, ptxas warnings, front-end warnings)."""
        return self.report.warnings

    def kernel(self, name: str):
        """The :class:`~cute_py.runtime.driver.Kernel` ``name``, loading the module on first use (needs a GPU).

        Raises :class:`~cute_py.runtime.errors.NoDeviceError` without a driver
        or GPU, :class:`~cute_py.runtime.errors.UnsupportedArchError` if the
        device cannot run this arch, :class:`~cute_py.runtime.errors.KernelNotFoundError` (a
        ``KeyError``) naming the kernels the program has if ``name`` is not one of them.

        >>> compile(src).kernel("gemm")  # doctest: +SKIP
        Kernel('gemm', registers=168, spills=0)
        """
        from .driver import Module

        if self.report.kernels and name not in self.report.kernels:
            raise KernelNotFoundError(f"Program.kernel: no kernel {name!r} in {self.name}; kernels: "
                           f"{', '.join(self.report.kernels)} (C++ names are mangled; use extern \"C\")")
        if self._module is None:
            self._module = Module.load(self.cubin, arch=self.arch)
        return self._module.kernel(name, report=self.report.kernels.get(name))

    def __repr__(self) -> str:
        ks = ", ".join(f"{n}: {k.registers} regs" for n, k in self.report.kernels.items())
        cached = ", cached" if self.cached else ""
        return f"Program({self.name}, {self.arch}, {len(self.cubin)} bytes cubin, {{{ks}}}{cached})"


def _fatal_diagnostics(report: Report) -> list:
    return [d for d in report.warnings if d.serializes]


def _finish(prog: Program, strict: bool) -> Program:
    bad = _fatal_diagnostics(prog.report) if strict else []
    if bad:
        codes = sorted({d.code for d in bad if d.code})
        kernels = sorted({d.kernel for d in bad if d.kernel})
        raise CompileError("PTXAS_SERIALIZATION", prog.log, prog.source, prog.name, codes,
                           summary=(f"ptxas serialized wgmma / ignored setmaxnreg in {prog.name}"
                                    + (f" (kernels: {', '.join(kernels)})" if kernels else "")
                                    + f" [{', '.join(codes)}]: fix the kernel (wgmma.fence before touching "
                                    "accumulators, no calls inside a wgmma pipeline, __launch_bounds__ for "
                                    "setmaxnreg) or pass strict=False to keep it as a warning"))
    return prog


def compile(source: str, *, arch: str = "sm_90a", options=(), name: str = "kernel.cu",
            strict: bool = True, cache: bool = True) -> Program:
    """Compile ``source`` with NVRTC to a CUBIN for ``arch``; return a :class:`Program`.

    ``options`` are extra NVRTC options (strings, e.g. ``("-std=c++17",
    "--use_fast_math")``); the architecture goes in ``arch`` and
    ``--ptxas-options=-v`` is always added. ``name`` is the file name NVRTC
    uses in messages. With ``strict`` (the default), ptxas's wgmma
    serialization reports (C7509/C7510/C7511) and "setmaxnreg ignored"
    (C7508) raise :class:`CompileError`; with ``strict=False`` they stay in
    ``Program.warnings``. ``cache=False`` bypasses the on-disk cache for this
    call (see :mod:`cute_py.runtime.cache`; ``CUTE_PY_CACHE=0`` disables it
    everywhere).

    Postconditions: ``program.cubin`` starts with the ELF magic
    ``b"\\x7fELF"``; ``program.report`` has an entry per kernel; a cache hit
    returns a Program equal in cubin, log and report to the miss that stored
    it, with ``cached=True``.

    Raises :class:`CompileError` (status, log, line-numbered source) when
    NVRTC rejects the source, :class:`UnsupportedArchError` for an arch
    NVRTC cannot target, :class:`NvrtcNotFoundError` /
    :class:`~cute_py.runtime.errors.CudaNotInstalledError` with the pip command when NVRTC or
    cuda-bindings is missing.

    >>> p = compile('extern "C" __global__ void k(int* x) { x[0] = 1; }', options=("--use_fast_math",))  # doctest: +SKIP
    >>> p.cubin[:4], p.registers                                                            # doctest: +SKIP
    (b'\\x7fELF', {'k': 8})
    """
    if not isinstance(source, str):
        raise TypeError(f"compile: source must be str, got {type(source).__name__}")
    options = _check_options(options)
    _arch_number(arch)                   # the spelling now; whether NVRTC supports it only when it must compile
    version = nvrtc_version()
    key = _cache.cache_key(source, options, arch, version, name)
    if cache:
        hit = _cache.load(key)
        if hit is not None:
            cubin, meta = hit
            prog = Program(cubin, meta["log"], source, name, arch, options, version,
                           Report.from_json(meta["report"]), cached=True,
                           compile_seconds=meta.get("compile_seconds", 0.0), ptx=meta.get("ptx", ""))
            return _finish(prog, strict)
    _check_arch(arch)                    # a cached cubin for this NVRTC version proves the arch was supported
    cubin, ptx, log, seconds = _compile_uncached(source, arch, options, name)
    report = parse_report(log)
    if cache:
        _cache.store(key, cubin, {"log": log, "report": report.to_json(), "arch": arch, "options": list(options),
                                  "nvrtc": list(version), "name": name, "compile_seconds": seconds, "ptx": ptx})
    return _finish(Program(cubin, log, source, name, arch, options, version, report, False, seconds, ptx), strict)


_NO_CACHE = [b"--no-cache"]
"""NVRTC 13 keeps its own compile cache (``~/.nv/ComputeCache``) and, on a hit, returns the cubin with an
empty log: no ptxas report. cute_py has its own cache, so NVRTC's is always bypassed."""


def _compile_uncached(source: str, arch: str, options: tuple, name: str):
    nv = _nvrtc()
    t0 = time.perf_counter()
    res = _call(nv.nvrtcCreateProgram, source.encode(), name.encode(), 0, [], [])
    prog = _ok(res, "nvrtcCreateProgram")
    retry = False
    try:
        opts = [f"--gpu-architecture={arch}".encode(), b"--ptxas-options=-v", *_NO_CACHE]
        opts += [o.encode() for o in options]
        (status,) = nv.nvrtcCompileProgram(prog, len(opts), opts)
        log = _log(nv, prog)
        if int(status) != 0 and _NO_CACHE and "no-cache" in log:
            retry = True                              # an NVRTC without its own cache rejects the option
        elif int(status) != 0:
            raise CompileError(_status_name(status), log, source, name)
        else:
            size = _ok(nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            buf = b" " * size
            _ok(nv.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
            size = _ok(nv.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
            ptx = b" " * size
            _ok(nv.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    finally:
        nv.nvrtcDestroyProgram(prog)
    if retry:
        _NO_CACHE.clear()
        return _compile_uncached(source, arch, options, name)
    if not buf.startswith(b"\x7fELF"):
        raise CompileError("NO_CUBIN", log, source, name,
                           summary=f"NVRTC produced no CUBIN for {arch} (got {buf[:4]!r}); is {arch} a real arch?")
    return bytes(buf), ptx.rstrip(b"\0").decode("utf-8", "replace"), log, time.perf_counter() - t0


def _log(nv, prog) -> str:
    size = _ok(nv.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    buf = b" " * size
    nv.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\0").decode("utf-8", "replace")
