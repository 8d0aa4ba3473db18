"""``GemmSpec``: the layout spec of a warp-specialized sm_90a GEMM, checked where it is made.

A spec names the global-memory layouts of A ``(M,K)``, B ``(N,K)`` and C/D
``(M,N)`` in CuTe notation with symbolic extents (majorness is read from the
strides: the mode whose stride is 1 is contiguous), the element types, the CTA
tile, the pipeline depth, the consumer warpgroups and the epilogue. The kernel
computes ``D = act(alpha * A @ B^T + beta * C + bias)``.

No invalid GemmSpec exists: the constructor (and so ``replace``, :meth:`GemmSpec.from_dict` and
:meth:`GemmSpec.from_file`) checks every field and every rule the kernel keeps, and raises :class:`SpecError`
listing each one broken, so the planner and the emitter can rely on any spec they are given.

>>> s = GemmSpec(a="(M,K):(K,1)", b="(N,K):(1,N)")
>>> s.a_major, s.b_major, s.blas_layout
('K', 'MN', 'tt')
>>> s.name
'cute_gemm_sm90_bf16_tt_128x128x64_s6_c2_obf16_dr_g8'
>>> GemmSpec(tile=(96, 264, 40), consumers=3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cute_py.emit.spec.SpecError: GemmSpec: 4 constraint(s) violated:
  - consumers = 3 not in (1, 2)
  ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

from ..arch.sm90 import SMEM_ALIGN, check_config, smem_budget
from ..arch.sm90.operand import operand_problems
from ..layouts import Layout
from ..layouts.errors import LayoutError
from ..layouts.dtypes import dtype as element_type
from .collectives.schedulers import SCHEDULERS, canonical_scheduler, implied_scheduler, scheduler_class
from .resources import (CONSUMER_REGS, STAGING_BUFFERS, STAGING_ROW_BYTES, STAGING_ROWS, STATIC_FLAGS_BYTES,
                        staging_cols)
from .grouping import grouping, group_problems
from .loads import load_problems
from .scaling import (FP8_DTYPES, PROMOTE_CHUNKS, PROMOTE_REGS, SCALE_BLOCK, SCALES, promote_chunk,  # noqa: F401
                      SCALE_SLOT_ALIGN, scale_problems, scale_stage_bytes)
from .spec_fields import (ACTIVATIONS, BOOL_FIELDS, DTYPES, GMEM_MODES, INPUT_DTYPES, MAX_EPI_BUFFERS,  # noqa: F401
                          MAX_STAGES, OUT_DTYPES, PAIR_FIELDS, SWIZZLES, default_tile, gmem_layout, gmem_problems, is_int,
                          plain_bool, type_name, type_problems, value_problems)

__all__ = ["GemmSpec", "SpecError", "DTYPES", "FP8_DTYPES", "INPUT_DTYPES", "OUT_DTYPES", "SCALES", "SCALE_BLOCK",
           "PROMOTE_REGS", "PROMOTE_CHUNKS",
           "SWIZZLES", "GMEM_MODES"]


class SpecError(LayoutError):
    """A GemmSpec that no kernel can implement; ``problems`` lists every violated constraint with its values,
    ``source`` the file it was read from (None: not read from a file).

    >>> try:
    ...     GemmSpec(stages=0)
    ... except SpecError as e:
    ...     print(e.problems)
    ['stages = 0: the smem ring needs at least 2']
    """

    def __init__(self, problems, op: str = "GemmSpec", source=None):
        self.problems, self.source = list(problems), source
        lines = "\n".join(f"  - {p}" for p in self.problems)
        if op == "GemmSpec":
            message = f"GemmSpec: {len(self.problems)} constraint(s) violated:\n{lines}"
        else:                                   # reading a spec (from_dict, from_file): what could not be read
            message = f"{op}: " + (f"{source}: " if source else "") + "; ".join(self.problems)
        super().__init__(message, op=op, rule="GEMM spec constraints")


@lru_cache(maxsize=512)
def _operand_problems(*args) -> tuple:
    """:func:`~cute_py.arch.sm90.operand.operand_problems` of ``args``, asked once (specs are made often, e.g.
    by autotune's candidate loops, and these derivations are the bulk of a spec's checks)."""
    gmem, major, dtype, mn, bk, mma_mn, multicast, swizzle = args
    return tuple(operand_problems(gmem, major, dtype, mn, bk, mma_mn=mma_mn, multicast=multicast, swizzle=swizzle))


@dataclass(frozen=True)
class GemmSpec:
    """The layout spec of one GEMM kernel: ``D = act(alpha * A @ B^T + beta * C + bias)``.

    - ``a`` ``(M,K)``, ``b`` ``(N,K)``, ``c`` ``(M,N)`` (C and D share it): CuTe
      layouts with symbolic extents, given as Layouts or CuTe text and held as
      Layouts (``cute_py.parse``; the text is the form of files, ``to_dict`` and
      ``str``); the stride-1 mode is the contiguous one, the other stride the
      leading dimension.
    - ``dtype`` of A and B (bf16, f16, or fp8 e4m3 / e5m2 with a ``scale``);
      ``out_dtype`` of C/D (default ``dtype``, bf16 for fp8; bf16, f16, f32);
      ``acc_dtype`` f32.
    - ``scale`` (fp8 only, and required there): "tensor" (D = scale_a * scale_b *
      A @ B^T, one f32 each), "row" (scale_a[m] per row of A, scale_b[n] per
      column of D), "block" (scale_a[m, k / 128] per 1 x 128 block of A and
      scale_b[k / 128, n / 128] per 128 x 128 block of B, applied to each K
      tile's partial sums before they join the f32 accumulators: BK = 128).
      Hopper's fp8 wgmma reads both operands K-major. ``fast_accum`` (tensor and
      row scales only; PyTorch's ``use_fast_accum``): False (default) promotes
      each K tile's sums into f32 accumulators as blockwise scaling does (the
      tensor core's fp8 accumulation keeps about 14 bits: over K = 4096 the
      relative error is 10x larger without promotion); True accumulates all of
      K in the tensor core (faster, allows 128x256 tiles). ``scale_type``: the
      scales' element type, "f32" (default) or "ue8m0" (one byte, a power of
      two; row-wise and blockwise scales).
    - ``tile`` (BM, BN, BK; None: (128, 128, 64), or (128, 128, 128) for fp8: :func:`~.spec_fields.default_tile`,
      valid with every scale mode); ``cluster`` (1, 1), (2, 1) (two CTAs along M share
      the B tile, loaded once by TMA multicast) or (1, 2) (two along N share A);
      ``stages`` (None: as many as fit, at most 16); ``consumers`` warpgroups
      (1 or 2); ``schedule`` "cooperative" (the consumers split each tile's BM
      rows) or "pingpong" (2 consumers, each computing whole tiles in turn, so
      one's epilogue overlaps the other's mainloop); ``swizzle`` bytes of the
      smem atoms (None: the largest canonical atom that fits, per operand).
    - scheduling: ``persistent`` (one CTA per SM walking the tiles; False: one
      CTA per tile); ``group`` (L2 rasterization: tiles run in bands of
      ``group`` tile rows, so concurrent CTAs share A rows and B columns);
      ``raster`` (the raster order: "m", bands of M-tiles walked down M first;
      "n", bands of N-tiles walked along N first);
      ``split_k`` (K split over that many CTAs per tile, partial sums reduced in
      f32, for shapes with fewer tiles than SMs); ``scheduler`` (None: the one the other fields imply; or
      one of :data:`~cute_py.emit.collectives.schedulers.SCHEDULERS`, e.g. "stream_k").
    - ``epilogue``: "tma" (accumulators staged through swizzled shared memory
      and written by TMA stores that overlap the next tile; D row-major) or
      "direct" (masked stores from registers; any D layout); None picks
      "tma" for a row-major D, else "direct".
    - ``epi_buffers``: TMA-store staging buffers per consumer warpgroup (default 2); more keep more stores in
      flight, which pays where D's writes dominate (small K), at the cost of ring stages.
    - ``load_a``, ``load_b``: 0 (TMA), or the bytes per load (1, 2, 4, 8, 16) of an operand the producer
      warpgroup reads itself, for rows TMA cannot read (:mod:`cute_py.emit.loads`).
    - epilogue: ``alpha`` (scale by a runtime alpha), ``beta`` (read C),
      ``bias`` ("row": one value per row m, length M; "col": per column n,
      length N; in ``out_dtype``), ``activation`` ("relu", "gelu" (erf form)).

    The constructor checks every field and every rule above and raises :class:`SpecError` listing each one
    broken (its field, its value and the rule), so every GemmSpec is one a kernel implements:

    >>> GemmSpec(tile=(128, 128), stages=True)
    Traceback (most recent call last):
    ...
    cute_py.emit.spec.SpecError: GemmSpec: 2 constraint(s) violated:
      - tile = (128, 128) must be a tuple of 3 positive ints (BM, BN, BK)
      - stages = True must be an int or None, not a bool
    """

    a: Layout = "(M,K):(K,1)"
    b: Layout = "(N,K):(K,1)"
    c: Layout = "(M,N):(N,1)"
    dtype: str = "bf16"
    out_dtype: str | None = None
    acc_dtype: str = "f32"
    tile: tuple | None = None
    cluster: tuple = (1, 1)
    stages: int | None = None
    consumers: int = 2
    schedule: str = "cooperative"
    swizzle: int | None = None
    persistent: bool = True
    group: int = 8
    raster: str = "m"
    split_k: int = 1
    scheduler: str | None = None
    epilogue: str | None = None
    alpha: bool = True
    beta: bool = False
    bias: str | None = None
    activation: str | None = None
    scale: str | None = None
    fast_accum: bool = False
    scale_type: str = "f32"
    epi_buffers: int = STAGING_BUFFERS
    load_a: int = 0
    load_b: int = 0

    def __post_init__(self):
        set_ = object.__setattr__
        for name in GMEM_MODES:
            set_(self, name, gmem_layout(getattr(self, name)))
        set_(self, "dtype", type_name(self.dtype))
        set_(self, "out_dtype", type_name(self.out_dtype) if self.out_dtype is not None       # "" is reported
             else "bf16" if self.dtype in FP8_DTYPES else self.dtype)
        set_(self, "acc_dtype", type_name(self.acc_dtype))
        for name in BOOL_FIELDS:                    # numpy bools are bools; other types are reported
            set_(self, name, plain_bool(getattr(self, name)))
        if self.tile is None:
            set_(self, "tile", default_tile(self.dtype))
        for name in PAIR_FIELDS:                    # lists (TOML, JSON) become tuples; other types are reported
            if isinstance(getattr(self, name), list):
                set_(self, name, tuple(getattr(self, name)))
        if self.epilogue is None:                  # TMA stores where D allows them
            set_(self, "epilogue", "tma" if self._c_ok() and self.c_row_major else "direct")
        problems = self._problems()
        if problems:
            raise SpecError(problems)
        set_(self, "scheduler", canonical_scheduler(self))       # one spelling per kernel
        set_(self, "_hash", self._fields_hash())

    # -- hashing: once per spec (it keys the prepared launch of every call that passes one) ------------------------
    def _fields_hash(self) -> int:
        return hash(tuple(getattr(self, f.name) for f in fields(self)))

    def __hash__(self):
        return self._hash

    def __getstate__(self):
        """The fields without the cached hash: a string's hash differs between processes."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        object.__setattr__(self, "scheduler", canonical_scheduler(self))   # as the constructor spells it
        object.__setattr__(self, "_hash", self._fields_hash())

    # -- layouts -----------------------------------------------------------
    def _stride(self, name: str):
        """The strides of gmem layout ``name``; None if it is not a valid one (:func:`~.spec_fields.gmem_problems`),
        which only the constructor's checks see."""
        layout = getattr(self, name)
        return None if gmem_problems(layout, GMEM_MODES[name]) else layout.stride

    @property
    def a_major(self) -> str | None:
        """"K" if A's K mode has stride 1, "MN" if M has; None only while the constructor checks an invalid ``a``."""
        stride = self._stride("a")
        return None if stride is None else "K" if stride[1] == 1 else "MN"

    @property
    def b_major(self) -> str | None:
        """"K" if B's K mode has stride 1, "MN" if N has; None only while the constructor checks an invalid ``b``."""
        stride = self._stride("b")
        return None if stride is None else "K" if stride[1] == 1 else "MN"

    @property
    def c_row_major(self) -> bool:
        """True if D's N mode has stride 1 (row-major ``(M,N):(ld,1)``); raises SpecError for an invalid ``c``."""
        stride = self._stride("c")
        if stride is None:
            raise SpecError(gmem_problems(self.c, GMEM_MODES["c"]))
        return stride[1] == 1

    @property
    def blas_layout(self) -> str:
        """BLAS (column-major) naming: first letter A, second B; 't' = A K-major / B N-major ('tn' is both K-major)."""
        a = "t" if self.a_major == "K" else "n"
        b = "n" if self.b_major == "K" else "t"
        return a + b

    @property
    def grouping(self) -> str | None:
        """"batch" (a, b and c carry the group mode L), "m" (b alone: groups stacked along M), "k" (c alone:
        groups stacked along K), or None (:func:`cute_py.emit.grouping.grouping`).

        >>> GemmSpec(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldd_l)").grouping
        'batch'
        """
        return grouping(self)

    def operand(self, which: str) -> tuple:
        """``(gmem layout, major, tile extent along MN, wgmma slice rows, multicast)`` of operand "A" or "B".

        A's tile is BM x BK in 64-row wgmma slices, shared by the cluster's CTAs along N; B's is BN x BK, one
        slice of BN rows, shared along M. A shared tile is multicast by TMA; an operand read without TMA
        (``load_a``, ``load_b``) has no multicast form (``cp.async`` and ``ld`` write only their own CTA's shared
        memory), so every CTA of the cluster loads its whole tile.

        >>> GemmSpec(cluster=(2, 1)).operand("B")[1:], GemmSpec(cluster=(2, 1), load_b=8).operand("B")[4]
        (('K', 128, 128, 2), 1)
        """
        bm, bn, _ = self.tile
        if which == "A":
            return self.a, self.a_major, bm, 64, 1 if self.load_a else self.cluster[1]
        return self.b, self.b_major, bn, bn, 1 if self.load_b else self.cluster[0]

    # -- derived -----------------------------------------------------------
    @property
    def promotes(self) -> bool:
        """True when the mainloop keeps a second accumulator set and promotes each K tile into it: blockwise
        scales, or tensor / row scales without ``fast_accum``."""
        return self.scale == "block" or (self.scale in ("tensor", "row") and not self.fast_accum)

    def promote_chunk(self) -> int | None:
        """The column chunk of a promoting mainloop (:func:`cute_py.emit.scaling.promote_chunk`).

        >>> [GemmSpec(dtype="e4m3", scale="block", tile=t).promote_chunk() for t in ((128, 128, 128), (128, 192, 128))]
        [128, 64]
        """
        return promote_chunk(self)

    @property
    def tile_warpgroups(self) -> int:
        """Consumer warpgroups sharing one tile's math: ``consumers`` (cooperative), 1 (pingpong: each
        warpgroup owns whole tiles and holds the whole BM x BN accumulator)."""
        if self.schedule == "pingpong" or self.consumers not in (1, 2):
            return 1
        return self.consumers

    def resolved_stages(self) -> int:
        """``stages``, or as many as fit in shared memory (with 1024 bytes of alignment slack and each stage's
        blockwise scales), capped at 16."""
        if self.stages is not None:
            return self.stages
        bm, bn, bk = self.tile
        dt = self.dtype if self.dtype in INPUT_DTYPES else "bf16"
        return max(1, min(MAX_STAGES, smem_budget(bm, bn, bk, dt, dt, epilogue_bytes=self.epilogue_smem_bytes(),
                                                  stage_extra=scale_stage_bytes(self),
                                                  static_extra=self.static_smem_extra()).max_stages))

    def static_smem_extra(self) -> int:
        """Static shared memory besides the ring's barriers and slots: the scheduler's flags (at most 16 bytes)
        and, with blockwise scale slots, the padding that aligns them (:data:`~cute_py.emit.scaling.SCALE_SLOT_ALIGN`).

        >>> GemmSpec().static_smem_extra(), GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)).static_smem_extra()
        (16, 144)
        """
        return STATIC_FLAGS_BYTES + (SCALE_SLOT_ALIGN if self.scale == "block" else 0)

    def epilogue_smem_bytes(self) -> int:
        """Shared memory besides the ring: ``SMEM_ALIGN`` (1024) bytes of alignment slack (the dynamic smem is
        rounded up to a 1024-byte boundary), plus for the TMA epilogue ``epi_buffers`` staging buffers per consumer
        warpgroup of 64 rows (128-byte rows, or 64 or 32 bytes when those divide the tile's width:
        :func:`~cute_py.emit.resources.staging_cols`), one TMA store box each."""
        valid = is_int(self.epi_buffers) and 1 <= self.epi_buffers <= MAX_EPI_BUFFERS   # else reported; a stand-in
        buffers = self.epi_buffers if valid else STAGING_BUFFERS
        row_bytes = self._staging_row_bytes() or STAGING_ROW_BYTES            # none divides: reported by validate
        staging = buffers * STAGING_ROWS * row_bytes * (self.consumers if self.consumers in (1, 2) else 1)
        return SMEM_ALIGN + (staging if self.epilogue == "tma" else 0)

    def _staging_row_bytes(self) -> int | None:
        """The TMA epilogue's staging row bytes for this tile and output type (None: no chunk divides BN)."""
        if self.out_dtype not in OUT_DTYPES or not (isinstance(self.tile, tuple) and len(self.tile) == 3):
            return None
        nbytes = element_type(self.out_dtype).bits // 8
        cols = staging_cols(self.tile[1], nbytes)
        return cols * nbytes if cols else None

    @property
    def name(self) -> str:
        """A stable identifier (kernel symbol and cache key), e.g. ``cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr``.

        >>> GemmSpec(tile=(128, 256, 64)).name
        'cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g8'
        """
        bm, bn, bk = self.tile
        parts = ["cute_gemm_sm90", self.dtype, self.blas_layout, f"{bm}x{bn}x{bk}",
                 f"s{self.resolved_stages()}", f"c{self.consumers}", f"o{self.out_dtype}",
                 "dr" if self.c_row_major else "dc"]
        if self.cluster != (1, 1):
            parts.append("cl{}x{}".format(*self.cluster))
        parts.append(f"g{self.group}" if self.persistent else f"g{self.group}_np")   # the raster band is in the code
        if self.raster != "m":
            parts.append(f"r{self.raster}")
        if self.split_k != 1:
            parts.append(f"sk{self.split_k}")
        if self.scheduler is not None:
            parts.append(str(self.scheduler).replace("_", ""))
        if self.epilogue != "tma":
            parts.append(str(self.epilogue))
        if self.schedule != "cooperative":
            parts.append(str(self.schedule))
        if self.swizzle is not None:
            parts.append(f"sw{self.swizzle}")
        if not self.alpha:
            parts.append("noalpha")
        if self.beta:
            parts.append("beta")
        if self.bias:
            parts.append(f"bias{self.bias}")
        if self.activation:
            parts.append(str(self.activation))
        if self.scale:
            parts.append(f"scale{self.scale}")
        if self.fast_accum:
            parts.append("fastaccum")
        if self.scale_type != "f32":
            parts.append(str(self.scale_type))
        if self.epi_buffers != STAGING_BUFFERS:
            parts.append(f"eb{self.epi_buffers}")
        if self.load_a or self.load_b:
            parts.append(f"ld{self.load_a}x{self.load_b}")
        if self.grouping:
            parts.append({"batch": "batched", "m": "grouped", "k": "kgrouped"}[self.grouping])
        return re.sub(r"\W", "_", "_".join(parts))

    def _c_ok(self) -> bool:
        return self._stride("c") is not None

    # -- checks (made by the constructor) ----------------------------------
    def _problems(self) -> list:
        """Every violated constraint, each with its values ([] = valid): each field's type and range
        (:mod:`~cute_py.emit.spec_fields`), then the rules relating them, the collectives' (scheduler, fp8
        scales, groups, loads) and Hopper's (budgets, smem atoms, descriptors, TMA boxes, asked of
        cute_py.arch.sm90); never plans."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        out = [f"{name}: {p}" for name, modes in GMEM_MODES.items() for p in gmem_problems(values[name], modes)]
        out += value_problems(values)
        typed = type_problems(values)
        if typed:                                   # the rules below read the fields as their types
            return out + typed
        bm, bn, bk = self.tile
        if self.schedule == "pingpong":
            if self.consumers != 2:
                out.append(f"schedule = 'pingpong' needs consumers = 2 (two warpgroups taking turns), "
                           f"got {self.consumers}")
            if not self.persistent:
                out.append("schedule = 'pingpong' needs persistent = True (the warpgroups take turns over a CTA's "
                           "tiles; one tile per CTA would leave one idle)")
        if self.epilogue == "tma" and self._c_ok() and not self.c_row_major:
            out.append(f"epilogue = 'tma' needs a row-major D (c = '(M,N):(ldd,1)'), got c = '{self.c}'; "
                       f"use epilogue = 'direct'")
        if self.epilogue == "tma" and bn % 8 == 0 and 0 < bn <= 256 and not self._staging_row_bytes():  # a wgmma N
            out.append(f"epilogue = 'tma' stages D in chunks of 128-, 64- or 32-byte rows, and none divides "
                       f"BN = {self.tile[1]} columns of {self.out_dtype}; use epilogue = 'direct'")
        scheduler = scheduler_class(self)
        if self.scheduler is not None and scheduler is None:
            out.append(f"scheduler = {self.scheduler!r} not in {tuple(SCHEDULERS)}")
        elif scheduler is not None:
            out += scheduler.problems(self) + self._named_scheduler_problems(scheduler)
        out += scale_problems(self) + group_problems(self) + load_problems(self)
        stages = self.resolved_stages()
        if stages < 2:
            out.append(f"stages = {stages}: the smem ring needs at least 2")
        if stages > 32:
            out.append(f"stages = {stages} > 32")
        if bm > 256:
            out.append(f"BM = {bm} > 256 (one TMA box spans the tile's M extent)")
        # Hopper budgets (check_config), with valid stand-ins for fields already reported, so the tile's own
        # problems are listed too; the dynamic smem carries SMEM_ALIGN bytes of alignment slack (the epilogue slot)
        t = self.dtype if self.dtype in INPUT_DTYPES else "bf16"
        c = self.tile_warpgroups
        out += [p for p in check_config(bm, bn, bk, t, t, "f32", c, stages, epilogue_bytes=self.epilogue_smem_bytes(),
                                        cluster=tuple(self.cluster) + (1,), max_regs_per_consumer=CONSUMER_REGS,
                                        stage_extra=scale_stage_bytes(self), static_extra=self.static_smem_extra())
                if not p.startswith("consumers") and not p.startswith("cluster")]
        if not out:
            out += self._layout_problems()
        return list(dict.fromkeys(out))          # stable, without duplicates

    def _named_scheduler_problems(self, scheduler) -> list:
        """A scheduler named in the spec walks its problem and agrees with ``split_k``: the one the fields imply,
        or stream-K (which no field implies)."""
        implied = implied_scheduler(self)
        if self.scheduler is None or scheduler is implied or implied is None:
            return []
        problem = {None: "one GEMM", "batch": "a batch", "m": "groups along M", "k": "groups along K"}
        if not scheduler.walks(self):
            return [f"scheduler = {self.scheduler!r} does not walk {problem.get(self.grouping, self.grouping)} "
                    f"(the layouts' problem): its scheduler is {implied.name!r}"]
        if getattr(scheduler, "family", None) == "stream_k":
            return []
        return [f"scheduler = {self.scheduler!r} conflicts with split_k = {self.split_k}, which takes "
                f"{implied.name!r}"]

    def _layout_problems(self) -> list:
        """Smem atoms, wgmma descriptors and TMA boxes must exist for A's and B's tiles (asked of
        :func:`cute_py.arch.sm90.operand.operand_problems`, as the plan will derive them)."""
        out = []
        for which in ("A", "B"):
            gmem, major, mn, mma_mn, multicast = self.operand(which)
            out += [f"operand {which}: {p}" for p in _operand_problems(
                gmem, major, self.dtype, mn, self.tile[2], mma_mn, multicast, self.swizzle)]
        return out

    def validate(self) -> "GemmSpec":
        """``self``: a GemmSpec is checked when it is made (the constructor raises :class:`SpecError` listing
        every violation), so this passes; it is kept for code that reads as a check, e.g.
        ``GemmSpec.from_file(path).validate()``."""
        return self

    # -- files -------------------------------------------------------------
    def to_dict(self) -> dict:
        """The fields as plain values (the layouts as CuTe text), without the unset ones: ``from_dict``'s input."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in GMEM_MODES:
            d[name] = str(d[name])
        d["tile"], d["cluster"] = list(self.tile), list(self.cluster)
        return {k: v for k, v in d.items() if v is not None}

    def replace(self, **changes) -> "GemmSpec":
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, data) -> "GemmSpec":
        """A spec from its fields (``to_dict``'s output): a mapping of field names to values, at top level or all
        under ``"gemm"``.

        Raises :class:`SpecError` naming ``GemmSpec.from_dict`` for a non-mapping, a mapping without fields, an
        unknown key (listing the known ones), or fields the constructor refuses (each with its value and rule).

        >>> GemmSpec.from_dict({"gemm": {"tile": [128, 256, 64]}}).tile
        (128, 256, 64)
        >>> GemmSpec.from_dict([1, 2, 3])
        Traceback (most recent call last):
        ...
        cute_py.emit.spec.SpecError: GemmSpec.from_dict: a spec must be a mapping of field names to values \
(a TOML table or a JSON object), got list [1, 2, 3]
        >>> GemmSpec.from_dict({"consumers": "2"})
        Traceback (most recent call last):
        ...
        cute_py.emit.spec.SpecError: GemmSpec.from_dict: consumers = '2' must be an int
        """
        return cls._read(data, "GemmSpec.from_dict")

    @classmethod
    def from_file(cls, path) -> "GemmSpec":
        """Load a spec from a TOML (``.toml``: fields at top level or all under ``[gemm]``) or JSON (``.json``)
        file, or a shipped example by name: ``"example:tn_bf16_128x256"`` (:func:`example_specs`).

        Raises :class:`SpecError` naming ``GemmSpec.from_file`` and the file for a malformed file, one without
        spec fields, an unknown key, or fields the constructor refuses; FileNotFoundError for a missing file
        (hinting ``example:NAME`` where NAME is a shipped example); TypeError for a path that is not a str or
        os.PathLike.

        >>> GemmSpec.from_file("example:tn_bf16_128x256").tile
        (128, 256, 64)
        >>> GemmSpec.from_file("tn_bf16_128x256")
        Traceback (most recent call last):
        ...
        FileNotFoundError: GemmSpec.from_file: 'tn_bf16_128x256': No such file or directory; the shipped \
example of that name is 'example:tn_bf16_128x256'
        """
        op = "GemmSpec.from_file"
        if isinstance(path, str) and path.startswith("example:"):
            ex, name = example_specs(), path.split(":", 1)[1]
            if name not in ex:
                raise SpecError([f"no example spec {name!r}; shipped: {', '.join(ex)}"], op=op)
            path = ex[name]
        try:
            path = Path(path)
        except TypeError:
            raise TypeError(f"{op}: path must be a str or os.PathLike (a .toml or .json file, or 'example:NAME'), "
                            f"got {type(path).__name__}: {path!r:.80}") from None
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            hint = (f"; the shipped example of that name is 'example:{path.stem}'" if path.stem in example_specs()
                    else "")
            raise FileNotFoundError(f"{op}: {str(path)!r}: No such file or directory{hint}") from None
        except OSError as e:                       # a folder, no permission: the OS's reason, naming from_file
            raise type(e)(f"{op}: {str(path)!r}: {e.strerror or e}") from None
        if path.suffix not in (".toml", ".json"):
            raise SpecError([f"a spec file is TOML (.toml) or JSON (.json), not {path.suffix or 'without a suffix'}"],
                            op=op, source=path)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SpecError([f"malformed text (not UTF-8): {e}"], op=op, source=path) from None
        try:
            if path.suffix == ".json":
                data = json.loads(text)
            else:
                try:
                    import tomllib
                except ImportError:                                       # Python 3.10
                    import tomli as tomllib  # type: ignore[no-redef]
                data = tomllib.loads(text)
        except ValueError as e:                    # JSONDecodeError, TOMLDecodeError
            raise SpecError([f"malformed {path.suffix[1:].upper()}: {e}"], op=op, source=path) from None
        return cls._read(data, op, path)

    @classmethod
    def _read(cls, data, op: str, source=None) -> "GemmSpec":
        """The spec of ``data`` (:meth:`from_dict`), its errors raised as SpecErrors of ``op`` and ``source``."""
        known = [f.name for f in fields(cls)]
        if isinstance(data, Mapping) and "gemm" in data:
            beside = sorted(set(data) - {"gemm"}, key=str)
            if beside:
                raise SpecError([f"key(s) {beside} beside the gemm table: a spec's fields are all under [gemm] or "
                                 f"all at top level; known fields: {known}"], op=op, source=source)
            data = data["gemm"]
        if not isinstance(data, Mapping):
            raise SpecError([f"a spec must be a mapping of field names to values (a TOML table or a JSON object), "
                             f"got {type(data).__name__} {data!r:.80}"], op=op, source=source)
        if not data:
            raise SpecError(["holds no spec fields: write at least one (e.g. tile = [128, 256, 64]; GemmSpec() "
                             "is the default spec)"], op=op, source=source)
        unknown = sorted(set(data) - set(known), key=str)
        if unknown:
            raise SpecError([f"unknown spec key(s) {unknown}; known: {known}"], op=op, source=source)
        try:
            return cls(**data)
        except SpecError as e:
            raise SpecError(e.problems, op=op, source=source) from None


def require_spec(spec, fn: str) -> "GemmSpec":
    """``spec`` itself if it is a :class:`GemmSpec`, else a TypeError naming ``fn`` (the caller) and the argument.

    >>> require_spec("tn", "emit_gemm")
    Traceback (most recent call last):
      ...
    TypeError: emit_gemm: spec must be a GemmSpec, got str: 'tn'
    """
    if not isinstance(spec, GemmSpec):
        raise TypeError(f"{fn}: spec must be a GemmSpec, got {type(spec).__name__}: {spec!r:.80}")
    return spec


def example_specs() -> dict:
    """The example spec files shipped in ``cute_py/specs``: ``{stem: path}``."""
    folder = Path(__file__).resolve().parent.parent / "specs"
    return {p.stem: p for p in sorted(folder.glob("*.toml")) + sorted(folder.glob("*.json"))}
