"""Canonical GMMA shared-memory layouts: the swizzle atoms, their selection and tiling.

wgmma reads operands from shared memory only in a few canonical layouts. Each
is a *swizzle atom*: 8 rows of a 16-, 32-, 64- or 128-byte row (INTER, SW32,
SW64, SW128), XOR-swizzled in 16-byte chunks (``Sw<B,4,3>`` on byte
addresses). K-major atoms hold rows along MN and the contiguous row along K;
MN-major atoms are their transposes. cute_py keeps them in *element* units:
for 16-bit elements the 128-byte K-major atom is ``Sw<3,3,3> o 0 o (8,64):(64,1)``.

>>> print(smem_atom("K", 128, "bf16"))
Sw<3,3,3> o 0 o (8,64):(64,1)
>>> print(smem_atom("MN", 64, "f32"))
Sw<2,2,3> o 0 o (16,8):(1,16)
"""

from __future__ import annotations

from ...layouts import ComposedLayout, Layout, Swizzle, cosize, int_tuple as it, tile_to_shape
from ...layouts.dtypes import dtype
from ...layouts.errors import LayoutError, layout_error

__all__ = ["SWIZZLE_BYTES", "smem_atom", "select_smem_atom", "tile_smem", "stage_bytes", "SMEM_ALIGN",
           "swizzle_bytes_of"]

SWIZZLE_BYTES = (0, 32, 64, 128)
"""Row width of the atoms in bytes; 0 is INTER (no swizzle, 16-byte rows)."""
SMEM_ALIGN = 1024
"""Stage buffers start at multiples of 1024 bytes (the SW128 repeat), so the descriptors' base offset is 0."""

_B = {0: 0, 32: 1, 64: 2, 128: 3}


def _log2(x: int) -> int:
    return x.bit_length() - 1


def _check(op, major, swizzle_bytes, t):
    if major not in ("K", "MN"):
        raise layout_error(LayoutError, op, "major must be 'K' or 'MN'", f"got {major!r}")
    if swizzle_bytes not in _B:
        raise layout_error(LayoutError, op, "swizzle must be 0 (INTER), 32, 64 or 128 bytes", f"got {swizzle_bytes!r}")
    if t.bits not in (8, 16, 32):
        raise layout_error(LayoutError, op, "GMMA operands are 8-, 16- or 32-bit", f"{t.name} is {t.bits}-bit")


def smem_atom(major: str, swizzle_bytes: int, dtype_) -> ComposedLayout:
    """The canonical GMMA smem atom in element units: ``Sw<B, 4-log2(bytes), 3> o 0 o layout``.

    K-major: ``(8, W):(W, 1)``; MN-major: ``(W, 8):(1, W)``, with ``W`` the
    row width in elements (16 bytes for INTER). Postcondition: a bijection
    onto ``[0, 8*W)`` whose 16-byte chunks are permuted within each
    ``8 x row`` block exactly as the hardware's swizzle mode does.

    >>> print(smem_atom("K", 0, "f16"))
    (8,8):(8,1)
    >>> print(smem_atom("MN", 128, "e4m3"))
    Sw<3,4,3> o 0 o (128,8):(1,128)
    """
    t = dtype(dtype_)
    _check("smem_atom", major, swizzle_bytes, t)
    row_bytes = swizzle_bytes or 16
    w = row_bytes * 8 // t.bits
    inner = Layout((8, w), (w, 1)) if major == "K" else Layout((w, 8), (1, w))
    b = _B[swizzle_bytes]
    if b == 0:
        return inner
    return ComposedLayout(Swizzle(b, 4 - _log2(t.bits // 8), 3), 0, inner)


def swizzle_bytes_of(layout, dtype_) -> int:
    """The swizzle row width in bytes (0 for INTER) of a canonical smem layout, read off its swizzle.

    >>> swizzle_bytes_of(smem_atom("K", 64, "bf16"), "bf16")
    64
    """
    t = dtype(dtype_)
    sw = getattr(layout, "outer", None)
    if not isinstance(sw, Swizzle) or sw.bits == 0:
        return 0
    m_bytes = sw.base + _log2(t.bits // 8)
    if m_bytes != 4 or sw.shift != 3:
        raise layout_error(LayoutError, "swizzle_bytes_of", "not a GMMA swizzle",
                           f"{sw} on {t.bits}-bit elements is Sw<{sw.bits},{m_bytes},{sw.shift}> on bytes; "
                           f"GMMA needs Sw<B,4,3>", layout=layout)
    return 16 << sw.bits


def select_smem_atom(major: str, dtype_, block_mn: int, block_k: int) -> ComposedLayout:
    """The largest canonical atom whose row divides the block (CUTLASS's ``ss_smem_selector``).

    K-major atoms need their row (K width) to divide ``block_k``; MN-major ones
    their row (MN width) to divide ``block_mn``; INTER is the fallback, and the
    block must hold whole 8-row groups and INTER rows.

    >>> print(select_smem_atom("K", "bf16", 128, 64))
    Sw<3,3,3> o 0 o (8,64):(64,1)
    >>> print(select_smem_atom("K", "bf16", 128, 32))
    Sw<2,3,3> o 0 o (8,32):(32,1)
    """
    t = dtype(dtype_)
    _check("select_smem_atom", major, 128, t)
    along, across = (block_k, block_mn) if major == "K" else (block_mn, block_k)
    for sw in (128, 64, 32, 0):
        w = (sw or 16) * 8 // t.bits
        if along % w == 0:
            if across % 8:
                break
            return smem_atom(major, sw, t)
    raise layout_error(LayoutError, "select_smem_atom", "no canonical atom fits the block",
                       f"{major}-major {t.name} block (MN={block_mn}, K={block_k}) needs the "
                       f"{'K' if major == 'K' else 'MN'} extent to be a multiple of {128 // t.bits} "
                       f"and the other a multiple of 8")


def tile_smem(atom, block_mn: int, block_k: int, stages: int | None = None, major: str = "K"):
    """Tile an atom to an ``(MN, K[, stages])`` block; MN-major operands are tiled K-first.

    K-first (CuTe's ``Step<_2,_1,_3>``) keeps each 8-row K group of an MN-major
    tile contiguous, which is what makes TMA boxes large (see make_tma_params).

    >>> print(tile_smem(smem_atom("K", 128, "f16"), 128, 64))
    Sw<3,3,3> o 0 o ((8,16),(64,1)):((64,512),(1,0))
    >>> print(tile_smem(smem_atom("K", 128, "f16"), 128, 64, stages=4))
    Sw<3,3,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))
    >>> print(tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"))
    Sw<3,3,3> o 0 o ((64,2),(8,8)):((1,4096),(64,512))
    """
    if major not in ("K", "MN"):
        raise layout_error(LayoutError, "tile_smem", "major must be 'K' or 'MN'", f"got {major!r}")
    shape = (block_mn, block_k) if stages is None else (block_mn, block_k, stages)
    order = None
    if major == "MN":
        order = (1, 0) if stages is None else (1, 0, 2)
    return tile_to_shape(atom, shape, order) if order else tile_to_shape(atom, shape)


def stage_bytes(block_layout, dtype_) -> int:
    """Bytes of one stage buffer of ``block_layout``, rounded up to :data:`SMEM_ALIGN`.

    >>> stage_bytes(tile_smem(smem_atom("K", 128, "bf16"), 128, 64), "bf16")
    16384
    """
    t = dtype(dtype_)
    inner = getattr(block_layout, "inner", block_layout)
    nbytes = cosize(inner) * t.bits // 8
    return it.round_up(nbytes, SMEM_ALIGN)
