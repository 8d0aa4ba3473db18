"""synthesize_smem_layout: its results are bijections that keep vectors whole, their certificates state what the
bank analysis counts, nothing in the family is cheaper (brute force with the bank analysis itself), the canonical
cases give CuTe's GMMA atoms, and an impossible case gives the least conflict and the reason."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import cute_py as cp
from cute_py import Layout, LayoutError, Swizzle, composition
from cute_py.arch.sm90 import smem_atom, tile_smem
from cute_py.arch.sm90.banks import bank_conflicts
from cute_py.arch.sm90.synth import synthesize_smem_layout
from cute_py.arch.sm90 import synth_search
from cute_py.layouts.f2 import echelon
from cute_py.layouts.offsets import layout_offsets


def offsets(layout):
    return layout_offsets(layout).tolist()


def vectors_whole(layout, access, dtype):
    """Every lane's vector is contiguous and aligned in ``layout``, checked here, not by the certificate: a TV
    access through the bank analysis with its width given (it refuses a vector that is not whole); TMA's 16-byte
    chunks of the unswizzled tile must land on 16 contiguous, aligned bytes."""
    bits = cp.dtypes.dtype(dtype).bits
    if access.access == "row128":
        inner = getattr(layout, "inner", layout)
        base, where = np.array(offsets(inner)), np.array(offsets(layout))
        per = 128 // bits
        chunk = base // per
        for c in np.unique(chunk):
            got = where[chunk == c][np.argsort(base[chunk == c])]
            if not (got[0] % per == 0 and np.all(got == got[0] + np.arange(per))):
                return False
        return True
    try:
        bank_conflicts(layout, access.access, dtype, vector_bits=access.vector_bits)
    except LayoutError as e:
        if e.rule == "not a vector access":
            return False
        raise
    return True


def check_result(r, dtype):
    """The laws every result keeps: a bijection, whole vectors, and the certificate's counts are the bank
    analysis's (run again here); a conflict-free result meets each lower bound."""
    rows, cols = r.tile_shape
    assert sorted(offsets(r.layout)) == list(range(rows * cols))
    cert = r.certificate
    for a in cert.accesses:
        fresh = bank_conflicts(r.layout, a.access.access, dtype, vector_bits=a.report.vector_bits)
        assert (fresh.max_ways, fresh.wavefronts) == (a.report.max_ways, a.report.wavefronts)
        assert vectors_whole(r.layout, a.access, dtype) and a.vectors_whole
        assert a.lower_bound <= fresh.max_ways
    assert cert.max_ways == cert.min_max_ways and cert.lower_bound <= cert.max_ways
    assert cert.conflict_free == (cert.max_ways == 1) == (not cert.incompatible)


def bases(rows, cols, dtype):
    """The base orders of the family: the row- and column-major tile and the canonical GMMA atoms tiled over it."""
    out = [("K", Layout((rows, cols), (cols, 1))), ("MN", Layout((rows, cols), (1, rows)))]
    for major in ("K", "MN"):
        for sw_bytes in (0, 32, 64, 128):
            try:
                tiled = tile_smem(smem_atom(major, sw_bytes, dtype), rows, cols, major=major)
            except LayoutError:
                continue
            out.append((major, getattr(tiled, "inner", tiled)))
    return out


def brute_force(r, dtype):
    """``(least max conflict, fewest XOR terms at it)`` over every ``Sw<B,M,S>`` (``S >= B``) on every base
    order, counted by the bank analysis; candidates that break a vector or a TMA box's order are out. Stops at
    the first conflict-free B."""
    rows, cols = r.tile_shape
    k = (rows * cols).bit_length() - 1
    accesses = [a.access for a in r.certificate.accesses]
    best = None
    for b in range(0, k):
        for major, base in bases(rows, cols, dtype):
            if any(a.major not in (None, major) for a in accesses):
                continue
            for m in range(0, k - b if b else 1):
                for s in (range(b, k - m - b + 1) if b else [0]):
                    lay = composition(Swizzle(b, m, s), base) if b else base
                    if not all(vectors_whole(lay, a, dtype) for a in accesses):
                        continue
                    ways = max(bank_conflicts(lay, a.access, dtype, vector_bits=a.vector_bits
                                              or r.certificate.accesses[i].report.vector_bits).max_ways
                               for i, a in enumerate(accesses))
                    if best is None or (ways, b) < best:
                        best = (ways, b)
        if best is not None and best[0] == 1:
            return best
    return best


WRITERS = ["tma", "tma:mn", "cp.async", "vec64", "vec32:mn", "stmatrix", "epilogue", "epilogue:16"]
READERS = ["ldmatrix", "ldmatrix:mn", "wgmma", "wgmma:mn", "vec128", "vec32:mn", "tma", "tma:mn"]


