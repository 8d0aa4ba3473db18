"""The epilogue snippets: the math of ``D = act(alpha * A @ B^T + beta * C + bias)``, where each accumulator
lands (the tiled GMMA C TV layout, split into row and column parts), and the two ways out: masked stores from
registers, or staging through swizzled shared memory (st.shared for f32, stmatrix for 16-bit D) and TMA
stores.

Every offset printed here is a field of the plan, checked against the layouts it came from when it was derived
(:mod:`cute_py.emit.epilogue_plan`); the snippets only print.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> "stmatrix_x4(base ^ kStageXor[q]" in epilogue(gemm_plan(GemmSpec()), {"m_end": None, "l": None})
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..arch.sm90 import SMEM_ALIGN
from .blockscale import scale_slot
from .cprint import commented, to_c
from .epilogue_plan import staging_swizzle, stsm_lane_index, thread_index
from .tv_split import split_part
from .scaling import scale_read, scale_source

__all__ = ["epilogue", "epi_init", "tv_expr", "row_scales", "EpilogueOp", "EPILOGUE_OPS", "epilogue_ops"]


def _line70(code: str, comment: str) -> str:
    """``code`` with ``// comment`` at column 70 (the staging offset lines)."""
    return commented(code, comment, 70)


def tv_expr(terms, var: str, part: int) -> str:
    """C expression of the m (part 2) or n (part 3) contribution of ``terms`` (from
    :func:`~cute_py.emit.tv_split.split_tv`) for the index ``var``, printed by :func:`cute_py.emit.cprint.to_c`
    (the plan's ``acc_place`` are these expressions).

    >>> tv_expr([(4, 1, 0, 2), (8, 4, 1, 0)], "t", 2), tv_expr([(4, 1, 0, 2), (8, 4, 1, 0)], "t", 3)
    ('(t / 4) % 8', '2 * (t % 4)')
    """
    from ..layouts.symbolic import indices

    return to_c(split_part(terms, indices(var), part))


def _from_out(o, x: str) -> str:
    """``x`` (an element of D's type) as f32."""
    return {"f32": "{}", "bf16": "bf16_to_f32({})", "f16": "f16_to_f32({})"}[o.dtype].format(x)


def _add_c(o) -> str:
    off = "(long long)m * ep.ldc + n" if o.row_major else "m + (long long)n * ep.ldc"
    return f"if (m < ep.M && n < ep.N) x += ep.beta * {_from_out(o, f'ep.c[{off}]')};"


def _add_bias(o) -> str:
    idx, lim = ("m", "M") if o.bias == "row" else ("n", "N")
    return (f"if ({idx} < ep.{lim}) x += {_from_out(o, f'ep.bias[{idx}]')};"
            f"   // bias per {'row m (length M)' if o.bias == 'row' else 'column n (length N)'}")


@dataclass(frozen=True)
class EpilogueOp:
    """One step of the epilogue's math on an accumulator ``x`` at ``(m, n)`` of D: ``applies(out)`` says whether an
    :class:`~cute_py.emit.plan.OutputPlan` has it, ``statement(out)`` is its C. The ops run in :data:`EPILOGUE_OPS`
    order; a new op is one more entry there.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> RELU.applies(gemm_plan(GemmSpec(activation="relu")).out), RELU.statement(None)
    (True, 'x = fmaxf(x, 0.0f);')
    """

    name: str
    applies: Callable
    statement: Callable


ALPHA = EpilogueOp("alpha", lambda o: bool(o.alpha or o.scale == "tensor"),   # per-tensor fp8 scales fold into alpha
                   lambda o: "x *= ep.alpha;" + ("   // alpha * scale_a * scale_b (Epi's initializer)" if o.scale else ""))
ADD_C = EpilogueOp("beta * C", lambda o: bool(o.beta), _add_c)
ADD_BIAS = EpilogueOp("bias", lambda o: bool(o.bias), _add_bias)
RELU = EpilogueOp("relu", lambda o: o.activation == "relu", lambda o: "x = fmaxf(x, 0.0f);")
GELU = EpilogueOp("gelu", lambda o: o.activation == "gelu",
                  lambda o: "x = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));   // GELU, erf form")

