"""The epilogue snippets: the math of ``D = act(alpha * A @ B^T + beta * C + bias)``, where each accumulator
lands (the tiled GMMA C TV layout, split into row and column parts), and the two ways out: masked stores from
registers, or staging through swizzled shared memory (st.shared for f32, stmatrix for 16-bit D) and TMA
stores. Also the split-K reduction that runs before it.

Every offset printed here is checked when emitting against the layouts it came from (:mod:`cute_py.emit.checks`).

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> "stmatrix_x4(base ^ kStageXor[q]" in epilogue(gemm_plan(GemmSpec()))
True
"""

from __future__ import annotations

from ..layouts.tensor import layout_offsets
from .checks import require
from .plan import GemmPlan
from .spec import GemmSpec

__all__ = ["epilogue", "splitk_reduce", "formula", "tv_expr"]


def formula(s: GemmSpec) -> str:
    """The epilogue's formula in words, e.g. ``relu(alpha * A @ B^T + beta * C + bias[m])``."""
    x = ("alpha * " if s.alpha else "") + "A @ B^T"
    if s.beta:
        x += " + beta * C"
    if s.bias:
        x += " + bias[m]" if s.bias == "row" else " + bias[n]"
    return f"{s.activation}({x})" if s.activation else x


def tv_expr(terms, var: str, part: int) -> str:
    """C expression of the m (part 2) or n (part 3) contribution of ``terms`` (from :func:`split_tv`) for ``var``."""
    out = []
    for e, div, dm, dn in terms:
        d = (dm, dn)[part - 2]
        if not d:
            continue
        x = var if div == 1 else f"{var} / {div}"
        x = f"({x} % {e})" if div * e < 1 << 30 else f"({x})"
        out.append(x if d == 1 else f"{x} * {d}")
    return " + ".join(out) or "0"


def _epilogue_math(p: GemmPlan) -> str:
    """``apply(x, m, n)``: alpha, beta * C, bias and the activation on one accumulator (m, n inside D)."""
    s = p.spec
    out = s.out_dtype
    st = s.c.stride
    c_off = "(long long)m * ldc + n" if st[1] == 1 else "m + (long long)n * ldc"
    from_out = {"f32": "{}", "bf16": "bf16_to_f32({})", "f16": "f16_to_f32({})"}[out]
    steps = []
    if s.alpha:
        steps.append("x *= ep.alpha;")
    if s.beta:
        steps.append(f"if (m < ep.M && n < ep.N) x += ep.beta * {from_out.format('ep.c[' + c_off.replace('ldc', 'ep.ldc') + ']')};")
    if s.bias:
        idx, lim = ("m", "M") if s.bias == "row" else ("n", "N")
        steps.append(f"if ({idx} < ep.{lim}) x += {from_out.format('ep.bias[' + idx + ']')};"
                     f"   // bias per {'row m (length M)' if s.bias == 'row' else 'column n (length N)'}")
    if s.activation == "relu":
        steps.append("x = fmaxf(x, 0.0f);")
    elif s.activation == "gelu":
        steps.append("x = 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));   // GELU, erf form")
    store_t = "float" if out == "f32" else "u16"
    body = "\n".join("  " + x for x in steps)
    return f"""
// ---- epilogue math: D = {formula(s)} ----
struct Epi {{
  const {store_t}* __restrict__ c; const {store_t}* __restrict__ bias; long long ldc; float alpha, beta; int M, N;
}};
__device__ __forceinline__ float apply(float x, int m, int n, const Epi& ep) {{
{body}
  return x;
}}
"""


def _acc_placement(p: GemmPlan) -> str:
    rows = p.tv_rows
    tm, tn = tv_expr(p.thread_terms, "t", 2), tv_expr(p.thread_terms, "t", 3)
    vm, vn = tv_expr(p.value_terms, "v", 2), tv_expr(p.value_terms, "v", 3)
    return f"""
// ---- accumulator placement from the tiled GMMA C TV layout ----
// tiled MMA ({p.spec.tile_warpgroups},1,1) of {p.atom.name}: get_layoutC_TV = {p.c_tv}
// maps (tile thread t, value v) to m + {rows} * n; split mode by mode into row and column parts
// (each stride d gives d % {rows} to m and d / {rows} to n; checked against the layout for every t, v).
// m-block mb of a consumer adds mb * {rows} rows.
__device__ __forceinline__ int acc_m_thread(int t) {{ return {tm}; }}
__device__ __forceinline__ int acc_n_thread(int t) {{ return {tn}; }}
__device__ __forceinline__ int acc_m_value(int v) {{ return {vm}; }}
__device__ __forceinline__ int acc_n_value(int v) {{ return {vn}; }}
"""


