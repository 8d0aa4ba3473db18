"""The CUDA driver, lazily: the primary context, module loading, kernels, cluster launches, argument packing.

Everything goes through ``cuda.bindings.driver``, imported on first use.
:func:`device` initializes the driver and makes device 0's *primary*
context current: the context torch and cupy use, so their arrays and these
launches mix freely. Without a driver or a GPU it raises
:class:`~cute_py.runtime.errors.NoDeviceError`; compiling still works.

:func:`pack_args` is the one place that turns Python values into kernel
parameters; it is pure and runs without a GPU:

>>> import ctypes
>>> import numpy as np
>>> values, types = pack_args((np.int32(7), np.float32(0.5), ctypes.c_uint64(1 << 40), ctypes.c_void_p(0x1000)))
>>> values, [t.__name__ for t in types]
((7, 0.5, 1099511627776, 4096), ['c_int', 'c_float', 'c_ulong', 'c_void_p'])
"""

from __future__ import annotations

import ctypes
import threading

from .arrays import DeviceArray, as_device_array
from .errors import (
    DriverError, KernelNotFoundError, LaunchError, NoDeviceError, PackError, UnsupportedArchError,
    _load_bindings, _status_name,
)

__all__ = ["Device", "device", "Module", "Kernel", "launch", "launch_dims", "pack_args", "synchronize",
           "PreparedLaunch", "prepare_launch", "max_active_clusters",
           "MAX_SMEM_DEFAULT", "MAX_CLUSTER_PORTABLE"]

MAX_SMEM_DEFAULT = 48 * 1024
"""Dynamic shared memory a kernel may use without opting in (cuFuncSetAttribute raises it)."""
MAX_CLUSTER_PORTABLE = 8
"""Largest portable cluster (CTAs); larger ones need a non-portable opt-in, not supported here."""

_D = None
_LOCK = threading.Lock()
_DEVICES: dict = {}


def _driver():
    """The ``cuda.bindings.driver`` module, imported on first use."""
    global _D
    if _D is None:
        _D = _load_bindings("driver")
    return _D


def _check(res, call: str, hint: str = ""):
    """Raise :class:`DriverError` unless ``res[0]`` is CUDA_SUCCESS; return the outputs (one value or a tuple)."""
    err = res[0]
    if int(err) != 0:
        desc = ""
        try:
            e2, s = _driver().cuGetErrorString(err)
            if int(e2) == 0 and s:
                desc = s.decode() if isinstance(s, bytes) else str(s)
        except Exception:  # noqa: BLE001 - the description is a courtesy
            pass
        raise DriverError(call, _status_name(err), desc, hint)
    out = res[1:]
    if not out:
        return None
    return out[0] if len(out) == 1 else out


