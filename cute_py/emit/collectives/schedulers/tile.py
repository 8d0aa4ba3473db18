"""The persistent tile scheduler: every CTA (cluster) walks the cluster tiles ``c, c + G, c + 2G, ...`` of the
problem (``G`` the clusters of the grid), in L2 bands.

Its C interface, shared by every scheduler (the skeleton and the other collectives use nothing else):

- ``struct Work``: one work unit: ``m_tile``, ``n_tile`` (this CTA's tile) and the k-blocks ``[kb0, kb1)``
  (a scheduler adds the fields its own work needs: a group's rows, a batch index, a split);
- ``struct Scheduler`` with ``bool next(Work& w)`` (the next unit of this CTA; false when it has none left),
  ``bool fetch(Work& w)`` (the same walk without a branch, for the producer: see :meth:`TileScheduler.next_body`)
  and, for the ping-pong consumers, ``bool more() const`` (whether a next unit exists);
- ``Scheduler make_scheduler(...)``: its arguments are kernel parameters (:attr:`TileScheduler.args`) and the
  CTA's cluster ``rank``; the definition and the skeleton's call are printed from the same list.

Where a unit's tile lies in the tensors is the scheduler's to say (:meth:`TileScheduler.coords`): the loads and
the stores print the expressions it gives (a group's first row, its index in the group mode).

The raster: unit ``u`` lies in band ``u / (kGroup * units across)``; consecutive units walk down M inside a
band of ``kGroup`` cluster rows (raster "m"; "n": along N inside a band of cluster columns), so the CTAs running
together share A row blocks and B column blocks in L2.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> s = TileScheduler(gemm_plan(GemmSpec()))
>>> s.args, "bool next(Work& w)" in s.device()
(('M', 'N', 'K'), True)
"""

from __future__ import annotations

from ...cprint import commented
from ....layouts.int_tuple import ceil_div
from ..base import Collective

__all__ = ["TileScheduler"]


