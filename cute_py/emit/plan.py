"""Everything a GemmSpec implies, computed by cute_py's layout algebra before any text is written.

:func:`operand_plan` derives, for A or B: the canonical smem atom and stage
tile (``select_smem_atom`` / ``tile_smem``), the wgmma descriptor
(``make_gmma_desc``) and its per-slice increments, the TMA parameters
(``make_tma_params`` on the symbolic gmem layout) and the TMA issues that fill
one stage tile. :func:`gemm_plan` adds the GMMA atom, the tiled MMA and its C
TV layout, the smem ring, the schedule, the output (:class:`OutputPlan`) and
the TMA-store epilogue (:mod:`cute_py.emit.epilogue_plan`). The snippets of
:mod:`cute_py.emit.collectives` print these fields and compute nothing.

>>> p = gemm_plan(GemmSpec(tile=(128, 256, 64), consumers=2))
>>> p.a.tma.box_dim, p.b.tma.box_dim, hex(p.a.desc.value), p.stages, p.stage_bytes
((64, 128), (64, 256), '0x4000004000010000', 4, 49152)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..arch.sm90 import GmmaDescriptor, TmaParams, make_gmma_desc, make_tma_params, stage_bytes, tile_smem
from ..arch.sm90.operand import operand_atom
from ..atoms import MMAAtom, TiledMMA, gmma, make_tiled_mma
from ..layouts import Layout, int_tuple as it, right_inverse
from ..layouts.dtypes import dtype
from ..layouts.offsets import layout_offsets
from .bind import Binding, bind
from .collectives.compose import barrier_uses, kernel_params
from .checks import require
from .epilogue_plan import EpiloguePlan, epilogue_plan
from .grouping import ragged_gmem
from .promote_plan import PromotePlan, promote_plan
from .resources import WARPGROUP_THREADS, named_barriers
from .spec import GemmSpec, require_spec
from .tv_split import split_part, split_tv

__all__ = ["OperandPlan", "OutputPlan", "GemmPlan", "operand_plan", "output_plan", "gemm_plan"]


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
    load: int = 0              # bytes per load of the producer threads' own loads (cute_py.emit.loads); 0: TMA

    def desc_offset(self, mn_block: int, k_block: int) -> int:
        """Increment (16-byte units) for wgmma slice (mn_block, k_block): ``desc.offset`` of cute_py."""
        return self.desc.offset(mn_block, k_block)


def operand_plan(spec: GemmSpec, which: str) -> OperandPlan:
    """The plan of operand ``which`` ("A" or "B") of ``spec`` (a GemmSpec, so one whose canonical layouts fit:
    its constructor asks cute_py.arch.sm90 the same questions)."""
    require_spec(spec, "operand_plan")
    if not isinstance(which, str) or which not in ("A", "B"):
        raise ValueError(f"operand_plan: which must be 'A' or 'B', got {which!r:.40}")
    return _operand_plan(spec, which)


@lru_cache(maxsize=256)
def _operand_plan(spec: GemmSpec, which: str) -> OperandPlan:
    gmem, major, mn, mma_mn, mc = spec.operand(which)
    bk, t = spec.tile[2], spec.dtype
    atom = operand_atom(major, t, mn, bk, spec.swizzle)
    smem = tile_smem(atom, mn, bk, major=major)
    desc = make_gmma_desc(smem, t, major, mma_mn=mma_mn)
    ragged = spec.grouping == "k"                   # K tiles masked at a group's end (grouping.ragged_gmem)
    tma = make_tma_params(ragged_gmem(gmem, bk) if ragged else gmem, smem, t, multicast=mc)
    if ragged:
        require(tma.gmem_modes[1:] == (1, 2) and tma.box_dim[2] == 1 and bk % tma.box_dim[1] == 0, "operand_plan",
                "a ragged operand's TMA box lies in one K tile (its middle dimension divides it: a multicast slices "
                "it there)",
                box_dim=tma.box_dim, gmem_modes=tma.gmem_modes, bk=bk)
    copies = tuple(_copies(tma, smem, (mn, bk), rank) for rank in range(mc))
    o = tma.box_coords((0, 0))
    step_mn, step_k = tma.box_coords((1, 0)), tma.box_coords((0, 1))
    tile_step = tuple((step_mn[i] - o[i], step_k[i] - o[i]) for i in range(tma.rank))
    return OperandPlan(which, major, gmem, (mn, bk), atom, smem, stage_bytes(smem, t), desc, mma_mn, tma, copies,
                       tile_step, mn * bk * _nbytes(t), spec.load_a if which == "A" else spec.load_b)


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
        coord = (lin % block[0], lin // block[0], 0)        # a group mode L (gmem mode 2) is the caller's
        out.append((q * box * nbytes, tuple(int(coord[g]) for g in tma.gmem_modes)))
    return tuple(out)


@dataclass(frozen=True)
class OutputPlan:
    """D = act(alpha * A @ B^T + beta * C + bias): D's (and C's) gmem layout and type, and the epilogue's steps."""

    layout: Layout             # C/D, modes (M, N), symbolic extents and leading dimension
    row_major: bool            # N is the contiguous mode
    ld: object                 # the leading-dimension symbol (the stride that is not 1)
    dtype: str                 # D's (and C's and the bias') element type
    store_type: str            # the C type D's elements travel in: "float", or "u16" (16-bit bits)
    alpha: bool                # scale by a runtime alpha
    beta: bool                 # add beta * C
    bias: str | None           # "row" (bias[m]) or "col" (bias[n])
    activation: str | None     # "relu" or "gelu"
    scale: str | None          # the fp8 scales the epilogue applies: "tensor" or "row" ("block": the mainloop's)
    formula: str               # the whole, in words: e.g. "relu(alpha * A @ B^T + bias[n])"


