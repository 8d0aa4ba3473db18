"""The TMA warp-specialized mainloop (SS: both operands from shared memory by wgmma descriptors): the producer
fills the ring (:mod:`.producer`), the consumer warpgroups wait for each stage, issue wgmma on its descriptors
and release it once the wgmma that read it have retired.

Two consumer arrangements: *cooperative* (the consumer warpgroups split each tile's BM rows, 64 x ``kMBlocks``
rows each) and *ping-pong* (two warpgroups own whole tiles in turn: while one runs its epilogue the other's
mainloop has the tensor cores; a warpgroup waits on named barrier ``kBarPingPong + w`` for the other's mainloop
to finish, and arrives on the other's once its own wgmma are issued).

C interface: ``void mainloop(float (&acc)[kMBlocks][kAccPerBlock], int w, const Ring& ring, PipelineState& ps,
int kb0, int kb1, ...)``, the k-blocks ``[kb0, kb1)`` of one tile into ``acc`` (the first k-slice
overwrites it); the extra arguments (:meth:`WarpSpecialized.extra_args`) are printed from the same list as the
definition's parameters.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> p = gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))
>>> wgmma_calls(p, "part", "0", 0).splitlines()[0][:58]
'      wgmma_m64n128k32(part[0], da + (w == 0 ? 0ull : 512u'
"""

from __future__ import annotations

from ...grouping import BATCH, carries_group_mode
from ...params import SCALE_STRIDES, KernelParam
from ...scaling import scale_ctype
from ..base import Collective
from .producer import Producer

__all__ = ["WarpSpecialized", "wgmma_calls", "stage_head"]


def _hex(x: int) -> str:
    return f"0x{x:016x}ull"


def wgmma_calls(p, acc: str, first: str, chunk: int | None = None) -> str:
    """The wgmma of one stage: every (k-slice, m-block) into accumulators ``acc``, the first k-slice with scale-d
    ``first`` (0 overwrites, 1 accumulates), each with its descriptor increments; ``chunk``: only that column
    chunk of a promoting mainloop (:mod:`cute_py.emit.promote_plan`)."""
    pp = p.promotion if chunk is not None else None
    bn = pp.n if pp else p.tile[1]
    b_off = (lambda j: pp.b_offset(chunk, j)) if pp else (lambda j: p.b.desc_offset(0, j))
    k = p.atom.shape_mnk[2]
    tw = p.tile_warpgroups
    calls = []
    for j in range(p.k_slices):
        for mb in range(p.m_blocks):
            # tile warpgroup w (of C = tile_warpgroups), m-block mb covers rows mb * (64 C) + 64 w: A slice (mb * C + w)
            offs = [p.a.desc_offset(mb * tw + w, j) for w in range(tw)]
            a_off = f"{offs[0]}ull" if tw == 1 else f"(w == 0 ? {offs[0]}ull : {offs[1]}ull)"
            scale = first if j == 0 else "1"
            calls.append(f"      wgmma_m64n{bn}k{k}({acc}[{mb}], da + {a_off}, db + {b_off(j)}ull, {scale});"
                         f"   // k-slice {j}, m-block {mb}: A +({' '.join(map(str, offs))}), B +{b_off(j)}")
    return "\n".join(calls)


def stage_head(ind: str) -> str:
    """A consumer's wait for ring stage ``ps.stage()`` to be full, and the stage's A and B descriptors ``da``,
    ``db``; lines indented by ``ind``.

    >>> print(stage_head("").splitlines()[2])
    ring.wait(ps);
    """
    return "\n".join(ind + line for line in (
        "const int s = ps.stage();", "const u32 stage = ring.stage(s);", "ring.wait(ps);",
        "const u64 da = kDescA + desc_start(stage + kOffA);", "const u64 db = kDescB + desc_start(stage + kOffB);"))


