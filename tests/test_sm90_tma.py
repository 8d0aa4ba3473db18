"""cute_py.arch.sm90.tma: cuTensorMapEncodeTiled parameters derived from gmem and smem layouts.

Expected values are CuTe's ``make_tma_copy`` replayed (CUTE_REFERENCE.md §4.5,
fp16, gmem 4096x4096). The property tests check the meaning of the result: the
boxes of one tile cover exactly the tile's elements, and the box layout says
which gmem element each smem index receives.
"""

from __future__ import annotations

import functools
import itertools

import pytest
import sympy

from cute_py import ComposedLayout, Layout, Swizzle, parse, tile_to_shape
from cute_py.arch.sm90 import (
    TmaError,
    make_tma_params,
    smem_atom,
    tile_smem,
    validate_tma,
)
from oracle import prod

G_K = parse("(4096,4096):(4096,1)")        # (M,K):(K,1), K-major
G_M = parse("(4096,4096):(1,4096)")        # (M,K):(1,M), M-major
G_KL = parse("(4096,4096,4):(4096,1,16777216)")


def k_tile(sw, m, k, t="f16"):
    return tile_smem(smem_atom("K", sw, t), m, k)


# (id, gmem, smem, kwargs, global_dim, global_strides, box_dim, swizzle, bytes_per_copy, copies_per_tile,
#  gmem_modes, str(box_layout))
ROWS = [
    ("K_SW128_128x64", G_K, k_tile(128, 128, 64), {}, (4096, 4096), (8192,), (64, 128), "128B", 16384, 1,
     (1, 0), "(64,128):(1@1,1@0)"),
    ("K_SW128_128x64_multicast2", G_K, k_tile(128, 128, 64), {"multicast": 2}, (4096, 4096), (8192,),
     (64, 64), "128B", 8192, 1, (1, 0), "(64,128):(1@1,1@0)"),
    ("K_SW64_128x32", G_K, k_tile(64, 128, 32), {}, (4096, 4096), (8192,), (32, 128), "64B", 8192, 1,
     (1, 0), "(32,128):(1@1,1@0)"),
    ("K_SW32_128x16", G_K, k_tile(32, 128, 16), {}, (4096, 4096), (8192,), (16, 128), "32B", 4096, 1,
     (1, 0), "(16,128):(1@1,1@0)"),
    ("K_INTER_128x64", G_K, k_tile(0, 128, 64), {}, (4096, 4096), (8192,), (8, 128), "NONE", 2048, 8,
     (1, 0), "(8,128):(1@1,1@0)"),
    ("K_SW128_128x128", G_K, k_tile(128, 128, 128), {}, (4096, 4096), (8192,), (64, 128), "128B", 16384, 2,
     (1, 0), "(64,128):(1@1,1@0)"),
    ("MN_SW128_128x64_default", G_M, tile_to_shape(smem_atom("MN", 128, "f16"), (128, 64)), {},
     (4096, 4096), (8192,), (64, 8), "128B", 1024, 16, (0, 1), "(64,8):(1@0,1@1)"),
    ("MN_SW128_128x64_kfirst", G_M, tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"), {},
     (4096, 4096), (8192,), (64, 64), "128B", 8192, 2, (0, 1), "(64,64):(1@0,1@1)"),
    ("MN_SW128_64x64", G_M, tile_smem(smem_atom("MN", 128, "f16"), 64, 64, major="MN"), {},
     (4096, 4096), (8192,), (64, 64), "128B", 8192, 1, (0, 1), "(64,64):(1@0,1@1)"),
    ("K_SW128_batched", G_KL, k_tile(128, 128, 64), {"cta_tiler": (128, 64)}, (4096, 4096, 4),
     (8192, 33554432), (64, 128, 1), "128B", 16384, 1, (1, 0, 2), "(64,128):(1@1,1@0)"),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[0])
