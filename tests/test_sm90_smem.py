"""cute_py.arch.sm90.smem: the canonical GMMA smem atoms, their selection, tiling and stage sizes.

Expected values are CuTe's (CUTE_REFERENCE.md §3.4): the atoms are defined in
bits with the byte swizzle ``Sw<B,4,3>`` and upcast to element units.
"""

from __future__ import annotations

import pytest

from cute_py import ComposedLayout, Layout, LayoutError, Swizzle, tile_to_shape
from cute_py.arch.sm90 import (
    SMEM_ALIGN,
    select_smem_atom,
    smem_atom,
    stage_bytes,
    swizzle_bytes_of,
    tile_smem,
)

BYTES = {"e4m3": 1, "f16": 2, "bf16": 2, "f32": 4, "tf32": 4}

# (major, swizzle bytes, dtype) -> str(atom). The 16-bit rows are §3.4's table; fp32 K_SW128 (8,32):(32,1)
# and 8-bit K_SW128 (8,128):(128,1) are stated there too. The others follow the same rule: the row is
# 16 (INTER), 32, 64 or 128 bytes, the element swizzle is Sw<B, 4 - log2(bytes), 3>.
ATOMS = {
    ("K", 0, "e4m3"): "(8,16):(16,1)",
    ("K", 32, "e4m3"): "Sw<1,4,3> o 0 o (8,32):(32,1)",
    ("K", 64, "e4m3"): "Sw<2,4,3> o 0 o (8,64):(64,1)",
    ("K", 128, "e4m3"): "Sw<3,4,3> o 0 o (8,128):(128,1)",
    ("K", 0, "f16"): "(8,8):(8,1)",
    ("K", 32, "f16"): "Sw<1,3,3> o 0 o (8,16):(16,1)",
    ("K", 64, "f16"): "Sw<2,3,3> o 0 o (8,32):(32,1)",
    ("K", 128, "f16"): "Sw<3,3,3> o 0 o (8,64):(64,1)",
    ("K", 0, "f32"): "(8,4):(4,1)",
    ("K", 32, "f32"): "Sw<1,2,3> o 0 o (8,8):(8,1)",
    ("K", 64, "f32"): "Sw<2,2,3> o 0 o (8,16):(16,1)",
    ("K", 128, "f32"): "Sw<3,2,3> o 0 o (8,32):(32,1)",
    ("MN", 0, "e4m3"): "(16,8):(1,16)",
    ("MN", 32, "e4m3"): "Sw<1,4,3> o 0 o (32,8):(1,32)",
    ("MN", 64, "e4m3"): "Sw<2,4,3> o 0 o (64,8):(1,64)",
    ("MN", 128, "e4m3"): "Sw<3,4,3> o 0 o (128,8):(1,128)",
    ("MN", 0, "f16"): "(8,8):(1,8)",
    ("MN", 32, "f16"): "Sw<1,3,3> o 0 o (16,8):(1,16)",
    ("MN", 64, "f16"): "Sw<2,3,3> o 0 o (32,8):(1,32)",
    ("MN", 128, "f16"): "Sw<3,3,3> o 0 o (64,8):(1,64)",
    ("MN", 0, "f32"): "(4,8):(1,4)",
    ("MN", 32, "f32"): "Sw<1,2,3> o 0 o (8,8):(1,8)",
    ("MN", 64, "f32"): "Sw<2,2,3> o 0 o (16,8):(1,16)",
    ("MN", 128, "f32"): "Sw<3,2,3> o 0 o (32,8):(1,32)",
}


def byte_swizzle(swizzle_bytes: int, addr: int) -> int:
    """The hardware's swizzle on a byte address (the PTX ISA's swizzling modes): the index of the 16-byte
    chunk inside a ``swizzle_bytes`` row (address bits [4, 4+B)) is XORed with the index of the 128-byte
    line modulo the number of chunks per row (bits [7, 7+B)), B = log2(swizzle_bytes / 16). INTER: none."""
    if swizzle_bytes == 0:
        return addr
    chunks = swizzle_bytes // 16                 # 2, 4 or 8 chunks: B = 1, 2, 3 bits
    chunk = (addr >> 4) & (chunks - 1)
    row = (addr >> 7) & (chunks - 1)
    return (addr & ~((chunks - 1) << 4)) | ((chunk ^ row) << 4)


def _coords(layout):
    """All (mn, k) coordinates of a rank-2 layout, MN fastest."""
    inner = getattr(layout, "inner", layout)
    from cute_py import size
    m, k = size(inner[0]), size(inner[1])
    return [(i, j) for j in range(k) for i in range(m)]


