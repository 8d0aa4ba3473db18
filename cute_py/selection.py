"""``select(problem)``: the spec a problem runs with: the tuned table's, else the heuristic's.

The second step of the product path (``arrays -> Problem -> select -> GemmSpec -> GemmPlan -> bind ->
Launch``). :func:`pick_spec` is the heuristic, measured on the H100 (benchmarks/NOTES.md);
:func:`~cute_py.autotune.autotune` measures candidates through the same pipeline and records the winner in the
tuned table (:mod:`cute_py.tuned`), where :func:`select` finds it.

>>> from cute_py.problem import Problem
>>> heuristic(Problem(8192, 8192, 8192, "K", "K", "bf16", "bf16")).tile
(128, 256, 64)
"""

from __future__ import annotations

import operator

from . import tuned
from .emit.spec import GemmSpec
from .problem import Problem
from .runtime import device

__all__ = ["select", "heuristic", "pick_spec", "swaps_ab", "SWAP_AB_MAX_M", "SWAP_AB_MIN_N", "PICK_FIELDS"]

SWAP_AB_MAX_M = 32
"""The most rows (tokens) of a GEMM that :func:`swaps_ab` runs transposed."""
SWAP_AB_MIN_N = 256
"""The fewest columns (weight rows) of a GEMM that :func:`swaps_ab` runs transposed."""


def select(problem, sm_count: int | None = None) -> GemmSpec:
    """The spec for ``problem``: the one :func:`~cute_py.autotune.autotune` recorded for it on this GPU (when it fits the
    problem), else :func:`heuristic`'s. ``sm_count`` defaults to the current GPU's.

    >>> from cute_py.problem import Problem
    >>> select(Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16"), sm_count=132).tile   # nothing tuned here
    (128, 256, 64)
    """
    spec = tuned.lookup(problem)
    if spec is not None:
        return spec
    return heuristic(problem, device().sm_count if sm_count is None else sm_count)


def swaps_ab(problem) -> bool:
    """Whether :func:`cute_py.gemm` runs ``problem`` as swap-AB, ``D^T = b^T a^T``: for decode-size M (at most
    :data:`SWAP_AB_MAX_M` rows) against N >= 256, one GEMM (no grouping; bf16/f16, or fp8 with per-tensor or
    row-wise scales, which trade places: blockwise scales are 1 x 128 for a and 128 x 128 for b), when no tuned
    spec is recorded for it (:func:`cute_py.autotune.autotune` tunes a problem that swaps as its swapped problem,
    so its record serves the swapped launch). The weights (b^T, N rows) then take wgmma's 64-row M and the tokens its N, in steps of
    8 (:func:`pick_spec`'s small-N tiles), and D is written through its transpose (column-major D^T, the direct
    epilogue). Measured on the H200 in CUDA-graph replay over six LLM shapes (benchmarks/NOTES.md, version 12):
    0.99 of cuBLAS at M = 8 against 0.69 without (geomean), 0.97 against 0.77 at M = 32; at M = 64 it wins on two
    shapes and loses on 4096 x 4096 (0.78 against 0.84), at M = 128 it loses on two: there the unswapped tiles
    stay.

    >>> from cute_py.problem import Problem
    >>> swaps_ab(Problem(16, 4096, 4096, "K", "K", "bf16", "bf16")), swaps_ab(Problem(64, 4096, 4096, "K", "K", "bf16", "bf16"))
    (True, False)
    """
    p = problem
    return (p.grouping is None and p.scale in (None, "tensor", "row") and 0 < p.M <= SWAP_AB_MAX_M
            and p.N >= SWAP_AB_MIN_N and p.K > 0 and tuned.lookup(p) is None)


PICK_FIELDS = ("beta", "bias", "activation", "c_row_major", "d_tma", "scale", "fast_accum", "scale_type", "grouping",
               "groups")
"""The keywords :func:`pick_spec` takes besides the extents, majors and types: fields of
:class:`~cute_py.problem.Problem`."""