def test_reference_rows(row):
    (_, g, s, kw, gdim, gstrides, box, swz, nbytes, copies, modes, box_layout) = row
    p = make_tma_params(g, s, "f16", **kw)
    assert p.global_dim == gdim
    assert p.global_strides == gstrides
    assert p.box_dim == box
    assert p.swizzle == swz
    assert p.bytes_per_copy == nbytes
    assert p.copies_per_tile == copies
    assert p.gmem_modes == modes
    assert str(p.box_layout) == box_layout
    assert p.rank == len(gdim) and p.element_strides == (1,) * p.rank
    assert (p.data_type, p.interleave, p.l2_promotion, p.oob_fill) == ("FLOAT16", "NONE", "L2_128B", "NONE")
    assert validate_tma(g, s, "f16", **kw) == []


def test_multicast_keeps_the_full_box_and_splits_the_last_dim():
    p = make_tma_params(G_K, k_tile(128, 128, 64), "f16", multicast=2)
    assert p.full_box_dim == (64, 128) and p.box_dim == (64, 64) and p.multicast == 2
    # before the split one TMA moves 16384 bytes; each of the two CTAs issues half
    assert p.bytes_per_copy * p.multicast == 16384
    p4 = make_tma_params(G_K, k_tile(128, 128, 64), "f16", multicast=4)
    assert p4.box_dim == (64, 32) and p4.bytes_per_copy == 4096


def test_symbolic_gmem():
    M, K = sympy.symbols("M K", integer=True, positive=True)
    p = make_tma_params(((M, K), (K, 1)), tile_smem(smem_atom("K", 128, "bf16"), 128, 64), "bf16")
    assert p.global_dim == (K, M)
    assert p.global_strides == (2 * K,)
    assert (p.box_dim, p.swizzle, p.data_type, p.bytes_per_copy) == ((64, 128), "128B", "BFLOAT16", 16384)
    # M-major with a symbolic leading dimension
    ld = sympy.Symbol("ld", integer=True, positive=True)
    p = make_tma_params(((M, K), (1, ld)), tile_smem(smem_atom("MN", 128, "bf16"), 128, 64, major="MN"),
                        "bf16")
    assert p.global_dim == (M, K) and p.global_strides == (2 * ld,) and p.box_dim == (64, 64)


# --------------------------------------------------------------------------- box coordinates

def test_box_coords_k_major():
    p = make_tma_params(G_K, k_tile(128, 128, 64), "f16")
    # TMA dims are (K, M): tile (i, j) of the (128, 64) tiler starts at K = 64 j, M = 128 i
    for i, j in [(0, 0), (3, 5), (31, 63)]:
        assert p.box_coords((i, j)) == (64 * j, 128 * i)


