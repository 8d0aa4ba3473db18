"""PTX wrapper snippets: header-free device functions around raw PTX (inline asm).

Each function returns C++ text. The facts are those of the GPU-verified
kernels in ``tests/gpu/cases.py`` (TMA loads completing on mbarriers, wgmma
with descriptors, fences) and CUTLASS's ``arch/`` wrappers.

>>> "mbarrier.try_wait.parity" in mbarrier()
True
"""

from __future__ import annotations

__all__ = ["types", "mbarrier", "tma", "tma_store", "cluster", "wgmma_sync", "wgmma_mma", "setmaxnreg",
           "conversions", "splitk", "all_wrappers", "WRAPPERS"]


def types() -> str:
    """Fixed-width typedefs and the 128-byte, 64-byte aligned CUtensorMap stand-in (NVRTC finds no headers)."""
    return r"""typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// CUtensorMap: 128 bytes, 64-byte aligned, passed by value as a const __grid_constant__ parameter.
struct __align__(64) TmaDesc { u64 words[16]; };

__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }
"""


def mbarrier(bound_log2: int = 24) -> str:
    """mbarrier init / arrive / arrive.expect_tx / try_wait.parity loop, and the init fence.

    The wait loop traps after ``2**bound_log2`` failed tries, so a protocol
    bug aborts the launch (an error at the next synchronization) instead of
    hanging the GPU.
    """
    return r"""// ---- mbarriers (64-bit, in shared memory; addresses are shared-window u32) ----
__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
// One arrival plus the number of bytes the TMA copies of this phase will deliver.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ u32 mbar_try_wait(u32 bar, u32 parity) {
  u32 ok;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok;
}
// Wait until the phase with this parity has completed; trap (launch error) instead of hanging forever.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
  for (u32 i = 0; !mbar_try_wait(bar, parity); ++i)
    if (i == (1u << BOUND)) asm volatile("trap;");
}
""".replace("BOUND", str(bound_log2))


def tma() -> str:
    """2-D TMA tile load completing on an mbarrier, descriptor prefetch, and the async-proxy fence."""
    return r"""// ---- TMA (cp.async.bulk.tensor): coordinates innermost first, out-of-bounds elements are zero-filled ----
__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// The same copy, multicast: the box lands at this smem offset (and completes on this barrier offset) in every
// CTA of the cluster named in ctaMask.
__device__ __forceinline__ void tma_load_2d_mc(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1, u16 mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc* desc) {
  asm volatile("prefetch.tensormap [%0];" :: "l"((u64)desc) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
"""


def tma_store() -> str:
    """2-D TMA tile store from shared memory (bulk-group completion), and the bulk-group commit/waits."""
    return r"""// ---- TMA store: smem box -> gmem; elements outside the tensor are not written ----
__device__ __forceinline__ void tma_store_2d(const TmaDesc* desc, u32 src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"((u64)desc), "r"(c0), "r"(c1), "r"(src) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// at most N of this thread's bulk groups still reading their smem source
template <int N> __device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory"); }
// four 8x8 16-bit matrices from a warp: lane 8m + r gives the address of row r of matrix m; register m of lane i
// holds matrix m's (row i / 4, columns 2 (i % 4), +1)
__device__ __forceinline__ void stmatrix_x4(u32 addr, u32 r0, u32 r1, u32 r2, u32 r3) {
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(u32 addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" :: "r"(addr), "f"(x), "f"(y) : "memory");
}
"""


def tma_3d(store: bool) -> str:
    """3-D TMA loads (plain and multicast) and, with ``store``, the stores of a grouped or batched D (2-D and 3-D,
    with an L2 evict-first cache policy): a grouped or batched operand's tensor map has the group mode L as its
    outer dimension."""
    out = r"""// ---- 3-D TMA: the third coordinate is the group (or batch) mode L ----
__device__ __forceinline__ void tma_load_3d(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
}
__device__ __forceinline__ void tma_load_3d_mc(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1, int c2, u16 mask) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3, %4}], [%5], %6;"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask) : "memory");
}
"""
    if store:
        out += r"""// TMA stores of a grouped or batched D with an L2 evict-first policy: D is written once and never read here,
// so its lines leave L2 first and the operands (reused by many tiles) stay (+6% on write-bound batches)
__device__ __forceinline__ u64 l2_evict_first() {
  u64 policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ void tma_store_2d_evict_first(const TmaDesc* desc, u32 src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;"
               :: "l"((u64)desc), "r"(c0), "r"(c1), "r"(src), "l"(l2_evict_first()) : "memory");
}
__device__ __forceinline__ void tma_store_3d_evict_first(const TmaDesc* desc, u32 src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2, %3}], [%4], %5;"
               :: "l"((u64)desc), "r"(c0), "r"(c1), "r"(c2), "r"(src), "l"(l2_evict_first()) : "memory");
}
"""
    return out


def cluster() -> str:
    """Cluster rank, cluster-wide barrier and an mbarrier arrive on another CTA of the cluster (``mapa``)."""
    return r"""// ---- clusters ----
__device__ __forceinline__ u32 cluster_ctarank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// arrive on the mbarrier at the same smem offset in CTA `rank` of this cluster (itself included). The default
// semantics (release at CTA scope) suffice: what the arrive publishes is that this warp's wgmma have retired.
// An explicit .release.cluster compiles to MEMBAR.ALL.GPU before every arrive, which made clusters 2.5x slower.
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank) {
  asm volatile("{\n\t.reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, %0, %1;\n\t"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}" :: "r"(bar), "r"(rank) : "memory");
}
"""