def epilogue(p: GemmPlan) -> str:
    """The epilogue: math, then the TMA-store path (staged in swizzled smem) or masked direct stores."""
    return _epilogue_math(p) + _acc_placement(p) + (_epilogue_tma(p) if p.epi else _epilogue_direct(p))


def _epilogue_direct(p: GemmPlan) -> str:
    s = p.spec
    out = s.out_dtype
    st = s.c.stride
    ld_sym = [x for x in st if x != 1][0]
    d_off = "(long long)m * ld + n" if st[1] == 1 else "m + (long long)n * ld"
    store_t = "float" if out == "f32" else "u16"
    to_out = {"f32": "x", "bf16": "f32_to_bf16(x)", "f16": "f32_to_f16(x)"}[out]
    return f"""
// ---- direct epilogue: masked stores from registers; D/C layout {s.c}: ld = stride {ld_sym} ----
__device__ __forceinline__ void store_tile(const float (&acc)[kMBlocks][kAccPerBlock], int t, int m0, int n0,
                                           {store_t}* __restrict__ d, long long ld, const Epi& ep) {{
  const int mt = m0 + acc_m_thread(t), nt = n0 + acc_n_thread(t);
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {{
#pragma unroll
    for (int v = 0; v < kAccPerBlock; ++v) {{
      const int m = mt + mb * {p.tv_rows} + acc_m_value(v), n = nt + acc_n_value(v);
      if (m < ep.M && n < ep.N) {{                          // ragged M/N edges
        const float x = apply(acc[mb][v], m, n, ep);
        d[{d_off}] = {to_out};
      }}
    }}
  }}
}}
"""


