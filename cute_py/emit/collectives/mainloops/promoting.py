"""The promoting mainloop of fp8 GEMMs: each K tile's wgmma sum into a second accumulator set, which is then
added into the f32 accumulators (scaled per block with ``scale='block'``, as DeepSeek-V3's recipe; as they are for
per-tensor and row-wise scales without fast accumulation, whose scales the epilogue applies).

The tensor core's fp8 accumulation keeps about 14 bits and spans one K tile at most here, so long K keeps full
f32 accuracy. A K tile is issued in column chunks (:mod:`cute_py.emit.promote_plan`) when the whole tile's
partial sums would not fit beside the accumulators; chunk ``h``'s wgmma run into ``part``, the warpgroup waits for
them and adds the sums. Two consumer warpgroups overlap one's promotion with the other's wgmma as far as the
hardware interleaves them (benchmarks/NOTES.md, version 6: a second buffer of 64-column chunks, or the
warpgroups taking turns by named barriers, measured no faster). With blockwise scales
(:mod:`cute_py.emit.blockscale`), a K tile's scale_a values arrive in its stage's scale slot, read when the stage
is full and before its wgmma are issued; scale_b's of the next K tile are loaded while this one runs.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> from cute_py.emit.collectives.schedulers import TileScheduler
>>> p = gemm_plan(GemmSpec(dtype="e4m3", scale="tensor", tile=(128, 128, 128)))
>>> "acc[mb][0 + v] += part[mb][v];" in Promoting(p, TileScheduler(p)).loop()
True
"""

from __future__ import annotations

from ...blockscale import block_scales_init, scale_loads
from ...scaling import SCALE_BLOCK, SCALE_SLOT_ALIGN, scale_a_pad, scale_ctype, scale_read
from ..base import tile_row
from .warpspecialized import WarpSpecialized, stage_head, wgmma_calls

__all__ = ["Promoting"]