@pytest.mark.parametrize("key", sorted(ATOMS), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_atom_shape_stride(key):
    major, sw, t = key
    assert str(smem_atom(major, sw, t)) == ATOMS[key]


def test_bf16_atoms_equal_f16_atoms():
    for sw in (0, 32, 64, 128):
        for major in ("K", "MN"):
            assert smem_atom(major, sw, "bf16") == smem_atom(major, sw, "f16")
    assert smem_atom("K", 128, "tf32") == smem_atom("K", 128, "f32")


@pytest.mark.parametrize("key", sorted(ATOMS), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_atom_is_bijection_onto_8_rows(key):
    major, sw, t = key
    atom = smem_atom(major, sw, t)
    row = (sw or 16) // BYTES[t]                  # row width W in elements
    offsets = [atom(i) for i in range(atom.size())]
    assert atom.size() == 8 * row
    assert sorted(offsets) == list(range(8 * row))
    # 8 rows of one swizzle-row each: the atom covers exactly 8 * swizzle_bytes bytes (128 for INTER)
    assert 8 * row * BYTES[t] == 8 * (sw or 16)


@pytest.mark.parametrize("key", sorted(ATOMS), ids=lambda k: f"{k[0]}-{k[1]}-{k[2]}")
def test_element_swizzle_is_the_hardware_byte_swizzle(key):
    """Element e of the unswizzled atom lives at byte e*bytes; the atom's (element-unit) swizzled offset,
    times the element size, must be where the hardware's byte swizzle puts that byte address."""
    major, sw, t = key
    atom = smem_atom(major, sw, t)
    nb = BYTES[t]
    inner = getattr(atom, "inner", atom)
    for c in _coords(atom):
        e = inner(*c)
        assert atom(*c) * nb == byte_swizzle(sw, e * nb), (c, e)


def test_element_swizzle_checked_against_library_swizzle_too():
    # the same fact with the library's own functor on bytes: Sw<3,4,3>(e*2) == 2*Sw<3,3,3>(e)
    atom = smem_atom("K", 128, "bf16")
    for e in range(atom.size()):
        assert Swizzle(3, 4, 3)(2 * e) == 2 * atom.outer(e)
    # and the byte-swizzle helper itself is not the identity (so the test above can fail)
    assert byte_swizzle(128, 128 + 16) == 128


def test_swizzle_bytes_of():
    for sw in (0, 32, 64, 128):
        for t in ("e4m3", "bf16", "f32"):
            assert swizzle_bytes_of(smem_atom("K", sw, t), t) == sw
    with pytest.raises(LayoutError, match="not a GMMA swizzle"):
        swizzle_bytes_of(ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1))), "f16")


def test_atom_argument_errors():
    with pytest.raises(LayoutError, match="major"):
        smem_atom("M", 128, "f16")
    with pytest.raises(LayoutError, match="swizzle"):
        smem_atom("K", 16, "f16")
    with pytest.raises(LayoutError, match="8-, 16- or 32-bit"):
        smem_atom("K", 128, "f64")


# --------------------------------------------------------------------------- selection

@pytest.mark.parametrize("major, t, bmn, bk, sw", [
    # K-major: the largest atom whose K width (64/32/16/8 elements for 16-bit) divides block_k
    ("K", "bf16", 128, 64, 128), ("K", "bf16", 128, 128, 128), ("K", "bf16", 128, 32, 64),
    ("K", "bf16", 128, 96, 64), ("K", "bf16", 64, 16, 32), ("K", "bf16", 64, 48, 32),
    ("K", "bf16", 64, 8, 0), ("K", "bf16", 64, 24, 0), ("K", "bf16", 8, 64, 128),
    ("K", "f32", 128, 32, 128), ("K", "f32", 128, 16, 64), ("K", "f32", 128, 8, 32), ("K", "f32", 128, 4, 0),
    ("K", "e4m3", 128, 128, 128), ("K", "e4m3", 128, 64, 64), ("K", "e4m3", 128, 32, 32),
    ("K", "e4m3", 128, 16, 0),
    # MN-major: the largest atom whose MN width divides block_mn
    ("MN", "bf16", 128, 64, 128), ("MN", "bf16", 96, 64, 64), ("MN", "bf16", 48, 64, 32),
    ("MN", "bf16", 40, 64, 0), ("MN", "bf16", 64, 8, 128), ("MN", "f32", 32, 64, 128), ("MN", "f32", 8, 64, 32),
])
def test_select_smem_atom(major, t, bmn, bk, sw):
    assert select_smem_atom(major, t, bmn, bk) == smem_atom(major, sw, t)


