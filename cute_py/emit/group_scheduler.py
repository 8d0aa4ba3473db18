"""The group scheduler of grouped and batched kernels: the persistent walk over (group, M tile, N tile).

Work units are numbered group by group: group ``l`` owns ``units(l) = ceil(rows(l) / (kClusterM BM)) *
ceil(num_n / kClusterN)`` consecutive units, and inside a group the dense scheduler's ``work_of`` places a unit
(its L2 raster bands included). A batch has ``rows(l) = M`` for every ``l``, so the group of a unit is one
division. Groups along M read their rows from ``offs`` on the device: a CTA keeps a cursor (``Group``) that
only moves forward, since its units only grow, so each offset is read once per CTA and the launch needs no host
synchronisation (it can be captured in a CUDA graph). Offsets are clamped into ``[previous offset, M]``, so
offsets out of order or past M make empty groups instead of reads or writes out of bounds.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> "__ldg(offs + g.l)" in group_scheduler(gemm_plan(GemmSpec(b="(N,K,L):(K,1,ldb_l)")))
True
"""

from __future__ import annotations

from .plan import GemmPlan

__all__ = ["group_scheduler", "group_producer", "group_loop"]


def group_scheduler(p: GemmPlan) -> str:
    """``Group``, ``group_of`` (the group of a work unit, advancing the cursor; false past the last group) and
    ``m_tiles`` (a group's M tiles)."""
    bm, _, bk = p.tile
    if p.grouping == "batch":
        walk = """// ---- batches: the L GEMMs of one shape one after another; unit u is unit u % per of batch u / per ----
struct Group { int l, row0, row1, first; };      // batch l: rows [row0, row1) = [0, M), its units from `first`
constexpr Group kNoGroup = {-1, 0, 0, 0};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_m, int num_n, int L, int M) {
  const int per = work_units(num_m, num_n);
  g.l = unit / per;
  g.first = g.l * per;
  g.row1 = M;
  return g.l < L;
}"""
    elif p.grouping == "k":
        walk = f"""// ---- groups along K: group l is columns [offs[l-1], offs[l]) of A and rows of B (offs[-1] = 0), its
//      D the l-th (M, N) matrix; every group has the same M x N tiles, so unit u is unit u % per of group u / per ----
struct Group {{ int l, k0, k1, first; }};          // group l: K range [k0, k1), its units from `first`
constexpr Group kNoGroup = {{-1, 0, 0, 0}};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_m, int num_n, const int* __restrict__ offs,
                                         int L, int K) {{
  const int per = work_units(num_m, num_n);
  g.l = unit / per;
  g.first = g.l * per;
  if (g.l >= L) return false;
  g.k0 = g.l ? min(max(__ldg(offs + g.l - 1), 0), K) : 0;   // clamped: bad offsets give empty groups
  g.k1 = min(max(__ldg(offs + g.l), g.k0), K);
  return true;
}}
__device__ __forceinline__ int k_tiles_of(const Group& g) {{ return (g.k1 - g.k0 + {bk - 1}) / {bk}; }}"""
    else:
        walk = f"""// ---- groups along M: group l is rows [offs[l-1], offs[l]) of A and D (offs[-1] = 0) times B[l];
//      the cursor g moves forward only (a CTA's units grow), each offset is read once per CTA ----
struct Group {{ int l, row0, row1, first, end; }};  // group l: rows [row0, row1), units [first, end)
constexpr Group kNoGroup = {{-1, 0, 0, 0, 0}};
__device__ __forceinline__ bool group_of(int unit, Group& g, int num_m, int num_n, const int* __restrict__ offs,
                                         int L, int M) {{
  const int units_n = (num_n + kClusterN - 1) / kClusterN;
  while (unit >= g.end) {{
    if (++g.l >= L) return false;
    g.row0 = g.row1;
    g.row1 = min(max(__ldg(offs + g.l), g.row0), M);   // clamped: bad offsets give empty groups, never stray rows
    g.first = g.end;
    g.end += (g.row1 - g.row0 + kClusterM * {bm} - 1) / (kClusterM * {bm}) * units_n;
  }}
  return true;
}}"""
    m_tiles = ("" if p.grouping == "k" else
               f"__device__ __forceinline__ int m_tiles(const Group& g) {{ return (g.row1 - g.row0 + {bm - 1}) / {bm}; }}\n")
    return f"""
{walk}
{m_tiles}{_next_unit(p)}"""


def _next_unit(p: GemmPlan) -> str:
    """``next_unit``: whether unit ``unit`` has work (a ping-pong warpgroup hands the tensor cores on only then);
    the cursor is a copy."""
    if not p.pingpong:
        return ""
    offs = "const int* __restrict__ offs, " if p.grouping in ("m", "k") else ""
    extent = "K" if p.grouping == "k" else "M"
    return (f"__device__ __forceinline__ bool next_unit(int unit, Group g, int num_m, int num_n, {offs}int L, "
            f"int {extent}) {{\n"
            f"  return group_of(unit, g, {_group_args(p)});\n}}\n")


