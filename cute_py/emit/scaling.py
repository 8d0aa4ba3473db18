"""FP8 scaling in a GemmSpec: the scale modes, the promotion's register budget, and the rules a spec keeps.

An fp8 GEMM (e4m3 or e5m2 inputs) scales its product: one f32 per tensor, one per row of A and column of B, or
DeepSeek-V3's blocks (1 x 128 of A along K, 128 x 128 of B). With blockwise scales, and with per-tensor or
row-wise scales unless ``fast_accum`` is set, the mainloop *promotes*: the tensor core sums each 128-wide K tile
into a second accumulator set, which is then (scaled and) added into the f32 accumulators
(:mod:`cute_py.emit.blockscale`). :func:`scale_problems` is the spec's check of these rules (its constructor
asks it); :func:`promote_chunk` the column chunk that the second set holds.

>>> from cute_py.emit import GemmSpec, SpecError
>>> try:
...     GemmSpec(dtype="e4m3", scale="tensor", b="(N,K):(1,N)")
... except SpecError as e:
...     print(e.problems[0][:31])
B is MN-major: Hopper fp8 wgmma
"""

from __future__ import annotations

from math import gcd

from ..layouts.int_tuple import round_up

__all__ = ["FP8_DTYPES", "SCALES", "SCALE_TYPES", "scale_ctype", "scale_tma_type", "scale_read", "scale_source",
           "UE8M0_TO_F32", "whole_tile_promotes", "SCALE_BLOCK", "PROMOTE_REGS", "PROMOTE_CHUNKS", "scale_problems",
           "promote_chunk", "scale_blocks_per_tile", "promote_regs", "PROMOTE_CHUNK_REGS", "chunk_straddles",
           "scale_stage_bytes", "SCALE_SLOT_ALIGN", "SCALE_BYTES", "TMA_BYTES_ALIGN", "TMA_BOX_MAX", "scale_blocks",
           "reads_scale_a", "gathered_ld", "scale_a_map", "scale_a_pad"]

FP8_DTYPES = ("e4m3", "e5m2")
"""Input types of the scaled GEMM (``cute_py.scaled_gemm``): OCP fp8, read by wgmma K-major only."""
SCALES = (None, "tensor", "row", "block")
"""How an fp8 GEMM's scales apply: one per tensor, one per row of A and column of B, or DeepSeek-style blocks
(A: 1 x 128 along K, B: 128 x 128)."""
SCALE_TYPES = ("f32", "ue8m0")
"""Element types of the scales: f32, or UE8M0 (OCP ``float8_e8m0fnu``: one byte, the exponent of a power of two,
``2^(e - 127)``) as DeepSeek-V3.1 and later checkpoints store blockwise scales; row-wise and blockwise modes."""
UE8M0_TO_F32 = """// ---- UE8M0 scales: byte e is 2^(e - 127) (e = 0: 2^-127, a denormal; e = 255: NaN) ----
__device__ __forceinline__ float ue8m0_to_f32(u8 e) {
  return e == 0 ? __uint_as_float(0x00400000u) : e == 255 ? __uint_as_float(0x7fc00000u) : __uint_as_float((u32)e << 23);
}
"""
"""The device function a kernel with UE8M0 scales reads them through (:func:`scale_read`)."""


def scale_ctype(spec) -> str:
    """The C element type of ``spec``'s scale arrays: ``float``, or ``u8`` for UE8M0."""
    return "u8" if spec.scale_type == "ue8m0" else "float"


def scale_source(spec) -> tuple:
    """``(C element type, device code)`` of ``spec``'s scale arrays: ``float`` and nothing, or ``u8`` and
    :data:`UE8M0_TO_F32`, which the scale reads (:func:`scale_read`) call."""
    return scale_ctype(spec), UE8M0_TO_F32 if spec.scale_type == "ue8m0" else ""


def scale_tma_type(spec) -> str:
    """The element type a tensor map reads ``spec``'s scales as: ``f32``, or ``u8`` for UE8M0 bytes.

    >>> from cute_py.emit import GemmSpec
    >>> scale_tma_type(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128), scale_type="ue8m0"))
    'u8'
    """
    return "u8" if spec.scale_type == "ue8m0" else "f32"


