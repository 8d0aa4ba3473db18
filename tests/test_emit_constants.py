"""The emitted source prints exactly the constants cute_py.arch.sm90 derives (descriptors, TMA boxes, TV layout)."""

from __future__ import annotations

import itertools
import re

import pytest

from cute_py.arch.sm90 import make_gmma_desc, make_tma_params, select_smem_atom, stage_bytes, tile_smem
from cute_py.atoms import gmma, make_tiled_mma
from cute_py.emit import GemmSpec, SpecError, emit_gemm, gemm_plan
from cute_py.layouts import Layout

A = {"K": "(M,K):(K,1)", "MN": "(M,K):(1,M)"}
B = {"K": "(N,K):(K,1)", "MN": "(N,K):(1,N)"}
SPECS = [GemmSpec(a=A[am], b=B[bm], tile=t, consumers=c)
         for am, bm in itertools.product(("K", "MN"), repeat=2)
         for t, c in (((128, 128, 64), 2), ((128, 256, 64), 2), ((128, 128, 64), 1), ((64, 128, 32), 1))]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_descriptors_and_boxes_match_sm90(spec):
    src = emit_gemm(spec)
    bm, bn, bk = spec.tile
    for which, major, mn, mma_mn in (("A", spec.a_major, bm, 64), ("B", spec.b_major, bn, bn)):
        smem = tile_smem(select_smem_atom(major, "bf16", mn, bk), mn, bk, major=major)
        desc = make_gmma_desc(smem, "bf16", major, mma_mn=mma_mn)
        assert f"constexpr u64 kDesc{which} = 0x{desc.value:016x}ull;" in src
        gm = Layout((4096, 4096), (4096, 1) if major == "K" else (1, 4096))
        tma = make_tma_params(gm, smem, "bf16")
        assert f"TmaParams box {tma.box_dim}" in src
        plan = getattr(gemm_plan(spec), which.lower())
        assert plan.bytes == stage_bytes(smem, "bf16")
        assert len(re.findall(rf"tma_load_2d\(stage \+ kOff{which}", src)) == tma.copies_per_tile
        for j in range(bk // 16):                          # every k-slice increment is printed
            if which == "B":
                assert f"db + {desc.offset(0, j)}ull" in src
            elif spec.consumers == 1:
                assert f"da + {desc.offset(0, j)}ull" in src
            else:
                assert f"(w == 0 ? {desc.offset(0, j)}ull : {desc.offset(1, j)}ull)" in src
    p = gemm_plan(spec)
    assert f"constexpr u32 kTxBytes = {(bm + bn) * bk * 2}u;" in src
    assert "__launch_bounds__(kThreads, 1)" in src and f"// {128 * (1 + spec.consumers)}: the producer and" in src
    tiled = make_tiled_mma(gmma(bn, "f32", "bf16", "bf16", a_major=spec.a_major, b_major=spec.b_major),
                           (spec.consumers, 1, 1))
    assert str(tiled.get_layoutC_TV()) in src and p.c_tv == tiled.get_layoutC_TV()


@pytest.mark.parametrize("spec", SPECS[:4], ids=lambda s: s.name)
def test_epilogue_expressions_reproduce_the_tv_layout(spec):
    """Evaluate the emitted acc_m/acc_n C expressions in Python and compare with the C TV layout for every (t, v)."""
    src = emit_gemm(spec)
    fns = {}
    for name in ("acc_m_thread", "acc_n_thread", "acc_m_value", "acc_n_value"):
        m = re.search(rf"int {name}\(int (\w)\) {{ return (.*?); }}", src)
        var, expr = m.group(1), m.group(2).replace("/", "//")
        fns[name] = eval(f"lambda {var}: {expr}")                 # noqa: S307 - our own integer expression
    p = gemm_plan(spec)
    rows = p.tv_rows
    for t in range(0, 128 * spec.consumers, 7):
        for v in range(p.atom.regs["c"]):
            m = fns["acc_m_thread"](t) + fns["acc_m_value"](v)
            n = fns["acc_n_thread"](t) + fns["acc_n_value"](v)
            assert m + rows * n == p.c_tv(t, v)


@pytest.mark.parametrize("cluster", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("major", ["K", "MN"])
def test_tma_copies_cover_the_tile(major, cluster):
    """The TMA issues of all cluster ranks together, applied to the box, tile the stage exactly once; each issue's
    smem offset is where the smem layout keeps its first element (MN-major: 2 issues; multicast: half boxes)."""
    spec = GemmSpec(a=A[major], b=B[major], tile=(128, 256, 64), cluster=cluster)
    for op in (gemm_plan(spec).a, gemm_plan(spec).b):
        seen = []
        assert len(op.copies) == op.tma.multicast
        for rank_copies in op.copies:
            for byte_off, off in rank_copies:
                first = [0, 0]
                first[op.tma.gmem_modes[0]], first[op.tma.gmem_modes[1]] = off
                assert op.smem(*first) * 2 == byte_off
                for i in range(op.tma.box_dim[0]):
                    for j in range(op.tma.box_dim[1]):
                        c = [0, 0]
                        c[op.tma.gmem_modes[0]] += off[0] + i
                        c[op.tma.gmem_modes[1]] += off[1] + j
                        seen.append(tuple(c))
        assert sorted(seen) == sorted((x, y) for x in range(op.block[0]) for y in range(op.block[1]))


def test_source_is_header_free_and_commented():
    src = emit_gemm(GemmSpec(beta=True, bias="row", activation="gelu", out_dtype="f32"))
    assert "#include" not in src
    assert "get_layoutC_TV" in src and "TmaParams box" in src and "GmmaDescriptor(" in src
    assert "erff" in src and "ep.beta * ep.c[" in src and "ep.bias[m]" in src


@pytest.mark.parametrize("out", ["bf16", "f16", "f32"])
def test_epilogue_staging_from_the_bank_analysis(out):
    """The TMA epilogue stages D chunks in the 128 B-swizzled K-major atom: the accumulator writes (the C TV layout
    of a 64-wide GMMA atom) are conflict-free for 16-bit D, where a plain row-major chunk is 8-way conflicted."""
    from cute_py.viz.banks import bank_conflicts
    spec = GemmSpec(tile=(128, 256, 64), out_dtype=out)
    e = gemm_plan(spec).epi
    assert e.tma.box_dim == (e.cols, 64) and e.cols * (4 if out == "f32" else 2) == 128
    bits = 64 if out == "f32" else 32
    plain = bank_conflicts(Layout((64, e.cols), (e.cols, 1)), e.access, out, vector_bits=bits)
    if out == "f32":
        assert e.conflicts.max_ways < plain.max_ways
    else:
        assert e.conflicts.conflict_free and plain.max_ways == 8
    src = emit_gemm(spec)
    assert "kStageXor" in src
    if out == "f32":                         # 64-bit stores of the accumulator pairs
        # the value terms reach bit 10 (rows 8 apart, 1024 B): they XOR the offset in a 1024-aligned buffer
        assert e.stsm is None and max(e.stage_xor) >= 1024 and "stmatrix_x4(b" not in src
        assert "st_shared_v2_f32(buf + (thread_off ^ kStageXor[(v - j * kEpiValues) / 2])" in src
        assert f"max {e.conflicts.max_ways}-way" in src
    else:                                    # stmatrix.x4: each lane addresses one 16-byte row
        assert e.stsm_conflicts.conflict_free and len(e.stsm_conflicts.wavefronts) == 16
        assert bank_conflicts(Layout((64, e.cols), (e.cols, 1)), e.stsm, out, vector_bits=128).max_ways == 8
        assert "stmatrix_x4(base ^ kStageXor[q]" in src and "st.shared.b32" not in src
        assert f"max {e.stsm_conflicts.max_ways}-way" in src


@pytest.mark.parametrize("bn,out,cols,swizzle", [(160, "bf16", 32, 64), (144, "bf16", 16, 32), (96, "f16", 32, 64),
                                                 (160, "f32", 32, 128), (144, "f32", 16, 64), (256, "bf16", 64, 128)])
def test_staging_chunks_cover_any_tile_width(bn, out, cols, swizzle):
    """The staging chunk is the widest of 128-, 64- and 32-byte rows whose width divides BN, under the swizzle of its
    row width, and the chunks cover the tile (before, a 160-wide tile staged two 64-column chunks and never wrote
    its last 32 columns)."""
    e = gemm_plan(GemmSpec(tile=(128, bn, 64), out_dtype=out)).epi
    assert (e.cols, e.chunks * e.cols, e.tma.box_dim[:2]) == (cols, bn, (cols, 64))
    assert e.tma.swizzle == f"{swizzle}B" and e.buf_bytes == 64 * cols * (4 if out == "f32" else 2)
    assert f"kEpiCols = {cols}, kEpiChunks = {bn // cols}" in emit_gemm(GemmSpec(tile=(128, bn, 64), out_dtype=out))


def test_tma_epilogue_refused_where_no_staging_chunk_divides_the_tile():
    with pytest.raises(SpecError, match="none divides BN = 8 columns of bf16; use epilogue = 'direct'"):
        GemmSpec(tile=(64, 8, 64), consumers=1)
    assert GemmSpec(tile=(64, 8, 64), consumers=1, epilogue="direct").epilogue_smem_bytes() == 1024


def test_direct_epilogue_for_column_major_d():
    spec = GemmSpec(c="(M,N):(1,M)")
    assert spec.epilogue == "direct" and gemm_plan(spec).epi is None
    assert "tma_store_2d(" not in emit_gemm(spec).split("// ---- entry point")[1]


@pytest.mark.parametrize("fields", [dict(out_dtype="f32"), dict(out_dtype="f32", tile=(128, 128, 64)),
                                    dict(out_dtype="f32", tile=(64, 64, 64), consumers=1),
                                    dict(out_dtype="f32", tile=(128, 96, 64)), dict(), dict(out_dtype="f16")])
def test_staged_addresses_hold_on_any_1024_byte_aligned_buffer(fields):
    """A staging buffer is only known to start on a multiple of 1024 bytes (the ring's alignment; what follows
    depends on the stage count and the static shared memory). The address the kernel computes for a thread's value
    group q must be the buffer plus the staging offset whatever the buffer's bit 10 and above: XOR on the address
    is that only when the XOR terms stay below 1024 (f32 terms reach 1024: value groups 8 rows apart)."""
    from cute_py.emit.epilogue_plan import staging_swizzle, stsm_lane_index, thread_index
    spec = GemmSpec(**fields)
    p, src = gemm_plan(spec), emit_gemm(spec)
    e = p.epi
    py, _ = staging_swizzle(e)
    on_offset = "buf + (thread_off ^ kStageXor[" in src          # else the kernel XORs the address: base ^ ...
    assert on_offset != ("(base ^ kStageXor[" in src)

    def at(expr, t):
        return int(expr.subs({s: t for s in expr.free_symbols}))
    if e.stsm is None:                                       # a thread's first element: its row in the slab, column
        offsets = {py(thread_index(e.cols)[0](at(p.acc_place[0], t) % 64, at(p.acc_place[1], t)))
                   for t in range(128 * p.tile_warpgroups)}
    else:                                                    # stmatrix: each lane's 16-byte row in instruction 0
        offsets = {py(stsm_lane_index(e.cols)[0](tw)) for tw in range(128)}
    for buf in (1024, 2048, 3072, 5 * 1024, 197 * 1024):
        for off in offsets:
            for x in e.stage_xor:
                got = buf + (off ^ x) if on_offset else (buf + off) ^ x
                assert got == buf + (off ^ x), (fields, buf, off, x)
    assert on_offset == (max(e.stage_xor) >= 1024)
