"""The schedulers of grouped and batched kernels: the persistent walk over (group, M tile, N tile).

Work units are numbered group by group: group ``l`` owns ``units(l) = ceil(rows(l) / (kClusterM BM)) *
ceil(num_n / kClusterN)`` consecutive units, and inside a group the tile scheduler's ``place`` puts a unit (its
L2 raster bands included). A batch has ``rows(l) = M`` for every ``l``, so the group of a unit is one
division. Groups along M read their rows from ``offs`` on the device: a CTA keeps a cursor (``Group``) that
only moves forward, since its units only grow, so each offset is read once per CTA (stream-K over groups along M
reads them all once more, to count the tiles) and the launch needs no host synchronisation (it can be captured in
a CUDA graph). Offsets are clamped into ``[previous offset, M]``, so
offsets out of order or past M make empty groups instead of reads or writes out of bounds.

A unit's ``Work`` carries its group: ``l`` (the coordinate of the group mode L in the tensor maps), and the rows
``[row0, row1)`` of groups along M (A's tile origin, and the row past which the epilogue stores nothing) or the
K range ``[k0, k1)`` of groups along K (the ragged K coordinates of the loads, :func:`cute_py.emit.grouping.ragged_gmem`).

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> "__ldg(offs + g.l)" in GroupsAlongM(gemm_plan(GemmSpec(b="(N,K,L):(K,1,ldb_l)"))).device()
True
"""

from __future__ import annotations

from ...grouping import BATCH, GROUPS_K, GROUPS_M, with_group_mode
from ...params import KernelParam
from ....layouts.int_tuple import ceil_div
from .tile import TileScheduler

__all__ = ["GroupsAlongM", "GroupsAlongK", "Batches"]

_OFFS = KernelParam("offs", "pointer", "const int")
_L = KernelParam("L", "s32")


class _Groups(TileScheduler):
    grouping = ""

    @classmethod
    def walks(cls, spec) -> bool:
        return spec.grouping == cls.grouping

    def state(self) -> list:
        return ([("int", a, a) for a in ("num_m", "num_n", "k_tiles")] + [("int", "L", "L")]
                + [("Group", "g", "kNoGroup")])

    def header(self) -> str:
        return super().header() + self.walk()

    @classmethod
    def units(cls, plan, M: int, N: int, L: int) -> int:
        return super().units(plan, M, N, L) * L

    def tile_count(self) -> str:
        return ("  const int per = ((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN);"
                "   // tiles per group\n  const int units = per * L;\n")

    def tile_slot(self, unit: str) -> str:
        """The unit's cluster tile and the CTA's rank in it: unique over the groups' tiles."""
        return f"{unit} * kClusterSize + (int)rank"

    def slot_layout(self) -> tuple:
        """Tile-major: a tile's splits side by side (split-major spilled 32 bytes in the split-K batch kernel)."""
        return "const long long first = (long long)wk.tile * kSplitK;", "first + {j}"


class Batches(_Groups):
    """A batch of L equal GEMMs, one after another: unit u is unit u % per of batch u / per."""

    name = "batches"
    grouping = BATCH
    args = ("M", "N", "K", "L")

    @classmethod
    def params(cls, spec) -> tuple:
        return (_L,)

    def state(self) -> list:
        return super().state() + [("int", "M", "M")]

    def walk(self) -> str:
        return """// ---- batches: the L GEMMs of one shape one after another; unit u is unit u % per of batch u / per ----
struct Group { int l, row0, row1, first; };      // batch l: rows [row0, row1) = [0, M), its units from `first`
constexpr Group kNoGroup = {-1, 0, 0, 0};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_m, int num_n, int L, int M) {
  const int per = ((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN);
  g.l = unit / per;
  g.first = g.l * per;
  g.row1 = M;
  return g.l < L;
}
__device__ __forceinline__ int m_tiles(const Group& g) { return (g.row1 - g.row0 + kBM - 1) / kBM; }
"""

    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1, l;"

    def next_body(self, unit: str = "unit") -> tuple:
        return f"    const bool ok = group_of({unit}, g, num_m, num_n, L, M);", f"""    place({unit} - g.first, m_tiles(g), num_n, rank, w);
    w.kb0 = 0;
    w.kb1 = k_tiles;
    w.l = g.l;"""

    def coords(self, w: str = "w") -> dict:
        return dict(super().coords(w), l=f"{w}.l")

    @classmethod
    def gmem_maps(cls, plan, problem, maps: dict) -> tuple:
        """Every operand and D carry the batch mode L."""
        L, strides = problem.groups, dict(zip("abd", problem.batch_strides))
        return {x: with_group_mode(*maps[x], L, strides[x]) for x in "abd"}, {}