EPILOGUE_OPS = (ALPHA, ADD_C, ADD_BIAS, RELU, GELU)
"""The epilogue's ops, in the order they run (row-wise fp8 scales run before them, on the finished tile:
:func:`row_scales`; the conversion to D's type is the store's)."""


def epilogue_ops(o) -> tuple:
    """The ops an :class:`~cute_py.emit.plan.OutputPlan` applies, in order.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> [op.name for op in epilogue_ops(gemm_plan(GemmSpec(beta=True, activation="gelu")).out)]
    ['alpha', 'beta * C', 'gelu']
    """
    return tuple(op for op in EPILOGUE_OPS if op.applies(o))


def _epilogue_math(p) -> str:
    """``apply(x, m, n)``: the :func:`epilogue_ops` of the output on one accumulator (m, n inside D)."""
    o = p.out
    body = "\n".join("  " + op.statement(o) for op in epilogue_ops(o))
    return f"""
// ---- epilogue math: D = {o.formula} ----
struct Epi {{
  const {o.store_type}* __restrict__ c; const {o.store_type}* __restrict__ bias; long long ldc; float alpha, beta; int M, N;
}};
__device__ __forceinline__ float apply(float x, int m, int n, const Epi& ep) {{
{body}
  return x;
}}
"""


def epi_init(p) -> str:
    """The kernel's initializer of its ``Epi`` (the epilogue math's operands) from its parameters: per-tensor
    scales fold into alpha.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> epi_init(gemm_plan(GemmSpec(dtype="e4m3", scale="tensor", tile=(128, 128, 128))))
    '{c, bias, ld_c, alpha * scale_a[0] * scale_b[0], beta, M, N}'
    """
    alpha = "alpha * scale_a[0] * scale_b[0]" if p.out.scale == "tensor" else "alpha"
    return f"{{c, bias, ld_c, {alpha}, beta, M, N}}"


def row_scales(p) -> str:
    """``scale_acc``: the row-wise scales applied to a finished tile's accumulators (before the epilogue, after a
    split-K reduction). A thread's row scales are loaded once per m-block (its rows: ``plan.scale_rows``), its
    column scales once per column (the compiler merges the repeated loads).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> "scale_acc(float (&acc)" in row_scales(gemm_plan(GemmSpec(dtype="e4m3", scale="row", tile=(128, 128, 128))))
    True
    """
    if p.out.scale != "row":
        return ""
    slot, step = scale_slot(p)
    spec = p.spec
    ct, ue8m0 = scale_source(spec)
    read_a = scale_read(spec, f"sa[min(mt + mb * kTvRows + r * {step}, M - 1) * sa_m]")
    read_b = scale_read(spec, "sb[min(nt + acc_n_value(v), N - 1) * sb_n]")
    return f"""{ue8m0}
// ---- row-wise scales: acc(m, n) *= scale_a[m] * scale_b[n] with scale_a (M, 1):(sa_m, 0), scale_b (1, N):(0, sb_n);
//      rows and columns past M and N read the last scale (they are never stored) ----
// a thread's values of one m-block lie in {len(p.scale_rows)} rows {p.scale_rows} (plan.scale_rows): value v's is scale_slot(v)
constexpr int kScaleRows = {len(p.scale_rows)};
__device__ __forceinline__ int scale_slot(int v) {{ return {slot}; }}
__device__ __forceinline__ void scale_acc(float (&acc)[kMBlocks][kAccPerBlock], int t, int m0, int n0,
                                          const {ct}* __restrict__ sa, const {ct}* __restrict__ sb, long long sa_m,
                                          long long sb_n, int M, int N) {{
  const int mt = m0 + acc_m_thread(t), nt = n0 + acc_n_thread(t);
  float ra[kMBlocks][kScaleRows];
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int r = 0; r < kScaleRows; ++r) ra[mb][r] = {read_a};
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int v = 0; v < kAccPerBlock; ++v)
      acc[mb][v] *= ra[mb][scale_slot(v)] * {read_b};
}}
"""