def scale_read(spec, expr: str) -> str:
    """The C expression of the f32 value of the scale element ``expr`` (an lvalue of :func:`scale_ctype`).

    >>> from cute_py.emit import GemmSpec
    >>> scale_read(GemmSpec(dtype="e4m3", scale="row", scale_type="ue8m0"), "sb[n]")
    'ue8m0_to_f32(sb[n])'
    """
    return f"ue8m0_to_f32({expr})" if spec.scale_type == "ue8m0" else expr


SCALE_BLOCK = 128
"""The extent of a scale block along K (and along N for B): the K tile of a blockwise kernel."""
SCALE_SLOT_ALIGN = 128
"""Alignment (bytes) of a stage's scale slot in shared memory, where a TMA box of scale_a lands."""
TMA_BOX_MAX = 256
"""The most elements a TMA box spans in one dimension."""
TMA_BYTES_ALIGN = 16
"""TMA's alignment (bytes) of a tensor's base address, of its strides past the innermost and of a box's innermost
start coordinate."""
SCALE_BYTES = {"f32": 4, "ue8m0": 1}
"""Bytes per scale element, by scale type."""
PROMOTE_REGS = {1: 192, 2: 160}
"""At most this many f32 registers per consumer thread for the accumulators and the K tile's sums when the mainloop
promotes (:attr:`~cute_py.emit.spec.GemmSpec.promotes`) the whole tile at once, by consumer warpgroups; blockwise
scales over two scale blocks count 8 more (both blocks' scale products and the next K tile's scales; 24 for UE8M0:
:func:`promote_regs`), and only for the specs :func:`whole_tile_promotes` names. Measured with ptxas (CUDA 13,
benchmarks/NOTES.md version 13): with two consumer warpgroups (384 threads) ptxas allocates the consumers' code
near the kernel's entry count of 168 registers whatever ``setmaxnreg.inc`` grants (232 here; 200-240 give the
same code): 128 x 160 per-tensor and row-wise (80 + 80) and 128 x 144 blockwise (72 + 72 + 8)
hold without a spill; 128 x 176 (88 + 88) spills 280 bytes, 128 x 160 blockwise (80 + 80 + 8) 240. One consumer
warpgroup holds 64 x 192 per-tensor (96 + 96) and 64 x 160 blockwise (80 + 80 + 8)."""
PROMOTE_CHUNK_REGS = {1: 192, 2: 128}
"""The same bound when the K tile is summed in column chunks (the accumulators and one chunk of sums), measured
with ptxas (CUDA 13): one consumer warpgroup holds 128 + 64; two hold 96 + 32 and 64 + 64, and spill 56-648 bytes
with 128 + 32 or 128 + 64."""
PROMOTE_CHUNKS = (128, 64, 32)
"""Column chunk widths a promoting mainloop tries after the whole tile, widest first (:func:`promote_chunk`):
narrower chunks read more smem per MAC (a 64-column fp8 wgmma reads as many bytes as the tensor core consumes)."""