def output_plan(spec: GemmSpec) -> OutputPlan:
    """The output facts of ``spec``.

    >>> output_plan(GemmSpec(c="(M,N):(1,ldd)", out_dtype="f32", beta=True, activation="gelu")).formula
    'gelu(alpha * A @ B^T + beta * C)'
    >>> output_plan(GemmSpec(dtype="e4m3", scale="row", bias="col")).formula
    'alpha * (scale_a[m] * A) @ (scale_b[n] * B)^T + bias[n]'
    """
    a, b = {None: ("A", "B"), "tensor": ("scale_a * A", "scale_b * B"), "row": ("scale_a[m] * A", "scale_b[n] * B"),
            "block": ("scale_a[m, k/128] * A", "scale_b[k/128, n/128] * B")}[spec.scale]
    x = ("alpha * " if spec.alpha else "") + (f"({a}) @ ({b})^T" if spec.scale else "A @ B^T")
    if spec.beta:
        x += " + beta * C"
    if spec.bias:
        x += " + bias[m]" if spec.bias == "row" else " + bias[n]"
    stride = spec.c.stride
    return OutputPlan(spec.c, stride[1] == 1, [d for d in stride if d != 1][0], spec.out_dtype,
                      "float" if spec.out_dtype == "f32" else "u16", spec.alpha, spec.beta, spec.bias,
                      spec.activation, spec.scale if spec.scale != "block" else None, f"{spec.activation}({x})" if spec.activation else x)


@dataclass(frozen=True)
class GemmPlan:
    """Every fact the kernel of one spec prints. ``spec`` is kept for identity (and binding); the snippets read
    the other fields."""

    spec: GemmSpec
    name: str                  # the kernel's symbol
    dtype: str                 # A's and B's element type
    acc_dtype: str
    a: OperandPlan
    b: OperandPlan
    out: OutputPlan
    tile: tuple                # (BM, BN, BK)
    k_slices: int              # wgmma k-slices per k-block: BK / the atom's K
    consumers: int             # consumer warpgroups
    tile_warpgroups: int       # consumer warpgroups sharing one tile (1 for ping-pong)
    pingpong: bool             # the consumers take turns over whole tiles
    schedule: str
    cluster: tuple             # (CTAs along M, along N)
    cluster_size: int
    group: int                 # L2 raster band width, in cluster rows (raster "m") or columns ("n")
    raster: str
    split_k: int
    atom: MMAAtom              # one wgmma 64 x BN x 16
    tiled: TiledMMA            # the tile's warpgroups (tile_warpgroups) stacked along M
    c_tv: Layout               # tiled.get_layoutC_TV(): (tile thread, value) -> m + tv_rows * n
    tv_rows: int               # 64 * tile_warpgroups
    thread_terms: list
    value_terms: list
    acc_place: tuple           # acc_m_thread(t), acc_n_thread(t), acc_m_value(v), acc_n_value(v): sympy expressions
    m_blocks: int              # 64-row wgmma blocks per consumer warpgroup and tile
    acc_per_block: int         # f32 accumulators per thread per m-block: the atom's C registers
    empty_arrivals: int        # arrivals per CTA that release a stage: one per warp reading it
    stages: int
    stage_bytes: int
    smem_bytes: int            # dynamic smem requested (stages + epilogue staging + 1024 alignment slack)
    threads: int
    tx_bytes: int              # bytes TMA delivers per stage into each CTA (A + B tiles, all multicast slices;
                               # an operand the producer threads load themselves is not counted; blockwise
                               # scales: scale_a's box too)
    epi: EpiloguePlan | None   # the TMA-store epilogue, None for the direct one
    params: tuple              # the kernel's parameter table (cute_py.emit.collectives.compose.kernel_params)
    barriers: tuple            # the named barriers in use (cute_py.emit.resources.NAMED_BARRIERS), checked
    mcast_mask: int            # the cluster ranks a multicast TMA box lands in (0 without a multicast)
    scale: str | None          # the fp8 scale mode ("block": applied per K tile in the mainloop)
    promotion: PromotePlan | None   # the mainloop sums each K tile apart (in column chunks) and adds it in
    value_rows: tuple          # acc_m_value(v) for each value v of an m-block: the rows a thread's values lie in
    grouping: str | None       # "batch", "m" (groups along M), None (cute_py.emit.grouping)

    @property
    def scale_rows(self) -> tuple:
        """The distinct rows (offsets inside a thread's m-block) its accumulators cover, in order: the scale_a
        values a thread loads per m-block and K tile with ``scale='block'``.

        >>> gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128))).scale_rows
        (0, 8)
        """
        return tuple(sorted(set(self.value_rows)))

    def bind(self, problem) -> Binding:
        """This plan made concrete for ``problem``: TMA parameters, work units, workspace, kernel arguments
        (:func:`cute_py.emit.bind.bind`)."""
        return bind(self, problem)