def synth_or_skip(shape, dtype, writers, readers, family):
    try:
        return synthesize_smem_layout(shape, dtype, writers, readers, family=family)
    except LayoutError as e:                       # accesses that do not fit the tile, or vectors no layout keeps
        expected = e.rule in ("no layout keeps every vector whole", "vector width must be 8..128 bits and at "
                              "least one element") or e.rule.startswith(("the tile does not fit", "an epilogue",
                                                                         "ldmatrix moves", "stmatrix moves"))
        assume(not expected)
        raise


@settings(max_examples=20, deadline=None)
@given(shape=st.tuples(st.sampled_from([8, 16, 32, 64, 128]), st.sampled_from([8, 16, 32, 64])),
       dtype=st.sampled_from(["bf16", "f32", "e4m3"]), writer=st.sampled_from(WRITERS),
       reader=st.sampled_from(READERS), family=st.sampled_from(["swizzle", "f2"]))
def test_results_are_bijections_with_whole_vectors_and_true_certificates(shape, dtype, writer, reader, family):
    r = synth_or_skip(shape, dtype, [writer], [reader], family)
    check_result(r, dtype)
    if family == "swizzle":
        assert r.swizzle is not None or r.xor_terms == 0


@settings(max_examples=6, deadline=None)
@given(shape=st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from([8, 16, 32])),
       dtype=st.sampled_from(["bf16", "f32"]), writer=st.sampled_from(WRITERS), reader=st.sampled_from(READERS))
def test_brute_force_over_every_swizzle_finds_nothing_cheaper(shape, dtype, writer, reader):
    assume(not writer.startswith("tma") and not reader.startswith("tma"))   # TMA ranks its boxes first
    r = synth_or_skip(shape, dtype, [writer], [reader], "swizzle")
    assert brute_force(r, dtype) == (r.certificate.max_ways, r.xor_terms)


def test_the_f32_transpose_and_brute_force_on_an_impossible_case():
    """The f32 transpose is suggest_swizzle's Sw<5,0,5>; the brute force on the three accesses no layout serves
    (least conflict 2-way, reached with no swizzle at all)."""
    r = synthesize_smem_layout((32, 32), "f32", ["vec32"], ["vec32:mn"])
    check_result(r, "f32")
    assert r.swizzle == cp.viz.suggest_swizzle("f32", 128, 32).swizzle == Swizzle(5, 0, 5)
    r = synthesize_smem_layout((2, 32), "f32", [ROW], [BLOCK, STAGGER])
    assert brute_force(r, "f32") == (2, 0) == (r.certificate.max_ways, r.xor_terms)


# ---------------------------------------------------------------------------------------------------------------
# the canonical cases: CuTe's GMMA atoms


def same_function(a, b):
    return offsets(a) == offsets(b)


@pytest.mark.parametrize("dtype,cols,sw_bytes", [("bf16", 64, 128), ("bf16", 32, 64), ("bf16", 16, 32),
                                                 ("bf16", 8, 0), ("f32", 32, 128), ("f32", 16, 64),
                                                 ("e4m3", 128, 128), ("e4m3", 64, 64)])
def test_tma_rows_and_wgmma_reads_give_the_k_major_gmma_atom(dtype, cols, sw_bytes):
    r = synthesize_smem_layout((64, cols), dtype, writers=["tma"], readers=["wgmma"])
    check_result(r, dtype)
    assert r.certificate.conflict_free and r.certificate.tma
    assert same_function(r.layout, tile_smem(smem_atom("K", sw_bytes, dtype), 64, cols))
    assert r.xor_terms == {0: 0, 32: 1, 64: 2, 128: 3}[sw_bytes]
    if cols * cp.dtypes.dtype(dtype).bits >= 256:                  # the tile holds one instruction's K
        assert r.certificate.wgmma and r.certificate.canonical is None


def test_ldmatrix_reads_and_the_mn_major_atoms():
    r = synthesize_smem_layout((64, 64), "bf16", ["tma"], ["ldmatrix", "wgmma"])
    assert str(r.layout) == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    assert "descriptor 0x4000004000010000" in r.certificate.wgmma_reason       # notebook 03's SW128 descriptor
    r = synthesize_smem_layout((64, 64), "bf16", ["tma:mn"], ["wgmma:mn"])
    assert same_function(r.layout, tile_smem(smem_atom("MN", 128, "bf16"), 64, 64, major="MN"))
    assert r.certificate.tma and r.certificate.wgmma


