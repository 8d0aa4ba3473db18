"""The pipeline: the shared-memory ring of stages between the producer and the consumers, its full and empty
mbarriers, and ``PipelineState``, the one place the stage and phase arithmetic is written.

Stage ``s`` of the ring holds one k-block's A and B tiles (each 1024-byte aligned, as the wgmma descriptors'
``base_offset`` 0 needs). Its *full* barrier completes a phase when the stage's bytes have landed (the
producer's ``arrive_expect_tx`` plus the TMA transaction bytes; with operands loaded by the producer threads,
their arrivals too); its *empty* barrier when every consumer warp that reads the stage, in every CTA whose
multicast writes into it, has released it. A ``PipelineState`` counts the stages a role has passed since the
kernel began (it runs on across work units): the stage is ``count % kStages`` and the parity of the phase to
wait for ``(count / kStages) & 1``. The producer waits on the empty barrier with the opposite parity, so a
fresh barrier counts as released on the first pass.

C interface: ``struct PipelineState { int count; stage(), phase(), stage_before() }`` and ``struct Ring { u32
base, full, empty; stage(s), full_bar(s), empty_bar(s), acquire(ps) (producer), wait(ps) (consumer),
release(s) (consumer) }``.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> text = Pipeline(gemm_plan(GemmSpec())).device()
>>> "struct PipelineState" in text and "mbar_wait(full_bar(ps.stage()), ps.phase());" in text
True
"""

from __future__ import annotations

from ..cprint import commented
from ..resources import MBARRIER_BYTES
from ...arch.sm90 import SMEM_ALIGN
from .base import Collective

__all__ = ["Pipeline"]


class Pipeline(Collective):
    """The TMA warp-specialized ring: ``stages`` stages of [A tile | B tile] guarded by full/empty mbarriers."""

    kind = "pipeline"
    name = "ring"

    def wrappers(self) -> tuple:
        return ("cluster",) if self.p.cluster_size > 1 else ()

    def full_arrivals(self) -> tuple:
        """``(count, why)``: the arrivals that complete a full barrier's phase."""
        if self.p.a.load or self.p.b.load:
            return "1 + kWarpGroupThreads", "the TMA issue's expect_tx and the producer threads' own copies"
        return "1", "the producer's arrive_expect_tx (TMA delivers the bytes)"

    def device(self) -> str:
        p, a, b = self.p, self.p.a, self.p.b
        release = ("mbar_arrive(bar)" if p.cluster_size == 1 else
                   "for (u32 r = 0; r < kClusterSize; ++r) mbar_arrive_cluster(bar, r)")
        arrivals, why = self.full_arrivals()
        box = p.promotion.sa_tma if p.promotion else None
        sa = f" + scale_a {box.bytes_per_copy} (box {box.box_dim})" if box else ""
        return f"""
// ---- pipeline: a {p.stages}-stage shared-memory ring of [A tile | B tile], each buffer 1024-byte aligned ----
// A stage tile {a.smem}  ({a.bytes} bytes, stage_bytes)
// B stage tile {b.smem}  ({b.bytes} bytes, stage_bytes)
constexpr int kStages = {p.stages};
constexpr u32 kStageBytes = {p.stage_bytes}u;
constexpr u32 kOffA = 0u;
constexpr u32 kOffB = {a.bytes}u;
// TMA bytes landing per stage: A {len(a.copies)} x {a.tma.bytes_per_copy} + B {len(b.copies)} x {b.tma.bytes_per_copy} (box {a.tma.box_dim} / {b.tma.box_dim}){sa}
constexpr u32 kTxBytes = {p.tx_bytes}u;
{commented(f"constexpr u32 kSmemAlign = {SMEM_ALIGN}u;", "SMEM_ALIGN: the ring starts on it (descriptor base_offset 0)")}
{commented(f"constexpr u32 kMbarBytes = {MBARRIER_BYTES}u;", "one mbarrier (64-bit) per stage, full and empty")}
{commented(f"constexpr u32 kFullArrivals = {arrivals};", why)}
{commented(f"constexpr u32 kReaderWarps = {p.empty_arrivals};", "consumer warps reading a stage: their arrivals release it")}
// the stages a role has passed (it runs on across work units): the stage, and the parity of its phase
struct PipelineState {{
  int count;
  __device__ __forceinline__ int stage() const {{ return count % kStages; }}
  __device__ __forceinline__ u32 phase() const {{ return (count / kStages) & 1; }}
  __device__ __forceinline__ int stage_before() const {{ return (count - 1) % kStages; }}   // the last stage passed
}};
struct Ring {{
  u32 base, full, empty;        // shared-window addresses: stage 0, the full barriers, the empty barriers
  __device__ __forceinline__ u32 stage(int s) const {{ return base + s * kStageBytes; }}
  __device__ __forceinline__ u32 full_bar(int s) const {{ return full + kMbarBytes * s; }}
  __device__ __forceinline__ u32 empty_bar(int s) const {{ return empty + kMbarBytes * s; }}
  // producer: until stage ps.stage() is released (on the first pass the fresh barrier counts as released)
  __device__ __forceinline__ void acquire(const PipelineState& ps) const {{ mbar_wait(empty_bar(ps.stage()), ps.phase() ^ 1); }}
  // consumer: until stage ps.stage() is full
  __device__ __forceinline__ void wait(const PipelineState& ps) const {{ mbar_wait(full_bar(ps.stage()), ps.phase()); }}
  // consumer: one arrival per consumer warp on stage s's empty barrier in every CTA that writes into this CTA's
  // stage s
  __device__ __forceinline__ void release(int s) const {{
    if ((threadIdx.x & 31) == 0) {{
      const u32 bar = empty_bar(s);
      {release};
    }}
  }}
}};
"""

    def smem(self) -> list:
        """The ring, and the slack that lets it start on a 1024-byte boundary."""
        p = self.p
        return [(f"{p.stages} stages x {p.stage_bytes} B (the ring)", p.stages * p.stage_bytes),
                (f"{SMEM_ALIGN} B (alignment slack)", SMEM_ALIGN)]

    def rank(self) -> str:
        """The CTA's rank in its cluster (the multicast ring's peers are its cluster)."""
        return "cluster_ctarank()" if self.p.cluster_size > 1 else "0u"

    def sync(self) -> str:
        """After the barriers' initialization: every CTA whose multicast or arrivals reach this one sees it."""
        return "cluster_sync();" if self.p.cluster_size > 1 else "__syncthreads();"

    def finish(self) -> str:
        """The kernel's last line: with a cluster, no CTA leaves while a peer may still write into its ring."""
        if self.p.cluster_size == 1:
            return ""
        return "  cluster_sync();                                      // no CTA leaves while a peer may still write to it\n"

    def shared(self) -> str:
        """The barrier arrays, declared in the skeleton's setup."""
        return ("  __shared__ __align__(8) u64 full_bar[kStages];       // the stage's bytes have landed\n"
                "  __shared__ __align__(8) u64 empty_bar[kStages];      // the consumers (of every CTA the stage "
                "feeds) are done\n")

    def setup(self) -> str:
        """The skeleton's setup lines: the ring's addresses and, by one thread, the barriers' initialization."""
        return """  const Ring ring = {(smem_u32(smem_raw) + kSmemAlign - 1) & ~(kSmemAlign - 1), smem_u32(full_bar),
                     smem_u32(empty_bar)};
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(ring.full_bar(s), kFullArrivals);
      mbar_init(ring.empty_bar(s), kReaderWarps * kClusterSize);   // one arrival per warp reading it, per CTA
    }
    fence_barrier_init();
  }
"""
