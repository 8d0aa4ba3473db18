"""TiledCopy.retile / ThrCopy.retile_S/D against CuTe's printed vectors, and as a re-indexing."""

import numpy as np

import cute_py as c
from cute_py import atoms


def _sm80_ldsm():
    mma = c.make_tiled_mma(atoms.get("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1), (32, 32, 16))
    tc = c.make_tiled_copy_A(c.make_copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    return mma, tc


def test_retile_matches_cute_vector():
    # C++ (SM80 16x8x16 2x2 with Tile<32,32,16>, LDSM x4 A copy, 128x64 K-major smem, thread 0):
    # MMA A fragment ((2,2,2),4,4):((1,2,4),32,8); retile_D -> ((8,1),4,4):((1,0),32,8);
    # partition_S -> ((8,1),4,4)
    mma, tc = _sm80_ldsm()
    smem = c.make_tensor(np.zeros(128 * 64, np.float16), c.Layout((128, 64), (64, 1)))
    frag = mma.get_slice(0).partition_fragment_A(smem)
    assert str(frag.layout) == "((2,2,2),4,4):((1,2,4),32,8)"
    assert str(tc.get_slice(0).retile_D(frag).layout) == "((8,1),4,4):((1,0),32,8)"
    assert c.shape(tc.get_slice(0).partition_S(smem).layout) == ((8, 1), 4, 4)


def test_retile_is_a_reindexing_of_the_fragment():
    """retile keeps the fragment's elements: every register appears exactly once."""
    mma, tc = _sm80_ldsm()
    for thr in (0, 5, 77):
        smem = c.make_tensor(np.zeros(128 * 64, np.float16), c.Layout((128, 64), (64, 1)))
        frag = mma.get_slice(thr).partition_fragment_A(smem)
        re = tc.get_slice(thr).retile_D(frag)
        n = c.size(frag.layout)
        assert c.size(re.layout) == n
        assert sorted(re.layout(i) for i in range(n)) == sorted(frag.layout(i) for i in range(n))


def test_retiled_values_are_what_the_copy_delivers():
    """The copy's destination partition of the A tile, element by element, is the MMA's A partition
    re-viewed by retile (coordinates through identity tensors)."""
    mma, tc = _sm80_ldsm()
    ident = c.make_identity_tensor((128, 64))
    for thr in (0, 31, 100):
        a_part = mma.get_slice(thr).partition_A(ident)
        frag_shape_layout = c.Layout(a_part.layout.shape)
        re = tc.get_slice(thr).retile_D(frag_shape_layout)
        dst = tc.get_slice(thr).partition_D(ident)
        # register r of the retiled view holds A element a_part(r'), where r' = re(r)
        for i in range(c.size(dst.layout)):
            assert dst(i) == a_part(re(i))