def scale_blocks_per_tile(bn: int) -> int:
    """How many 128-column blocks of ``scale_b`` a tile of ``bn`` columns can touch: its first column is a
    multiple of ``bn``, so its offset in a block is a multiple of ``g = gcd(bn, 128)``, at most ``128 - g``.

    >>> [scale_blocks_per_tile(bn) for bn in (64, 128, 144, 160, 176, 192, 256)]
    [1, 1, 2, 2, 3, 2, 2]
    """
    g = gcd(bn, SCALE_BLOCK)
    return -(-(SCALE_BLOCK - g + bn) // SCALE_BLOCK)


def promote_chunk(spec) -> int | None:
    """The column chunk of ``spec``'s promoting mainloop: the whole tile (BN) when the spec is cooperative,
    without stream-K or a cluster (:func:`whole_tile_promotes`), and its sums fit beside the accumulators
    (:data:`PROMOTE_REGS`); else the widest of :data:`PROMOTE_CHUNKS` that divides BN and fits
    (:data:`PROMOTE_CHUNK_REGS`; a tile narrower than the narrowest chunk is one chunk); None when none does (or
    the spec does not promote). With blockwise scales a chunk lies in one 128-column scale block (it divides
    128), or is the whole tile touching at most two (:func:`scale_blocks_per_tile`), whose columns then pick
    their block's scale (:mod:`cute_py.emit.blockscale`): 128-row tiles of 48, 80, 96, 112 or 144 columns, and
    with one consumer warpgroup 160 too; not 176, which touches three.

    >>> from cute_py.emit import GemmSpec
    >>> promote_chunk(GemmSpec(dtype="e4m3", scale="block", tile=(64, 256, 128), consumers=1))
    128
    >>> promote_chunk(GemmSpec(dtype="e4m3", scale="block", tile=(128, 144, 128)))      # over two scale blocks
    144
    >>> promote_chunk(GemmSpec(dtype="e4m3", scale="row", tile=(64, 8, 128), consumers=1, epilogue="direct"))
    8
    """
    if not spec.promotes or not isinstance(spec.tile, tuple) or len(spec.tile) != 3:
        return None
    bm, bn, _ = spec.tile
    if not isinstance(bn, int) or bn <= 0:
        return None
    whole = whole_tile_promotes(spec)
    narrow = (bn,) if bn < PROMOTE_CHUNKS[-1] else ()
    for n in ((bn,) if whole else ()) + PROMOTE_CHUNKS + narrow:
        in_blocks = SCALE_BLOCK % n == 0 or (whole and n == bn and scale_blocks_per_tile(bn) <= 2)
        if bn % n == 0 and (spec.scale != "block" or in_blocks) and promote_regs(spec, n) <= (
                PROMOTE_REGS if whole and n == bn else PROMOTE_CHUNK_REGS).get(spec.consumers, 0):
            return n
    return None


def whole_tile_promotes(spec) -> bool:
    """Whether ``spec``'s tile may be promoted whole under :data:`PROMOTE_REGS`: the cooperative schedule without
    stream-K or a cluster. Measured with ptxas (CUDA 13) over whole-tile promotions of 64-192 columns in every
    scale mode: the ping-pong schedule spilled 40-240 bytes, stream-K 32-168, a 2-CTA cluster 8-16; split-K,
    groups along M and the direct epilogue none. The others promote in :data:`PROMOTE_CHUNKS` as before."""
    return (spec.schedule == "cooperative" and tuple(spec.cluster) == (1, 1)
            and not str(spec.scheduler or "").startswith("stream_k"))


def promote_regs(spec, n: int) -> int:
    """The registers per consumer thread that :data:`PROMOTE_REGS` and :data:`PROMOTE_CHUNK_REGS` bound for
    ``spec``'s promotion in chunks of ``n`` columns: the accumulators, one chunk of sums, and 8 for blockwise
    scales over two blocks (24 for UE8M0 scales, which are converted there: 128 x 144 spills 24 bytes with them).

    >>> from cute_py.emit import GemmSpec
    >>> promote_regs(GemmSpec(dtype="e4m3", scale="block", tile=(128, 160, 128)), 160)
    168
    """
    bm, bn, _ = spec.tile
    c = spec.tile_warpgroups
    extra = (24 if spec.scale_type == "ue8m0" else 8) if chunk_straddles(spec, n) else 0
    return bm * bn // (128 * c) + (bm // (64 * c)) * n // 2 + extra


def chunk_straddles(spec, n: int) -> bool:
    """Whether ``spec``'s blockwise promotion in chunks of ``n`` columns takes its scales from two 128-column
    blocks per chunk: the chunk is the whole tile and its width does not divide 128 (a tile starting inside a
    block; :func:`promote_chunk` allows it only where the tile touches at most two).

    >>> from cute_py.emit import GemmSpec
    >>> s = GemmSpec(dtype="e4m3", scale="block", tile=(128, 144, 128))
    >>> chunk_straddles(s, 144), chunk_straddles(s.replace(tile=(128, 128, 128)), 128)
    (True, False)
    """
    return spec.scale == "block" and n == spec.tile[1] and SCALE_BLOCK % n != 0


def scale_problems(spec) -> list:
    """Why ``spec`` (a GemmSpec) breaks the fp8 rules ([]: it keeps them): a scale mode exactly for fp8 inputs,
    both operands K-major (fp8 wgmma reads only K-major smem), and when the mainloop promotes, K tiles of one
    scale block and a column chunk of sums that fits beside the accumulators."""
    fp8 = spec.dtype in FP8_DTYPES
    if spec.scale not in SCALES:
        return [f"scale = {spec.scale!r} not in {SCALES}"]
    if spec.scale_type not in SCALE_TYPES:
        return [f"scale_type = {spec.scale_type!r} not in {SCALE_TYPES}"]
    if spec.scale_type == "ue8m0" and spec.scale not in ("row", "block"):
        return [f"scale_type = 'ue8m0' applies to row-wise and blockwise scales (scale = 'row' or 'block'), "
                f"not scale = {spec.scale!r}"]
    if fp8 and spec.scale is None:
        return [f"dtype = {spec.dtype!r} needs a scale mode (scale = 'tensor', 'row' or 'block')"]
    if not fp8:
        out = [f"scale = {spec.scale!r} applies to fp8 inputs {FP8_DTYPES}, not dtype = {spec.dtype!r}"
               ] if spec.scale else []
        return out + (["fast_accum = True applies to fp8 inputs only"] if spec.fast_accum is True else [])
    out = [f"{which} is {major}-major: Hopper fp8 wgmma reads both operands K-major from shared memory "
           f"(store {which} with K contiguous: {'a (M, K) row-major' if which == 'A' else 'b = w.t() of a row-major w (N, K)'})"
           for which, major in (("A", spec.a_major), ("B", spec.b_major)) if major == "MN"]
    if spec.scale == "block" and spec.fast_accum is True:
        out.append("scale = 'block' always promotes each K tile (fast_accum = True applies to 'tensor' and 'row')")
    if spec.promotes and isinstance(spec.tile, tuple) and len(spec.tile) == 3:
        bm, bn, bk = spec.tile
        why = "scale = 'block'" if spec.scale == "block" else f"scale = {spec.scale!r} without fast_accum"
        if bk != SCALE_BLOCK:
            out.append(f"{why} promotes per K tile of {SCALE_BLOCK} (one scale block): BK must be {SCALE_BLOCK}, "
                       f"got BK = {bk}")
        pad = scale_a_pad(spec) if isinstance(bm, int) else 0
        if pad and bm + pad > TMA_BOX_MAX:
            out.append(f"scale = 'block' with groups along M reads a tile's scale_a in one TMA box of BM + {pad} rows "
                       f"(starting on a 16-byte boundary before a group's first row), at most {TMA_BOX_MAX}: BM = {bm} "
                       f"is too tall; use BM <= {TMA_BOX_MAX - pad}")
        if spec.promote_chunk() is None:
            c = spec.tile_warpgroups
            acc = bm * bn // (128 * c)
            if whole_tile_promotes(spec):
                need = promote_regs(spec, bn)
                whole = (f"the whole tile needs {need} registers per consumer thread"
                         + (f" (its sums and {need - 2 * acc} for the scales of two blocks)" if need > 2 * acc else "")
                         + f" of {PROMOTE_REGS.get(spec.consumers)}"
                         + (f", and touches {scale_blocks_per_tile(bn)} scale blocks (at most 2)"
                            if spec.scale == "block" and scale_blocks_per_tile(bn) > 2 else ""))
            else:
                whole = ("the whole tile is promoted at once only with the cooperative schedule, without stream-K "
                         "or a cluster")
            out.append(f"{why} keeps the accumulators ({acc} per consumer thread) and one column chunk of the "
                       f"K tile's sums: {whole}; no chunk of {PROMOTE_CHUNKS} columns divides BN = {bn}"
                       + (f" and the {SCALE_BLOCK}-column scale block" if spec.scale == "block" else "")
                       + f" and fits in {PROMOTE_CHUNK_REGS.get(spec.consumers)}"
                       + ("; or set fast_accum = True" if spec.scale != "block" else ""))
    return out


def scale_stage_bytes(spec) -> int:
    """Shared memory per ring stage outside the ring: a blockwise spec's scale slot, the tile's BM ``scale_a``
    values of the stage's K block and the :func:`scale_a_pad` rows before them (TMA lands them; the slot rounded up
    to 128 bytes, each slot's alignment), 0 for other specs.

    >>> from cute_py.emit import GemmSpec
    >>> scale_stage_bytes(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))
    512
    """
    if spec.scale != "block":
        return 0
    rows = spec.tile[0] + scale_a_pad(spec)
    return -(-rows * SCALE_BYTES[spec.scale_type] // SCALE_SLOT_ALIGN) * SCALE_SLOT_ALIGN


def scale_a_pad(spec) -> int:
    """Rows a blockwise spec's scale_a box reads before a tile's first: TMA starts a box's innermost (M) coordinate on
    a 16-byte boundary, so where a tile may start on any row (groups along M: a group's first row is any offset),
    the box starts at the row rounded down to 16 bytes and holds that many more; 0 where tiles start on multiples of
    BM.

    >>> from cute_py.emit import GemmSpec
    >>> scale_a_pad(GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128), a="(M,K):(K,1)", b="(N,K,L):(K,1,ldb_l)"))
    4
    """
    if spec.scale != "block" or spec.grouping != "m":
        return 0
    return TMA_BYTES_ALIGN // SCALE_BYTES[spec.scale_type]


# ---------------------------------------------------------------------------
# how a blockwise kernel reads scale_a
#
# The producer lands each K tile's scale_a values in the stage's scale slot with one TMA box
# (:mod:`cute_py.emit.blockscale`), through a tensor map over the M-major layout ``(M, KB):(1, sa_k)`` (a batch:
# ``(M, KB, L):(1, sa_k, sa_l)``; KB = ceil(K / 128)). TMA reads a scale_a that is M-major with a 16-byte aligned
# base and K-block (and batch) strides that are positive multiples of 16 bytes, as PyTorch's blockwise kernels and
# DeepGEMM want it. Any other scale_a (K-major; a compact f32 one whose M is not a multiple of 4; a broadcast) is
# gathered before the launch, on the GEMM's stream, into a buffer of that layout: rows padded to 16 bytes,
# matrices stacked (:func:`cute_py.emit.stage_copy.emit_scale_gather`).


def scale_blocks(K: int) -> int:
    """KB: scale_a's columns, one per 128-wide block of K.

    >>> scale_blocks(512), scale_blocks(513)
    (4, 5)
    """
    return -(-K // SCALE_BLOCK)


def reads_scale_a(M: int, K: int, strides: tuple, sa_l: int, groups: int, batch: bool, scale_type: str) -> bool:
    """Whether a tensor map can read ``scale_a`` with element strides ``strides = (sa_m, sa_k)`` (and a batch's
    ``sa_l``) as it is, as far as its layout says (its base address must also be 16-byte aligned): M-major (or one
    row), and the strides between K blocks and between matrices positive multiples of 16 bytes where there is more
    than one (a broadcast scale_a, stride 0, is gathered).

    >>> reads_scale_a(1000, 512, (1, 1000), 0, 1, False, "f32"), reads_scale_a(1001, 512, (1, 1001), 0, 1, False, "f32")
    (True, False)
    """
    e, kb = SCALE_BYTES[scale_type], scale_blocks(K)
    sa_m, sa_k = strides

    def tma_stride(x):                       # TMA's byte strides past the innermost: positive, 16-byte multiples
        return x > 0 and x * e % TMA_BYTES_ALIGN == 0
    return (sa_m == 1 or M <= 1) and (kb <= 1 or tma_stride(sa_k)) and (not batch or groups <= 1 or tma_stride(sa_l))


def gathered_ld(M: int, scale_type: str) -> int:
    """The K-block stride (elements) of a gathered scale_a: M rounded up to 16 bytes.

    >>> gathered_ld(1001, "f32"), gathered_ld(1001, "ue8m0")
    (1004, 1008)
    """
    return round_up(max(M, 1), TMA_BYTES_ALIGN // SCALE_BYTES[scale_type])


def scale_a_map(M: int, K: int, strides: tuple, sa_l: int, groups: int, batch: bool, scale_type: str,
                direct: bool) -> tuple:
    """``(shape, strides)`` in elements of the layout the kernel's tensor map reads scale_a through: the caller's
    own (``direct``) or the gathered copy's. Extents are at least 1 (a tensor map's are positive: K = 0 reads
    nothing); the stride of a mode of extent 1 is never followed, so it is given a value TMA accepts.

    >>> scale_a_map(M=1000, K=512, strides=(4, 1), sa_l=0, groups=1, batch=False, scale_type="f32", direct=False)
    ((1000, 4), (1, 1000))
    """
    kb, ld = max(scale_blocks(K), 1), gathered_ld(M, scale_type)
    sa_k = strides[1] if direct and kb > 1 else ld
    shape, stride = (max(M, 1), kb), (1, sa_k)
    if batch:
        sa_l_map = sa_l if direct and groups > 1 else sa_k * kb
        shape, stride = shape + (max(groups, 1),), stride + (sa_l_map,)
    return shape, stride
