"""``Problem``: the one place a GEMM's arrays are inspected and validated.

Every GEMM-like operation starts here::

    arrays -> Problem -> select(problem) -> GemmSpec -> GemmPlan -> plan.bind(problem) -> Launch

:meth:`Problem.from_arrays` reads shapes, element types, strides (and so the
majors and leading dimensions), alignment, devices and the epilogue operands
of ``D = act(alpha * a @ b + beta * c + bias)`` and raises one error class,
:class:`GemmInputError`, naming the operation, the operand and the broken
condition, before anything is compiled or launched. The result is a frozen,
hashable value: the fields a kernel choice depends on, the concrete leading
dimensions the launch binds, and (not compared) the inspected arrays.
:meth:`Problem.mismatches` is the one answer to "does this spec fit these
arrays".

>>> p = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
>>> p.flops, p.shape, (p.lda, p.ldb, p.ldd)
(137438953472, '4096x4096x4096', (4096, 4096, 4096))
>>> from cute_py.emit import GemmSpec
>>> p.mismatches(GemmSpec(dtype="f16"))
["dtype: spec 'f16', arrays 'bf16'", "out_dtype: spec 'f16', arrays 'bf16'"]
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import NoReturn

from .emit.spec import ACTIVATIONS, DTYPES, FP8_DTYPES, OUT_DTYPES, SCALE_BLOCK
from .emit.scaling import SCALE_TYPES, TMA_BYTES_ALIGN, reads_scale_a
from .dtypes import dtype as _dtype
from .layouts.int_tuple import round_up
from .options import flag
from .problem_fields import MAX_EXTENT, SHARED_FEATURES, field_problems
from .runtime.arrays import as_device_array

__all__ = ["Problem", "Operands", "Staging", "GemmInputError", "overlaps", "scale_mode", "TMA_ALIGN", "MAX_EXTENT",
           "tma_aligned"]

TMA_ALIGN = TMA_BYTES_ALIGN
"""In bytes. TMA needs 16-byte aligned global addresses and leading dimensions (A and B, and D for TMA stores)."""


class GemmInputError(ValueError):
    """Arrays a GEMM cannot take (shape, dtype, alignment, contiguity, device); raised before anything launches.

    >>> Problem.from_arrays(None, None)                       # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: gemm: a: ...
    """


@dataclass(frozen=True)
class Staging:
    """An operand TMA cannot read (base or leading dimension not a multiple of 16 bytes), copied before the
    launch into a buffer TMA can (:mod:`cute_py.emit.stage_copy`): ``rows`` rows of ``row_bytes`` bytes, ``src_ld``
    bytes apart in the operand and ``ld`` (a multiple of 16) in the buffer, read ``vec`` bytes at a time (the
    largest power of two up to 8 dividing the address, ``src_ld`` and ``row_bytes``). ``which``: "a" or "b".
    A 3-D operand (a batch, the experts of a grouped GEMM) has ``groups`` matrices ``src_group`` bytes apart;
    the buffer stacks them ``rows * ld`` bytes apart.

    >>> s = Staging.of("a", 0x1002, rows=4096, cols=4095, src_ld=4095, itemsize=2)
    >>> s.ld, s.vec, s.ld_elements(2)            # rows of 8190 B go 8192 B apart; the odd pitch allows 2-byte loads
    (8192, 2, 4096)
    """

    which: str
    rows: int
    row_bytes: int
    src_ld: int
    ld: int
    vec: int
    groups: int = 1
    src_group: int = 0

    @classmethod
    def of(cls, which: str, ptr: int, rows: int, cols: int, src_ld: int, itemsize: int, groups: int = 1,
           group_stride: int = 0) -> "Staging":
        """The staging of ``groups`` (``group_stride`` elements apart) ``rows`` x ``cols`` matrices (``cols``
        contiguous, rows ``src_ld`` elements apart)."""
        row_bytes, pitch = cols * itemsize, src_ld * itemsize if rows > 1 else 0
        between = group_stride * itemsize if groups > 1 else 0
        return cls(which, rows, row_bytes, pitch, round_up(row_bytes, TMA_ALIGN),
                   widest_load(8, ptr, row_bytes, pitch, between), groups, between)

    @property
    def nbytes(self) -> int:
        """The staging buffer's size in bytes."""
        return self.groups * self.rows * self.ld

    def group_elements(self, itemsize: int) -> int:
        """The buffer's group stride in elements (the tensor map's outer stride)."""
        return self.rows * self.ld // itemsize

    def ld_elements(self, itemsize: int) -> int:
        """The buffer's leading dimension in elements (what the tensor map reads)."""
        return self.ld // itemsize


