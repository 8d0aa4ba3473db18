"""Copy ops and copy atoms (``cute_py.atoms.copy``) against the PTX ISA and CuTe's printed traits.

A :class:`CopyOp`'s layouts map ``(thread, value)`` to a bit of an abstract
numbering shared by source and destination. For ldmatrix/stmatrix the bit
numbering is CuTe's: 8x8 b16 matrix ``j`` occupies bits ``1024*j ..``, its row
``r`` bits ``128*r ..`` and column ``c`` bits ``16*c ..`` (16 bits per element).

The PTX ISA (ldmatrix, 9.7.14.5.15; stmatrix, 9.7.14.5.16), restated:

* the address of row ``r`` of matrix ``j`` is supplied by lane ``8j + r``
  (x1: lanes 0-7, x2: lanes 0-15; the other lanes' addresses are ignored);
* without ``.trans``, register ``j`` of lane ``l`` holds matrix ``j``'s
  elements (row ``l >> 2``, col ``2*(l%4) + e``), ``e`` = 0 for the low half;
* with ``.trans`` it holds (row ``2*(l%4) + e``, col ``l >> 2``).

A :class:`CopyAtom` (``Copy_Atom<Op, T>``) has the bit layouts upcast by the
element width; the C++ prints for ``half_t`` are compared verbatim.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cute_py
from cute_py import Layout, LayoutError
from cute_py.atoms import (
    AtomError, CopyAtom, CopyOp, all_copy_ops, cp_async, get, get_copy_op, ldmatrix, make_copy_atom,
    stmatrix, tma, universal_copy,
)
from cute_py.int_tuple import product
from oracle import cpp, flat, tv_table

OPS = all_copy_ops()


def test_tv_table_helper():
    L = cute_py.parse("((8,4),128):((128,0),1)")
    tab = tv_table(L)
    assert tab.shape == (32, 128)
    assert tab[9, 3] == 128 + 3 and tab[17, 0] == 128


# ---------------------------------------------------------------------------
# Inventory and per-op consistency

def test_all_copy_ops_inventory():
    names = [op.name for op in OPS]
    assert len(names) == len(set(names))
    assert set(names) == {
        "UniversalCopy<uint8_t>", "UniversalCopy<uint16_t>", "UniversalCopy<uint32_t>",
        "UniversalCopy<uint64_t>", "UniversalCopy<uint128_t>",
        "SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
        "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T",
        "SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N",
        "SM90_U16x2_STSM_T", "SM90_U16x4_STSM_T", "SM90_U16x8_STSM_T",
        "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>",
        "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
        "SM90_TMA_LOAD<131072>", "SM90_TMA_LOAD_MULTICAST<131072>", "SM90_TMA_STORE<131072>",
    }
    assert all(isinstance(op, CopyOp) for op in OPS)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_bit_layouts_consistent(op):
    T = op.num_threads
    assert T == product(op.thr_id.shape)
    lanes = [op.thr_id(t) for t in range(T)]
    assert len(set(lanes)) == T
    src, dst, ref = tv_table(op.src_bits), tv_table(op.dst_bits), tv_table(op.ref_bits)
    # every layout has one thread mode entry per thread of the op
    assert src.shape[0] == dst.shape[0] == ref.shape[0] == T
    # threads x bits equal between src and dst (and ref), counting lanes whose thread stride
    # is 0 (ldmatrix x1/x2 lanes that supply no address) once
    def distinct_thread_bits(tab):
        return len({tuple(r) for r in tab.tolist()}) * tab.shape[1]

    assert distinct_thread_bits(src) == distinct_thread_bits(dst) == distinct_thread_bits(ref)
    if all(d != 0 for d in flat(op.src_bits.stride[0]) + flat(op.dst_bits.stride[0])):
        assert src.size == dst.size == ref.size
    # the reference is one of the two sides
    assert op.ref_bits in (op.src_bits, op.dst_bits)
    # both sides name the same set of bits, each exactly once on the register side
    assert set(np.unique(src).tolist()) == set(np.unique(dst).tolist())
    n_bits = len(np.unique(src))
    assert np.array_equal(np.unique(src), np.arange(n_bits))
    if "LDSM" in op.name:
        assert op.ref_bits == op.dst_bits
        assert (op.src_space, op.dst_space) == ("smem", "reg")
        assert np.array_equal(np.sort(dst.ravel()), np.arange(dst.size))  # every bit delivered once
    elif "STSM" in op.name:
        assert op.ref_bits == op.src_bits
        assert (op.src_space, op.dst_space) == ("reg", "smem")
        assert np.array_equal(np.sort(src.ravel()), np.arange(src.size))
    else:
        assert T == 1 and str(op.thr_id) == cpp("_1:_0")
        assert op.src_bits == op.dst_bits == op.ref_bits
        bits = product(op.src_bits.shape[1])
        assert str(op.src_bits) == f"(1,{bits}):(0,1)"


def test_single_thread_op_spaces():
    assert (universal_copy(32).src_space, universal_copy(32).dst_space) == ("reg", "reg")
    assert (cp_async(128).src_space, cp_async(128).dst_space) == ("gmem", "smem")
    assert (tma("load", 1024).src_space, tma("load", 1024).dst_space) == ("gmem", "smem")
    assert (tma("load_multicast", 1024).src_space, tma("load_multicast", 1024).dst_space) == ("gmem", "smem")
    assert (tma("store", 1024).src_space, tma("store", 1024).dst_space) == ("smem", "gmem")


# ---------------------------------------------------------------------------
# ldmatrix / stmatrix against the PTX description

def _lanes_bits(n_bits):
    lane = np.arange(32, dtype=np.int64)[:, None]
    b = np.arange(n_bits, dtype=np.int64)[None, :]
    return lane, b


def ptx_ldsm_dst(num, trans):
    """Expected bit for (lane l, value bit v = b + 32*j): register j of lane l, bit b of it."""
    lane, v = _lanes_bits(32 * num)
    j, b = v // 32, v % 32
    e, b16 = b // 16, b % 16  # element e = 0 is the low half of the register
    if trans:
        row, col = 2 * (lane % 4) + e, lane >> 2
    else:
        row, col = lane >> 2, 2 * (lane % 4) + e
    return 1024 * j + 128 * row + 16 * col + b16


def ptx_ldsm_src(num):
    """Expected bit for (lane l, bit b of its 128-bit row): lane 8j+r addresses row r of matrix j.

    Lanes >= 8*num are unused; their thread stride is 0, so they alias lane l % (8*num).
    """
    lane, b = _lanes_bits(128)
    j, r = np.divmod(lane % (8 * num), 8)
    return 1024 * j + 128 * r + b


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches_ptx(num, trans):
    op = ldmatrix(num, trans)
    assert op.thr_id == Layout(32)
    dst = tv_table(op.dst_bits)
    assert dst.shape == (32, 32 * num)
    assert np.array_equal(dst, ptx_ldsm_dst(num, trans))
    src = tv_table(op.src_bits)
    assert src.shape == (32, 128)
    assert np.array_equal(src, ptx_ldsm_src(num))
    # the active lanes address distinct rows; the inactive ones have thread stride 0
    active = src[: 8 * num]
    assert len({tuple(r) for r in active.tolist()}) == 8 * num
    if num < 4:
        thr_leaves = list(zip(flat(op.src_bits.shape[0]), flat(op.src_bits.stride[0])))
        assert thr_leaves[-1][1] == 0 and math.prod(s for s, _ in thr_leaves[:-1]) == 8 * num


def test_ldmatrix_trans_is_the_transpose():
    """With .trans, lane l gets at (row, col) what it gets at (col, row) without it."""
    for num in (1, 2, 4):
        n, t = ptx_ldsm_dst(num, False), tv_table(ldmatrix(num, True).dst_bits)
        j, rc = n // 1024, n % 1024
        row, col, b16 = rc // 128, (rc % 128) // 16, rc % 16
        assert np.array_equal(t, 1024 * j + 128 * col + 16 * row + b16)


def test_ldmatrix_layouts_match_cute_traits():
    expected = {
        "SM75_U32x1_LDSM_N": ("((_8,_4),_128):((_128,_0),_1)", "(_32,_32):(_32,_1)"),
        "SM75_U32x2_LDSM_N": ("((_16,_2),_128):((_128,_0),_1)", "(_32,(_32,_2)):(_32,(_1,_1024))"),
        "SM75_U32x4_LDSM_N": ("(_32,_128):(_128,_1)", "(_32,(_32,_4)):(_32,(_1,_1024))"),
        "SM75_U16x2_LDSM_T": ("((_8,_4),_128):((_128,_0),_1)", "((_4,_8),(_16,_2)):((_256,_16),(_1,_128))"),
        "SM75_U16x4_LDSM_T": ("((_16,_2),_128):((_128,_0),_1)",
                              "((_4,_8),(_16,_2,_2)):((_256,_16),(_1,_128,_1024))"),
        "SM75_U16x8_LDSM_T": ("(_32,_128):(_128,_1)", "((_4,_8),(_16,_2,_4)):((_256,_16),(_1,_128,_1024))"),
    }
    for name, (src, dst) in expected.items():
        op = get_copy_op(name)
        assert (str(op.src_bits), str(op.dst_bits), str(op.ref_bits)) == (cpp(src), cpp(dst), cpp(dst)), name


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_is_ldmatrix_reversed(num, trans):
    ld, st = ldmatrix(num, trans), stmatrix(num, trans)
    assert st.src_bits == ld.dst_bits and st.dst_bits == ld.src_bits
    assert st.ref_bits == st.src_bits  # Ref = Src (the register side)
    assert st.thr_id == ld.thr_id
    assert st.name == ld.name.replace("SM75", "SM90").replace("LDSM", "STSM")
    assert st.ptx == ld.ptx.replace("ldmatrix", "stmatrix")
    assert st.arch == 90 and ld.arch == 75


def test_ldmatrix_names_and_ptx():
    table = {
        (1, False): ("SM75_U32x1_LDSM_N", "ldmatrix.sync.aligned.x1.m8n8.shared.b16"),
        (2, False): ("SM75_U32x2_LDSM_N", "ldmatrix.sync.aligned.x2.m8n8.shared.b16"),
        (4, False): ("SM75_U32x4_LDSM_N", "ldmatrix.sync.aligned.x4.m8n8.shared.b16"),
        (1, True): ("SM75_U16x2_LDSM_T", "ldmatrix.sync.aligned.x1.trans.m8n8.shared.b16"),
        (2, True): ("SM75_U16x4_LDSM_T", "ldmatrix.sync.aligned.x2.trans.m8n8.shared.b16"),
        (4, True): ("SM75_U16x8_LDSM_T", "ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16"),
    }
    for (num, trans), (name, ptx) in table.items():
        op = ldmatrix(num, trans)
        assert (op.name, op.ptx) == (name, ptx)
        st = stmatrix(num, trans)
        assert st.name == name.replace("SM75", "SM90").replace("LDSM", "STSM")
        assert st.ptx == ptx.replace("ldmatrix", "stmatrix")
    assert stmatrix(4, True).ptx == "stmatrix.sync.aligned.x4.trans.m8n8.shared.b16"
    assert str(stmatrix(1).dst_bits) == cpp("((_8,_4),_128):((_128,_0),_1)")


# ---------------------------------------------------------------------------
# Copy atoms: element layouts

def test_copy_atom_half_prints_match_cpp():
    a = make_copy_atom("SM75_U32x4_LDSM_N", "f16")
    assert isinstance(a, CopyAtom)
    assert str(a.src_layout) == cpp("(_32,_8):(_8,_1)")
    assert str(a.dst_layout) == cpp("(_32,(_2,_4)):(_2,(_1,_64))")
    assert str(a.ref_layout) == cpp("(_32,(_2,_4)):(_2,(_1,_64))")
    t = make_copy_atom("SM75_U16x8_LDSM_T", "f16")
    assert str(t.src_layout) == cpp("(_32,_8):(_8,_1)")
    assert str(t.dst_layout) == cpp("((_4,_8),(_1,_2,_4)):((_16,_1),(_1,_8,_64))")  # the _1:_1 leaf is kept
    assert str(t.ref_layout) == str(t.dst_layout)
    for name in ("UniversalCopy<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>",
                 "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"):
        u = make_copy_atom(name, "f16")
        assert str(u.thr_id) == cpp("_1:_0")
        assert str(u.src_layout) == str(u.dst_layout) == str(u.ref_layout) == cpp("(_1,_8):(_0,_1)")
        assert u.num_values == 8 and u.num_threads == 1
    assert make_copy_atom("SM75_U32x4_LDSM_N", "bf16").num_values == 8
    assert make_copy_atom(get_copy_op("SM75_U32x1_LDSM_N"), "f16").num_values == 2


def test_copy_atom_str_format():
    s = str(make_copy_atom("SM75_U32x4_LDSM_N", "f16"))
    assert s.endswith("\n")
    lines = s.splitlines()
    assert lines[0].startswith("Copy_Atom")
    assert lines[1:] == [
        "  ThrID:        32:1",
        "  ValLayoutSrc: (32,8):(8,1)",
        "  ValLayoutDst: (32,(2,4)):(2,(1,64))",
        "  ValLayoutRef: (32,(2,4)):(2,(1,64))",
        "  ValueType:    16b",
    ]
    assert str(make_copy_atom("UniversalCopy<uint64_t>", "f32")).splitlines()[-1] == "  ValueType:    32b"


def _whole_elements(bit_table, w):
    """True when every thread's bits are whole, aligned w-bit elements."""
    for row in bit_table:
        bits = np.unique(row)
        if len(bits) % w:
            return False
        elems = np.unique(bits // w)
        if len(elems) * w != len(bits):
            return False
    return True


ELEMENT_TYPES = ["s4", "u8", "f16", "bf16", "f32", "f64", "u128"]


@pytest.mark.parametrize("type_name", ELEMENT_TYPES)
def test_element_layouts_move_the_same_bits(type_name):
    """Copy_Atom<Op, T>: thread t's elements are exactly the w-bit elements its bits form.

    When some thread's bits do not form whole aligned elements of the type
    (an f64 split across two 32-bit ldmatrix registers, a u8 op with f16 ...),
    make_copy_atom must reject the pair with a LayoutError.
    """
    w = cute_py.layouts.dtypes.dtype(type_name).bits
    for op in OPS:
        bit_tables = [tv_table(b) for b in (op.src_bits, op.dst_bits, op.ref_bits)]
        ok = all(_whole_elements(tab, w) for tab in bit_tables)
        if not ok:
            with pytest.raises(LayoutError):
                make_copy_atom(op, type_name)
            continue
        atom = make_copy_atom(op, type_name)
        assert atom.value_type.bits == w and atom.name == op.name
        for bits_tab, elem in zip(bit_tables, (atom.src_layout, atom.dst_layout, atom.ref_layout)):
            assert product(elem.shape[0]) == op.num_threads, (op.name, type_name, str(elem))
            etab = tv_table(elem)
            assert etab.shape == (op.num_threads, bits_tab.shape[1] // w), (op.name, type_name, str(elem))
            for t in range(op.num_threads):
                assert sorted(etab[t].tolist()) == sorted(np.unique(bits_tab[t] // w).tolist()), (op.name, t)


def test_fractional_elements_raise_layout_error():
    with pytest.raises(LayoutError) as ei:
        make_copy_atom("UniversalCopy<uint8_t>", "f16")
    assert "fractional" in str(ei.value) or "element" in str(ei.value)
    with pytest.raises(LayoutError):
        make_copy_atom("SM75_U32x1_LDSM_N", "f64")      # 32 bits per thread
    with pytest.raises(LayoutError):
        make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "f64")


def test_f64_across_ldmatrix_registers_is_rejected():
    """ldmatrix x2/x4 gives each lane two or four 32-bit pieces 1024 bits apart: no f64 element."""
    with pytest.raises(LayoutError):
        make_copy_atom("SM75_U32x2_LDSM_N", "f64")
    with pytest.raises(LayoutError):
        make_copy_atom("SM75_U32x4_LDSM_N", "f64")


# ---------------------------------------------------------------------------
# cp.async, TMA, universal copy

def test_cp_async_names_and_ptx():
    for bits in (32, 64, 128):
        op = cp_async(bits)
        assert op.name == f"SM80_CP_ASYNC_CACHEALWAYS<uint{bits}_t>"
        assert op.ptx == "cp.async.ca.shared.global.L2::128B"
        assert str(op.src_bits) == f"(1,{bits}):(0,1)"
        assert op.arch == 80
    cg = cp_async(128, "global")
    assert cg.name == "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"
    assert cg.ptx == "cp.async.cg.shared.global.L2::128B"
    assert cp_async() == cp_async(128, "always")


@pytest.mark.parametrize("kind,base,ptx", [
    ("load", "SM90_TMA_LOAD", "cp.async.bulk.tensor.{r}d.shared::cluster.global.mbarrier::complete_tx::bytes"),
    ("load_multicast", "SM90_TMA_LOAD_MULTICAST",
     "cp.async.bulk.tensor.{r}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"),
    ("store", "SM90_TMA_STORE", "cp.async.bulk.tensor.{r}d.global.shared::cta.bulk_group"),
])
def test_tma_names_and_ptx(kind, base, ptx):
    bits = 64 * 128 * 16
    for r in (1, 2, 3, 4, 5):
        op = tma(kind, bits, rank=r)
        assert op.ptx == ptx.format(r=r)
        assert op.name == f"{base}<{bits}>"
    op = tma(kind, bits)
    assert op.ptx == ptx.format(r=2)
    assert str(op.src_bits) == str(op.dst_bits) == f"(1,{bits}):(0,1)"
    assert str(op.thr_id) == "1:0" and op.arch == 90
    atom = make_copy_atom(op, "f16")
    assert str(atom.src_layout) == f"(1,{64 * 128}):(0,1)"
    assert atom.num_values == 64 * 128


def test_universal_copy_names():
    for bits in (8, 16, 32, 64, 128):
        op = universal_copy(bits)
        assert op.name == f"UniversalCopy<uint{bits}_t>"
        assert str(op.src_bits) == str(op.dst_bits) == str(op.ref_bits) == f"(1,{bits}):(0,1)"
        assert op.num_threads == 1
    assert str(make_copy_atom("UniversalCopy<uint32_t>", "f32").src_layout) == "(1,1):(0,1)"
    assert str(make_copy_atom("UniversalCopy<uint64_t>", "f16").dst_layout) == "(1,4):(0,1)"


def test_get_copy_op_round_trip():
    for op in OPS:
        assert get_copy_op(op.name) == op, op.name
        assert get(op.name) == op, op.name
        assert make_copy_atom(op.name, "u8").op == op


# ---------------------------------------------------------------------------
# Errors

@pytest.mark.parametrize("fn", [
    lambda: universal_copy(24),
    lambda: universal_copy(4),
    lambda: universal_copy(256),
    lambda: cp_async(16),
    lambda: cp_async(256),
    lambda: cp_async(64, "global"),   # cp.async.cg moves 16 bytes only
    lambda: cp_async(32, "global"),
    lambda: cp_async(128, "streaming"),
    lambda: ldmatrix(3),
    lambda: ldmatrix(8),
    lambda: stmatrix(0),
    lambda: tma("prefetch", 1024),
    lambda: tma("load", 12),
    lambda: tma("load", 0),
    lambda: tma("load", 1024.0),
    lambda: tma("load", 1024, rank=6),
    lambda: tma("store", 1024, rank=0),
])
def test_bad_parameters_raise_layout_error(fn):
    with pytest.raises(LayoutError):
        fn()


def test_cg_message_names_the_problem():
    with pytest.raises(LayoutError) as ei:
        cp_async(64, "global")
    assert "16 bytes" in str(ei.value) and "64" in str(ei.value)
    with pytest.raises(LayoutError) as ei:
        universal_copy(24)
    assert "24" in str(ei.value)


@pytest.mark.parametrize("name", [
    "SM75_U16x4_LDSM_N",    # 16-bit element naming is the .trans form
    "SM75_U32x2_LDSM_T",
    "SM75_U32x3_LDSM_N",
    "SM75_U16x6_LDSM_T",
    "SM90_U32x4_LDSM_N",    # ldmatrix atoms are SM75
    "SM75_U32x4_STSM_N",    # stmatrix atoms are SM90
    "SM80_CP_ASYNC_CACHESTREAM<uint128_t>",
    "SM90_TMA_PREFETCH<1024>",
    "UniversalCopy<int32_t>",
    "nope",
])
def test_unknown_copy_op_names(name):
    with pytest.raises(AtomError) as ei:
        get_copy_op(name)
    assert repr(name) in str(ei.value)
    with pytest.raises(AtomError):
        get(name)
    with pytest.raises(AtomError):
        make_copy_atom(name, "f16")


def test_copy_names_with_bad_widths():
    with pytest.raises(LayoutError):
        get_copy_op("UniversalCopy<uint24_t>")
    with pytest.raises(LayoutError):
        get_copy_op("SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>")
    with pytest.raises(LayoutError):
        get_copy_op("SM90_TMA_LOAD<12>")


def test_make_copy_atom_bad_type():
    with pytest.raises(TypeError):
        make_copy_atom(42, "f16")
    with pytest.raises(TypeError):
        make_copy_atom(get("SM80_16x8x16_F16F16F16F16_TN"), "f16")  # an MMA atom is not a copy op
