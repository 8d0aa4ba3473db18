"""The producer: one elected thread (or, with operands read without TMA, the whole producer warpgroup) walks
this CTA's work units and fills the ring, one stage per k-block; each operand has its load strategy.

- TMA (the default): one thread expects the stage's bytes on its full barrier and issues the operand's TMA
  copies; coordinates from ``TmaParams.box_coords`` (the tile origin per MN tile and k-block, plus each issue's
  offset ``right_inverse(smem tile)(issue * box)``), the scheduler's tile origin and group coordinate
  (:meth:`~cute_py.emit.collectives.schedulers.tile.TileScheduler.coords`); with a multicast, one branch per
  cluster rank.
- loads by the producer threads (``GemmSpec(load_a=V)``, :mod:`cute_py.emit.loads`): every thread copies its
  share of the stage tile to the smem layout's byte offsets and announces it on the full barrier (one stage
  later with ``cp.async``, so a thread always has a stage of copies in flight).
- blockwise scales (:mod:`cute_py.emit.blockscale`): one more TMA box per stage, the tile's BM rows of scale_a at
  the stage's K block, into the stage's scale slot (its bytes are in the stage's transaction count).

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> from cute_py.emit.collectives.schedulers import TileScheduler
>>> p = gemm_plan(GemmSpec())
>>> print(load_lines(p.a, "stage", "kb", "      ", TileScheduler(p).coords())[1])
      tma_load_2d(stage + kOffA + 0u, &tma_a, full, kb * kBK, w.m_tile * kBM);
"""

from __future__ import annotations

from ...grouping import carries_group_mode
from ...loads import direct_load, lag, load_wrappers
from ...resources import WARPGROUP_THREADS
from ...scaling import scale_a_pad
from ..base import tile_row

__all__ = ["load_lines", "Producer"]

_EXTENT = {"A": "kBM", "B": "kBN"}


def _step(n: int, named: dict) -> str:
    """``n`` by the name of the tile extent it equals (kBM, kBN, kBK), else the number."""
    return named.get(n, str(n))


def load_lines(op, stage_expr: str, k_tile: str, indent: str, coords: dict) -> list:
    """The TMA issues of operand ``op`` (an :class:`~cute_py.emit.plan.OperandPlan`) for one stage; with a
    multicast, one branch per cluster rank. ``coords``: the scheduler's
    :meth:`~cute_py.emit.collectives.schedulers.tile.TileScheduler.coords` of the unit ``w``: A's
    tiles start at row ``m_origin``, a dimension over the group mode L (gmem mode 2) takes ``l``, and a ragged
    operand (groups along K, :func:`cute_py.emit.grouping.ragged_gmem`) the ``k_coords`` for its K modes."""
    t, mc, bk = op.tma, op.tma.multicast, op.block[1]
    which = op.which
    mn_tile = "w.m_tile" if which == "A" else "w.n_tile"
    mn_origin = coords["m_origin"] if which == "A" else ""
    ragged = coords["k_coords"]
    named = {op.block[0]: _EXTENT[which]}
    head = (f"{indent}// {which}: TmaParams box {t.box_dim} over gmem modes {t.gmem_modes} "
            f"({'MN' if t.gmem_modes[0] == 0 else 'K'} innermost), swizzle {t.swizzle}; box layout {t.box_layout}")
    if mc > 1:
        head += f"\n{indent}// multicast to the {mc} CTAs sharing this tile: each issues slice (rank) of every box"

    def issue(off, coord):
        cs = []
        for i, c in enumerate(coord):
            smn, sk = op.tile_step[i]
            terms = [f"{mn_tile} * {_step(smn, named)}" if smn else "", f"{k_tile} * {_step(sk, {bk: 'kBK'})}" if sk
                     else "", str(c) if c else ""]
            if t.gmem_modes[i] == 0 and mn_origin:
                terms.insert(0, mn_origin)
            if ragged and t.gmem_modes[i] in (1, 2):
                cs.append(" + ".join(x for x in (ragged[t.gmem_modes[i] - 1], str(c) if c else "") if x))
            else:
                cs.append(coords["l"] if t.gmem_modes[i] == 2 else " + ".join(x for x in terms if x) or "0")
        args = f"{stage_expr} + kOff{which} + {off}u, &tma_{which.lower()}, full, {', '.join(cs)}"
        return f"tma_load_{t.rank}d_mc({args}, kMcastMask);" if mc > 1 else f"tma_load_{t.rank}d({args});"

    lines = [head]
    if mc == 1:
        return lines + [indent + issue(off, coord) for off, coord in op.copies[0]]
    rank = "rank % kClusterM" if which == "B" else "rank / kClusterM"
    for r, copies in enumerate(op.copies):
        kw = "if" if r == 0 else "} else if" if r < mc - 1 else "} else"
        cond = f" ({rank} == {r})" if r < mc - 1 else ""
        lines.append(f"{indent}{kw}{cond} {{")
        lines += [indent + "  " + issue(off, coord) for off, coord in copies]
    return lines + [indent + "}"]