def _acc_placement(p) -> str:
    rows = p.tv_rows
    tm, tn, vm, vn = (to_c(x) for x in p.acc_place)
    return f"""
// ---- accumulator placement from the tiled GMMA C TV layout ----
// tiled MMA ({p.tile_warpgroups},1,1) of {p.atom.name}: get_layoutC_TV = {p.c_tv}
// maps (tile thread t, value v) to m + {rows} * n; split mode by mode into row and column parts
// (each stride d gives d % {rows} to m and d / {rows} to n; checked against the layout for every t, v;
// printed by cute_py.emit.cprint.to_c).
// m-block mb of a consumer adds mb * kTvRows rows.
__device__ __forceinline__ int acc_m_thread(int t) {{ return {tm}; }}
__device__ __forceinline__ int acc_n_thread(int t) {{ return {tn}; }}
__device__ __forceinline__ int acc_m_value(int v) {{ return {vm}; }}
__device__ __forceinline__ int acc_n_value(int v) {{ return {vn}; }}
"""


def epilogue(p, coords: dict) -> str:
    """The epilogue: math, then the TMA-store path (staged in swizzled smem) or masked direct stores; ``coords``
    (the scheduler's, :meth:`~cute_py.emit.collectives.schedulers.tile.TileScheduler.coords`) say whether a
    group bounds the rows (a ragged store) and which coordinate a batched D's group mode takes."""
    stores = _epilogue_tma(p, coords) if p.epi else _epilogue_direct(p)
    return _epilogue_math(p) + _acc_placement(p) + row_scales(p) + stores


def _epilogue_direct(p) -> str:
    o = p.out
    d_off = "(long long)m * ld + n" if o.row_major else "m + (long long)n * ld"
    to_out = {"f32": "x", "bf16": "f32_to_bf16(x)", "f16": "f32_to_f16(x)"}[o.dtype]
    return f"""
// ---- direct epilogue: masked stores from registers; D/C layout {o.layout}: ld = stride {o.ld} ----
__device__ __forceinline__ void store_tile(const float (&acc)[kMBlocks][kAccPerBlock], int t, int m0, int n0,
                                           {o.store_type}* __restrict__ d, long long ld, const Epi& ep) {{
  const int mt = m0 + acc_m_thread(t), nt = n0 + acc_n_thread(t);
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {{
#pragma unroll
    for (int v = 0; v < kAccPerBlock; ++v) {{
      const int m = mt + mb * kTvRows + acc_m_value(v), n = nt + acc_n_value(v);
      if (m < ep.M && n < ep.N) {{                          // ragged M/N edges
        const float x = apply(acc[mb][v], m, n, ep);
        d[{d_off}] = {to_out};
      }}
    }}
  }}
}}
"""


def _staged(e, index: str) -> str:
    """The smem byte address of value group ``index`` of a thread: its address for the first group XOR
    ``kStageXor[index]``. XOR on the address (``base``) equals XOR on the offset in the buffer only where the
    buffer's address has no bit of the XOR terms, and a staging buffer is only known to start on a multiple of
    ``SMEM_ALIGN`` (1024) bytes: so terms that reach bit 10 (f32 staging, whose value groups lie 8 rows = 1024 bytes
    apart) XOR the offset, then add the buffer.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> _staged(gemm_plan(GemmSpec(out_dtype="f32")).epi, "q"), _staged(gemm_plan(GemmSpec()).epi, "q")
    ('buf + (thread_off ^ kStageXor[q])', 'base ^ kStageXor[q]')
    """
    if _xor_on_address(e):
        return f"base ^ kStageXor[{index}]"
    return f"buf + (thread_off ^ kStageXor[{index}])"


def _xor_on_address(e) -> bool:
    """Whether the value terms stay below a staging buffer's known alignment, so they may XOR the address."""
    return max(e.stage_xor) < SMEM_ALIGN