class WarpSpecialized(Collective):
    """One producer warpgroup (TMA or its own loads), 1 or 2 consumer warpgroups issuing wgmma from smem."""

    kind = "mainloop"
    name = "tma_ws"

    def __init__(self, plan, scheduler):
        super().__init__(plan)
        self.scheduler = scheduler
        self.producer = Producer(plan, scheduler.coords())

    @classmethod
    def params(cls, spec) -> tuple:
        """Per operand its tensor map, or (read by the producer threads) a pointer and a leading dimension; the
        fp8 scales and their element strides (with groups, scale_b's group stride; in a batch, scale_a's too);
        blockwise: scale_a's tensor map instead of its pointer and strides."""
        rows = []
        for x, load in (("a", spec.load_a), ("b", spec.load_b)):
            rows += ([KernelParam(x, "pointer", "const u8"), KernelParam(f"ld_{x}", "s64")] if load else
                     [KernelParam(f"tma_{x}", "tensormap")])
            rows += [KernelParam(f"ld_{x}l", "s64")] if load and carries_group_mode(spec, x) else []  # group stride
        t = f"const {scale_ctype(spec)}"
        if spec.scale == "block":               # scale_a by TMA into each stage's slot; scale_b read per K tile
            rows += [KernelParam("tma_sa", "tensormap"), KernelParam("scale_b", "pointer", t)]
            rows += [KernelParam(n, "s64") for n in SCALE_STRIDES[2:]]
            rows += [KernelParam("sb_l", "s64")] if spec.grouping else []
        elif spec.scale:
            rows += [KernelParam("scale_a", "pointer", t), KernelParam("scale_b", "pointer", t)]
            rows += [KernelParam(n, "s64") for n in SCALE_STRIDES]
            rows += [KernelParam("sa_l", "s64")] if spec.grouping == BATCH else []   # a batch's scale_a stride
            rows += [KernelParam("sb_l", "s64")] if spec.grouping else []
        return tuple(rows)

    @classmethod
    def barriers(cls, spec) -> dict:
        return {"kBarPingPong": 2} if spec.schedule == "pingpong" else {}

    def wrappers(self) -> tuple:
        sa = self.p.promotion.sa_tma if self.p.promotion else None
        ranks = [op.tma.rank for op in (self.p.a, self.p.b) if not op.load] + ([sa.rank] if sa else [])
        return ("tma_3d",) if 3 in ranks else ()

    # -- the consumer arrangement -------------------------------------------------------------------------------
    def thread_in_tile(self) -> str:
        """``mt``'s initializer and comment: the consumer thread's index in its tile's C TV layout."""
        if self.p.pingpong:
            return "t - kWarpGroupThreads * w;          // thread within the tile: each warpgroup owns whole tiles"
        return "t;                                  // thread within the tile: the consumers split its rows"

    def consumer_setup(self) -> str:
        """The consumer role's setup lines after ``w`` and ``t``: its place in the tile (and its turn counter)."""
        turn = "    int turn = 0;                                       // units seen: ping-pong takes every other\n" \
            if self.p.pingpong else ""
        return f"    const int mt = {self.thread_in_tile()}\n{turn}"

    def turn(self) -> str:
        """Per work unit, before the mainloop: a ping-pong warpgroup skips the other's units."""
        if not self.p.pingpong:
            return ""
        return ("      if ((turn++ & 1) != w) {                        // the other warpgroup's tile: step over its "
                "k-blocks\n        ps.count += wk.kb1 - wk.kb0;\n        continue;\n      }\n"
                "      // the other warpgroup's mainloop (its previous unit) is done\n"
                "      if (turn > 1) named_bar_sync(kBarPingPong + w, 2 * kWarpGroupThreads);\n")

    def handoff(self) -> str:
        if not self.p.pingpong:
            return ""
        return ("\n  // ping-pong: the other warpgroup (barrier kBarPingPong + its w) issues its tile while ours drain"
                "\n  if (hand_off) named_bar_arrive(kBarPingPong + (1 - w), 2 * kWarpGroupThreads);")

    # -- the mainloop's interface -------------------------------------------------------------------------------
    def extra_args(self) -> list:
        """``(C parameter, argument)`` pairs of ``mainloop`` after ``kb1``: the ping-pong hand-off."""
        return [("bool hand_off", "sched.more()")] if self.p.pingpong else []

    def compute(self) -> str:
        """The consumer's lines per work unit ``wk``: the turn, then the mainloop over its k-blocks."""
        args = "".join(", " + a for _, a in self.extra_args())
        return (f"{self.turn()}      // ---- consumer::compute: the unit's k-blocks ----\n"
                f"      mainloop(acc, w, ring, ps, wk.kb0, wk.kb1{args});\n")

    def signature(self) -> str:
        params = "".join(", " + p for p, _ in self.extra_args())
        return ("__device__ __forceinline__ void mainloop(float (&acc)[kMBlocks][kAccPerBlock], int w, const Ring& "
                f"ring,\n                                         PipelineState& ps, int kb0, int kb1{params})")

    def empty_fix(self) -> str:
        if not self.scheduler.may_be_empty:
            return ""
        return """
  if (kb0 == kb1) {                                      // a unit with no k-block contributes zeros
#pragma unroll
    for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
      for (int v = 0; v < kAccPerBlock; ++v) acc[mb][v] = 0.0f;
  }"""

    def loop(self) -> str:
        """The mainloop: one accumulator set, a stage released once the wgmma of the next has been issued."""
        return f"""
// k-blocks [kb0, kb1) of one tile; the first k-slice overwrites the accumulators (scale-d 0)
{self.signature()} {{{self.empty_fix()}
  for (int kb = kb0; kb < kb1; ++kb, ++ps.count) {{
{stage_head("    ")}
    wgmma_fence();
{wgmma_calls(self.p, "acc", "kb != kb0")}
    wgmma_commit();
    wgmma_wait<1>();                                    // the wgmma of the previous k-block has retired
    if (kb > kb0) ring.release(ps.stage_before());
  }}{self.handoff()}
  wgmma_wait<0>();
  if (kb1 > kb0) ring.release(ps.stage_before());
}}
"""

    def device(self) -> str:
        a, b = self.p.a, self.p.b
        return self.producer.device() + f"""
// ---- consumer warpgroups: wgmma from smem descriptors ----
// A descriptor {_hex(a.desc.value)}: {a.desc}
//   from {a.smem}; slice (mn, k) increments = desc.offset(mn, k), k: {a.desc.k_layout}, mn: {a.desc.mn_layout}
// B descriptor {_hex(b.desc.value)}: {b.desc}
//   from {b.smem}; k increments {b.desc.k_layout}
// descriptor start address = (stage smem address >> 4), added to the base value (base_offset 0: 1024-aligned stages)
constexpr u64 kDescA = {_hex(a.desc.value)};
constexpr u64 kDescB = {_hex(b.desc.value)};
// the start-address field of a descriptor: bits [4, 18) of the smem byte address, in 16-byte units (14 bits)
__device__ __forceinline__ u64 desc_start(u32 addr) {{ return (u64)((addr & 0x3FFFFu) >> 4); }}
{self.loop()}"""

    def atoms(self) -> list:
        """The GMMA atoms its wgmma issue (one wrapper each)."""
        return [self.p.atom]