class Producer:
    """The producer role of a mainloop: ``device()`` prints ``produce``, ``call()`` the skeleton's call of it."""

    def __init__(self, plan, coords: dict):
        self.p, self.coords = plan, coords
        self.direct = [op for op in (plan.a, plan.b) if op.load]
        self.tma_ops = [op for op in (plan.a, plan.b) if not op.load]

    def _signature(self) -> tuple:
        """The parameters of ``produce`` and the kernel's arguments for them: per operand a tensor map, or
        (loaded by the producer threads) a pointer and a leading dimension; then the extents the direct loads
        mask by and the thread."""
        params, args = [], []
        for op in (self.p.a, self.p.b):
            x = op.which.lower()
            if op.load:
                grouped = [f"ld_{x}l"] if carries_group_mode(self.p.spec, x) else []
                params += [f"const u8* __restrict__ {x}", f"long long ld_{x}"] + [f"long long {n}" for n in grouped]
                args += [x, f"ld_{x}"] + grouped
            else:
                params.append(f"const TmaDesc& tma_{x}")
                args.append(f"tma_{x}")
        if self.p.scale == "block":
            params += ["const TmaDesc& tma_sa", "u32 sa_slots"]
            args += ["tma_sa", "smem_u32(scale_smem)"]
        params += ["const Ring& ring", "Scheduler sched"]
        args += ["ring", "sched"]
        if self.direct:
            params += ["int M", "int N", "int K", "int t"]
            args += ["M", "N", "K", "threadIdx.x"]
        return params, args

    def call(self) -> str:
        _, args = self._signature()
        if self.direct:
            return ("    // ---- producer::load: every thread copies its share, thread 0 issues the TMA loads ----\n"
                    f"    produce({', '.join(args)});\n")
        return ("    // ---- producer::load: one elected thread issues every copy ----\n"
                f"    if (threadIdx.x == 0)\n      produce({', '.join(args)});\n")

    def _stage_body(self, ind: str) -> str:
        """One stage's loads: the TMA issues (by thread 0 when the threads load too) and the direct copies."""
        p = self.p
        tma = [line for op in self.tma_ops for line in load_lines(op, "stage", "kb", ind, self.coords)]
        tma += self._scale_lines(ind)
        body = [ind + "mbar_arrive_expect_tx(full, kTxBytes);"] + tma
        if not self.direct:
            return "\n".join(body)
        out = ([f"{ind}if (t == 0) {{"] + ["  " + line for line in body] + [f"{ind}}}"]) if tma else \
            [f"{ind}if (t == 0) mbar_arrive_expect_tx(full, 0u);"]
        c = self.coords
        origin, k_lo, k1 = c["k_range"] or ("kb * kBK", None, "K")
        for op in self.direct:
            x = op.which.lower()
            if op.which == "A":        # a group's rows: from its first, masked at its end
                mn = tile_row(c, "w")
                end = c["m_end"] or "M"
            else:
                mn, end = "w.n_tile * kBN", "N"
            src = f"{x} + (long long){c['l']} * ld_{x}l * {op.tma.dtype.bits // 8}" if \
                carries_group_mode(self.p.spec, x) else x            # the group's matrix of an operand with mode L
            lo = f"{k_lo}, " if k_lo else ""                        # a group's K columns (groups along K)
            out.append(f"{ind}load_tile_{op.which}(stage + kOff{op.which}, {src}, ld_{x}, {mn}, {origin}, {end}, "
                       f"{lo}{k1}, t);")
        if lag(p):
            out += [f"{ind}cp_async_commit();",
                    f"{ind}if (ps.count > 0) {{                             // the previous stage's copies have landed",
                    f"{ind}  cp_async_wait<1>();", f"{ind}  fence_proxy_async();",
                    f"{ind}  mbar_arrive(ring.full_bar(ps.stage_before()));", f"{ind}}}"]
        else:
            out += [f"{ind}fence_proxy_async();                          // the stores are visible to wgmma",
                    f"{ind}mbar_arrive(full);"]
        return "\n".join(out)

    def _scale_lines(self, ind: str) -> list:
        """With blockwise scales, the stage's scale_a box: the tile's rows at K block ``kb`` (a batch's matrix
        ``l``) into the stage's slot."""
        sa = self.p.promotion.sa_tma if self.p.promotion else None
        if sa is None:
            return []
        c = self.coords
        m0 = tile_row(c, "w")
        if scale_a_pad(self.p.spec):             # the box starts on a 16-byte boundary at or before the tile's row
            m0 = f"({m0}) / kScaleAPad * kScaleAPad"
        coords = f"{m0}, kb" + (f", {c['l']}" if sa.rank == 3 else "")
        return [f"{ind}// scale_a: TmaParams box {sa.box_dim} over (M, KB{', L' if sa.rank == 3 else ''}), the tile's "
                f"rows at K block kb, into the stage's scale slot",
                f"{ind}tma_load_{sa.rank}d(sa_slots + s * kScaleSlotBytes, &tma_sa, full, {coords});"]

    def device(self) -> str:
        p = self.p
        params, _ = self._signature()
        guard = "  if (t == 0) " if self.direct else "  "
        prefetch = "".join(f"{guard}tma_prefetch_desc(&tma_{x});\n" for x in
                           [op.which.lower() for op in self.tma_ops] + (["sa"] if p.scale == "block" else []))
        rank = "  const u32 rank = sched.rank;\n" if p.mcast_mask else ""
        mcast = (f"constexpr u16 kMcastMask = {p.mcast_mask:#x};      // ctaMask of a multicast TMA load: the ranks "
                 f"sharing the box\n" if p.mcast_mask else "")
        drain = ("  if (ps.count > 0) {                                  // the last stage's copies\n"
                 "    cp_async_wait<0>();\n    fence_proxy_async();\n"
                 "    mbar_arrive(ring.full_bar(ps.stage_before()));\n  }\n") if self.direct and lag(p) else ""
        who = (f"all {WARPGROUP_THREADS} threads of warpgroup 0 (thread 0 also expects the TMA bytes and issues the "
               f"TMA loads)" if self.direct else "one elected thread")
        prologue = self.coords["k_prologue"]
        lower = bool(self.coords["k_range"] and self.coords["k_range"][1])
        loads = "".join([load_wrappers()] + [direct_load(op, lower) for op in self.direct]) if self.direct else ""
        return loads + f"""
// ---- producer: {who} walks this CTA's work units and fills the ring,
//      one stage per k-block; the stage position ps runs on across units ----
{mcast}__device__ __forceinline__ void produce({", ".join(params)}) {{
{prefetch}{rank}  PipelineState ps = {{0}};
  for (Work w; sched.fetch(w);) {{
    for (int kb = w.kb0; kb < w.kb1; ++kb, ++ps.count) {{
      const int s = ps.stage();
      const u32 stage = ring.stage(s), full = ring.full_bar(s);
      ring.acquire(ps);
{prologue}{self._stage_body("      ")}
    }}
  }}
{drain}}}
"""
