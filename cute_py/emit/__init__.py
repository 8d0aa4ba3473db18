"""``cute_py.emit``: a GemmSpec (layout spec) -> CUDA C++ source of a warp-specialized sm_90a GEMM.

Pure Python (no GPU, no CUDA libraries): it produces text. :class:`GemmSpec`
describes the kernel, :func:`emit_gemm` writes it, :mod:`cute_py.emit.plan`
holds every layout fact the text prints.
"""

from .checks import EmitError
from .gemm_sm90 import emit_gemm
from .params import KernelParam, kernel_params
from .plan import GemmPlan, OperandPlan, gemm_plan, operand_plan
from .spec import GemmSpec, SpecError, example_specs, parse_gmem

__all__ = ["GemmSpec", "SpecError", "EmitError", "emit_gemm", "kernel_params", "KernelParam", "gemm_plan", "operand_plan", "GemmPlan",
           "OperandPlan", "example_specs", "parse_gmem"]

try:  # the C printer of symbolic index expressions (cute_py/emit/cprint.py), when present
    from .cprint import to_c  # noqa: F401
    __all__.append("to_c")
except ImportError:  # pragma: no cover
    pass
