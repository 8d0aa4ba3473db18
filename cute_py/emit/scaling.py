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

__all__ = ["FP8_DTYPES", "SCALES", "SCALE_BLOCK", "PROMOTE_REGS", "PROMOTE_CHUNKS", "scale_problems", "promote_chunk"]

FP8_DTYPES = ("e4m3", "e5m2")
"""Input types of the scaled GEMM (``cute_py.scaled_gemm``): OCP fp8, read by wgmma K-major only."""
SCALES = (None, "tensor", "row", "block")
"""How an fp8 GEMM's scales apply: one per tensor, one per row of A and column of B, or DeepSeek-style blocks
(A: 1 x 128 along K, B: 128 x 128)."""
SCALE_BLOCK = 128
"""The extent of a scale block along K (and along N for B): the K tile of a blockwise kernel."""
PROMOTE_REGS = {1: 192, 2: 128}
"""At most this many f32 accumulator registers per consumer thread when the mainloop promotes
(:attr:`~cute_py.emit.spec.GemmSpec.promotes`), by consumer warpgroups: the accumulators and one column chunk of the K tile's
sums. Measured with ptxas (CUDA 13): one consumer warpgroup (256 threads) holds 128 + 64 without a spill; two
(384 threads) spilled 648 bytes with 128 + 64 and hold 64 + 64."""
PROMOTE_CHUNKS = (128, 64, 32)
"""Column chunk widths a promoting mainloop tries, widest first (:func:`promote_chunk`): narrower
chunks read more smem per MAC (a 64-column fp8 wgmma reads as many bytes as the tensor core consumes)."""


def promote_chunk(spec) -> int | None:
    """The column chunk of ``spec``'s promoting mainloop: the widest of :data:`PROMOTE_CHUNKS` that divides BN
    (and, with blockwise scales, the 128-column scale block) and whose sums fit beside the accumulators
    (:data:`PROMOTE_REGS`); a tile narrower than the narrowest chunk is one chunk (a decode tile of 8-24
    columns); None when none does (or the spec does not promote).

    >>> from cute_py.emit import GemmSpec
    >>> promote_chunk(GemmSpec(dtype="e4m3", scale="block", tile=(64, 256, 128), consumers=1))
    128
    >>> promote_chunk(GemmSpec(dtype="e4m3", scale="row", tile=(64, 8, 128), consumers=1))
    8
    """
    if not spec.promotes or not isinstance(spec.tile, tuple) or len(spec.tile) != 3:
        return None
    bm, bn, _ = spec.tile
    c = spec.tile_warpgroups
    acc = bm * bn // (128 * c)
    for n in PROMOTE_CHUNKS + ((bn,) if isinstance(bn, int) and 0 < bn < PROMOTE_CHUNKS[-1] else ()):
        fits = acc + (bm // (64 * c)) * n // 2 <= PROMOTE_REGS.get(spec.consumers, 0)
        if bn % n == 0 and fits and (spec.scale != "block" or SCALE_BLOCK % n == 0):
            return n
    return None


def scale_problems(spec) -> list:
    """Why ``spec`` (a GemmSpec) breaks the fp8 rules ([]: it keeps them): a scale mode exactly for fp8 inputs,
    both operands K-major (fp8 wgmma reads only K-major smem), and when the mainloop promotes, K tiles of one
    scale block and a column chunk of sums that fits beside the accumulators."""
    fp8 = spec.dtype in FP8_DTYPES
    if spec.scale not in SCALES:
        return [f"scale = {spec.scale!r} not in {SCALES}"]
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
        if spec.promote_chunk() is None:
            c = spec.tile_warpgroups
            acc = bm * bn // (128 * c)
            out.append(f"{why} keeps the accumulators ({acc} per consumer thread) and one column chunk of the "
                       f"K tile's sums ({PROMOTE_CHUNKS} columns, or BN itself below {PROMOTE_CHUNKS[-1]}; dividing "
                       f"BN = {bn}"
                       + (f" and the {SCALE_BLOCK}-column scale block" if spec.scale == "block" else "")
                       + f"): none fits in {PROMOTE_REGS.get(spec.consumers)} registers"
                       + ("; or set fast_accum = True" if spec.scale != "block" else ""))
    return out
