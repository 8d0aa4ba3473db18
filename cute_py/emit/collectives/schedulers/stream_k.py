"""Stream-K: data-parallel whole tiles, then the tiles of the last waves shared out by k-blocks, so every CTA
gets the same work and no wave runs part-empty.

With ``T`` cluster tiles of ``KT`` k-blocks on ``G`` persistent clusters (``gridDim.x / kClusterSize``):
if ``T % G == 0`` every tile is one unit, as in :class:`~.tile.TileScheduler`. Otherwise the last
``S = T % G + G`` tiles (all ``T`` when ``T < G``) are the *stream-K* tiles: their ``I = S KT`` k-block
iterations, in tile order, are cut into ``P = min(G, I)`` contiguous ranges (so none is empty), CTA ``c < P``
taking iterations ``[b(c), b(c + 1))`` with ``b(c) = c I / P``; the first ``T - S`` tiles are walked as whole
tiles first. A range splits into one unit per tile it meets; the iteration ``i`` belongs to CTA
``owner(i) = ((i + 1) P - 1) / I``, so the parts of tile ``s`` are the CTAs ``owner(s KT) .. owner((s + 1) KT
- 1)``. A tile of one
part is stored as it is; the parts of a shared tile meet in the f32 workspace
(:func:`~.split_k.partials_fixup`): each CTA has two slots, for its range's first unit and for its last, so a
part's slot is ``2 c + (b(c) < s KT)``, and the part that arrives last adds the others and stores the tile.

Each CTA's work is ``floor(T / G) - 1 + S / G = T / G`` tiles (the data-parallel walk takes ``ceil(T / G)``),
plus the fixups of at most two shared tiles. The scheme is CUTLASS's "data-parallel + stream-K" hybrid
(``PersistentTileSchedulerSm90StreamK``, one stream-K wave after the data-parallel ones); written here from its
description.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> stream_k_walk(tiles=9, k_tiles=4, ctas=4)[0]          # 2 whole tiles, then 5 stream-K tiles of 4 k-blocks
[(0, 0, 4, 1), (4, 0, 4, 1), (5, 0, 1, 2)]
>>> stream_k_walk(tiles=9, k_tiles=4, ctas=4)[1]
[(1, 0, 4, 1), (5, 1, 4, 2), (6, 0, 2, 2)]
"""

from __future__ import annotations

from .split_k import PartialTiles

__all__ = ["StreamKScheduler", "stream_k_walk"]


