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

__all__ = ["StreamK", "StreamKScheduler", "StreamKOver", "stream_k_of", "stream_k_walk"]


def stream_k_walk(tiles: int, k_tiles, ctas: int) -> list:
    """The units each CTA runs, as the kernel computes them: ``walk[c]`` is CTA ``c``'s list of ``(tile, kb0,
    kb1, parts)`` in order (a model of ``Scheduler::next``, for tests and pictures). ``k_tiles``: the k-blocks of
    every tile (an int), or of each tile (a sequence: groups along K, whose groups have their own K). A tile of no
    k-block counts one iteration, so it is still run (it stores zeros), unless no tile has a k-block at all. (The
    kernel decides that last case from the problem's K, not from the groups': with K > 0 and every group empty it
    runs the tiles as stream-K units of one iteration each, where the model runs them whole. Both store zeros.)

    Postcondition: every k-block of every tile is in exactly one unit, every tile in at least one, and a tile's
    units number its ``parts``.

    >>> stream_k_walk(tiles=5, k_tiles=[4, 4, 0, 2, 2], ctas=2)
    [[(0, 0, 4, 1), (2, 0, 0, 1), (3, 0, 1, 2)], [(1, 0, 4, 1), (3, 1, 2, 2), (4, 0, 2, 1)]]
    """
    ks = [k_tiles] * tiles if isinstance(k_tiles, int) else list(k_tiles)
    if min(tiles, ctas) < 1 or len(ks) != tiles or min(ks) < 0:
        raise ValueError(f"stream_k_walk: tiles = {tiles} and ctas = {ctas} must be >= 1, k_tiles = {k_tiles!r} "
                         f">= 0 (one count, or one per tile)")
    sk = _sk_tiles(tiles, max(ks), ctas)
    dp = tiles - sk
    its = [max(k, 1) for k in ks[dp:]]                  # the stream-K tiles' iterations
    first = [sum(its[:s]) for s in range(sk + 1)]       # the first iteration of stream-K tile s
    iters = first[-1]
    share = min(ctas, iters)                 # the CTAs sharing the stream-K iterations: each gets at least one

    def owner(i):
        return ((i + 1) * share - 1) // iters

    walk = []
    for c in range(ctas):
        units = [(t, 0, ks[t], 1) for t in range(c, dp, ctas)]
        it, end = (c * iters // share, (c + 1) * iters // share) if c < share else (0, 0)
        while it < end:
            s = max(j for j in range(sk) if first[j] <= it)
            k0, k1 = it - first[s], min(its[s], it - first[s] + end - it)
            parts = owner(first[s + 1] - 1) - owner(first[s]) + 1
            units.append((dp + s, min(k0, ks[dp + s]), min(k1, ks[dp + s]), parts))
            it += k1 - k0
        walk.append(units)
    return walk


def _sk_tiles(tiles: int, k_tiles: int, ctas: int) -> int:
    """The stream-K tiles: none for whole waves (or no K), all of a single partial wave, else the last two."""
    if k_tiles == 0 or tiles % ctas == 0:
        return 0
    return tiles if tiles < ctas else ctas + tiles % ctas


class StreamK(PartialTiles):
    """What the stream-K schedulers share: the rules, the walk's state and its CTA ranges, the owner of an
    iteration, the fixup through two workspace slots per CTA, and the launch (one wave). Its units come from
    :meth:`next_body` of a subclass: :class:`StreamKScheduler` for one GEMM, :func:`stream_k_of` over a group
    scheduler."""

    family = "stream_k"
    fixup_fn = "fixup_stream"

    @classmethod
    def implied_by(cls, spec) -> bool:
        return False                      # taken by name (GemmSpec(scheduler="stream_k")) or by the selection

    @classmethod
    def problems(cls, spec) -> list:
        """Stream-K's rules, after those of the scheduler it walks over (groups along M's known defect)."""
        out = super().problems(spec)
        out += [] if spec.persistent else ["scheduler = 'stream_k' needs persistent = True (the grid is one wave)"]
        return out + ([f"scheduler = 'stream_k' with split_k = {spec.split_k}: stream-K splits K itself"]
                      if spec.split_k != 1 else [])

    def header(self) -> str:
        return super().header() + ("// ---- stream-K: the first T - S tiles whole (c, c + G, ...), then the S "
                                   "stream-K tiles' iterations (tile, k-block)\n//      cut into P = min(G, I) "
                                   "ranges [b(c), b(c + 1)), b(c) = c I / P, one unit per tile a range meets "
                                   "(cute_py.emit.collectives.schedulers.stream_k) ----\n")

    def work_fields(self) -> str:
        return f"{super().work_fields()} int part, parts, c0, counter; long long t0;"

    def walk_state(self) -> list:
        return [("int", "share", "share"), ("int", "me", "me"), ("int", "dp_tiles", "units - sk"),
                ("long long", "iters", "iters"), ("long long", "it", "me < share ? me * iters / share : 0"),
                ("long long", "end", "me < share ? (me + 1) * iters / share : 0")]

    def setup(self) -> str:
        """The walked scheduler's lines, its tile count ``units``, then the stream-K tiles ``sk``, their iterations
        ``iters`` (the scheduler's :meth:`~.tile.TileScheduler.stream_iterations`) and the CTAs ``share`` that
        share them."""
        return super().setup() + self.tile_count() + f"""  const int ctas = gridDim.x / kClusterSize, me = blockIdx.x / kClusterSize;
  const int sk = (k_tiles == 0 || units % ctas == 0) ? 0 : units < ctas ? units : ctas + units % ctas;
{self.stream_iterations()["setup"]}  const int share = (int)min((long long)ctas, iters);    // the CTAs sharing them: each range holds one at least
"""

    def advance(self) -> str:
        return ""

    def members(self) -> str:
        return super().members() + """
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


class StreamKScheduler(StreamK):
    """Data-parallel whole tiles of one GEMM, then the last waves' tiles shared out by k-blocks (partial tiles
    fixed up; with K = 0, whole tiles with no k-block store zeros)."""

    name = "stream_k"

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


class StreamKOver(StreamK):
    """Stream-K over the walk of another scheduler (:func:`stream_k_of`): the base numbers the tiles and fills a
    tile's unit (its group, rows, K range); stream-K picks the tile and cuts its k-blocks. The base says how many
    tiles there are (:meth:`~.tile.TileScheduler.tile_count`) and which tile an iteration lies in
    (:meth:`~.tile.TileScheduler.stream_iterations`): every tile has ``k_tiles`` iterations, or (groups along K)
    its group's k-blocks, one at least, so an empty group's tile still stores its zeros."""

    def walk_state(self) -> list:
        return [("int", "units", "units")] + super().walk_state() + self.stream_iterations()["state"]

    def members(self) -> str:
        return super().members() + self.stream_iterations()["members"]

    def extra(self) -> str:
        return super().extra() + self.stream_iterations()["device"]

    def next_body(self) -> tuple:
        ok, fill = super().next_body("tile_unit")
        return f"""    const bool dp = unit < dp_tiles;                  // a data-parallel tile: all of its k-blocks
    const bool in_sk = !dp && it < end;               // else a stream-K unit from iteration `it`, or none left
{self.stream_iterations()["locate"]}    const int tile_unit = dp ? unit : in_sk ? dp_tiles + s : units;   // the base's tile (units: past the end)
{ok}""", fill + """
    const int kbs = w.kb1;                               // the tile's k-blocks
    const int v0 = dp ? 0 : (int)(it - t0), v1 = dp ? 0 : (int)min((long long)kt, v0 + (end - it));   // its iterations
    w.kb0 = dp ? 0 : min(v0, kbs);
    w.kb1 = dp ? kbs : min(v1, kbs);
    w.t0 = t0;                                           // the tile's first iteration
    w.c0 = dp || !ok ? 0 : owner(t0);
    w.parts = dp || !ok ? 1 : owner(t0 + kt - 1) - w.c0 + 1;
    w.part = me - w.c0;
    w.counter = s * kClusterSize + (int)rank;
    unit += dp ? (int)(gridDim.x / kClusterSize) : 0;
    it += dp ? 0 : v1 - v0;"""


def stream_k_of(base):
    """The stream-K scheduler over ``base`` (a group scheduler): named ``"stream_k_<base name>"``, taken by
    ``GemmSpec(scheduler="stream_k")`` for the problems ``base`` walks.

    >>> from .groups import GroupsAlongK
    >>> cls = stream_k_of(GroupsAlongK)
    >>> cls.name, cls.family, cls.args[-2:]
    ('stream_k_groups_k', 'stream_k', ('ws', 'counters'))
    """
    return type(f"StreamK{base.__name__}", (StreamKOver, base),
                {"name": f"stream_k_{base.name}", "args": base.args + ("ws", "counters"),
                 "__doc__": StreamKOver.__doc__})
