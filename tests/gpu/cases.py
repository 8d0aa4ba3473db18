"""Hardware round-trip cases: kernel sources and host-side expectations, all derived from cute_py layouts.

Pure Python (numpy + cute_py): building a case needs no GPU, so the CI tests
compile every kernel here with NVRTC and check the host-side tables against
a model of the TMA hardware (:func:`emulate_tma`); tests/gpu runs them.

- :func:`tma_case`: one tile loaded by TMA into swizzled smem, copied out
  verbatim; element at tile coordinate ``c`` must sit at ``smem_layout(c)``.
- :func:`wgmma_case`: one 64xNxK block of ``wgmma.mma_async`` (K/16 instructions) with
  descriptors from ``make_gmma_desc``, accumulators stored through the GMMA C TV layout.
- :func:`hier_tma_case`: the same through a hierarchical gmem layout whose parts are not contiguous (a
  permuted array viewed as a matrix): one TMA dim per part, up to a 5-D tensor map.
- :func:`multicast_case`: a cluster loads one tile with TMA multicast, each CTA
  issuing its slice (``make_tma_params(..., multicast=n)``); every CTA must receive the whole tile.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from cute_py import Layout, tile_to_shape
from cute_py.arch.sm90 import make_gmma_desc, make_tma_params, smem_atom, tile_smem
from cute_py.atoms.mma import gmma
from cute_py.dtypes import dtype as cute_dtype
from cute_py.layouts import cosize, int_tuple as it

SMEM_ALIGN = 1024
SWIZZLE_MASK = {"NONE": 0, "32B": 1, "64B": 3, "128B": 7}     # 16-byte chunk bits XORed by TMA / wgmma
TMA_DTYPES = ("u8", "bf16", "f32")
SWIZZLES = (0, 32, 64, 128)
MAJORS = ("K", "MN")
WGMMA_NS = (64, 128, 256)

# ---------------------------------------------------------------------------
# Header-free device code shared by the kernels (raw PTX in inline asm).

PRELUDE = r"""
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

// CUtensorMap: 128 bytes, 64-byte aligned, passed by value as a const __grid_constant__ parameter.
struct __align__(64) TmaDesc { u64 words[16]; };