def _st_shared_writes(p) -> tuple:
    """``(index, how, writes)`` of the f32 staging: the thread's element index line, the explanation, the loop."""
    e = p.epi
    cols = e.cols
    index = _line70(f"  const u32 x = {thread_index(cols)[1]};", "the thread's first element, row-major in the chunk") + "\n"
    rep = e.conflicts
    how = (f"// the writes (st.shared.v2.f32) are the C TV layout of a 64x{cols} GMMA atom, {e.access}:\n"
           f"// bank analysis (cute_py.arch.sm90.banks.bank_conflicts, 64-bit stores): max {rep.max_ways}-way,\n"
           f"// {sum(rep.wavefronts)} wavefronts for {len(rep.wavefronts)} warp stores "
           f"(ideal {sum(rep.ideal_wavefronts)}).\n"
           f"// The byte offset of (thread t, value v) is staging(t's row, t's column) XOR kStageXor[v]: the thread "
           f"and value\n// parts occupy disjoint bits, and the swizzle is linear over XOR (checked for every t and "
           f"v when emitting);\n// the XOR applies to the offset in the buffer, which starts on a multiple of "
           f"{SMEM_ALIGN} bytes only.")
    writes = f"""#pragma unroll
      for (int v = j * kEpiValues; v < (j + 1) * kEpiValues; v += 2) {{
        const int m = row0 + rt + acc_m_value(v), n = n0 + ct + acc_n_value(v);
        const float x0 = apply(acc[mb][v], m, n, ep), x1 = apply(acc[mb][v + 1], m, n + 1, ep);
        st_shared_v2_f32({_staged(e, "(v - j * kEpiValues) / 2")}, x0, x1);
      }}"""
    return index, how, writes


def _stsm_writes(p) -> tuple:
    """``(index, how, writes)`` of the 16-bit staging with stmatrix.x4: the lane's row lines, the explanation, the
    loop over a chunk's instructions."""
    e = p.epi
    cols = e.cols
    _, row, col = stsm_lane_index(cols)
    index = "\n".join([_line70(f"  const u32 row = {row};", "lane 8 m + r of warp w: row 16 w + r + 8 (m % 2),"),
                       _line70(f"  const u32 col = {col};", "column 8 (m / 2) in stmatrix instruction 0"),
                       _line70("  const u32 x = row * (u32)kEpiCols + col;", "the lane's row, row-major in the chunk")]) + "\n"
    rep = e.stsm_conflicts
    cvt = {"bf16": "f32_to_bf16", "f16": "f32_to_f16"}[p.out.dtype]
    how = (f"// the writes are stmatrix.x4, {cols // 16} per chunk: lane 8m + r addresses row r of 8x8 matrix m, "
           f"the 16-byte rows\n// {e.stsm} (thread, (element, instruction)) -> (row, column);\n"
           f"// bank analysis (cute_py.arch.sm90.banks.bank_conflicts, 128-bit rows): max {rep.max_ways}-way, "
           f"{sum(rep.wavefronts)} wavefronts for\n// {len(rep.wavefronts)} warp stores (ideal "
           f"{sum(rep.ideal_wavefronts)}); register i of a lane holds accumulator pair v + 2i, v = 8 q, as the C TV "
           f"layout\n// of the 64x{cols} GMMA atom {e.access} places it (checked when emitting).\n"
           f"// The lane's row address for instruction q is its address for q = 0 XOR kStageXor[q] (the swizzle is "
           f"linear over XOR).")
    writes = f"""#pragma unroll
      for (int q = 0; q < kEpiCols / 16; ++q) {{          // stmatrix.x4 stores 16 columns
        u32 r[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {{
          const int v = j * kEpiValues + 8 * q + 2 * i;
          const int m = row0 + rt + acc_m_value(v), n = n0 + ct + acc_n_value(v);
          r[i] = (u32){cvt}(apply(acc[mb][v], m, n, ep)) | ((u32){cvt}(apply(acc[mb][v + 1], m, n + 1, ep)) << 16);
        }}
        stmatrix_x4({_staged(e, "q")}, r[0], r[1], r[2], r[3]);
      }}"""
    return index, how, writes