def _epilogue_tma(p: GemmPlan) -> str:
    import numpy as np

    s, e = p.spec, p.epi
    out = s.out_dtype
    cols = e.cols
    per_chunk = cols // 2             # values per thread in a 64 x cols chunk (cols/8 groups of 4)
    chunks = s.tile[1] // cols
    # the values of chunk j are [j*per_chunk, (j+1)*per_chunk) and come in (v, v+1) pairs on adjacent columns
    x0 = _tv_table(p)[:, 0]                     # thread 0's values
    v = np.arange(len(x0))
    require(x0 // p.tv_rows // cols == v // per_chunk, "epilogue", f"value v of a thread lies in chunk v / {per_chunk} "
            f"(columns [{cols} j, {cols} (j + 1)))", at=("v",), values={"c_tv(0, v)": x0}, c_tv=p.c_tv)
    require(x0[1::2] == x0[0::2] + p.tv_rows, "epilogue", "values v, v + 1 (v even) are adjacent columns of one row",
            at=("v / 2",), values={"c_tv(0, v)": x0[0::2], "c_tv(0, v + 1)": x0[1::2]}, c_tv=p.c_tv)
    # t is the thread's index in the tile's C TV layout: cooperative warpgroup w holds rows [64 w, 64 w + 64)
    tw, slab = ("t - 128 * w", "64 * w") if s.tile_warpgroups > 1 else ("t", "0")
    if out == "f32":
        staging_expr, xors = _staging_offsets(p)
        rep = e.conflicts
        how = (f"// the writes (st.shared.v2.f32) are the C TV layout of a 64x{cols} GMMA atom, {e.access}:\n"
               f"// bank analysis (cute_py.viz.bank_conflicts, 64-bit stores): max {rep.max_ways}-way,\n"
               f"// {sum(rep.wavefronts)} wavefronts for {len(rep.wavefronts)} warp stores "
               f"(ideal {sum(rep.ideal_wavefronts)}).\n"
               f"// The byte offset of (thread t, value v) is staging(t's row, t's column) XOR kStageXor[v]: the thread "
               f"and value\n// parts occupy disjoint bits, and the swizzle is linear over XOR (checked for every t and "
               f"v when emitting).")
        writes = f"""#pragma unroll
      for (int v = j * {per_chunk}; v < (j + 1) * {per_chunk}; v += 2) {{
        const int m = row0 + rt + acc_m_value(v), n = n0 + ct + acc_n_value(v);
        const float x0 = apply(acc[mb][v], m, n, ep), x1 = apply(acc[mb][v + 1], m, n + 1, ep);
        st_shared_v2_f32(base ^ kStageXor[(v - j * {per_chunk}) / 2], x0, x1);
      }}"""
    else:
        staging_expr, xors = _stsm_offsets(p)
        rep = e.stsm_conflicts
        cvt = {"bf16": "f32_to_bf16", "f16": "f32_to_f16"}[out]
        how = (f"// the writes are stmatrix.x4, {cols // 16} per chunk: lane 8m + r addresses row r of 8x8 matrix m, "
               f"the 16-byte rows\n// {e.stsm} (thread, (element, instruction)) -> (row, column);\n"
               f"// bank analysis (cute_py.viz.bank_conflicts, 128-bit rows): max {rep.max_ways}-way, "
               f"{sum(rep.wavefronts)} wavefronts for\n// {len(rep.wavefronts)} warp stores (ideal "
               f"{sum(rep.ideal_wavefronts)}); register i of a lane holds accumulator pair v + 2i, v = 8 q, as the C TV "
               f"layout\n// of the 64x{cols} GMMA atom {e.access} places it (checked when emitting).\n"
               f"// The lane's row address for instruction q is its address for q = 0 XOR kStageXor[q] (the swizzle is "
               f"linear over XOR).")
        writes = f"""#pragma unroll
      for (int q = 0; q < {cols // 16}; ++q) {{
        u32 r[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {{
          const int v = j * {per_chunk} + 8 * q + 2 * i;
          const int m = row0 + rt + acc_m_value(v), n = n0 + ct + acc_n_value(v);
          r[i] = (u32){cvt}(apply(acc[mb][v], m, n, ep)) | ((u32){cvt}(apply(acc[mb][v + 1], m, n + 1, ep)) << 16);
        }}
        stmatrix_x4(base ^ kStageXor[q], r[0], r[1], r[2], r[3]);
      }}"""
    return f"""
// ---- TMA-store epilogue: each consumer warpgroup writes its 64-row slab in {chunks} chunks of 64 x {cols}
// into one of two {e.buf_bytes}-byte staging buffers, and one thread stores the chunk with TMA; a buffer is
// reused once the store that read it is done (bulk wait_group.read 1), so stores overlap the next chunk,
// the next tile's mainloop and the producer's loads.
// staging layout {e.smem} (elements): 128-byte rows under the 128 B swizzle;
{how}
// TMA store of D: box {e.tma.box_dim} over gmem modes {e.tma.gmem_modes}, swizzle {e.tma.swizzle}.
constexpr u32 kEpiBufBytes = {e.buf_bytes}u;
constexpr u32 kStageXor[{len(xors)}] = {{{", ".join(map(str, xors))}}};
__device__ __forceinline__ void store_tile_tma(const float (&acc)[kMBlocks][kAccPerBlock], int t, int w, int m0,
                                               int n0, const TmaDesc* tma_d, u32 bufs, int& ebuf, const Epi& ep) {{
  const int tw = {tw}, slab = {slab};   // thread within the warpgroup; the warpgroup's first row in the tile
  const int rt = acc_m_thread(t) - slab, ct = acc_n_thread(t);
  const u32 thread_off = {staging_expr};
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb) {{
    const int row0 = m0 + mb * {p.tv_rows} + slab;         // first D row of this warpgroup's slab
#pragma unroll
    for (int j = 0; j < {chunks}; ++j) {{
      const u32 buf = bufs + (ebuf & 1) * kEpiBufBytes, base = buf + thread_off;
      if (tw == 0) bulk_wait_read<1>();                   // the store issued two chunks ago has read `buf`
      named_bar_sync(1 + w, 128);
{writes}
      fence_proxy_async();                                 // generic-proxy writes -> visible to the TMA engine
      named_bar_sync(1 + w, 128);
      if (tw == 0) {{
        tma_store_2d(tma_d, buf, n0 + j * {cols}, row0);
        bulk_commit();
      }}
      ++ebuf;
    }}
  }}
}}
"""


def _tv_table(p: GemmPlan):
    """``c_tv(t, v)`` for every tile thread ``t`` and value ``v``, as an int64 array indexed ``[v, t]``."""
    return layout_offsets(p.c_tv).reshape(p.atom.regs["c"], -1)


