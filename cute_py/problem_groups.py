"""The problems of grouped and batched GEMMs, read from their arrays: :func:`grouped_problem` and
:func:`bmm_problem` (the one reader of ``cute_py.grouped_gemm``, ``cute_py.bmm`` and their torch operators).

PyTorch's ``grouped_mm`` forms, as :func:`grouped_problem` takes them:

- ``a`` (total_M, K), ``b`` (G, K, N), ``offs`` (G,) int32: groups stacked along M (mixture of experts):
  rows ``[offs[g-1], offs[g])`` of a and of D (total_M, N) times ``b[g]``;
- ``a`` (G, M, K), ``b`` (G, K, N), no ``offs``: a batch, D (G, M, N) (as :func:`bmm_problem`).

Each matrix of an operand follows the rules of :class:`~cute_py.problem.Problem` (one contiguous dimension;
what TMA cannot read, a leading dimension or group stride that is not a multiple of 16 bytes, a broadcast,
goes through the staging copy). The offsets' values are read on the device by the kernel; :func:`check_offsets` checks them
on the host.

>>> from cute_py.problem import GemmInputError
>>> check_offsets([128, 64, 300], 300, "grouped_gemm")
Traceback (most recent call last):
...
cute_py.problem.GemmInputError: grouped_gemm: offs must be non-decreasing: offs[1] = 64 < offs[0] = 128
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .arraylib import host_ints
from .emit.spec import ACTIVATIONS, DTYPES, FP8_DTYPES, OUT_DTYPES, SCALE_BLOCK
from .options import flag
from .problem import MAX_EXTENT, TMA_ALIGN, GemmInputError, Operands, Problem, _Reader, scale_mode, tma_aligned

__all__ = ["grouped_problem", "bmm_problem", "Epilogue", "check_offsets", "check_device_offsets"]


def check_offsets(offs, total: int, op: str, what: str = "the row count of a") -> None:
    """``offs`` (host ints) are group ends (along M, or K): each at least 0, non-decreasing, the last one
    ``total`` (``what``); raises :class:`GemmInputError` naming the first offending index."""
    prev = 0
    for g, x in enumerate(offs):
        if x < prev:
            broken = f"offs[{g}] = {x} < offs[{g - 1}] = {prev}" if g else f"offs[0] = {x} < 0"
            raise GemmInputError(f"{op}: offs must be non-decreasing: {broken}")
        prev = x
    if offs and offs[-1] != total:
        raise GemmInputError(f"{op}: the last offset offs[{len(offs) - 1}] = {offs[-1]} must be {what}, "
                             f"{total}")


def check_device_offsets(a, b, offs, op: str) -> None:
    """:func:`check_offsets` on the values of the device array ``offs`` (read back: the caller's stream
    synchronises) for ``grouped_gemm(a, b, offs)``: group ends along M when ``b`` is 3-D, else along K.

    >>> check_device_offsets(None, None, [3, 2], "op")                         # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.arraylib.ArrayLibraryError: op: cannot read the values of a list ...; check_offs=True reads offs back ...
    """
    ends = host_ints(offs, op, hint="check_offs=True reads offs back to the host; pass torch or cupy arrays, or "
                                     "check_offs=False (the kernel clamps offsets it reads on the device)")
    along_k = len(getattr(b, "shape", ())) == 2
    total = a.shape[1] if along_k else a.shape[0]
    check_offsets(ends, total, op, "the column count of a (K)" if along_k else "the row count of a")


def _matrix(x):
    """A 3-D operand's first matrix as a 2-D record, and its group stride (elements; 0 for a single matrix)."""
    L, stride = x.shape[0], x.strides[0]
    m = replace(x, shape=x.shape[1:], strides=x.strides[1:], byte_strides=x.byte_strides[1:])
    return m, (stride if L > 1 else 0)


