"""Split-K: each cluster tile is ``kSplitK`` work units, split ``s`` taking k-blocks ``[s KT / kSplitK, (s + 1)
KT / kSplitK)``; the partial tiles meet in an f32 workspace and the split that arrives last adds the others.

The fixup (:func:`partials_fixup`, shared with stream-K): slot ``(split, tile)`` of the workspace holds one partial
tile as ``[value / 4][tile thread][4]`` f32 (coalesced 16-byte stores). Each split stores its slot, then counts
itself in on the tile's counter (acq_rel, after a gpu-scope fence); the split that arrives last adds the other
slots to its accumulators, resets the counter to zero for the next launch and runs the epilogue. No CTA waits for
another, so no schedule of the CTAs can deadlock.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> s = SplitKScheduler(gemm_plan(GemmSpec(split_k=2)))
>>> "kSplitK = 2" in s.device(), s.fixup().strip().startswith("if (!fixup_split")
(True, True)
"""

from __future__ import annotations

from ...params import KernelParam
from ....layouts.int_tuple import ceil_div
from .tile import TileScheduler

__all__ = ["PartialTiles", "SplitKScheduler", "partials_fixup", "FIXUP_PARAMS"]

FIXUP_PARAMS = (KernelParam("ws", "pointer", "float"), KernelParam("counters", "pointer", "int"))
"""The workspace of partial tiles and the per-tile arrival counters (both zero-initialized once: the counters
return to zero after every launch)."""


def partials_fixup(p) -> str:
    """The device code shared by the schedulers that split a tile's K among CTAs: the fixup's thread count, the
    workspace slot layout, and ``reduce_partials`` (store this part, count in, and if last add the others)."""
    return f"""
// ---- partial tiles: slot j of the workspace holds one partial tile as [value/4][tile thread][4] f32 (coalesced
//      16-byte stores). A part stores its slot and counts itself in on the tile's counter (acq_rel, after a
//      gpu-scope fence); the part that arrives last adds the other slots to its accumulators, resets the counter
//      for the next launch and goes on to the epilogue. No CTA waits for another. ----
constexpr int kFixupThreads = {p.tile_warpgroups} * kWarpGroupThreads;   // the threads holding one tile's accumulators
constexpr int kTileFloats = kMBlocks * kAccPerBlock * kFixupThreads;
__device__ __forceinline__ long long slot_index(int mb, int v, int t) {{
  return (long long)(((mb * kAccPerBlock + v) / 4) * kFixupThreads + t) * 4;
}}
// thread t of tile group g (barrier kBarFixup + g); `mine`: this part's slot; `parts` of the tile in all, their slots slot(j) for j != part; true if this part is
// the last to arrive (its accumulators then hold the whole tile)
template <typename Slot>
__device__ __forceinline__ bool reduce_partials(float (&acc)[kMBlocks][kAccPerBlock], int t, int g, float* ws,
                                                int* counter, long long mine, int part, int parts, Slot slot,
                                                volatile int* flag) {{
  float* out = ws + mine * kTileFloats;
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int v = 0; v < kAccPerBlock; v += 4)
      st_v4(out + slot_index(mb, v, t), acc[mb][v], acc[mb][v + 1], acc[mb][v + 2], acc[mb][v + 3]);
  fence_gpu();
  named_bar_sync(kBarFixup + g, kFixupThreads);
  if (t == 0) *flag = atom_add_acq_rel(counter, 1);
  named_bar_sync(kBarFixup + g, kFixupThreads);
  if (*flag != parts - 1) return false;
  fence_gpu();
  for (int j = 0; j < parts; ++j) {{
    if (j == part) continue;
    const float* other = ws + slot(j) * kTileFloats;
#pragma unroll
    for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
      for (int v = 0; v < kAccPerBlock; v += 4) {{
        float x0, x1, x2, x3;
        ld_v4_gpu(other + slot_index(mb, v, t), x0, x1, x2, x3);
        acc[mb][v] += x0; acc[mb][v + 1] += x1; acc[mb][v + 2] += x2; acc[mb][v + 3] += x3;
      }}
  }}
  if (t == 0) st_relaxed_s32(counter, 0);
  return true;
}}
"""


