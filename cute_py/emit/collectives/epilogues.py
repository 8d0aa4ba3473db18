"""The epilogues: the ops on a finished tile's accumulators (alpha with the per-tensor scales folded in,
row-wise scales, beta * C, a bias per row or column, an activation, the conversion to D's type) and a store
policy: TMA stores through swizzled staging buffers, or masked stores from registers. The device code is
printed by :mod:`cute_py.emit.epilogue` from the plan's checked facts (:mod:`cute_py.emit.epilogue_plan`).

Where a unit's tile goes is the scheduler's to say (:meth:`TileScheduler.coords
<cute_py.emit.collectives.schedulers.tile.TileScheduler.coords>`): its first row, the group's end row (groups
along M store through a ragged tensor map, so a group's last tile writes no row of the next group) and the
batch coordinate of a D with a group mode.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> from cute_py.emit.collectives.schedulers import TileScheduler
>>> p = gemm_plan(GemmSpec())
>>> TmaStore(p, TileScheduler(p)).store().strip()
'store_tile_tma(acc, mt, w, wk.m_tile * kBM, wk.n_tile * kBN, &tma_d, bufs, ebuf, ep);'
"""

from __future__ import annotations

from ..cprint import commented
from ..epilogue import epi_init, epilogue
from ..grouping import BATCH, carries_group_mode
from ..params import KernelParam
from .base import Collective, tile_row

__all__ = ["TmaStore", "Direct", "EPILOGUES", "epilogue_class"]


class Epilogue(Collective):
    """What both store policies share: the ops, the output's parameters, the per-unit lines."""

    kind = "epilogue"

    def __init__(self, plan, scheduler):
        super().__init__(plan)
        self.coords = scheduler.coords("wk")

    @classmethod
    def params(cls, spec) -> tuple:
        store_t = "float" if spec.out_dtype == "f32" else "u16"
        rows = [KernelParam("d", "pointer", store_t), KernelParam("c", "pointer", f"const {store_t}"),
                KernelParam("bias", "pointer", f"const {store_t}"), KernelParam("ld_d", "s64"),
                KernelParam("ld_c", "s64")]
        grouped_d = carries_group_mode(spec, "c")
        rows += [KernelParam("ld_dl", "s64")] if grouped_d else []                 # D's group mode stride
        rows += [KernelParam("ld_cl", "s64")] if grouped_d and spec.beta else []   # C's group mode stride
        rows += [KernelParam("bias_l", "s64")] if spec.grouping and spec.bias else []     # the bias's group stride
        return tuple(rows + [KernelParam("alpha", "f32"), KernelParam("beta", "f32")])

    def device(self) -> str:
        return epilogue(self.p, self.coords)

    def setup(self) -> str:
        """The consumer role's setup: the epilogue's operands."""
        return f"    const Epi ep = {epi_init(self.p)};\n"

    def origin(self) -> tuple:
        """The C expressions of the unit's first row and column in D."""
        return tile_row(self.coords, "wk"), "wk.n_tile * kBN"

    def scale(self) -> str:
        """Row-wise scales of a finished tile (fp8 ``scale='row'``), before the ops."""
        if self.p.scale != "row":
            return ""
        m0, n0 = self.origin()
        l = self.coords["l"]
        sa = f"scale_a + {l} * sa_l" if self.p.spec.grouping == BATCH else "scale_a"
        sb = f"scale_b + {l} * sb_l" if l else "scale_b"
        return f"      scale_acc(acc, mt, {m0}, {n0}, {sa}, {sb}, sa_m, sb_n, M, N);\n"

    def group_epi(self) -> list:
        """``(C statement, why)`` of each field of the unit's ``Epi`` that its group changes: the group's end row
        (groups along M), its C (a C with the group mode) and its bias (``bias_l`` elements apart; 0: one bias
        for every group)."""
        c, out = self.coords, self.p.out
        fixes = [(f"gep.M = {c['m_end']};", "the group's last row bounds the stores")] if c["m_end"] else []
        if c["l"] and out.beta and carries_group_mode(self.p.spec, "c"):
            fixes.append((f"gep.c = ep.c + (long long){c['l']} * ld_cl;", "the group's C"))
        if c["l"] and out.bias:
            fixes.append((f"gep.bias = ep.bias + (long long){c['l']} * bias_l;",
                          "the group's bias (bias_l = 0: one for all)"))
        return fixes

    def store(self) -> str:
        """The store of a finished tile (the subclass's ``store_call`` with the ``Epi`` it reads); in a grouped or
        batched kernel, a copy of ``ep`` with the fields the unit's group changes (:meth:`group_epi`)."""
        fixes = self.group_epi()
        if not fixes:
            return self.store_call("ep")
        lines = "".join(f"\n      {commented(x, why, 52)}" for x, why in fixes)
        return f"Epi gep = ep;{lines}\n      {self.store_call('gep')}"

    def per_unit(self) -> str:
        """The consumer's lines per finished unit: the scales, then the store."""
        return f"{self.scale()}      {self.store()}\n"

    def finish(self) -> str:
        """The consumer role's last lines, after its units."""
        return ""


class TmaStore(Epilogue):
    """Each consumer warpgroup stages 64-row chunks of D in swizzled smem; one thread stores each with TMA."""

    name = "tma_store"

    @classmethod
    def params(cls, spec) -> tuple:
        return (KernelParam("tma_d", "tensormap"),) + super().params(spec)

    @classmethod
    def barriers(cls, spec) -> dict:
        return {"kBarEpilogue": spec.consumers}

    def wrappers(self) -> tuple:
        return ("tma_store",) + (("tma_3d_store",) if self.p.epi.tma.rank == 3 else ())

    def smem(self) -> list:
        e = self.p.epi
        n = self.p.consumers * e.buffers
        return [(f"{n} x {e.buf_bytes} B (epilogue staging buffers)", n * e.buf_bytes)]

    def setup(self) -> str:
        return super().setup() + ("    const u32 bufs = ring.base + kStages * kStageBytes + (u32)w * kEpiBuffers * "
                                  "kEpiBufBytes;   // this warpgroup's staging buffers\n    int ebuf = 0;\n")

    def store_call(self, ep: str) -> str:
        m0, n0 = self.origin()
        l = f", {self.coords['l']}" if self.p.epi.tma.rank == 3 and self.coords["m_end"] is None else ""
        return f"store_tile_tma(acc, mt, w, {m0}, {n0}, &tma_d, bufs, ebuf, {ep}{l});"

    def finish(self) -> str:
        return ("    // ---- consumer::finish: every TMA store has completed before the CTA exits ----\n"
                "    if (t == kWarpGroupThreads * w) bulk_wait<0>();\n")


class Direct(Epilogue):
    """Masked stores from registers: any D layout."""

    name = "direct"

    def store_call(self, ep: str) -> str:
        m0, n0 = self.origin()
        d = f"d + (long long){self.coords['l']} * ld_dl" if carries_group_mode(self.p.spec, "c") else "d"
        return f"store_tile(acc, mt, {m0}, {n0}, {d}, ld_d, {ep});"


EPILOGUES = {cls.name: cls for cls in (
    TmaStore,
    Direct,
)}


def epilogue_class(spec):
    """The epilogue class of ``spec`` (its ``epilogue`` field: "tma" stores through TMA)."""
    return EPILOGUES["tma_store" if spec.epilogue == "tma" else "direct"]