def _epilogue_tma(p, coords: dict) -> str:
    e = p.epi
    cols, chunks, xors = e.cols, e.chunks, e.stage_xor
    _, sw_c = staging_swizzle(e)
    # t is the thread's index in the tile's C TV layout: cooperative warpgroup w holds rows [64 w, 64 w + 64)
    tw, slab = ("t - kWarpGroupThreads * w", "kSlabRows * w") if p.tile_warpgroups > 1 else ("t", "0")
    bits, base, shift = e.swizzle
    swizzled = _line70(f"  const u32 thread_off = {sw_c('x')};", f"Sw<{bits},{base},{shift}> of x, in bytes: the staging layout")
    index, how, writes = _st_shared_writes(p) if e.stsm is None else _stsm_writes(p)
    base = ", base = buf + thread_off" if _xor_on_address(e) else ""
    # a batch's D has the batch mode L as the tensor map's outer dimension: its coordinate l; groups along M store
    # through a ragged map (grouping.ragged_rows): v rows of the slab lie in the group (ep.M is the group's end)
    ragged = coords["m_end"] is not None
    l_param, l_coord = (", int l", ", l") if e.tma.rank == 3 and not ragged else ("", "")
    hint = "_evict_first" if coords["l"] else ""          # grouped and batched D: L2 evict-first (ptx.tma_3d)
    rows = "kSlabRows - live, row0 + live" if ragged else f"row0{l_coord}"
    slab_rows = (f"constexpr int kSlabRows = {e.rows};                  // a consumer warpgroup's rows of the tile\n"
                 if ragged or p.tile_warpgroups > 1 else "")
    store_call = f"tma_store_{e.tma.rank}d{hint}(tma_d, buf, n0 + j * kEpiCols, {rows})"
    ragged = ("\n    const int live = min(kSlabRows, ep.M - row0);        // the slab's rows inside the group"
              f"\n    if (live <= 0) continue;                             // all of them past it: nothing to store"
              if ragged else "")
    return f"""
// ---- TMA-store epilogue: each consumer warpgroup writes its 64-row slab in {chunks} chunks of 64 x {cols}
// into one of kEpiBuffers {e.buf_bytes}-byte staging buffers, and one thread stores the chunk with TMA; a buffer is
// reused once the store that read it is done (bulk wait_group.read), so stores overlap the next chunk,
// the next tile's mainloop and the producer's loads.
// staging layout {e.smem} (elements): {cols * e.elem_bytes}-byte rows under the {cols * e.elem_bytes} B swizzle;
{how}
// TMA store of D: box {e.tma.box_dim} over gmem modes {e.tma.gmem_modes}, swizzle {e.tma.swizzle}.
{slab_rows}constexpr int kEpiCols = {cols}, kEpiChunks = {chunks};     // a slab: kEpiChunks chunks of {e.rows} x kEpiCols
constexpr int kEpiValues = {e.per_chunk};           // a thread's accumulators of one chunk, per m-block
constexpr u32 kEpiBufBytes = {e.buf_bytes}u;
{commented(f"constexpr int kEpiBuffers = {e.buffers};", "staging buffers per consumer warpgroup", 40)}
constexpr u32 kStageXor[{len(xors)}] = {{{", ".join(map(str, xors))}}};
__device__ __forceinline__ void store_tile_tma(const float (&acc)[kMBlocks][kAccPerBlock], int t, int w, int m0,
                                               int n0, const TmaDesc* tma_d, u32 bufs, int& ebuf, const Epi& ep{l_param}) {{
  const int tw = {tw}, slab = {slab};   // thread within the warpgroup; the warpgroup's first row in the tile
  const int rt = acc_m_thread(t) - slab, ct = acc_n_thread(t);
{index}{swizzled}
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {{
    const int row0 = m0 + mb * kTvRows + slab;             // first D row of this warpgroup's slab{ragged}
#pragma unroll
    for (int j = 0; j < kEpiChunks; ++j) {{
      const u32 buf = bufs + ((u32)ebuf % kEpiBuffers) * kEpiBufBytes{base};
      if (tw == 0) bulk_wait_read<kEpiBuffers - 1>();     // the store that last used `buf` has read it
      named_bar_sync(kBarEpilogue + w, kWarpGroupThreads);
{writes}
      fence_proxy_async();                                 // generic-proxy writes -> visible to the TMA engine
      named_bar_sync(kBarEpilogue + w, kWarpGroupThreads);
      if (tw == 0) {{
        {store_call};
        bulk_commit();
      }}
      ++ebuf;
    }}
  }}
}}
"""