def _check_split(c_tv: Layout, thread_terms, value_terms, rows: int) -> None:
    """``split_tv``'s parts reproduce ``c_tv`` for every (thread, value): the printed acc_m/acc_n are exact."""
    import numpy as np

    nthr, nval = it.product(c_tv.shape[0]), it.product(c_tv.shape[1])
    t, v = np.arange(nthr)[None, :], np.arange(nval)[:, None]
    m = split_part(thread_terms, t, 2) + split_part(value_terms, v, 2)
    n = split_part(thread_terms, t, 3) + split_part(value_terms, v, 3)
    got = layout_offsets(c_tv).reshape(nval, nthr)
    require((m < rows) & (got == m + rows * n), "gemm_plan", f"split_tv reproduces the C TV layout: c_tv(t, v) "
            f"== m + {rows} * n with m < {rows}", at=("v", "t"), values={"c_tv": got, "m": m, "n": n}, c_tv=c_tv)


def gemm_plan(spec: GemmSpec) -> GemmPlan:
    """Every layout fact the kernel of ``spec`` uses, each checked when derived (:class:`~.checks.EmitError`).

    Every GemmSpec is valid (its constructor checks it), so planning needs no check of its own beyond the type.
    """
    return _gemm_plan(require_spec(spec, "gemm_plan"))


@lru_cache(maxsize=256)
def _gemm_plan(spec: GemmSpec) -> GemmPlan:
    bm, bn, bk = spec.tile
    a, b = operand_plan(spec, "A"), operand_plan(spec, "B")
    atom = gmma(bn, spec.acc_dtype, spec.dtype, spec.dtype, a_major=a.major, b_major=b.major)
    c = spec.tile_warpgroups
    tiled = make_tiled_mma(atom, (c, 1, 1))
    c_tv = tiled.get_layoutC_TV()
    rows = 64 * c
    thread_terms, value_terms = split_tv(c_tv, rows)
    _check_split(c_tv, thread_terms, value_terms, rows)
    for op in (a, b):
        issued = sum(len(r) for r in op.copies) * op.tma.bytes_per_copy
        require(issued == op.tile_bytes, "gemm_plan", f"the TMA issues of every cluster rank fill {op.which}'s stage "
                f"tile exactly once: {issued} bytes issued", tile_bytes=op.tile_bytes, box=op.tma.box_dim)
    stages = spec.resolved_stages()
    sb = a.bytes + b.bytes
    epi = epilogue_plan(spec, c_tv, rows) if spec.epilogue == "tma" else None
    cm, cn = spec.cluster
    promotion = promote_plan(spec, atom, b) if spec.promotes else None
    tx = sum(op.tile_bytes for op in (a, b) if not op.load)
    tx += promotion.sa_tma.bytes_per_copy if promotion and promotion.sa_tma else 0     # blockwise: scale_a's box
    return GemmPlan(
        spec, spec.name, spec.dtype, spec.acc_dtype, a, b, output_plan(spec), (bm, bn, bk), bk // atom.shape_mnk[2],
        spec.consumers, c, spec.schedule == "pingpong", spec.schedule, (cm, cn), cm * cn, spec.group, spec.raster,
        spec.split_k, atom, tiled, c_tv, rows, thread_terms, value_terms, _acc_place(thread_terms, value_terms),
        bm // rows, atom.regs["c"], 4 * c, stages, sb, stages * sb + spec.epilogue_smem_bytes(),
        WARPGROUP_THREADS * (1 + spec.consumers), tx, epi, kernel_params(spec),
        named_barriers(barrier_uses(spec)), _mcast_mask(a, b, cm * cn), spec.scale, promotion,
        tuple(int(split_part(value_terms, v, 2)) for v in range(atom.regs["c"])), spec.grouping)


def _acc_place(thread_terms, value_terms) -> tuple:
    """The row and column parts of a thread's and a value's place, as sympy expressions of the index symbols
    ``t`` and ``v`` (the same sums :func:`_check_split` checks against the C TV layout)."""
    from ..layouts.symbolic import indices

    t, v = indices("t v")
    return (split_part(thread_terms, t, 2), split_part(thread_terms, t, 3), split_part(value_terms, v, 2),
            split_part(value_terms, v, 3))


def _mcast_mask(a: OperandPlan, b: OperandPlan, cluster_size: int) -> int:
    """The ``ctaMask`` of the multicast TMA loads: the cluster ranks that share the multicast operand's tile."""
    mc = max(a.tma.multicast, b.tma.multicast)
    require(mc in (1, cluster_size), "gemm_plan", "a multicast box lands in every CTA of the cluster",
            multicast=mc, cluster_size=cluster_size)
    return (1 << mc) - 1 if mc > 1 else 0
