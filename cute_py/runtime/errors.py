"""Errors of :mod:`cute_py.runtime`; each message says what went wrong and what to do about it.

Every error is a :class:`CudaRuntimeError` (a ``RuntimeError``); the ones
about bad inputs are also ``ValueError`` or ``TypeError``, so generic handlers
keep working.

>>> from cute_py.runtime import errors
>>> issubclass(errors.ArrayError, ValueError), issubclass(errors.NoDeviceError, errors.CudaRuntimeError)
(True, True)
"""

from __future__ import annotations

__all__ = [
    "CudaRuntimeError", "CudaNotInstalledError", "NvrtcNotFoundError", "NoDeviceError", "UnsupportedArchError",
    "CompileError", "DriverError", "KernelNotFoundError", "LaunchError", "ArrayError", "TensorMapError", "PackError",
    "INSTALL_HINT",
]

INSTALL_HINT = 'pip install "cute-py[cuda]"  (or: pip install cuda-bindings nvidia-cuda-nvrtc)'
"""The command that installs what :mod:`cute_py.runtime` needs (CPU-only wheels, about 65 MB)."""


class CudaRuntimeError(RuntimeError):
    """Base class of every error raised by :mod:`cute_py.runtime`.

    >>> isinstance(NoDeviceError("x"), CudaRuntimeError)
    True
    """


class CudaNotInstalledError(CudaRuntimeError, ImportError):
    """``cuda-bindings`` (the ``cuda.bindings`` package of cuda-python) is not installed.

    >>> print(CudaNotInstalledError.default_message())  # doctest: +ELLIPSIS
    cute_py.runtime needs cuda-python's bindings (module cuda.bindings): pip install "cute-py[cuda]" ...
    """

    @staticmethod
    def default_message(detail: str = "") -> str:
        """The message: what is missing and the pip command that installs it."""
        msg = f"cute_py.runtime needs cuda-python's bindings (module cuda.bindings): {INSTALL_HINT}"
        return msg + (f" [{detail}]" if detail else "")


class NvrtcNotFoundError(CudaRuntimeError, ImportError):
    """The NVRTC shared library (``libnvrtc.so.13``, from the ``nvidia-cuda-nvrtc`` wheel) cannot be loaded.

    ``pip install cuda-python`` alone does not bring NVRTC; the
    ``nvidia-cuda-nvrtc`` wheel does. No GPU or driver is needed to compile.

    >>> "nvidia-cuda-nvrtc" in str(NvrtcNotFoundError.from_exception(OSError("libnvrtc.so.13")))
    True
    """

    @classmethod
    def from_exception(cls, exc: BaseException) -> "NvrtcNotFoundError":
        """Wrap the loader's exception in an error that names the wheel to install."""
        return cls(f"cannot load the NVRTC library ({type(exc).__name__}: {exc}). Compiling needs no GPU, "
                   f"only the NVRTC wheel: {INSTALL_HINT}")


class NoDeviceError(CudaRuntimeError):
    """No CUDA driver, or no GPU: launching is impossible here (compile-only operations still work).

    >>> str(NoDeviceError.because("cuInit returned CUDA_ERROR_NO_DEVICE")).endswith("compile-only operations still work (cute_py.runtime.compile needs no GPU)")
    True
    """

    @classmethod
    def because(cls, reason: str) -> "NoDeviceError":
        """An error saying why no device is usable, and that compiling still works."""
        return cls(f"no usable CUDA device: {reason}. Launching kernels needs an NVIDIA GPU and its driver; "
                   f"compile-only operations still work (cute_py.runtime.compile needs no GPU)")


class UnsupportedArchError(CudaRuntimeError, ValueError):
    """An architecture NVRTC cannot target, or a cubin that does not match the device it is loaded on.

    >>> issubclass(UnsupportedArchError, ValueError)
    True
    """


