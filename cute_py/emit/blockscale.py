"""Promoted fp8 accumulation and blockwise scaling (DeepSeek-V3's recipe): the mainloop that promotes each K
tile's partial sums into f32 accumulators.

With ``scale='block'``, ``scale_a`` holds one f32 per row of A and 128-wide
block along K (``(M, KB):(sa_m, sa_k)``, KB = ceil(K / 128)) and ``scale_b``
one per 128 x 128 block of B (``(KB, NB):(sb_k, sb_n)``). The K tile is one
scale block (BK = 128), and it is issued in column chunks
(:mod:`cute_py.emit.promote_plan`) each inside one 128-column block: per K
tile ``kb`` a chunk has one ``scale_b`` value and each row one ``scale_a``.

Where the scales come from: ``scale_a``'s values of a K tile arrive with its ring stage. The producer's TMA
issue of the stage also copies the tile's BM rows of column ``kb`` of scale_a (one box, counted in the stage's
transaction bytes) into the stage's *scale slot*, a shared array beside the ring, through a tensor map over the
M-major layout ``(M, KB):(1, sa_k)`` (a scale_a in another layout is gathered into one before the launch:
:func:`~cute_py.emit.scaling.scale_a_map`). A consumer reads its rows from the slot when the stage is full, before it issues
the stage's wgmma. ``scale_b`` (one value per chunk and K tile) is read from global memory one K tile ahead.
(benchmarks/NOTES.md, versions 13, 13b and 13c: what the scale loads cost; scales copied by a producer warp with
``cp.async`` cost more than they saved; with scale_b's load still in the K loop, large tiles run as before.)

The wgmma sum a chunk of a K tile into a second accumulator set ``part``
(scale-d 0 on its first k-slice); once they have retired, the sums are
promoted into the f32 accumulators: ``acc += part * scale_a[m, kb] *
scale_b[kb, n / 128]``. The tensor core's fp8 accumulation runs over 128 K at
most, so long K keeps full f32 accuracy.

Without blockwise scales the same loop serves per-tensor and row-wise scales without fast accumulation
(``fast_accum=False``, PyTorch's default): the partial sums are added as they are, and the epilogue scales.

A thread's accumulators of one m-block lie in :attr:`~cute_py.emit.plan.GemmPlan.scale_rows`
rows (two for every GMMA atom: ``r`` and ``r + 8``), read from the tiled C TV
layout; the ``scale_a`` values a thread reads per K tile are those rows of its
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
from .scaling import SCALE_BLOCK, SCALE_BYTES, scale_a_pad, scale_source, scale_stage_bytes

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
    """The consumer's ``ScaleB`` from the kernel parameters (empty unless ``scale='block'``).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> block_scales_init(gemm_plan(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))).strip()
    'const ScaleB sc = {scale_b, sb_k, sb_n, N};'
    """
    if p.scale != "block":
        return ""
    return f"    const ScaleB sc = {{scale_b, {', '.join(SCALE_STRIDES[2:])}, N}};\n"


def scale_loads(p) -> str:
    """``ScaleB``, the scale slots, ``scale_slot`` and ``load_scale_b``: where a thread's scales of one K tile are."""
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
    slot_bytes = scale_stage_bytes(spec)
    box = pp.sa_tma
    pad = (f"constexpr int kScaleAPad = {scale_a_pad(spec)};     // groups along M: a box starts on a 16-byte boundary, "
           f"up to this many rows before the tile\n" if scale_a_pad(spec) else "")
    return f"""
// ---- blockwise scales: scale_a (M, KB):(1, sa_k) through tensor map tma_sa, one per row and {SCALE_BLOCK}-wide K
//      block: the producer's box {box.box_dim} of a stage's K block lands in the stage's scale slot (kScaleSlotBytes
//      each, beside the ring); scale_b (KB, NB):(sb_k, sb_n), one per {SCALE_BLOCK} x {SCALE_BLOCK} block, read from
//      global memory (KB = ceil(K / {SCALE_BLOCK}); BK = {SCALE_BLOCK}: one scale block per K tile; each column chunk of the
//      tile lies in one scale block, or the tile in two) ----
{ue8m0}struct ScaleB {{ const {ct}* __restrict__ b; long long b_k, b_n; int N; }};
constexpr u32 kScaleSlotBytes = {slot_bytes}u;                // a box of {box.box_dim[0]} scale_a values, 128-byte aligned slots
constexpr int kScaleSlot = {slot_bytes // SCALE_BYTES[spec.scale_type]};                        // elements per slot
{pad}// a thread's values of one m-block lie in {n_rows} rows {p.scale_rows} (the C TV layout's value rows, plan.scale_rows);
// value v uses row slot scale_slot(v) = acc_m_value(v) / {step}
constexpr int kScaleRows = {n_rows}, kScaleRowStep = {step};
constexpr int kScaleCols = {pp.scale_cols};
__device__ __forceinline__ int scale_slot(int v) {{ return {slot}; }}
{cols}// {what}, for K tile kb (as stored: {ct})
__device__ __forceinline__ void load_scale_b(const ScaleB& sc, int n0, int kb, {ct} (&sb)[kScaleCols]) {{
#pragma unroll
  for (int c = 0; c < kScaleCols; ++c)
    sb[c] = sc.b[kb * sc.b_k + (min({col}, sc.N - 1) / {SCALE_BLOCK}) * sc.b_n];
}}
"""
