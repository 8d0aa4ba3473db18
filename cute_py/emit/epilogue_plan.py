"""The TMA-store epilogue's facts, each checked against the layouts it comes from when it is derived.

Each consumer warpgroup writes its 64-row slab of the output tile in chunks of
``64 x cols`` elements (one 128-byte row per tile row) into swizzled shared
memory, and one thread stores a chunk with TMA. A thread's (or, for stmatrix,
a lane's) byte offset in a chunk is the staging swizzle of its first element's
index ``row * cols + col``; every other value it writes lies at that offset
XOR a constant (``stage_xor``): the thread and value parts occupy disjoint bits
and the swizzle is linear over XOR. Those constants, the index formulas the
kernel prints (:func:`staging_swizzle`, :func:`stsm_lane_index`,
:func:`thread_index`) and which accumulator lands where are checked against
the staging layout, the stmatrix rows and the tiled C TV layout for every
thread, value and instruction.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> e = gemm_plan(GemmSpec()).epi
>>> e.cols, e.chunks, e.per_chunk, e.stage_xor
(64, 2, 32, (0, 32, 64, 96))
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from ..arch.sm90 import TmaParams, make_tma_params, smem_atom, tile_smem
from ..arch.sm90.banks import bank_conflicts
from ..atoms import gmma
from ..layouts import Layout, int_tuple as it
from ..layouts.dtypes import dtype
from ..layouts.offsets import layout_offsets
from .checks import require
from .grouping import ragged_rows
from .resources import STAGING_BUFFERS, STAGING_ROW_BYTES as ROW_BYTES, STAGING_ROWS as SLAB_ROWS, staging_cols
from .spec import GemmSpec

__all__ = ["EpiloguePlan", "epilogue_plan", "stmatrix_rows", "staging_swizzle", "stsm_lane_index", "thread_index"]


@dataclass(frozen=True)
class EpiloguePlan:
    """The TMA-store epilogue: each consumer warpgroup stages ``64 x cols`` chunks of D in swizzled smem.

    ``smem`` is the staging chunk's layout ((row, col) -> element; 128-byte rows
    under the 128 B swizzle, the K-major canonical atom with N as "K"); ``access``
    is the GMMA C TV layout of a ``64 x cols`` atom, i.e. which (row, col) each
    thread writes, and ``conflicts`` the bank analysis of those 32-bit (64-bit
    for f32) stores against ``smem``; ``tma`` the TMA store parameters of D.
    ``chunks`` chunks cover a slab's ``BN`` columns, ``per_chunk`` accumulator
    values of a thread fall in each; ``stage_xor`` takes a thread's (lane's)
    offset to its other values' (value pair ``i`` of a chunk for st.shared,
    instruction ``q`` for stmatrix).

    For 16-bit D the kernel stores with ``stmatrix.x4`` instead: ``stsm`` maps
    (warpgroup thread, (element, instruction)) of the 16-byte rows whose addresses
    the lanes supply (lane ``8m + r``: row ``r`` of matrix ``m``) to staging
    coordinates, and ``stsm_conflicts`` is its bank analysis (128-bit rows); both
    None for f32.
    """

    smem: object
    cols: int
    rows: int
    buf_bytes: int
    access: Layout
    conflicts: object
    tma: TmaParams
    swizzle: tuple             # (bits, base, shift) of the staging swizzle, in elements
    elem_bytes: int
    chunks: int
    per_chunk: int
    stage_xor: tuple
    stsm: Layout | None = None
    stsm_conflicts: object = None
    buffers: int = STAGING_BUFFERS   # staging buffers per consumer warpgroup (GemmSpec.epi_buffers)


def staging_swizzle(e) -> tuple:
    """The staging swizzle ``Sw<bits,base,shift>`` of a chunk's element index ``x = row * cols + col``, in bytes:
    ``(py, c)`` with ``py(x)`` its value (ints or numpy arrays) and ``c(x_expr)`` the same as a C expression.
    The two stay side by side (the checks use ``py``, the kernel prints ``c``); :func:`cute_py.emit.cprint.to_c`
    cannot print it, since an XOR of shifted, masked bits is no sympy integer expression.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> py, c = staging_swizzle(gemm_plan(GemmSpec()).epi)
    >>> py(64 + 1), c("x")
    (146, '(x ^ ((x >> 3) & 56u)) * 2u')
    """
    bits, base, shift = e.swizzle
    mask, nbytes = ((1 << bits) - 1) << base, e.elem_bytes
    return (lambda x: (x ^ ((x >> shift) & mask)) * nbytes,
            lambda x: f"({x} ^ (({x} >> {shift}) & {mask}u)) * {nbytes}u")


def stsm_lane_index(cols: int) -> tuple:
    """``(py, row_c, col_c)``: the chunk element index ``row * cols + col`` of the 16-byte row lane ``tw`` of a
    warpgroup addresses in stmatrix instruction 0 (lane ``8 m + r`` of warp ``w``: row ``16 w + r + 8 (m % 2)``,
    column ``8 (m / 2)``), as a function of ``tw``, and the row and the column as the C expressions the kernel
    computes (``tw`` an int).

    >>> py, row, col = stsm_lane_index(64)
    >>> py(9), py(17), row, col                      # lane 9: row 9, column 0; lane 17: row 1, column 8
    (576, 72, '(u32)(16 * (tw >> 5) + (tw & 7) + 8 * ((tw >> 3) & 1))', '8u * (u32)((tw >> 4) & 1)')
    """
    def py(tw):
        return stsm_lane_row(tw) * cols + 8 * ((tw % 32) // 16)
    return py, "(u32)(16 * (tw >> 5) + (tw & 7) + 8 * ((tw >> 3) & 1))", "8u * (u32)((tw >> 4) & 1)"


def stsm_lane_row(tw):
    """The chunk row of lane ``tw``'s 16-byte row in stmatrix instruction 0 (see :func:`stsm_lane_index`)."""
    w, lane = tw // 32, tw % 32
    return 16 * w + lane % 8 + 8 * ((lane // 8) % 2)


def thread_index(cols: int) -> tuple:
    """``(py, c)``: the chunk element index of a thread's first value at row ``rt``, column ``ct`` of the chunk
    (st.shared epilogue), as a function and as the C expression the kernel computes.

    >>> thread_index(32)[1]
    '(u32)(rt * 32 + ct)'
    """
    return (lambda rt, ct: rt * cols + ct), f"(u32)(rt * {cols} + ct)"


@lru_cache(maxsize=64)
def epilogue_plan(spec: GemmSpec, c_tv: Layout, tv_rows: int) -> EpiloguePlan:
    """Staging layout, its bank analysis, the TMA store of D and the staged offsets for ``spec`` (epilogue "tma",
    row-major D) whose accumulators the tiled C TV layout ``c_tv`` places at ``m + tv_rows * n``."""
    t = spec.out_dtype
    nbytes = dtype(t).bits // 8
    cols, rows = staging_cols(spec.tile[1], nbytes), SLAB_ROWS
    require(cols is not None, "epilogue_plan", f"a staging chunk of {ROW_BYTES}, {ROW_BYTES // 2} or "
            f"{ROW_BYTES // 4}-byte rows divides the tile's BN = {spec.tile[1]} columns of {nbytes}-byte D")
    smem = tile_smem(smem_atom("K", cols * nbytes, t), rows, cols, major="K")
    _check_row_major(smem.inner, rows, cols)
    acc = gmma(cols, spec.acc_dtype, spec.dtype, spec.dtype).c_layout
    report = bank_conflicts(smem, acc, t, vector_bits=2 * nbytes * 8 if nbytes == 2 else 64)
    # groups along M store a group's last tile through a ragged map (rows past the group are outside it)
    tma = make_tma_params(ragged_rows(spec.c, rows) if spec.grouping == "m" else spec.c, smem, t)
    require(tma.box_dim[:2] == (cols, rows) and tma.gmem_modes[:2] == (1, 0) and tma.box_dim[2:] in ((), (1,)),
            "epilogue_plan", "the TMA store box is one staging chunk, (cols, rows) over gmem modes (N, M) (and "
            "extent 1 along a batch mode L)",
            box_dim=tma.box_dim, gmem_modes=tma.gmem_modes, chunk=(rows, cols))
    stsm = stsm_report = None
    if nbytes == 2:
        stsm = stmatrix_rows(rows, cols)
        stsm_report = bank_conflicts(smem, stsm, t, vector_bits=128)
    sw = smem.outer
    e = EpiloguePlan(smem, cols, rows, rows * cols * nbytes, acc, report, tma, (sw.bits, sw.base, sw.shift), nbytes,
                     spec.tile[1] // cols, cols // 2, (), stsm, stsm_report, spec.epi_buffers)
    table = layout_offsets(c_tv).reshape(it.product(c_tv.shape[1]), -1)        # [v, t]: c_tv(t, v)
    require(e.chunks * cols == spec.tile[1], "epilogue_plan", f"{e.chunks} chunks of {cols} columns cover the tile's "
            f"BN = {spec.tile[1]}")
    _check_chunks(e, table, tv_rows, c_tv)
    xors = _stsm_xor(e, table, tv_rows, c_tv) if stsm is not None else _staging_xor(e, table, tv_rows, c_tv)
    return replace(e, stage_xor=tuple(xors))


def _check_row_major(inner, rows: int, cols: int) -> None:
    """The staging chunk's inner layout is row-major: the kernel's element index is ``r * cols + c``."""
    import numpy as np

    require(it.product(inner.shape[0]) == rows, "epilogue_plan", f"the staging chunk has {rows} rows (mode 0)",
            inner=inner)
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    got = layout_offsets(inner).reshape(cols, rows).T                         # (r, c) is index r + rows * c
    require(got == r * cols + c, "epilogue_plan", "the staging chunk's inner layout is row-major (the emitted "
            "element index r * cols + c)", at=("r", "c"), values={"offset": got, "r * cols + c": r * cols + c},
            inner=inner)


def _check_chunks(e: EpiloguePlan, table, tv_rows: int, c_tv) -> None:
    """The values of chunk ``j`` are ``[j * per_chunk, (j + 1) * per_chunk)`` and come in ``(v, v + 1)`` pairs on
    adjacent columns of one row (thread 0's values; the others' are the same up to the thread's offset)."""
    import numpy as np

    x0 = table[:, 0]
    v = np.arange(len(x0))
    require(x0 // tv_rows // e.cols == v // e.per_chunk, "epilogue_plan", f"value v of a thread lies in chunk "
            f"v / {e.per_chunk} (columns [{e.cols} j, {e.cols} (j + 1)))", at=("v",), values={"c_tv(0, v)": x0},
            c_tv=c_tv)
    require(x0[1::2] == x0[0::2] + tv_rows, "epilogue_plan", "values v, v + 1 (v even) are adjacent columns of one "
            "row", at=("v / 2",), values={"c_tv(0, v)": x0[0::2], "c_tv(0, v + 1)": x0[1::2]}, c_tv=c_tv)


def _staging_bytes(e: EpiloguePlan):
    """``byte(r, c)``: the staging layout's byte offset of (row ``r``, column ``c``) of a chunk, on int arrays;
    the coordinates are checked to lie in the chunk (the layout's domain)."""
    import numpy as np

    table = layout_offsets(e.smem) * e.elem_bytes
    rows = len(table) // e.cols

    def byte(r, c):
        r, c = np.broadcast_arrays(r, c)
        require((0 <= r) & (r < rows) & (0 <= c) & (c < e.cols), "epilogue_plan", f"every staged element lies in "
                f"the {rows} x {e.cols} chunk", at=tuple(f"axis {k}" for k in range(r.ndim)),
                values={"row": r, "column": c}, staging=e.smem)
        return table[r + rows * c]
    return byte


def _stsm_xor(e: EpiloguePlan, table, tv_rows: int, c_tv) -> list:
    """Per stmatrix instruction ``q``, the XOR that takes a lane's row address in instruction 0 to its row in
    instruction ``q``.

    Checked: the lane addresses (:func:`stsm_lane_index`, swizzled by :func:`staging_swizzle`) agree with
    ``stsm`` and the staging layout for every lane and instruction, and register ``i`` of lane ``l`` in
    instruction ``q`` holds the accumulators the C TV layout puts at stmatrix's place for it: row ``l / 4``
    of matrix ``i``, columns ``2 (l % 4)``, ``+1``.
    """
    import numpy as np

    cols, per_q = e.cols, e.cols // 16
    sw, _ = staging_swizzle(e)
    index, _, _ = stsm_lane_index(cols)
    byte = _staging_bytes(e)
    stsm = layout_offsets(e.stsm).reshape(-1, 128)[::8]     # [q, tw]: the row lane tw addresses in instruction q
    row, col = stsm % SLAB_ROWS, stsm // SLAB_ROWS
    xors = [int(x) for x in byte(row[:, 0], col[:, 0]) ^ byte(row[0, 0], col[0, 0])]
    tw = np.arange(128)
    r = stsm_lane_row(tw)
    c = index(tw) - r * cols
    require((row[0] == r) & (col[0] == c), "epilogue_plan", "lane 8 m + r of warp w addresses row 16 w + r + "
            "8 (m % 2), column 8 (m / 2) in stmatrix instruction 0", at=("tw",),
            values={"row": row[0], "column": col[0]}, stsm=e.stsm)
    require(sw(index(tw)) == byte(r, c), "epilogue_plan", "the emitted lane address formula is the staging "
            "layout's byte offset", at=("tw",), values={"formula": sw(index(tw)), "staging": byte(r, c)},
            staging=e.smem)
    want = byte(r, c)[None, :] ^ np.array(xors)[:, None]
    require(byte(row, col) == want, "epilogue_plan", "stmatrix instruction q's row address is instruction 0's XOR "
            "kStageXor[q]", at=("q", "tw"), values={"address": byte(row, col), "XOR": want}, stsm=e.stsm,
            staging=e.smem)
    # register contents: the C TV layout's places; axes (t, j, q, i, dv)
    t = np.arange(table.shape[1]).reshape(-1, 1, 1, 1, 1)
    j = np.arange(table.shape[0] // e.per_chunk).reshape(-1, 1, 1, 1)
    q, i, dv = np.arange(per_q).reshape(-1, 1, 1), np.arange(4).reshape(-1, 1), np.arange(2)
    wq, lane = (t % 128) // 32, t % 32
    x = table[j * e.per_chunk + 8 * q + 2 * i + dv, t]
    want_r, want_c = 16 * wq + 8 * (i % 2) + lane // 4, 16 * q + 8 * (i // 2) + 2 * (lane % 4)
    got_r, got_c = (x % tv_rows) % SLAB_ROWS, x // tv_rows - j * cols
    require((got_r == want_r) & (got_c == want_c + dv), "epilogue_plan", "register i of lane l in stmatrix "
            "instruction q holds the accumulators the C TV layout places at row l / 4 of matrix i, columns "
            "2 (l % 4) (+1)", at=("t", "j", "q", "i", "dv"),
            values={"row": got_r, "want row": want_r, "column": got_c, "want column": want_c + dv}, c_tv=c_tv)
    return xors


def _staging_xor(e: EpiloguePlan, table, tv_rows: int, c_tv) -> list:
    """Per value pair ``i`` of a chunk, the XOR that takes a thread's staging byte offset (its value 0,
    :func:`thread_index` swizzled by :func:`staging_swizzle`) to the pair's.

    Both are checked for every consumer thread and value of every chunk against the staging layout itself,
    so the emitted ``thread_off ^ kStageXor[i]`` is exact.
    """
    import numpy as np

    m, n = table % tv_rows, table // tv_rows
    byte = _staging_bytes(e)
    sw, _ = staging_swizzle(e)
    index, _ = thread_index(e.cols)
    xors = [int(x) for x in byte(m[0:e.per_chunk:2, 0], n[0:e.per_chunk:2, 0])]
    rt, ct = m[0] % SLAB_ROWS, n[0]                          # each thread's value 0
    require(sw(index(rt, ct)) == byte(rt, ct), "epilogue_plan", "the emitted thread offset formula is the "
            "staging layout's byte offset of the thread's value 0", at=("t",),
            values={"formula": sw(index(rt, ct)), "staging": byte(rt, ct)}, staging=e.smem)
    v = np.arange(0, table.shape[0], 2)
    got = byte(m[v] % SLAB_ROWS, n[v] % e.cols)
    want = byte(rt, ct)[None, :] ^ np.array(xors)[(v % e.per_chunk) // 2][:, None]
    require(got == want, "epilogue_plan", "the byte offset of value pair v is the thread's offset XOR "
            "kStageXor[v / 2 % pairs per chunk]", at=("v / 2", "t"), values={"offset": got, "XOR": want},
            staging=e.smem, c_tv=c_tv)
    return xors


def stmatrix_rows(rows: int, cols: int) -> Layout:
    """Which 16-byte rows of a ``rows x cols`` 16-bit chunk (coordinates ``(r, c)``, index ``r + rows * c``) the
    lanes of a warpgroup address with ``stmatrix.x4``, one instruction per 16 columns.

    Warp ``w`` covers rows ``[16 w, 16 w + 16)``; lane ``8 m + r`` supplies row ``r`` of matrix ``m``, matrix
    ``m`` being rows ``+8 (m % 2)`` and columns ``+8 (m // 2)``; instruction ``q`` adds ``16 q`` columns.
    Modes: thread ``(r, m % 2, m // 2, w)``, value ``(element e, instruction q)``.

    >>> print(stmatrix_rows(64, 64))
    ((8,2,2,4),(8,4)):((1,8,512,16),(64,1024))
    >>> stmatrix_rows(32, 64)
    Traceback (most recent call last):
    ...
    ValueError: stmatrix_rows: a warpgroup's chunk has 64 rows and a multiple of 16 columns, got 32 x 64
    """
    if rows != SLAB_ROWS or not isinstance(cols, int) or cols <= 0 or cols % 16:
        raise ValueError(f"stmatrix_rows: a warpgroup's chunk has 64 rows and a multiple of 16 columns, "
                         f"got {rows} x {cols}")
    return Layout(((8, 2, 2, 4), (8, cols // 16)), ((1, 8, 8 * rows, 16), (rows, 16 * rows)))
