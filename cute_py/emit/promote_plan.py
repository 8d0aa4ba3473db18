"""The facts of a promoting mainloop (fp8 with blockwise scales, or without fast accumulation).

Each K tile's products are summed by wgmma into a second accumulator set,
``part``, and then added (scaled, for blockwise scales) into the f32
accumulators. Two full sets of a wide tile do not fit in a thread's
registers, so the K tile is issued in column chunks (``GemmSpec.promote_chunk``):
``part`` holds one chunk (a 64 x ``n`` wgmma), and chunk ``h`` covers the tile's
columns ``[h n, (h + 1) n)``. Derived and checked here:

- the chunk's wgmma atom; in the GMMA C TV layouts, value ``v`` of the chunk
  atom lies where value ``h * values + v`` of the whole tile's atom lies,
  ``h * n`` columns on (so ``acc[mb][h * values + v] += part[mb][v]``);
- the B descriptor of an ``n``-row slice of B's stage tile, equal to the
  tile's but for its slice offsets ``desc.offset(h, j)``;
- with blockwise scales, each chunk lies in one 128-column scale block, or the chunk is the whole tile and
  touches at most two (``straddles``: 128-row tiles of 48, 80, 96, 112 or 144 columns; with one consumer
  warpgroup 160 too); then each value takes the scale of its column's block;
- with blockwise scales, the TMA parameters of ``scale_a`` (``sa_tma``): one box of the tile's BM rows at one K
  block per stage, ``(M, KB):(1, sa_k)`` (a batch's ``(M, KB, L):(1, sa_k, sa_l)``), into the stage's scale slot.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> pp = gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 192, 128))).promotion
>>> pp.n, pp.chunks, pp.values, [pp.b_offset(h, 1) for h in range(pp.chunks)]
(64, 3, 32, [2, 514, 1026])
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.sm90 import GmmaDescriptor, TmaParams, make_gmma_desc, make_tma_params
from ..atoms import MMAAtom, gmma
from ..layouts import Layout
from ..layouts.parse import parse
from ..layouts.offsets import layout_offsets
from .checks import require
from .grouping import BATCH
from .scaling import SCALE_BLOCK, chunk_straddles, scale_a_pad, scale_blocks_per_tile, scale_tma_type

__all__ = ["PromotePlan", "promote_plan"]


@dataclass(frozen=True)
class PromotePlan:
    """One K tile's wgmma in ``chunks`` column chunks of ``n`` (a ``values``-register ``part`` set each)."""

    n: int                     # columns per chunk
    chunks: int                # BN / n
    values: int                # part registers per m-block: the chunk atom's C values per thread
    atom: MMAAtom              # 64 x n x k wgmma of one chunk
    b_desc: GmmaDescriptor     # B's descriptor for n-row slices of its stage tile
    straddles: bool = False    # blockwise: the one chunk (the tile) may touch two 128-column scale blocks
    sa_tma: TmaParams | None = None   # blockwise: scale_a's box of BM rows at one K block per stage

    @property
    def scale_cols(self) -> int:
        """The ``scale_b`` values a thread reads per K tile: one per chunk, or the two blocks a straddling tile
        touches."""
        return 2 if self.straddles else self.chunks

    def b_offset(self, chunk: int, k_slice: int) -> int:
        """The B descriptor increment of chunk ``chunk`` (its n rows of B) at k-slice ``k_slice``."""
        return self.b_desc.offset(chunk, k_slice)


def promote_plan(spec, atom: MMAAtom, b) -> PromotePlan:
    """The chunking of a promoting spec's K tile; ``atom`` is the tile's wgmma atom, ``b`` B's OperandPlan. Each
    fact is checked when derived (:class:`~cute_py.emit.checks.EmitError`).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> from cute_py.emit.plan import operand_plan
    >>> spec = GemmSpec(dtype="e4m3", scale="tensor", tile=(128, 128, 128))
    >>> promote_plan(spec, gemm_plan(spec).atom, operand_plan(spec, "B")).atom.name
    'SM90_64x128x32_F32E4M3E4M3_SS_TN'
    """
    bn = spec.tile[1]
    n = spec.promote_chunk()
    chunk = gmma(n, spec.acc_dtype, spec.dtype, spec.dtype, a_major=spec.a_major, b_major=spec.b_major)
    values = chunk.regs["c"]
    require(bn % n == 0 and atom.regs["c"] == values * (bn // n), "promote_plan", f"the {bn}-column tile splits "
            f"into chunks of {n} columns and {values} values each", atom=atom.name, chunk=chunk.name)
    straddles = chunk_straddles(spec, n)
    if spec.scale == "block":
        require(SCALE_BLOCK % n == 0 or (n == bn and scale_blocks_per_tile(bn) == 2), "promote_plan", f"a chunk "
                f"of {n} columns lies in one {SCALE_BLOCK}-column scale block, or is the whole tile and touches two",
                tile=spec.tile)
    # value h * values + v of the tile's atom sits where value v of the chunk's does, h * n columns on (the C TV
    # layouts map (thread, value) to m + 64 n)
    whole = layout_offsets(atom.c_layout).reshape(atom.regs["c"], -1)
    part = layout_offsets(chunk.c_layout).reshape(values, -1)
    for h in range(bn // n):
        require((whole[h * values:(h + 1) * values] == part + 64 * n * h).all(), "promote_plan",
                f"chunk {h}'s values are the tile atom's values [{h * values}, {(h + 1) * values}), {h * n} "
                f"columns on", atom=atom.name, chunk=chunk.name)
    b_desc = make_gmma_desc(b.smem, spec.dtype, b.major, mma_mn=n)
    require(b_desc.value == b.desc.value, "promote_plan", "B's chunk descriptor differs from the tile's only in "
            "its slice offsets", tile=hex(b.desc.value), chunk=hex(b_desc.value))
    return PromotePlan(n, bn // n, values, chunk, b_desc, straddles, scale_a_tma(spec))


def scale_a_tma(spec) -> TmaParams | None:
    """The TMA parameters of a blockwise spec's ``scale_a`` (None for other specs): the symbolic M-major layout
    ``(M, KB):(1, sa_k)`` (a batch: ``(M, KB, L):(1, sa_k, sa_l)``) read in boxes of the tile's BM rows at one K
    block (with groups along M, :func:`~cute_py.emit.scaling.scale_a_pad` rows more, the box starting on a 16-byte
    boundary), which land in a stage's scale slot (UE8M0 scales as bytes).

    >>> from cute_py.emit import GemmSpec
    >>> t = scale_a_tma(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))
    >>> t.box_dim, t.global_dim, t.bytes_per_copy
    ((128, 1), (M, KB), 512)
    """
    if spec.scale != "block":
        return None
    bm = spec.tile[0] + scale_a_pad(spec)          # groups along M: the box starts on a 16-byte boundary
    batch = spec.grouping == BATCH                  # the matrices' mode L, one box each
    gmem = parse("(M,KB,L):(1,sa_k,sa_l)" if batch else "(M,KB):(1,sa_k)")
    return make_tma_params(gmem, Layout((bm, 1) + (1,) * batch, (1, 0) + (0,) * batch), scale_tma_type(spec))
