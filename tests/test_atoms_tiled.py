"""TiledMMA / TiledCopy (``cute_py.atoms.tiled``): CuTe's printed vectors, coverage properties, partitions.

Exact values come from CuTe C++ prints (CUTE_REFERENCE.md §3.3 and third-party
logs of ``make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN{}, Layout<Shape<_2,_2>>{},
Tile<_32,_32,_16>{})`` and ``make_tiled_copy``). Properties:

* ``get_layoutC_TV`` is a bijection from (thread, value) onto the (M,N) tile;
  ``get_layoutA_TV`` covers the (M,K) tile with each element held by (threads
  along N) x (atom threads that share an element: 1 for registers, all of them
  for a shared-memory descriptor operand) pairs; B likewise with threads along M;
* a thread's tiled values are its atom values shifted to its atom's tile;
* partitions of an identity tensor over all threads cover the tensor (C once,
  A ThrN-fold), and partitions of a data tensor pick the elements at the
  identity partition's coordinates.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import cute_py
from cute_py import Layout, LayoutError, _, make_identity_tensor, make_tensor
from cute_py.atoms import (
    ThrCopy, ThrMMA, TiledCopy, TiledMMA, get, make_copy_atom, make_tiled_copy, make_tiled_copy_A,
    make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma, partition_shape_A, partition_shape_B,
    partition_shape_C,
)
from cute_py.int_tuple import product
from oracle import cpp, tv_table as _tv_table


def tv_table(layout: Layout) -> np.ndarray:
    """:func:`oracle.tv_table`, spot-checked against ``Layout.__call__`` at 53 points."""
    return _tv_table(layout, spot_checks=53)


SM80_F16 = "SM80_16x8x16_F16F16F16F16_TN"
SM80_F32 = "SM80_16x8x16_F32F16F16F32_TN"
GMMA_SS = "SM90_64x64x16_F32F16F16_SS"
GMMA_RS = "SM90_64x64x16_F32F16F16_RS"


def mma_33():
    """CUTE_REFERENCE §3.3: make_tiled_mma(SM90_64x128x16_F32BF16BF16_SS<K,K>{}, Layout<Shape<_2,_1,_1>>{})."""
    return make_tiled_mma(get("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))


def mma_sm80_perm():
    return make_tiled_mma(get(SM80_F16), (2, 2, 1), (32, 32, 16))


# ---------------------------------------------------------------------------
# Exact C++ vectors

def test_reference_3_3_strings():
    mma = mma_33()
    assert isinstance(mma, TiledMMA)
    assert str(mma.thr_layout_vmnk) == "(128,2,1,1):(1,128,0,0)"
    assert mma.tile_size == (128, 128, 16)
    assert mma.num_threads == 256
    assert str(mma.get_layoutC_TV()) == "((4,8,8),((2,2,16),(1,1))):((256,1,16),((128,8,1024),(0,0)))"
    assert str(mma.get_layoutA_TV()) == "((128,2),((64,16),(1,1))):((0,64),((1,128),(0,0)))"
    assert str(mma.get_layoutB_TV()) == "(256,((128,16),(1,1))):(0,((1,128),(0,0)))"
    assert partition_shape_C(mma, (128, 128)) == ((2, 2, 16), 1, 1)
    assert partition_shape_A(mma, (128, 64)) == ((64, 16), 1, 4)
    lines = str(mma).splitlines()
    assert lines[0] == "TiledMMA"
    assert lines[1] == "  ThrLayoutVMNK:  (128,2,1,1):(1,128,0,0)"
    assert lines[2] == "  PermutationMNK: (_,_,_)"
    assert lines[3].startswith("MMA_Atom")
    assert lines[4] == "  ThrID:      128:1"
    assert lines[5] == "  Shape_MNK:  (64,128,16)"


def test_sm80_2x2_permuted_vectors():
    mma = mma_sm80_perm()
    assert str(mma.thr_layout_vmnk) == cpp("(_32,_2,_2,_1):(_1,_32,_64,_0)")
    assert mma.tile_size == (32, 32, 16)
    lines = str(mma).splitlines()
    assert lines[1] == "  ThrLayoutVMNK:  (32,2,2,1):(1,32,64,0)"
    assert lines[2] == cpp("  PermutationMNK: (_32,_32,_16)")
    assert str(mma.get_layoutA_TV()) == cpp(
        "((_4,_8,_2,_2),((_2,_2,_2),(_1,_1))):((_64,_1,_16,_0),((_32,_8,_256),(_0,_0)))")
    assert str(mma.get_layoutB_TV()) == cpp(
        "((_4,_8,_2,_2),((_2,_2),(_2,_1))):((_64,_1,_0,_8),((_32,_256),(_16,_0)))")
    assert str(mma.get_layoutC_TV()) == cpp(
        "((_4,_8,_2,_2),((_2,_2),(_1,_2))):((_64,_1,_16,_256),((_32,_8),(_0,_512)))")


def test_make_tiled_mma_pads_layout_and_permutation():
    ref = mma_sm80_perm()
    for atom_layout in ((2, 2), Layout((2, 2)), Layout((2, 2, 1))):
        m = make_tiled_mma(SM80_F16, atom_layout, (32, 32, 16))
        assert str(m.thr_layout_vmnk) == str(ref.thr_layout_vmnk)
        assert m.get_layoutC_TV() == ref.get_layoutC_TV()
    m = make_tiled_mma(get(SM80_F16), (2, 2), (32, 32))
    assert m.tile_size == (32, 32, 16)
    assert str(m).splitlines()[2] == "  PermutationMNK: (32,32,_)"
    d = make_tiled_mma(get(SM80_F16))
    assert str(d.thr_layout_vmnk) == "(32,1,1,1):(1,0,0,0)" and d.tile_size == (16, 8, 16)
    # the SM70 quad pair tiles as (v, m, n) -> lane, derived in atom_facts
    q = make_tiled_mma(get("SM70_8x8x4_F32F16F16F32_TN"), (2, 2, 1))
    assert str(q.thr_layout_vmnk) == cpp("((_4,_2),_2,_2,_1):((_1,_16),_4,_8,_0)")


def test_cp_async_tiled_copy_vector():
    atom = make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16")
    tc = make_tiled_copy(atom, Layout((16, 8), (8, 1)), Layout((1, 8)))
    assert isinstance(tc, TiledCopy)
    assert tc.tiler_mn == (16, 64)
    assert str(tc.layout_tv) == cpp("((_8,_16),_8):((_128,_1),_16)")
    assert tc.num_threads == 128
    lines = str(tc).splitlines()
    assert lines[0] == "TiledCopy"
    assert lines[1] == cpp("  Tiler_MN:       (_16,_64)")
    assert lines[2] == cpp("  TiledLayout_TV: ((_8,_16),_8):((_128,_1),_16)")
    assert lines[3].startswith("Copy_Atom")
    # second observed log: 32x4 row-major threads, 8 values each
    tc2 = make_tiled_copy(atom, Layout((32, 4), (4, 1)), Layout((1, 8)))
    assert tc2.tiler_mn == (32, 32)
    assert str(tc2.layout_tv) == cpp("((_4,_32),_8):((_256,_1),_32)")


def test_make_tiled_copy_A_ldsm():
    mma = mma_sm80_perm()
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    assert tc.tiler_mn == (32, 16)
    assert tc.layout_tv == mma.get_layoutA_TV()
    assert str(tc.layout_tv) == cpp(
        "((_4,_8,_2,_2),((_2,_2,_2),(_1,_1))):((_64,_1,_16,_0),((_32,_8,_256),(_0,_0)))")
    # dst = ref for ldmatrix: the destination TV layout is the MMA's A layout as a function
    assert np.array_equal(tv_table(tc.get_layoutD_TV()), tv_table(mma.get_layoutA_TV()))


def test_make_tiled_copy_B_C():
    mma = mma_sm80_perm()
    tb = make_tiled_copy_B(make_copy_atom("SM75_U32x2_LDSM_N", "f16"), mma)
    assert tb.tiler_mn == (32, 16) and tb.layout_tv == mma.get_layoutB_TV()
    tcc = make_tiled_copy_C(make_copy_atom("UniversalCopy<uint32_t>", "f16"), mma)
    assert tcc.tiler_mn == (32, 32) and tcc.layout_tv == mma.get_layoutC_TV()


# ---------------------------------------------------------------------------
# Coverage properties of the tiled TV layouts

TILED = {
    "sm80x111": lambda: make_tiled_mma(get(SM80_F32), (1, 1, 1)),
    "sm80x221": lambda: make_tiled_mma(get(SM80_F32), (2, 2, 1)),
    "sm80x411": lambda: make_tiled_mma(get(SM80_F32), (4, 1, 1)),
    "sm80x221perm": mma_sm80_perm,
    "sm70x221": lambda: make_tiled_mma(get("SM70_8x8x4_F32F16F16F32_NT"), (2, 2, 1)),
    "gmma_ss_x111": lambda: make_tiled_mma(get(GMMA_SS), (1, 1, 1)),
    "gmma_ss_x211": lambda: make_tiled_mma(get(GMMA_SS), (2, 1, 1)),
    "gmma_rs_x211": lambda: make_tiled_mma(get(GMMA_RS), (2, 1, 1)),
}


def _thr_counts(mma):
    v = mma.thr_layout_vmnk
    return [product(v.shape[i]) for i in range(4)]  # ThrV, ThrM, ThrN, ThrK


def _share(atom, source):
    return atom.num_threads if source == "smem" else 1


@pytest.mark.parametrize("key", sorted(TILED))
def test_layoutC_TV_is_a_bijection(key):
    mma = TILED[key]()
    TM, TN, _tk = mma.tile_size
    tab = tv_table(mma.get_layoutC_TV())
    assert tab.shape[0] == mma.num_threads
    assert np.array_equal(np.sort(tab.ravel()), np.arange(TM * TN)), key


@pytest.mark.parametrize("key", sorted(TILED))
def test_layoutA_B_TV_multiplicity(key):
    mma = TILED[key]()
    TM, TN, TK = mma.tile_size
    _v, thr_m, thr_n, _k = _thr_counts(mma)
    a = tv_table(mma.get_layoutA_TV())
    assert a.shape[0] == mma.num_threads
    counts = np.bincount(a.ravel(), minlength=TM * TK)
    assert len(counts) == TM * TK
    assert set(counts.tolist()) == {thr_n * _share(mma.atom, mma.atom.a_source)}, key
    b = tv_table(mma.get_layoutB_TV())
    assert b.shape[0] == mma.num_threads
    counts = np.bincount(b.ravel(), minlength=TN * TK)
    assert len(counts) == TN * TK
    assert set(counts.tolist()) == {thr_m * _share(mma.atom, mma.atom.b_source)}, key


def _vmnk_of(mma):
    """thread index -> (v, m, n, k), by inverting thr_layout_vmnk by brute force."""
    v = mma.thr_layout_vmnk
    counts = _thr_counts(mma)
    out = {}
    for flat in range(math.prod(counts)):
        c, r = [], flat
        for s in counts:
            c.append(r % s)
            r //= s
        out[v(flat)] = tuple(c)
    assert sorted(out) == list(range(mma.num_threads))
    return out


@pytest.mark.parametrize("key", ["sm80x111", "sm80x221", "sm80x411", "sm70x221", "gmma_ss_x211", "gmma_rs_x211"])
def test_tiled_values_are_shifted_atom_values(key):
    """Without a permutation, thread t's value j is its atom-thread's value j, moved to its atom's tile."""
    mma = TILED[key]()
    atom = mma.atom
    AM, AN, AK = atom.shape_mnk
    TM, TN, TK = mma.tile_size
    vmnk = _vmnk_of(mma)
    c_tab, c_atom = tv_table(mma.get_layoutC_TV()), tv_table(atom.c_layout)
    a_tab, a_atom = tv_table(mma.get_layoutA_TV()), tv_table(atom.a_layout)
    assert c_tab.shape[1] == c_atom.shape[1] and a_tab.shape[1] == a_atom.shape[1]
    for t in range(mma.num_threads):
        v, m, n, k = vmnk[t]
        am, an = c_atom[v] % AM, c_atom[v] // AM
        assert np.array_equal(c_tab[t], (am + AM * m) + TM * (an + AN * n)), (key, t)
        am, ak = a_atom[v] % AM, a_atom[v] // AM
        assert np.array_equal(a_tab[t], (am + AM * m) + TM * (ak + AK * k)), (key, t)


