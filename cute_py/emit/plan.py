"""Everything a GemmSpec implies, computed by cute_py's layout algebra before any text is written.

:func:`operand_plan` derives, for A or B: the canonical smem atom and stage
tile (``select_smem_atom`` / ``tile_smem``), the wgmma descriptor
(``make_gmma_desc``) and its per-slice increments, the TMA parameters
(``make_tma_params`` on the symbolic gmem layout) and the TMA issues that fill
one stage tile. :func:`gemm_plan` adds the GMMA atom, the tiled MMA and its C
TV layout, the smem ring and the register split.

>>> p = gemm_plan(GemmSpec(tile=(128, 256, 64), consumers=2))
>>> p.a.tma.box_dim, p.b.tma.box_dim, hex(p.a.desc.value), p.stages, p.stage_bytes
((64, 128), (64, 256), '0x4000004000010000', 4, 49152)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..arch.sm90 import GmmaDescriptor, TmaParams, make_gmma_desc, make_tma_params, smem_atom, stage_bytes, tile_smem
from ..arch.sm90.operand import operand_atom
from ..atoms import MMAAtom, TiledMMA, gmma, make_tiled_mma
from ..layouts import Layout, int_tuple as it, right_inverse
from ..layouts.dtypes import dtype
from ..layouts.tensor import layout_offsets
from ..arch.sm90.banks import bank_conflicts
from .bind import Binding, bind
from .checks import require
from .spec import GemmSpec

__all__ = ["OperandPlan", "EpiloguePlan", "GemmPlan", "operand_plan", "epilogue_plan", "gemm_plan", "split_tv",
           "stmatrix_rows"]

PRODUCER_REGS = 40
CONSUMER_REGS = 232


@dataclass(frozen=True)
class OperandPlan:
    """A or B of one spec: ``(MN, K)`` stage tile in smem, its wgmma descriptor and its TMA loads."""

    which: str                 # "A" or "B"
    major: str                 # "K" or "MN"
    gmem: Layout               # the spec's gmem layout, modes (MN, K), symbolic extents and leading dim.
    block: tuple               # (MN, K) extents of the stage tile
    atom: object               # canonical smem atom
    smem: object               # stage tile layout (MN, K) -> element offset
    bytes: int                 # stage tile bytes, rounded up to 1024
    desc: GmmaDescriptor
    mma_mn: int                # the wgmma slice extent along MN (64 for A, N for B)
    tma: TmaParams
    copies: tuple              # per cluster rank, per TMA issue: (smem byte offset, (coord offset innermost first))
    tile_step: tuple           # per TMA dim: (coordinate step per MN tile, per K tile)
    tile_bytes: int            # bytes of one full stage tile landing in each CTA (all multicast slices)

    def desc_offset(self, mn_block: int, k_block: int) -> int:
        """Increment (16-byte units) for wgmma slice (mn_block, k_block): ``desc.offset`` of cute_py."""
        return self.desc.offset(mn_block, k_block)


@lru_cache(maxsize=256)
def operand_plan(spec: GemmSpec, which: str) -> OperandPlan:
    """The plan of operand ``which`` ("A" or "B") of a valid ``spec``; raises a LayoutError subclass if no
    canonical layout fits (:meth:`GemmSpec.validate` reports that first)."""
    gmem, major, mn, mma_mn, mc = spec.operand(which)
    bk, t = spec.tile[2], spec.dtype
    atom = operand_atom(major, t, mn, bk, spec.swizzle)
    smem = tile_smem(atom, mn, bk, major=major)
    desc = make_gmma_desc(smem, t, major, mma_mn=mma_mn)
    tma = make_tma_params(gmem, smem, t, multicast=mc)
    copies = tuple(_copies(tma, smem, (mn, bk), rank) for rank in range(mc))
    o = tma.box_coords((0, 0))
    step_mn, step_k = tma.box_coords((1, 0)), tma.box_coords((0, 1))
    tile_step = tuple((step_mn[i] - o[i], step_k[i] - o[i]) for i in range(tma.rank))
    return OperandPlan(which, major, gmem, (mn, bk), atom, smem, stage_bytes(smem, t), desc, mma_mn, tma, copies,
                       tile_step, mn * bk * _nbytes(t))


def _nbytes(t) -> int:
    """Bytes per element of the type named ``t``."""
    return dtype(t).bits // 8


def _copies(tma: TmaParams, smem, block, rank: int = 0) -> tuple:
    """The TMA issues of cluster rank ``rank`` for one ``(MN, K)`` tile in smem layout ``smem``.

    Box slice ``q`` fills smem elements ``[q*box, (q+1)*box)``; its tile
    coordinate is ``right_inverse(smem)(q*box)`` (colexicographic in the
    block; TMA dim ``i`` walks gmem mode ``tma.gmem_modes[i]``). With a
    multicast of ``mc`` every full box is split into ``mc`` slices along its
    last dim, and rank ``r`` issues slice ``r`` of each: ``q = i*mc + r``. Each
    issue lands at the same smem offset in every CTA of the multicast group.
    """
    inner = getattr(smem, "inner", smem)
    inv = right_inverse(inner)
    box = it.product(tma.box_dim)
    nbytes = tma.dtype.bits // 8
    out = []
    for i in range(tma.copies_per_tile):
        q = i * tma.multicast + rank
        lin = inv(q * box)
        coord = (lin % block[0], lin // block[0])
        out.append((q * box * nbytes, tuple(int(coord[g]) for g in tma.gmem_modes)))
    return tuple(out)


@dataclass(frozen=True)
class EpiloguePlan:
    """The TMA-store epilogue: each consumer warpgroup stages ``64 x cols`` chunks of D in swizzled smem.

    ``smem`` is the staging chunk's layout ((row, col) -> element; 128-byte rows
    under the 128 B swizzle, the K-major canonical atom with N as "K"); ``access``
    is the GMMA C TV layout of a ``64 x cols`` atom, i.e. which (row, col) each
    thread writes, and ``conflicts`` the bank analysis of those 32-bit (64-bit
    for f32) stores against ``smem``; ``tma`` the TMA store parameters of D.

    For 16-bit D the kernel stores with ``stmatrix.x4`` instead: ``stsm`` maps
    (warpgroup thread, (element, instruction)) of the 16-byte rows whose addresses
    the lanes supply (lane ``8m + r``: row ``r`` of matrix ``m``) to staging
    coordinates, and ``stsm_conflicts`` is its bank analysis (128-bit rows); both
    None for f32.
    """

    smem: object
    cols: int
    rows: int
    buf_bytes: int
    access: Layout
    conflicts: object
    tma: TmaParams
    swizzle: tuple             # (bits, base, shift) of the staging swizzle, in elements
    stsm: Layout | None = None
    stsm_conflicts: object = None


@lru_cache(maxsize=64)
def epilogue_plan(spec: GemmSpec) -> EpiloguePlan:
    """Staging layout, its bank analysis and the TMA store of D for ``spec`` (epilogue "tma", row-major D)."""
    import numpy as np

    t = spec.out_dtype
    nbytes = _nbytes(t)
    cols, rows = 128 // nbytes, 64
    smem = tile_smem(smem_atom("K", 128, t), rows, cols, major="K")
    inner, sw = smem.inner, smem.outer
    require(it.product(inner.shape[0]) == rows, "epilogue_plan", f"the staging chunk has {rows} rows (mode 0)",
            inner=inner)
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    got = layout_offsets(inner).reshape(cols, rows).T                         # (r, c) is index r + rows * c
    require(got == r * cols + c, "epilogue_plan", "the staging chunk's inner layout is row-major (the emitted "
            "element index r * cols + c)", at=("r", "c"), values={"offset": got, "r * cols + c": r * cols + c},
            inner=inner)
    acc = gmma(cols, spec.acc_dtype, spec.dtype, spec.dtype).c_layout
    report = bank_conflicts(smem, acc, t, vector_bits=2 * nbytes * 8 if nbytes == 2 else 64)
    tma = make_tma_params(spec.c, smem, t)
    require(tma.box_dim == (cols, rows) and tma.gmem_modes == (1, 0), "epilogue_plan",
            "the TMA store box is one staging chunk, (cols, rows) over gmem modes (N, M)",
            box_dim=tma.box_dim, gmem_modes=tma.gmem_modes, chunk=(rows, cols))
    stsm = stsm_report = None
    if nbytes == 2:
        stsm = stmatrix_rows(rows, cols)
        stsm_report = bank_conflicts(smem, stsm, t, vector_bits=128)
    return EpiloguePlan(smem, cols, rows, rows * cols * nbytes, acc, report, tma, (sw.bits, sw.base, sw.shift),
                        stsm, stsm_report)


def stmatrix_rows(rows: int, cols: int) -> Layout:
    """Which 16-byte rows of a ``rows x cols`` 16-bit chunk (coordinates ``(r, c)``, index ``r + rows * c``) the
    lanes of a warpgroup address with ``stmatrix.x4``, one instruction per 16 columns.

    Warp ``w`` covers rows ``[16 w, 16 w + 16)``; lane ``8 m + r`` supplies row ``r`` of matrix ``m``, matrix
    ``m`` being rows ``+8 (m % 2)`` and columns ``+8 (m // 2)``; instruction ``q`` adds ``16 q`` columns.
    Modes: thread ``(r, m % 2, m // 2, w)``, value ``(element e, instruction q)``.

    >>> print(stmatrix_rows(64, 64))
    ((8,2,2,4),(8,4)):((1,8,512,16),(64,1024))
    >>> stmatrix_rows(32, 64)
    Traceback (most recent call last):
    ...
    ValueError: stmatrix_rows: a warpgroup's chunk has 64 rows and a multiple of 16 columns, got 32 x 64
    """
    if rows != 64 or not isinstance(cols, int) or cols <= 0 or cols % 16:
        raise ValueError(f"stmatrix_rows: a warpgroup's chunk has 64 rows and a multiple of 16 columns, "
                         f"got {rows} x {cols}")
    return Layout(((8, 2, 2, 4), (8, cols // 16)), ((1, 8, 8 * rows, 16), (rows, 16 * rows)))


def split_tv(layout: Layout, rows: int):
    """Split a TV layout whose codomain is ``m + rows * n`` into its (m, n) parts, mode by mode.

    Returns ``[(extent, divisor, m_stride, n_stride), ...]`` for the thread mode
    and for the value mode: coordinate ``x`` contributes
    ``((x / divisor) % extent) * m_stride`` to m and ``... * n_stride`` to n.
    Valid only when no sum of m parts carries into n; :func:`gemm_plan`
    checks that against the layout for every (thread, value).
    """
    def flat(shape, stride):
        if isinstance(shape, tuple):
            out = []
            for s, d in zip(shape, stride):
                out += flat(s, d)
            return out
        return [(shape, stride)]

    parts = []
    for mode in (0, 1):
        terms, div = [], 1
        for s, d in flat(layout.shape[mode], layout.stride[mode]):
            if s > 1 and d != 0:
                if d % rows and d >= rows:
                    raise ValueError(f"split_tv: stride {d} mixes m and n for rows={rows}")
                terms.append((s, div, d % rows, d // rows))
            div *= s
        parts.append(terms)
    return parts


def _split_part(terms, x, part: int):
    """The m (part 2) or n (part 3) contribution of ``terms`` (from :func:`split_tv`) for the indices ``x``."""
    return sum(((x // dv) % e) * (dm, dn)[part - 2] for e, dv, dm, dn in terms)


@dataclass(frozen=True)
class GemmPlan:
    spec: GemmSpec
    a: OperandPlan
    b: OperandPlan
    atom: MMAAtom              # one wgmma 64 x BN x 16
    tiled: TiledMMA            # the tile's warpgroups (spec.tile_warpgroups) stacked along M
    c_tv: Layout               # tiled.get_layoutC_TV(): (tile thread, value) -> m + (64*tile_warpgroups) * n
    tv_rows: int               # 64 * tile_warpgroups
    thread_terms: list
    value_terms: list
    m_blocks: int              # 64-row wgmma blocks per consumer warpgroup and tile
    stages: int
    stage_bytes: int
    smem_bytes: int            # dynamic smem requested (stages + epilogue staging + 1024 alignment slack)
    threads: int
    tx_bytes: int              # bytes TMA delivers per stage into each CTA (A + B tiles, all multicast slices)
    epi: EpiloguePlan | None   # the TMA-store epilogue, None for the direct one
    cluster_size: int

    def work_units(self, M: int, N: int) -> int:
        """Scheduler work units: one per cluster tile (``cluster`` CTA tiles) per K split."""
        bm, bn, _ = self.spec.tile
        cm, cn = self.spec.cluster
        return -(-M // (bm * cm)) * -(-N // (bn * cn)) * self.spec.split_k

    def workspace_tiles(self, M: int, N: int) -> int:
        """Output tiles the split-K counters cover (padded to whole clusters); the workspace holds
        ``split_k`` partial tiles per tile."""
        bm, bn, _ = self.spec.tile
        cm, cn = self.spec.cluster
        return -(-M // (bm * cm)) * cm * -(-N // (bn * cn)) * cn

    def bind(self, problem) -> Binding:
        """This plan made concrete for ``problem``: TMA parameters, work units, workspace, kernel arguments
        (:func:`cute_py.emit.bind.bind`)."""
        return bind(self, problem)


@lru_cache(maxsize=256)
def gemm_plan(spec: GemmSpec) -> GemmPlan:
    """Every layout fact the kernel of ``spec`` uses, each checked when derived (:class:`~.checks.EmitError`).

    Precondition: ``spec.validate()`` passed (:func:`~cute_py.emit.emit_gemm` validates first; so must every
    other caller: planning an invalid spec fails with whatever derivation breaks first, or not at all).
    """
    import numpy as np

    bm, bn, bk = spec.tile
    a, b = operand_plan(spec, "A"), operand_plan(spec, "B")
    atom = gmma(bn, spec.acc_dtype, spec.dtype, spec.dtype, a_major=a.major, b_major=b.major)
    c = spec.tile_warpgroups
    tiled = make_tiled_mma(atom, (c, 1, 1))
    c_tv = tiled.get_layoutC_TV()
    rows = 64 * c
    thread_terms, value_terms = split_tv(c_tv, rows)
    nthr, nval = 128 * c, atom.regs["c"]
    t, v = np.arange(nthr)[None, :], np.arange(nval)[:, None]   # the split must reproduce the layout exactly
    m = _split_part(thread_terms, t, 2) + _split_part(value_terms, v, 2)
    n = _split_part(thread_terms, t, 3) + _split_part(value_terms, v, 3)
    got = layout_offsets(c_tv).reshape(nval, nthr)
    require((m < rows) & (got == m + rows * n), "gemm_plan", f"split_tv reproduces the C TV layout: c_tv(t, v) "
            f"== m + {rows} * n with m < {rows}", at=("v", "t"), values={"c_tv": got, "m": m, "n": n}, c_tv=c_tv)
    stages = spec.resolved_stages()
    sb = a.bytes + b.bytes
    for op in (a, b):
        issued = sum(len(r) for r in op.copies) * op.tma.bytes_per_copy
        require(issued == op.tile_bytes, "gemm_plan", f"the TMA issues of every cluster rank fill {op.which}'s stage "
                f"tile exactly once: {issued} bytes issued", tile_bytes=op.tile_bytes, box=op.tma.box_dim)
    tx = a.tile_bytes + b.tile_bytes
    epi = epilogue_plan(spec) if spec.epilogue == "tma" else None
    smem = stages * sb + spec.epilogue_smem_bytes()
    return GemmPlan(spec, a, b, atom, tiled, c_tv, rows, thread_terms, value_terms, bm // rows, stages, sb,
                    smem, 128 * (1 + spec.consumers), tx, epi, spec.cluster[0] * spec.cluster[1])
