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
from .tile import TileScheduler

__all__ = ["PartialTiles", "SplitK", "split_k_of", "SplitKScheduler", "partials_fixup", "FIXUP_PARAMS"]

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
        return super().params(spec) + FIXUP_PARAMS

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


class SplitK(PartialTiles):
    """``split_k`` units per cluster tile of the scheduler it is mixed into (:func:`split_k_of`), each a
    contiguous share of the tile's k-blocks; partial tiles fixed up (more splits than k-blocks: a split with none
    contributes zeros). Unit ``u`` is split ``u % kSplitK`` of the base scheduler's unit ``u / kSplitK``, so a
    group's tiles (and a ragged group's K) split as one GEMM's do. The base numbers its CTA tiles
    (:meth:`~.tile.TileScheduler.tile_slot`) and lays out their splits' workspace slots
    (:meth:`~.tile.TileScheduler.slot_layout`)."""

    family = "split_k"
    fixup_fn = "fixup_split"

    @classmethod
    def implied_by(cls, spec) -> bool:
        return cls.walks(spec) and spec.split_k > 1

    def work_fields(self) -> str:
        return f"{super().work_fields()} int tile, split;"

    def next_body(self, unit: str = "unit") -> tuple:
        ok, fill = super().next_body("tile_unit")
        return self.head(unit, ok), fill + f"""
    w.split = split;
    w.tile = {self.tile_slot("tile_unit")};   // the tile's workspace slots and counter
    const int kb = w.kb0, kt = w.kb1 - w.kb0;            // the unit's share of the tile's k-blocks
    w.kb0 = kb + split * kt / kSplitK;
    w.kb1 = kb + (split + 1) * kt / kSplitK;"""

    def head(self, unit: str, ok: str) -> str:
        """The lines defining ``ok``: the base unit ``tile_unit`` and the split of ``unit``, then the base
        scheduler's ``ok`` on ``tile_unit``."""
        return f"    const int tile_unit = {unit} / kSplitK, split = {unit} % kSplitK;   // split of base unit\n" + ok

    def header(self) -> str:
        return (super().header() + f"// ---- split-K: {self.p.split_k} units per cluster tile, split s takes "
                f"k-blocks [s KT / kSplitK, (s + 1) KT / kSplitK) ----\n"
                f"constexpr int kSplitK = {self.p.split_k};\n")

    def fixup_device(self) -> str:
        line, slot = self.slot_layout()
        return super().fixup_device() + f"""// split j of CTA tile `tile` owns slot {slot.format(j="j")}; the splits of a tile are its parts
__device__ __forceinline__ bool fixup_split(float (&acc)[kMBlocks][kAccPerBlock], int t, int g, const Scheduler& s,
                                            const Work& wk, volatile int* flag) {{
  {line}
  return reduce_partials(acc, t, g, s.ws, s.counters + wk.tile, {slot.format(j="wk.split")}, wk.split, kSplitK,
                         [&](int j) {{ return {slot.format(j="j")}; }}, flag);
}}
"""

    @classmethod
    def units(cls, plan, M: int, N: int, L: int) -> int:
        return super().units(plan, M, N, L) * plan.split_k

    @classmethod
    def workspace(cls, plan, units: int, ctas: int) -> tuple:
        """``split_k`` partial tiles and a counter per CTA tile (``units / split_k`` cluster tiles)."""
        bm, bn, _ = plan.tile
        tiles = units // plan.split_k * plan.cluster_size
        return tiles * plan.split_k * bm * bn, tiles


def split_k_of(base):
    """The split-K scheduler over ``base`` (a scheduler class whose units are whole tiles): named
    ``"split_k"`` over the tile scheduler, ``"split_k_<base name>"`` over another."""
    name = "split_k" if base is TileScheduler else f"split_k_{base.name}"
    return type(f"SplitK{base.__name__}", (SplitK, base),
                {"name": name, "args": base.args + ("ws", "counters"), "__doc__": SplitK.__doc__})


class SplitKScheduler(split_k_of(TileScheduler)):
    __doc__ = SplitK.__doc__

    def head(self, unit: str, ok: str) -> str:
        """The tile scheduler's ``ok`` (``tile_unit < units``) asked of ``unit`` directly: the same test, but
        ptxas then allocates the split-K ping-pong kernel without spilling (12 bytes otherwise; the text of
        :meth:`SplitK.head` is kept for the group schedulers, which compile without spills)."""
        return (f"    const bool ok = {unit} < units * kSplitK;\n"
                f"    const int tile_unit = {unit} / kSplitK, split = {unit} % kSplitK;   // split of base unit")
