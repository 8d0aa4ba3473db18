"""``cute_py.torch``: cute_py's GEMMs in PyTorch models (the only part of cute_py that imports torch).

Importing it registers the custom operators ``torch.ops.cute_py.gemm`` and ``torch.ops.cute_py.gemm_out``
(:mod:`cute_py.torch.ops`: schema, CUDA, CPU and fake kernels, autograd), ``scaled_gemm`` and ``grouped_mm``
(:mod:`cute_py.torch.grouped`, ``torch._grouped_mm``'s forms with autograd), which work under
``torch.compile(fullgraph=True)``, inside ``torch.cuda.graph`` capture and on any current stream. On top of them:

- :func:`matmul`: ``act(alpha * a @ b + beta * c + bias)`` with ``torch.matmul``'s shapes;
- :class:`Linear`: a drop-in ``torch.nn.Linear`` (same parameters and state_dict) with a fused bias and
  activation; :func:`swap_linear` puts it into a model in place and reports what it skipped and why;
- :func:`autotune`: run a model once, tune every GEMM problem it makes, remember the winners on disk.

>>> import torch, cute_py.torch
>>> x, w = torch.ones(4, 64, dtype=torch.bfloat16), torch.ones(32, 64, dtype=torch.bfloat16)
>>> torch.ops.cute_py.gemm(x, w.t()).shape                       # on the CPU: torch's arithmetic
torch.Size([4, 32])
"""

from .functional import matmul
from .grouped import grouped_mm
from .nn import Linear, SwapReport, swap_linear, why_not_swapped
from .ops import gemm, gemm_out
from .tune import autotune, collect

__all__ = ["matmul", "Linear", "swap_linear", "SwapReport", "why_not_swapped", "gemm", "gemm_out", "grouped_mm",
           "autotune", "collect"]