class GroupsAlongM(_Groups):
    """Groups stacked along M (a mixture of experts' tokens): group l is rows [offs[l-1], offs[l]) times B[l]."""

    name = "groups_m"
    grouping = GROUPS_M
    args = ("M", "N", "K", "offs", "L")

    @classmethod
    def params(cls, spec) -> tuple:
        return (_OFFS, _L)

    @classmethod
    def problems(cls, spec) -> list:
        """Groups along M with masked direct stores and 128 or more accumulators per consumer thread (128x256,
        256x128, 64x256 with one consumer) store wrong values on the H200 (tests/gpu/test_gpu_grouped.py
        ``test_moe_explicit_specs``; 128x128 and 128x192 tiles, the TMA-store epilogue, batches and groups along
        K with the same tiles are exact). The cause is not found yet: the pair is refused, not run wrong."""
        if spec.epilogue != "direct" or spec.consumers not in (1, 2):
            return []
        bm, bn, _ = spec.tile
        acc = bm * bn // (128 * spec.tile_warpgroups)
        if acc < 128:
            return []
        return [f"groups along M with epilogue = 'direct' and {acc} accumulators per consumer thread "
                f"(tile {bm}x{bn}) store wrong values (a known defect, under investigation): use a row-major D "
                f"with 16-byte aligned rows (the TMA-store epilogue) or a tile of at most 96 accumulators per "
                f"thread, such as 128x128 or 128x192"]

    def state(self) -> list:
        return super().state()[1:] + [("const int*", "offs", "offs"), ("int", "M", "M")]

    def walk(self) -> str:
        return """// ---- groups along M: group l is rows [offs[l-1], offs[l]) of A and D (offs[-1] = 0) times B[l];
//      the cursor g moves forward only (a CTA's units grow), each offset is read once per CTA ----
struct Group { int l, row0, row1, first, end; };  // group l: rows [row0, row1), units [first, end)
constexpr Group kNoGroup = {-1, 0, 0, 0, 0};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_n, const int* __restrict__ offs, int L, int M) {
  const int units_n = (num_n + kClusterN - 1) / kClusterN;
  while (unit >= g.end) {
    if (++g.l >= L) return false;
    g.row0 = g.row1;
    g.row1 = min(max(__ldg(offs + g.l), g.row0), M);   // clamped: bad offsets give empty groups, never stray rows
    g.first = g.end;
    g.end += (g.row1 - g.row0 + kClusterM * kBM - 1) / (kClusterM * kBM) * units_n;
  }
  return true;
}
__device__ __forceinline__ int m_tiles(const Group& g) { return (g.row1 - g.row0 + kBM - 1) / kBM; }
"""

    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1, l, row0, row1;"

    def next_body(self, unit: str = "unit") -> tuple:
        return f"    const bool ok = group_of({unit}, g, num_n, offs, L, M);", f"""    place({unit} - g.first, m_tiles(g), num_n, rank, w);
    w.kb0 = 0;
    w.kb1 = k_tiles;
    w.l = g.l;
    w.row0 = g.row0;
    w.row1 = g.row1;"""

    def coords(self, w: str = "w") -> dict:
        return dict(super().coords(w), l=f"{w}.l", m_origin=f"{w}.row0", m_end=f"{w}.row1")

    @classmethod
    def gmem_maps(cls, plan, problem, maps: dict) -> tuple:
        """B carries the group mode; a TMA-stored D is ragged (:func:`cute_py.emit.grouping.ragged_rows`): its map
        starts ``rows`` rows before D, so a group's last tile stores no row of the next group."""
        maps = dict(maps, b=with_group_mode(*maps["b"], problem.groups, problem.batch_strides[1]))
        if plan.epi is None:
            return maps, {}
        rows, (M, N) = plan.epi.rows, maps["d"][0]
        maps["d"] = ((rows, N, M + rows), (problem.ldd, 1, problem.ldd))
        return maps, {"tma_d": -rows * problem.ldd * plan.epi.elem_bytes}

    def tile_count(self) -> str:
        """The groups' tiles, from every offset (clamped as ``group_of`` clamps them)."""
        return """  const int units_n = (num_n + kClusterN - 1) / kClusterN;
  int units = 0;                                       // the groups' cluster tiles
  for (int l = 0, r0 = 0; l < L; ++l) {
    const int r1 = min(max(__ldg(offs + l), r0), M);
    units += (r1 - r0 + kClusterM * kBM - 1) / (kClusterM * kBM) * units_n;
    r0 = r1;
  }
"""

    @classmethod
    def units(cls, plan, M: int, N: int, L: int) -> int:
        """At most one partial cluster tile more per group than the rows of all groups need."""
        bm, bn, _ = plan.tile
        cm, cn = plan.cluster
        return (ceil_div(M, bm * cm) + L) * ceil_div(N, bn * cn)