def _staging_bytes(e):
    """``byte(r, c)``: the staging layout's byte offset of (row ``r``, column ``c``) of a chunk, on int arrays;
    the coordinates are checked to lie in the chunk (the layout's domain)."""
    import numpy as np

    table = layout_offsets(e.smem) * (128 // e.cols)
    rows = len(table) // e.cols

    def byte(r, c):
        r, c = np.broadcast_arrays(r, c)
        require((0 <= r) & (r < rows) & (0 <= c) & (c < e.cols), "epilogue", f"every staged element lies in the "
                f"{rows} x {e.cols} chunk", at=tuple(f"axis {k}" for k in range(r.ndim)), values={"row": r, "column": c},
                staging=e.smem)
        return table[r + rows * c]
    return byte


def _stsm_offsets(p: GemmPlan) -> tuple:
    """``(lane_expr, xors)`` of the stmatrix epilogue: the C expression of a lane's row address in a chunk (for
    instruction 0, in bytes; ``tw`` is the thread within the warpgroup) and, per instruction ``q``, the XOR that
    takes it to instruction ``q``'s row.

    Checked when emitting: the addresses agree with ``EpiloguePlan.stsm`` and the staging layout for every
    lane and instruction, and register ``i`` of lane ``l`` in instruction ``q`` holds the accumulators the
    C TV layout puts at stmatrix's place for it: row ``l / 4`` of matrix ``i``, columns ``2 (l % 4)``, ``+1``.
    """
    import numpy as np

    e = p.epi
    cols, rows = e.cols, p.tv_rows
    per_chunk, per_q = cols // 2, cols // 16
    sw, sw_c = _swizzle_bytes(e)
    byte = _staging_bytes(e)
    stsm = layout_offsets(e.stsm).reshape(-1, 128)[::8]     # [q, tw]: the row lane tw addresses in instruction q
    row, col = stsm % 64, stsm // 64
    xors = [int(x) for x in byte(row[:, 0], col[:, 0]) ^ byte(row[0, 0], col[0, 0])]
    tw = np.arange(128)
    wq, lane = tw // 32, tw % 32
    m = lane // 8
    r, c = 16 * wq + lane % 8 + 8 * (m % 2), 8 * (m // 2)
    require((row[0] == r) & (col[0] == c), "_stsm_offsets", "lane 8 m + r of warp w addresses row 16 w + r + "
            "8 (m % 2), column 8 (m / 2) in instruction 0", at=("tw",), values={"row": row[0], "column": col[0]},
            stsm=e.stsm)
    require(sw(r * cols + c) == byte(r, c), "_stsm_offsets", "the emitted lane address formula is the staging "
            "layout's byte offset", at=("tw",), values={"formula": sw(r * cols + c), "staging": byte(r, c)},
            staging=e.smem)
    want = byte(r, c)[None, :] ^ np.array(xors)[:, None]
    require(byte(row, col) == want, "_stsm_offsets", "instruction q's row address is instruction 0's XOR "
            "kStageXor[q]", at=("q", "tw"), values={"address": byte(row, col), "XOR": want}, stsm=e.stsm,
            staging=e.smem)
    # register contents: the C TV layout's places; axes (t, j, q, i, dv)
    t = np.arange(128 * p.spec.tile_warpgroups).reshape(-1, 1, 1, 1, 1)
    j = np.arange(p.atom.regs["c"] // per_chunk).reshape(-1, 1, 1, 1)
    q, i, dv = np.arange(per_q).reshape(-1, 1, 1), np.arange(4).reshape(-1, 1), np.arange(2)
    wq, lane = (t % 128) // 32, t % 32
    x = _tv_table(p)[j * per_chunk + 8 * q + 2 * i + dv, t]
    want_r, want_c = 16 * wq + 8 * (i % 2) + lane // 4, 16 * q + 8 * (i // 2) + 2 * (lane % 4)
    got_r, got_c = (x % rows) % 64, x // rows - j * cols
    require((got_r == want_r) & (got_c == want_c + dv), "_stsm_offsets", "register i of lane l in instruction q "
            "holds the accumulators the C TV layout places at row l / 4 of matrix i, columns 2 (l % 4) (+1)",
            at=("t", "j", "q", "i", "dv"), values={"row": got_r, "want row": want_r, "column": got_c,
                                                   "want column": want_c + dv}, c_tv=p.c_tv)
    return sw_c(f"((u32)(16 * (tw >> 5) + (tw & 7) + 8 * ((tw >> 3) & 1)) * {cols}u + 8u * (u32)((tw >> 4) & 1))"), xors


def _staging_offsets(p: GemmPlan) -> tuple:
    """``(thread_expr, xors)``: the C expression of a thread's staging byte offset (``Sw<B,M,S>`` of
    ``rt * cols + ct``, times the element bytes) and, per value pair of a chunk, the XOR that takes it to the
    value's offset.

    Both are checked for every consumer thread and value of every chunk against the staging layout itself,
    so the emitted ``thread_off ^ kStageXor[i]`` is exact.
    """
    import numpy as np

    e = p.epi
    per_chunk = e.cols // 2
    rows = p.tv_rows
    table = _tv_table(p)                                     # [v, t]
    m, n = table % rows, table // rows
    byte = _staging_bytes(e)
    sw, sw_c = _swizzle_bytes(e)
    xors = [int(x) for x in byte(m[0:per_chunk:2, 0], n[0:per_chunk:2, 0])]
    rt, ct = m[0] % 64, n[0]                                 # each thread's value 0
    require(sw(rt * e.cols + ct) == byte(rt, ct), "_staging_offsets", "the emitted thread offset formula is the "
            "staging layout's byte offset of the thread's value 0", at=("t",),
            values={"formula": sw(rt * e.cols + ct), "staging": byte(rt, ct)}, staging=e.smem)
    v = np.arange(0, p.atom.regs["c"], 2)
    got = byte(m[v] % 64, n[v] % e.cols)
    want = byte(rt, ct)[None, :] ^ np.array(xors)[(v % per_chunk) // 2][:, None]
    require(got == want, "_staging_offsets", "the byte offset of value pair v is the thread's offset XOR "
            "kStageXor[v / 2 % pairs per chunk]", at=("v / 2", "t"), values={"offset": got, "XOR": want},
            staging=e.smem, c_tv=p.c_tv)
    return sw_c(f"((u32)(rt * {e.cols} + ct))"), xors


def _swizzle_bytes(e) -> tuple:
    """The staging swizzle ``Sw<bits,base,shift>`` of a chunk's element index ``x = row * cols + col``, in bytes:
    ``(py, c)`` with ``py(x)`` its value and ``c(x_expr)`` the same as a C expression (the rows are 128 bytes,
    so the element is ``128 // cols`` bytes).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> py, c = _swizzle_bytes(gemm_plan(GemmSpec()).epi)
    >>> py(64 + 1), c("x")
    (146, '(x ^ ((x >> 3) & 56u)) * 2u')
    """
    bits, base, shift = e.swizzle
    mask, nbytes = ((1 << bits) - 1) << base, 128 // e.cols
    return (lambda x: (x ^ ((x >> shift) & mask)) * nbytes,
            lambda x: f"({x} ^ (({x} >> {shift}) & {mask}u)) * {nbytes}u")


def splitk_reduce(p: GemmPlan) -> str:
    """Split-K: every split stores its partial tile in its own f32 workspace slot; the last to arrive adds the rest."""
    if p.spec.split_k == 1:
        return ""
    ct = 128 * p.spec.consumers
    return f"""
// ---- split-K reduction: slot (split, tile) of the workspace holds one partial tile as
// [value/4][consumer thread][4] f32 (coalesced 16-byte stores). Each split stores its slot, then counts itself
// in on the tile's counter (acq_rel, after a gpu-scope fence); the split that arrives last adds the other
// slots to its accumulators, resets the counter to zero for the next call and runs the epilogue. ----
constexpr int kConsumerThreads = {ct};
constexpr int kTileFloats = kMBlocks * kAccPerBlock * kConsumerThreads;
__device__ __forceinline__ long long slot_index(int mb, int v, int t) {{
  return (long long)(((mb * kAccPerBlock + v) / 4) * kConsumerThreads + t) * 4;
}}
__device__ __forceinline__ bool splitk_reduce(float (&acc)[kMBlocks][kAccPerBlock], int t, float* ws, int* counters,
                                              int tile, int split, int tiles, volatile int* flag) {{
  float* mine = ws + ((long long)split * tiles + tile) * kTileFloats;
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int v = 0; v < kAccPerBlock; v += 4)
      st_v4(mine + slot_index(mb, v, t), acc[mb][v], acc[mb][v + 1], acc[mb][v + 2], acc[mb][v + 3]);
  fence_gpu();
  named_bar_sync(3, kConsumerThreads);
  if (t == 0) *flag = atom_add_acq_rel(counters + tile, 1);
  named_bar_sync(3, kConsumerThreads);
  if (*flag != kSplitK - 1) return false;
  fence_gpu();
  for (int s = 0; s < kSplitK; ++s) {{
    if (s == split) continue;
    const float* other = ws + ((long long)s * tiles + tile) * kTileFloats;
#pragma unroll
    for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
      for (int v = 0; v < kAccPerBlock; v += 4) {{
        float x0, x1, x2, x3;
        ld_v4_gpu(other + slot_index(mb, v, t), x0, x1, x2, x3);
        acc[mb][v] += x0; acc[mb][v + 1] += x1; acc[mb][v + 2] += x2; acc[mb][v + 3] += x3;
      }}
  }}
  if (t == 0) st_relaxed_s32(counters + tile, 0);
  return true;
}}
"""
