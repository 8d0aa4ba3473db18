"""Promoted fp8 accumulation and blockwise scaling (DeepSeek-V3's recipe): the mainloop that promotes each K
tile's partial sums into f32 accumulators.

With ``scale='block'``, ``scale_a`` holds one f32 per row of A and 128-wide
block along K (``(M, KB):(sa_m, sa_k)``, KB = ceil(K / 128)) and ``scale_b``
one per 128 x 128 block of B (``(KB, NB):(sb_k, sb_n)``). The K tile is one
scale block (BK = 128), and it is issued in column chunks
(:mod:`cute_py.emit.promote_plan`) each inside one 128-column block: per K
tile ``kb`` a chunk has one ``scale_b`` value and each row one ``scale_a``.

The wgmma sum a chunk of a K tile into a second accumulator set ``part``
(scale-d 0 on its first k-slice); once they have retired, the sums are
promoted into the f32 accumulators: ``acc += part * scale_a[m, kb] *
scale_b[kb, n / 128]``. The tensor core's fp8 accumulation runs over 128 K at
most, so long K keeps full f32 accuracy.

Without blockwise scales the same loop serves per-tensor and row-wise scales without fast accumulation
(``fast_accum=False``, PyTorch's default): the partial sums are added as they are, and the epilogue scales.

A thread's accumulators of one m-block lie in :attr:`~cute_py.emit.plan.GemmPlan.scale_rows`
rows (two for every GMMA atom: ``r`` and ``r + 8``), read from the tiled C TV
layout; the ``scale_a`` values a thread loads per K tile are those rows of its
m-blocks, and ``scale_slot(v)`` says which of them value ``v`` uses.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> p = gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))
>>> scale_slot(p)
('(v / 2) % 2', 8)
"""

from __future__ import annotations

from .checks import require
from .cprint import to_c
from .params import SCALE_STRIDES
from .tv_split import split_part
from .scaling import SCALE_BLOCK, scale_source

__all__ = ["block_scales_init", "scale_slot", "scale_col8", "scale_loads"]


def scale_slot(p) -> tuple:
    """``(C expression of v, row step)``: which of the thread's scale rows value ``v`` lies in, and the rows'
    spacing. Checked: the rows are ``0, step, 2 step, ...`` and the expression gives every value's row."""
    from ..layouts.symbolic import indices          # sympy loads when a spec is planned, not at import

    rows = p.scale_rows
    step = rows[1] - rows[0] if len(rows) > 1 else 1
    require(rows == tuple(range(0, step * len(rows), step)), "block_mainloop", "a thread's accumulator rows in an "
            "m-block are evenly spaced from 0", rows=rows)
    terms = [(e, dv, dm // step, dn) for e, dv, dm, dn in p.value_terms]
    require(all(split_part(terms, v, 2) == r // step for v, r in enumerate(p.value_rows)), "block_mainloop",
            f"scale_slot(v) == acc_m_value(v) / {step} for every value", value_rows=p.value_rows)
    return to_c(split_part(terms, indices("v"), 2)), step


def scale_col8(p) -> str:
    """C expression of ``v``: the 8-column group of the tile that value ``v`` lies in, for every thread (a
    thread's column part and the value's column inside its group stay below 8). A tile that touches two scale
    blocks starts its second block at a multiple of 8 columns (BN is), so value ``v`` takes the second block's
    scale exactly when ``scale_col8(v)`` reaches the tile's 8-column groups in the first. Checked for every
    (thread, value) against the C TV layout's parts.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> scale_col8(gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 144, 128))))
    '(v / 4) % 18'
    """
    import numpy as np
    from ..layouts.symbolic import indices          # sympy loads when a spec is planned, not at import

    terms = [(e, dv, dm, dn // 8 if dn % 8 == 0 else 0) for e, dv, dm, dn in p.value_terms]
    t, v = np.arange(p.tv_rows * 2)[None, :], np.arange(p.acc_per_block)[:, None]   # 128 threads per 64 rows
    col = split_part(p.thread_terms, t, 3) + split_part(p.value_terms, v, 3)
    require((col // 8 == split_part(terms, v, 3)).all(), "block_mainloop", "scale_col8(v) is the 8-column group "
            "of value v's column for every thread", at=("v", "t"), values={"col": col})
    return to_c(split_part(terms, indices("v"), 3))


def block_scales_init(p) -> str:
    """The consumer's ``BlockScales`` from the kernel parameters (empty unless ``scale='block'``).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> block_scales_init(gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))).strip()
    'const BlockScales sc = {scale_a, scale_b, sa_m, sa_k, sb_k, sb_n, M, N};'
    """
    if p.scale != "block":
        return ""
    return f"    const BlockScales sc = {{scale_a, scale_b, {', '.join(SCALE_STRIDES)}, M, N}};\n"


def scale_loads(p) -> str:
    """``BlockScales``, ``scale_slot`` and ``load_scales``: where a thread's scales of one K tile are."""
    slot, step = scale_slot(p)
    n_rows = len(p.scale_rows)
    pp = p.promotion
    if pp.straddles:
        what = "the scale_b of the two blocks the tile touches (a block past N reads the last)"
        col = f"n0 - n0 % {SCALE_BLOCK} + c * {SCALE_BLOCK}"
        cols = (f"// the tile's columns lie in two scale blocks: value v takes the second's scale from 8-column group "
                f"(128 - n0 % 128) / 8 on\n__device__ __forceinline__ int scale_col8(int v) {{ return {scale_col8(p)}; }}\n")
    else:
        what = "each column chunk's scale_b (chunks past N read the last block)"
        col = f"n0 + c * {pp.n}"
        cols = ""
    spec = p.spec
    ct, ue8m0 = scale_source(spec)
    return f"""
// ---- blockwise scales: scale_a (M, KB):(sa_m, sa_k), one per row and {SCALE_BLOCK}-wide K block; scale_b
//      (KB, NB):(sb_k, sb_n), one per {SCALE_BLOCK} x {SCALE_BLOCK} block (KB = ceil(K / {SCALE_BLOCK}); BK = {SCALE_BLOCK}: one
//      scale block per K tile; each column chunk of the tile lies in one scale block, or the tile in two) ----
{ue8m0}struct BlockScales {{ const {ct}* __restrict__ a; const {ct}* __restrict__ b; long long a_m, a_k, b_k, b_n; int M, N; }};
// a thread's values of one m-block lie in {n_rows} rows {p.scale_rows} (the C TV layout's value rows, plan.scale_rows);
// value v uses row slot scale_slot(v) = acc_m_value(v) / {step}
constexpr int kScaleRows = {n_rows};
constexpr int kScaleCols = {pp.scale_cols};
__device__ __forceinline__ int scale_slot(int v) {{ return {slot}; }}
{cols}// the thread's scale_a values (its rows of every m-block; rows past M read row M - 1; as stored: {ct}) and
// {what}, for K tile kb
__device__ __forceinline__ void load_scales(const BlockScales& sc, int m_row, int n0, int kb,
                                            {ct} (&sa)[kMBlocks][kScaleRows], {ct} (&sb)[kScaleCols]) {{
#pragma unroll
  for (int c = 0; c < kScaleCols; ++c)
    sb[c] = sc.b[kb * sc.b_k + (min({col}, sc.N - 1) / {SCALE_BLOCK}) * sc.b_n];
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int r = 0; r < kScaleRows; ++r)
      sa[mb][r] = sc.a[min(m_row + mb * kTvRows + r * {step}, sc.M - 1) * sc.a_m + kb * sc.a_k];
}}
"""