def test_box_coords_m_major():
    p = make_tma_params(G_M, tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"), "f16")
    for i, j in [(0, 0), (3, 5), (31, 63)]:
        assert p.box_coords((i, j)) == (128 * i, 64 * j)


def test_box_coords_multicast_slices():
    p = make_tma_params(G_K, k_tile(128, 128, 64), "f16", multicast=2)
    assert p.box_coords((3, 5)) == (320, 384)
    assert p.box_coords((3, 5), cta_rank=1) == (320, 448)          # the second 64 rows of M
    p4 = make_tma_params(G_K, k_tile(128, 128, 64), "f16", multicast=4)
    assert [p4.box_coords((1, 1), r) for r in range(4)] == [(64, 128), (64, 160), (64, 192), (64, 224)]
    with pytest.raises(TmaError, match="cta_rank"):
        p.box_coords((0, 0), cta_rank=2)


def test_box_coords_batched_tile_keeps_the_batch_index():
    """Tile (m, k, l) of a batched (M, K, L) tensor tiled by (128, 64): its box starts at batch l."""
    p = make_tma_params(G_KL, k_tile(128, 128, 64), "f16", cta_tiler=(128, 64))
    assert p.box_coords((3, 5, 0)) == (320, 384, 0)
    assert p.box_coords((3, 5, 2)) == (320, 384, 2)


# --------------------------------------------------------------------------- coverage property

@functools.cache
def _smem_coords(smem):
    """{smem index: tile coordinate} of the swizzle-free smem layout, by brute force over the tile."""
    inner = getattr(smem, "inner", smem)
    coords = list(itertools.product(*(range(prod(m)) for m in inner.shape)))
    out = {inner(*c): c for c in coords}
    assert sorted(out) == list(range(len(coords))), "smem layout is not a bijection onto [0, size)"
    return out


@functools.cache
def _params(case_id):
    _, g, s, kw = next(c for c in COVERAGE if c[0] == case_id)
    return make_tma_params(g, s, "f16", **kw)


def _pad(t, n):
    t = tuple(t)
    return t + (0,) * (n - len(t))


COVERAGE = [
    ("K_SW128", G_K, k_tile(128, 128, 64), {}),
    ("K_SW128_mc2", G_K, k_tile(128, 128, 64), {"multicast": 2}),
    ("K_SW128_mc4", G_K, k_tile(128, 128, 64), {"multicast": 4}),
    ("K_SW64", G_K, k_tile(64, 128, 32), {}),
    ("K_SW32", G_K, k_tile(32, 128, 16), {}),
    ("K_INTER", G_K, k_tile(0, 128, 64), {}),
    ("K_SW128_128x128", G_K, k_tile(128, 128, 128), {}),
    ("K_SW64_64x64", G_K, k_tile(64, 64, 64), {}),
    ("MN_default", G_M, tile_to_shape(smem_atom("MN", 128, "f16"), (128, 64)), {}),
    ("MN_kfirst", G_M, tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"), {}),
    ("MN_kfirst_mc2", G_M, tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"), {"multicast": 2}),
    ("MN_INTER", G_M, tile_smem(smem_atom("MN", 0, "f16"), 64, 32, major="MN"), {}),
    ("batched", G_KL, k_tile(128, 128, 64), {"cta_tiler": (128, 64)}),
]


@pytest.mark.parametrize("case", COVERAGE, ids=lambda c: c[0])
def test_box_layout_maps_smem_index_to_the_stored_element(case):
    """Each TMA issue fills the next full box of smem indices. Within issue q, box_layout(i) added to the
    coordinate of the issue's first element is the tile coordinate of the element that the (swizzle-free)
    smem layout stores at index q*box + i."""
    _, g, s, _kw = case
    p = _params(case[0])
    rank = len(g.shape)
    idx2crd = _smem_coords(s)
    full = prod(p.full_box_dim)
    assert p.copies_per_tile * full == len(idx2crd)
    box = [_pad(p.box_layout(i), rank) for i in range(full)]
    for q in range(p.copies_per_tile):
        first = _pad(idx2crd[q * full], rank)
        for i in range(full):
            got = tuple(a + b for a, b in zip(first, box[i]))
            assert got == _pad(idx2crd[q * full + i], rank), (q, i)


@pytest.mark.parametrize("case", COVERAGE, ids=lambda c: c[0])
@pytest.mark.parametrize("tile", [(0, 0), (1, 2)])
def test_boxes_cover_exactly_the_tile(case, tile):
    """Over every issue and every multicast rank, the boxes (box_coords of the tile + the issue's offset
    inside the tile, extents box_dim) cover each gmem coordinate of the CTA tile exactly once."""
    _, g, s, _kw = case
    p = _params(case[0])
    rank = len(g.shape)
    idx2crd = _smem_coords(s)
    full = prod(p.full_box_dim)
    tile_origin = _pad(tuple(t * e for t, e in zip(tile, p.cta_tiler)), rank)
    want = {tuple(o + c for o, c in zip(tile_origin, _pad(crd, rank)))
            for crd in itertools.product(*(range(e) for e in p.cta_tiler))}
    covered = []
    for r in range(p.multicast):
        origin = p.box_coords(tile, cta_rank=r)                       # TMA dims, innermost first
        assert len(origin) == p.rank
        for q in range(p.copies_per_tile):
            first = _pad(idx2crd[q * full], rank)                     # issue q's offset inside the tile
            issue = [origin[i] + first[m] for i, m in enumerate(p.gmem_modes)]
            for off in itertools.product(*(range(b) for b in p.box_dim)):
                gc = [0] * rank
                for i, m in enumerate(p.gmem_modes):
                    gc[m] = issue[i] + off[i]
                covered.append(tuple(gc))
    assert len(covered) == len(want), "boxes overlap or miss elements"
    assert set(covered) == want


# --------------------------------------------------------------------------- validation

def test_validate_misaligned_address():
    s = k_tile(128, 128, 64)
    assert validate_tma(G_K, s, "f16", address=0x7F0000001000) == []
    problems = validate_tma(G_K, s, "f16", address=0x7F0000001008)
    assert problems == ["global address 0x7f0000001008 is not 16-byte aligned"]


def test_validate_majorness_mismatch():
    problems = validate_tma(G_M, k_tile(128, 128, 64), "f16")     # (M,K):(1,M) with K-major smem
    assert len(problems) == 2
    assert "majorness" in problems[0] and "4096" in problems[0] and "not 1" in problems[0]
    # and the box's second dim then walks M, whose stride is one element: 2 bytes
    assert problems[1] == "globalStrides[1] = 2 bytes: must be a multiple of 16 and < 2^40"


def test_validate_stride_not_multiple_of_16():
    problems = validate_tma(parse("(4096,4100):(4100,1)"), k_tile(128, 128, 64), "f16")
    assert len(problems) == 1
    assert "8200 bytes" in problems[0] and "multiple of 16" in problems[0]
    # 4104 * 2 = 8208 = 513 * 16 is fine
    assert validate_tma(parse("(4096,4104):(4104,1)"), k_tile(128, 128, 64), "f16") == []


def test_validate_box_over_256():
    # a 512-wide K row of an unswizzled layout: its contiguous run (one box dim) is 512 elements
    problems = validate_tma(G_K, Layout((8, 512), (512, 1)), "f16")
    assert problems == ["boxDim[0] = 512 not in [1, 256]"]
    assert validate_tma(G_K, Layout((8, 256), (256, 1)), "f16") == []


def test_validate_inner_box_beyond_swizzle_span():
    # the 64-byte swizzle on a tile whose rows (the contiguous run) are 128 bytes
    s = ComposedLayout(Swizzle(2, 3, 3), 0, tile_to_shape(Layout((8, 64), (64, 1)), (128, 64)))
    problems = validate_tma(G_K, s, "f16")
    assert len(problems) == 1
    assert "128 B" in problems[0] and "64B" in problems[0] and "span" in problems[0]


def test_validate_rank_over_5():
    g = parse("(64,128,2,2,2,2):(128,1,8192,16384,32768,65536)")
    problems = validate_tma(g, k_tile(128, 64, 64), "f16")
    assert problems == ["rank 6 > 5"]
    g5 = parse("(64,128,2,2,2):(128,1,8192,16384,32768)")
    assert validate_tma(g5, k_tile(128, 64, 64), "f16") == []


def test_validate_multicast_must_split_the_box():
    problems = validate_tma(G_K, k_tile(128, 128, 64), "f16", multicast=3)
    assert any("multicast 3" in p for p in problems)


BAD = [
    # majorness mismatch + 2-byte stride + box 512 + rank 6
    ("many", parse("(8,512,2,2,2,2):(1,8,4096,8192,16384,32768)"), Layout((8, 512), (512, 1)), 4),
    ("majorness+stride", parse("(4096,4100):(1,4096)"), k_tile(128, 128, 64), 2),
    ("span+stride", parse("(4096,4100):(4100,1)"),
     ComposedLayout(Swizzle(2, 3, 3), 0, tile_to_shape(Layout((8, 64), (64, 1)), (128, 64))), 2),
]


@pytest.mark.parametrize("case", BAD, ids=lambda c: c[0])
def test_make_tma_params_lists_every_violation(case):
    _, g, s, n = case
    problems = validate_tma(g, s, "f16")
    assert len(problems) == n, problems
    with pytest.raises(TmaError) as e:
        make_tma_params(g, s, "f16")
    for prob in problems:
        assert prob in str(e.value)


def test_describe_names_each_argument():
    p = make_tma_params(G_K, k_tile(128, 128, 64), "f16", multicast=2)
    text = p.describe()
    for needle in ("FLOAT16", "(64,128):(1@1,1@0)", "dim 0: gmem mode 1", "globalDim 4096",
                   "1 element (contiguous)", "dim 1: gmem mode 0", "8192 bytes", "box 64 (of 128 before multicast)",
                   "swizzle 128B", "bytes per copy 8192", "multicast 2"):
        assert needle in text, needle


def test_hierarchical_gmem_modes_contiguous_in_gmem_are_merged():
    """Issue 16: (4096,(64,64)):(4096,(1,64)) is the flat (4096,4096):(4096,1), as CuTe coalesces gmem modes."""
    smem = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (64, 1)))
    flat = make_tma_params(Layout((4096, 4096), (4096, 1)), smem, "bf16")
    assert make_tma_params(Layout((4096, (64, 64)), (4096, (1, 64))), smem, "bf16") == flat
    M, K = sympy.symbols("M K", integer=True, positive=True)
    sym = make_tma_params(Layout((M, (64, K)), (64 * K, (1, 64))), smem, "bf16")
    assert sym.global_dim == (64 * K, M)


# --------------------------------------------------------------------------- hierarchical gmem, parts not contiguous
# Each part of a hierarchical gmem mode that coalescing leaves is its own TMA dim (CuTe: one basis E<g,p> per
# gmem leaf in tma_gbasis). Checked by brute force: every element the tensor map addresses for every copy of
# a tile is the layout's offset of the tile element that lands at that smem index.

def tma_reads(p, coords):
    """Element offsets the tensor map reads for one box at TMA ``coords``, in smem order (dim 0 fastest)."""
    nbytes = p.dtype.bits // 8
    strides = (1,) + tuple(s // nbytes for s in p.global_strides)
    out = []
    for e in itertools.product(*(range(b) for b in reversed(p.box_dim))):
        e = e[::-1]
        assert all(0 <= c + x < d for c, x, d in zip(coords, e, p.global_dim)), (coords, e, p.global_dim)
        out.append(sum((c + x) * s for c, x, s in zip(coords, e, strides)))
    return out


def check_tile_by_brute_force(gmem, smem, p, tile_coord):
    """Every copy of tile ``tile_coord`` reads, at each smem index, the gmem element of that tile coordinate."""
    inner = getattr(smem, "inner", smem)
    tiler = p.cta_tiler
    tile_of = {inner(*crd): crd for crd in itertools.product(*(range(c) for c in tiler))}
    box = prod(p.box_dim)
    origin = [t * c for t, c in zip(tile_coord, tiler)]
    for q in range(p.copies_per_tile):
        first = tile_of[q * box]
        coords = p.tma_coords(tuple(o + c for o, c in zip(origin, first)))
        if q == 0:
            assert coords == p.box_coords(tile_coord)
        for i, off in enumerate(tma_reads(p, coords)):
            crd = tile_of[q * box + i]
            assert off == gmem(*(o + c for o, c in zip(origin, crd))), (q, i, crd)


MN_KFIRST = tile_smem(smem_atom("MN", 128, "bf16"), 128, 64, major="MN")
HIER = [
    # (id, gmem, smem, box_dim, global_dim, global_strides (bytes), gmem_modes, gmem_parts, copies per tile)
    # A K-major, M = (64,64) walking a (64 m0, 64 m1, 256 k) tensor's dims 0 and 1 in reverse order
    ("K_major_M_split", Layout(((64, 64), 256), ((16384, 256), 1)), k_tile(128, 128, 64, "bf16"),
     (64, 64, 2), (256, 64, 64), (32768, 512), (1, 0, 0), (0, 0, 1), 1),
    # A M-major, M = (64,64):(1,8192): the 128-row tile is box (64, 2) over M's parts
    ("MN_major_M_split_kfirst", Layout(((64, 64), 128), ((1, 8192), 64)), MN_KFIRST,
     (64, 64, 2), (64, 128, 64), (128, 16384), (0, 1, 0), (0, 0, 1), 1),
    ("MN_major_M_split_default", Layout(((64, 64), 128), ((1, 8192), 64)),
     tile_to_shape(smem_atom("MN", 128, "bf16"), (128, 64)), (64, 8, 2), (64, 128, 64), (128, 16384),
     (0, 1, 0), (0, 0, 1), 8),
    # K = (64,4) split, a 128-wide K tile spans both parts
    ("K_split_two_parts", Layout((256, (64, 4)), (64, (1, 16384))), k_tile(128, 128, 128, "bf16"),
     (64, 128, 2), (64, 256, 4), (128, 32768), (1, 0, 1), (0, 0, 1), 1),
    # K = (128,4): the 64-wide tile stops inside part 0; part 1 is a box dim of extent 1
    ("K_tile_inside_a_part", Layout((256, (128, 4)), (512, (1, 65536))), k_tile(128, 128, 64, "bf16"),
     (64, 128, 1), (128, 256, 4), (1024, 131072), (1, 0, 1), (0, 0, 1), 1),
    # five leaves, five TMA dims: M = (8,8,4), K = (64,2)
    ("rank5", Layout(((8, 8, 4), (64, 2)), ((512, 64, 4096), (1, 16384))), k_tile(128, 128, 64, "bf16"),
     (64, 8, 8, 2, 1), (64, 8, 8, 4, 2), (1024, 128, 8192, 32768), (1, 0, 0, 0, 1), (0, 0, 1, 2, 1), 1),
]


@pytest.mark.parametrize("row", HIER, ids=lambda r: r[0])
def test_hierarchical_gmem_parts_become_tma_dims(row):
    _, g, s, box, gdim, gstrides, modes, parts, copies = row
    p = make_tma_params(g, s, "bf16")
    assert (p.box_dim, p.global_dim, p.global_strides) == (box, gdim, gstrides)
    assert (p.gmem_modes, p.gmem_parts, p.copies_per_tile, p.rank) == (modes, parts, copies, len(box))
    assert validate_tma(g, s, "bf16") == []
    n_tiles = [ext // t for ext, t in zip((prod(x) if isinstance(x, tuple) else x for x in g.shape), p.cta_tiler)]
    for tile in itertools.product(*(sorted({0, 1, n - 1}) for n in n_tiles)):
        check_tile_by_brute_force(g, s, p, tile)


def test_hierarchical_tma_coords_split_the_mode_coordinate():
    p = make_tma_params(Layout((256, (128, 4)), (512, (1, 65536))), k_tile(128, 128, 64, "bf16"), "bf16")
    # K coordinate x -> (x % 128, x // 128); M stays whole
    assert p.tma_coords((5, 200)) == (72, 5, 1)
    assert [p.box_coords((0, j)) for j in range(4)] == [(0, 0, 0), (64, 0, 0), (0, 0, 1), (64, 0, 1)]
    # past the end of the outermost part the coordinate is not wrapped (the TMA fills it out of bounds)
    assert p.tma_coords((0, 4 * 128)) == (0, 0, 4)


def test_hierarchical_multicast_slices_cover_the_box():
    g = Layout(((64, 64), 256), ((16384, 256), 1))
    full = make_tma_params(g, k_tile(128, 128, 64, "bf16"), "bf16")
    p = make_tma_params(g, k_tile(128, 128, 64, "bf16"), "bf16", multicast=2)
    assert p.box_dim == (64, 64, 1) and p.full_box_dim == (64, 64, 2)
    reads = [x for r in range(2) for x in tma_reads(p, p.box_coords((3, 2), cta_rank=r))]
    assert reads == tma_reads(full, full.box_coords((3, 2)))


def test_hierarchical_describe_names_the_parts():
    p = make_tma_params(Layout(((64, 64), 256), ((16384, 256), 1)), k_tile(128, 128, 64, "bf16"), "bf16")
    text = p.describe()
    for needle in ("dim 0: gmem mode 1, globalDim 256", "dim 1: gmem mode 0 part 0, globalDim 64, stride 32768 bytes",
                   "dim 2: gmem mode 0 part 1, globalDim 64, stride 512 bytes, box 2"):
        assert needle in text, needle


def test_hierarchical_bind_and_symbolic_outer_part():
    M1, ld = sympy.symbols("M1 ld", integer=True, positive=True)
    p = make_tma_params(Layout(((64, M1), 128), ((1, ld), 64)), MN_KFIRST, "bf16")
    assert p.global_dim == (64, 128, M1) and p.global_strides == (128, 2 * ld) and p.mode_parts == ((64,), ())
    b = p.bind(((64, 32), 128), ((1, 8192), 64))
    assert b.global_dim == (64, 128, 32) and b.global_strides == (128, 16384)
    assert b == make_tma_params(Layout(((64, 32), 128), ((1, 8192), 64)), MN_KFIRST, "bf16")
    with pytest.raises(TmaError, match=r"parts \(32, 64\).*inner parts \(64,\)"):
        p.bind(((32, 64), 128), ((1, 8192), 64))
    with pytest.raises(TmaError, match=r"globalStrides\[2\] = 24 bytes \(gmem mode 0 part 1\)"):
        p.bind(((64, 32), 128), ((1, 12), 64))


def test_hierarchical_refusals():
    s = k_tile(128, 128, 64, "bf16")
    # a part whose byte stride breaks the 16-byte rule
    assert validate_tma(Layout(((64, 2), 64), ((64, 4), 1)), s, "bf16") == [
        "globalStrides[2] = 8 bytes (gmem mode 0 part 1): must be a multiple of 16 and < 2^40"]
    # six leaves: more TMA dims than the 5 the hardware has
    six = Layout(((8, 8, 4), (64, 2, 2)), ((512, 64, 4096), (1, 16384, 65536)))
    (problem,) = validate_tma(six, s, "bf16")
    assert problem.startswith("rank 6 > 5 (one TMA dim per gmem leaf: gmem mode 1 part 0, gmem mode 0 part 0")
    # the tile does not split over the parts
    with pytest.raises(TmaError, match=r"tile extent 128 along gmem mode 0 does not split over its parts \(12, 64\)"):
        make_tma_params(Layout(((12, 64), 64), ((64, 8192), 1)), s, "bf16")
    # a symbolic inner part: the split of a coordinate over the parts is unknown
    P = sympy.Symbol("P", integer=True, positive=True)
    with pytest.raises(TmaError, match="symbolic inner parts"):
        make_tma_params(Layout(((P, 64), 64), ((64, 8192), 1)), s, "bf16")


def test_bind_refuses_a_stride_that_is_not_an_int():
    """int(F2) spells an F2 stride's bits, but an F2 stride combines by XOR: a tensor map cannot take it."""
    from cute_py import F2
    from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
    from cute_py.arch.sm90.tma import TmaError
    p = make_tma_params(parse("(M,K):(K,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")
    assert p.bind((4096, 1000), (1000, 1)).global_strides == (2000,)
    with pytest.raises(TmaError, match="TmaParams.bind: int strides: .* has stride F2\\(1536\\), not an int"):
        p.bind((4096, 1000), (F2(1536), 1))
