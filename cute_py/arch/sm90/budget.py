"""Resource budgets of a warp-specialized Hopper GEMM config, and a checker returning every violation.

The numbers are facts of sm_90a: 227 KB (232448 bytes) of dynamic shared
memory per block, 65536 registers per SM, wgmma M = 64 per warpgroup with
N a multiple of 8 up to 256 and K = 32 bytes of the input type.

>>> b = smem_budget(128, 128, 64, "bf16", "bf16", epilogue_bytes=0)
>>> b.stage_bytes, b.max_stages
(32768, 7)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import int_tuple as it
from ...layouts.dtypes import dtype
from .smem import SMEM_ALIGN

__all__ = ["SMEM_PER_BLOCK", "REGS_PER_SM", "SmemBudget", "smem_budget", "accumulator_registers",
           "wgmma_k", "valid_wgmma_n", "check_config"]

SMEM_PER_BLOCK = 232448
"""Largest dynamic shared memory per block on sm_90 (227 KB)."""
REGS_PER_SM = 65536
BARRIER_BYTES = 8
"""One mbarrier (64 bits)."""


@dataclass(frozen=True)
class SmemBudget:
    """Shared memory of one config: the dynamic part (stages of A + B tiles, each 1024-byte aligned, and the
    epilogue's bytes) and the static part (per stage its full and empty mbarriers and any slot it carries beside
    its tiles, plus ``static_extra`` bytes: alignment padding and other static arrays), which the kernel's static
    shared memory occupies in whole kilobytes."""

    stage_bytes: int
    barrier_bytes_per_stage: int
    epilogue_bytes: int
    max_stages: int
    static_extra: int = 0

    def total(self, stages: int) -> int:
        """Bytes for ``stages`` stages, their barriers and slots, and the epilogue buffer: the dynamic part and
        the static part, each in whole kilobytes.

        >>> SmemBudget(32768, 16, 1024, 0).total(6), SmemBudget(32768, 528, 1024, 0, 144).total(6)
        (198656, 201728)
        """
        dynamic = it.round_up(stages * self.stage_bytes + self.epilogue_bytes, SMEM_ALIGN)
        return dynamic + it.round_up(stages * self.barrier_bytes_per_stage + self.static_extra, SMEM_ALIGN)


def smem_budget(block_m, block_n, block_k, a_type, b_type, epilogue_bytes=0,
                limit: int = SMEM_PER_BLOCK, stage_extra: int = 0, static_extra: int = 0) -> SmemBudget:
    """Shared memory per stage and the most stages that fit in ``limit`` bytes.

    Each stage holds an ``(M, K)`` A tile and an ``(N, K)`` B tile, each rounded
    up to 1024 bytes, plus a full and an empty mbarrier and ``stage_extra`` bytes
    of its own beside the ring (the blockwise scales of its K tile); the static
    arrays take ``static_extra`` bytes more.

    >>> smem_budget(128, 256, 64, "bf16", "bf16", epilogue_bytes=128 * 256 * 2).max_stages
    3
    """
    a, b = dtype(a_type), dtype(b_type)
    stage = (it.round_up(block_m * block_k * a.bits // 8, SMEM_ALIGN)
             + it.round_up(block_n * block_k * b.bits // 8, SMEM_ALIGN))
    bar = 2 * BARRIER_BYTES + stage_extra
    budget = SmemBudget(stage, bar, epilogue_bytes, 0, static_extra)
    n = 0
    while budget.total(n + 1) <= limit:
        n += 1
    return SmemBudget(stage, bar, epilogue_bytes, n, static_extra)


def accumulator_registers(block_m, block_n, consumers: int = 1, acc_type="f32") -> int:
    """32-bit accumulator registers per consumer thread: ``M*N / (128*consumers)`` values.

    >>> accumulator_registers(128, 256, consumers=2)
    128
    """
    t = dtype(acc_type)
    return block_m * block_n * t.bits // 32 // (128 * consumers)


def wgmma_k(a_type) -> int:
    """Instruction K: 32 bytes of the input type (16 for 16-bit, 8 for tf32, 32 for 8-bit).

    >>> wgmma_k("bf16"), wgmma_k("tf32"), wgmma_k("e4m3")
    (16, 8, 32)
    """
    return 256 // dtype(a_type).bits


def valid_wgmma_n(acc_type="f32") -> tuple:
    """The N extents wgmma accepts: multiples of 8 up to 256; for s32 accumulators 8, 16, 24 and multiples of 16.

    >>> valid_wgmma_n("s32")[:5]
    (8, 16, 24, 32, 48)
    """
    if dtype(acc_type).name == "s32":
        return (8, 16, 24) + tuple(range(32, 257, 16))
    return tuple(range(8, 257, 8))


def check_config(block_m, block_n, block_k, a_type="bf16", b_type="bf16", acc_type="f32", consumers=1,
                 stages=None, epilogue_bytes=0, cluster=(1, 1, 1), max_regs_per_consumer=240,
                 stage_extra: int = 0, static_extra: int = 0) -> list:
    """Every way a warp-specialized GEMM config breaks Hopper's limits, each with its values ([] = valid).

    Checks: consumers in {1, 2} and ``block_m == 64 * consumers * k`` (each
    consumer warpgroup owns whole 64-row wgmma slices); the wgmma N per consumer
    (``block_n``) is a valid N; ``block_k`` a multiple of the instruction K;
    accumulators fit in ``max_regs_per_consumer`` registers (less 16 for
    addressing); the stages (or at least 2) fit in shared memory; cluster size
    <= 8 (portable) and each dim a power of two.

    >>> check_config(128, 256, 64, consumers=2, stages=4, epilogue_bytes=0)
    []
    >>> check_config(128, 264, 48, consumers=2, stages=8)[:2]
    ['block_n 264 is not a valid wgmma N for f32 accumulators (multiples of 8 up to 256)', 'smem: 8 stages need 304128 bytes > 232448']
    """
    problems = []
    if consumers not in (1, 2):
        problems.append(f"consumers {consumers} not in (1, 2)")
    elif block_m % (64 * consumers):
        problems.append(f"block_m {block_m} is not a multiple of 64 x {consumers} consumer warpgroup(s)")
    acc = dtype(acc_type)
    if block_n not in valid_wgmma_n(acc):
        rule = "8, 16, 24 or multiples of 16 up to 256" if acc.name == "s32" else "multiples of 8 up to 256"
        problems.append(f"block_n {block_n} is not a valid wgmma N for {acc.name} accumulators ({rule})")
    k = wgmma_k(a_type)
    if block_k % k:
        problems.append(f"block_k {block_k} is not a multiple of the instruction K {k} for {dtype(a_type).name}")
    if consumers in (1, 2):
        regs = accumulator_registers(block_m, block_n, consumers, acc)
        if regs > max_regs_per_consumer - 16:
            problems.append(f"accumulators need {regs} registers per thread > {max_regs_per_consumer} - 16")
    budget = smem_budget(block_m, block_n, block_k, a_type, b_type, epilogue_bytes, stage_extra=stage_extra,
                         static_extra=static_extra)
    want = 2 if stages is None else stages
    if budget.total(want) > SMEM_PER_BLOCK:
        problems.append(f"smem: {want} stages need {budget.total(want)} bytes > {SMEM_PER_BLOCK}")
    cl = tuple(cluster) + (1,) * (3 - len(tuple(cluster)))
    if it.product(cl) > 8:
        problems.append(f"cluster {cl} has {it.product(cl)} CTAs > 8 (portable limit)")
    if any(c < 1 or c & (c - 1) for c in cl):
        problems.append(f"cluster dims {cl} must be powers of two")
    return problems