def _group_args(p: GemmPlan) -> str:
    return {"m": "num_m, num_n, offs, L, M", "k": "num_m, num_n, offs, L, K"}.get(p.grouping, "num_m, num_n, L, M")


def _work(p: GemmPlan) -> str:
    """The unit's work inside its group: its M tiles (groups along M) and its k-blocks (groups along K)."""
    if p.grouping == "k":
        return "work_of(unit - g.first, num_m, num_n, k_tiles_of(g), rank)"
    return "work_of(unit - g.first, m_tiles(g), num_n, k_tiles, rank)"


def group_producer(p: GemmPlan, loads, fill) -> str:
    """The producer of a grouped kernel: the dense one's ring walk over the group scheduler's units; ``loads(op,
    tmap, tile, origin)`` gives the TMA lines of one operand (A's rows start at its group's first row; groups
    along K load at the ragged coordinates ``kc1``, ``kc2``); ``fill(body)`` the loop over a unit's k-blocks
    (:func:`cute_py.emit.gemm_sm90.ring_fill`)."""
    bk = p.tile[2]
    a_origin = "g.row0" if p.grouping == "m" else ""
    body = "\n".join(loads(p.a, "tma_a", "w.m_tile", a_origin) + loads(p.b, "tma_b", "w.n_tile", ""))
    if p.grouping == "k":                         # the ragged K coordinates (cute_py.emit.grouping.ragged_gmem)
        body = (f"      // K tile at ks with v = min({bk}, k1 - ks) valid rows: box row i < v reads row ks + i, the rest"
                f" fall past\n      // the ragged middle dimension (extent {bk}) and arrive as zeros\n"
                f"      const int ks = g.k0 + kb * {bk}, kc1 = {bk} - min({bk}, g.k1 - ks), kc2 = ks - kc1 + {bk};\n"
                + body)
    offs = ", const int* __restrict__ offs" if p.grouping in ("m", "k") else ""
    return f"""
// ---- producer: TMA coordinates from TmaParams.box_coords (tile origin per MN tile and k-block, plus each
//      issue's offset right_inverse(smem tile)(issue * box)), the group's first row and its index l as the
//      coordinate of the group mode; the ring position `it` runs on across tiles and groups ----
__device__ __forceinline__ void produce(const TmaDesc& tma_a, const TmaDesc& tma_b, u32 ring, u32 full_bars,
                                        u32 empty_bars, int num_m, int num_n, int k_tiles, u32 rank{offs},
                                        int L, int {"K" if p.grouping == "k" else "M"}) {{
  tma_prefetch_desc(&tma_a);
  tma_prefetch_desc(&tma_b);
  int it = 0;
  Group g = kNoGroup;
  for (int unit = blockIdx.x / kClusterSize; group_of(unit, g, {_group_args(p)}); unit += gridDim.x / kClusterSize) {{
    const Work w = {_work(p)};
{fill(body)}
  }}
}}
"""


def group_loop(p: GemmPlan) -> dict:
    """The consumer's lines that differ in a grouped kernel: the producer's extra arguments, the loop over the
    group scheduler's units, the unit's work, and the tile's store (groups along M: rows up to the group's end;
    a batch: batch l of D)."""
    bm, bn, _ = p.tile
    offs = ", offs" if p.grouping in ("m", "k") else ""
    m0 = f"g.row0 + wk.m_tile * {bm}" if p.grouping == "m" else f"wk.m_tile * {bm}"
    n0 = f"wk.n_tile * {bn}"
    if p.grouping == "m":                        # the group's last row bounds the stores (ragged TMA or masked)
        call = (f"store_tile_tma(acc, mt, w, {m0}, {n0}, &tma_d, bufs, ebuf, gep);" if p.epi else
                f"store_tile(acc, mt, {m0}, {n0}, d, ld_d, gep);")
        store = f"Epi gep = ep;\n      gep.M = g.row1;{' ' * 37}// the group's last row bounds the stores\n      {call}"
    elif p.epi:                                  # batch l of D: the tensor map's outer coordinate
        store = f"store_tile_tma(acc, mt, w, {m0}, {n0}, &tma_d, bufs, ebuf, ep, g.l);"
    else:
        store = f"store_tile(acc, mt, {m0}, {n0}, d + (long long)g.l * ld_dl, ld_d, ep);"
    return {"produce_args": f"{offs}, L, {'K' if p.grouping == 'k' else 'M'}",
            "units": "    Group g = kNoGroup;\n",
            "cond": f"group_of(unit, g, {_group_args(p)})",
            "work": _work(p),
            "store": store,
            # ping-pong: unit i + 1 exists (asked of a copy of the cursor)
            "hand_off": f", next_unit(unit + gridDim.x / kClusterSize, g, {_group_args(p)})" if p.pingpong else ""}
