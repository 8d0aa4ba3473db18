"""One GEMM operand's stage tile in shared memory, and every reason it cannot exist.

The emitter plans A and B with :func:`operand_tile` (then the wgmma descriptor
and the TMA parameters of the tile); a spec's validation asks
:func:`operand_problems` the same questions without planning, so the two agree on
which tiles exist.

>>> from cute_py import parse
>>> print(operand_tile("K", "bf16", 128, 64))
Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))
>>> operand_problems(parse("(M,K):(K,1)"), "K", "bf16", 128, 64, mma_mn=64)
[]
>>> operand_problems(parse("(M,K):(K,1)"), "K", "bf16", 128, 32, mma_mn=64, swizzle=128)[0].split(":")[0]
'tile_to_shape'
"""

from __future__ import annotations

from ...layouts.errors import LayoutError
from .gmma_desc import make_gmma_desc
from .smem import select_smem_atom, smem_atom, tile_smem
from .tma import validate_tma

__all__ = ["operand_atom", "operand_tile", "operand_problems"]


def operand_atom(major: str, dtype_, block_mn: int, block_k: int, swizzle: int | None = None):
    """The canonical GMMA smem atom of ``major`` for a ``block_mn x block_k`` tile: the largest that fits the
    block, or the one of ``swizzle`` bytes. Raises a LayoutError subclass when there is none."""
    return select_smem_atom(major, dtype_, block_mn, block_k) if swizzle is None else smem_atom(major, swizzle, dtype_)


def operand_tile(major: str, dtype_, block_mn: int, block_k: int, swizzle: int | None = None):
    """The ``(MN, K)`` stage tile: :func:`operand_atom` tiled to ``block_mn x block_k``. Raises a LayoutError
    subclass when the atom does not exist or does not tile the block."""
    return tile_smem(operand_atom(major, dtype_, block_mn, block_k, swizzle), block_mn, block_k, major=major)


def operand_problems(gmem, major: str, dtype_, block_mn: int, block_k: int, *, mma_mn: int, multicast: int = 1,
                     swizzle: int | None = None) -> list:
    """Why no kernel can load this operand (empty: it can): no smem atom tiles the block, no wgmma descriptor
    describes the tile for slices of ``mma_mn`` rows, or the TMA copy of ``gmem`` tiles into it breaks a rule
    (split over ``multicast`` CTAs)."""
    try:
        smem = operand_tile(major, dtype_, block_mn, block_k, swizzle)
        make_gmma_desc(smem, dtype_, major, mma_mn=mma_mn)
    except LayoutError as e:
        return [str(e)]
    return [f"TMA: {p}" for p in validate_tma(gmem, smem, dtype_, multicast=multicast)]
