"""Operands read without TMA: the producer warpgroup loads them into the same swizzled stage tile.

TMA needs a 16-byte aligned base and leading dimension. An operand that has
neither (an odd K of a row-major ``a``) can be staged (:mod:`cute_py.emit.stage_copy`)
or, with ``GemmSpec(load_a=V)`` / ``load_b=V``, read by the kernel itself: the
128 threads of the producer warpgroup copy each stage tile in loads of ``V``
bytes (the widest the operand's alignment allows; ``cp.async`` for 4, 8 and 16
bytes, with a zero-filling source size past the edges; ``ld.global`` and
``st.shared`` for 1 and 2 bytes), to the byte offsets of the stage tile's smem
layout (its swizzle included), so the wgmma descriptors and the consumers are
those of the TMA kernel. Element ``(mn, k)`` of a stage goes to

    ``swizzle(inner(mn, k)) * element bytes``

with ``inner`` and the swizzle the :class:`~cute_py.emit.plan.OperandPlan`'s
``smem`` (a ComposedLayout); the offset expression is printed from that layout.

Completion: a thread's copies of stage ``s`` are waited for (``cp.async.wait_group``),
made visible to the async proxy the wgmma reads through (``fence.proxy.async``),
and announced with an arrival on stage ``s``'s full barrier, which counts
the 128 producer threads and the TMA issue's arrive-with-bytes. With
``cp.async`` the arrival for stage ``s`` comes after stage ``s + 1``'s copies
were issued, so a thread always has one stage of copies in flight.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> text = direct_load(gemm_plan(GemmSpec(load_a=4, tile=(128, 128, 64))).a)
>>> "cp_async_4(" in text and "k % 64 + 64 * (mn % 8) + 512 * (mn / 8)" in text
True
"""

from __future__ import annotations

from .cprint import to_c
from .resources import WARPGROUP_THREADS
from .scaling import FP8_DTYPES

__all__ = ["LOAD_BYTES", "load_problems", "direct_load", "load_wrappers", "lag"]

LOAD_BYTES = (0, 1, 2, 4, 8, 16)
"""Bytes per load of an operand read without TMA (``GemmSpec.load_a`` / ``load_b``); 0: TMA."""


def load_problems(spec) -> list:
    """Why ``spec``'s direct loads cannot be emitted ([] if they can, or if it has none). Precondition: the
    fields have their types (:class:`~cute_py.emit.GemmSpec`'s constructor checks them first).

    >>> from cute_py.emit import GemmSpec, SpecError
    >>> try:
    ...     GemmSpec(load_a=3, load_b=1, tile=(128, 128, 64))     # the constructor asks load_problems
    ... except SpecError as e:
    ...     print(e.problems)
    ['load_a = 3 not in (0, 1, 2, 4, 8, 16)', 'load_b = 1: smaller than one bf16 element (2 B)']
    """
    out = []
    e = 1 if spec.dtype in FP8_DTYPES else 2
    for name, v, mn in (("load_a", spec.load_a, spec.tile[0]), ("load_b", spec.load_b, spec.tile[1])):
        if v not in LOAD_BYTES:
            out.append(f"{name} = {v!r} not in {LOAD_BYTES}")
            continue
        if not v:
            continue
        if v < e:
            out.append(f"{name} = {v}: smaller than one {spec.dtype} element ({e} B)")
        if (mn * spec.tile[2] * e) % (v * WARPGROUP_THREADS):
            out.append(f"{name} = {v}: a {mn}x{spec.tile[2]} stage tile is not a whole number of {v}-byte loads per "
                       f"producer thread ({WARPGROUP_THREADS})")
    if max(spec.load_a, spec.load_b) >= 4 and spec.resolved_stages() < 3:     # the fields' types are checked
        out.append(f"stages = {spec.resolved_stages()}: cp.async loads keep a stage in flight, which needs at "
                   f"least 3 (a stage is announced after the next one was issued)")
    return out


def lag(p) -> int:
    """Stages a producer thread keeps in flight before announcing one: 1 with ``cp.async``, 0 with synchronous
    loads (1 and 2 bytes)."""
    return int(any(op.load >= 4 for op in (p.a, p.b)))