def test_partition_shapes():
    mma = TILED["sm80x221"]()
    assert partition_shape_C(mma, (64, 64)) == ((2, 2), 2, 4)
    assert partition_shape_A(mma, (64, 32)) == ((2, 2, 2), 2, 2)
    assert partition_shape_B(mma, (64, 32)) == ((2, 2), 4, 2)
    assert partition_shape_C(mma, (32, 16, 3)) == ((2, 2), 1, 1, 3)
    g = TILED["gmma_ss_x211"]()
    assert partition_shape_C(g, (256, 128)) == ((2, 2, 8), 2, 2)
    assert partition_shape_B(g, (128, 64)) == ((64, 16), 2, 4)


# ---------------------------------------------------------------------------
# Partitions (Tensor level)

def _coords_of(t):
    return [tuple(c) for c in t.values()]


def test_reference_3_3_thread0_partition_C():
    mma = mma_33()
    thr = mma.get_slice(0)
    assert isinstance(thr, ThrMMA)
    p = thr.partition_C(make_identity_tensor((128, 128)))
    print(p)  # ArithTuple(0,0) o ((2,2,16),1,1):((1@1,8@0,8@1),0,0)
    assert str(p.layout) == "((2,2,16),1,1):((1@1,8@0,8@1),0,0)"
    assert _coords_of(p)[:8] == [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
    # thread 32 starts 16 rows down; thread 128 is the second warpgroup, 64 rows down
    assert _coords_of(mma.get_slice(32).partition_C(make_identity_tensor((128, 128))))[:2] == [(16, 0), (16, 1)]
    assert _coords_of(mma.get_slice(128).partition_C(make_identity_tensor((128, 128))))[:2] == [(64, 0), (64, 1)]


PARTITION_CASES = {
    # key: (tiled mma, C shape, A shape)
    "sm80x221": ((64, 32), (64, 32)),
    "sm80x411": ((128, 16), (64, 32)),
    "sm80x221perm": ((64, 64), (64, 32)),
    "sm70x221": ((32, 32), (32, 8)),
    "gmma_ss_x211": ((128, 64), (256, 16)),
    "gmma_rs_x211": ((128, 64), (128, 32)),
}


@pytest.mark.parametrize("key", sorted(PARTITION_CASES))
def test_partition_C_covers_once(key):
    mma = TILED[key]()
    shape_c, _shape_a = PARTITION_CASES[key]
    ident = make_identity_tensor(shape_c)
    seen = Counter()
    for t in range(mma.num_threads):
        p = mma.get_slice(t).partition_C(ident)
        seen.update(_coords_of(p))
    assert seen == Counter({(m, n): 1 for m in range(shape_c[0]) for n in range(shape_c[1])})


@pytest.mark.parametrize("key", sorted(TILED))
def test_partition_C_of_one_tile_follows_layoutC_TV(key):
    """Over one (M,N) tile, thread t's partition_C holds get_layoutC_TV(t, v) in value order."""
    mma = TILED[key]()
    TM, TN, _tk = mma.tile_size
    tab = tv_table(mma.get_layoutC_TV())
    ident = make_identity_tensor((TM, TN))
    for t in range(0, mma.num_threads, 3):
        expected = [(int(i) % TM, int(i) // TM) for i in tab[t]]
        assert _coords_of(mma.get_slice(t).partition_C(ident)) == expected, (key, t)


@pytest.mark.parametrize("key", sorted(PARTITION_CASES))
def test_partition_A_covers_thr_n_times(key):
    mma = TILED[key]()
    _shape_c, shape_a = PARTITION_CASES[key]
    _v, thr_m, thr_n, _k = _thr_counts(mma)
    ident = make_identity_tensor(shape_a)
    if mma.atom.a_source == "smem":
        # a descriptor operand: every thread of an atom sees the atom's whole M slice, once
        # (all threads would be 128x redundant: check a sample)
        AM = mma.atom.shape_mnk[0]
        for t in (0, 77, 127, 128, 200, 255):
            _v, m, _n, _k = mma.get_slice(t).thr_vmnk
            rows = [r for r in range(shape_a[0]) if (r // AM) % thr_m == m]
            assert Counter(_coords_of(mma.get_slice(t).partition_A(ident))) == Counter(
                {(r, k): 1 for r in rows for k in range(shape_a[1])}), t
        return
    seen = Counter()
    for t in range(mma.num_threads):
        seen.update(_coords_of(mma.get_slice(t).partition_A(ident)))
    assert seen == Counter({(m, k): thr_n for m in range(shape_a[0]) for k in range(shape_a[1])})


def test_partition_B_covers_thr_m_times():
    mma = TILED["sm80x221"]()
    ident = make_identity_tensor((32, 32))
    seen = Counter()
    for t in range(mma.num_threads):
        seen.update(_coords_of(mma.get_slice(t).partition_B(ident)))
    assert seen == Counter({(n, k): 2 for n in range(32) for k in range(32)})


@pytest.mark.parametrize("key", ["sm80x221", "sm80x221perm", "gmma_ss_x211"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_partition_C_of_data_matches_identity(key, order):
    mma = TILED[key]()
    shape_c, _ = PARTITION_CASES[key]
    arr = np.arange(shape_c[0] * shape_c[1], dtype=np.float32).reshape(shape_c, order=order)
    data = make_tensor(arr)
    ident = make_identity_tensor(shape_c)
    for t in range(0, mma.num_threads, 7):
        thr = mma.get_slice(t)
        pd, pi = thr.partition_C(data), thr.partition_C(ident)
        assert pd.shape == pi.shape
        assert pd.values().tolist() == [arr[c] for c in _coords_of(pi)], (key, t)
        # writes through the partition land in the array
    thr = mma.get_slice(3)
    pd = thr.partition_C(data)
    first = _coords_of(thr.partition_C(ident))[0]
    pd[(0,) * pd.rank] = -1.0
    assert arr[first] == -1.0


def test_partition_A_of_data_matches_identity():
    mma = TILED["sm80x221perm"]()
    arr = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    data, ident = make_tensor(arr), make_identity_tensor((64, 32))
    for t in (0, 5, 33, 64, 127):
        thr = mma.get_slice(t)
        assert thr.partition_A(data).values().tolist() == [arr[c] for c in _coords_of(thr.partition_A(ident))]


@pytest.mark.parametrize("key", ["sm80x221", "gmma_ss_x211"])
def test_partition_shape_C_matches_partition_C(key):
    mma = TILED[key]()
    shape_c, _ = PARTITION_CASES[key]
    p = mma.get_slice(0).partition_C(make_identity_tensor(shape_c))
    assert cute_py.int_tuple.product_each(p.shape) == cute_py.int_tuple.product_each(partition_shape_C(mma, shape_c))


def test_partition_fragment_C_shape():
    mma = TILED["sm80x221"]()
    data = make_tensor(np.zeros((64, 32), dtype=np.float32))
    thr = mma.get_slice(5)
    frag = thr.partition_fragment_C(data)
    assert frag.shape == thr.partition_C(data).shape
    assert frag.size() == 4 * 2 * 2
    frag_a = thr.partition_fragment_A(make_tensor(np.zeros((64, 32), dtype=np.float16)))
    assert frag_a.shape == thr.partition_A(make_identity_tensor((64, 32))).shape


# ---------------------------------------------------------------------------
# TiledCopy partitions

def _cp_async_copy():
    return make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"),
                           Layout((16, 8), (8, 1)), Layout((1, 8)))


COPIES = {
    "cp_async": (_cp_async_copy, (32, 128)),
    "universal_u32_f32": (lambda: make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"),
                                                  Layout((32, 4), (4, 1))), (64, 8)),
    "universal_u64_f16_colmajor": (lambda: make_tiled_copy(make_copy_atom("UniversalCopy<uint64_t>", "f16"),
                                                           Layout((8, 4)), Layout((4, 1))), (64, 8)),
}


@pytest.mark.parametrize("key", sorted(COPIES))
def test_tiled_copy_partitions_agree_and_cover_once(key):
    make, shape = COPIES[key]
    tc = make()
    ident = make_identity_tensor(shape)
    seen = Counter()
    for t in range(tc.num_threads):
        thr = tc.get_slice(t)
        assert isinstance(thr, ThrCopy)
        s, d = thr.partition_S(ident), thr.partition_D(ident)
        assert s.shape == d.shape
        cs = _coords_of(s)
        assert cs == _coords_of(d), (key, t)
        assert len(cs) == product(s.shape)
        seen.update(cs)
    assert seen == Counter({(m, n): 1 for m in range(shape[0]) for n in range(shape[1])})


def test_cp_async_thread_owns_a_16_byte_row_segment():
    tc = _cp_async_copy()
    ident = make_identity_tensor((16, 64))
    for t in (0, 3, 9, 127):
        cs = _coords_of(tc.get_slice(t).partition_S(ident))
        assert cs == [(t // 8, 8 * (t % 8) + j) for j in range(8)]
    assert str(tc.get_slice(3).partition_S(ident).layout) == "((8,1),1,1):((1@1,0),0,0)"


def test_tiled_copy_of_data_matches_identity():
    tc = _cp_async_copy()
    arr = np.arange(32 * 128, dtype=np.float16).reshape(32, 128)
    data, ident = make_tensor(arr), make_identity_tensor((32, 128))
    for t in (0, 17, 100):
        thr = tc.get_slice(t)
        assert thr.partition_S(data).values().tolist() == [arr[c] for c in _coords_of(thr.partition_S(ident))]


def test_ldsm_copy_A_destination_is_the_mma_A_fragment():
    """make_tiled_copy_A: each thread's ldmatrix destination elements are its MMA A elements."""
    mma = mma_sm80_perm()
    tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    ident = make_identity_tensor((64, 32))
    src_seen, dst_seen = Counter(), Counter()
    for t in range(mma.num_threads):
        thr = tc.get_slice(t)
        d = _coords_of(thr.partition_D(ident))
        s = _coords_of(thr.partition_S(ident))
        assert Counter(d) == Counter(_coords_of(mma.get_slice(t).partition_A(ident))), t
        # each thread supplies 8 contiguous halves (one 16-byte row) per ldmatrix
        for i in range(0, len(s), 8):
            row = s[i:i + 8]
            assert len({m for m, _k in row}) == 1 and [k for _m, k in row] == list(range(row[0][1], row[0][1] + 8))
        src_seen.update(s)
        dst_seen.update(d)
    # threads along N load the same A: every element twice, on both sides
    assert src_seen == dst_seen == Counter({(m, k): 2 for m in range(64) for k in range(32)})


# ---------------------------------------------------------------------------
# Errors

@pytest.mark.parametrize("bad", [-1, 128, 1000, 1.0, "0"])
def test_get_slice_out_of_range(bad):
    mma = TILED["sm80x221"]()
    with pytest.raises(LayoutError):
        mma.get_slice(bad)
    with pytest.raises(LayoutError):
        _cp_async_copy().get_slice(bad)


def test_get_slice_last_thread_ok():
    assert TILED["sm80x221"]().get_slice(127).thr_vmnk == (31, 1, 1, 0)
    assert _cp_async_copy().get_slice(127).thr_idx == 127


@pytest.mark.parametrize("fn", [
    lambda m: partition_shape_C(m, (48, 16)),
    lambda m: partition_shape_C(m, (32, 24)),
    lambda m: partition_shape_A(m, (32, 8)),
    lambda m: partition_shape_B(m, (8, 16)),
    lambda m: partition_shape_C(m, (32,)),
])
def test_partition_shape_not_divisible(fn):
    with pytest.raises(LayoutError):
        fn(TILED["sm80x221"]())


def test_partition_shape_message_names_mode():
    with pytest.raises(LayoutError) as ei:
        partition_shape_C(TILED["sm80x221"](), (48, 16))
    assert "48" in str(ei.value) and "M" in str(ei.value)


def test_bad_types():
    with pytest.raises(TypeError):
        make_tiled_mma(42)
    with pytest.raises(TypeError):
        make_tiled_copy(get("SM75_U32x4_LDSM_N"), Layout(32))  # an op, not an atom
    with pytest.raises(TypeError):
        make_tiled_copy_A(get("SM75_U32x4_LDSM_N"), mma_sm80_perm())
    with pytest.raises(TypeError):
        mma_sm80_perm().get_slice(0).partition_C([[1, 2], [3, 4]])
    with pytest.raises(LayoutError):
        make_tiled_mma(get(SM80_F16), (2, 2, 1, 1))
    with pytest.raises(LayoutError):
        make_tiled_mma(get(SM80_F16), (1, 1, 1), (16, 8, 16, 1))


def test_tiled_copy_atom_must_divide():
    atom = make_copy_atom("SM75_U32x4_LDSM_N", "f16")  # 32 threads x 8 values
    with pytest.raises(LayoutError):
        TiledCopy(atom, Layout((16, 8)), (16, 8))  # 16 threads
    with pytest.raises(LayoutError):
        TiledCopy(atom, Layout((32, 4)), (32, 4))  # 4 values