def stream_k_walk(tiles: int, k_tiles: int, ctas: int) -> list:
    """The units each CTA runs, as the kernel computes them: ``walk[c]`` is CTA ``c``'s list of ``(tile, kb0,
    kb1, parts)`` in order (a model of ``Scheduler::next``, for tests and pictures).

    Postcondition: every k-block of every tile is in exactly one unit, and a tile's units number its ``parts``.
    """
    if min(tiles, ctas) < 1 or k_tiles < 0:
        raise ValueError(f"stream_k_walk: tiles = {tiles} and ctas = {ctas} must be >= 1, k_tiles = {k_tiles} >= 0")
    sk = _sk_tiles(tiles, k_tiles, ctas)
    dp, iters = tiles - sk, sk * k_tiles
    share = min(ctas, iters)                 # the CTAs sharing the stream-K iterations: each gets at least one

    def owner(i):
        return ((i + 1) * share - 1) // iters

    walk = []
    for c in range(ctas):
        units = [(t, 0, k_tiles, 1) for t in range(c, dp, ctas)]
        it, end = (c * iters // share, (c + 1) * iters // share) if c < share else (0, 0)
        while it < end:
            t, kb0 = it // k_tiles, it % k_tiles
            kb1 = min(k_tiles, kb0 + end - it)
            units.append((dp + t, kb0, kb1, owner(t * k_tiles + k_tiles - 1) - owner(t * k_tiles) + 1))
            it += kb1 - kb0
        walk.append(units)
    return walk


def _sk_tiles(tiles: int, k_tiles: int, ctas: int) -> int:
    """The stream-K tiles: none for whole waves (or no K), all of a single partial wave, else the last two."""
    if k_tiles == 0 or tiles % ctas == 0:
        return 0
    return tiles if tiles < ctas else ctas + tiles % ctas


class StreamKScheduler(PartialTiles):
    """Data-parallel whole tiles, then the last waves' tiles shared out by k-blocks (partial tiles fixed up; with
    K = 0, whole tiles with no k-block store zeros)."""

    name = "stream_k"
    fixup_fn = "fixup_stream"

    @classmethod
    def implied_by(cls, spec) -> bool:
        return False                      # taken by name (GemmSpec(scheduler="stream_k")) or by the selection

    @classmethod
    def problems(cls, spec) -> list:
        out = [] if spec.persistent else ["scheduler = 'stream_k' needs persistent = True (the grid is one wave)"]
        out += [f"scheduler = 'stream_k' with split_k = {spec.split_k}: stream-K splits K itself"] \
            if spec.split_k != 1 else []
        out += ["scheduler = 'stream_k' walks one GEMM; grouped and batched kernels use their group schedulers"] \
            if spec.grouping else []
        return out

    def header(self) -> str:
        return super().header() + ("// ---- stream-K: the first T - S tiles whole (c, c + G, ...), then the S "
                                   "stream-K tiles' iterations (tile, k-block)\n//      cut into P = min(G, I) "
                                   "ranges [b(c), b(c + 1)), b(c) = c I / P, one unit per tile a range meets "
                                   "(cute_py.emit.collectives.schedulers.stream_k) ----\n")

    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1, part, parts, c0, counter; long long t0;"

    def walk_state(self) -> list:
        return [("int", "share", "share"), ("int", "me", "me"), ("int", "dp_tiles", "units - sk"),
                ("long long", "iters", "iters"), ("long long", "it", "me < share ? me * iters / share : 0"),
                ("long long", "end", "me < share ? (me + 1) * iters / share : 0")]

    def setup(self) -> str:
        return super().setup() + """  const int units = ((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN);
  const int ctas = gridDim.x / kClusterSize, me = blockIdx.x / kClusterSize;
  const int sk = (k_tiles == 0 || units % ctas == 0) ? 0 : units < ctas ? units : ctas + units % ctas;
  const long long iters = (long long)sk * k_tiles;       // the stream-K tiles' (tile, k-block) iterations
  const int share = (int)min((long long)ctas, iters);    // the CTAs sharing them: each range holds one at least
"""

    def next_body(self) -> str:
        return ("    const bool dp = unit < dp_tiles;                  // a data-parallel tile: all of its k-blocks\n"
                "    const bool ok = dp || it < end;"), """    const int s = dp ? 0 : (int)(it / max(k_tiles, 1));  // the stream-K tile iteration `it` lies in
    place(dp ? unit : (ok ? dp_tiles + s : 0), num_m, num_n, rank, w);
    w.kb0 = dp ? 0 : (int)(it % max(k_tiles, 1));
    w.kb1 = dp ? k_tiles : (int)min((long long)k_tiles, w.kb0 + (end - it));
    w.t0 = (long long)s * k_tiles;                      // the tile's first iteration
    w.c0 = dp || !ok ? 0 : owner(w.t0);
    w.parts = dp || !ok ? 1 : owner(w.t0 + k_tiles - 1) - w.c0 + 1;
    w.part = me - w.c0;
    w.counter = s * kClusterSize + (int)rank;
    unit += dp ? (int)(gridDim.x / kClusterSize) : 0;
    it += dp ? 0 : w.kb1 - w.kb0;"""

    def advance(self) -> str:
        return ""

    def members(self) -> str:
        return """
  // the CTA whose range holds stream-K iteration i
  __device__ __forceinline__ int owner(long long i) const { return (int)(((i + 1) * share - 1) / iters); }"""

    def fixup_device(self) -> str:
        return """// the part of a shared tile run by CTA c: its range's first unit (slot 0) or its last (slot 1), per cluster rank
__device__ __forceinline__ long long part_slot(const Scheduler& s, int c, long long t0) {
  return (2LL * c + (c * s.iters / s.share < t0 ? 1 : 0)) * kClusterSize + s.rank;
}
__device__ __forceinline__ bool fixup_stream(float (&acc)[kMBlocks][kAccPerBlock], int t, int g, const Scheduler& s,
                                             const Work& wk, volatile int* flag) {
  if (wk.parts == 1) return true;                      // a whole tile: nothing to combine
  return reduce_partials(acc, t, g, s.ws, s.counters + wk.counter, part_slot(s, wk.c0 + wk.part, wk.t0), wk.part,
                         wk.parts, [&](int j) { return part_slot(s, wk.c0 + j, wk.t0); }, flag);
}
"""

    @classmethod
    def ctas(cls, units: int, wave: int) -> int:
        """A whole wave of clusters: the stream-K tiles are shared out over all of them."""
        return wave

    @classmethod
    def workspace(cls, plan, units: int, ctas: int) -> tuple:
        """Two partial tiles per cluster CTA, and a counter per stream-K tile (fewer than ``2 ctas``) and rank."""
        bm, bn, _ = plan.tile
        cs = plan.cluster_size
        return 2 * ctas * cs * bm * bn, 2 * ctas * cs