def pick_spec(M, N, K, a_major, b_major, dtype, out_dtype, *, sm_count=132, **fields) -> GemmSpec:
    """:func:`heuristic`'s spec for the problem of these extents, majors and types; ``fields`` are the other
    fields of :class:`~cute_py.problem.Problem` (:data:`PICK_FIELDS`), checked by it: the problem is the one
    record of the features the heuristic reads. Integer and boolean values of numpy or torch types are read as
    Python ints and bools. As for any Problem, a row-major D whose rows are not 16-byte multiples cannot take
    the TMA-store epilogue (``d_tma`` is then False).

    >>> pick_spec(8192, 8192, 8192, "K", "K", "bf16", "bf16").name
    'cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g32'
    >>> pick_spec(64, 100, 64, "K", "K", "bf16", "bf16").epilogue      # 100 bf16 = 200 bytes per row of D
    'direct'
    """
    unknown = sorted(set(fields) - set(PICK_FIELDS))
    if unknown:
        raise TypeError(f"pick_spec: unknown keyword {unknown[0]!r}; it takes {', '.join(PICK_FIELDS)} and sm_count")
    extents = [_plain(x) for x in (M, N, K)]
    fields = {k: _plain(v) for k, v in fields.items()}
    return heuristic(Problem(*extents, a_major, b_major, dtype, out_dtype, **fields), sm_count)


def _plain(x):
    """``x`` as a Python bool or int when it is a numpy or torch boolean or integer scalar; else ``x`` (Problem
    then refuses what is neither).

    >>> import numpy as np
    >>> _plain(np.int64(8)), _plain(np.True_), _plain(2.5)
    (8, True, 2.5)
    """
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if str(getattr(x, "dtype", "")) in ("bool", "torch.bool"):
        return bool(x)
    try:
        return operator.index(x)
    except TypeError:
        return x


