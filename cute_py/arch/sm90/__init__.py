"""Hopper (sm_90a) facts derived from layouts: smem atoms, wgmma descriptors, TMA parameters, budgets.

Pure Python: no GPU, no cuda-python.
"""

from .budget import (
    REGS_PER_SM, SMEM_PER_BLOCK, SmemBudget, accumulator_registers, check_config, smem_budget,
    valid_wgmma_n, wgmma_k,
)
from .gmma_desc import GmmaDescriptor, GmmaLayoutError, make_gmma_desc
from .tma import TMA_DATA_TYPES, TmaError, TmaParams, make_tma_params, validate_tma
from .synth import SmemSynthesis, SynthesisCertificate, synthesize_smem_layout
from .smem import SMEM_ALIGN, SWIZZLE_BYTES, select_smem_atom, smem_atom, stage_bytes, swizzle_bytes_of, tile_smem

__all__ = ["smem_atom", "select_smem_atom", "tile_smem", "stage_bytes", "swizzle_bytes_of", "SMEM_ALIGN",
           "SWIZZLE_BYTES", "GmmaDescriptor", "GmmaLayoutError", "make_gmma_desc", "TmaParams", "TmaError",
           "make_tma_params", "validate_tma", "TMA_DATA_TYPES", "SMEM_PER_BLOCK", "REGS_PER_SM", "SmemBudget",
           "smem_budget", "accumulator_registers", "wgmma_k", "valid_wgmma_n", "check_config",
           "synthesize_smem_layout", "SmemSynthesis", "SynthesisCertificate"]