def test_a_transposing_epilogue_gets_a_layout_tma_can_address():
    """TMA stores the tile, so a layout TMA addresses comes first (Sw<2,4,3> over the column-major tile is
    conflict-free with 2 terms, but TMA cannot), then the fewest boxes: the MN-major INTER tile is conflict-free
    with no XOR term but needs a box per 16-byte column; the 128-byte atom needs one."""
    r = synthesize_smem_layout((64, 64), "bf16", writers=["epilogue:16"], readers=["tma:mn"])
    check_result(r, "bf16")
    assert same_function(r.layout, tile_smem(smem_atom("MN", 128, "bf16"), 64, 64, major="MN"))
    assert (r.xor_terms, r.certificate.tma, r.certificate.wgmma, r.certificate.canonical) == (3, True, None, None)
    inter = tile_smem(smem_atom("MN", 0, "bf16"), 64, 64, major="MN")
    cheap = composition(Swizzle(2, 4, 3), Layout((64, 64), (1, 64)))
    for lay in (inter, cheap):
        for a in r.certificate.accesses:
            assert bank_conflicts(lay, a.access.access, "bf16", vector_bits=a.report.vector_bits).conflict_free
    assert [m.inner_runs for m in synth_search.base_models((64, 64), cp.dtypes.dtype("bf16"), [])
            if m.layout == inter] == [8]
    assert "TMA swizzles are Sw<B,4,3>" in cp.arch.sm90.synth._tma(cheap, "MN", cp.dtypes.dtype("bf16"))[1]
    # two-element stores cannot stay whole in an m-contiguous tile: refused, with the reason
    with pytest.raises(LayoutError, match="no layout keeps every vector whole.*mode 0 contiguous"):
        synthesize_smem_layout((64, 64), "bf16", writers=["epilogue"], readers=["tma:mn"])


# ---------------------------------------------------------------------------------------------------------------
# where no swizzle (or no layout) does


ROW = "(32):(2)"                              # a warp reads row 0 of a 2x32 f32 tile
BLOCK = "((16,2),1):((2,1),0)"                # 16 columns of both rows
STAGGER = "((16,2),1):((2,33),0)"             # columns 0-15 of row 0, 16-31 of row 1


@pytest.mark.parametrize("family", ["swizzle", "f2"])
def test_an_impossible_case_gives_the_least_conflict_and_the_reason(family):
    r = synthesize_smem_layout((2, 32), "f32", writers=[ROW], readers=[BLOCK, STAGGER], family=family)
    check_result(r, "f32")
    cert = r.certificate
    assert (cert.conflict_free, cert.min_max_ways, cert.exhaustive) == (False, 2, True)
    assert cert.incompatible == (f"write {ROW}", f"read {BLOCK}", f"read {STAGGER}")
    assert "span 6 index bits" in cert.reason and "the word and bank bits of an offset are 5" in cert.reason
    assert "linear over GF(2)" in cert.reason
    assert (cert.lower_bound, cert.meets_bound) == (2, True) and [a.lower_bound for a in cert.accesses] == [1, 1, 1]
    assert "all the accesses together take at least 2-way in the family (met)" in str(cert)
    # the proof's premise, by hand: the three phases (index bits: m is bit 0, column n is bits 1..5) are the
    # hyperplanes n4 = 0 (row), ... they cover all 63 nonzero 6-bit vectors, and no 5 bank bits separate 6
    row, block, stagger = ({1 << j for j in range(1, 6)}, {1} | {1 << j for j in range(1, 5)},
                           {1 | 32} | {1 << j for j in range(1, 5)})
    spans = []
    for gens in (row, block, stagger):
        span = {0}
        for g in gens:
            span |= {x ^ g for x in span}
        assert len(echelon(gens)) == 5 and len(span) == 32
        spans.append(span)
    assert set().union(*spans) == set(range(64))
    for two in ([ROW, BLOCK], [ROW, STAGGER], [BLOCK, STAGGER]):   # any two alone are fine
        assert synthesize_smem_layout((2, 32), "f32", [], two, family=family).certificate.conflict_free


SPREAD = "((2,2,2,2,2,2,8),8):((1,4,16,2,8,32,512),64)"   # 8 lanes read rows {0,1,4,5,16,17,20,21}


def test_f2_layout_where_no_swizzle_is_conflict_free():
    sw = synthesize_smem_layout((64, 64), "bf16", ["cp.async"], [SPREAD])
    assert (sw.certificate.min_max_ways, sw.certificate.incompatible) == (2, ("write cp.async", f"read {SPREAD}"))
    assert "the F2 family has a conflict-free layout with 3 XOR terms" in sw.certificate.reason
    f2 = synthesize_smem_layout((64, 64), "bf16", ["cp.async"], [SPREAD], family="f2")
    check_result(f2, "bf16")
    assert f2.swizzle is None and f2.xor_terms == 3 and f2.certificate.conflict_free
    assert (f2.certificate.tma, f2.certificate.wgmma, f2.certificate.canonical) == (None, None, None)
    assert "TMA:" not in str(f2) and "wgmma:" not in str(f2)
    # a TMA writer needs a layout TMA addresses, and no F2 layout is one: a swizzle over the tiled 32-byte atom
    tma = synthesize_smem_layout((64, 64), "bf16", ["tma"], [SPREAD], family="f2")
    assert tma.certificate.tma and tma.swizzle == Swizzle(3, 3, 3) and tma.certificate.conflict_free


