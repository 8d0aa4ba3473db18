"""cute_py.arch.sm90.gmma_desc: wgmma shared-memory descriptors derived from smem layouts.

Two kinds of tests:

* CuTe's verified values (CUTE_REFERENCE.md §3.7): descriptor hex, LBO, SBO,
  layout type and the fragment's k-block / M-block steps for the fp16 64x16 A
  slice of ``SM90_64x64x16_F32F16F16_SS``, and B-operand slices (``mma_mn = N``).
* The defining property: decode the 64-bit descriptor, compute the byte address
  of every element of the operand slice from the PTX ISA's canonical layouts
  (stated below, independently of cute_py), and compare it with the smem
  layout's own map (swizzled element offset * element bytes).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cute_py import ComposedLayout, Layout, Swizzle, tile_to_shape
from cute_py.arch.sm90 import GmmaLayoutError, make_gmma_desc, smem_atom, tile_smem

BYTES = {"e4m3": 1, "f16": 2, "bf16": 2, "tf32": 4}
TYPE_CODES = {0: "INTERLEAVE", 1: "B128", 2: "B64", 3: "B32"}
ROW_BYTES = {"INTERLEAVE": 16, "B32": 32, "B64": 64, "B128": 128}


# --------------------------------------------------------------------------- the PTX ISA, stated independently

def decode(value: int) -> dict:
    """The fields of a wgmma matrix descriptor (PTX ISA "Matrix Descriptor Format"), in bytes where they are
    addresses or offsets: start address bits [0,14) (>>4), LBO [16,30) (>>4), SBO [32,46) (>>4),
    base offset [49,52), layout type [62,64)."""
    return {
        "start": (value & 0x3FFF) << 4,
        "lbo": ((value >> 16) & 0x3FFF) << 4,
        "sbo": ((value >> 32) & 0x3FFF) << 4,
        "base": (value >> 49) & 0x7,
        "type": TYPE_CODES[(value >> 62) & 0x3],
    }


def hw_swizzle(row_bytes: int, addr):
    """The swizzle modes on byte addresses: the 16-byte chunk index inside a ``row_bytes`` row (address
    bits [4, 4+B)) is XORed with address bits [7, 7+B), B = log2(row_bytes / 16). INTERLEAVE: none."""
    b = {16: 0, 32: 1, 64: 2, 128: 3}[row_bytes]
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def canonical_addresses(fields: dict, major: str, nbytes: int, mn, k):
    """Byte address of element (mn, k) of the operand slice, from the descriptor fields alone.

    K-major (rows along MN, each row holds K contiguously):
      swizzled   : start + (mn%8)*R + (mn//8)*SBO + k*bytes            (32 bytes of K lie in one R-byte row)
      INTERLEAVE : start + (mn%8)*16 + (mn//8)*SBO + (k*bytes//16)*LBO + (k*bytes)%16   (8x16-byte core matrices)
    MN-major (the transpose: rows along K, each row holds MN contiguously):
      swizzled   : start + (mn*bytes)%R + (mn*bytes//R)*LBO + (k%8)*R + (k//8)*SBO
                   (LBO: between R-byte-wide MN atoms; SBO: between 8-row K groups)
      INTERLEAVE : start + (mn*bytes)%16 + (mn*bytes//16)*SBO + (k%8)*16 + (k//8)*LBO   (LBO and SBO swap)
    followed by the byte swizzle of the layout type (R = its row width).
    """
    s, lbo, sbo, r = fields["start"], fields["lbo"], fields["sbo"], ROW_BYTES[fields["type"]]
    inter = fields["type"] == "INTERLEAVE"
    if major == "K":
        kb = k * nbytes
        if inter:
            a = s + (mn % 8) * 16 + (mn // 8) * sbo + (kb // 16) * lbo + kb % 16
        else:
            a = s + (mn % 8) * r + (mn // 8) * sbo + kb
    else:
        mb = mn * nbytes
        if inter:
            a = s + mb % 16 + (mb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            a = s + mb % r + (mb // r) * lbo + (k % 8) * r + (k // 8) * sbo
    return hw_swizzle(r, a)


# --------------------------------------------------------------------------- the smem layout's map

def layout_map(layout, stage=None):
    """Array A[mn, k] = the smem layout's (swizzled) element offset of (mn, k) [in stage ``stage``].

    A layout is a sum of its modes' offsets, so the inner layout is evaluated (by cute_py) once per MN
    coordinate and once per K coordinate; the swizzle functor (cute_py's) is applied to the whole array.
    A few points are cross-checked against a direct call of the layout."""
    inner = getattr(layout, "inner", layout)
    rank = len(inner.shape)
    mn_n = int(np.prod(inner.shape[0])) if isinstance(inner.shape[0], tuple) else inner.shape[0]
    k_n = int(np.prod(inner.shape[1])) if isinstance(inner.shape[1], tuple) else inner.shape[1]
    tail = () if rank == 2 else (stage or 0,)
    col = np.array([inner(m, 0, *tail) for m in range(mn_n)], dtype=np.int64)
    row = np.array([inner(0, k, *tail) for k in range(k_n)], dtype=np.int64)
    base = inner(0, 0, *tail)
    off = col[:, None] + row[None, :] - base
    sw = getattr(layout, "outer", None)
    out = off + layout.offset if isinstance(sw, Swizzle) else off
    if isinstance(sw, Swizzle):
        out = sw(out)
    for m, k in ((0, 0), (mn_n - 1, k_n - 1), (mn_n // 3, k_n // 2 + 1 if k_n > 2 else 0), (7, k_n - 1)):
        m %= mn_n
        assert out[m, k] == layout(m, k, *tail), "layout_map disagrees with the layout itself"
    return out


# --------------------------------------------------------------------------- §3.7 verified values

REFERENCE_ROWS = [
    # (major, swizzle, M, K, hex, type, LBO, SBO, k-block step, M-block step) -- 64x16 fp16 A slice
    ("K", 0, 64, 64, 0x0000000800400000, "INTERLEAVE", 64, 8, 128, 0),
    ("K", 32, 64, 64, 0xC000001000010000, "B32", 1, 16, 128, 0),
    ("K", 64, 64, 64, 0x8000002000010000, "B64", 1, 32, 2, 0),      # fragment (1,1,(2,2)):(0,0,(2,256))
    ("K", 128, 64, 64, 0x4000004000010000, "B128", 1, 64, 2, 0),
    ("K", 128, 128, 64, 0x4000004000010000, "B128", 1, 64, 2, 512),  # (1,2,4):(0,512,2)
    ("MN", 0, 64, 64, 0x0000000800400000, "INTERLEAVE", 64, 8, 128, 0),
    ("MN", 32, 64, 64, 0xC000004000100000, "B32", 16, 64, 128, 0),
    ("MN", 64, 64, 64, 0x8000004000200000, "B64", 32, 64, 128, 0),
    ("MN", 128, 64, 64, 0x4000004000000000, "B128", 0, 64, 128, 0),
    ("MN", 128, 128, 64, 0x4000008000000000, "B128", 0, 128, 256, 64),  # default order: (1,2,4):(0,64,256)
]


@pytest.mark.parametrize("row", REFERENCE_ROWS, ids=lambda r: f"{r[0]}-SW{r[1]}-{r[2]}x{r[3]}")
def test_reference_descriptor_values(row):
    major, sw, m, k, value, ltype, lbo, sbo, kstep, mstep = row
    # §3.7's MN rows are tile_to_shape in its default (MN-first) order
    tile = tile_to_shape(smem_atom(major, sw, "f16"), (m, k))
    d = make_gmma_desc(tile, "f16", major, mma_mn=64)
    assert (hex(d.value), d.layout_type, d.lbo, d.sbo) == (hex(value), ltype, lbo, sbo)
    assert (d.k_block_step, d.mn_block_step) == (kstep, mstep)
    assert d.start == 0 and d.base_offset == 0
    f = decode(d.value)
    assert (f["lbo"], f["sbo"], f["type"], f["base"]) == (16 * lbo, 16 * sbo, ltype, 0)


def test_bf16_gives_the_same_descriptors_as_f16():
    for major, sw, m, k, value, *_ in REFERENCE_ROWS:
        tile = tile_to_shape(smem_atom(major, sw, "bf16"), (m, k))
        assert make_gmma_desc(tile, "bf16", major).value == value


@pytest.mark.parametrize("n", [128, 256])
def test_operand_b_k_major(n):
    # K_SW128 (N, 64): ((8, N/8), (64, 1)):((64, 512), (1, 0)); 8-row groups 1024 bytes apart -> SBO 64;
    # the (N, 16) slice is the whole N extent, so there is no next MN slice.
    tile = tile_smem(smem_atom("K", 128, "bf16"), n, 64)
    d = make_gmma_desc(tile, "bf16", "K", mma_mn=n)
    assert (hex(d.value), d.lbo, d.sbo, d.k_block_step, d.mn_block_step) == \
        ("0x4000004000010000", 1, 64, 2, 0)


@pytest.mark.parametrize("n", [128, 256])
def test_operand_b_mn_major_k_first(n):
    # MN_SW128 (N, 64) K-first: ((64, N/64), (8, 8)):((1, 4096), (64, 512)).
    # B (mma_mn = N): LBO = next 64-wide MN atom = 4096 elements = 8192 bytes = 512 units;
    #                 SBO = next 8-row K group   =  512 elements = 1024 bytes =  64 units.
    # A (mma_mn = 64) never leaves its MN atom: LBO 0, and the next M slice is 512 units away.
    tile = tile_smem(smem_atom("MN", 128, "bf16"), n, 64, major="MN")
    b = make_gmma_desc(tile, "bf16", "MN", mma_mn=n)
    assert (hex(b.value), b.layout_type, b.lbo, b.sbo, b.k_block_step, b.mn_block_step) == \
        ("0x4000004002000000", "B128", 512, 64, 128, 0)
    a = make_gmma_desc(tile, "bf16", "MN", mma_mn=64)
    assert (a.lbo, a.sbo, a.k_block_step, a.mn_block_step) == (0, 64, 128, 512)
    assert b.lbo != a.lbo


def test_operand_b_mn_major_default_order():
    # MN_SW128 (128, 64) default order: ((64,2),(8,8)):((1,512),(64,1024)) -> LBO 512 el = 64 units,
    # SBO 1024 el = 128 units.
    tile = tile_to_shape(smem_atom("MN", 128, "f16"), (128, 64))
    b = make_gmma_desc(tile, "f16", "MN", mma_mn=128)
    assert (hex(b.value), b.lbo, b.sbo, b.k_block_step) == ("0x4000008000400000", 64, 128, 256)


def test_start_and_stage_tiles():
    tile = tile_smem(smem_atom("K", 128, "f16"), 128, 64, stages=4)
    d = make_gmma_desc(tile, "f16", "K", start=1024 // 16 * 3)
    assert d.start == 192 and d.value & 0x3FFF == 192
    assert (d.lbo, d.sbo, d.k_block_step, d.mn_block_step) == (1, 64, 2, 512)


# --------------------------------------------------------------------------- the defining property

def _configs():
    out = []
    shapes = [(64, 64), (128, 64), (128, 128), (256, 64)]
    for t in ("f16", "bf16"):
        for major, sw in itertools.product(("K", "MN"), (0, 32, 64, 128)):
            orders = ("kfirst", "default") if major == "MN" else ("default",)
            for order in orders:
                for bmn, bk in (shapes if t == "f16" else [(128, 64)]):
                    out.append((t, major, sw, order, bmn, bk, None))
                out.append((t, major, sw, order, 128, 64, 3))
    for t, shapes in (("tf32", [(64, 64), (128, 32)]), ("e4m3", [(64, 128), (128, 256)])):
        for sw in (0, 32, 64, 128):
            for bmn, bk in shapes:
                out.append((t, "K", sw, "default", bmn, bk, None))
    return out


CONFIGS = _configs()


def _tile(t, major, sw, order, bmn, bk, stages):
    atom = smem_atom(major, sw, t)
    if order == "kfirst":
        return tile_smem(atom, bmn, bk, stages=stages, major="MN")
    return tile_to_shape(atom, (bmn, bk) if stages is None else (bmn, bk, stages))


def _id(c):
    t, major, sw, order, bmn, bk, stages = c
    return f"{t}-{major}-SW{sw}-{order}-{bmn}x{bk}" + (f"x{stages}" if stages else "")


BASE = 5 * 1024     # a 1024-byte aligned stage buffer address (the swizzle repeats every 1024 bytes)


def _slices(t, bmn, bk, mma_mn):
    k_inst = 32 // BYTES[t]
    return [(i, j) for i in range(bmn // mma_mn) for j in range(bk // k_inst)], k_inst


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_descriptor_addresses_every_element_of_every_slice(cfg):
    """For A (mma_mn = 64) and B (mma_mn = block MN): the descriptor's canonical layout, started at
    each slice's (unswizzled) offset -- what CuTe's descriptor iterator adds -- puts every element
    exactly where the smem layout does."""
    t, major, sw, _order, bmn, bk, stages = cfg
    nb = BYTES[t]
    tile = _tile(*cfg)
    inner = getattr(tile, "inner", tile)
    for stage in ([None] if stages is None else [0, stages - 1]):
        smem = BASE + layout_map(tile, stage) * nb
        tail = () if stage is None else (stage,)
        for mma_mn in sorted({64, bmn}):
            if mma_mn > 256:
                continue
            d = make_gmma_desc(tile, t, major, mma_mn=mma_mn, start=BASE // 16)
            f = decode(d.value)
            assert f["base"] == 0
            assert f["type"] == {0: "INTERLEAVE", 32: "B32", 64: "B64", 128: "B128"}[sw]
            slices, k_inst = _slices(t, bmn, bk, mma_mn)
            mn, k = np.meshgrid(np.arange(mma_mn), np.arange(k_inst), indexing="ij")
            for i, j in slices:
                # the slice's unswizzled byte offset (multiple of 16), added to the start address
                origin = inner(i * mma_mn, j * k_inst, *tail) * nb
                assert origin % 16 == 0
                fi = dict(f, start=f["start"] + origin)
                got = canonical_addresses(fi, major, nb, mn, k)
                want = smem[i * mma_mn:(i + 1) * mma_mn, j * k_inst:(j + 1) * k_inst]
                bad = np.argwhere(got != want)
                assert bad.size == 0, (f"mma_mn={mma_mn} stage={stage} slice ({i},{j}): element "
                                       f"{tuple(bad[0])} at {got[tuple(bad[0])]} per {d}, layout has "
                                       f"{want[tuple(bad[0])]}")


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_block_steps_advance_to_every_slice(cfg):
    """desc + offset(i, j) (added to the 64-bit value, as the kernel does) addresses
    slice (i, j) of the stage tile."""
    t, major, _sw, _order, bmn, bk, stages = cfg
    nb = BYTES[t]
    tile = _tile(*cfg)
    smem = BASE + layout_map(tile, 0 if stages else None) * nb
    for mma_mn in sorted({64, bmn}):
        if mma_mn > 256:
            continue
        d = make_gmma_desc(tile, t, major, mma_mn=mma_mn, start=BASE // 16)
        slices, k_inst = _slices(t, bmn, bk, mma_mn)
        mn, k = np.meshgrid(np.arange(mma_mn), np.arange(k_inst), indexing="ij")
        wrong = []
        for i, j in slices:
            f = decode(d.value + d.offset(i, j))
            got = canonical_addresses(f, major, nb, mn, k)
            want = smem[i * mma_mn:(i + 1) * mma_mn, j * k_inst:(j + 1) * k_inst]
            if (got != want).any():
                wrong.append((i, j))
        assert not wrong, (f"mma_mn={mma_mn}: k_layout={d.k_layout}, mn_layout={d.mn_layout} "
                           f"do not reach slices {wrong} of {tile}")


def test_k_block_step_of_the_sw64_reference_row():
    """Minimal form of the failure above: §3.7's K SW64 64x64 fragment is (1,1,(2,2)):(0,0,(2,256)),
    so k-blocks 0..3 start at +0, +2, +256, +258 -- not k_block_step * j."""
    tile = tile_to_shape(smem_atom("K", 64, "f16"), (64, 64))
    d = make_gmma_desc(tile, "f16", "K")
    offsets = [tile.inner(0, 16 * j) * 2 // 16 for j in range(4)]
    assert offsets == [0, 2, 256, 258]
    assert [d.offset(0, j) for j in range(4)] == offsets
    assert str(d.k_layout) == "(2,2):(2,256)" and not d.k_uniform   # CuTe's (1,1,(2,2)):(0,0,(2,256))
    assert [j * d.k_block_step for j in range(4)] != offsets


def test_property_can_fail():
    """The canonical-address oracle distinguishes descriptors: a wrong SBO or layout type is caught."""
    tile = tile_smem(smem_atom("K", 128, "f16"), 128, 64)
    d = make_gmma_desc(tile, "f16", "K")
    smem = layout_map(tile) * 2
    mn, k = np.meshgrid(np.arange(64), np.arange(16), indexing="ij")
    f = decode(d.value)
    assert (canonical_addresses(f, "K", 2, mn, k) == smem[:64, :16]).all()
    assert not (canonical_addresses(dict(f, sbo=512), "K", 2, mn, k) == smem[:64, :16]).all()
    assert not (canonical_addresses(dict(f, type="B64"), "K", 2, mn, k) == smem[:64, :16]).all()
    assert not (canonical_addresses(f, "MN", 2, mn, k) == smem[:64, :16]).all()


# --------------------------------------------------------------------------- non-canonical layouts

@pytest.mark.parametrize("layout, major, check, expected, found", [
    # MN-contiguous (64,64):(1,64) claimed K-major: its u128 slice is not (8n, 2) chunks
    (Layout((64, 64), (1, 64)), "K", "u128 shape is (8n, 2)", "(multiple of 8, 2)", "(8, 16)"),
    # K-contiguous but 128-byte rows in an unswizzled (INTER) layout: rows must be 16 bytes apart
    (Layout((64, 64), (64, 1)), "K", "stride<0,0> == W", "1", "8"),
    # SW128 swizzle, but rows 256 bytes apart
    (ComposedLayout(Swizzle(3, 3, 3), 0, Layout((64, 64), (128, 1))), "K", "stride<0,0> == W", "8", "16"),
    # SW128 swizzle on a tile of 64-byte (SW64-width) rows
    (ComposedLayout(Swizzle(3, 3, 3), 0, tile_to_shape(Layout((8, 32), (32, 1)), (64, 64))), "K",
     "stride<0,0> == W", "8", "4"),
    # MN-contiguous plain layout claimed MN-major (INTER): K rows must be 16 bytes apart, found 128
    (Layout((64, 64), (1, 64)), "MN", "stride<1,0> == W", "1", "8"),
    # a K-major SW128 tile claimed MN-major
    (tile_to_shape(smem_atom("K", 128, "f16"), (64, 64)), "MN", "K extent == instruction K", "16", "2"),
])
def test_non_canonical_layouts_raise(layout, major, check, expected, found):
    with pytest.raises(GmmaLayoutError) as e:
        make_gmma_desc(layout, "f16", major)
    msg = str(e.value)
    assert check in msg
    assert f"expected {expected}, found {found}" in msg
    assert f"{major}-major" in msg


def test_non_gmma_swizzle_raises_gmma_layout_error():
    # Sw<3,4,3> on 16-bit elements is Sw<3,5,3> on bytes: no wgmma layout type has it
    tile = tile_smem(smem_atom("K", 128, "f16"), 64, 64)
    bad = ComposedLayout(Swizzle(3, 4, 3), 0, tile.inner)
    with pytest.raises(GmmaLayoutError, match="Sw<B,4,3>"):
        make_gmma_desc(bad, "f16", "K")


def test_slice_must_divide_the_tile_and_major_is_checked():
    tile = tile_smem(smem_atom("K", 128, "f16"), 64, 64)
    with pytest.raises(GmmaLayoutError, match="does not divide"):
        make_gmma_desc(tile, "f16", "K", mma_mn=128)
    with pytest.raises(GmmaLayoutError, match="major"):
        make_gmma_desc(tile, "f16", "N")
    with pytest.raises(GmmaLayoutError, match="MN, K"):
        make_gmma_desc(Layout(64), "f16", "K")


# --------------------------------------------------------------------------- describe()

def test_describe_mentions_every_field():
    tile = tile_smem(smem_atom("K", 128, "bf16"), 128, 64)
    text = make_gmma_desc(tile, "bf16", "K").describe()
    for needle in ("0x4000004000010000", "K-major", "B128", "canonical (16-byte units)",
                   "start_address", "LBO", "= 1 ", "stride<1,0>", "16 bytes",
                   "SBO", "= 64 ", "stride<0,1>", "1024 bytes", "base_offset", "layout_type", "Sw<3,4,3>",
                   "k-blocks", "4:2", "mn-blocks", "2:512"):
        assert needle in text, needle
    tile = tile_smem(smem_atom("MN", 128, "bf16"), 128, 64, major="MN")
    text = make_gmma_desc(tile, "bf16", "MN", mma_mn=128).describe()
    for needle in ("MN-major", "LBO >> 4           = 512", "next MN atom", "8192 bytes",
                   "SBO >> 4           = 64", "next 8-row K group"):
        assert needle in text, needle
    text = make_gmma_desc(tile_to_shape(smem_atom("MN", 0, "f16"), (64, 64)), "f16", "MN").describe()
    assert "INTERLEAVE" in text and "= 64 " in text and "= 8 " in text


# --------------------------------------------------------------------------- the guide page

def test_hopper_guide_examples_run():
    """docs/guide/hopper.md quotes real outputs: every ``>>>`` example in its python blocks passes."""
    import doctest
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "hopper.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 10
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "hopper.md", "hopper.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0 and runner.tries >= 25, "".join(out)
