"""``cute_py.emit``: a GemmSpec (layout spec) -> CUDA C++ source of a warp-specialized sm_90a GEMM.

Pure Python (no GPU, no CUDA libraries): it produces text. :class:`GemmSpec`
describes the kernel, :func:`emit_gemm` writes it (:mod:`cute_py.emit.kernel`: a fixed
skeleton filled by the collectives of :mod:`cute_py.emit.collectives`), :mod:`cute_py.emit.plan`
holds every layout fact the text prints. Importing it loads neither sympy nor a
GPU library (symbolic layouts come from :func:`cute_py.parse`, which loads sympy
when it first meets a symbol).
"""

from .checks import EmitError
from .cprint import to_c
from .collectives.compose import kernel_params
from .kernel import emit_gemm
from .params import KernelParam
from .plan import GemmPlan, OperandPlan, gemm_plan, operand_plan
from .spec import GemmSpec, SpecError, example_specs

__all__ = ["GemmSpec", "SpecError", "EmitError", "emit_gemm", "kernel_params", "KernelParam", "gemm_plan",
           "operand_plan", "GemmPlan", "OperandPlan", "example_specs", "to_c"]