def test_a_search_that_is_not_exhaustive_says_so(monkeypatch):
    monkeypatch.setattr(synth_search, "EXHAUSTIVE_BITS", 2)
    r = synthesize_smem_layout((2, 32), "f32", writers=[ROW], readers=[BLOCK, STAGGER], family="f2")
    assert not r.certificate.exhaustive
    assert "the layouts of the f2 family searched" in r.certificate.reason
    assert "among those searched (the F2 search was not exhaustive)" in str(r)


def linear_brute_force(readers):
    """The least worst conflict of the TV accesses ``readers`` (64-bit elements: no byte bits, 4 bank bits, 16
    lanes a phase) over every linear bijection of a 32-element tile, by brute force. A phase (a coset of the
    subspace U of its index differences) holds as many words in one bank as U has elements whose offsets differ
    in no bank bit: U's intersection with the kernel of the bank bits' projection, which for a bijection of
    5 bits onto 4 bank bits and 1 line bit is {0, w} for a nonzero w, and every w is some bijection's."""
    phases = []
    for tv in readers:                                   # every phase: 16 lanes of one value
        lanes = offsets(cp.parse(tv))[:16]
        phases.append({x ^ lanes[0] for x in lanes})
    return min(max(2 if w in u else 1 for u in phases) for w in range(1, 32))


def test_the_lower_bounds_are_proven_by_brute_force_over_every_linear_layout():
    """A 2x16 f64 tile: a row, a block of both rows and a staggered block read every nonzero combination of the 5
    index bits, and an offset has 4 bank bits: 2-way at least, under every linear layout (brute force); any two
    are conflict-free."""
    row, block, stagger = "(16):(2)", "((8,2),1):((2,1),0)", "((8,2),1):((2,17),0)"
    r = synthesize_smem_layout((2, 16), "f64", [row], [block, stagger], family="f2")
    check_result(r, "f64")
    assert r.certificate.lower_bound == 2 == linear_brute_force([row, block, stagger])
    for a in r.certificate.accesses:
        assert a.lower_bound == 1 == linear_brute_force([a.access.name])
    assert synthesize_smem_layout((2, 16), "f64", [row], [block]).certificate.lower_bound == 1


# ---------------------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("kwargs,match", [
    (dict(tile_shape=(64, 48)), "tile_shape must be powers of two"),
    (dict(tile_shape=(64,)), r"tile_shape must be \(rows, cols\)"),
    (dict(dtype="bf17"), "unknown element type: dtype='bf17'"),
    (dict(readers=["ldsm"]), "unknown access: read 'ldsm'"),
    (dict(readers=["ldmatrix:64"]), "a width does not apply: read 'ldmatrix:64'"),
    (dict(readers=["vec16:8"]), "a width does not apply: read 'vec16:8': the width is in the name"),
    (dict(dtype="f64"), "ldmatrix moves 16-bit elements: read 'ldmatrix' for f64"),
    (dict(readers=["tma:xy"]), "unknown option of a named access: 'xy' in read 'tma:xy'"),
    (dict(family="gf2"), "family must be 'swizzle' or 'f2'"),
    (dict(writers=[], readers=[]), "needs at least one access"),
    (dict(tile_shape=(64, 8), readers=["ldmatrix"]), "the tile does not fit the ldmatrix access"),
    (dict(readers=["vec128:mn"]), "no layout keeps every vector whole"),
    (dict(readers=["(3,1):(1,0)"]), "not linear over GF\\(2\\)"),
])
def test_bad_input_names_the_operation_and_the_argument(kwargs, match):
    args = dict(tile_shape=(64, 64), dtype="bf16", writers=["cp.async"], readers=["ldmatrix"])
    args.update(kwargs)
    shape, dtype = args.pop("tile_shape"), args.pop("dtype")
    with pytest.raises(LayoutError, match="^synthesize_smem_layout: " + match):
        synthesize_smem_layout(shape, dtype, **args)


def test_accesses_must_be_lists():
    with pytest.raises(TypeError, match="synthesize_smem_layout: readers must be a list of accesses"):
        synthesize_smem_layout((64, 64), "bf16", ["tma"], "ldmatrix")


def test_exported_from_cute_py():
    assert cp.synthesize_smem_layout is synthesize_smem_layout
    assert "synthesize_smem_layout" in cp.__all__