class Device:
    """A CUDA device with its retained primary context (what :func:`device` returns).

    Attributes: ``ordinal``, ``name``, ``compute_capability`` (``(9, 0)`` on
    H100/H200), ``sm_count``, ``max_smem_optin`` (dynamic smem per block
    after opting in; 232448 on sm_90), ``handle`` (``CUdevice``), ``context``
    (the primary ``CUcontext``).

    >>> device().compute_capability  # doctest: +SKIP
    (9, 0)
    """

    def __init__(self, ordinal, name, cc, sm_count, max_smem_optin, handle, context):
        self.ordinal = ordinal
        self.name = name
        self.compute_capability = cc
        self.sm_count = sm_count
        self.max_smem_optin = max_smem_optin
        self.handle = handle
        self.context = context

    @property
    def arch(self) -> str:
        """The arch-specific target name of this device, e.g. ``"sm_90a"`` (``sm_XY`` before Hopper)."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}" + ("a" if major >= 9 else "")

    def __repr__(self) -> str:
        cc = self.compute_capability
        return f"Device({self.ordinal}: {self.name}, cc {cc[0]}.{cc[1]}, {self.sm_count} SMs)"


def device(ordinal: int = 0) -> Device:
    """Initialize the driver, retain device ``ordinal``'s primary context and make it current in this thread.

    Idempotent and cheap after the first call (it re-makes the context
    current, which each new thread needs). The primary context is the one
    torch and cupy use, so their allocations are valid in launches.

    Raises :class:`~cute_py.runtime.errors.NoDeviceError` (with the reason:
    no driver library, no GPU, ordinal out of range) and
    :class:`~cute_py.runtime.errors.CudaNotInstalledError` when
    cuda-bindings is missing.

    >>> device().name  # doctest: +SKIP
    'NVIDIA H100 80GB HBM3'
    """
    d = _driver()
    with _LOCK:
        dev = _DEVICES.get(ordinal)
        if dev is None:
            dev = _open(d, ordinal)
            _DEVICES[ordinal] = dev
    _check(d.cuCtxSetCurrent(dev.context), "cuCtxSetCurrent")
    return dev


def _open(d, ordinal: int) -> Device:
    try:
        res = d.cuInit(0)
    except RuntimeError as e:          # cuda.pathfinder: DynamicLibNotFoundError (libcuda.so.1 missing)
        raise NoDeviceError.because(f"the NVIDIA driver library (libcuda.so.1) cannot be loaded ({e})") from e
    err = res[0]
    if int(err) != 0:
        raise NoDeviceError.because(f"cuInit returned {_status_name(err)}"
                                    + (" (a driver is installed but no GPU is visible; check CUDA_VISIBLE_DEVICES)"
                                       if _status_name(err) == "CUDA_ERROR_NO_DEVICE" else ""))
    count = _check(d.cuDeviceGetCount(), "cuDeviceGetCount")
    if not 0 <= ordinal < count:
        raise NoDeviceError.because(f"device {ordinal} requested but {count} GPU(s) are visible")
    handle = _check(d.cuDeviceGet(ordinal), "cuDeviceGet")
    attr = d.CUdevice_attribute

    def get(a):
        return int(_check(d.cuDeviceGetAttribute(getattr(attr, a), handle), "cuDeviceGetAttribute"))

    cc = (get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"), get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"))
    sms = get("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
    smem = get("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    name = _check(d.cuDeviceGetName(256, handle), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
    ctx = _check(d.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain")
    return Device(ordinal, name, cc, sms, smem, handle, ctx)


def synchronize() -> None:
    """Wait for all work on the current context (``cuCtxSynchronize``); a kernel fault surfaces here.

    >>> synchronize()  # doctest: +SKIP
    """
    device()
    _check(_driver().cuCtxSynchronize(), "cuCtxSynchronize",
           hint="a kernel launched earlier failed (out-of-bounds access, trap, illegal instruction?)")


def _runs_on(arch: str, cc: tuple) -> bool:
    """Whether a CUBIN for ``arch`` (``sm_90a``, ``sm_80``, ``sm_100f``) loads on compute capability ``cc``."""
    digits = arch[3:].rstrip("af")
    major, minor = int(digits[:-1]), int(digits[-1])
    if arch.endswith("a"):
        return cc == (major, minor)
    return cc[0] == major and cc[1] >= minor


class Module:
    """A loaded CUBIN (``cuModuleLoadData``) in the primary context; :meth:`kernel` looks up functions.

    >>> Module.load(program.cubin, arch="sm_90a").kernel("k")  # doctest: +SKIP
    Kernel('k')
    """

    def __init__(self, handle, dev: Device, arch: str | None = None):
        self.handle = handle
        self.device = dev
        self.arch = arch
        self._kernels: dict = {}

    @classmethod
    def load(cls, cubin: bytes, arch: str | None = None, ordinal: int = 0) -> "Module":
        """Load ``cubin`` on device ``ordinal``; ``arch`` (e.g. ``"sm_90a"``) is checked against the device first.

        Raises :class:`~cute_py.runtime.errors.UnsupportedArchError` when the
        device cannot run ``arch`` (an ``sm_90a`` cubin needs compute
        capability exactly 9.0), :class:`DriverError` when the driver
        rejects the image.
        """
        dev = device(ordinal)
        if arch is not None and not _runs_on(arch, dev.compute_capability):
            cc = dev.compute_capability
            raise UnsupportedArchError(f"the cubin targets {arch}, which does not run on {dev.name} (compute "
                                       f"capability {cc[0]}.{cc[1]}); sm_90a code (wgmma, setmaxnreg, TMA "
                                       f"multicast) needs an H100/H200 (cc 9.0). Compile for {dev.arch}?")
        d = _driver()
        handle = _check(d.cuModuleLoadData(bytes(cubin)), "cuModuleLoadData",
                        hint="the driver may be older than the NVRTC that built the cubin")
        return cls(handle, dev, arch)

    def kernel(self, name: str, report=None) -> "Kernel":
        """The kernel ``name`` (``cuModuleGetFunction``), cached per module."""
        k = self._kernels.get(name)
        if k is None:
            d = _driver()
            res = d.cuModuleGetFunction(self.handle, name.encode())
            if _status_name(res[0]) == "CUDA_ERROR_NOT_FOUND":
                raise KernelNotFoundError(f"no kernel named {name!r} in the module (C++ kernel names are mangled; "
                                          f'declare kernels extern "C")')
            _check(res, "cuModuleGetFunction")
            k = Kernel(name, res[1], self, report)
            self._kernels[name] = k
        return k


class Kernel:
    """One ``__global__`` function of a loaded module; call it (or :func:`launch` it) to run it.

    ``name``, ``handle`` (``CUfunction``), ``module``, ``report`` (its
    :class:`~cute_py.runtime.report.KernelReport` when it came from
    :meth:`Program.kernel <cute_py.runtime.Program.kernel>`),
    ``max_dynamic_smem`` (the dynamic smem limit currently set: 48 KB until
    raised).

    >>> k = compile(src).kernel("k")                               # doctest: +SKIP
    >>> k(grid=(132, 1, 1), block=(384, 1, 1), smem=200 * 1024, cluster=(2, 1, 1), args=(tmap, out))  # doctest: +SKIP
    """

    def __init__(self, name: str, handle, module: Module | None = None, report=None):
        self.name = name
        self.handle = handle
        self.module = module
        self.report = report
        self.max_dynamic_smem = MAX_SMEM_DEFAULT

    def set_max_dynamic_smem(self, nbytes: int) -> None:
        """Allow up to ``nbytes`` of dynamic shared memory (``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``)."""
        d = _driver()
        attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        _check(d.cuFuncSetAttribute(self.handle, attr, int(nbytes)), "cuFuncSetAttribute",
               hint=f"{nbytes} bytes of dynamic smem; sm_90 allows at most 232448 per block, less the static smem")
        self.max_dynamic_smem = int(nbytes)

    def attribute(self, name: str) -> int:
        """``cuFuncGetAttribute``: e.g. ``"NUM_REGS"``, ``"SHARED_SIZE_BYTES"``, ``"MAX_THREADS_PER_BLOCK"``."""
        d = _driver()
        key = name if name.startswith("CU_FUNC_ATTRIBUTE_") else f"CU_FUNC_ATTRIBUTE_{name.upper()}"
        return int(_check(d.cuFuncGetAttribute(getattr(d.CUfunction_attribute, key), self.handle),
                          "cuFuncGetAttribute"))

    def __call__(self, grid, block, smem: int = 0, cluster=None, stream=None, args=()):
        """``launch(self, grid, block, smem, cluster, stream, args)``."""
        return launch(self, grid, block, smem=smem, cluster=cluster, stream=stream, args=args)

    def __repr__(self) -> str:
        r = self.report
        extra = f", registers={r.registers}, spills={r.spill_bytes}" if r is not None else ""
        return f"Kernel({self.name!r}{extra})"


def _dim3(x, what: str) -> tuple:
    if isinstance(x, bool):
        raise LaunchError(f"launch: {what} must be an int or a tuple of up to 3 ints, got {x!r}")
    t = (x,) if isinstance(x, int) else tuple(x)
    if not 1 <= len(t) <= 3 or any(isinstance(v, bool) or int(v) != v or v < 1 for v in t):
        raise LaunchError(f"launch: {what} must be 1 to 3 positive ints, got {x!r}")
    return tuple(int(v) for v in t) + (1,) * (3 - len(t))


def launch_dims(grid, block, cluster=None, smem: int = 0) -> tuple:
    """Normalized ``(grid, block, cluster or None)`` 3-tuples, checked (pure; no GPU).

    ``grid`` counts *blocks* (not clusters) and must be divisible by
    ``cluster`` in every dimension; a block has at most 1024 threads
    (z <= 64); a cluster at most :data:`MAX_CLUSTER_PORTABLE` CTAs; grid
    y and z at most 65535; ``smem`` non-negative.

    >>> launch_dims((4, 2), 128, cluster=2)
    ((4, 2, 1), (128, 1, 1), (2, 1, 1))
    >>> launch_dims(3, 128, cluster=2)
    Traceback (most recent call last):
    ...
    cute_py.runtime.errors.LaunchError: launch: grid (3, 1, 1) (in blocks) is not divisible by cluster (2, 1, 1) in dim 0
    """
    g, b = _dim3(grid, "grid"), _dim3(block, "block")
    if b[0] * b[1] * b[2] > 1024:
        raise LaunchError(f"launch: block {b} has {b[0] * b[1] * b[2]} threads > 1024")
    if b[2] > 64:
        raise LaunchError(f"launch: block z {b[2]} > 64")
    if g[0] >= 2 ** 31 or g[1] > 65535 or g[2] > 65535:
        raise LaunchError(f"launch: grid {g} exceeds (2^31-1, 65535, 65535)")
    if isinstance(smem, bool) or int(smem) != smem or smem < 0:
        raise LaunchError(f"launch: smem must be a non-negative int (bytes), got {smem!r}")
    c = None
    if cluster is not None:
        c = _dim3(cluster, "cluster")
        for i in range(3):
            if g[i] % c[i]:
                raise LaunchError(f"launch: grid {g} (in blocks) is not divisible by cluster {c} in dim {i}")
        if c[0] * c[1] * c[2] > MAX_CLUSTER_PORTABLE:
            raise LaunchError(f"launch: cluster {c} has {c[0] * c[1] * c[2]} CTAs > {MAX_CLUSTER_PORTABLE} "
                              f"(the portable limit)")
    return g, b, c


def stream_int(stream) -> int | None:
    """The ``CUstream`` handle of ``stream`` as an int, read without the driver: None (0, the legacy default
    stream), an int handle, or a stream object of cuda.core (``__cuda_stream__``), torch (``cuda_stream``) or
    cupy (``ptr``); None when it has no such handle.

    >>> class TorchLike:
    ...     cuda_stream = 0                       # torch's default stream: handle 0
    >>> stream_int(None), stream_int(7), stream_int(TorchLike()), stream_int(object())
    (0, 7, 0, None)
    """
    if stream is None:
        return 0
    if isinstance(stream, bool):
        return None
    if isinstance(stream, int):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        _version, handle = proto() if callable(proto) else proto
        return int(handle)
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int) and not isinstance(h, bool):
            return h
    return None


def _stream_handle(stream):
    """The ``CUstream`` of ``stream``: a CUstream, or anything :func:`stream_int` reads."""
    d = _driver()
    if isinstance(stream, d.CUstream):
        return stream
    h = stream_int(stream)
    if h is None:
        raise LaunchError(f"launch: cannot get a CUDA stream handle from {type(stream).__name__}")
    return d.CUstream(h)


# ---------------------------------------------------------------------------
# Argument packing: the one audited place where Python values become kernel parameters.

_CT_INTS = {  # ctypes integer/bool/float types accepted as explicit-width scalars
    ctypes.c_bool, ctypes.c_int8, ctypes.c_uint8, ctypes.c_int16, ctypes.c_uint16, ctypes.c_int32,
    ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_float,
    ctypes.c_double,
}
_NP_CTYPES = {  # numpy dtype name -> ctypes type of the same width and signedness
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double,
}


def _is_numpy_scalar(a) -> bool:
    mod = type(a).__module__
    return mod == "numpy" and hasattr(a, "dtype") and getattr(a, "shape", None) == ()


def _pack_one(i: int, a):
    if type(getattr(a, "handle", None)).__name__ == "CUtensorMap":
        return a.handle, None                                  # a TensorMap: its CUtensorMap by value (128 bytes)
    tname = type(a).__name__
    if tname == "CUtensorMap":
        return a, None
    if tname == "CUdeviceptr":
        return int(a), ctypes.c_void_p
    if _is_numpy_scalar(a):                                    # before int/float: np.float64 is a float
        name = a.dtype.name
        if name == "float16":
            return int(a.view("uint16")), ctypes.c_uint16       # __half / bf16 bits travel as 16-bit words
        ct = _NP_CTYPES.get(name)
        if ct is None:
            raise PackError(f"pack_args: argument {i}: numpy scalar type {name} is not supported")
        return a.item(), ct
    if isinstance(a, bool):
        return a, ctypes.c_bool
    if isinstance(a, int):
        raise PackError(f"pack_args: argument {i} is a Python int ({a}); its C width is ambiguous. Wrap it: "
                        f"np.int32({a}) / np.int64 / np.uint32 / ctypes.c_int32 ..., or ctypes.c_void_p({a}) "
                        f"for a device address")
    if isinstance(a, float):
        raise PackError(f"pack_args: argument {i} is a Python float ({a}); say its width: np.float32({a}) "
                        f"for float, np.float64 for double")
    if isinstance(a, ctypes.c_void_p):
        return (a.value or 0), ctypes.c_void_p
    if type(a) in _CT_INTS:
        return a.value, type(a)
    if isinstance(a, DeviceArray):
        return a.ptr, ctypes.c_void_p
    if isinstance(a, (ctypes._SimpleCData, ctypes.Structure, ctypes.Array)):
        raise PackError(f"pack_args: argument {i}: ctypes type {tname} is not supported (use fixed-width "
                        f"ctypes ints, c_float, c_double, c_bool or c_void_p)")
    if hasattr(a, "__cuda_array_interface__") or hasattr(a, "__dlpack__"):
        try:
            return as_device_array(a).ptr, ctypes.c_void_p     # a device array: its data pointer
        except Exception as e:  # noqa: BLE001 - re-raised with the argument index
            raise PackError(f"pack_args: argument {i} ({tname}) is not a usable device array: {e}") from e
    raise PackError(f"pack_args: argument {i} of type {tname} has no kernel parameter form (accepted: device "
                    f"arrays, TensorMap/CUtensorMap, numpy scalars, fixed-width ctypes, bool, CUdeviceptr)")


def pack_args(args) -> tuple:
    """Kernel arguments as the ``((values...), (types...))`` pair ``cuLaunchKernelEx`` takes (pure; no GPU).

    Each argument maps to exactly one C parameter (value, ctypes type):

    - a device array (``__cuda_array_interface__``, ``__dlpack__``,
      :class:`~cute_py.runtime.arrays.DeviceArray`): its data pointer, ``c_void_p``;
    - ``ctypes.c_void_p`` or ``CUdeviceptr``: the address, ``c_void_p``;
    - :class:`~cute_py.runtime.tensormap.TensorMap` or ``CUtensorMap``: the
      ``CUtensorMap`` itself, ``None`` (128 bytes by value, for a
      ``const __grid_constant__`` parameter);
    - a numpy scalar ``int8`` .. ``uint64``, ``float32``, ``float64``,
      ``bool_``: ``.item()``, the ctypes type of the same width and signedness;
    - a numpy ``float16``: its 16 bits, ``c_uint16``;
    - a ctypes ``c_int8`` .. ``c_uint64``, ``c_float``, ``c_double``,
      ``c_bool``: ``.value``, its own type;
    - a Python ``bool``: the bool, ``c_bool``.

    Plain Python ``int`` and ``float`` are refused (:class:`PackError`):
    their C width is ambiguous, and a wrong width shifts every following
    parameter. Host arrays (numpy) are refused.

    >>> import numpy as np
    >>> pack_args((np.float16(1.0), True))
    ((15360, True), (<class 'ctypes.c_ushort'>, <class 'ctypes.c_bool'>))
    >>> pack_args((3,))
    Traceback (most recent call last):
    ...
    cute_py.runtime.errors.PackError: pack_args: argument 0 is a Python int (3); its C width is ambiguous. Wrap it: np.int32(3) / np.int64 / np.uint32 / ctypes.c_int32 ..., or ctypes.c_void_p(3) for a device address
    """
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise PackError(f"pack_args: args must be a sequence of kernel arguments, got {type(args).__name__}")
    values, types = [], []
    for i, a in enumerate(args):
        v, t = _pack_one(i, a)
        values.append(v)
        types.append(t)
    return tuple(values), tuple(types)


class PreparedLaunch:
    """One launch with its kernel parameters already in C memory: calling it makes one driver call.

    Built by :func:`prepare_launch`; :meth:`set_arg` swaps one argument (a
    new device pointer, a new tensor map) in place, so a caller can keep one
    per problem and relaunch it for a few microseconds of Python.

    >>> run = prepare_launch(k, grid=132, block=384, smem=230400, args=(tma_a, tma_b, d_ptr))  # doctest: +SKIP
    >>> run(); run.set_pointer(2, other_d_ptr); run()                                          # doctest: +SKIP
    """

    def __init__(self, kernel, cfg, args, attrs):
        self.kernel = kernel
        self._cfg = cfg
        self._attrs = attrs                                # the config holds the attributes; keep them alive
        n = len(args)
        self._keep = [None] * n
        self._ptrs = (ctypes.c_void_p * max(n, 1))()
        for i, a in enumerate(args):
            self.set_arg(i, a)
        self._addr = ctypes.addressof(self._ptrs)
        self._call = _driver().cuLaunchKernelEx

    def set_arg(self, i: int, value) -> None:
        """Replace argument ``i`` (same rules as :func:`pack_args`)."""
        v, t = _pack_one(i, value)
        if t is None:                                      # a CUtensorMap: point at its 128 bytes
            self._keep[i] = v
            self._ptrs[i] = v.getPtr()
        else:
            cell = t(v)
            self._keep[i] = cell
            self._ptrs[i] = ctypes.addressof(cell)

    def set_pointer(self, i: int, address: int) -> None:
        """Fast path of :meth:`set_arg` for a pointer argument."""
        cell = self._keep[i]
        if isinstance(cell, ctypes.c_void_p):
            cell.value = address
        else:
            self.set_arg(i, ctypes.c_void_p(address))

    def __call__(self) -> None:
        err = self._call(self._cfg, self.kernel.handle, self._addr, 0)[0]
        if err:
            _check((err,), "cuLaunchKernelEx", hint=f"kernel {self.kernel.name!r}")


def _launch_config(kernel, grid, block, smem, cluster, stream):
    if not isinstance(kernel, Kernel):
        raise LaunchError(f"launch: expected a Kernel (Program.kernel(name)), got {type(kernel).__name__}")
    g, b, c = launch_dims(grid, block, cluster, smem)
    dev = device(kernel.module.device.ordinal if kernel.module is not None else 0)
    if smem > dev.max_smem_optin:
        raise LaunchError(f"launch: {smem} bytes of dynamic smem > {dev.max_smem_optin} allowed per block on "
                          f"{dev.name}")
    if smem > kernel.max_dynamic_smem:
        kernel.set_max_dynamic_smem(smem)
    d = _driver()
    cfg = d.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = g
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = b
    cfg.sharedMemBytes = int(smem)
    cfg.hStream = _stream_handle(stream)
    attrs = []
    if c is not None:
        attr = d.CUlaunchAttribute()
        attr.id = d.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = c
        attrs.append(attr)
    cfg.attrs = attrs
    cfg.numAttrs = len(attrs)
    return cfg, attrs


def max_active_clusters(kernel: Kernel, block, smem: int, cluster) -> int:
    """How many clusters of ``cluster`` CTAs can be resident at once (``cuOccupancyMaxActiveClusters``).

    >>> max_active_clusters(k, block=384, smem=230400, cluster=(2, 1, 1))  # doctest: +SKIP
    66
    """
    n = 1
    for x in _dim3(cluster, "cluster"):
        n *= x
    cfg, _attrs = _launch_config(kernel, (n, 1, 1), block, smem, cluster, None)
    return int(_check(_driver().cuOccupancyMaxActiveClusters(kernel.handle, cfg), "cuOccupancyMaxActiveClusters",
                      hint=f"kernel {kernel.name!r}, cluster {cluster}, smem {smem}"))


LEGACY_STREAMS = (0, 1)
"""Handles of the legacy default stream (0, and ``CU_STREAM_LEGACY`` as the CUDA array interface writes it)."""


def stream_capturing(stream) -> bool:
    """Whether ``stream`` (see :func:`launch`) is being captured into a CUDA graph (``cuStreamIsCapturing``).
    The legacy default stream never is, and is answered without the driver (asking the driver about it while
    another stream captures is itself an error: a launch there would break that capture).

    >>> stream_capturing(None), stream_capturing(1)               # the legacy default stream: no driver needed
    (False, False)
    """
    if stream_int(stream) in LEGACY_STREAMS:
        return False
    d = _driver()
    status = _check(d.cuStreamIsCapturing(_stream_handle(stream)), "cuStreamIsCapturing")
    return status != d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE


def prepare_launch(kernel: Kernel, grid, block, smem: int = 0, cluster=None, stream=None, args=()) -> PreparedLaunch:
    """Everything :func:`launch` does except the launch itself: call the result to launch (needs a GPU).

    >>> prepare_launch(k, grid=132, block=384, smem=230400, args=(tma_a, tma_b, d_ptr))()  # doctest: +SKIP
    """
    cfg, attrs = _launch_config(kernel, grid, block, smem, cluster, stream)
    return PreparedLaunch(kernel, cfg, args, attrs)


def launch(kernel: Kernel, grid, block, smem: int = 0, cluster=None, stream=None, args=()) -> None:
    """Launch ``kernel`` with ``cuLaunchKernelEx`` (asynchronous; needs a GPU).

    ``grid`` counts blocks (not clusters), ``block`` threads, each an int or
    up to 3 ints; ``smem`` dynamic shared memory bytes (above 48 KB the
    kernel's limit is raised first, once); ``cluster`` the cluster dims
    (``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION``), dividing the grid;
    ``stream`` None (the legacy default stream, which orders with torch's
    and cupy's default streams), an int handle or a torch / cupy /
    cuda.core stream; ``args`` the kernel arguments (see :func:`pack_args`).

    Errors: :class:`LaunchError` for a bad configuration (before any driver
    call), :class:`PackError` for an argument without a C form,
    :class:`DriverError` when the driver refuses the launch. Faults inside
    the kernel surface at the next synchronization (:func:`synchronize`).

    >>> launch(k, grid=(264, 1, 1), block=384, smem=200 * 1024, cluster=(2, 1, 1), args=(tma_a, tma_b, c))  # doctest: +SKIP
    """
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise PackError(f"pack_args: args must be a sequence of kernel arguments, got {type(args).__name__}")
    args = tuple(args)
    pack_args(args)                                        # every argument's C form, before any driver call
    prepare_launch(kernel, grid, block, smem, cluster, stream, args)()