def _read(r: _Reader, A, B, fp8: bool = False, a_groups: tuple = (1, 0), b_groups: tuple = (1, 0),
          prefer: str | None = None):
    """Types, devices, majors and staging of the (2-D) matrices ``A`` and ``B`` (``fp8``: e4m3/e5m2, K-major;
    ``a_groups``, ``b_groups``: (count, stride) of the matrices of a 3-D operand; ``prefer``: the major to read a
    matrix with a dimension of extent 1 in, as the reader's ``major`` takes it). The leading dimensions and
    group strides returned are what TMA reads: a staged operand's are its buffer's."""
    if not fp8 and A.dtype.name in FP8_DTYPES:
        r.fail(f"a is {A.dtype.name}: fp8 operands need scale_a and scale_b")
    kinds = FP8_DTYPES if fp8 else DTYPES
    t, tb = r.dtype(A, "a", kinds), r.dtype(B, "b", kinds)
    if t != tb:
        r.fail(f"a is {t} but b is {tb}; both must have one type")
    devices = {d for d in (A.device, B.device) if d is not None}
    if len(devices) > 1:
        r.fail(f"a and b are on different devices {sorted(devices)}")
    prefer = "K" if fp8 else prefer
    a_major, lda = r.major(A, "a", "K", "MN", prefer)
    b_major, ldb = r.major(B, "b", "MN", "K", prefer)
    if fp8:
        r.k_major(A, a_major, B, b_major)
    (la, lb), e = (a_groups[1], b_groups[1]), A.itemsize
    staging = tuple(s for s in (r.staging("a", A, a_major == "K", lda, *a_groups),
                                r.staging("b", B, b_major == "MN", ldb, *b_groups)) if s is not None)
    for s in staging:
        if s.which == "a":
            lda, la = s.ld_elements(e), s.group_elements(e) if a_groups[0] > 1 else 0
        else:
            ldb, lb = s.ld_elements(e), s.group_elements(e) if b_groups[0] > 1 else 0
    return t, devices, a_major, lda, b_major, ldb, la, lb, staging


