"""``GemmSpec``: the layout spec of a warp-specialized sm_90a GEMM, and its validation.

A spec names the global-memory layouts of A ``(M,K)``, B ``(N,K)`` and C/D
``(M,N)`` in CuTe notation with symbolic extents (majorness is read from the
strides: the mode whose stride is 1 is contiguous), the element types, the CTA
tile, the pipeline depth, the consumer warpgroups and the epilogue. The kernel
computes ``D = act(alpha * A @ B^T + beta * C + bias)``.

>>> s = GemmSpec(a="(M,K):(K,1)", b="(N,K):(1,N)")
>>> s.a_major, s.b_major, s.blas_layout
('K', 'MN', 'tt')
>>> s.name
'cute_gemm_sm90_bf16_tt_128x128x64_s6_c2_obf16_dr_g8'
>>> GemmSpec(tile=(96, 264, 40), consumers=3).validate()  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cute_py.emit.spec.SpecError: GemmSpec.validate: 4 constraint(s) violated:
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
from ..layouts import Layout, parse
from ..layouts.errors import LayoutError
from .collectives.schedulers import SCHEDULERS, scheduler_class
from .resources import CONSUMER_REGS, STAGING_BUFFERS, STAGING_ROW_BYTES, STAGING_ROWS
from .grouping import GROUP_MODE, grouping, group_problems
from .loads import load_problems
from .scaling import (FP8_DTYPES, PROMOTE_CHUNKS, PROMOTE_REGS, SCALE_BLOCK, SCALES, promote_chunk,  # noqa: F401
                      scale_problems)

__all__ = ["GemmSpec", "SpecError", "DTYPES", "FP8_DTYPES", "INPUT_DTYPES", "OUT_DTYPES", "SCALES", "SCALE_BLOCK",
           "PROMOTE_REGS", "PROMOTE_CHUNKS",
           "SWIZZLES", "GMEM_MODES"]

DTYPES = ("bf16", "f16")
"""Input types of the unscaled GEMM (``cute_py.gemm``)."""
INPUT_DTYPES = DTYPES + FP8_DTYPES
OUT_DTYPES = ("bf16", "f16", "f32")
SWIZZLES = (None, 0, 32, 64, 128)
BIAS = (None, "row", "col")
ACTIVATIONS = (None, "relu", "gelu")
EPILOGUES = ("tma", "direct")
CLUSTERS = ((1, 1), (2, 1), (1, 2))
SCHEDULES = ("cooperative", "pingpong")
RASTERS = ("m", "n")
MAX_STAGES = 16
MAX_SPLIT_K = 16
MAX_EPI_BUFFERS = 8
_ALIASES = {"fp16": "f16", "half": "f16", "float16": "f16", "bfloat16": "bf16", "fp32": "f32", "float32": "f32"}
GMEM_MODES = {"a": ("M", "K"), "b": ("N", "K"), "c": ("M", "N")}
"""The mode names of each gmem layout: A is ``(M,K)``, B ``(N,K)``, C/D ``(M,N)``."""


class SpecError(LayoutError):
    """A GemmSpec that no kernel can implement; ``problems`` lists every violated constraint with its values.

    >>> try:
    ...     GemmSpec(stages=0).validate()
    ... except SpecError as e:
    ...     print(e.problems)
    ['stages = 0: the smem ring needs at least 2']
    """

    def __init__(self, problems, op: str = "GemmSpec.validate"):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        if op == "GemmSpec.validate":
            message = f"GemmSpec.validate: {len(self.problems)} constraint(s) violated:\n{lines}"
        else:                                   # reading a spec (from_dict, from_file): what could not be read
            message = f"{op}: " + "; ".join(self.problems)
        super().__init__(message, op=op, rule="GEMM spec constraints")


@lru_cache(maxsize=256)
def _parsed(text: str):
    """The Layout CuTe text parses to, or the text itself when it is not a layout (reported by validation)."""
    try:
        x = parse(text)
    except LayoutError:
        return text
    return x if isinstance(x, Layout) else text


def _gmem(value):
    """A gmem layout field as stored: a Layout (CuTe text is parsed, symbols for the extents), else as given."""
    return _parsed(value) if isinstance(value, str) else value


def _is_symbol(x) -> bool:
    return getattr(x, "is_Symbol", False)


def gmem_problems(layout, modes: tuple) -> list:
    """Why ``layout`` is not a gmem layout of a GEMM operand with modes ``modes`` (empty: it is one).

    It must be a rank-2 Layout over the symbolic extents ``modes`` (the problem size is a launch parameter)
    whose strides are ``1`` (the contiguous mode, exactly one) and a symbol (the leading dimension); or rank 3
    with the group mode ``L`` last, its stride a symbol too (:mod:`cute_py.emit.grouping`).

    >>> gmem_problems(parse("(M,N):(1,ldd)"), ("M", "N"))
    []
    >>> gmem_problems(parse("(N,K,L):(K,1,ldl)"), ("N", "K"))
    []
    >>> gmem_problems(parse("(K,M):(1,K)"), ("M", "K"))
    ["gmem layout '(K,M):(1,K)': modes must be named ('M', 'K'), found ('K', 'M')"]
    >>> gmem_problems(parse("((64,M1),K):((1,ldm),lda)"), ("M", "K"))[0][:67]
    "gmem layout '((64,M1),K):((1,ldm),lda)': a hierarchical mode is not"
    """
    text = str(layout)
    if not isinstance(layout, Layout) or not isinstance(layout.shape, tuple) or len(layout.shape) not in (2, 3):
        return [f"gmem layout {text!r} is not of the form '({modes[0]},{modes[1]}):(s0,s1)' "
                f"(CuTe notation, symbolic extents; a third mode {GROUP_MODE} for groups or batches)"]
    shape, stride = layout.shape, layout.stride
    if any(isinstance(x, tuple) for x in shape):
        return [f"gmem layout {text!r}: a hierarchical mode is not emitted (the kernel prints one TMA coordinate "
                f"per flat mode); make_tma_params builds TMA parameters for it, one TMA dim per part"]
    problems = []
    if len(shape) == 3:
        modes = tuple(modes) + (GROUP_MODE,)
        if stride[2] == 1:
            problems.append(f"gmem layout {text!r}: the group mode {GROUP_MODE} cannot be the contiguous one")
    names = tuple(x.name if _is_symbol(x) else str(x) for x in shape)
    if names != tuple(modes) or not all(_is_symbol(x) for x in shape):
        problems.append(f"gmem layout {text!r}: modes must be named {tuple(modes)}, found {names}")
    if sum(1 for d in stride if d == 1) != 1:
        problems.append(f"gmem layout {text!r}: exactly one stride must be 1 (the contiguous mode), "
                        f"found {tuple(str(d) for d in stride)}")
    for d in stride:
        if d != 1 and not _is_symbol(d):
            problems.append(f"gmem layout {text!r}: stride {d} must be 1 or a symbol (the leading dimension)")
    return problems


BOOL_FIELDS = ("persistent", "alpha", "beta", "fast_accum")
"""Fields that take True or False only (not "yes", "no", 0 or 1)."""
INT_FIELDS = {"consumers": False, "group": False, "split_k": False, "stages": True, "swizzle": True,
              "epi_buffers": False, "load_a": False, "load_b": False}
"""Fields that take an int (never a bool) -> whether None is allowed too."""
PAIR_FIELDS = {"tile": 3, "cluster": 2}
"""Fields that take a tuple (or list) of that many positive ints (never bools)."""


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def type_problems(values: Mapping) -> list:
    """Why the spec fields in ``values`` have the wrong Python type (empty: every type is right).

    Bool fields take bools only; int fields ints that are not bools; tile and cluster tuples (or lists) of
    positive ints of the right length. The values themselves are checked by :meth:`GemmSpec.problems`.

    >>> type_problems({"persistent": "no", "consumers": True, "tile": 128, "cluster": (1, 1), "stages": None})
    ["persistent = 'no' must be True or False", 'consumers = True must be an int, not a bool', \
'tile = 128 must be a tuple of 3 positive ints (BM, BN, BK)']
    """
    out = []
    for name in BOOL_FIELDS:
        if name in values and not isinstance(values[name], bool):
            out.append(f"{name} = {values[name]!r} must be True or False")
    for name, optional in INT_FIELDS.items():
        v = values.get(name)
        if name not in values or _is_int(v) or (optional and v is None):
            continue
        what = "an int" + (" or None" if optional else "")
        out.append(f"{name} = {v!r} must be {what}" + (", not a bool" if isinstance(v, bool) else ""))
    for name, n in PAIR_FIELDS.items():
        v = values.get(name)
        if name in values and not (isinstance(v, tuple) and len(v) == n and all(_is_int(x) and x > 0 for x in v)):
            what = " (BM, BN, BK)" if name == "tile" else " (CTAs along M, along N)"
            out.append(f"{name} = {v!r} must be a tuple of {n} positive ints{what}")
    return out


def _norm(t):
    if t is None:
        return None
    t = str(t).lower()
    return _ALIASES.get(t, t)


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
      K in the tensor core (faster, allows 128x256 tiles).
    - ``tile`` (BM, BN, BK); ``cluster`` (1, 1), (2, 1) (two CTAs along M share
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
    """

    a: Layout = "(M,K):(K,1)"
    b: Layout = "(N,K):(K,1)"
    c: Layout = "(M,N):(N,1)"
    dtype: str = "bf16"
    out_dtype: str | None = None
    acc_dtype: str = "f32"
    tile: tuple = (128, 128, 64)
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
    epi_buffers: int = STAGING_BUFFERS
    load_a: int = 0
    load_b: int = 0

    def __post_init__(self):
        set_ = object.__setattr__
        for name in GMEM_MODES:
            set_(self, name, _gmem(getattr(self, name)))
        set_(self, "dtype", _norm(self.dtype))
        set_(self, "out_dtype", _norm(self.out_dtype) or ("bf16" if self.dtype in FP8_DTYPES else self.dtype))
        set_(self, "acc_dtype", _norm(self.acc_dtype))
        for name in PAIR_FIELDS:                    # lists (TOML, JSON) become tuples; other types are reported
            if isinstance(getattr(self, name), list):
                set_(self, name, tuple(getattr(self, name)))
        if self.epilogue is None:                  # TMA stores where D allows them
            set_(self, "epilogue", "tma" if self._c_ok() and self.c_row_major else "direct")

    # -- layouts -----------------------------------------------------------
    def _stride(self, name: str):
        """The strides of gmem layout ``name``, None if it is not a valid one (see :func:`gmem_problems`)."""
        layout = getattr(self, name)
        return None if gmem_problems(layout, GMEM_MODES[name]) else layout.stride

    @property
    def a_major(self) -> str | None:
        """"K" if A's K mode has stride 1, "MN" if M has; None if ``a`` is not a valid gmem layout."""
        stride = self._stride("a")
        return None if stride is None else "K" if stride[1] == 1 else "MN"

    @property
    def b_major(self) -> str | None:
        """"K" if B's K mode has stride 1, "MN" if N has; None if ``b`` is not a valid gmem layout."""
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
        slice of BN rows, shared along M.

        >>> GemmSpec(cluster=(2, 1)).operand("B")[1:]
        ('K', 128, 128, 2)
        """
        bm, bn, _ = self.tile
        if which == "A":
            return self.a, self.a_major, bm, 64, self.cluster[1]
        return self.b, self.b_major, bn, bn, self.cluster[0]

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
        """``stages``, or as many as fit in shared memory (with 1024 bytes of alignment slack), capped at 16."""
        if self.stages is not None:
            return self.stages
        bm, bn, bk = self.tile
        dt = self.dtype if self.dtype in INPUT_DTYPES else "bf16"
        return max(1, min(MAX_STAGES, smem_budget(bm, bn, bk, dt, dt, epilogue_bytes=self.epilogue_smem_bytes()
                                                  ).max_stages))

    def epilogue_smem_bytes(self) -> int:
        """Shared memory besides the ring: ``SMEM_ALIGN`` (1024) bytes of alignment slack (the dynamic smem is
        rounded up to a 1024-byte boundary), plus for the TMA epilogue two 64-row x 128-byte staging buffers per
        consumer warpgroup (swizzled 128 B, one TMA store box each)."""
        buffers = self.epi_buffers if _is_int(self.epi_buffers) else STAGING_BUFFERS
        staging = buffers * STAGING_ROWS * STAGING_ROW_BYTES * (self.consumers if self.consumers in (1, 2) else 1)
        return SMEM_ALIGN + (staging if self.epilogue == "tma" else 0)

    @property
    def name(self) -> str:
        """A stable identifier (kernel symbol and cache key), e.g. ``cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr``;
        ``cute_gemm_sm90_invalid`` for a spec whose fields have the wrong types (it never compiles).

        >>> GemmSpec(tile=(128, 256, 64)).name, GemmSpec(tile=128).name
        ('cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g8', 'cute_gemm_sm90_invalid')
        """
        if type_problems({f.name: getattr(self, f.name) for f in fields(self)}):
            return "cute_gemm_sm90_invalid"
        bm, bn, bk = self.tile
        parts = ["cute_gemm_sm90", self.dtype, self.blas_layout or "xx", f"{bm}x{bn}x{bk}",
                 f"s{self.resolved_stages()}", f"c{self.consumers}", f"o{self.out_dtype}",
                 "dr" if self._c_ok() and self.c_row_major else "dc"]
        if self.cluster != (1, 1):
            parts.append("cl{}x{}".format(*self.cluster))
        parts.append(f"g{self.group}" if self.persistent else "np")
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
        if self.epi_buffers != STAGING_BUFFERS:
            parts.append(f"eb{self.epi_buffers}")
        if self.load_a or self.load_b:
            parts.append(f"ld{self.load_a}x{self.load_b}")
        if self.grouping:
            parts.append({"batch": "batched", "m": "grouped", "k": "kgrouped"}.get(self.grouping, "xgroup"))
        return re.sub(r"\W", "_", "_".join(parts))

    def _c_ok(self) -> bool:
        return self._stride("c") is not None

    # -- validation --------------------------------------------------------
    def problems(self) -> list:
        """Every violated constraint, each with its values ([] = valid). Asks cute_py.arch.sm90 (budgets, smem
        atoms, descriptors, TMA boxes); never plans."""
        out = []
        for name, modes in GMEM_MODES.items():
            out += gmem_problems(getattr(self, name), modes)
        if self.dtype not in INPUT_DTYPES:
            out.append(f"dtype = {self.dtype!r} not in {INPUT_DTYPES}")
        if self.out_dtype not in OUT_DTYPES:
            out.append(f"out_dtype = {self.out_dtype!r} not in {OUT_DTYPES}")
        if self.acc_dtype != "f32":
            out.append(f"acc_dtype = {self.acc_dtype!r}: only f32 accumulation is emitted")
        typed = type_problems({f.name: getattr(self, f.name) for f in fields(self)})
        if typed:                                   # the checks below read the fields as their types
            return out + typed
        bm, bn, bk = self.tile
        if self.consumers not in (1, 2):
            out.append(f"consumers = {self.consumers} not in (1, 2)")
        if self.schedule not in SCHEDULES:
            out.append(f"schedule = {self.schedule!r} not in {SCHEDULES}")
        elif self.schedule == "pingpong":
            if self.consumers != 2:
                out.append(f"schedule = 'pingpong' needs consumers = 2 (two warpgroups taking turns), got {self.consumers}")
            if not self.persistent:
                out.append("schedule = 'pingpong' needs persistent = True (the warpgroups take turns over a CTA's "
                           "tiles; one tile per CTA would leave one idle)")
        if self.cluster not in CLUSTERS:
            out.append(f"cluster = {self.cluster} not in {CLUSTERS}")
        if self.epilogue not in EPILOGUES:
            out.append(f"epilogue = {self.epilogue!r} not in {EPILOGUES}")
        elif self.epilogue == "tma" and self._c_ok() and not self.c_row_major:
            out.append(f"epilogue = 'tma' needs a row-major D (c = '(M,N):(ldd,1)'), got c = {self.c!r}; "
                       f"use epilogue = 'direct'")
        if not isinstance(self.group, int) or not 1 <= self.group <= 64:
            out.append(f"group = {self.group!r} not an int in [1, 64]")
        if self.raster not in RASTERS:
            out.append(f"raster = {self.raster!r} not in {RASTERS}")
        if not isinstance(self.split_k, int) or not 1 <= self.split_k <= MAX_SPLIT_K:
            out.append(f"split_k = {self.split_k!r} not an int in [1, {MAX_SPLIT_K}]")
        scheduler = scheduler_class(self)
        if self.scheduler is not None and scheduler is None:
            out.append(f"scheduler = {self.scheduler!r} not in {tuple(SCHEDULERS)}")
        elif scheduler is not None:
            out += scheduler.problems(self)
        if self.swizzle not in SWIZZLES:
            out.append(f"swizzle = {self.swizzle!r} not in {SWIZZLES}")
        if not 1 <= self.epi_buffers <= MAX_EPI_BUFFERS:
            out.append(f"epi_buffers = {self.epi_buffers} not in [1, {MAX_EPI_BUFFERS}]")
        if self.bias not in BIAS:
            out.append(f"bias = {self.bias!r} not in {BIAS}")
        if self.activation not in ACTIVATIONS:
            out.append(f"activation = {self.activation!r} not in {ACTIVATIONS}")
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
                                        cluster=tuple(self.cluster) + (1,), max_regs_per_consumer=CONSUMER_REGS)
                if not p.startswith("consumers") and not p.startswith("cluster")]
        if not out:
            out += self._layout_problems()
        return list(dict.fromkeys(out))          # stable, without duplicates

    def _layout_problems(self) -> list:
        """Smem atoms, wgmma descriptors and TMA boxes must exist for A's and B's tiles (asked of
        :func:`cute_py.arch.sm90.operand.operand_problems`, as the plan will derive them)."""
        out = []
        for which in ("A", "B"):
            gmem, major, mn, mma_mn, multicast = self.operand(which)
            out += [f"operand {which}: {p}" for p in operand_problems(
                gmem, major, self.dtype, mn, self.tile[2], mma_mn=mma_mn, multicast=multicast, swizzle=self.swizzle)]
        return out

    def validate(self) -> "GemmSpec":
        """Return ``self`` if the spec is implementable, else raise :class:`SpecError` listing every violation."""
        problems = self.problems()
        if problems:
            raise SpecError(problems)
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
    def from_dict(cls, data: dict) -> "GemmSpec":
        """A spec from its fields (``to_dict``'s output; keys at top level or under ``"gemm"``).

        Raises :class:`SpecError` for a non-mapping or an unknown key; the field values are checked by
        :meth:`validate`.

        >>> GemmSpec.from_dict({"gemm": {"tile": [128, 256, 64]}}).tile
        (128, 256, 64)
        >>> GemmSpec.from_dict([1, 2, 3])
        Traceback (most recent call last):
        ...
        cute_py.emit.spec.SpecError: GemmSpec.from_dict: a spec must be a mapping of field names to values \
(a TOML table or a JSON object), got list [1, 2, 3]
        """
        if isinstance(data, Mapping) and "gemm" in data:
            data = data["gemm"]
        if not isinstance(data, Mapping):
            raise SpecError([f"a spec must be a mapping of field names to values (a TOML table or a JSON object), "
                             f"got {type(data).__name__} {data!r:.80}"], op="GemmSpec.from_dict")
        data = dict(data)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known, key=str)
        if unknown:
            raise SpecError([f"unknown spec key(s) {unknown}; known: {sorted(known)}"])
        return cls(**data)

    @classmethod
    def from_file(cls, path) -> "GemmSpec":
        """Load a spec from TOML (``.toml``, keys at top level or under ``[gemm]``) or JSON.

        Shipped examples: :func:`example_specs`.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".json":
                data = json.loads(text)
            else:
                try:
                    import tomllib
                except ImportError:                                       # Python 3.10
                    import tomli as tomllib  # type: ignore[no-redef]
                data = tomllib.loads(text)
        except ValueError as e:                    # JSONDecodeError, TOMLDecodeError, UnicodeDecodeError
            kind = "JSON" if path.suffix == ".json" else "TOML"
            if isinstance(e, UnicodeDecodeError):
                kind = "text (not UTF-8)"
            raise SpecError([f"{path}: malformed {kind}: {e}"], op="GemmSpec.from_file") from None
        return cls.from_dict(data)


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