class PartialTiles(TileScheduler):
    """What the schedulers that share a tile's K among CTAs have in common: the workspace and counters, the fixup
    barrier (one id per tile group: both cooperating consumers, or each ping-pong consumer), the shared arrival
    counts, :func:`partials_fixup`, and the consumer's call of the subclass's fixup function ``fixup_fn``."""

    args = ("M", "N", "K", "ws", "counters")
    may_be_empty = True                   # a unit with no k-block contributes zeros
    fixup_fn = ""
    """The C name of the subclass's fixup function (printed by its ``fixup_device``)."""

    @classmethod
    def params(cls, spec) -> tuple:
        return FIXUP_PARAMS

    @classmethod
    def barriers(cls, spec) -> dict:
        return {"kBarFixup": 2 if spec.schedule == "pingpong" else 1}

    def wrappers(self) -> tuple:
        return ("splitk",)

    def walk_state(self) -> list:
        """The subclass's walk state, between the tile scheduler's and the workspace's."""
        return []

    def state(self) -> list:
        return super().state() + self.walk_state() + [("float*", "ws", "ws"), ("int*", "counters", "counters")]

    def extra(self) -> str:
        return partials_fixup(self.p)

    def shared(self) -> str:
        n = 2 if self.p.pingpong else 1
        return f"  __shared__ int fixup_flag[{n}];                     // the arrival count a tile group saw\n"

    def fixup(self) -> str:
        g = "w" if self.p.pingpong else "0"              # the thread's tile group
        return (f"      if (!{self.fixup_fn}(acc, mt, {g}, sched, wk, fixup_flag + {g}))\n"
                f"        continue;                                  // another part finishes this tile\n")


class SplitKScheduler(PartialTiles):
    """``split_k`` units per cluster tile, each a contiguous share of the k-blocks; partial tiles fixed up (more
    splits than k-blocks: a split with none contributes zeros)."""

    name = "split_k"
    fixup_fn = "fixup_split"

    @classmethod
    def implied_by(cls, spec) -> bool:
        return spec.grouping is None and spec.split_k > 1

    @classmethod
    def problems(cls, spec) -> list:
        return [] if spec.persistent else [f"split_k = {spec.split_k} needs persistent = True"]

    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1, tile, split;"

    def next_body(self) -> str:
        return "    const bool ok = unit < units * kSplitK;", """    const int split = unit % kSplitK;
    place(unit / kSplitK, num_m, num_n, rank, w);
    w.split = split;
    w.kb0 = split * k_tiles / kSplitK;
    w.kb1 = (split + 1) * k_tiles / kSplitK;
    w.tile = w.m_tile * (((num_n + kClusterN - 1) / kClusterN) * kClusterN) + w.n_tile;   // its workspace slot"""

    def header(self) -> str:
        return (super().header() + f"// ---- split-K: {self.p.split_k} units per cluster tile, split s takes "
                f"k-blocks [s KT / kSplitK, (s + 1) KT / kSplitK) ----\n"
                f"constexpr int kSplitK = {self.p.split_k};\n")

    def extra(self) -> str:
        return super().extra() + """// tiles of the workspace (the cluster tiles, whole clusters)
__device__ __forceinline__ int padded_tiles(int num_m, int num_n) {
  return ((num_m + kClusterM - 1) / kClusterM) * kClusterM * ((num_n + kClusterN - 1) / kClusterN) * kClusterN;
}
"""

    def fixup_device(self) -> str:
        return """// split s of tile `tile` owns slot s * tiles + tile; the splits of a tile are its parts
__device__ __forceinline__ bool fixup_split(float (&acc)[kMBlocks][kAccPerBlock], int t, int g, const Scheduler& s,
                                            const Work& wk, volatile int* flag) {
  const int tiles = padded_tiles(s.num_m, s.num_n);
  return reduce_partials(acc, t, g, s.ws, s.counters + wk.tile, (long long)wk.split * tiles + wk.tile, wk.split,
                         kSplitK, [&](int j) { return (long long)j * tiles + wk.tile; }, flag);
}
"""

    @classmethod
    def units(cls, plan, M: int, N: int, L: int) -> int:
        return super().units(plan, M, N, L) * plan.split_k

    @classmethod
    def workspace(cls, plan, M: int, N: int, K: int, ctas: int) -> tuple:
        bm, bn, _ = plan.tile
        cm, cn = plan.cluster
        tiles = ceil_div(M, bm * cm) * cm * ceil_div(N, bn * cn) * cn
        return tiles * bm * bn * plan.split_k, tiles