@pytest.mark.parametrize("major, t, bmn, bk", [
    ("K", "bf16", 128, 4),     # K extent not a multiple of one 16-byte INTER row (8 elements)
    ("K", "bf16", 12, 64),     # MN extent not whole 8-row groups
    ("K", "e4m3", 128, 8),     # 8 bytes of K
    ("MN", "bf16", 36, 64),    # MN extent not a multiple of 8 elements
    ("MN", "bf16", 64, 4),     # K extent not whole 8-row groups
])
def test_select_smem_atom_nothing_fits(major, t, bmn, bk):
    with pytest.raises(LayoutError, match="no canonical atom fits"):
        select_smem_atom(major, t, bmn, bk)


# --------------------------------------------------------------------------- tiling

def test_tile_smem_k_sw128_values():
    atom = smem_atom("K", 128, "f16")
    assert str(tile_smem(atom, 128, 64)) == "Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))"
    assert str(tile_smem(atom, 128, 64, stages=4)) == \
        "Sw<3,3,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))"
    # tile_smem(major="K") is tile_to_shape in the default order
    assert tile_smem(atom, 128, 64) == tile_to_shape(atom, (128, 64))


def test_tile_mn_sw128_default_order_vs_k_first():
    atom = smem_atom("MN", 128, "f16")
    # default (MN-first) order: the second 64-wide MN atom comes right after the first
    assert str(tile_to_shape(atom, (128, 64))) == "Sw<3,3,3> o 0 o ((64,2),(8,8)):((1,512),(64,1024))"
    # K-first (Step<_2,_1,_3>): each MN column of 8-row K groups is contiguous
    assert str(tile_smem(atom, 128, 64, major="MN")) == "Sw<3,3,3> o 0 o ((64,2),(8,8)):((1,4096),(64,512))"
    assert str(tile_smem(atom, 128, 64, stages=2, major="MN")) == \
        "Sw<3,3,3> o 0 o ((64,2),(8,8),(1,2)):((1,4096),(64,512),(0,8192))"


@pytest.mark.parametrize("major, sw", [(m, s) for m in ("K", "MN") for s in (0, 32, 64, 128)])
@pytest.mark.parametrize("bmn, bk", [(64, 64), (128, 64), (64, 128)])
def test_tiles_are_bijections_on_whole_swizzle_atoms(major, sw, bmn, bk):
    """Tiling keeps a bijection onto [0, MN*K) whose every 8-row block is one whole atom."""
    tile = tile_smem(smem_atom(major, sw, "f16"), bmn, bk, major=major)
    offs = sorted(tile(i) for i in range(bmn * bk))
    assert offs == list(range(bmn * bk))


def test_tile_smem_bad_major():
    with pytest.raises(LayoutError, match="major"):
        tile_smem(smem_atom("K", 128, "f16"), 128, 64, major="N")


# --------------------------------------------------------------------------- stage bytes

@pytest.mark.parametrize("major, sw, t, bmn, bk, expected", [
    ("K", 128, "bf16", 128, 64, 16384),       # 128*64*2, already a multiple of 1024
    ("K", 128, "bf16", 256, 64, 32768),
    ("K", 128, "f32", 128, 32, 16384),
    ("K", 128, "e4m3", 128, 128, 16384),
    ("K", 0, "bf16", 8, 8, 1024),             # 128 bytes -> 1024
    ("K", 0, "bf16", 16, 8, 1024),            # 256 bytes -> 1024
    ("K", 0, "bf16", 40, 16, 2048),           # 1280 bytes -> 2048
    ("K", 0, "bf16", 64, 24, 3072),           # 3072 bytes, already aligned
    ("K", 128, "f16", 72, 64, 9216),          # 9216 = 9 * 1024
    ("MN", 128, "bf16", 128, 64, 16384),
    ("MN", 32, "f16", 16, 8, 1024),           # 256 bytes -> 1024
])
def test_stage_bytes(major, sw, t, bmn, bk, expected):
    tile = tile_smem(smem_atom(major, sw, t), bmn, bk, major=major)
    got = stage_bytes(tile, t)
    assert got == expected
    assert got % SMEM_ALIGN == 0 and SMEM_ALIGN == 1024
    assert got >= bmn * bk * BYTES[t] > got - 1024


def test_stage_bytes_of_a_staged_layout_covers_every_stage():
    # the cosize of a staged layout covers every stage
    tile = tile_smem(smem_atom("K", 128, "bf16"), 128, 64, stages=3)
    assert stage_bytes(tile, "bf16") == 3 * 16384