@dataclass(frozen=True)
class Operands:
    """The inspected arrays of one call (``runtime.DeviceArray`` records; ``c`` and ``bias`` None when unused,
    ``out`` None when the GEMM allocates D) with the epilogue scalars and ``like``, the array ``a`` as given
    (D is allocated by its library).

    >>> from cute_py.runtime import as_device_array
    >>> a = as_device_array(1 << 40, shape=(64, 32), dtype="bf16")
    >>> Operands(a, a, alpha=2.0).device is None                   # a raw pointer: the current device
    True
    """

    a: object
    b: object
    c: object = None
    bias: object = None
    out: object = None
    alpha: float = 1.0
    beta: float = 0.0
    like: object = None
    scale_a: object = None
    scale_b: object = None
    offs: object = None

    @property
    def device(self):
        """The CUDA ordinal the arrays say they live on (None means the current device)."""
        return self.a.device if self.a.device is not None else self.b.device


@dataclass(frozen=True)
class Problem:
    """One GEMM ``D (M, N) = act(alpha * a (M, K) @ b (K, N) + beta * C + bias)`` as the kernel choice sees it.

    - ``a_major`` "K" when a's K dimension is contiguous, else "MN"; ``b_major`` "K" when b ``(K, N)`` has K
      contiguous (``w.t()`` of a row-major ``w (N, K)``), else "MN".
    - ``dtype`` of a and b, ``out_dtype`` of C and D; ``beta``: C is read; ``bias`` None, "row" (length M) or
      "col" (length N); ``activation`` None, "relu" or "gelu".
    - ``c_row_major``: D (and C) row-major; ``d_tma``: D can be stored by TMA (row-major, 16-byte aligned base
      and leading dimension; set False here when ``ldd`` rules it out).
    - ``lda``, ``ldb``, ``ldc``, ``ldd``: the leading dimensions (elements) the launch binds; None means compact.
    - ``scale``: the fp8 scale mode (None, "tensor", "row", "block"; :data:`cute_py.emit.scaling.SCALES`) and
      ``scale_strides`` the scales' element strides ``(sa_m, sa_k, sb_k, sb_n)`` (0 along modes they lack);
      ``fast_accum``: the caller asks for fp8 accumulation over all of K (PyTorch's ``use_fast_accum``); a
      spec must agree (:meth:`mismatches`). ``scale_type``: the scales' element type, "f32" or "ue8m0"
      (:data:`cute_py.emit.scaling.SCALE_TYPES`).
    - ``grouping``: None (one GEMM), "batch" (``groups`` GEMMs of one shape), "m" (``groups`` groups stacked
      along M: rows ``[offs[g-1], offs[g])`` of a and D times b's group g) or "k" (stacked along K);
      ``batch_strides``: the element strides along the group mode of a, b, D, scale_b, C, the bias and scale_a
      (0: one for every group; trailing zeros may be left out)
      (:mod:`cute_py.problem_groups` reads them).
    - ``scale_a_tma``: with blockwise scales, a tensor map reads scale_a as it is (M-major, 16-byte aligned base
      and strides: :func:`cute_py.emit.scaling.reads_scale_a`); False: it is gathered into such a copy before the launch
      (set False here when its strides rule it out).
    - ``staging``: the operands copied before the launch because TMA cannot read them (:class:`Staging`);
      ``lda`` / ``ldb`` are then the staging buffer's. ``align``: per operand, the widest load (bytes, at most
      16) that its address, row pitch and row length allow: what a kernel reading it without TMA may use
      (``GemmSpec.load_a`` / ``load_b``).
    - ``operands``: the inspected arrays (:class:`Operands`), or None for a problem described by its sizes.

    Equality and hashing cover the sizes, majors, types, epilogue and leading dimensions, not the arrays. The
    constructor refuses a field of the wrong type or out of its range with a :class:`GemmInputError` naming it
    (:func:`cute_py.problem_fields.field_problems`).

    >>> p = Problem(1000, 100, 64, "MN", "K", "bf16", "f32")
    >>> (p.lda, p.ldb, p.ldd), p.d_tma, p.empty          # compact; D rows of 100 f32 = 400 B: TMA can store
    ((1000, 64, 100), True, False)
    >>> Problem(1000, 100, 64, "MN", "K", "bf16", "bf16").d_tma   # 100 x 2 B = 200 B: not a 16 B multiple
    False
    """

    M: int
    N: int
    K: int
    a_major: str
    b_major: str
    dtype: str
    out_dtype: str
    beta: bool = False
    bias: str | None = None
    activation: str | None = None
    c_row_major: bool = True
    d_tma: bool = True
    lda: int | None = None
    ldb: int | None = None
    ldc: int | None = None
    ldd: int | None = None
    scale: str | None = None
    scale_strides: tuple = (0, 0, 0, 0)
    fast_accum: bool = False
    scale_type: str = "f32"
    grouping: str | None = None
    groups: int = 1
    batch_strides: tuple = (0, 0, 0, 0)
    staging: tuple = ()
    align: tuple = (16, 16)
    scale_a_tma: bool = True
    operands: Operands | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        wrong = field_problems({f.name: getattr(self, f.name) for f in fields(self) if f.compare})
        if wrong:
            raise GemmInputError(f"Problem: {'; '.join(wrong)}")
        object.__setattr__(self, "batch_strides", tuple(self.batch_strides) + (0,) * (7 - len(self.batch_strides)))
        compact = {"lda": self.K if self.a_major == "K" else self.M,
                   "ldb": self.K if self.b_major == "K" else self.N,
                   "ldd": self.N if self.c_row_major else self.M}
        compact["ldc"] = self.ldd if self.ldd is not None else compact["ldd"]
        for name, value in compact.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        if self.d_tma and not (self.c_row_major and self.ldd * (_dtype(self.out_dtype).bits // 8) % TMA_ALIGN == 0):
            object.__setattr__(self, "d_tma", False)       # TMA stores need a row-major, 16-byte aligned D
        if self.scale_a_tma and self.scale == "block" and not reads_scale_a(
                self.M, self.K, self.scale_strides[:2], self.batch_strides[6], self.groups, self.grouping == "batch",
                self.scale_type):
            object.__setattr__(self, "scale_a_tma", False)  # gathered into a layout TMA reads

    @property
    def flops(self) -> int:
        """``2 * M * N * K`` (times the batch count of a batch; groups along M count their real rows, M in all)."""
        return 2 * self.M * self.N * self.K * (self.groups if self.grouping == "batch" else 1)   # K groups: K in all

    @property
    def shape(self) -> str:
        """``"MxNxK"`` (a batch: ``"LxMxNxK"``; groups along M: ``"G:MxNxK"``, along K ``"Gk:MxNxK"``)."""
        head = {None: "", "batch": f"{self.groups}x", "m": f"{self.groups}:", "k": f"{self.groups}k:"}[self.grouping]
        return f"{head}{self.M}x{self.N}x{self.K}"

    @property
    def empty(self) -> bool:
        """True when M or N (or a batch's count) is 0 (D is empty and nothing launches)."""
        return self.M == 0 or self.N == 0 or (self.grouping in ("batch", "k") and self.groups == 0)

    @property
    def out_shape(self) -> tuple:
        """D's shape: ``(M, N)``, a batch's ``(L, M, N)``."""
        return (self.groups, self.M, self.N) if self.grouping in ("batch", "k") else (self.M, self.N)

    def mismatches(self, spec) -> list:
        """What of ``spec`` disagrees with this problem (majors, types, epilogue, D's layout); [] if nothing.

        >>> from cute_py.emit import GemmSpec
        >>> Problem(64, 64, 64, "K", "MN", "bf16", "bf16").mismatches(GemmSpec(b="(N,K):(1,N)", epilogue="direct"))
        []
        >>> Problem(64, 64, 64, "K", "K", "bf16", "bf16", d_tma=False).mismatches(GemmSpec())[0][:40]
        "epilogue: spec 'tma' stores D with TMA, "
        """
        bad = [f"{k}: spec {getattr(spec, k)!r}, arrays {getattr(self, k)!r}" for k in SHARED_FEATURES
               if getattr(spec, k) != getattr(self, k)]
        for x, want, have in (("a", spec.load_a, self.align[0]), ("b", spec.load_b, self.align[1])):
            if not bad and want > have:
                bad.append(f"load_{x}: spec {want}-byte loads, {x}'s address and rows allow {have}")
        if not bad and self.K == 0 and self.grouping is None and spec.split_k == 1:
            bad.append(f"split_k: spec {spec.split_k}; K = 0 needs a split-K kernel (split_k >= 2: it zero-fills "
                       f"empty K ranges)")
        if not bad and spec.epilogue == "tma" and not self.d_tma:
            bad.append(f"epilogue: spec 'tma' stores D with TMA, which needs a row-major out with a "
                       f"{TMA_ALIGN}-byte aligned base and leading dimension (out: leading dimension {self.ldd}); "
                       f"use epilogue='direct'")
        return bad

    def with_out(self, out, op: str = "gemm") -> "Problem":
        """This problem (read by :meth:`from_arrays` without ``out``) writing into ``out``, the D allocated for
        it: read and checked to be the compact row-major D the problem assumed."""
        r = _Reader(op)
        out_t, row, ldd, D = r.output(out, self.M, self.N, self.out_dtype, self.out_dtype, set())
        if (out_t, row, ldd) != (self.out_dtype, self.c_row_major, self.ldd):
            r.fail(f"the allocated out ({out_t}, {'row' if row else 'column'}-major, leading dimension {ldd}) is "
                   f"not the D of the problem ({self.out_dtype}, leading dimension {self.ldd})")
        d_tma = self.d_tma and D.ptr % TMA_ALIGN == 0
        return replace(self, d_tma=d_tma, operands=replace(self.operands, out=D))

    @classmethod
    def from_arrays(cls, a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out=None,
                    out_dtype: str | None = None, scale_a=None, scale_b=None, fast_accum: bool = False,
                    op: str = "gemm") -> "Problem":
        """The problem of ``op(a, b, c, alpha=, beta=, bias=, activation=, out=)``, read from the arrays (no GPU
        needed: only their descriptions). ``out_dtype`` is D's type when ``out`` is None (default a's type),
        and says how to read a raw 16-bit ``out`` (cupy has no bf16: uint16 words are read as bf16 unless
        ``out_dtype`` says f16; C's and the bias's are always read as bf16). With ``scale_a`` and ``scale_b``
        (f32 arrays) a and b are fp8 (e4m3 or e5m2, both K-major) and the scales' shapes choose the mode, as in
        PyTorch: one element each ("tensor"); (M, 1) and (1, N) ("row"); (M, ceil(K/128)) and
        (ceil(K/128), ceil(N/128)) ("block"); D defaults to bf16; ``fast_accum`` (tensor and row scales) lets
        the tensor core accumulate all of K. Raises :class:`GemmInputError` naming ``op``.

        >>> class Fake:
        ...     def __init__(self, shape, strides, typestr="<f2"):
        ...         self.__cuda_array_interface__ = {"version": 3, "data": (1 << 40, False), "shape": shape,
        ...                                          "typestr": typestr, "strides": tuple(2 * s for s in strides)}
        >>> Problem.from_arrays(Fake((256, 64), (64, 1)), Fake((64, 128), (1, 64)))
        Problem(M=256, N=128, K=64, a_major='K', b_major='K', dtype='f16', out_dtype='f16', beta=False, bias=None, activation=None, c_row_major=True, d_tma=True, lda=64, ldb=64, ldc=128, ldd=128, scale=None, scale_strides=(0, 0, 0, 0), fast_accum=False, scale_type='f32', grouping=None, groups=1, batch_strides=(0, 0, 0, 0, 0, 0, 0), staging=(), align=(16, 16), scale_a_tma=True)
        >>> Problem.from_arrays(Fake((256, 64), (64, 1)), Fake((32, 128), (1, 32)))
        Traceback (most recent call last):
        ...
        cute_py.problem.GemmInputError: gemm: inner dimensions differ: a is (256, 64), b is (32, 128) (K 64 vs 32)
        """
        fast_accum = flag(op, "use_fast_accum", fast_accum, GemmInputError)
        problem = _Reader(op).problem(a, b, c, alpha, beta, bias, activation, out, out_dtype, scale_a, scale_b)
        if fast_accum:
            if problem.scale not in ("tensor", "row"):
                raise GemmInputError(f"{op}: use_fast_accum applies to per-tensor and row-wise scales; "
                                     f"{'blockwise scales always promote' if problem.scale else 'no scales given'}")
            problem = replace(problem, fast_accum=True)
        return problem


def tma_aligned(x) -> bool:
    """Whether array record ``x`` (None: no array) starts where a tensor map may: on a 16-byte boundary.

    >>> tma_aligned(as_device_array(1 << 40, shape=(4,), dtype="f32")), tma_aligned(None)
    (True, True)
    """
    return x is None or x.ptr % TMA_ALIGN == 0


def widest_load(cap: int, *nbytes: int) -> int:
    """The largest power of two up to ``cap`` (a power of two) dividing every one of ``nbytes`` (an address, a
    pitch, a length; 0 divides by anything): the widest load that stays aligned over all of them.

    >>> widest_load(16, 0x1000, 1998), widest_load(8, 0x1000, 4096, 0)
    (2, 8)
    """
    common = cap
    for x in nbytes:
        common |= x
    return common & -common                  # the lowest set bit


def _span(x) -> tuple:
    """``(lowest, one past the highest)`` byte address of the non-empty array record ``x``."""
    lo = x.ptr + sum((n - 1) * s for n, s in zip(x.shape, x.byte_strides) if s < 0)
    return lo, lo + x.nbytes


def overlaps(x, y) -> bool:
    """Whether the array records ``x`` and ``y`` certainly share memory: both non-empty, their spans intersect,
    and they start at one address or each is dense (every byte of its span is one of its elements). Other
    intersecting spans may interleave without sharing an element (the columns of a matrix split in two) and
    are not refused, as torch does not.

    >>> from cute_py.runtime import as_device_array
    >>> x = as_device_array(1 << 40, shape=(64, 64), dtype="bf16")
    >>> left = as_device_array(1 << 40, shape=(64, 32), strides=(64, 1), dtype="bf16")
    >>> right = as_device_array((1 << 40) + 64, shape=(64, 32), strides=(64, 1), dtype="bf16")
    >>> overlaps(x, x), overlaps(x, left), overlaps(left, right)
    (True, True, False)
    """
    if x.size == 0 or y.size == 0:
        return False
    (x0, x1), (y0, y1) = _span(x), _span(y)
    if x1 <= y0 or y1 <= x0:
        return False
    return x.ptr == y.ptr or (x.nbytes == x.size * x.itemsize and y.nbytes == y.size * y.itemsize)


def _rows_cols(x, cols_contiguous: bool) -> tuple:
    """``(rows, cols)`` of a 2-D operand in memory order: ``cols`` elements contiguous, ``rows`` of them."""
    (r, c) = x.shape
    return (r, c) if cols_contiguous else (c, r)


def load_align(x, cols_contiguous: bool, ld: int) -> int:
    """The widest load (bytes, at most 16) that every row of the 2-D operand ``x`` allows: the largest power of
    two dividing its address, its row pitch (``ld`` elements; unused for one row) and its row length.

    >>> from cute_py.runtime import as_device_array
    >>> load_align(as_device_array(1 << 40, shape=(64, 999), dtype="bf16"), True, 999)   # 1998-byte rows
    2
    """
    rows, cols = _rows_cols(x, cols_contiguous)
    if x.size == 0:
        return TMA_ALIGN
    return widest_load(TMA_ALIGN, x.ptr, ld * x.itemsize if rows > 1 else 0, cols * x.itemsize)


def scale_mode(SA, one: bool, row: bool, block: bool) -> str | None:
    """The scale mode of ``SA`` and its partner, given whether they are one element each and whether their shapes
    are the row-wise and the blockwise ones (the single and the grouped readers each know those shapes): one f32
    element each is per tensor; UE8M0 scales have no per-tensor mode, so one element each reads as row-wise or
    blockwise where the extents allow, else as per tensor, which :meth:`_Reader.scale_type` refuses with the reason;
    None when no mode fits.

    >>> f32, e8 = (as_device_array(1 << 40, shape=(1, 1), dtype=t) for t in ("f32", "ue8m0"))
    >>> scale_mode(f32, True, True, False), scale_mode(e8, True, True, False), scale_mode(e8, True, False, False)
    ('tensor', 'row', 'tensor')
    >>> scale_mode(f32, False, False, True), scale_mode(f32, False, False, False)
    ('block', None)
    """
    if one and SA.dtype.name != "ue8m0":
        return "tensor"
    if row:
        return "row"
    if block:
        return "block"
    return "tensor" if one else None


def _matrix(x) -> tuple:
    """``(shape, element strides)`` of a scale as a 2-D array; a 0-D or one-element 1-D scale is (1, 1). Other
    ranks are left to the caller's mode check (None)."""
    if len(x.shape) == 2:
        return tuple(x.shape), tuple(x.strides)
    if len(x.shape) <= 1 and x.size == 1:
        return (1, 1), (0, 0)
    return None, None


class _Reader:
    """Reads the arrays of one call for :meth:`Problem.from_arrays`; every message starts with ``op``."""

    def __init__(self, op: str):
        self.op = op

    def fail(self, message: str) -> NoReturn:
        raise GemmInputError(f"{self.op}: {message}")

    def array(self, x, what):
        try:
            return as_device_array(x)
        except Exception as e:  # noqa: BLE001 - re-raised with the argument's name
            self.fail(f"{what}: {e}")

    def dtype(self, x, what, allowed, raw16=None) -> str:
        name = x.dtype.name
        if name == "u16":                       # cupy has no bf16: raw 16-bit words are read as bf16 (or raw16)
            name = raw16 if raw16 in DTYPES else "bf16"
        if name not in allowed:
            self.fail(f"{what} has element type {x.dtype.name}; supported: {', '.join(allowed)}")
        return name

    def major(self, x, what, inner_name, outer_name, prefer: str | None = None) -> tuple:
        """``(major, ld)`` of a 2-D matrix operand: which dimension is contiguous and the other's stride (for a
        single row, column or element, whose other stride is never used, the extent rounded up to 16 bytes).

        A dimension of extent 1 has no stride that matters (as in torch): (1, n) with strides (1, 5) is read
        as n elements 5 apart (``outer_name``-major, ld 5), (n, 1) with strides (2, 1) as n elements 2 apart
        (``inner_name``-major, ld 2). Of two possible readings, a dimension of extent > 1 with stride 1 wins,
        unless ``prefer`` names the other (fp8 operands must be K-major)."""
        (r, c), (sr, sc) = x.shape, x.strides
        unit = max(1, TMA_ALIGN // x.itemsize)  # elements per 16 bytes
        if r == 0 or c == 0:                    # empty: no element is read, any layout will do
            return inner_name, round_up(max(c, 1), unit)
        inner = inner_name, (sr if r > 1 else round_up(c, unit))      # the columns contiguous, rows ld apart
        outer = outer_name, (sc if c > 1 else round_up(r, unit))      # the rows contiguous, columns ld apart
        ways = [w for w, ok in ((inner, c > 1 and sc == 1), (outer, r > 1 and sr == 1), (inner, c == 1),
                                (outer, r == 1)) if ok]
        if not ways:
            self.fail(f"{what} with shape {x.shape} and element strides {x.strides} is not contiguous along either "
                      f"dimension (one stride must be 1); make it contiguous first")
        return next((w for w in ways if w[0] == prefer), ways[0])

    def out_layout(self, x, what) -> tuple:
        """``(row_major, ld)`` of a 2-D output or C (any leading dimension)."""
        (r, c), (sr, sc) = x.shape, x.strides
        if sc == 1 or c <= 1 or r == 0:
            return True, sr
        if sr == 1 or r == 1:
            return False, sc
        self.fail(f"{what} with shape {x.shape} and element strides {x.strides} is not contiguous along either "
                  f"dimension (one stride must be 1)")

    def problem(self, a, b, c, alpha, beta, bias, activation, out, out_dtype, scale_a=None, scale_b=None) -> Problem:
        A, B = self.array(a, "a"), self.array(b, "b")
        if len(A.shape) != 2 or len(B.shape) != 2:
            self.fail(f"a and b must be 2-D, got shapes {A.shape} and {B.shape}")
        (M, K), (K2, N) = A.shape, B.shape
        if K != K2:
            self.fail(f"inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
        if max(M, N, K) > MAX_EXTENT:
            self.fail(f"M, N and K must be at most {MAX_EXTENT} (the kernel's 32-bit extents), got {M}x{N}x{K}")
        scaled = scale_a is not None or scale_b is not None
        if scaled and (scale_a is None or scale_b is None):
            self.fail(f"scale_{'b' if scale_b is None else 'a'} is missing: an fp8 GEMM takes both scales")
        kinds = FP8_DTYPES if scaled else DTYPES
        if not scaled and A.dtype.name in FP8_DTYPES:
            self.fail(f"a is {A.dtype.name}: fp8 operands need scales; use cute_py.scaled_gemm(a, b, scale_a, scale_b)")
        t, tb = self.dtype(A, "a", kinds), self.dtype(B, "b", kinds)
        if t != tb:
            self.fail(f"a is {t} but b is {tb}; both must have one type")
        if activation not in ACTIVATIONS:
            self.fail(f"activation {activation!r} not in {ACTIVATIONS}")
        devices = {d for d in (A.device, B.device) if d is not None}
        if len(devices) > 1:
            self.fail(f"a and b are on different devices {sorted(devices)}")
        prefer = "K" if scaled else None                       # fp8 reads K-major operands only
        a_major, lda = self.major(A, "a", "K", "MN", prefer)  # a (M, K): K contiguous -> K-major
        b_major, ldb = self.major(B, "b", "MN", "K", prefer)  # b (K, N): N contiguous -> N-major (B = b^T is (N, K))
        if scaled:
            self.k_major(A, a_major, B, b_major)
        staging = tuple(x for x in (self.staging("a", A, a_major == "K", lda),
                                    self.staging("b", B, b_major == "MN", ldb)) if x is not None)
        align = (load_align(A, a_major == "K", lda), load_align(B, b_major == "MN", ldb))
        for st in staging:                                     # TMA reads the staging buffer
            lda, ldb = (st.ld_elements(A.itemsize), ldb) if st.which == "a" else (lda, st.ld_elements(B.itemsize))
        out_t, row, ldd, D = self.output(out, M, N, "bf16" if scaled else t, out_dtype, devices)
        d_tma = D is None or D.ptr % TMA_ALIGN == 0          # the layout's part of the rule: Problem.__post_init__
        C, ldc = self.c(c, beta, M, N, row, ldd, out_t)
        V, bias_mode = self.bias(bias, M, N, out_t)
        SA, SB, mode, strides = self.scales(scale_a, scale_b, M, N, K, devices) if scaled else (None, None, None,
                                                                                                  (0, 0, 0, 0))
        scale_type = self.scale_type(SA, mode) if scaled else "f32"
        self.no_alias(D, {"a": A, "b": B, "bias": V, "scale_a": SA, "scale_b": SB}, C)
        operands = Operands(A, B, C, V, D, alpha, beta, like=a, scale_a=SA, scale_b=SB)
        return Problem(M, N, K, a_major, b_major, t, out_t, C is not None, bias_mode, activation, row, d_tma,
                       lda, ldb, ldc, ldd, mode, strides, scale_type=scale_type, staging=staging, align=align,
                       scale_a_tma=tma_aligned(SA), operands=operands)

    def k_major(self, A, a_major, B, b_major) -> None:
        """fp8 wgmma reads both operands K-major: a (M, K) with K contiguous, b (K, N) with K contiguous (an
        empty operand is read in no layout)."""
        bad = []
        if a_major != "K" and A.size:
            bad.append(f"a {A.shape} has strides {A.strides}: K is not contiguous (use a.contiguous())")
        if b_major != "K" and B.size:
            bad.append(f"b {B.shape} has strides {B.strides}: K is not contiguous (pass w.t() of a row-major "
                       f"w (N, K), or b.t().contiguous().t())")
        if bad:
            self.fail("fp8 operands must be K-major (Hopper's fp8 wgmma reads only K-major shared memory): "
                      + "; ".join(bad))

    def scale_records(self, scale_a, scale_b, devices) -> tuple:
        """The records of ``scale_a`` and ``scale_b``: arrays of one of :data:`SCALE_TYPES` (both the same) on the
        inputs' device."""
        SA, SB = self.array(scale_a, "scale_a"), self.array(scale_b, "scale_b")
        for name, x in (("scale_a", SA), ("scale_b", SB)):
            if x.dtype.name not in SCALE_TYPES:
                self.fail(f"{name} has element type {x.dtype.name}; scales are f32 or ue8m0 (float8_e8m0fnu)")
            if x.device is not None and devices and x.device not in devices:
                self.fail(f"{name} is on device {x.device}, the inputs on {sorted(devices)}")
        if SA.dtype.name != SB.dtype.name:
            self.fail(f"scale_a is {SA.dtype.name} but scale_b is {SB.dtype.name}; both scales have one type")
        return SA, SB

    def scale_type(self, SA, mode: str) -> str:
        """The scales' element type (:meth:`scale_records` checked that both have it): UE8M0 scales are row-wise
        or blockwise."""
        t = SA.dtype.name
        if t == "ue8m0" and mode not in ("row", "block"):
            self.fail("ue8m0 scales apply to row-wise and blockwise scaling, not per-tensor: pass one f32 each")
        return t

    def scales(self, scale_a, scale_b, M, N, K, devices) -> tuple:
        """``(scale_a record, scale_b record, mode, (sa_m, sa_k, sb_k, sb_n))``: the scale mode the shapes say."""
        SA, SB = self.scale_records(scale_a, scale_b, devices)
        kb, nb = -(-K // SCALE_BLOCK), -(-N // SCALE_BLOCK)
        sa, sb = _matrix(SA), _matrix(SB)
        for name, x, m in (("scale_a", SA, sa), ("scale_b", SB, sb)):
            if m[0] is None:
                self.fail(f"{name} has shape {x.shape}: scales are 2-D (or a single element for per-tensor "
                          f"scaling), as in torch._scaled_mm")
        one = SA.size == 1 and SB.size == 1 and sa[0] == (1, 1) and sb[0] == (1, 1)
        mode = scale_mode(SA, one, sa[0] == (M, 1) and sb[0] == (1, N), sa[0] == (M, kb) and sb[0] == (kb, nb))
        if mode is not None:
            strides = {"tensor": (0, 0, 0, 0), "row": (sa[1][0], 0, 0, sb[1][1]), "block": sa[1] + sb[1]}[mode]
            return SA, SB, mode, strides
        self.fail(f"scale shapes {SA.shape} and {SB.shape} name no scale mode for M={M}, N={N}, K={K}: one element "
                  f"each (per tensor), ({M}, 1) and (1, {N}) (row-wise), or ({M}, {kb}) and ({kb}, {nb}) (blockwise: "
                  f"1 x {SCALE_BLOCK} blocks of a, {SCALE_BLOCK} x {SCALE_BLOCK} of b)")

    @staticmethod
    def staging(which, x, cols_contiguous: bool, ld: int, groups: int = 1, group_stride: int = 0) -> Staging | None:
        """The :class:`Staging` of operand ``x`` (a matrix, or the first of ``groups`` matrices ``group_stride``
        elements apart) when TMA cannot read it: a base, leading dimension or group stride that is not a
        multiple of 16 bytes, or rows or matrices that overlap (a stride below the extent, 0 for a broadcast);
        else None."""
        rows, cols = _rows_cols(x, cols_contiguous)
        e = x.itemsize
        rows_ok = ld * e % TMA_ALIGN == 0 and (ld >= cols or rows == 1)
        groups_ok = groups == 1 or (group_stride * e % TMA_ALIGN == 0 and group_stride >= ld * (rows - 1) + cols)
        if x.size == 0 or (x.ptr % TMA_ALIGN == 0 and rows_ok and groups_ok):
            return None
        return Staging.of(which, x.ptr, rows, cols, ld, e, groups, group_stride)

    def output(self, out, M, N, t, out_dtype, devices) -> tuple:
        """``(out_dtype, row_major, ldd, D)`` of ``out``, or of the compact row-major D the GEMM allocates."""
        if out is None:
            if out_dtype is not None and out_dtype not in OUT_DTYPES:
                self.fail(f"out_dtype {out_dtype!r} is not a type cute_py writes; use one of {', '.join(OUT_DTYPES)}")
            return (out_dtype or t), True, N, None
        D = self.array(out, "out")
        if len(D.shape) != 2 or D.shape != (M, N):
            self.fail(f"out has shape {D.shape}, expected {(M, N)}")
        if D.device is not None and devices and D.device not in devices:
            self.fail(f"out is on device {D.device}, the inputs on {sorted(devices)}")
        out_t = self.dtype(D, "out", OUT_DTYPES, raw16=out_dtype)
        if out_dtype is not None and out_dtype != out_t:
            self.fail(f"out is {out_t} but out_dtype is {out_dtype!r}: with out given, D has out's type; pass "
                      f"out_dtype={out_t!r} or leave it out")
        row, ldd = self.out_layout(D, "out")
        return out_t, row, ldd, D

    def no_alias(self, D, inputs: dict, C=None) -> None:
        """Refuse an ``out`` (record ``D``) that shares memory with an input the kernel reads while it writes D
        (``inputs``: name -> record or None), or with ``C`` unless C is D itself (each element of C is then
        read by the thread that writes it). Only sharing that is certain is refused (see :func:`overlaps`)."""
        if D is None:
            return
        shared = [name for name, x in inputs.items() if x is not None and overlaps(D, x)]
        if C is not None and overlaps(D, C) and (C.ptr, C.byte_strides) != (D.ptr, D.byte_strides):
            shared.append("c (which may be out itself, but not overlap it otherwise)")
        if shared:
            names = ", ".join(shared[:-1]) + " and " * (len(shared) > 1) + shared[-1]
            self.fail(f"out shares memory with {names}: the kernel would overwrite what it still "
                      f"reads; pass a separate out")

    def c(self, c, beta, M, N, row, ldd, out_t) -> tuple:
        """``(C, ldc)``: C's record when it is read (``beta != 0``), else None and D's leading dimension."""
        if c is None and beta != 0:
            self.fail(f"beta={beta!r} scales c, but no c was given; pass c (M, N) = {(M, N)}, or leave beta at 0")
        if c is None or beta == 0:
            return None, ldd
        C = self.array(c, "c")
        if C.shape != (M, N):
            self.fail(f"c must have out's shape {(M, N)}; got {C.shape}")
        c_row, ldc = self.out_layout(C, "c")
        if c_row != row and M > 1 and N > 1:
            self.fail(f"c is {'row' if c_row else 'column'}-major but out is {'row' if row else 'column'}-major; "
                      f"they must agree")
        if self.dtype(C, "c", OUT_DTYPES) != out_t:
            self.fail(f"c is {C.dtype.name}, out is {out_t}")
        return C, ldc

    def bias(self, bias, M, N, out_t) -> tuple:
        """``(bias record, "row" | "col")``, or ``(None, None)`` without a bias."""
        if bias is None:
            return None, None
        V = self.array(bias, "bias")
        n = V.shape[0] if len(V.shape) == 1 else -1
        if len(V.shape) != 1 or n not in (M, N) or (V.strides[0] != 1 and n > 1):
            self.fail(f"bias must be a contiguous vector of length N={N} (per column) or M={M} (per row); "
                      f"got shape {V.shape}")
        if self.dtype(V, "bias", OUT_DTYPES) != out_t:
            self.fail(f"bias is {V.dtype.name}, out is {out_t}")
        return V, ("col" if n == N else "row")
