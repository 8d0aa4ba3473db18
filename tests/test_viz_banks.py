"""Bank maps, bank-conflict reports, swizzle suggestions and coalescing, checked against an
independent brute-force address simulation written here.

The simulator only evaluates layouts (``layout(i)``) and counts: for each warp request
it splits the lanes into phases (32 lanes for <= 32-bit accesses, 16 for 64-bit, 8 for
128-bit), maps every byte a lane touches to its 4-byte word and bank, and takes the
largest number of distinct words in one bank as the phase's wavefronts.
"""

import random

import pytest
from hypothesis import given, settings, strategies as st

import cute_py as cp
from cute_py import Layout, Swizzle, atoms, composition
from cute_py.arch.sm90 import smem_atom, tile_smem
from cute_py.viz import bank_conflicts, bank_map, coalescing, compare_swizzle, suggest_swizzle

BYTES = {"f32": 4, "bf16": 2, "f16": 2, "e4m3": 1, "s8": 1}


# ---------------------------------------------------------------------------
# the independent simulator


def sim_request(layout, elem_bytes, lanes, vec_bytes):
    """``lanes``: {lane: [domain indices]} of one warp request -> (wavefronts, max ways, ideal)."""
    per_phase = 128 // max(vec_bytes, 4)
    phases = {}
    for lane, idxs in lanes.items():
        words = set()
        for i in idxs:
            a = layout(i) * elem_bytes
            for byte in range(a, a + elem_bytes):
                words.add(byte // 4)
        phases.setdefault(lane // per_phase, set()).update(words)
    wave, ways, ideal = 0, 0, 0
    for words in phases.values():
        per_bank = {}
        for w in words:
            per_bank.setdefault(w % 32, set()).add(w)
        m = max(len(s) for s in per_bank.values())
        wave += m
        ways = max(ways, m)
        ideal += max(1, -(-len(words) // 32))
    return wave, ways, ideal


def sim_tv(layout, tv, elem_bytes, vec):
    """Requests of a TV layout: warp w, vector g -> {lane: indices}; thread t, value v at tv(t + T*v)."""
    T = cp.size(tv[0])
    V = cp.size(tv[1])
    out = []
    for w in range(-(-T // 32)):
        for g in range(V // vec):
            lanes = {t - 32 * w: [tv(t + T * (g * vec + k)) for k in range(vec)]
                     for t in range(32 * w, min(T, 32 * w + 32))}
            out.append(sim_request(layout, elem_bytes, lanes, vec * elem_bytes))
    return out


def check_against_sim(layout, tv, dtype, vec):
    report = bank_conflicts(layout, tv, dtype, vector_bits=vec * BYTES[dtype] * 8)
    expected = sim_tv(layout, tv, BYTES[dtype], vec)
    assert list(report.wavefronts) == [e[0] for e in expected]
    assert report.max_ways == max(e[1] for e in expected)
    assert list(report.ideal_wavefronts) == [e[2] for e in expected]
    return report


K_ATOM_TILE = tile_smem(smem_atom("K", 128, "bf16"), 64, 64)
ROW_MAJOR = Layout((64, 64), (64, 1))
COLUMN_READ = Layout((32, 8), (1, 64))  # lane i reads row i, 8 bf16 (128 bits)


# ---------------------------------------------------------------------------
# known facts


def test_row_major_64x64_bf16_column_read_is_8_way():
    r = check_against_sim(ROW_MAJOR, COLUMN_READ, "bf16", 8)
    assert r.vector_bits == 128 and r.lanes_per_phase == 8
    assert r.max_ways == 8 and r.wavefronts == (32,) and r.ideal_wavefronts == (4,)
    assert not r.conflict_free
    # the colliding lanes: lanes 0..7 (rows 0..7, 128 bytes apart) all hit banks 0..3 in phase 0
    first = r.conflicts[0]
    assert (first.phase, first.bank, first.ways) == (0, 0, 8)
    assert [lanes for _addr, lanes in first.words] == [(i,) for i in range(8)]
    assert [addr for addr, _l in first.words] == [128 * i for i in range(8)]
    assert "8-way" in str(r)


def test_gmma_k_major_swizzled_tile_is_conflict_free():
    r = check_against_sim(K_ATOM_TILE, COLUMN_READ, "bf16", 8)
    assert r.conflict_free and r.max_ways == 1 and r.wavefronts == r.ideal_wavefronts == (4,)
    assert r.conflicts == ()
    assert "conflict-free" in str(r)


def test_vector_width_is_inferred():
    assert bank_conflicts(ROW_MAJOR, COLUMN_READ, "bf16").vector_bits == 128
    assert bank_conflicts(Layout(1024), Layout((32, 2), (2, 1)), "f32").vector_bits == 64
    # not contiguous along the values: one element per access
    assert bank_conflicts(ROW_MAJOR, Layout((32, 8), (64, 1)), "bf16").vector_bits == 16


def test_32_consecutive_floats_one_wavefront():
    r = bank_conflicts(Layout(32), Layout(32), "f32")
    assert r.wavefronts == (1,) and r.max_ways == 1
    r = bank_conflicts(Layout(1024), "vec32", "f32")
    assert len(r.wavefronts) == 32 and set(r.wavefronts) == {1}


def test_stride_32_floats_32_way():
    r = bank_conflicts(Layout(1024), Layout(32, 32), "f32")
    assert r.wavefronts == (32,) and r.max_ways == 32
    assert check_against_sim(Layout(1024), Layout((32, 1), (32, 0)), "f32", 1).max_ways == 32
    # the column of a 32x32 row-major float tile, read in domain order
    r = bank_conflicts(Layout((32, 32), (32, 1)), 32, "f32")
    assert set(r.wavefronts) == {32} and r.max_ways == 32
    assert r.conflicts[0].words[5][1] == (5,)


def test_broadcast_is_not_a_conflict():
    r = bank_conflicts(Layout(1024), Layout(32, 0), "f32")
    assert r.wavefronts == (1,) and r.max_ways == 1
    # two lanes, same word, different halves (bf16): still one word
    r = bank_conflicts(Layout(64), Layout(32, 1), "bf16")
    assert r.wavefronts == (1,)


def test_64_bit_half_warps():
    r = bank_conflicts(Layout(64), Layout((32, 2), (2, 1)), "f32")
    assert r.vector_bits == 64 and r.lanes_per_phase == 16
    assert r.requests[0].phase_wavefronts == (1, 1) and r.wavefronts == (2,)


def test_ldmatrix_x4_over_128b_swizzled_atom_is_conflict_free():
    mma = atoms.make_tiled_mma(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    ldsm = atoms.make_copy_atom("SM75_U32x4_LDSM_N", "bf16")
    tiled = atoms.make_tiled_copy_A(ldsm, mma)
    good = bank_conflicts(K_ATOM_TILE, tiled, "bf16")
    assert good.vector_bits == 128 and good.conflict_free
    assert len(good.wavefronts) == 16 and set(good.wavefronts) == {4}  # 16 tiles of 16x16, 4 phases each
    bad = bank_conflicts(ROW_MAJOR, tiled, "bf16")
    assert bad.max_ways == 8 and set(bad.wavefronts) == {32}
    # brute force: lane l reads row l % 16, columns 8 * (l // 16) .. +7 of each 16x16 tile
    for layout, report in ((K_ATOM_TILE, good), (ROW_MAJOR, bad)):
        expected = []
        for tn in range(4):
            for tm in range(4):
                lanes = {l: [(16 * tm + l % 16) + 64 * (16 * tn + 8 * (l // 16) + k) for k in range(8)]
                         for l in range(32)}
                expected.append(sim_request(layout, 2, lanes, 16)[0])
        assert list(report.wavefronts) == expected
    # the bare atom over the swizzled (8,64) atom, viewed so that lane l reads row l%8, k-block l//8
    view = composition(smem_atom("K", 128, "bf16"), Layout((8, 8, 4), (8, 1, 64)))
    r = bank_conflicts(view, ldsm, "bf16")
    assert r.conflict_free and r.wavefronts == (4,)
    unswizzled = composition(Layout((8, 64), (64, 1)), Layout((8, 8, 4), (8, 1, 64)))
    assert bank_conflicts(unswizzled, "SM75_U32x4_LDSM_N", "bf16").max_ways == 8


def test_ldmatrix_x1_uses_only_8_address_lanes():
    view = composition(Layout((8, 64), (64, 1)), Layout((8, 8), (8, 1)))
    r = bank_conflicts(view, atoms.make_copy_atom("SM75_U32x1_LDSM_N", "bf16"), "bf16")
    assert r.wavefronts == (8,) and len(r.requests[0].phase_wavefronts) == 1


def test_tma_rows():
    for layout in (K_ATOM_TILE, ROW_MAJOR, composition(Swizzle(3, 3, 3), ROW_MAJOR)):
        r = bank_conflicts(layout, "row128", "bf16")
        assert r.conflict_free and len(r.wavefronts) == 64 * 64 * 2 // 128
    tma = atoms.make_copy_atom(atoms.tma("load", 64 * 64 * 16), "bf16")
    assert bank_conflicts(K_ATOM_TILE, tma, "bf16").wavefronts == bank_conflicts(K_ATOM_TILE, "row128", "bf16").wavefronts
    # an outer layout that spreads one 128-byte row's 16-byte chunks 128 bytes apart: 8-way
    spread = cp.ComposedLayout(Layout((8, 8, 64), (1, 64, 8)), 0, Layout(4096))
    r = bank_conflicts(spread, "row128", "bf16")
    assert r.max_ways == 8 and len(r.wavefronts) == 64 and set(r.wavefronts) == {8}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["f32", "bf16", "e4m3"]), st.sampled_from([(32, 32), (64, 64), (32, 128), (128, 16)]),
       st.integers(0, 3), st.integers(0, 4), st.integers(1, 4), st.booleans(), st.randoms(use_true_random=False))
def test_random_scalar_accesses_match_simulation(dtype, shape, b, m, s, col_major, rnd):
    R, C = shape
    base = Layout((R, C), (1, R)) if col_major else Layout((R, C), (C, 1))
    layout = composition(Swizzle(b, m, max(s, b)), base) if b else base
    n = R * C
    t_stride = rnd.choice([0, 1, 2, 3, 8, 17, 32, 33, R, C])
    v_stride = rnd.choice([1, 32, 64, R])
    nv = rnd.choice([1, 2, 4])
    tv = Layout((32, nv), (t_stride, v_stride))
    if cp.cosize(tv) > n:
        tv = Layout((32, 1), (min(t_stride, (n - 1) // 31), 0))
    check_against_sim(layout, tv, dtype, 1)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["f32", "bf16", "e4m3"]), st.sampled_from([32, 64, 128]),
       st.sampled_from([(64, 128), (32, 256), (128, 64)]), st.integers(0, 3), st.integers(0, 3),
       st.integers(1, 3), st.sampled_from([1, 2, 3, 5]))
def test_random_vector_accesses_match_simulation(dtype, vbits, shape, b, extra_m, s, row_step):
    """Row-major tiles, vectors along the row, threads walking rows: 32/64/128-bit phases."""
    R, C = shape
    vec = vbits // (8 * BYTES[dtype])
    if vec == 0 or C % vec:
        return
    m = vec.bit_length() - 1 + extra_m
    base = Layout((R, C), (C, 1))
    layout = composition(Swizzle(b, m, max(s, b)), base) if b else base
    rows = min(32, R // row_step)
    tv = Layout((rows, (vec, 2)), (row_step, (R, R * vec)))
    check_against_sim(layout, tv, dtype, vec)


def test_warps_are_separate_requests():
    tv = Layout((128, 4), (1, 128))  # 4 warps, 4 floats per thread (one 128-bit vector)
    r = bank_conflicts(Layout((128, 4), (4, 1)), tv, "f32")
    assert len(r.requests) == 4 and r.requests[1].label == "warp 1, access 0"
    assert list(r.wavefronts) == [e[0] for e in sim_tv(Layout((128, 4), (4, 1)), tv, 4, 4)]


# ---------------------------------------------------------------------------
# bank map


@pytest.mark.parametrize("layout,dtype", [(K_ATOM_TILE, "bf16"), (ROW_MAJOR, "bf16"),
                                          (smem_atom("MN", 64, "f32"), "f32"), (Layout((16, 16), (1, 17)), "f32")])
def test_bank_map_matches_brute_force(layout, dtype):
    m = bank_map(layout, dtype)
    assert len(m) == cp.size(layout)
    for i in range(cp.size(layout)):
        a = layout(i) * BYTES[dtype]
        e = m[i]
        assert (e.index, e.offset, e.address, e.bank, e.chunk) == (i, layout(i), a, a // 4 % 32, a // 16 % 8)
    grid = m.grid()
    rows = cp.size(layout[0])
    assert grid[1][2] == m[1 + rows * 2].bank
    assert str(m).splitlines()[0].startswith("banks of ")


def test_bank_map_of_swizzled_atom_permutes_chunks():
    m = bank_map(smem_atom("K", 128, "bf16"), "bf16")
    # row r, chunk c lands in chunk c ^ r: every row covers all 8 chunks, every chunk column too
    for r in range(8):
        assert sorted({m.grid("chunk")[r][8 * c] for c in range(8)}) == list(range(8))
        assert [m.grid("chunk")[r][8 * c] for c in range(8)] == [c ^ r for c in range(8)]


# ---------------------------------------------------------------------------
# swizzle comparison and suggestion


def test_compare_swizzle_before_after():
    c = compare_swizzle(ROW_MAJOR, "Sw<3,3,3>", COLUMN_READ, "bf16")
    assert c.before.max_ways == 8 and c.after.conflict_free
    assert c.before.total_wavefronts == 32 and c.after.total_wavefronts == 4 and c.speedup == 8
    assert str(c.after.layout) == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    assert "before" in str(c) and "after" in str(c)
    again = compare_swizzle(composition(Swizzle(1, 3, 3), ROW_MAJOR), (3, 3, 3), COLUMN_READ, "bf16")
    assert again.before.max_ways == 4 and again.after.conflict_free  # the outer swizzle is replaced


@pytest.mark.parametrize("dtype", ["bf16", "f32", "e4m3"])
@pytest.mark.parametrize("row_bytes", [32, 64, 128])
def test_suggest_swizzle_finds_the_gmma_swizzles(dtype, row_bytes):
    s = suggest_swizzle(dtype, row_bytes, 128)
    assert s.conflict_free
    assert s.swizzle == smem_atom("K", row_bytes, dtype).outer
    sw, why = s
    assert str(sw) in why and "M =" in why
    # brute force: the column read on the suggested layout is conflict-free, the unswizzled one is not
    cols = row_bytes // BYTES[dtype]
    vec = 16 // BYTES[dtype]
    tile = Layout((32, cols), (cols, 1))
    for layout, free in ((composition(sw, tile), True), (tile, False)):
        lanes = {l: [l + 32 * k for k in range(vec)] for l in range(32)}
        wave, ways, ideal = sim_request(layout, BYTES[dtype], lanes, 16)
        assert (ways == 1) == free


def test_suggest_swizzle_other_widths_and_patterns():
    assert suggest_swizzle("f32", 128, 32).swizzle == Swizzle(5, 0, 5)
    assert suggest_swizzle("bf16", 64, "ldmatrix").swizzle == Swizzle(2, 3, 3)
    none = suggest_swizzle("bf16", 128, "row128")
    assert none.swizzle.bits == 0 and none.conflict_free and "no swizzle needed" in none.explanation
    s = suggest_swizzle("bf16", 128, "(32,8):(1,32)")
    assert s.swizzle == Swizzle(3, 3, 3)
    mma = atoms.make_tiled_mma(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    tiled = atoms.make_tiled_copy_A(atoms.make_copy_atom("SM75_U32x4_LDSM_N", "bf16"), mma)
    assert suggest_swizzle("bf16", 128, tiled).swizzle == Swizzle(3, 3, 3)


# ---------------------------------------------------------------------------
# errors


def test_errors_are_layout_errors():
    with pytest.raises(cp.LayoutError, match="not a vector access"):
        bank_conflicts(ROW_MAJOR, Layout((32, 8), (64, 1)), "bf16", vector_bits=128)
    with pytest.raises(cp.LayoutError, match="outside the memory layout"):
        bank_conflicts(Layout(64), Layout(32, 4), "f32")
    with pytest.raises(cp.LayoutError, match="unknown access pattern"):
        bank_conflicts(Layout(64), "diagonal", "f32")
    with pytest.raises(cp.LayoutError, match="unknown element type"):
        bank_map(Layout(64), "f13")
    with pytest.raises(cp.ParseError):
        bank_map("(4,2]:(1,4)", "f32")


# ---------------------------------------------------------------------------
# coalescing


def sim_coalescing(gmem, tv, elem_bytes, vec):
    T, V = cp.size(tv[0]), cp.size(tv[1])
    out = []
    for w in range(-(-T // 32)):
        for g in range(V // vec):
            used = set()
            for t in range(32 * w, min(T, 32 * w + 32)):
                for k in range(vec):
                    a = gmem(tv(t + T * (g * vec + k))) * elem_bytes
                    used.update(range(a, a + elem_bytes))
            out.append((len({b // 32 for b in used}), len({b // 128 for b in used}), len(used)))
    return out


@pytest.mark.parametrize("gmem,tv,dtype,vec", [
    (Layout((32, 32), (32, 1)), Layout((32, 4), (1, 32)), "f32", 1),       # threads down a column: strided
    (Layout((32, 32), (32, 1)), Layout((32, 4), (1, 32)), "f32", 4),       # each thread 16 B of its own row
    (Layout((32, 32), (32, 1)), Layout((32, 4), (32, 1)), "f32", 1),       # request g: row g, coalesced
    (Layout((64, 64), (64, 1)), Layout((8, 8), (1, 64)), "bf16", 8),      # 8 threads, 16 B each
    (Layout((128, 64)), Layout((32, (8, 2)), (8, (1, 4096))), "bf16", 8),  # column-major, contiguous
])
def test_coalescing_matches_simulation(gmem, tv, dtype, vec):
    r = coalescing(tv, gmem, dtype, vector_bits=vec * BYTES[dtype] * 8)
    expected = sim_coalescing(gmem, tv, BYTES[dtype], vec)
    assert list(r.sectors) == [e[0] for e in expected]
    assert list(r.lines) == [e[1] for e in expected]
    assert [q.useful_bytes for q in r.requests] == [e[2] for e in expected]
    assert list(r.min_sectors) == [-(-e[2] // 32) for e in expected]
    for q in r.requests:
        assert 0 < q.efficiency <= 1 and q.min_sectors <= q.sectors and q.min_lines <= q.lines


def test_coalescing_facts():
    ok = coalescing(Layout((32, 4), (4, 1)), Layout(128), "f32")
    assert ok.coalesced and ok.efficiency == 1.0 and ok.sectors == (16,) and ok.lines == (4,)
    bad = coalescing(Layout(32, 32), Layout(1024), "f32")
    assert bad.sectors == (32,) and bad.min_sectors == (4,) and bad.efficiency == 0.125 and not bad.coalesced
    shifted = coalescing(Layout(32), Layout(64), "f32", base=16)
    assert shifted.sectors == (5,) and shifted.lines == (2,)
    assert "efficiency" in str(ok)


def test_coalescing_of_a_cp_async_tiled_copy():
    atom = atoms.make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "bf16")
    tiled = atoms.make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    r = coalescing(tiled, Layout((64, 64), (64, 1)), "bf16")  # K-major gmem: rows of 128 B
    assert r.vector_bits == 128 and r.coalesced and r.efficiency == 1.0
    with pytest.raises(cp.LayoutError, match="not a vector access"):  # M-major gmem: 16 B are not contiguous
        coalescing(tiled, Layout((64, 64), (1, 64)), "bf16")


@pytest.mark.parametrize("module", ["cute_py.viz.banks", "cute_py.viz.coalesce"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_conflict_details_name_the_words_and_lanes():
    """Thread t reads float 2t: word 2t, bank 2t % 32, so lanes b/2 and b/2 + 16 meet in every even bank b
    (words b and b + 32, bytes 4b and 4b + 128): a 2-way conflict in 16 banks, 2 wavefronts where
    32 distinct words ideally take 1."""
    r = bank_conflicts(Layout(64), Layout(32, 2), "f32")
    assert r.vector_bits == 32 and r.wavefronts == (2,) and r.ideal_wavefronts == (1,) and r.max_ways == 2
    assert [(c.request, c.phase, c.bank, c.words) for c in r.conflicts] == [
        (0, 0, b, ((4 * b, (b // 2,)), (4 * b + 128, (b // 2 + 16,)))) for b in range(0, 32, 2)]
    # a broadcast is no conflict: lanes 2k and 2k + 1 read the same word
    r = bank_conflicts(Layout(16), Layout(((2, 16), 1), ((0, 1), 0)), "f32")
    assert r.conflicts == () and r.wavefronts == (1,)


def test_viz_reexports_the_analysis_below_emit():
    """The bank analysis the emitter checks its staging layouts with is cute_py.arch.sm90.banks (viz draws)."""
    from cute_py.arch.sm90 import banks

    assert bank_conflicts is banks.bank_conflicts
    assert "<pre>" in bank_conflicts(Layout(64), "vec32", "f32")._repr_html_()


def test_vec128_down_the_columns_of_a_row_major_tile_points_to_row128_and_a_tv_layout():
    """Issue 14: 'vec128' reads vectors in domain order, down a column of the standard row-major swizzled tile;
    the error must say so and name what to use instead, and the TV layout it suggests must work."""
    tile = "Sw<3,3,3> o 0 o (64,64):(64,1)"
    with pytest.raises(cp.LayoutError) as e:
        bank_conflicts(tile, "vec128", "bf16")
    msg = str(e.value)
    assert msg.startswith("bank_conflicts: not a vector access")
    assert "'row128'" in msg and "TV layout" in msg and "(32,8):(1,64)" in msg
    assert bank_conflicts(tile, "row128", "bf16").conflict_free
    assert bank_conflicts(tile, cp.parse("(32,8):(1,64)"), "bf16").conflict_free
    with pytest.raises(cp.LayoutError, match="'row128'"):
        bank_conflicts(tile, 128, "bf16")          # the int spelling gets the same advice