def _scales(r: _Reader, scale_a, scale_b, M, N, K, G, devices, fast_accum, batch: bool = False) -> tuple:
    """``(scale_a record, scale_b record, mode, (sa_m, sa_k, sb_k, sb_n), sa_l, sb_l, scale type)`` of fp8 GEMMs in ``G``
    groups: one element each (per tensor); scale_b (G, N) or (G, 1, N) per group and column with scale_a per row
    (row-wise, as torch._scaled_grouped_mm); scale_b (G, KB, NB) with scale_a per row and K block (blockwise,
    DeepGEMM's contiguous layout; KB = ceil(K / 128), NB = ceil(N / 128)). scale_a covers the rows of all groups
    along M, (M,) or (M, 1), (M, KB); a ``batch``'s has the group mode first, (G, M), (G, M, KB), and its own
    group stride ``sa_l``."""
    if scale_a is None or scale_b is None:
        r.fail(f"scale_{'b' if scale_b is None else 'a'} is missing: fp8 {'batches' if batch else 'groups'} take "
               f"both scales")
    SA, SB = r.scale_records(scale_a, scale_b, devices)
    kb, nb = -(-K // SCALE_BLOCK), -(-N // SCALE_BLOCK)
    (sa, ta), (sb, tb) = (SA.shape, SA.strides), (SB.shape, SB.strides)
    lead = (G,) if batch else ()                       # scale_a's group mode
    la = ta[0] if batch and G > 1 and len(ta) > len(lead) else 0
    one = SA.size == 1 and SB.size == 1 and (G == 1 or len(sb) <= 1)
    mode = scale_mode(SA, one, sa in (lead + (M,), lead + (M, 1)) and sb in ((G, N), (G, 1, N)),
                      sa == lead + (M, kb) and sb == (G, kb, nb))
    if mode == "tensor":
        strides, la, lb = (0, 0, 0, 0), 0, 0
    elif mode == "row":
        strides, lb = (ta[len(lead)], 0, 0, tb[-1]), tb[0]
    elif mode == "block":
        strides, lb = ta[len(lead):] + tb[1:], tb[0]
    else:
        what = f"a batch of {G} GEMMs M={M}" if batch else f"{G} groups of M={M} rows in all"
        r.fail(f"scale shapes {SA.shape} and {SB.shape} name no scale mode for {what}, N={N}, K={K}: one element "
               f"each (per tensor), {lead + (M,)} and ({G}, {N}) (row-wise), or {lead + (M, kb)} and ({G}, {kb}, "
               f"{nb}) (blockwise)")
    if fast_accum and mode == "block":
        r.fail("use_fast_accum applies to per-tensor and row-wise scales; blockwise scales always promote")
    return SA, SB, mode, strides, la, lb, r.scale_type(SA, mode)


def _offsets(r: _Reader, offs, G: int | None, M: int, devices, check: bool, what: str = "the row count of a"):
    """The offsets' record (int32 group ends on the inputs' device: ``G`` of them, or any non-zero count when
    ``G`` is None), their values checked against ``M`` (the row count, or K for groups along K) when ``check``."""
    O = r.array(offs, "offs")
    if O.dtype.name != "s32" or len(O.shape) != 1 or (O.shape[0] > 1 and O.strides[0] != 1):
        r.fail(f"offs must be a contiguous 1-D int32 array, got {O.dtype.name} of shape {O.shape}")
    if G is None and O.shape[0] == 0:
        r.fail("offs is empty: groups along K need at least one group")
    if G is not None and O.shape[0] != G:
        r.fail(f"offs has {O.shape[0]} entries but b has {G} groups")
    if O.device is not None and devices and O.device not in devices:
        r.fail(f"offs is on device {O.device}, the inputs on {sorted(devices)}")
    if check:
        check_offsets(host_ints(offs), M, r.op, what)
    return O


def grouped_problem(a, b, offs=None, *, scale_a=None, scale_b=None, fast_accum: bool = False, out=None,
                    out_dtype=None, check_offs: bool = True, op: str = "grouped_gemm", epilogue=None) -> Problem:
    """The problem of ``grouped_gemm(a, b, offs)`` in one of the forms above; with ``scale_a`` and ``scale_b``
    (f32) a and b are fp8 (e4m3 or e5m2, K-major) grouped along M, the scales' shapes choosing the mode (as
    ``cute_py.grouped_gemm`` lists them). ``check_offs``: read ``offs`` back and check its values (:func:`check_offsets`); the
    kernel clamps them either way, so bad offsets never read or write out of bounds. ``epilogue``: an
    :class:`Epilogue` (C, alpha, beta, bias, activation). Raises :class:`GemmInputError`
    naming ``op``."""
    epi = epilogue or Epilogue()
    r = _Reader(op)
    fast_accum = flag(op, "use_fast_accum", fast_accum, GemmInputError)
    check_offs = flag(op, "check_offs", check_offs, GemmInputError)
    A, B = r.array(a, "a"), r.array(b, "b")
    ranks = (len(A.shape), len(B.shape))
    scaled = scale_a is not None or scale_b is not None
    if ranks == (3, 3):
        if offs is not None:
            r.fail("offs applies to a 2-D a (groups along M); 3-D a and b are a batch")
        return _batch(r, a, A, B, out, out_dtype, epi, scale_a, scale_b, fast_accum)
    if ranks == (2, 2):
        if scaled:
            r.fail("fp8 scales apply to groups along M (a 2-D, b 3-D with offs), not to groups along K")
        return _k_groups(r, a, A, B, offs, out, out_dtype, check_offs, epi)
    if ranks != (2, 3):
        r.fail(f"a {A.shape} and b {B.shape}: supported are a (total_M, K) with b (G, K, N) and offs (groups along "
               f"M), a (M, total_K) with b (total_K, N) and offs (groups along K), or a (G, M, K) with b (G, K, N) "
               f"(a batch)")
    (M, K), (G, K2, N) = A.shape, B.shape
    if K != K2:
        r.fail(f"inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
    if G == 0:
        r.fail("b has no groups")
    _extents(r, M, N, K)
    B2, ldb_l = _matrix(B)
    t, devices, a_major, lda, b_major, ldb, _, ldb_l, staging = _read(r, A, B2, fp8=scaled, b_groups=(G, ldb_l))
    if a_major == "MN" and M > 1:
        r.fail(f"groups along M read a K-major a: a {A.shape} with strides {A.strides} has M contiguous, and a TMA "
               f"box's innermost coordinate (here a group's first row, any offset) must start on a 16-byte "
               f"boundary; pass a.contiguous()")
    if offs is None:
        r.fail("a is 2-D and b is 3-D: groups along M need offs, the int32 end row of each group")
    O = _offsets(r, offs, G, M, devices, check_offs and M > 0)
    SA = SB = mode = None
    strides, sb_l, scale_type = (0, 0, 0, 0), 0, "f32"
    if scaled:
        SA, SB, mode, strides, _, sb_l, scale_type = _scales(r, scale_a, scale_b, M, N, K, G, devices, fast_accum)
    out_t, row, ldd, D = r.output(out, M, N, "bf16" if scaled else t, out_dtype, devices)
    C, ldc, _, V, bias, bias_l = _group_epilogue(r, epi, (M, N), G, row, ldd, out_t)
    r.no_alias(D, {"a": A, "b": B, "offs": O, "scale_a": SA, "scale_b": SB, "bias": V}, C)
    ops = Operands(A, B, C, V, out=D, alpha=epi.alpha, beta=epi.beta, like=a, offs=O, scale_a=SA, scale_b=SB)
    return Problem(M, N, K, a_major, b_major, t, out_t, C is not None, bias, epi.activation, lda=lda, ldb=ldb,
                   ldc=ldc, ldd=ldd, c_row_major=row, d_tma=D is None or D.ptr % TMA_ALIGN == 0, scale=mode,
                   scale_strides=strides, fast_accum=bool(fast_accum and scaled), scale_type=scale_type, grouping="m",
                   groups=G, batch_strides=(0, ldb_l, 0, sb_l, 0, bias_l), staging=staging,
                   scale_a_tma=tma_aligned(SA), operands=ops)


def _k_groups(r: _Reader, a, A, B, offs, out, out_dtype, check, epi) -> Problem:
    """Groups along K: a (M, total_K) and b (total_K, N), both MN-major (K is the ragged outer TMA dimension),
    D (G, M, N)."""
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2:
        r.fail(f"inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
    if offs is None:
        r.fail("a and b are 2-D: groups along K need offs, the int32 end column of each group (or use gemm)")
    _extents(r, M, N, K)
    bad = [f"{w} {x.shape} has strides {x.strides}: {d} is not contiguous (pass {fix})"
           for w, x, major, d, fix in (("a", A, r.major(A, "a", "K", "MN", "MN")[0], "M",
                                        "x.t() of a row-major x (total_K, M)"),
                                       ("b", B, r.major(B, "b", "MN", "K", "MN")[0], "N",
                                        "a row-major (total_K, N) array"))
           if major != "MN" and x.size]
    if bad:
        r.fail("groups along K read a and b with K outermost (the K tile at a group's end is masked by TMA): "
               + "; ".join(bad))
    t, devices, a_major, lda, b_major, ldb, _, _, staging = _read(r, A, B, prefer="MN")
    O = _offsets(r, offs, None, K, devices, check and K > 0, "the column count of a (K)")
    G = O.shape[0]
    D, out_t, row, ldd, ldd_l, d_tma = _stacked_out(r, out, G, M, N, t, out_dtype, devices)
    C, ldc, ldc_l, V, bias, bias_l = _group_epilogue(r, epi, (G, M, N), G, row, ldd, out_t)
    r.no_alias(D, {"a": A, "b": B, "offs": O, "bias": V}, C)
    ops = Operands(A, B, C, V, out=D, alpha=epi.alpha, beta=epi.beta, like=a, offs=O)
    return Problem(M, N, K, a_major, b_major, t, out_t, C is not None, bias, epi.activation, lda=lda, ldb=ldb,
                   ldc=ldc, ldd=ldd, c_row_major=row, d_tma=d_tma, grouping="k", groups=G,
                   batch_strides=(0, 0, ldd_l, 0, ldc_l, bias_l), staging=staging, operands=ops)


def bmm_problem(a, b, *, out=None, out_dtype=None, op: str = "bmm", epilogue=None) -> Problem:
    """The problem of ``bmm(a, b)``: ``a`` (L, M, K), ``b`` (L, K, N), any batch strides (multiples of 16 bytes),
    D (L, M, N); ``epilogue`` as :func:`grouped_problem`'s. Raises :class:`GemmInputError` naming ``op``."""
    r = _Reader(op)
    A, B = r.array(a, "a"), r.array(b, "b")
    if len(A.shape) != 3 or len(B.shape) != 3:
        r.fail(f"a and b must be 3-D (batch, rows, columns), got shapes {A.shape} and {B.shape}")
    return _batch(r, a, A, B, out, out_dtype, epilogue or Epilogue())


def _extents(r: _Reader, M, N, K):
    if max(M, N, K) > MAX_EXTENT:
        r.fail(f"M, N and K must be at most {MAX_EXTENT} (the kernel's 32-bit extents), got {M}x{N}x{K}")


def _batch(r: _Reader, a, A, B, out, out_dtype, epi, scale_a=None, scale_b=None, fast_accum=False) -> Problem:
    (L, M, K), (L2, K2, N) = A.shape, B.shape
    if L != L2:
        r.fail(f"batch counts differ: a is {A.shape}, b is {B.shape}")
    if K != K2:
        r.fail(f"inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
    _extents(r, M, N, K)
    A2, lda_l = _matrix(A)
    B2, ldb_l = _matrix(B)
    scaled = scale_a is not None or scale_b is not None
    t, devices, a_major, lda, b_major, ldb, lda_l, ldb_l, staging = _read(r, A2, B2, fp8=scaled,
                                                                          a_groups=(L, lda_l), b_groups=(L, ldb_l))
    SA = SB = mode = None
    strides, sa_l, sb_l, scale_type = (0, 0, 0, 0), 0, 0, "f32"
    if scaled:
        SA, SB, mode, strides, sa_l, sb_l, scale_type = _scales(r, scale_a, scale_b, M, N, K, L, devices, fast_accum,
                                                                batch=True)
    D, out_t, row, ldd, ldd_l, d_tma = _stacked_out(r, out, L, M, N, "bf16" if scaled else t, out_dtype, devices)
    C, ldc, ldc_l, V, bias, bias_l = _group_epilogue(r, epi, (L, M, N), L, row, ldd, out_t)
    r.no_alias(D, {"a": A, "b": B, "scale_a": SA, "scale_b": SB, "bias": V}, C)
    ops = Operands(A, B, C, V, out=D, alpha=epi.alpha, beta=epi.beta, like=a, scale_a=SA, scale_b=SB)
    return Problem(M, N, K, a_major, b_major, t, out_t, C is not None, bias, epi.activation, lda=lda, ldb=ldb,
                   ldc=ldc, ldd=ldd, c_row_major=row, d_tma=d_tma, scale=mode, scale_strides=strides,
                   fast_accum=bool(fast_accum and scaled), scale_type=scale_type, grouping="batch", groups=L,
                   batch_strides=(lda_l, ldb_l, ldd_l, sb_l, ldc_l, bias_l, sa_l), staging=staging,
                   scale_a_tma=tma_aligned(SA), operands=ops)


@dataclass(frozen=True)
class Epilogue:
    """The epilogue arguments of a grouped or batched call: ``D = act(alpha * A @ B + beta * C + bias)``."""

    c: object = None
    alpha: float = 1.0
    beta: float = 0.0
    bias: object = None
    activation: str | None = None


def _group_epilogue(r: _Reader, epi: Epilogue, c_shape: tuple, G: int, row: bool, ldd: int, out_t: str) -> tuple:
    """``(C, ldc, C's group stride, bias, "row" | "col" | None, the bias's group stride)`` of a grouped call's
    epilogue: C of ``c_shape`` (D's: ``(M, N)`` for groups along M, ``(G, M, N)`` otherwise) when it is read
    (``beta != 0``), else ``(None, ldd, 0)``; the bias by :func:`_group_bias`."""
    if epi.activation not in ACTIVATIONS:
        r.fail(f"activation {epi.activation!r} not in {ACTIVATIONS}")
    M, N = c_shape[-2:]
    bias = _group_bias(r, epi.bias, G, M, N, out_t)
    if epi.c is None or epi.beta == 0:
        return (None, ldd, 0) + bias
    C = r.array(epi.c, "c")
    if C.shape != c_shape:
        r.fail(f"c must have D's shape {c_shape}; got {C.shape}")
    if len(c_shape) == 2:
        return (*r.c(C, epi.beta, M, N, row, ldd, out_t), 0) + bias
    C2, ldc_l = _matrix(C)
    return (C, r.c(C2, epi.beta, M, N, row, ldd, out_t)[1], ldc_l) + bias


def _group_bias(r: _Reader, bias, G: int, M: int, N: int, out_t: str) -> tuple:
    """``(bias record, "row" | "col", group stride)``: one vector for every group (length N per column, or M per
    row), or one per group, ``(G, N)`` or ``(G, M)`` (a mixture of experts' per-expert bias); ``(None, None, 0)``
    without."""
    if bias is None:
        return None, None, 0
    V = r.array(bias, "bias")
    if len(V.shape) == 1:
        return (*r.bias(V, M, N, out_t), 0)
    if len(V.shape) != 2 or V.shape[0] != G or V.shape[1] not in (M, N) or (V.strides[1] != 1 and V.shape[1] > 1):
        r.fail(f"bias must be a vector of length N={N} or M={M} for every group, or one per group ({G}, {N}) or "
               f"({G}, {M}), contiguous along its last dimension; got shape {V.shape}")
    if r.dtype(V, "bias", OUT_DTYPES) != out_t:
        r.fail(f"bias is {V.dtype.name}, out is {out_t}")
    return V, ("col" if V.shape[1] == N else "row"), (V.strides[0] if G > 1 else 0)


def _stacked_out(r: _Reader, out, L, M, N, t, out_dtype, devices) -> tuple:
    """``(D record or None, out_dtype, row_major, ldd, ldd_l, d_tma)`` of the (L, M, N) D of a batch or of groups
    along K: ``out``, or the compact one the call allocates (ldd_l = M N)."""
    D, D2, ldd_l = None, None, M * N
    if out is not None:
        D = r.array(out, "out")
        if D.shape != (L, M, N):
            r.fail(f"out has shape {D.shape}, expected {(L, M, N)}")
        D2, ldd_l = _matrix(D)
        span = (M - 1) * max(D2.strides) + (N - 1) * min(D2.strides) + 1 if M and N else 0
        if L > 1 and abs(ldd_l) < span:
            r.fail(f"out's matrices overlap: batch stride {ldd_l} elements, one ({M}, {N}) matrix spans {span}; "
                   f"give every batch entry its own D")
    out_t, row, ldd, _ = r.output(D2, M, N, t, out_dtype, devices)
    itemsize = 4 if out_t == "f32" else 2
    d_tma = row and (D is None or D.ptr % TMA_ALIGN == 0) and (L == 1 or ldd_l * itemsize % TMA_ALIGN == 0)
    return D, out_t, row, ldd, ldd_l, d_tma