class GroupsAlongK(_Groups):
    """Groups stacked along K (a mixture of experts' weight gradient): D[l] is columns [offs[l-1], offs[l]) of A
    times rows of B."""

    name = "groups_k"
    grouping = GROUPS_K
    args = ("M", "N", "K", "offs", "L")
    may_be_empty = True                   # an empty group contributes zeros

    @classmethod
    def params(cls, spec) -> tuple:
        return (_OFFS, _L)

    def state(self) -> list:
        return super().state() + [("const int*", "offs", "offs"), ("int", "K", "K")]

    def walk(self) -> str:
        return """// ---- groups along K: group l is columns [offs[l-1], offs[l]) of A and rows of B (offs[-1] = 0), its
//      D the l-th (M, N) matrix; every group has the same M x N tiles, so unit u is unit u % per of group u / per ----
struct Group { int l, k0, k1, first; };          // group l: K range [k0, k1), its units from `first`
constexpr Group kNoGroup = {-1, 0, 0, 0};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_m, int num_n, const int* __restrict__ offs,
                                         int L, int K) {
  const int per = ((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN);
  g.l = unit / per;
  g.first = g.l * per;
  if (g.l >= L) return false;
  g.k0 = g.l ? min(max(__ldg(offs + g.l - 1), 0), K) : 0;   // clamped: bad offsets give empty groups
  g.k1 = min(max(__ldg(offs + g.l), g.k0), K);
  return true;
}
"""

    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1, l, k0, k1;"

    def next_body(self, unit: str = "unit") -> tuple:
        return f"    const bool ok = group_of({unit}, g, num_m, num_n, offs, L, K);", f"""    place({unit} - g.first, num_m, num_n, rank, w);
    w.kb0 = 0;
    w.kb1 = (g.k1 - g.k0 + kBK - 1) / kBK;
    w.l = g.l;
    w.k0 = g.k0;
    w.k1 = g.k1;"""

    def coords(self, w: str = "w") -> dict:
        prologue = ("      // K tile at ks with v = min(kBK, k1 - ks) valid rows, loaded as the tile's last v rows: box "
                    "row i\n      // reads row ks - (kBK - v) + i, and rows i < kBK - v (middle coordinate < 0) arrive "
                    "as zeros\n"
                    f"      const int ks = {w}.k0 + kb * kBK, kc1 = min(kBK, {w}.k1 - ks) - kBK, kc2 = ks;\n")
        return dict(super().coords(w), l=f"{w}.l", k_prologue=prologue, k_coords=("kc1", "kc2"),
                    k_range=("ks + kc1", "ks", f"{w}.k1"))

    def stream_iterations(self) -> dict:
        """A tile has its group's k-blocks, one at least (an empty group's tiles store zeros): stream-K iteration
        ``it`` is found by a cursor over the groups, which moves forward only (a CTA's iterations grow)."""
        return {"setup": """  long long iters = 0;                                 // the stream-K tiles' iterations, group by group
  for (int l = sk ? (units - sk) / per : L; l < L; ++l)
    iters += (long long)(min((l + 1) * per, units) - max(l * per, units - sk)) * group_iters(offs, l, K);
""", "state": [("int", "per", "per"), ("int", "sl", "sk ? (units - sk) / per : 0"), ("long long", "sit", "0")],
                "locate": """    int s = 0, kt = 1;
    long long t0 = 0;
    if (in_sk) locate(it, s, t0, kt);                  // the stream-K tile `it` lies in
""", "members": """
  // stream-K tile s of iteration it, its first iteration t0 and its iterations kt; the cursor: group sl, whose
  // stream-K tiles start at iteration sit
  __device__ __forceinline__ void locate(long long it, int& s, long long& t0, int& kt) {
    for (;; ++sl) {
      kt = group_iters(offs, sl, K);
      const int first = max(sl * per, dp_tiles);      // sl's first stream-K tile
      const long long n = (long long)(min((sl + 1) * per, units) - first) * kt;
      if (it < sit + n) {
        s = first - dp_tiles + (int)((it - sit) / kt);
        t0 = sit + (long long)(s + dp_tiles - first) * kt;
        return;
      }
      sit += n;
    }
  }""", "device": """// the stream-K iterations of a tile of group l: its k-blocks (offsets clamped as group_of clamps them), one at least
__device__ __forceinline__ int group_iters(const int* __restrict__ offs, int l, int K) {
  const int k0 = l ? min(max(__ldg(offs + l - 1), 0), K) : 0;
  return max((min(max(__ldg(offs + l), k0), K) - k0 + kBK - 1) / kBK, 1);
}
"""}

    @classmethod
    def gmem_maps(cls, plan, problem, maps: dict) -> tuple:
        """A and B are ragged along K (:func:`cute_py.emit.grouping.ragged_gmem`), D carries the group mode."""
        bk = plan.spec.tile[2]
        M, N, K = problem.M, problem.N, problem.K
        maps = {"a": ((M, bk, K), (1, problem.lda, problem.lda)),
                "b": ((N, bk, K), (1, problem.ldb, problem.ldb)),
                "d": with_group_mode(*maps["d"], problem.groups, problem.batch_strides[2])}
        return maps, {}
