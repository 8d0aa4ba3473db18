"""MMA atoms (``cute_py.atoms.mma`` / ``registry``) against the PTX ISA and CuTe's printed traits.

Every atom's TV layouts are checked two ways:

* structurally: the C layout (and register A/B layouts) is a bijection from
  ``[0, threads*values)`` onto the column-major tile; shared-memory operands
  (GMMA SS A, every GMMA B) have thread stride 0 and a value mode that is the
  identity onto the tile (CuTe's ``ABLayout<MN,K> = (128,(MN,K)):(0,(1,MN))``);
* semantically: each (thread, value) lands on the (row, col) that the PTX ISA
  fragment description assigns to lane ``thr_id(thread)``, element ``value``.
  The formulas below are restated from the PTX ISA (sections 9.7.14.5.x, and the
  wgmma fragment figures) independently of the library's layouts.

CuTe's conventions: A is (M,K) with index ``m + M*k``; B is (N,K) with index
``n + N*k`` (PTX lists B as (row=k, col=n)); C is (M,N) with index ``m + M*n``.
A TV layout is evaluated at ``thr + T*val``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cute_py
from cute_py import Layout, LayoutError
from cute_py.atoms import (
    AtomError, MMAAtom, all_mma_atoms, find, get, gmma, gmma_c_layout, sm70_mma, sm75_mma, sm80_mma,
    sm89_mma,
)
from cute_py.int_tuple import product
from cute_py.layouts.dtypes import dtype
from oracle import cpp, eval_mode, flat, tv_table as _tv_table

ATOMS = all_mma_atoms()


# ---------------------------------------------------------------------------
# Layout evaluation, vectorized (independent of Layout.__call__, cross-checked against it)

_EVAL_CACHE: dict = {}


def tv_table(layout: Layout) -> np.ndarray:
    """:func:`oracle.tv_table` (spot-checked against ``Layout.__call__`` at 97 points), cached."""
    key = (layout.shape, layout.stride)
    if key not in _EVAL_CACHE:
        _EVAL_CACHE[key] = _tv_table(layout, spot_checks=97)
    return _EVAL_CACHE[key]


def thread_lanes(atom: MMAAtom) -> np.ndarray:
    lay = atom.thr_id
    return np.array([lay(t) for t in range(atom.num_threads)], dtype=np.int64)


def test_tv_table_helper_can_fail():
    L = cute_py.parse("((4,8),(2,2)):((32,1),(16,8))")
    tab = tv_table(L)
    assert tab[5, 2] == L(5 + 32 * 2) == 41
    assert not np.array_equal(tab, tv_table(cute_py.parse("((4,8),(2,2)):((32,1),(8,16))")))


# ---------------------------------------------------------------------------
# Inventory

def _expected_names():
    names = set()
    for d in ("F16", "F32"):
        for mj in ("TN", "NT", "NN", "TT"):
            names.add(f"SM70_8x8x4_{d}F16F16{d}_{mj}")
    names |= {"SM75_16x8x8_F16F16F16F16_TN", "SM75_16x8x8_F32F16F16F32_TN", "SM75_8x8x16_S32S8S8S32_TN"}
    for k in (8, 16):
        names |= {f"SM80_16x8x{k}_F16F16F16F16_TN", f"SM80_16x8x{k}_F32F16F16F32_TN",
                  f"SM80_16x8x{k}_F32BF16BF16F32_TN"}
    names |= {"SM80_16x8x4_F32TF32TF32F32_TN", "SM80_16x8x8_F32TF32TF32F32_TN", "SM80_8x8x4_F64F64F64F64_TN"}
    for shp in ("8x8x16", "16x8x16", "16x8x32"):
        for a in ("S8", "U8"):
            for b in ("S8", "U8"):
                for sat in ("", "_SATURATE"):
                    names.add(f"SM80_{shp}_S32{a}{b}S32_TN{sat}")
    fp8 = [(a, b) for a in ("E4M3", "E5M2") for b in ("E4M3", "E5M2")]
    for d in ("F16", "F32"):
        for a, b in fp8:
            names.add(f"SM89_16x8x32_{d}{a}{b}{d}_TN")
    int_n = [8, 16, 24] + list(range(32, 257, 16))
    for src in ("SS", "RS"):
        for n in range(8, 257, 8):
            for t in ("F16F16F16", "F32F16F16", "F32BF16BF16"):
                names.add(f"SM90_64x{n}x16_{t}_{src}")
            names.add(f"SM90_64x{n}x8_F32TF32TF32_{src}_TN")
            for d in ("F16", "F32"):
                for a, b in fp8:
                    names.add(f"SM90_64x{n}x32_{d}{a}{b}_{src}_TN")
            if n in int_n:
                for a in ("S8", "U8"):
                    for b in ("S8", "U8"):
                        for sat in ("", "_SATURATE"):
                            names.add(f"SM90_64x{n}x32_S32{a}{b}_{src}_TN{sat}")
    return names


def test_all_mma_atoms_inventory():
    names = [a.name for a in ATOMS]
    assert len(names) == len(set(names)), "duplicate atom names"
    assert names == sorted(names)
    expected = _expected_names()
    assert set(names) - expected == set(), "unexpected atoms"
    assert expected - set(names) == set(), "missing atoms"
    assert len(names) == 1108
    assert all(isinstance(a, MMAAtom) for a in ATOMS)
    assert all(a.a_major == "K" and a.b_major == "K" for a in ATOMS if a.arch != 70)


def test_atom_metadata_matches_name():
    """arch, shape_mnk, element types, sources and threads agree with the CuTe name."""
    tok = {"F16": "f16", "BF16": "bf16", "TF32": "tf32", "F32": "f32", "F64": "f64", "E4M3": "e4m3",
           "E5M2": "e5m2", "S8": "s8", "U8": "u8", "S32": "s32"}
    for a in ATOMS:
        m = re.fullmatch(r"SM(\d+)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_(TN|NT|NN|TT|SS|RS)(_TN)?(_SATURATE)?", a.name)
        assert m, a.name
        arch, M, N, K, types, kind, _tn, sat = m.groups()
        assert a.arch == int(arch), a.name
        assert a.shape_mnk == (int(M), int(N), int(K)), a.name
        ts = [tok[t] for t in re.findall(r"BF16|TF32|F16|F32|F64|E4M3|E5M2|S8|U8|S32", types)]
        assert (a.c_type.name, a.a_type.name, a.b_type.name) == tuple(ts[:3]), a.name
        assert a.saturate == bool(sat), a.name
        assert a.num_threads == {70: 8, 75: 32, 80: 32, 89: 32, 90: 128}[a.arch], a.name
        if a.arch == 90:
            assert a.a_source == ("smem" if kind == "SS" else "reg"), a.name
            assert a.b_source == "smem", a.name
        else:
            assert (a.a_source, a.b_source) == ("reg", "reg"), a.name


# ---------------------------------------------------------------------------
# Structural properties for every atom

def _check_register_operand(layout, T, tile, what):
    tab = tv_table(layout)
    assert tab.shape[0] == T, f"{what}: thread mode {tab.shape[0]} != {T} threads"
    flat = np.sort(tab.ravel())
    assert tab.size == tile and np.array_equal(flat, np.arange(tile)), \
        f"{what}: {layout} is not a bijection onto [0,{tile})"


def _check_smem_operand(layout, T, mn, k, what):
    # thread mode: T threads, all stride 0
    assert product(layout.shape[0]) == T, what
    assert all(d == 0 for d in flat(layout.stride[0])), f"{what}: thread stride not 0 in {layout}"
    val = eval_mode(layout.shape[1], layout.stride[1])
    assert np.array_equal(np.sort(val), np.arange(mn * k)), f"{what}: value mode not a bijection: {layout}"
    assert np.array_equal(val, np.arange(mn * k)), f"{what}: value mode is not CuTe's ABLayout: {layout}"
    assert str(layout) == f"({T},({mn},{k})):(0,(1,{mn}))", what


@pytest.mark.parametrize("arch", [70, 75, 80, 89, 90])
def test_tv_layouts_are_bijections(arch):
    atoms = [a for a in ATOMS if a.arch == arch]
    assert atoms
    for a in atoms:
        M, N, K = a.shape_mnk
        T = a.num_threads
        _check_register_operand(a.c_layout, T, M * N, f"{a.name} C")
        if a.a_source == "reg":
            _check_register_operand(a.a_layout, T, M * K, f"{a.name} A")
        else:
            _check_smem_operand(a.a_layout, T, M, K, f"{a.name} A")
        if a.b_source == "reg":
            _check_register_operand(a.b_layout, T, N * K, f"{a.name} B")
        else:
            _check_smem_operand(a.b_layout, T, N, K, f"{a.name} B")
        # thr_id is a bijection from logical threads onto distinct lanes
        lanes = thread_lanes(a)
        assert len(set(lanes.tolist())) == T, a.name


def test_bijection_check_detects_a_broken_layout():
    with pytest.raises(AssertionError):
        _check_register_operand(cute_py.parse("((4,8),(2,2)):((32,1),(16,16))"), 32, 128, "broken")
    with pytest.raises(AssertionError):
        _check_smem_operand(cute_py.parse("(128,(64,16)):(1,(1,64))"), 128, 64, 16, "broken")


# ---------------------------------------------------------------------------
# PTX ISA fragment formulas (lane, element i) -> (row, col); restated from the ISA.
# Each function takes numpy arrays `lane` (T,1) and `i` (1,V) and returns (row, col).
# For B, row = k and col = n (the ISA's K x N view).

def _g(lane):
    return lane >> 2


def _t(lane):
    return lane % 4


def c_m16n8(lane, i):  # m16n8k{4,8,16,32} C/D
    return _g(lane) + 8 * (i >= 2), 2 * _t(lane) + (i & 1)


def c_m8n8(lane, i):  # m8n8k4 f64, m8n8k16 integer C/D
    return _g(lane) + 0 * i, 2 * _t(lane) + (i & 1)


PTX = {
    # mma.m16n8k8 .f16/.bf16
    ("m16n8k8", "16b", "A"): lambda l, i: (_g(l) + 8 * (i >= 2), 2 * _t(l) + (i & 1)),
    ("m16n8k8", "16b", "B"): lambda l, i: (2 * _t(l) + i, _g(l) + 0 * i),
    # mma.m16n8k16 .f16/.bf16
    ("m16n8k16", "16b", "A"): lambda l, i: (_g(l) + 8 * ~np.isin(i, [0, 1, 4, 5]),
                                            2 * _t(l) + (i & 1) + 8 * (i >= 4)),
    ("m16n8k16", "16b", "B"): lambda l, i: (2 * _t(l) + (i & 1) + 8 * (i >= 2), _g(l) + 0 * i),
    # mma.m16n8k4 .tf32
    ("m16n8k4", "32b", "A"): lambda l, i: (_g(l) + 8 * i, _t(l) + 0 * i),
    ("m16n8k4", "32b", "B"): lambda l, i: (_t(l) + 0 * i, _g(l) + 0 * i),
    # mma.m16n8k8 .tf32: a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4); b0 (t,g) b1 (t+4,g)
    ("m16n8k8", "32b", "A"): lambda l, i: (_g(l) + 8 * (i & 1), _t(l) + 4 * (i >> 1)),
    ("m16n8k8", "32b", "B"): lambda l, i: (_t(l) + 4 * i, _g(l) + 0 * i),
    # mma.m8n8k4 .f64
    ("m8n8k4", "64b", "A"): lambda l, i: ((l >> 2) + 0 * i, l % 4 + 0 * i),
    ("m8n8k4", "64b", "B"): lambda l, i: (l % 4 + 0 * i, (l >> 2) + 0 * i),
    # mma.m8n8k16 .s8/.u8
    ("m8n8k16", "8b", "A"): lambda l, i: (_g(l) + 0 * i, 4 * _t(l) + i),
    ("m8n8k16", "8b", "B"): lambda l, i: (4 * _t(l) + i, _g(l) + 0 * i),
    # mma.m16n8k16 .s8/.u8
    ("m16n8k16", "8b", "A"): lambda l, i: (_g(l) + 8 * (i >= 4), 4 * _t(l) + (i & 3)),
    ("m16n8k16", "8b", "B"): lambda l, i: (4 * _t(l) + i, _g(l) + 0 * i),
    # mma.m16n8k32 .s8/.u8/.e4m3/.e5m2
    ("m16n8k32", "8b", "A"): lambda l, i: (_g(l) + 8 * ~((i < 4) | ((i >= 8) & (i < 12))),
                                           4 * _t(l) + (i & 3) + 16 * (i >= 8)),
    ("m16n8k32", "8b", "B"): lambda l, i: (4 * _t(l) + (i & 3) + 16 * (i >= 4), _g(l) + 0 * i),
}


# SM70 mma.m8n8k4 (quad pairs): hi = 4 for lanes >= 16
def _hi(l):
    return 4 * (l >= 16)


SM70 = {
    ("A", "row"): lambda l, i: (l % 4 + _hi(l), i + 0 * l),
    ("A", "col"): lambda l, i: (i % 4 + _hi(l), l % 4 + 0 * i),
    ("B", "row"): lambda l, i: (l % 4 + 0 * i, i + _hi(l)),
    ("B", "col"): lambda l, i: (i + 0 * l, l % 4 + _hi(l)),
    ("C", "f16"): lambda l, i: (l % 4 + _hi(l), i + 0 * l),
    ("C", "f32"): lambda l, i: ((l & 1) + (i & 2) + _hi(l), (i & 4) + (l & 2) + (i & 1)),
}


# wgmma fragments: thread tid of the warpgroup, warp w = tid/32, lane = tid%32
def _w(tid):
    return tid // 32


GMMA_PTX = {
    "C": lambda tid, i: (16 * _w(tid) + _g(tid % 32) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * _t(tid % 32) + (i & 1)),
    ("A", 16): lambda tid, i: (16 * _w(tid) + _g(tid % 32) + 8 * ((i >> 1) & 1), 2 * _t(tid % 32) + (i & 1) + 8 * (i >> 2)),
    ("A", 8): lambda tid, i: (16 * _w(tid) + _g(tid % 32) + 8 * (i & 1), _t(tid % 32) + 4 * (i >> 1)),
    ("A", 32): lambda tid, i: (16 * _w(tid) + _g(tid % 32) + 8 * ((i >> 2) & 1), 4 * _t(tid % 32) + (i & 3) + 16 * (i >> 3)),
}


def _kind(a: MMAAtom) -> str:
    return {16: "16b", 32: "32b", 64: "64b", 8: "8b"}[a.a_type.bits]


def _compare(atom, layout, formula, rows, what, b_operand=False):
    """Compare a TV layout to a PTX formula on every (thread, value)."""
    tab = tv_table(layout)
    T, V = tab.shape
    lanes = thread_lanes(atom)[:, None]
    i = np.arange(V, dtype=np.int64)[None, :]
    r, c = formula(lanes, i)
    r, c = np.broadcast_to(r, (T, V)), np.broadcast_to(c, (T, V))
    if b_operand:  # PTX (row=k, col=n) -> CuTe n + N*k
        expected = c + rows * r
    else:  # (row, col) -> row + rows*col
        expected = r + rows * c
    bad = np.argwhere(tab != expected)
    assert bad.size == 0, (
        f"{atom.name} {what}: {len(bad)} mismatches, first (thr,val)={tuple(bad[0])}: "
        f"layout gives {tab[tuple(bad[0])]}, PTX gives {expected[tuple(bad[0])]}")


def _ptx_shape(a):
    M, N, K = a.shape_mnk
    return f"m{M}n{N}k{K}"


@pytest.mark.parametrize("arch", [75, 80, 89])
def test_warp_mma_fragments_match_ptx(arch):
    atoms = [a for a in ATOMS if a.arch == arch]
    for a in atoms:
        M, N, K = a.shape_mnk
        assert a.thr_id == Layout(32) and np.array_equal(thread_lanes(a), np.arange(32)), a.name
        shp, kind = _ptx_shape(a), _kind(a)
        _compare(a, a.a_layout, PTX[(shp, kind, "A")], M, "A")
        _compare(a, a.b_layout, PTX[(shp, kind, "B")], N, "B", b_operand=True)
        _compare(a, a.c_layout, c_m16n8 if M == 16 else c_m8n8, M, "C")


def test_warp_mma_fragment_coverage():
    """The families checked against the PTX formulas are the ones the brief lists."""
    seen = {(a.arch, _ptx_shape(a), _kind(a)) for a in ATOMS if a.arch in (75, 80, 89)}
    assert seen == {
        (75, "m16n8k8", "16b"), (75, "m8n8k16", "8b"),
        (80, "m16n8k8", "16b"), (80, "m16n8k16", "16b"), (80, "m16n8k4", "32b"), (80, "m16n8k8", "32b"),
        (80, "m8n8k4", "64b"), (80, "m8n8k16", "8b"), (80, "m16n8k16", "8b"), (80, "m16n8k32", "8b"),
        (89, "m16n8k32", "8b"),
    }


def test_sm70_quad_pair_fragments_match_ptx():
    atoms = [a for a in ATOMS if a.arch == 70]
    assert len(atoms) == 8
    for a in atoms:
        # logical thread t is lane t%4 + 16*(t//4)
        assert thread_lanes(a).tolist() == [t % 4 + 16 * (t // 4) for t in range(8)], a.name
        majors = a.name[-2:]
        a_ptx = "row" if majors[0] == "T" else "col"
        b_ptx = "col" if majors[1] == "N" else "row"
        assert f".m8n8k4.{a_ptx}.{b_ptx}." in a.ptx, a.name
        _compare(a, a.a_layout, SM70[("A", a_ptx)], 8, "A")
        _compare(a, a.b_layout, SM70[("B", b_ptx)], 8, "B", b_operand=True)
        _compare(a, a.c_layout, SM70[("C", a.c_type.name)], 8, "C")


def test_sm70_majors():
    assert (get("SM70_8x8x4_F16F16F16F16_TN").a_major, get("SM70_8x8x4_F16F16F16F16_TN").b_major) == ("K", "K")
    assert (get("SM70_8x8x4_F16F16F16F16_NT").a_major, get("SM70_8x8x4_F16F16F16F16_NT").b_major) == ("MN", "MN")
    assert (get("SM70_8x8x4_F32F16F16F32_NN").a_major, get("SM70_8x8x4_F32F16F16F32_NN").b_major) == ("MN", "K")
    assert (get("SM70_8x8x4_F32F16F16F32_TT").a_major, get("SM70_8x8x4_F32F16F16F32_TT").b_major) == ("K", "MN")


def test_ptx_comparison_detects_a_wrong_layout():
    a = get("SM80_16x8x16_F16F16F16F16_TN")
    swapped = cute_py.parse("((4,8),(2,2,2)):((32,1),(8,16,128))")  # value modes 0/1 swapped
    with pytest.raises(AssertionError):
        _compare(a, swapped, PTX[("m16n8k16", "16b", "A")], 16, "A")


@pytest.mark.parametrize("n", list(range(8, 257, 8)))
def test_gmma_c_layout_matches_ptx(n):
    lay = gmma_c_layout(n)
    atoms = [a for a in ATOMS if a.arch == 90 and a.shape_mnk[1] == n]
    assert atoms
    for a in atoms:
        assert a.c_layout == lay, a.name
        assert a.thr_id == Layout(128), a.name
    _compare(atoms[0], lay, GMMA_PTX["C"], 64, "C")
    assert str(lay) == f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"


@pytest.mark.parametrize("k,inputs", [(16, ("f16", "bf16")), (8, ("tf32",)), (32, ("e4m3", "e5m2", "s8", "u8"))])
def test_gmma_rs_a_matches_ptx(k, inputs):
    atoms = [a for a in ATOMS if a.arch == 90 and a.a_source == "reg" and a.shape_mnk[2] == k]
    assert {a.a_type.name for a in atoms} == set(inputs)
    layouts = {a.a_layout for a in atoms}
    assert len(layouts) == 1
    _compare(atoms[0], atoms[0].a_layout, GMMA_PTX[("A", k)], 64, "A")
    # registers: 4 x 32-bit for every input type
    assert {a.regs["a"] for a in atoms} == {4}


def test_gmma_a_layouts_match_cute_traits():
    assert str(get("SM90_64x64x16_F32F16F16_RS").a_layout) == cpp("((_4,_8,_4),(_2,_2,_2)):((_128,_1,_16),(_64,_8,_512))")
    assert str(get("SM90_64x64x8_F32TF32TF32_RS_TN").a_layout) == cpp("((_4,_8,_4),(_2,_2)):((_64,_1,_16),(_8,_256))")
    assert str(get("SM90_64x64x32_F32E4M3E4M3_RS_TN").a_layout) == cpp(
        "((_4,_8,_4),(_4,_2,_2)):((_256,_1,_16),(_64,_8,_1024))")
    assert str(get("SM90_64x64x16_F32F16F16_SS").a_layout) == cpp("(_128,(_64,_16)):(_0,(_1,_64))")
    assert str(get("SM90_64x128x16_F32F16F16_SS").b_layout) == cpp("(_128,(_128,_16)):(_0,(_1,_128))")


# ---------------------------------------------------------------------------
# CuTe trait layouts (printed C++ values)

CUTE_TRAITS = {
    # name: (ThrID, Shape_MNK, A, B, C)
    "SM70_8x8x4_F16F16F16F16_TN": ("(_4,_2):(_1,_16)", "(_8,_8,_4)", "(_8,_4):(_1,_8)", "(_8,_4):(_1,_8)",
                                   "(_8,_8):(_1,_8)"),
    "SM70_8x8x4_F32F16F16F32_NT": ("(_4,_2):(_1,_16)", "(_8,_8,_4)", "((_4,_2),_4):((_8,_4),_1)",
                                   "((_4,_2),_4):((_8,_4),_1)",
                                   "((_2,_2,_2),(_2,_2,_2)):((_1,_16,_4),(_8,_2,_32))"),
    "SM75_16x8x8_F32F16F16F32_TN": ("_32:_1", "(_16,_8,_8)", "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))",
                                    "((_4,_8),_2):((_16,_1),_8)", "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM75_8x8x16_S32S8S8S32_TN": ("_32:_1", "(_8,_8,_16)", "((_4,_8),_4):((_32,_1),_8)",
                                  "((_4,_8),_4):((_32,_1),_8)", "((_4,_8),_2):((_16,_1),_8)"),
    "SM80_16x8x16_F16F16F16F16_TN": ("_32:_1", "(_16,_8,_16)", "((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))",
                                     "((_4,_8),(_2,_2)):((_16,_1),(_8,_64))",
                                     "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM80_16x8x4_F32TF32TF32F32_TN": ("_32:_1", "(_16,_8,_4)", "((_4,_8),_2):((_16,_1),_8)",
                                      "((_4,_8),_1):((_8,_1),_0)", "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM80_16x8x8_F32TF32TF32F32_TN": ("_32:_1", "(_16,_8,_8)", "((_4,_8),(_2,_2)):((_16,_1),(_8,_64))",
                                      "((_4,_8),_2):((_8,_1),_32)", "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM80_8x8x4_F64F64F64F64_TN": ("_32:_1", "(_8,_8,_4)", "((_4,_8),_1):((_8,_1),_0)",
                                   "((_4,_8),_1):((_8,_1),_0)", "((_4,_8),_2):((_16,_1),_8)"),
    "SM80_16x8x16_S32S8S8S32_TN": ("_32:_1", "(_16,_8,_16)", "((_4,_8),(_4,_2)):((_64,_1),(_16,_8))",
                                   "((_4,_8),_4):((_32,_1),_8)", "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM80_16x8x32_S32U8S8S32_TN_SATURATE": ("_32:_1", "(_16,_8,_32)",
                                            "((_4,_8),(_4,_2,_2)):((_64,_1),(_16,_8,_256))",
                                            "((_4,_8),(_4,_2)):((_32,_1),(_8,_128))",
                                            "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    "SM89_16x8x32_F32E4M3E5M2F32_TN": ("_32:_1", "(_16,_8,_32)", "((_4,_8),(_4,_2,_2)):((_64,_1),(_16,_8,_256))",
                                       "((_4,_8),(_4,_2)):((_32,_1),(_8,_128))",
                                       "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
}


@pytest.mark.parametrize("name", sorted(CUTE_TRAITS))
def test_layouts_equal_cute_traits(name):
    thr, shp, A, B, C = CUTE_TRAITS[name]
    a = get(name)
    assert str(a.thr_id) == cpp(thr)
    assert "(" + ",".join(map(str, a.shape_mnk)) + ")" == cpp(shp)
    # compare as functions (CuTe may print a size-1 mode as `_1:_0` or `_1:_1`)
    for mine, ref in ((a.a_layout, A), (a.b_layout, B), (a.c_layout, C)):
        assert np.array_equal(tv_table(mine), tv_table(cute_py.parse(cpp(ref)))), (name, str(mine), ref)


def test_sm80_16x8x16_f16_printed_vector():
    """The C++ print of MMA_Atom<SM80_16x8x16_F16F16F16F16_TN> (underscores removed)."""
    a = get("SM80_16x8x16_F16F16F16F16_TN")
    lines = str(a).splitlines()
    assert lines[0].startswith("MMA_Atom")
    assert lines[1:] == [
        cpp("  ThrID:      _32:_1"),
        cpp("  Shape_MNK:  (_16,_8,_16)"),
        cpp("  LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))"),
        cpp("  LayoutB_TV: ((_4,_8),(_2,_2)):((_16,_1),(_8,_64))"),
        cpp("  LayoutC_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))"),
    ]


def test_str_format_gmma():
    s = str(get("SM90_64x128x16_F32BF16BF16_SS"))
    assert s.endswith("\n")
    lines = s.splitlines()
    assert lines[0].startswith("MMA_Atom")
    assert lines[1] == "  ThrID:      128:1"
    assert lines[2] == "  Shape_MNK:  (64,128,16)"
    assert lines[3] == "  LayoutA_TV: (128,(64,16)):(0,(1,64))"
    assert lines[4] == "  LayoutB_TV: (128,(128,16)):(0,(1,128))"
    assert lines[5] == "  LayoutC_TV: ((4,8,4),(2,2,16)):((128,1,16),(64,8,512))"
    assert len(lines) == 6


# ---------------------------------------------------------------------------
# Names, PTX and register counts

PTX_TABLE = {
    "SM70_8x8x4_F16F16F16F16_TN": "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16",
    "SM70_8x8x4_F16F16F16F16_NT": "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16",
    "SM70_8x8x4_F32F16F16F32_NN": "mma.sync.aligned.m8n8k4.col.col.f32.f16.f16.f32",
    "SM70_8x8x4_F32F16F16F32_TT": "mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32",
    "SM75_16x8x8_F16F16F16F16_TN": "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
    "SM75_16x8x8_F32F16F16F32_TN": "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
    "SM75_8x8x16_S32S8S8S32_TN": "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",
    "SM80_16x8x8_F16F16F16F16_TN": "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
    "SM80_16x8x8_F32BF16BF16F32_TN": "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
    "SM80_16x8x16_F32F16F16F32_TN": "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    "SM80_16x8x16_F32BF16BF16F32_TN": "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    "SM80_16x8x4_F32TF32TF32F32_TN": "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
    "SM80_16x8x8_F32TF32TF32F32_TN": "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    "SM80_8x8x4_F64F64F64F64_TN": "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
    "SM80_8x8x16_S32U8S8S32_TN": "mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32",
    "SM80_16x8x16_S32S8U8S32_TN": "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32",
    "SM80_16x8x32_S32S8U8S32_TN": "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32",
    "SM80_16x8x32_S32S8S8S32_TN_SATURATE": "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32.satfinite",
    "SM89_16x8x32_F32E4M3E4M3F32_TN": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
    "SM89_16x8x32_F32E4M3E5M2F32_TN": "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32",
    "SM89_16x8x32_F16E5M2E4M3F16_TN": "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16",
    "SM90_64x128x16_F32BF16BF16_SS": "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
    "SM90_64x8x16_F32BF16BF16_RS": "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16",
    "SM90_64x256x16_F16F16F16_SS": "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16",
    "SM90_64x64x16_F32F16F16_RS": "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
    "SM90_64x64x8_F32TF32TF32_SS_TN": "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
    "SM90_64x96x32_F32E4M3E5M2_RS_TN": "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e5m2",
    "SM90_64x200x32_F16E5M2E5M2_SS_TN": "wgmma.mma_async.sync.aligned.m64n200k32.f16.e5m2.e5m2",
    "SM90_64x128x32_S32S8S8_SS_TN_SATURATE": "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8.satfinite",
    "SM90_64x24x32_S32U8S8_RS_TN": "wgmma.mma_async.sync.aligned.m64n24k32.s32.u8.s8",
}


@pytest.mark.parametrize("name", sorted(PTX_TABLE))
def test_names_and_ptx(name):
    a = get(name)
    assert a.name == name
    assert a.ptx == PTX_TABLE[name]


def test_ptx_strings_follow_the_name_for_every_atom():
    for a in ATOMS:
        M, N, K = a.shape_mnk
        d, x, y = a.c_type.ptx, a.a_type.ptx, a.b_type.ptx
        sat = ".satfinite" if a.saturate else ""
        if a.arch == 90:
            assert a.ptx == f"wgmma.mma_async.sync.aligned.m64n{N}k{K}.{d}.{x}.{y}{sat}", a.name
        elif a.arch == 70:
            assert a.ptx.startswith("mma.sync.aligned.m8n8k4.") and a.ptx.endswith(f".{d}.f16.f16.{d}"), a.name
        else:
            assert a.ptx == f"mma.sync.aligned.m{M}n{N}k{K}.row.col.{d}.{x}.{y}.{d}{sat}", a.name


REGS = {
    "SM70_8x8x4_F16F16F16F16_TN": (2, 2, 4),
    "SM70_8x8x4_F32F16F16F32_NT": (2, 2, 8),
    "SM75_16x8x8_F32F16F16F32_TN": (2, 1, 4),
    "SM75_16x8x8_F16F16F16F16_TN": (2, 1, 2),
    "SM75_8x8x16_S32S8S8S32_TN": (1, 1, 2),
    "SM80_16x8x8_F16F16F16F16_TN": (2, 1, 2),
    "SM80_16x8x8_F32BF16BF16F32_TN": (2, 1, 4),
    "SM80_16x8x16_F16F16F16F16_TN": (4, 2, 2),
    "SM80_16x8x16_F32F16F16F32_TN": (4, 2, 4),
    "SM80_16x8x16_F32BF16BF16F32_TN": (4, 2, 4),
    "SM80_16x8x4_F32TF32TF32F32_TN": (2, 1, 4),
    "SM80_16x8x8_F32TF32TF32F32_TN": (4, 2, 4),
    "SM80_8x8x4_F64F64F64F64_TN": (2, 2, 4),  # 1, 1, 2 double registers
    "SM80_8x8x16_S32S8S8S32_TN": (1, 1, 2),
    "SM80_16x8x16_S32U8U8S32_TN": (2, 1, 4),
    "SM80_16x8x32_S32S8S8S32_TN_SATURATE": (4, 2, 4),
    "SM89_16x8x32_F32E4M3E4M3F32_TN": (4, 2, 4),
    "SM89_16x8x32_F16E4M3E5M2F16_TN": (4, 2, 2),
}


@pytest.mark.parametrize("name", sorted(REGS))
def test_register_counts(name):
    a, b, c = REGS[name]
    assert get(name).regs == {"a": a, "b": b, "c": c}


def test_gmma_register_counts():
    for a in ATOMS:
        if a.arch != 90:
            continue
        n = a.shape_mnk[1]
        expected_c = n // 4 if a.c_type.name == "f16" else n // 2
        assert a.regs == {"a": 4 if a.a_source == "reg" else 0, "b": 0, "c": expected_c}, a.name
        # every thread holds N/2 accumulators whatever the type
        assert product(a.c_layout.shape[1]) == n // 2, a.name


def test_constructors_build_the_named_atoms():
    assert sm80_mma(16, 8, 16, "f32", "bf16", "bf16") == get("SM80_16x8x16_F32BF16BF16F32_TN")
    assert sm80_mma(16, 8, 32, "s32", "s8", "u8", saturate=True).name == "SM80_16x8x32_S32S8U8S32_TN_SATURATE"
    assert sm75_mma(8, 8, 16, "s32", "s8", "s8").name == "SM75_8x8x16_S32S8S8S32_TN"
    assert sm70_mma("f32", majors="NN").name == "SM70_8x8x4_F32F16F16F32_NN"
    assert sm89_mma("f16", "e5m2", "e5m2").name == "SM89_16x8x32_F16E5M2E5M2F16_TN"
    assert gmma(128, "f32", "bf16", "bf16").name == "SM90_64x128x16_F32BF16BF16_SS"
    assert gmma(128, "f32", "bf16", "bf16", a_source="reg").name == "SM90_64x128x16_F32BF16BF16_RS"
    assert gmma(64, "f32", "tf32", "tf32").name == "SM90_64x64x8_F32TF32TF32_SS_TN"
    assert gmma(64, "s32", "u8", "u8", saturate=True).name == "SM90_64x64x32_S32U8U8_SS_TN_SATURATE"
    assert gmma(64, "f32", "e4m3", "e4m3").shape_mnk == (64, 64, 32)
    # dtype objects work like names
    assert sm80_mma(16, 8, 16, dtype("f32"), dtype("bf16"), dtype("bf16")) == get("SM80_16x8x16_F32BF16BF16F32_TN")
    # atoms are immutable and hashable
    a = get("SM80_16x8x16_F32BF16BF16F32_TN")
    assert hash(a) == hash(sm80_mma(16, 8, 16, "f32", "bf16", "bf16"))
    with pytest.raises(Exception):
        a.name = "x"


def test_gmma_mn_major():
    a = get("SM90_64x128x16_F32BF16BF16_SS", a_major="MN", b_major="MN")
    assert (a.a_major, a.b_major) == ("MN", "MN")
    assert a == gmma(128, "f32", "bf16", "bf16", a_major="MN", b_major="MN")
    assert a != get("SM90_64x128x16_F32BF16BF16_SS")
    # the layouts of a descriptor operand do not depend on the major
    assert a.a_layout == get("SM90_64x128x16_F32BF16BF16_SS").a_layout
    b = get("SM90_64x64x16_F16F16F16_RS", b_major="MN")
    assert (b.a_major, b.b_major, b.a_source) == ("K", "MN", "reg")


# ---------------------------------------------------------------------------
# get / find

def test_get_round_trip_every_atom():
    for a in ATOMS:
        assert get(a.name) == a, a.name


def test_find_by_arch_types_shape():
    assert [x.name for x in find(arch=80, a="tf32")] == ["SM80_16x8x4_F32TF32TF32F32_TN",
                                                          "SM80_16x8x8_F32TF32TF32F32_TN"]
    assert [x.name for x in find(arch=90, d="f32", a="bf16", shape_mnk=(64, 256, 16))] == [
        "SM90_64x256x16_F32BF16BF16_RS", "SM90_64x256x16_F32BF16BF16_SS"]
    assert len(find(arch=70)) == 8
    assert {x.name for x in find(arch=89, d="f16")} == {
        f"SM89_16x8x32_F16{a}{b}F16_TN" for a in ("E4M3", "E5M2") for b in ("E4M3", "E5M2")}
    assert [x.name for x in find(arch=80, a="s8", b="u8", shape_mnk=(16, 8, 32))] == [
        "SM80_16x8x32_S32S8U8S32_TN", "SM80_16x8x32_S32S8U8S32_TN_SATURATE"]
    assert len(find(arch=90, a="tf32", a_source="reg")) == 32
    assert len(find(arch=90, d="s32", shape_mnk=(64, 40, 32))) == 0
    assert [x.name for x in find(a=dtype("f64"))] == ["SM80_8x8x4_F64F64F64F64_TN"]
    assert {x.arch for x in find(shape_mnk=[16, 8, 32], a="e4m3")} == {89}
    assert find(arch=75, d="f32", a="f16", b="f16", shape_mnk=(16, 8, 8)) == [get("SM75_16x8x8_F32F16F16F32_TN")]
    assert find() == list(ATOMS)
    assert find(arch=61) == []


def test_find_results_satisfy_criteria():
    res = find(arch=90, d="f16", a_source="smem")
    assert res and res == sorted(res, key=lambda x: x.name)
    for x in res:
        assert x.arch == 90 and x.c_type.name == "f16" and x.a_source == "smem"
    assert len(res) == 32 * (1 + 4)  # f16 x f16 inputs, and 4 fp8 pairs, for each N


def test_get_returns_copy_ops_too():
    assert get("SM75_U32x4_LDSM_N").ptx == "ldmatrix.sync.aligned.x4.m8n8.shared.b16"


# ---------------------------------------------------------------------------
# Errors

def _raises_atom_error(fn, *words):
    with pytest.raises(AtomError) as ei:
        fn()
    msg = str(ei.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return ei.value


def test_atom_error_is_a_layout_error():
    assert issubclass(AtomError, LayoutError)
    assert issubclass(AtomError, ValueError)
    assert cute_py.atoms.AtomError is AtomError


@pytest.mark.parametrize("name", [
    "SM80_16x8x16_F32F16F16F32_NT",       # SM80 ops are TN only
    "SM80_16x8x16_F32F16F16F16_TN",       # D != C
    "SM80_16x8x16_F32F16F16_TN",          # three types
    "SM80_16x8x16_F32F16F16F32F32_TN",
    "SM75_16x8x8_F32F16F16F32_TN_SATURATE",
    "SM70_8x8x4_F32F16F16F16_TN",
    "SM61_DP4A",
    "SM90_64x128x16_F32BF16BF16_XS",
    "SM90_64x128x32_F32E4M3E4M3_SS",      # fp8 GMMA needs _TN
    "SM90_64x128x16_F32BF16BF16_SS_TN",   # 16-bit GMMA has no _TN
    "SM90_64x128x32_F32BF16BF16_SS",      # K follows the type
    "hello",
    "",
])
def test_get_unknown_names(name):
    _raises_atom_error(lambda: get(name), repr(name))


@pytest.mark.parametrize("name", [
    "SM70_8x8x4_F16F16_TN",               # two type tokens
    "SM90_64x128x16_F32BF16_SS",          # two type tokens
    "SM90_64x128x16_F32BF16BF16BF16_SS",  # four type tokens
])
def test_get_malformed_type_lists_raise_atom_error(name):
    """A name with the wrong number of element types is an unknown name (AtomError), not a crash."""
    _raises_atom_error(lambda: get(name))


def test_get_unknown_element_type_token():
    _raises_atom_error(lambda: get("SM80_16x8x16_F32X16X16F32_TN"))
    _raises_atom_error(lambda: get("SM90_64x64x16_F32Q16Q16_SS"))


def test_get_majors_only_for_gmma():
    _raises_atom_error(lambda: get("SM80_16x8x16_F32BF16BF16F32_TN", a_major="MN"), "GMMA")


@pytest.mark.parametrize("n", [0, 4, 12, 100, 260, 264, 512])
def test_gmma_bad_n(n):
    _raises_atom_error(lambda: gmma(n, "f32", "bf16", "bf16"), "N", str(n))
    _raises_atom_error(lambda: get(f"SM90_64x{n}x16_F32BF16BF16_SS"), str(n))


@pytest.mark.parametrize("n", [40, 56, 72, 200, 248])
def test_gmma_int_n(n):
    _raises_atom_error(lambda: gmma(n, "s32", "s8", "s8"), "N", str(n))
    _raises_atom_error(lambda: get(f"SM90_64x{n}x32_S32S8S8_SS_TN"), str(n))
    assert gmma(n, "f32", "e4m3", "e4m3").shape_mnk == (64, n, 32)  # fp8 allows them
    assert gmma(n + 8, "s32", "s8", "s8").shape_mnk == (64, n + 8, 32)


def test_gmma_major_errors():
    _raises_atom_error(lambda: gmma(64, "f32", "bf16", "bf16", a_source="reg", a_major="MN"), "K-major")
    _raises_atom_error(lambda: get("SM90_64x64x16_F32BF16BF16_RS", a_major="MN"), "K-major")
    _raises_atom_error(lambda: gmma(64, "f32", "tf32", "tf32", b_major="MN"), "MN")
    _raises_atom_error(lambda: gmma(64, "f32", "tf32", "tf32", a_major="MN"), "MN")
    _raises_atom_error(lambda: gmma(64, "f32", "e4m3", "e4m3", b_major="MN"), "MN")
    _raises_atom_error(lambda: gmma(64, "s32", "s8", "s8", a_major="MN"), "MN")
    _raises_atom_error(lambda: gmma(64, "f32", "bf16", "bf16", a_major="M"), "'M'")
    _raises_atom_error(lambda: gmma(64, "f32", "bf16", "bf16", a_source="tmem"), "tmem")


@pytest.mark.parametrize("fn,words", [
    (lambda: sm80_mma(16, 8, 16, "f32", "f16", "bf16"), ("f16", "bf16")),
    (lambda: sm80_mma(16, 8, 16, "f16", "bf16", "bf16"), ("bf16",)),
    (lambda: sm80_mma(16, 8, 8, "f32", "f32", "f32"), ()),
    (lambda: sm80_mma(16, 8, 8, "f64", "tf32", "tf32"), ("f64",)),
    (lambda: sm80_mma(16, 8, 32, "s32", "e4m3", "e4m3"), ("e4m3",)),
    (lambda: sm80_mma(16, 8, 12, "f32", "f16", "f16"), ("16x8x12",)),
    (lambda: sm80_mma(16, 8, 16, "f32", "tf32", "tf32"), ("16x8x16",)),
    (lambda: sm80_mma(16, 8, 16, "f32", "f16", "f16", saturate=True), ("satur",)),
    (lambda: sm75_mma(8, 8, 16, "s32", "u8", "s8"), ("u8",)),
    (lambda: sm75_mma(16, 8, 16, "f32", "f16", "f16"), ("16x8x16",)),
    (lambda: sm89_mma("f32", "s8", "s8"), ("s8",)),
    (lambda: sm89_mma("s32", "e4m3", "e4m3"), ("s32",)),
    (lambda: sm70_mma("f32", "bf16", "bf16"), ("bf16",)),
    (lambda: sm70_mma("f16", majors="XY"), ("XY",)),
    (lambda: gmma(64, "f16", "bf16", "bf16"), ("bf16",)),
    (lambda: gmma(64, "f32", "f64", "f64"), ("f64",)),
    (lambda: gmma(64, "s32", "e4m3", "e4m3"), ("e4m3",)),
    (lambda: gmma(64, "f32", "bf16", "bf16", saturate=True), ("satur",)),
])
def test_bad_parameter_combinations(fn, words):
    _raises_atom_error(fn, *words)


@pytest.mark.parametrize("bad", [123, None, 1.5, b"SM80_16x8x16_F32BF16BF16F32_TN", ("SM80",)])
def test_get_bad_type(bad):
    with pytest.raises(TypeError):
        get(bad)