class CompileError(CudaRuntimeError):
    """NVRTC rejected the source, or ptxas reported a fatal performance problem (wgmma serialization).

    Attributes: ``status`` (the NVRTC result name, e.g.
    ``"NVRTC_ERROR_COMPILATION"``, or ``"PTXAS_SERIALIZATION"`` for a
    compile that succeeded but serialized wgmma), ``log`` (the full
    compiler log), ``source`` (the source text), ``name`` (its file name),
    ``lines`` (source line numbers the log blames) and ``codes`` (ptxas
    diagnostic codes such as ``"C7511"``). ``numbered_source`` is the source
    with line numbers; ``str(error)`` shows the log and the source around
    the first blamed line.

    >>> e = CompileError("NVRTC_ERROR_COMPILATION", 'k.cu(2): error: expected a ";"', "int a\\nint b\\n", "k.cu")
    >>> e.lines
    (2,)
    >>> print(e.numbered_source)
        1 | int a
        2 | int b
    """

    def __init__(self, status: str, log: str, source: str, name: str = "kernel.cu", codes=(), summary: str = ""):
        self.status = status
        self.log = log
        self.source = source
        self.name = name
        self.codes = tuple(codes)
        self.lines = _blamed_lines(log, name)
        self.summary = summary
        super().__init__(self._message())

    @property
    def numbered_source(self) -> str:
        """The whole source, each line prefixed by its 1-based number."""
        return "\n".join(f"{i:5d} | {line}" for i, line in enumerate(self.source.splitlines(), 1))

    def excerpt(self, line: int, context: int = 3) -> str:
        """Numbered source lines ``line - context .. line + context``, the blamed line marked ``>``."""
        src = self.source.splitlines()
        lo, hi = max(1, line - context), min(len(src), line + context)
        return "\n".join(f"{'>' if i == line else ' '}{i:4d} | {src[i - 1]}" for i in range(lo, hi + 1))

    def _message(self) -> str:
        head = self.summary or f"NVRTC compilation of {self.name} failed ({self.status})"
        parts = [head, "log:", _indent(self.log.strip() or "(empty log)")]
        if self.lines:
            parts += [f"source around line {self.lines[0]}:", self.excerpt(self.lines[0])]
        return "\n".join(parts)


class DriverError(CudaRuntimeError):
    """A CUDA driver call failed; ``call`` names it, ``result`` is the ``CUresult`` name.

    >>> str(DriverError("cuModuleLoadData", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"))
    'cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)'
    """

    def __init__(self, call: str, result: str, description: str = "", hint: str = ""):
        self.call = call
        self.result = result
        msg = f"{call} failed: {result}" + (f" ({description})" if description else "")
        super().__init__(msg + (f"; {hint}" if hint else ""))


class KernelNotFoundError(CudaRuntimeError, KeyError):
    """A module or program has no kernel of that name (also a ``KeyError``).

    >>> issubclass(KernelNotFoundError, KeyError)
    True
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class LaunchError(CudaRuntimeError, ValueError):
    """A launch configuration that cannot work (grid not divisible by the cluster, too many threads, ...).

    >>> issubclass(LaunchError, ValueError)
    True
    """


class ArrayError(CudaRuntimeError, ValueError):
    """An array that cannot be used on the device (CPU memory, misaligned, unsupported or wrong dtype).

    >>> issubclass(ArrayError, ValueError)
    True
    """


class TensorMapError(CudaRuntimeError, ValueError):
    """A TMA descriptor that cannot be encoded; ``problems`` lists every violated constraint.

    >>> TensorMapError(["global address 0x8 is not 16-byte aligned"]).problems
    ('global address 0x8 is not 16-byte aligned',)
    """

    def __init__(self, problems, context: str = ""):
        self.problems = tuple(problems)
        head = "tensor_map: cannot encode the TMA descriptor" + (f" ({context})" if context else "")
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))


class PackError(CudaRuntimeError, TypeError):
    """A kernel argument whose C type is ambiguous or unsupported (see :func:`cute_py.runtime.pack_args`).

    >>> issubclass(PackError, TypeError)
    True
    """


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _blamed_lines(log: str, name: str) -> tuple:
    """Source line numbers in ``name(LINE): error`` lines of an NVRTC log (errors first, then warnings)."""
    import re

    pat = re.compile(re.escape(name) + r"\((\d+)\): (error|warning|catastrophic error)")
    errors, warnings = [], []
    for m in pat.finditer(log):
        (warnings if m.group(2) == "warning" else errors).append(int(m.group(1)))
    out = []
    for n in errors + warnings:
        if n not in out:
            out.append(n)
    return tuple(out)


def _load_bindings(name: str):
    """The module ``cuda.bindings.<name>`` (``"driver"``, ``"nvrtc"``), imported; :class:`CudaNotInstalledError`
    naming the pip command when cuda-bindings is not installed. The lazy loaders of ``driver`` and ``nvrtc``
    call it on first use."""
    import importlib

    try:
        return importlib.import_module(f"cuda.bindings.{name}")
    except ImportError as e:
        raise CudaNotInstalledError(CudaNotInstalledError.default_message(str(e))) from e


def _status_name(status) -> str:
    """The name of a driver or NVRTC result code (``CUDA_ERROR_NOT_FOUND``), or its ``str``."""
    return getattr(status, "name", str(status))
