"""tests/gpu: skipped cleanly (with the reason) unless an sm_90 GPU, its driver and NVRTC are usable.

Device memory comes from cupy if importable, else torch (both exist on the GPU
machine; ``CUTE_PY_TEST_ARRAYS=torch`` or ``=cupy`` picks one); the runtime
under test never imports either.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def _gpu_unavailable_reason():
    try:
        from cuda.bindings import driver
    except ImportError:
        return 'cuda-bindings is not installed (pip install "cute-py[cuda]")'
    try:
        (err,) = driver.cuInit(0)
    except Exception as e:  # noqa: BLE001 - DynamicLibNotFoundError without a driver
        return f"no CUDA driver ({type(e).__name__})"
    if int(err) != 0:
        return f"cuInit failed: {getattr(err, 'name', err)}"
    err, count = driver.cuDeviceGetCount()
    if int(err) != 0 or count == 0:
        return "no CUDA device"
    err, dev = driver.cuDeviceGet(0)
    attr = driver.CUdevice_attribute
    _, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    _, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    if (major, minor) != (9, 0):
        return f"needs an sm_90 (Hopper) GPU; device 0 is compute capability {major}.{minor}"
    try:
        from cute_py.runtime import nvrtc_version
        nvrtc_version()
    except Exception as e:  # noqa: BLE001
        return f"NVRTC unavailable: {e}"
    if _array_lib() is None:
        return "neither cupy nor torch is importable (needed for device buffers in these tests)"
    return None


def _array_lib():
    forced = os.environ.get("CUTE_PY_TEST_ARRAYS")           # "torch" or "cupy": run with that library only
    if forced:
        try:
            mod = __import__(forced)
            return forced if forced != "torch" or mod.cuda.is_available() else None
        except Exception:  # noqa: BLE001
            return None
    try:
        import cupy  # noqa: F401
        return "cupy"
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch
        if torch.cuda.is_available():
            return "torch"
    except Exception:  # noqa: BLE001
        pass
    return None


_REASON = None
_CHECKED = False


def gpu_reason():
    global _REASON, _CHECKED
    if not _CHECKED:
        _REASON = _gpu_unavailable_reason()
        _CHECKED = True
    return _REASON


@pytest.fixture(autouse=True)
def _need_gpu():
    reason = gpu_reason()
    if reason:
        pytest.skip(f"GPU test skipped: {reason}")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("nvrtc_cache")


@pytest.fixture(autouse=True)
def _isolated_cache(cache_dir, monkeypatch):
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(cache_dir))


class DeviceMemory:
    """Upload numpy arrays (any dtype, as raw bits) and download them, with cupy or torch."""

    def __init__(self, lib: str):
        self.lib = lib

    def to_device(self, host: np.ndarray):
        host = np.ascontiguousarray(host)
        if self.lib == "cupy":
            import cupy
            return cupy.asarray(host)
        import torch
        # torch lacks full uint16/uint32 support: move the bits as the signed type of the same width
        signed = {np.dtype(np.uint16): np.int16, np.dtype(np.uint32): np.int32, np.dtype(np.uint64): np.int64}
        view = host.view(signed.get(host.dtype, host.dtype))
        return torch.from_numpy(view).cuda()

    def zeros(self, n: int, np_dtype=np.uint32):
        return self.to_device(np.zeros(n, dtype=np_dtype))

    def to_host(self, dev, np_dtype) -> np.ndarray:
        if self.lib == "cupy":
            import cupy
            return cupy.asnumpy(dev).view(np_dtype)
        return dev.cpu().numpy().view(np_dtype)


@pytest.fixture(scope="session")
def mem():
    return DeviceMemory(_array_lib() or "none")