class TileScheduler(Collective):
    """Persistent data-parallel tiles: one unit per cluster tile, all of K."""

    kind = "scheduler"
    name = "tile"
    args = ("M", "N", "K")
    """The kernel parameters ``make_scheduler`` takes (besides the cluster rank)."""
    may_be_empty = False
    """Whether a unit may have no k-block (the mainloop then zeroes the accumulators: a split with no K)."""

    @classmethod
    def walks(cls, spec) -> bool:
        """Whether its walk covers ``spec``'s problem: one GEMM (a batch, groups: the group schedulers)."""
        return spec.grouping is None

    @classmethod
    def implied_by(cls, spec) -> bool:
        """Whether ``spec`` names no scheduler and this is the one its other fields imply."""
        return cls.walks(spec) and spec.split_k == 1

    # -- the device code -----------------------------------------------------------------------------------------
    def work_fields(self) -> str:
        return "int m_tile, n_tile, kb0, kb1;"

    def state(self) -> list:
        """``(C type, name, initial value)`` of the scheduler's state besides ``unit`` and ``rank``."""
        return [("int", "units", "((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN)"),
                ("int", "num_m", "num_m"), ("int", "num_n", "num_n"), ("int", "k_tiles", "k_tiles")]

    def next_body(self, unit: str = "unit") -> tuple:
        """The two parts of ``next`` and ``fetch``: the lines defining ``ok`` (whether this CTA has a unit left),
        and those filling ``w`` from the unit ``unit`` (a C expression: split-K passes its base unit), right whether or not ``ok`` (``place`` takes any unit). ``next``
        returns between the two when not ``ok``, which
        the consumers' loop needs (without it the compiler stopped unrolling an epilogue and gave it a 256-byte
        stack frame); ``fetch`` has no branch, which the producer's loop needs (with one, or with a select on
        ``ok``, the compiler treats it as divergent and converts the TMA coordinates to uniform registers inside
        every copy's elect loop: 5% slower on MN-major 128x128 tiles; benchmarks/NOTES.md, version 9)."""
        return (f"    const bool ok = {unit} < units;",
                f"    place({unit}, num_m, num_n, rank, w);\n    w.kb0 = 0;\n    w.kb1 = k_tiles;")

    def tile_slot(self, unit: str) -> str:
        """A C expression numbering the CTA tile of ``w`` (base unit ``unit``) uniquely in ``[0, units x
        kClusterSize)``: the workspace slot of a split tile. Here its index in the grid of cluster-padded tiles
        (from ``w``'s tile, which keeps the unit's registers free: numbering by ``unit`` made ptxas spill 48 bytes
        in the split-K fp8 and ping-pong kernels)."""
        return "w.m_tile * (((num_n + kClusterN - 1) / kClusterN) * kClusterN) + w.n_tile"

    def slot_layout(self) -> tuple:
        """``(line, slot)``: where split ``j`` of ``wk``'s tile keeps its partial tile, as a C line run first (from
        the ``Scheduler s``) and a format of the slot's index with ``{j}``. Here split-major over the
        cluster-padded tiles: the text the split-K kernels were measured with (tile-major spilled 12 bytes in the
        split-K ping-pong kernel)."""
        return ("const int tiles = ((s.num_m + kClusterM - 1) / kClusterM) * kClusterM *\n"
                "                    ((s.num_n + kClusterN - 1) / kClusterN) * kClusterN;   // cluster-padded",
                "(long long){j} * tiles + wk.tile")

    def members(self) -> str:
        """Member functions of ``Scheduler`` besides ``next`` and ``more`` ("" for none)."""
        return ""

    def advance(self) -> str:
        """The end of ``next`` after ``next_body``: step to this CTA's next unit."""
        return "\n    unit += gridDim.x / kClusterSize;"

    def setup(self) -> str:
        """Lines of ``make_scheduler`` before its return: the problem's tiles."""
        return ("  const int num_m = (M + kBM - 1) / kBM, num_n = (N + kBN - 1) / kBN;\n"
                "  const int k_tiles = (K + kBK - 1) / kBK;\n")

    def header(self) -> str:
        p = self.p
        cm, cn = p.cluster
        band = "cluster rows" if p.raster == "m" else "cluster columns"
        walk = "down M" if p.raster == "m" else "along N"
        return (f"// ---- scheduler ({self.name}): persistent CTAs (clusters {cm}x{cn}; CTA rank r takes M sub-tile "
                f"r % kClusterM, N sub-tile r / kClusterM)\n//      walk the cluster tiles c, c + G, ... (G = "
                f"gridDim.x / kClusterSize clusters); raster {p.raster}: bands of {p.group} {band},\n//      "
                f"consecutive units walk {walk} inside a band, so the CTAs running together share A row blocks and "
                f"B column blocks in L2 ----\n")

    def place(self) -> str:
        """``place``: cluster tile ``unit`` of ``num_m x num_n`` tiles, in L2 bands, as this CTA's tile."""
        along, across = ("m", "n") if self.p.raster == "m" else ("n", "m")
        return f"""// cluster tile `unit` of the problem, in L2 bands of kGroup: this CTA's M and N tiles
__device__ __forceinline__ void place(int unit, int num_m, int num_n, u32 rank, Work& w) {{
  const int units_m = (num_m + kClusterM - 1) / kClusterM, units_n = (num_n + kClusterN - 1) / kClusterN;
  const int per_group = kGroup * units_{across};
  const int first = (unit / per_group) * kGroup;
  const int width = max(min(units_{along} - first, kGroup), 1);     // >= 1 also for a unit past the end
  const int r = unit % per_group;
  const int u{along} = first + r % width, u{across} = r / width;
  w.m_tile = um * kClusterM + (int)(rank % kClusterM);
  w.n_tile = un * kClusterN + (int)(rank / kClusterM);
}}
"""

    # -- the walk as iterations: what stream-K over this scheduler asks (:mod:`.stream_k`) -------------------------
    def tile_count(self) -> str:
        """Lines of ``make_scheduler`` defining ``units``: the problem's cluster tiles, numbered as the walk numbers
        its units."""
        return "  const int units = ((num_m + kClusterM - 1) / kClusterM) * ((num_n + kClusterN - 1) / kClusterN);\n"

    def stream_iterations(self) -> dict:
        """How stream-K cuts this walk's last ``sk`` tiles (from ``units - sk``) into iterations: ``setup`` (lines
        of ``make_scheduler`` defining ``iters``, their number), ``state`` (rows the lookup needs), ``locate``
        (lines defining, from iteration ``it`` when ``in_sk``, the stream-K tile ``s``, its first iteration ``t0``
        and its iterations ``kt``), ``members`` (member functions they call) and ``device`` (functions printed
        before ``Scheduler``). Here every tile has ``k_tiles``
        iterations (``sk`` is 0 when ``k_tiles`` is)."""
        return {"setup": "  const long long iters = (long long)sk * k_tiles;       // the stream-K tiles' (tile, k-block) "
                         "iterations\n",
                "state": [], "members": "", "device": "",
                "locate": "    const int kt = k_tiles;                            // a tile's iterations: its k-blocks\n"
                          "    const int s = in_sk ? (int)(it / max(kt, 1)) : 0;  // the stream-K tile `it` lies in\n"
                          "    const long long t0 = (long long)s * kt;\n"}

    def extra(self) -> str:
        """Device code a subclass adds after ``place`` (its own helpers)."""
        return ""

    def device(self) -> str:
        ok, fill = self.next_body()
        state = self.state()
        fields = "; ".join(f"{t} {n}" for t, n, _ in state)
        init = ", ".join(v for _, _, v in state)
        params = {x.name: x.decl for x in self.p.params}
        sig = ", ".join([params[a] for a in self.args] + ["u32 rank"])
        more = ("\n  // whether this CTA has a next unit (asked of a copy: the state does not move)\n"
                "  __device__ __forceinline__ bool more() const { Scheduler s = *this; Work w; return s.next(w); }"
                if self.p.pingpong else "")
        return f"""
{self.header()}{commented(f"constexpr int kGroup = {self.p.group};", "the L2 band width, in clusters", 40)}
struct Work {{ {self.work_fields()} }};
{self.place()}{self.extra()}struct Scheduler {{
  int unit; u32 rank; {fields};
  // this CTA's next work unit into w; false when it has none left
  __device__ __forceinline__ bool next(Work& w) {{
{ok}
    if (!ok) return false;
{fill}{self.advance()}
    return true;
  }}
  // the same walk without a branch (w holds no unit once ok is false): the producer's, so that its loop stays
  // uniform and the TMA coordinates stay in uniform registers
  __device__ __forceinline__ bool fetch(Work& w) {{
{ok}
{fill}{self.advance()}
    return ok;
  }}{self.members()}{more}
}};
__device__ __forceinline__ Scheduler make_scheduler({sig}) {{
{self.setup()}  return {{(int)(blockIdx.x / kClusterSize), rank, {init}}};
}}
{self.fixup_device()}"""

    def fixup_device(self) -> str:
        """The fixup's device function, printed after ``Scheduler`` (it reads the scheduler's state)."""
        return ""

    def shared(self) -> str:
        """The scheduler's static shared memory, declared in the skeleton's setup ("" for none)."""
        return ""

    def call(self) -> str:
        """The skeleton's construction of this CTA's scheduler (every thread: each role walks its own copy)."""
        return f"Scheduler sched = make_scheduler({', '.join(self.args)}, rank);"

    def coords(self, w: str = "w") -> dict:
        """Where unit ``w`` (the C name of a ``Work``)'s tile lies: ``m_origin`` (the first row of the M tiles, "" for row 0), ``l`` (the
        coordinate of a group mode, None without one), ``m_end`` (the rows past which nothing is stored, None:
        M), ``k_prologue`` and ``k_coords`` (a ragged K load's lines and coordinates, :mod:`cute_py.emit.collectives.schedulers.groups`),
        ``k_range`` (a K tile's origin and its valid K columns ``[first, end)``, as C expressions; None: origin
        ``kb * kBK``, columns ``[0, K)``)."""
        return {"m_origin": "", "l": None, "m_end": None, "k_prologue": "", "k_coords": None, "k_range": None}

    def fixup(self) -> str:
        """The consumer's lines after the mainloop: combine a partial tile, or ``continue`` when another CTA
        finishes it ("" for a scheduler whose units are whole tiles)."""
        return ""

    # -- bind ----------------------------------------------------------------------------------------------------
    @classmethod
    def gmem_maps(cls, plan, problem, maps: dict) -> tuple:
        """``(maps, byte offsets)``: the concrete ``(shape, strides)`` of the tensor maps of ``a``, ``b`` and ``d``
        for the problems this scheduler walks (a group mode, a ragged map), and the bytes added to an operand's
        address for its map (a ragged map starts before it). One GEMM's maps are the plain ones."""
        return maps, {}

    @classmethod
    def units(cls, plan, M: int, N: int, L: int) -> int:
        """Work units of a problem (the grid launches at most as many CTAs, times the cluster size)."""
        bm, bn, _ = plan.tile
        cm, cn = plan.cluster
        return ceil_div(M, bm * cm) * ceil_div(N, bn * cn)

    @classmethod
    def ctas(cls, units: int, wave: int) -> int:
        """Clusters a persistent launch runs: one per unit, at most one wave of resident clusters."""
        return min(units, wave)

    @classmethod
    def workspace(cls, plan, units: int, ctas: int) -> tuple:
        """``(f32 floats, int counters)`` of the workspace a launch of ``ctas`` clusters over ``units`` work units
        needs ((0, 0): none)."""
        return 0, 0
