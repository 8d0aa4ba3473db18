"""cute_py: the CuTe layout algebra in Python, and a Hopper GEMM emitter built on it.

The algebra lives in :mod:`cute_py.layouts` and is re-exported here, so
``cute_py.composition``, ``cute_py.Layout``, ``cute_py._`` ... work as in CuTe.

``from cute_py import *`` brings every public name except CuTe's ``zip`` and ``filter``, which would hide
Python's built-ins of those names: call them as ``cute_py.zip`` and ``cute_py.filter`` (or import them by name).

>>> import cute_py as cute
>>> print(cute.composition(cute.parse("(4,3):(3,1)"), cute.parse("6:2")))
(2,3):(6,1)
>>> print(cute.filter(cute.parse("(2,3):(0,1)")), "zip" in cute.__all__)
3:1 False
"""

from .layouts import *  # noqa: F401,F403
from .layouts import __all__ as _layout_all
from . import atoms  # noqa: E402
from .atoms import (  # noqa: E402
    CopyAtom, MMAAtom, TiledCopy, TiledMMA, make_copy_atom, make_tiled_copy, make_tiled_copy_A,
    make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma,
)

from ._version import __version__  # noqa: E402
SHADOWED_BUILTINS = ("zip", "filter")
"""Public names left out of ``__all__``: a star import must not replace Python's built-ins."""

__all__ = [n for n in _layout_all if n not in SHADOWED_BUILTINS] + [
    "atoms", "MMAAtom", "CopyAtom", "TiledMMA", "TiledCopy", "make_copy_atom", "make_tiled_mma",
    "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C", "__version__",
]

# Last, the renderers: importing cute_py.viz sets _repr_svg_/_repr_html_ on the layout, atom and
# tiling classes, so notebooks draw them with no extra call (layouts/ and atoms/ never import viz).
from . import viz  # noqa: E402,F401
from .viz.explain import explain  # noqa: E402
from .arch.sm90.synth import synthesize_smem_layout  # noqa: E402

__all__ += ["explain", "synthesize_smem_layout"]

# The GEMM product. cute_py.gemm and cute_py.autotune are the modules, made callable (cute_py._callable):
# cute_py.gemm(a, b, ...) runs the GEMM and cute_py.gemm.pick_spec, cute_py.autotune.clear_cache ... resolve.
from .problem import GemmInputError  # noqa: E402
from . import gemm  # noqa: E402
from .gemm import bmm, grouped_gemm, scaled_gemm  # noqa: E402


def __getattr__(name):
    """``cute_py.autotune`` and ``cute_py.AutotuneError`` load the autotuner on first use (it is not needed to
    run a GEMM, and ``import cute_py`` stays fast)."""
    if name in ("autotune", "AutotuneError"):
        import importlib
        module = importlib.import_module(".autotune", __name__)
        return module if name == "autotune" else module.AutotuneError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Every error class, importable from cute_py itself (the layout errors come with the algebra above).
from .emit import SpecError  # noqa: E402
from .emit.checks import EmitError  # noqa: E402
from .emit.cprint import CPrintError  # noqa: E402
from .atoms.mma import AtomError  # noqa: E402
from .arch.sm90.gmma_desc import GmmaLayoutError  # noqa: E402
from .arch.sm90.tma import TmaError  # noqa: E402
from .arraylib import ArrayLibraryError  # noqa: E402
from .runtime.errors import (  # noqa: E402
    ArrayError, CompileError, CudaNotInstalledError, CudaRuntimeError, DriverError, KernelNotFoundError,
    LaunchError, NoDeviceError, NvrtcNotFoundError, PackError, TensorMapError, UnsupportedArchError,
)

ERRORS = (
    "GemmInputError", "AutotuneError", "SpecError", "EmitError", "CPrintError", "AtomError", "GmmaLayoutError",
    "TmaError", "ArrayLibraryError", "CudaRuntimeError", "CudaNotInstalledError", "NvrtcNotFoundError",
    "NoDeviceError", "UnsupportedArchError", "CompileError", "DriverError", "KernelNotFoundError", "LaunchError",
    "ArrayError", "TensorMapError", "PackError",
)
__all__ += ["gemm", "scaled_gemm", "grouped_gemm", "bmm", "autotune", *ERRORS]