def load_wrappers() -> str:
    """``cp.async`` of 4, 8 and 16 bytes with a source size (0: zero-fill, nothing read), its group commit and
    wait, and the synchronous 1- and 2-byte copies."""
    return r"""// ---- loads without TMA (cute_py.emit.loads): cp.async with a source size (0: the bytes are zero-filled) ----
template <int N> __device__ __forceinline__ void cp_async(u32 dst, const void* src, bool in) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" :: "r"(dst), "l"(src), "n"(N), "r"(in ? N : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_4(u32 dst, const void* src, bool in) { cp_async<4>(dst, src, in); }
__device__ __forceinline__ void cp_async_8(u32 dst, const void* src, bool in) { cp_async<8>(dst, src, in); }
__device__ __forceinline__ void cp_async_16(u32 dst, const void* src, bool in) { cp_async<16>(dst, src, in); }
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
__device__ __forceinline__ void copy_2(u32 dst, const void* src, bool in) {
  u16 v = 0;
  if (in) asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(v) : "l"(src));
  asm volatile("st.shared.u16 [%0], %1;" :: "r"(dst), "h"(v) : "memory");
}
__device__ __forceinline__ void copy_1(u32 dst, const void* src, bool in) {
  u16 v = 0;
  if (in) asm volatile("ld.global.nc.u8 %0, [%1];" : "=h"(v) : "l"(src));
  asm volatile("st.shared.u8 [%0], %1;" :: "r"(dst), "h"(v) : "memory");
}
"""


def direct_load(op, k_lower: bool = False) -> str:
    """``load_tile_<X>``: the producer thread ``t``'s loads of operand ``op``'s stage tile (an
    :class:`~cute_py.emit.plan.OperandPlan` whose ``load`` is non-zero) from gmem ``g`` (leading dimension ``ld``
    elements) at tile origin ``(mn0, k0)``, masked at ``(mn_end, k_end)``; with ``k_lower`` also below ``k_lo``
    (groups along K, whose K tiles end at a group's end and start before it: their first rows load zeros)."""
    from ..layouts.symbolic import indices

    v, e = op.load, op.tma.dtype.bits // 8
    mn_ext, k_ext = op.block
    inner, sw = getattr(op.smem, "inner", op.smem), getattr(op.smem, "outer", None)
    mn, k = indices("mn k")
    lin = to_c(inner((mn, k)))
    if sw is not None and sw.bits:
        mask = ((1 << sw.bits) - 1) << (sw.base + sw.shift)
        swz = f"(lin ^ ((lin & {mask}u) >> {sw.shift}))"
        sw_text = f"swizzle {sw} (XOR of bits [{sw.base + sw.shift}, {sw.base + sw.shift + sw.bits}) into [{sw.base}, {sw.base + sw.bits}))"
    else:
        swz, sw_text = "lin", "no swizzle"
    contiguous = k_ext if op.major == "K" else mn_ext
    per_vec = v // e
    vecs_row = contiguous // per_vec
    loads = mn_ext * k_ext // per_vec // WARPGROUP_THREADS
    rc = ("const int mn = r, k = c;", "(long long)gmn * ld + gk") if op.major == "K" else \
        ("const int mn = c, k = r;", "(long long)gk * ld + gmn")
    copy = f"cp_async_{v}" if v >= 4 else f"copy_{v}"
    x = op.which
    return f"""
// ---- {x} without TMA: the {WARPGROUP_THREADS} producer threads copy a {mn_ext}x{k_ext} stage tile ({op.major}-major: rows of
//      {contiguous} contiguous elements) in {v}-byte loads, {loads} per thread, to the smem layout the wgmma
//      descriptor reads: element (mn, k) -> {inner}, then {sw_text}, x {e} B ----
__device__ __forceinline__ void load_tile_{x}(u32 dst0, const u8* __restrict__ g, long long ld, int mn0, int k0,
                                         int mn_end, {"int k_lo, " if k_lower else ""}int k_end, int t) {{
#pragma unroll 4
  for (int j = 0; j < {loads}; ++j) {{
    const int i = t + j * kWarpGroupThreads, r = i / {vecs_row}, c = (i % {vecs_row}) * {per_vec};
    {rc[0]}
    const u32 lin = {lin};
    const int gmn = mn0 + mn, gk = k0 + k;
    const bool in = gmn < mn_end && {"gk >= k_lo && " if k_lower else ""}gk < k_end;         // a load lies wholly inside or outside (alignment {v} B)
    {copy}(dst0 + {swz} * {e}u, in ? (const void*)(g + ({rc[1]}) * {e}) : (const void*)g, in);
  }}
}}
"""