class Promoting(WarpSpecialized):
    """The warp-specialized mainloop with a second accumulator set per K tile, promoted into f32."""

    name = "promoting"

    def atoms(self) -> list:
        return [self.p.atom, self.p.promotion.atom]

    def consumer_setup(self) -> str:
        return super().consumer_setup() + block_scales_init(self.p)

    def shared(self) -> str:
        """With blockwise scales, the stages' scale slots, where TMA lands a K tile's scale_a values."""
        if self.p.scale != "block":
            return ""
        return (f"  __shared__ __align__({SCALE_SLOT_ALIGN}) {scale_ctype(self.p.spec)} scale_smem[kStages * kScaleSlot];"
                f"   // stage s's scale_a values\n")

    def extra_args(self) -> list:
        """The blockwise scales: scale_b (a group's at its offset), the stages' scale slots, the thread's first
        row in its slot (the tile's row; with groups along M, plus the rows the slot holds before the tile) and the
        tile's first column; then the ping-pong hand-off."""
        if self.p.scale != "block":
            return super().extra_args()
        c = self.scheduler.coords("wk")
        sc = f"{{sc.b + {c['l']} * sb_l, sc.b_k, sc.b_n, sc.N}}" if c["l"] else "sc"
        row = "acc_m_thread(mt)"
        if scale_a_pad(self.p.spec):            # the slot starts at the tile's first row rounded down (producer)
            row += f" + ({tile_row(c, 'wk')}) % kScaleAPad"
        return [("const ScaleB& sc", sc), (f"const {scale_ctype(self.p.spec)}* slots", "scale_smem"),
                ("int row", row), ("int n0", "wk.n_tile * kBN")] + super().extra_args()

    def head(self) -> str:
        """The constants of a promoting mainloop."""
        p, pp = self.p, self.p.promotion
        block = p.scale == "block"
        what = ("scaled by scale_a[m, kb] * scale_b[kb, n / 128]" if block else
                "as they are (the epilogue applies the scales)")
        straddle = (f"constexpr int kScaleBlock = {SCALE_BLOCK};                 // scale_b's block along N\n"
                    if block and pp.straddles else "")
        return f"""
// ---- promoting mainloop: each K tile is summed by wgmma in {pp.chunks} chunk(s) of {pp.n} columns ({pp.atom.name})
//      into `part` (scale-d 0 on each chunk's first k-slice); a chunk's sums are then added
//      into the f32 accumulators {what}:
//      the tensor core's fp8 accumulation spans one K tile at most ----
{straddle}constexpr int kPartPerBlock = {pp.values};       // part registers per m-block: one chunk's accumulators
"""

    def device(self) -> str:
        """With blockwise scales, their constants and loads first: the producer lands scale_a in the slots."""
        return (scale_loads(self.p) if self.p.scale == "block" else "") + super().device()

    def _promote(self, h: int, ind: str) -> list:
        """The lines adding chunk ``h``'s sums in ``part`` into the accumulators."""
        pp = self.p.promotion
        col = f"{h * pp.values} + v"
        scale = (f"ab[{h}][mb][scale_slot(v)]" if not pp.straddles else
                 "(scale_col8(v) < nb8 ? ab[0][mb][scale_slot(v)] : ab[1][mb][scale_slot(v)])")
        add = (f"acc[mb][{col}] = fmaf(part[mb][v], {scale}, acc[mb][{col}]);"
               if self.p.scale == "block" else f"acc[mb][{col}] += part[mb][v];")
        return ["#pragma unroll", f"{ind}for (int mb = 0; mb < kMBlocks; ++mb)", "#pragma unroll",
                f"{ind}  for (int v = 0; v < kPartPerBlock; ++v) {add}"]

    def _scale_products(self, ind: str) -> list:
        """``ab``: this K tile's scale_a (from the stage's slot) * scale_b per row and scale_b value (a chunk's,
        or a straddling tile's block's); then the next K tile's scale_b loads."""
        spec = self.p.spec
        sa = scale_read(spec, "ss[row + mb * kTvRows + r * kScaleRowStep]")
        return [f"{ind}// this K tile's scale_a * scale_b: scale_a from stage s's slot, read before the wgmma issue",
                f"{ind}const {scale_ctype(spec)}* ss = slots + s * kScaleSlot;",
                f"{ind}float ab[kScaleCols][kMBlocks][kScaleRows];",
                "#pragma unroll", f"{ind}for (int c = 0; c < kScaleCols; ++c)", "#pragma unroll",
                f"{ind}  for (int mb = 0; mb < kMBlocks; ++mb)", "#pragma unroll",
                f"{ind}    for (int r = 0; r < kScaleRows; ++r) ab[c][mb][r] = {sa} * {scale_read(spec, 'sb[c]')};",
                f"{ind}// the next K tile's scale_b: in flight during this K tile, used by the next",
                f"{ind}if (kb + 1 < kb1) load_scale_b(sc, n0, kb + 1, sb);"]

    def loop(self) -> str:
        """``mainloop``: for each K tile and chunk, the chunk's wgmma into ``part``, a wait for them, the
        promotion; the accumulators start at zero (a unit with no k-block contributes zeros)."""
        p, pp = self.p, self.p.promotion
        block = p.scale == "block"
        ind = "      "
        body = self._scale_products(ind) if block else []
        for h in range(pp.chunks):
            body.append(f"{ind}// ---- chunk {h}: columns [{h * pp.n}, {(h + 1) * pp.n}) ----")
            body += [f"{ind}wgmma_fence();", wgmma_calls(p, "part", "0", h), f"{ind}wgmma_commit();"]
            body.append(f"{ind}wgmma_wait<0>();                                 // chunk {h}'s sums are in part")
            if h == pp.chunks - 1:
                body.append(f"{ind}ring.release(s);")
            body += self._promote(h, ind)
        first_scales = (f"\n    {scale_ctype(p.spec)} sb[kScaleCols];                   // the next K tile's scale_b"
                        "\n    load_scale_b(sc, n0, kb0, sb);") if block else ""
        if block and pp.straddles:
            first_scales += ("\n    const int nb8 = (kScaleBlock - n0 % kScaleBlock) / 8;   // the tile's 8-column "
                             "groups in its first scale block")
        body_text = "\n".join(body)
        where = ("; slots: the stages' scale_a values, row: the thread's first row in the tile, n0: the tile's "
                 "first column") if block else ""
        return self.head() + f"""// k-blocks [kb0, kb1) of one tile{where}
{self.signature()} {{
  float part[kMBlocks][kPartPerBlock];
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int v = 0; v < kAccPerBlock; ++v) acc[mb][v] = 0.0f;
  if (kb0 < kb1) {{{first_scales}
    for (int kb = kb0; kb < kb1; ++kb, ++ps.count) {{
{stage_head("      ")}
{body_text}
    }}
  }}{self.handoff()}
}}
"""