def heuristic(problem, sm_count: int = 132) -> GemmSpec:
    """The spec the heuristic picks for ``problem`` (a :class:`~cute_py.problem.Problem`) on a GPU of
    ``sm_count`` SMs (:func:`~cute_py.autotune.autotune` can do better).

    Measured on the H100 (benchmarks/NOTES.md, versions 2 and 3):

    - tile 128x256x64 (2 consumer warpgroups, 64x256 wgmma each) when that
      still gives every SM a tile; else 128x128x64 while those tiles fill at
      least 90% of the SMs. 128x128x64 also for heavier epilogues (any of
      beta, bias, activation with an MN-major A; two or more with a K-major
      A), where the 128x256 kernel would spill registers;
    - fewer tiles than that (small M): 64-row tiles with one consumer
      warpgroup, which double the CTAs streaming B: 64x128x64 when they fill
      90% of the SMs, else 64x64x64 (13 stages deep);
    - split-K (2) only for long K (at least 128 k-blocks) when even those
      tiles fill at most half the SMs: the f32 reduction through L2 costs
      more than it gains elsewhere; and for K = 0, where split-K kernels
      zero-fill their empty K ranges (the others load at least one k-block:
      a zero-fill there cost 0.5-1% measured, NOTES version 8);
    - stream-K (:mod:`cute_py.emit.collectives.schedulers.stream_k`) for one bf16/f16 GEMM of more than two
      waves of tiles whose last wave leaves the SMs idle (the data-parallel waves at most 82% busy) and K of at
      most 64 k-blocks: measured on the H200 1.03-1.14x the data-parallel schedule on four such shapes, 0.88x at
      K = 8192, 0.58-0.86x wherever the waves are 85% busy or more (benchmarks/NOTES.md, version 10);
    - the TMA-store epilogue for a row-major, 16-byte aligned D (``d_tma``),
      else direct stores;
    - persistent, cooperative, no cluster (neither ping-pong nor 2-CTA
      clusters paid on any measured shape); L2 raster groups of 32 tile rows
      from 8 waves of tiles on, 16 from 2 waves, else 8.

    >>> pick_spec(8192, 8192, 8192, "K", "K", "bf16", "bf16").name
    'cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g32'
    >>> s = pick_spec(128, 4096, 14336, "K", "K", "bf16", "bf16")
    >>> s.tile, s.consumers, s.split_k
    ((64, 64, 64), 1, 1)
    >>> pick_spec(64, 1024, 14336, "K", "K", "bf16", "bf16").split_k
    2
    >>> pick_spec(128, 4096, 4096, "K", "K", "bf16", "bf16").name
    'cute_gemm_sm90_bf16_tn_64x64x64_s13_c1_obf16_dr_g8'
    >>> pick_spec(2176, 4096, 4096, "K", "K", "bf16", "bf16").scheduler    # 272 tiles: 3 waves, 69% busy
    'stream_k'

    fp8 (``scale`` set) uses the same rules with K tiles of 128 (one 128-byte swizzle row of fp8), a row-wise
    scale counting as an epilogue step, and when the mainloop promotes (blockwise scales, or no ``fast_accum``)
    no tile wider than 128 columns (two accumulator sets of a 128x256 tile do not fit in registers; the
    128x256 branch falls back to 128x128):

    >>> pick_spec(8192, 8192, 8192, "K", "K", "e4m3", "bf16", scale="block").tile
    (128, 128, 128)

    Grouped and batched problems (``grouping``, ``groups``; :mod:`cute_py.emit.grouping`) count the tiles of all
    their GEMMs (groups along M: up to one partial tile more per group) and put the group mode L in the layouts:

    >>> pick_spec(16384, 4096, 7168, "K", "K", "bf16", "bf16", grouping="m", groups=8).name
    'cute_gemm_sm90_bf16_tn_128x256x64_s4_c2_obf16_dr_g32_grouped'
    >>> pick_spec(32768, 1536, 2048, "K", "K", "bf16", "bf16", grouping="m", groups=128).name
    'cute_gemm_sm90_bf16_tn_64x256x64_s4_c2_obf16_dr_g32_pingpong_grouped'
    """
    p = problem
    M, N, K, a_major, b_major, dtype, out_dtype = p.M, p.N, p.K, p.a_major, p.b_major, p.dtype, p.out_dtype
    beta, bias, activation, c_row_major, d_tma = p.beta, p.bias, p.activation, p.c_row_major, p.d_tma
    scale, fast_accum, scale_type, grouping, groups = p.scale, p.fast_accum, p.scale_type, p.grouping, p.groups
    a = "(M,K):(K,1)" if a_major == "K" else "(M,K):(1,M)"
    b = "(N,K):(K,1)" if b_major == "K" else "(N,K):(1,N)"
    c = "(M,N):(N,1)" if c_row_major else "(M,N):(1,M)"
    if grouping:                                 # the group mode L: b's (groups along M), c's (along K), or all
        if grouping in ("m", "batch"):
            b = _with_group_mode(b, "ldb_l")
        if grouping == "batch":
            a = _with_group_mode(a, "lda_l")
        if grouping in ("batch", "k"):
            c = _with_group_mode(c, "ldd_l")

    if N <= SWAP_AB_MAX_M and M >= SWAP_AB_MIN_N and not grouping and scale in (None, "tensor", "row"):  # swapped
        return _small_n_spec(M, N, K, a, b, c, dtype, out_dtype, beta, bias, activation, sm_count, scale, fast_accum,
                             scale_type)

    def tiles(bm, bn):
        if grouping == "m":
            return (-(-M // bm) + groups // 2) * -(-N // bn)
        return -(-M // bm) * -(-N // bn) * (groups if grouping in ("batch", "k") else 1)

    extras = int(bool(beta)) + (bias is not None) + (activation is not None) + (scale == "row")
    light = extras == 0 or (a_major == "K" and extras == 1)
    bk = 128 if scale else 64
    long_k = -(-K // 64) >= 128
    fill = 0.9 * sm_count
    split = 1
    promotes = scale == "block" or (scale is not None and not fast_accum)
    if tiles(128, 256) >= sm_count and light and not promotes:
        tile = (128, 256, bk)
    elif tiles(128, 128) >= fill or (promotes and tiles(128, 256) >= sm_count):
        tile = (128, 128, bk)
    elif tiles(64, 128) >= fill:
        tile = (64, 128, bk)
    else:
        tile = (64, 64, bk)
    n = tiles(tile[0], tile[1])
    if (n * 2 <= sm_count and long_k or K == 0) and not grouping:
        split = 2                                # K = 0: a split-K kernel zero-fills its empty K ranges
    busy = n / (-(-n // sm_count) * sm_count)    # the data-parallel waves' share of busy SMs
    stream_k = (split == 1 and not grouping and not scale and n > 2 * sm_count and busy <= 0.82
                and -(-K // bk) <= 64)
    group = 32 if n >= 8 * sm_count else 16 if n >= 2 * sm_count else 8
    schedule, cluster, consumers = "cooperative", (1, 1), tile[0] // 64
    if grouping == "m" and not promotes:
        tile, schedule, cluster, consumers = _moe_tile(M // max(groups, 1), N, bk, tile)
    tile_warpgroups = 1 if schedule == "pingpong" else consumers
    if grouping == "m" and not (c_row_major and d_tma) and tile[0] * tile[1] // (128 * tile_warpgroups) >= 128:
        # groups along M with direct stores: at most 96 accumulators per thread (GroupsAlongM.problems)
        tile, schedule, cluster, consumers = (128, 128, bk), "cooperative", (1, 1), 2
    elif grouping == "m" and tile[0] == 128 and M // max(groups, 1) < 2048:    # promoting: 64 x 128 ping-pong
        tile, schedule, consumers = (64, 128, bk), "pingpong", 2
    return GemmSpec(a=a, b=b, c=c, dtype=dtype, out_dtype=out_dtype, tile=tile, consumers=consumers, beta=beta,
                    bias=bias, activation=activation, split_k=split, group=group, schedule=schedule, cluster=cluster,
                    epilogue="tma" if c_row_major and d_tma else "direct", scale=scale, fast_accum=fast_accum,
                    scale_type=scale_type,
                    scheduler="stream_k" if stream_k else None)


def _small_n_spec(M, N, K, a, b, c, dtype, out_dtype, beta, bias, activation, sm_count, scale=None,
                  fast_accum=False, scale_type="f32") -> GemmSpec:
    """Few columns (N <= :data:`SWAP_AB_MAX_M`; the tokens of a swapped decode GEMM): 64-row tiles whose N is
    N rounded up to wgmma's step of 8, so no column of the tensor core's work is padding beyond 7, K tiles of 128
    (16 KB of A a stage: fewer, larger copies than 64-wide ones, 2-4% faster on the H200), and split-K so that
    the tiles' CTAs stream A from every SM (up to 8 splits of at least 4 k-blocks each). Direct stores: D is a
    few columns wide.

    >>> s = pick_spec(4096, 16, 4096, "K", "K", "bf16", "bf16")
    >>> s.tile, s.split_k, s.epilogue
    ((64, 16, 128), 2, 'direct')

    An fp8 mainloop that promotes (no ``fast_accum``) sums a tile this narrow in one chunk of its own width:

    >>> pick_spec(4096, 8, 4096, "K", "K", "e4m3", "bf16", scale="row").tile
    (64, 8, 128)
    """
    bn, bk = max(8, -(-N // 8) * 8), 128
    tiles = -(-M // 64)
    split = max(1, min(8, sm_count // tiles, -(-K // bk) // 4))
    return GemmSpec(a=a, b=b, c=c, dtype=dtype, out_dtype=out_dtype, tile=(64, bn, bk), consumers=1, beta=beta,
                    bias=bias, activation=activation, split_k=split, epilogue="direct", scale=scale,
                    fast_accum=fast_accum, scale_type=scale_type)


def _moe_tile(rows: int, N: int, bk: int, dense: tuple) -> tuple:
    """``(tile, schedule, cluster, consumers)`` for groups along M of ``rows`` rows on average (measured on the
    H100, benchmarks/NOTES.md version 7): groups of thousands of rows run as dense GEMMs do; smaller ones in
    64-row tiles (a group's last, partial tile wastes less) with two warpgroups taking turns, so that one's
    epilogue overlaps the other's mainloop (on the model shapes measured, 2x1 clusters sharing B by multicast
    and 128-row tiles were slower below 2048 rows per group)."""
    if rows >= 2048 or N < 256:
        return dense, "cooperative", (1, 1), dense[0] // 64
    return (64, 256, bk), "pingpong", (1, 1), 2


def _with_group_mode(text: str, stride: str) -> str:
    """The gmem layout ``text`` with the group mode L (stride ``stride``) appended.

    >>> _with_group_mode("(N,K):(1,N)", "ldb_l")
    '(N,K,L):(1,N,ldb_l)'
    """
    shape, strides = text[1:-1].split("):(")
    return f"({shape},L):({strides},{stride})"
