"""``cute_py.runtime``: NVRTC compile (cached), module loading, TMA descriptors, cluster launch, array interop.

The only package of cute_py that touches cuda-python, and only lazily:
importing it imports no ``cuda`` module. Compiling needs NVRTC (the
``nvidia-cuda-nvrtc`` wheel) but no GPU; loading, encoding tensor maps and
launching need a driver and a GPU. Install with ``pip install "cute-py[cuda]"``.

Runtime takes ints and buffers, not Layouts: it imports nothing of the
algebra, only the element-type table at the package's base,
:mod:`cute_py.dtypes` (the layer rules are checked by
``tests/test_import_graph.py``).

- :func:`compile` -> :class:`Program` (cubin, PTX, log, per-kernel registers /
  spills / smem, warnings); :meth:`Program.kernel` -> :class:`Kernel`;
  :func:`~cute_py.runtime.census.instruction_census` counts the PTX instructions that matter.
- :func:`launch` (``cuLaunchKernelEx`` with cluster dims), :func:`pack_args`.
- :func:`tensor_map` (``cuTensorMapEncodeTiled`` from concrete
  :func:`cute_py.arch.sm90.make_tma_params` parameters), :func:`encode_args`.
- :func:`as_device_array` for torch, cupy, jax or raw pointers (a
  :class:`DeviceArray` record; its Layout is :func:`cute_py.interop.layout_of`).
- :func:`device` (primary context of device 0, shared with torch and cupy).

>>> import cute_py.runtime
>>> cute_py.runtime.pack_args(())
((), ())
"""

from .arrays import DeviceArray, as_device_array
from .census import instruction_census
from .driver import (
    Device, Kernel, Module, PreparedLaunch, device, launch, launch_dims, max_active_clusters, pack_args, prepare_launch,
    stream_capturing, stream_int, synchronize,
)
from .errors import (
    ArrayError, CompileError, CudaNotInstalledError, CudaRuntimeError, DriverError, KernelNotFoundError, LaunchError,
    NoDeviceError,
    NvrtcNotFoundError, PackError, TensorMapError, UnsupportedArchError,
)
from .nvrtc import Program, compile, nvrtc_version
from .report import Diagnostic, KernelReport
from .tensormap import TensorMap, encode_args, tensor_map

__all__ = [
    "compile", "Program", "KernelReport", "Diagnostic", "nvrtc_version", "instruction_census",
    "device", "Device", "Module", "Kernel", "launch", "launch_dims", "pack_args", "synchronize", "PreparedLaunch",
    "prepare_launch", "max_active_clusters", "stream_capturing", "stream_int",
    "tensor_map", "TensorMap", "encode_args",
    "as_device_array", "DeviceArray",
    "CudaRuntimeError", "CompileError", "CudaNotInstalledError", "NvrtcNotFoundError", "NoDeviceError",
    "UnsupportedArchError", "DriverError", "KernelNotFoundError", "LaunchError", "ArrayError", "TensorMapError",
    "PackError",
]