def splitk() -> str:
    """Vector stores, gpu-scope loads, the fence and the counter atomic of a reduction of partial tiles (split-K
    and stream-K)."""
    return r"""// ---- partial tiles meet in an f32 workspace; the last CTA of a tile adds them up ----
__device__ __forceinline__ void st_v4(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
__device__ __forceinline__ void ld_v4_gpu(const float* p, float& a, float& b, float& c, float& d) {
  asm volatile("ld.relaxed.gpu.global.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p) : "memory");
}
__device__ __forceinline__ void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ int atom_add_acq_rel(int* p, int v) {
  int old; asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory"); return old;
}
__device__ __forceinline__ void st_relaxed_s32(int* p, int v) {
  asm volatile("st.relaxed.gpu.global.s32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
"""


def wgmma_sync() -> str:
    """wgmma fence / commit_group / wait_group<N> (CuTe's warpgroup_arrive / commit_batch / wait)."""
    return r"""// ---- wgmma synchronization ----
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// a named barrier among `threads` threads (id 0 is __syncthreads)
__device__ __forceinline__ void named_bar_sync(u32 id, u32 threads) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
// count this warp in on named barrier `id` without waiting (the other side waits with named_bar_sync)
__device__ __forceinline__ void named_bar_arrive(u32 id, u32 threads) {
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory");
}
"""


def wgmma_mma(atom, a_major: str, b_major: str) -> str:
    """``wgmma.mma_async`` for one GMMA atom (SS: both operands by smem descriptor), f32 accumulators.

    The instruction string is ``atom.ptx``; the accumulator fragment is
    ``atom.regs["c"]`` f32 registers (N/2), in the register order of the
    atom's C TV layout. ``tnspA``/``tnspB`` are 0 for K-major, 1 for MN-major;
    8-bit inputs (fp8) are K-major only and the instruction takes no transpose operands.
    ``scale_d`` 0 overwrites the accumulators (D = A*B), 1 accumulates.
    """
    m, n, k = atom.shape_mnk
    nv = atom.regs["c"]
    regs = ", ".join(f"%{i}" for i in range(nv))
    outs = ",\n                 ".join(", ".join(f'"+f"(d[{i}])' for i in range(j, min(j + 8, nv)))
                                       for j in range(0, nv, 8))
    ta, tb = int(a_major != "K"), int(b_major != "K")
    tnsp = f", {ta}, {tb}" if atom.a_type.bits == 16 else ""
    return f"""// ---- {atom.name}: D(64x{n}, f32) += A(64x{k}) * B({n}x{k})^T, both from smem descriptors ----
// A {a_major}-major (tnspA {ta}), B {b_major}-major (tnspB {tb}); {nv} f32 accumulators per thread
// laid out by the atom's C TV layout {atom.c_layout}.
__device__ __forceinline__ void wgmma_m{m}n{n}k{k}(float (&d)[{nv}], u64 desc_a, u64 desc_b, int scale_d) {{
  asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %{nv + 2}, 0;\\n\\t"
               "{atom.ptx} {{{regs}}}, %{nv}, %{nv + 1}, p, 1, 1{tnsp};\\n}}"
               : {outs}
               : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}}
"""


def setmaxnreg() -> str:
    """Register reallocation between warpgroups (needs ``__launch_bounds__(threads, 1)``)."""
    return r"""// ---- setmaxnreg: the producer gives registers back, the consumers take them ----
template <int R> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(R)); }
template <int R> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(R)); }
"""


def conversions() -> str:
    """f32 <-> bf16 / f16 conversions (round to nearest even) on raw 16-bit words."""
    return r"""// ---- element conversions (16-bit values travel as u16 bits) ----
__device__ __forceinline__ u16 f32_to_bf16(float x) { u16 r; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x)); return r; }
__device__ __forceinline__ u16 f32_to_f16(float x) { u16 r; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x)); return r; }
__device__ __forceinline__ float bf16_to_f32(u16 x) { float r; asm("mov.b32 %0, %1;" : "=f"(r) : "r"((u32)x << 16)); return r; }
__device__ __forceinline__ float f16_to_f32(u16 x) { float r; asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(x)); return r; }
"""


WRAPPERS = ("tma_store", "tma_3d", "tma_3d_store", "cluster", "splitk")
"""The optional wrapper snippets, by the name a collective asks for them (:meth:`Collective.wrappers
<cute_py.emit.collectives.base.Collective.wrappers>`); the types, mbarriers, 2-D TMA loads, wgmma, setmaxnreg and
conversions are in every kernel."""


def all_wrappers(needs, atoms, a_major: str, b_major: str) -> str:
    """Every wrapper a kernel uses: the fixed ones, those named in ``needs`` (a subset of :data:`WRAPPERS`, in
    that order) and one ``wgmma`` per GMMA atom of ``atoms`` (the tile's, and a promoting mainloop's column chunk).

    >>> from cute_py.atoms import gmma
    >>> text = all_wrappers({"cluster"}, [gmma(128, "f32", "bf16", "bf16")], "K", "K")
    >>> "mapa.shared::cluster" in text, "tma_store_2d" in text
    (True, False)
    """
    needs = set(needs)
    unknown = needs - set(WRAPPERS)
    if unknown:
        raise ValueError(f"all_wrappers: unknown wrappers {sorted(unknown)}; known: {WRAPPERS}")
    parts = [types(), mbarrier(), tma()]
    parts += [tma_store()] if "tma_store" in needs else []
    parts += [tma_3d("tma_3d_store" in needs)] if needs & {"tma_3d", "tma_3d_store"} else []
    parts += [cluster()] if "cluster" in needs else []
    parts += [splitk()] if "splitk" in needs else []
    parts += [wgmma_sync()]
    names = []
    for atom in atoms:
        if atom.name not in names:
            names.append(atom.name)
            parts.append(wgmma_mma(atom, a_major, b_major))
    parts += [setmaxnreg(), conversions()]
    return "\n".join(parts)