__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ u32 mbar_try_wait(u32 bar, u32 phase) {
  u32 ok;
  asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
               "selp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(bar), "r"(phase) : "memory");
  return ok;
}
// Bounded wait: returns 0 instead of hanging the GPU when the transaction count never completes.
__device__ __forceinline__ u32 mbar_wait(u32 bar, u32 phase) {
  for (u32 i = 0; i < (1u << 22); ++i)
    if (mbar_try_wait(bar, phase)) return 1;
  return 0;
}
__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaDesc* desc, u32 bar, int c0, int c1, u16 mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((u64)desc), "r"(c0), "r"(c1), "r"(bar), "h"(mask) : "memory");
}
__device__ __forceinline__ u32 cluster_ctarank() { u32 r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ u32 cluster_id_x() { u32 r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
"""


# ---------------------------------------------------------------------------
# Data helpers


def storage_dtype(t) -> np.dtype:
    """numpy dtype holding the bits of cute_py type ``t`` (bf16 -> uint16)."""
    return cute_dtype(t).storage


def random_values(t, shape, rng) -> np.ndarray:
    """Random elements of type ``t`` as their storage bits; finite floats, nearly unique for 16/32-bit."""
    t = cute_dtype(t)
    if t.name == "u8":
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if t.name == "bf16":
        f = rng.standard_normal(size=shape).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16)
    if t.name == "f32":
        return rng.standard_normal(size=shape).astype(np.float32)
    raise ValueError(f"no generator for {t.name}")


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """bf16 bits of float values that bf16 represents exactly (small integers here)."""
    return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _coord_table(inner: Layout):
    """unswizzled smem offset -> tile coordinate (mn, k), for a compact (MN, K) layout."""
    mn, k = it.product(inner.shape[0]), it.product(inner.shape[1])
    table = {}
    for j in range(k):
        for i in range(mn):
            table[inner(i, j)] = (i, j)
    return table


def smem_offsets(smem, mn: int, k: int) -> np.ndarray:
    """``offs[i, j] = smem(i, j)``: the (swizzled) element offset of tile coordinate (i, j)."""
    offs = np.empty((mn, k), dtype=np.int64)
    for j in range(k):
        for i in range(mn):
            offs[i, j] = smem(i, j)
    return offs


# ---------------------------------------------------------------------------
# TMA round trip


@dataclass
class TmaCase:
    """One TMA round-trip configuration with everything the host needs."""

    id: str
    dtype: object                 # cute_py DType
    major: str
    swizzle: int
    tile: tuple                   # (MN, K) of the CTA tile
    smem: object                  # the smem layout (cute_py), (MN, K) -> element offset
    gmem: Layout                  # (MN, K) -> element offset in the gmem array
    array_shape: tuple            # numpy shape of the gmem array (C order)
    params: object                # TmaParams
    tile_coord: tuple
    copies: list                  # per copy: (smem byte offset, TMA coords innermost first)
    source: str
    kernel: str
    cluster: int = 1
    grid: int = 1
    tile_bytes: int = 0
    dyn_smem: int = 0
    extra: dict = field(default_factory=dict)

    def gmem_values(self, seed: int = 0) -> np.ndarray:
        return random_values(self.dtype, self.array_shape, np.random.default_rng(seed))

    def expected_image(self, values: np.ndarray, tile_coord=None) -> np.ndarray:
        """The smem tile cute_py predicts: ``image[smem(c)] = gmem[origin + c]`` for every tile coordinate c."""
        tc = self.tile_coord if tile_coord is None else tile_coord
        mn, k = self.tile
        flat = values.reshape(-1)
        image = np.zeros(it.product(self.tile), dtype=values.dtype)
        offs = smem_offsets(self.smem, mn, k)
        for j in range(k):
            for i in range(mn):
                image[offs[i, j]] = flat[self.gmem(tc[0] * mn + i, tc[1] * k + j)]
        return image


def _gmem_for(major: str, tile, reps=(3, 2)):
    """A gmem array of reps x the tile: K-major arrays are (MN, K) row-major, MN-major ones (K, MN) row-major."""
    mn, k = tile[0] * reps[0], tile[1] * reps[1]
    if major == "K":
        return Layout((mn, k), (k, 1)), (mn, k)
    return Layout((mn, k), (1, mn)), (k, mn)


def _copies(params, smem, tile, tile_coord):
    """(smem byte offset, TMA coords) of each TMA issue filling one tile: copy i fills smem [i*box, (i+1)*box)."""
    inner = getattr(smem, "inner", smem)
    table = _coord_table(inner)
    box_elems = it.product(params.box_dim)
    nbytes = params.dtype.bits // 8
    out = []
    for i in range(params.copies_per_tile):
        c = table[i * box_elems]
        g = (tile_coord[0] * tile[0] + c[0], tile_coord[1] * tile[1] + c[1])
        out.append((i * box_elems * nbytes, tuple(int(g[m]) for m in params.gmem_modes)))
    return out


def tma_tile(major: str, t, swizzle: int):
    """The CTA tile used for (major, dtype, swizzle): 64 rows by one swizzle row (K-major), or 16 K (MN-major)."""
    t = cute_dtype(t)
    w = (swizzle or 16) * 8 // t.bits
    return (64, w) if major == "K" else (max(64, w), 16)


def tma_case(major: str, t, swizzle: int) -> TmaCase:
    t = cute_dtype(t)
    tile = tma_tile(major, t, swizzle)
    smem = tile_smem(smem_atom(major, swizzle, t), tile[0], tile[1], major=major)
    gmem, shape = _gmem_for(major, tile)
    params = make_tma_params(gmem, smem, t)
    tile_coord = (2, 1)
    copies = _copies(params, smem, tile, tile_coord)
    assert copies[0][1] == params.box_coords(tile_coord)
    tile_bytes = it.product(tile) * t.bits // 8
    kid = f"{major}-{t.name}-sw{swizzle}"
    src = PRELUDE + _TMA_KERNEL.format(
        id=kid, smem=smem, params=params.box_dim, swizzle=params.swizzle, n_copies=len(copies),
        bytes_per_copy=params.bytes_per_copy, tile_words=tile_bytes // 4, tile_bytes=tile_bytes,
        load=_load_call(2, params.bytes_per_copy))
    return TmaCase(kid, t, major, swizzle, tile, smem, gmem, shape, params, tile_coord, copies, src,
                   "tma_roundtrip", tile_bytes=tile_bytes, dyn_smem=tile_bytes + SMEM_ALIGN)


_TMA_KERNEL = r"""
// TMA round trip {id}: smem layout {smem}; box {params} (innermost first), swizzle {swizzle}.
extern "C" __global__ void __launch_bounds__(128, 1)
tma_roundtrip(const __grid_constant__ TmaDesc desc, const int* __restrict__ coords, u32* __restrict__ out,
              u32* __restrict__ status)
{{
  extern __shared__ __align__(1024) u8 smem_raw[];
  __shared__ __align__(8) u64 bar;
  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;        // SMEM_ALIGN: swizzle patterns repeat within 1024 bytes
  const u32* tile = (const u32*)(smem_raw + (base - raw));
  const u32 b = smem_u32(&bar);
  if (threadIdx.x == 0) {{
    mbar_init(b, 1);
    fence_barrier_init();
    fence_proxy_async();
  }}
  __syncthreads();
  if (threadIdx.x == 0) {{
    mbar_expect_tx(b, {n_copies}u * {bytes_per_copy}u);     // copies x TmaParams.bytes_per_copy
    for (int i = 0; i < {n_copies}; ++i)
      {load};
  }}
  const u32 ok = mbar_wait(b, 0);
  if (threadIdx.x == 0) status[0] = ok ? 1u : 2u;     // 1: loaded, 2: timed out
  if (!ok) return;
  for (int i = threadIdx.x; i < {tile_words}; i += blockDim.x) out[i] = tile[i];   // {tile_bytes} bytes verbatim
}}
"""


def emulate_tma(case: TmaCase, values: np.ndarray, rank_copies=None) -> np.ndarray:
    """What the TMA hardware writes to smem, from the CUDA documentation of tiled mode and swizzling.

    For each copy: box element ``b = (b0, b1, ...)`` (``b0`` innermost, any
    rank) is read at element offset ``sum((coords[i] + b[i]) * stride[i])``
    (stride 1 for dim 0, then ``globalStrides / size``) and written at byte
    ``o = copy_offset + (b0 + box0 * (b1 + box1 * ...)) * size``, swizzled as
    ``o ^ (((o >> 7) & mask) << 4)`` (16-byte chunks XORed with the 128-byte
    row index within the 1024-byte aligned pattern). Independent of cute_py's
    layouts, so agreement with :meth:`TmaCase.expected_image` checks them.
    """
    p = case.params
    nbytes = p.dtype.bits // 8
    strides = (1,) + tuple(int(x) // nbytes for x in p.global_strides)
    flat = values.reshape(-1)
    img = np.zeros(case.tile_bytes // nbytes, dtype=values.dtype)
    written = np.zeros(img.shape, dtype=bool)
    mask = SWIZZLE_MASK[p.swizzle]
    for off, coords in (case.copies if rank_copies is None else rank_copies):
        for n, b in enumerate(itertools.product(*(range(x) for x in reversed(p.box_dim)))):
            b = b[::-1]
            assert all(0 <= c + x < d for c, x, d in zip(coords, b, p.global_dim)), "a box element is out of bounds"
            o = off + n * nbytes
            o ^= ((o >> 7) & mask) << 4
            assert not written[o // nbytes], "two box elements land on one smem element"
            written[o // nbytes] = True
            img[o // nbytes] = flat[sum((c + x) * st for c, x, st in zip(coords, b, strides))]
    assert written.all(), "the copies do not cover the tile"
    return img


def all_tma_cases():
    return [tma_case(m, t, s) for m in MAJORS for t in TMA_DTYPES for s in SWIZZLES]


# ---------------------------------------------------------------------------
# TMA from a hierarchical gmem layout whose parts are not contiguous (issue 16): one TMA dim per part


def _load_call(rank: int, bytes_per_copy: int) -> str:
    """Issue ``i`` of the round-trip kernel: a ``rank``-D TMA load of ``coords[rank*i .. rank*i + rank - 1]``."""
    cs = ", ".join(f"coords[{rank} * i + {d}]" for d in range(rank))
    return f"tma_load_{rank}d(base + i * {bytes_per_copy}u, &desc, b, {cs})"


def _tma_load_nd(rank: int) -> str:
    """The ``cp.async.bulk.tensor.{rank}d`` load (the PRELUDE has the 2-D one)."""
    params = ", ".join(f"int c{d}" for d in range(rank))
    regs = ", ".join(f"%{d + 2}" for d in range(rank))
    args = ", ".join(f'"r"(c{d})' for d in range(rank))
    return (f"__device__ __forceinline__ void tma_load_{rank}d(u32 dst, const TmaDesc* desc, u32 bar, {params}) {{\n"
            f'  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes '
            f'[%0], [%1, {{{regs}}}], [%{rank + 2}];"\n'
            f'               :: "r"(dst), "l"((u64)desc), {args}, "r"(bar) : "memory");\n}}\n')


# name -> (C-order array shape, gmem layout (MN, K) over its element offsets, the array axes in the order
# (MN outer..inner, K outer..inner) so that values.transpose(axes).reshape(MN, K) is the logical matrix,
# smem major, smem order ("kfirst": tile_smem; "default": tile_to_shape), (MN, K) tile)
HIER_CASES = {
    # M = (64,4) walking array dims 0 and 1 in reverse: A K-major, box (64 K, 64 m0, 2 m1)
    "K_major_M_split": ((64, 4, 128), Layout(((64, 4), 128), ((512, 128), 1)), (1, 0, 2), "K", "kfirst",
                        (128, 64)),
    # M = (64,4):(1,8192) M-major: the 128-row tile is box (64, 2) over M's parts
    "MN_major_M_split": ((4, 128, 64), Layout(((64, 4), 128), ((1, 8192), 64)), (0, 2, 1), "MN", "kfirst",
                         (128, 64)),
    "MN_major_M_split_default": ((4, 128, 64), Layout(((64, 4), 128), ((1, 8192), 64)), (0, 2, 1), "MN",
                                 "default", (128, 64)),
    # K = (64,4):(1,16384): a 128-wide K tile spans both parts
    "K_split": ((4, 256, 64), Layout((256, (64, 4)), (64, (1, 16384))), (1, 0, 2), "K", "kfirst", (128, 128)),
    # five leaves, a 5-D tensor map: M = (8,8,4), K = (64,2)
    "rank5": ((2, 4, 8, 8, 64), Layout(((8, 8, 4), (64, 2)), ((512, 64, 4096), (1, 16384))), (1, 3, 2, 0, 4),
              "K", "kfirst", (128, 64)),
}


def logical_matrix(case: TmaCase, values):
    """The (MN, K) matrix the hierarchical gmem layout views: ``values.transpose(axes).reshape(MN, K)`` (numpy
    or torch, whose ``permute`` has the same meaning)."""
    axes = case.extra["axes"]
    view = values.transpose(axes) if isinstance(values, np.ndarray) else values.permute(*axes)
    return view.reshape(case.extra["matrix"])


def hier_tma_case(name: str) -> TmaCase:
    """bf16 tile (1, 1) of a hierarchical gmem layout loaded by one ``rank``-D TMA per issue, copied out verbatim."""
    shape, gmem, axes, major, order, tile = HIER_CASES[name]
    t = cute_dtype("bf16")
    atom = smem_atom(major, 128, t)
    smem = tile_smem(atom, *tile, major=major) if order == "kfirst" else tile_to_shape(atom, tile)
    params = make_tma_params(gmem, smem, t)
    tile_coord = (1, 1)
    inner = getattr(smem, "inner", smem)
    table = _coord_table(inner)
    box = it.product(params.box_dim)
    copies = []
    for i in range(params.copies_per_tile):
        c = table[i * box]
        copies.append((i * box * 2, params.tma_coords((tile[0] + c[0], tile[1] + c[1]))))
    assert copies[0][1] == params.box_coords(tile_coord)
    matrix = tuple(it.product(x) if isinstance(x, tuple) else x for x in gmem.shape)
    tile_bytes = it.product(tile) * 2
    src = PRELUDE + _tma_load_nd(params.rank) + _TMA_KERNEL.format(
        id=f"hier-{name}", smem=smem, params=params.box_dim, swizzle=params.swizzle, n_copies=len(copies),
        bytes_per_copy=params.bytes_per_copy, tile_words=tile_bytes // 4, tile_bytes=tile_bytes,
        load=_load_call(params.rank, params.bytes_per_copy))
    case = TmaCase(f"hier-{name}", t, major, 128, tile, smem, gmem, shape, params, tile_coord, copies, src,
                   "tma_roundtrip", tile_bytes=tile_bytes, dyn_smem=tile_bytes + SMEM_ALIGN,
                   extra={"axes": axes, "matrix": matrix})
    probe = np.arange(it.product(shape)).reshape(shape)
    assert np.array_equal(logical_matrix(case, probe),
                          np.array([[gmem(m, k) for k in range(matrix[1])] for m in range(matrix[0])]))
    return case


# ---------------------------------------------------------------------------
# TMA multicast over a cluster


def multicast_case(cluster: int, n_clusters: int = 2) -> TmaCase:
    """bf16 K-major 128B-swizzled (64, 64) tiles; cluster ``c`` loads tile (c, 1), each CTA issuing one slice."""
    t = cute_dtype("bf16")
    tile = (64, 64)
    smem = tile_smem(smem_atom("K", 128, t), *tile)
    gmem, shape = _gmem_for("K", tile, reps=(max(2, n_clusters), 2))
    params = make_tma_params(gmem, smem, t, multicast=cluster)
    tile_bytes = it.product(tile) * 2
    assert params.bytes_per_copy * cluster == tile_bytes
    per_cluster = []
    for c in range(n_clusters):
        tc = (c, 1)
        per_cluster.append([(r * params.bytes_per_copy, params.box_coords(tc, cta_rank=r)) for r in range(cluster)])
    kid = f"multicast-x{cluster}"
    src = PRELUDE + _MULTICAST_KERNEL.format(
        smem=smem, box=params.box_dim, full=params.full_box_dim, cluster=cluster, slice_bytes=params.bytes_per_copy,
        tile_bytes=tile_bytes, tile_words=tile_bytes // 4, mask=(1 << cluster) - 1)
    return TmaCase(kid, t, "K", 128, tile, smem, gmem, shape, params, (0, 1), per_cluster[0], src, "tma_multicast",
                   cluster=cluster, grid=cluster * n_clusters, tile_bytes=tile_bytes, dyn_smem=tile_bytes + SMEM_ALIGN,
                   extra={"per_cluster": per_cluster, "n_clusters": n_clusters})


_MULTICAST_KERNEL = r"""
// TMA multicast over a cluster of {cluster} CTAs: smem layout {smem}; the {full} box is split into
// {cluster} slices of {box} (TmaParams(multicast={cluster})); CTA r issues slice r to every CTA of the cluster.
extern "C" __global__ void __launch_bounds__(128, 1)
tma_multicast(const __grid_constant__ TmaDesc desc, const int* __restrict__ coords, u32* __restrict__ out,
              u32* __restrict__ status)
{{
  extern __shared__ __align__(1024) u8 smem_raw[];
  __shared__ __align__(8) u64 bar;
  const u32 raw = smem_u32(smem_raw);
  const u32 base = (raw + 1023u) & ~1023u;
  const u32* tile = (const u32*)(smem_raw + (base - raw));
  const u32 b = smem_u32(&bar);
  const u32 rank = cluster_ctarank();
  const u32 cid = cluster_id_x();
  if (threadIdx.x == 0) {{
    mbar_init(b, 1);
    fence_barrier_init();
  }}
  cluster_sync();                        // every CTA's barrier exists before any slice lands in it
  if (threadIdx.x == 0) {{
    mbar_expect_tx(b, {tile_bytes}u);       // this CTA receives all {cluster} slices
    const int* c = coords + 2 * (cid * {cluster} + rank);
    tma_load_2d_multicast(base + rank * {slice_bytes}u, &desc, b, c[0], c[1], (u16){mask});
  }}
  const u32 ok = mbar_wait(b, 0);
  if (threadIdx.x == 0) status[blockIdx.x] = (ok ? 1u : 2u) | (rank << 8) | (cid << 16);
  if (ok) {{
    u32* o = out + blockIdx.x * {tile_words};
    for (int i = threadIdx.x; i < {tile_words}; i += blockDim.x) o[i] = tile[i];
  }}
  cluster_sync();                        // no CTA exits while a peer's multicast may still write to it
}}
"""


# ---------------------------------------------------------------------------
# wgmma


@dataclass
class WgmmaCase:
    id: str
    n: int
    major: str
    swizzle: int
    k_tile: int
    a_smem: object
    b_smem: object
    desc_a: object
    desc_b: object
    c_index: np.ndarray           # [thread * values + v] -> m + 64 * n (the GMMA C TV layout)
    source: str
    kernel: str = "wgmma_tile"
    a_bytes: int = 0
    b_bytes: int = 0
    dyn_smem: int = 0

    def inputs(self, seed: int = 0):
        """Small-integer A (64, K) and B (N, K) (exact in bf16 and f32) and their smem images as u32 words."""
        rng = np.random.default_rng(seed)
        a = rng.integers(-3, 4, size=(64, self.k_tile)).astype(np.float64)
        b = rng.integers(-3, 4, size=(self.n, self.k_tile)).astype(np.float64)
        return a, b, self.image(self.a_smem, a, self.a_bytes), self.image(self.b_smem, b, self.b_bytes)

    @staticmethod
    def image(smem, x: np.ndarray, nbytes: int) -> np.ndarray:
        """smem contents (u32 words) with ``image[smem(i, j)] = bf16(x[i, j])``."""
        img = np.zeros(nbytes // 2, dtype=np.uint16)
        offs = smem_offsets(smem, *x.shape)
        img[offs.reshape(-1)] = bf16_bits(x).reshape(-1)
        return img.view(np.uint32)


def wgmma_case(n: int, major: str, swizzle: int) -> WgmmaCase:
    t = cute_dtype("bf16")
    w = (swizzle or 16) // 2                      # atom row width in elements
    k_tile = max(16, w) if major == "K" else 16
    a_smem = tile_smem(smem_atom(major, swizzle, t), 64, k_tile, major=major)
    b_smem = tile_smem(smem_atom(major, swizzle, t), n, k_tile, major=major)
    da = make_gmma_desc(a_smem, t, major, mma_mn=64)
    db = make_gmma_desc(b_smem, t, major, mma_mn=n)
    atom = gmma(n, "f32", "bf16", "bf16", a_major=major, b_major=major)
    nv = n // 2
    c = atom.c_layout
    c_index = np.array([c(th, v) for th in range(128) for v in range(nv)], dtype=np.int32)
    a_bytes = -(-cosize(getattr(a_smem, "inner", a_smem)) * 2 // SMEM_ALIGN) * SMEM_ALIGN
    b_bytes = -(-cosize(getattr(b_smem, "inner", b_smem)) * 2 // SMEM_ALIGN) * SMEM_ALIGN
    ksteps = k_tile // 16
    trans = 0 if major == "K" else 1
    regs = ", ".join(f"%{i}" for i in range(nv))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(nv))
    calls = "\n".join(
        f"  wgmma_m64n{n}k16(d, da + {j}ull * {da.k_block_step}ull, db + {j}ull * {db.k_block_step}ull);"
        f"   // k-step {j}: + k_block_step" for j in range(ksteps))
    kid = f"{major}-sw{swizzle}-n{n}"
    src = PRELUDE + _WGMMA_KERNEL.format(
        id=kid, n=n, nv=nv, regs=regs, outs=outs, da=da, db=db, p_da=nv, p_db=nv + 1, p_sc=nv + 2,
        trans=trans, a_smem=a_smem, b_smem=b_smem, a_words=a_bytes // 4, b_words=b_bytes // 4,
        a_bytes=a_bytes, calls=calls, c_layout=c, major=major, ksteps=ksteps, k_tile=k_tile)
    return WgmmaCase(kid, n, major, swizzle, k_tile, a_smem, b_smem, da, db, c_index, src,
                     a_bytes=a_bytes, b_bytes=b_bytes, dyn_smem=a_bytes + b_bytes + SMEM_ALIGN)


_WGMMA_KERNEL = r"""
// wgmma {id}: D(64x{n}, f32) = A(64x{k_tile}, bf16) * B({n}x{k_tile}, bf16)^T in {ksteps} m64n{n}k16 step(s), {major}-major.
//   A smem {a_smem}: {da}
//   B smem {b_smem}: {db}
//   accumulators stored through the GMMA C TV layout {c_layout} (index table from the host)
__device__ __forceinline__ void wgmma_m64n{n}k16(float (&d)[{nv}], u64 da, u64 db) {{
  asm volatile("{{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %{p_sc}, 0;\n\t"
               "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.bf16.bf16 {{{regs}}}, %{p_da}, %{p_db}, p, 1, 1, {trans}, {trans};\n}}"
               : {outs}
               : "l"(da), "l"(db), "r"(1));
}}

extern "C" __global__ void __launch_bounds__(128, 1)
wgmma_tile(const u32* __restrict__ a_img, const u32* __restrict__ b_img, const int* __restrict__ c_index,
           float* __restrict__ c_out, u64 desc_a, u64 desc_b)
{{
  extern __shared__ __align__(1024) u8 smem_raw[];
  const u32 raw = smem_u32(smem_raw);
  const u32 a_s = (raw + 1023u) & ~1023u;         // stage buffers 1024-byte aligned: descriptor base_offset 0
  const u32 b_s = a_s + {a_bytes}u;
  u32* sa = (u32*)(smem_raw + (a_s - raw));
  u32* sb = (u32*)(smem_raw + (b_s - raw));
  for (int i = threadIdx.x; i < {a_words}; i += blockDim.x) sa[i] = a_img[i];
  for (int i = threadIdx.x; i < {b_words}; i += blockDim.x) sb[i] = b_img[i];
  fence_proxy_async();                            // generic-proxy smem writes -> visible to wgmma (async proxy)
  __syncthreads();
  float d[{nv}];
#pragma unroll
  for (int i = 0; i < {nv}; ++i) d[i] = 0.0f;
  const u64 da = desc_a + (u64)((a_s & 0x3FFFFu) >> 4);      // start address field: smem address >> 4
  const u64 db = desc_b + (u64)((b_s & 0x3FFFFu) >> 4);
  wgmma_fence();
{calls}
  wgmma_commit();
  wgmma_wait0();
#pragma unroll
  for (int v = 0; v < {nv}; ++v) c_out[c_index[threadIdx.x * {nv} + v]] = d[v];
}}
"""


def all_wgmma_cases():
    return [wgmma_case(n, m, s) for m in MAJORS for s in SWIZZLES for n in WGMMA_NS]


def all_multicast_cases():
    return [multicast_case(2), multicast_case(4)]
