"""The 64-bit wgmma shared-memory matrix descriptor, derived from the smem layout.

Bits (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in [0,14),
leading byte offset (LBO) >> 4 in [16,30), stride byte offset (SBO) >> 4 in
[32,46), base offset in [49,52) (0: stage buffers are 1024-byte aligned), and
the layout type in [62,64): INTERLEAVE 0, B128 1, B64 2, B32 3.

The derivation is CuTe's ``make_gmma_desc``: recast the operand slice to
16-byte units, divide it into the canonical form (8-row groups by 16-byte
chunks), check the strides the hardware assumes, and read LBO and SBO off the
remaining strides.

>>> from cute_py.arch.sm90 import smem_atom, tile_smem
>>> d = make_gmma_desc(tile_smem(smem_atom("K", 128, "f16"), 64, 64), "f16", "K")
>>> hex(d.value), d.layout_type, d.lbo, d.sbo, d.k_block_step
('0x4000004000010000', 'B128', 1, 64, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import Layout, coalesce, composition, int_tuple as it, logical_divide, upcast
from ...layouts.dtypes import dtype
from ...layouts.errors import LayoutError, layout_error
from .smem import swizzle_bytes_of

__all__ = ["GmmaDescriptor", "make_gmma_desc", "LAYOUT_TYPES", "GmmaLayoutError"]

LAYOUT_TYPES = {0: "INTERLEAVE", 128: "B128", 64: "B64", 32: "B32"}
_TYPE_CODE = {"INTERLEAVE": 0, "B128": 1, "B64": 2, "B32": 3}


class GmmaLayoutError(LayoutError):
    """A shared-memory layout that no wgmma descriptor can describe.

    >>> from cute_py import LayoutError
    >>> issubclass(GmmaLayoutError, LayoutError)
    True
    """


@dataclass(frozen=True)
class GmmaDescriptor:
    """A wgmma smem descriptor with the layout facts it came from.

    ``start``, ``lbo`` and ``sbo`` are in 16-byte units (as encoded);
    ``k_layout`` / ``mn_layout`` map the index of an instruction-K slice / an
    MN slice of the stage tile to the integer added to the descriptor (the
    slice's offset in 16-byte units before the hardware's swizzle; CuTe's
    descriptor-iterator fragment). They are not always uniform: a K-major tile
    spanning several swizzle atoms along K jumps by a whole atom after the
    last slice of each atom. ``k_block_step`` / ``mn_block_step`` are the
    first steps (``k_layout(1)``), exact for every slice only when
    ``k_uniform``. ``derivation`` holds the canonical layout and the strides
    each field was read from.
    """

    start: int
    lbo: int
    sbo: int
    base_offset: int
    layout_type: str
    k_layout: Layout
    mn_layout: Layout
    major: str
    mma_mn: int
    canonical: Layout
    derivation: tuple

    @property
    def k_block_step(self) -> int:
        """Descriptor increment from K slice 0 to K slice 1 (``k_layout(1)``; 0 if there is one slice)."""
        return self.k_layout(1) if it.product(self.k_layout.shape) > 1 else 0

    @property
    def mn_block_step(self) -> int:
        """Descriptor increment from MN slice 0 to MN slice 1 (0 if there is one slice)."""
        return self.mn_layout(1) if it.product(self.mn_layout.shape) > 1 else 0

    @property
    def k_uniform(self) -> bool:
        """True if K slice ``j`` is at ``j * k_block_step`` for every ``j``."""
        n = it.product(self.k_layout.shape)
        return all(self.k_layout(j) == j * self.k_block_step for j in range(n))

    def offset(self, mn_block: int, k_block: int) -> int:
        """The integer added to the descriptor for operand slice ``(mn_block, k_block)`` of the tile.

        >>> from cute_py import tile_to_shape
        >>> from cute_py.arch.sm90 import smem_atom
        >>> d = make_gmma_desc(tile_to_shape(smem_atom("K", 64, "f16"), (64, 64)), "f16", "K")
        >>> [d.offset(0, j) for j in range(4)], d.k_uniform
        ([0, 2, 256, 258], False)
        """
        return self.mn_layout(mn_block) + self.k_layout(k_block)

    @property
    def value(self) -> int:
        """The 64-bit descriptor."""
        return ((self.start & 0x3FFF) | (self.lbo & 0x3FFF) << 16 | (self.sbo & 0x3FFF) << 32
                | (self.base_offset & 0x7) << 49 | _TYPE_CODE[self.layout_type] << 62)

    def describe(self) -> str:
        """Each field, its value, and the layout stride it came from.

        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> print(make_gmma_desc(tile_smem(smem_atom("K", 128, "f16"), 64, 64), "f16", "K").describe())
        wgmma descriptor 0x4000004000010000 (K-major, B128)
          canonical (16-byte units): ((8,8),(2,1)):((8,64),(1,0))
          start_address >> 4 = 0      (slice start, bytes 0)
          LBO >> 4           = 1      from stride<1,0> (next 16-byte K chunk)  = 16 bytes
          SBO >> 4           = 64     from stride<0,1> (next 8-row group)  = 1024 bytes
          base_offset        = 0      (stage buffers aligned to 1024 bytes)
          layout_type        = B128   from the swizzle Sw<3,4,3> on bytes
          k-blocks           : 4:2  (instruction-K slice -> descriptor increment)
          mn-blocks          : 1:0  (slice of 64 along MN -> increment)
        """
        lines = [f"wgmma descriptor {self.value:#018x} ({self.major}-major, {self.layout_type})",
                 f"  canonical (16-byte units): {self.canonical}"]
        lines.append(f"  start_address >> 4 = {self.start:<6} (slice start, bytes {self.start * 16})")
        for name, val, src in self.derivation:
            lines.append(f"  {name:<18} = {val:<6} {src}")
        lines.append(f"  base_offset        = {self.base_offset:<6} (stage buffers aligned to 1024 bytes)")
        b = {"INTERLEAVE": 0, "B32": 1, "B64": 2, "B128": 3}[self.layout_type]
        lines.append(f"  layout_type        = {self.layout_type:<6} from the swizzle Sw<{b},4,3> on bytes")
        lines.append(f"  k-blocks           : {self.k_layout}  (instruction-K slice -> descriptor increment)")
        lines.append(f"  mn-blocks          : {self.mn_layout}  (slice of {self.mma_mn} along MN -> increment)")
        return "\n".join(lines)

    def __str__(self) -> str:
        return (f"GmmaDescriptor({self.value:#018x}: start={self.start}, lbo={self.lbo}, sbo={self.sbo}, "
                f"base={self.base_offset}, {self.layout_type})")


def _stride(layout: Layout, *modes):
    s, d = layout.shape, layout.stride
    for m in modes:
        s = s[m] if isinstance(s, tuple) else s
        d = d[m] if isinstance(d, tuple) else d
    return it.product(s), d


def _fail(check, expected, found, layout, slice_, major):
    return layout_error(GmmaLayoutError, "make_gmma_desc", "not a canonical GMMA layout",
                        f"{major}-major check '{check}' failed: expected {expected}, found {found}",
                        smem_layout=layout, operand_slice=slice_)


def make_gmma_desc(smem_layout, dtype_, major: str, mma_mn: int = 64, k_inst: int | None = None,
                   start: int = 0) -> GmmaDescriptor:
    """The descriptor of the first wgmma operand slice ``(mma_mn, k_inst)`` of a stage's ``(MN, K)`` smem tile.

    ``smem_layout`` is the stage tile (a swizzled ComposedLayout or a plain
    layout for INTER, in element units, modes (MN, K)); ``mma_mn`` is the
    instruction's extent along this operand's MN mode (64 for A, N for B);
    ``k_inst`` defaults to the instruction K (32 bytes). ``start`` is the slice
    address in 16-byte units (0: the kernel adds the stage's base).

    Preconditions (checked, with the expected and found values): the
    swizzle is ``Sw<B,4,3>`` on bytes; K-major: rows of ``W`` 16-byte chunks
    (``stride<0,0> == W``) and adjacent K chunks (``stride<1,0> == 1``);
    MN-major: ``W`` adjacent MN chunks and K rows ``W`` chunks apart.

    >>> from cute_py import tile_to_shape
    >>> from cute_py.arch.sm90 import smem_atom
    >>> hex(make_gmma_desc(tile_to_shape(smem_atom("MN", 64, "f16"), (64, 64)), "f16", "MN").value)
    '0x8000004000200000'
    """
    t = dtype(dtype_)
    if major not in ("K", "MN"):
        raise layout_error(GmmaLayoutError, "make_gmma_desc", "major must be 'K' or 'MN'", f"got {major!r}")
    inner = getattr(smem_layout, "inner", smem_layout)
    if not isinstance(inner, Layout) or it.rank(inner.shape) < 2:
        raise layout_error(GmmaLayoutError, "make_gmma_desc", "need an (MN, K) smem layout", layout=smem_layout)
    try:
        sw_bytes = swizzle_bytes_of(smem_layout, t)
    except LayoutError as e:
        raise layout_error(GmmaLayoutError, "make_gmma_desc", "not a canonical GMMA layout", str(e)) from None
    w = max(sw_bytes, 16) // 16
    if k_inst is None:
        k_inst = 256 // t.bits
    elems = 128 // t.bits                                 # elements per 16-byte chunk
    mn_size, k_size = it.product(inner.shape[0]), it.product(inner.shape[1])
    if mn_size % mma_mn or k_size % k_inst:
        raise layout_error(GmmaLayoutError, "make_gmma_desc", "the instruction slice does not divide the tile",
                           f"slice ({mma_mn}, {k_inst}) vs tile ({mn_size}, {k_size})", layout=smem_layout)
    tile2 = Layout._make(inner.shape[:2], inner.stride[:2])
    sl = composition(tile2, (Layout(mma_mn), Layout(k_inst)))      # the first operand slice
    try:
        u128 = upcast(sl, elems)
    except LayoutError as e:
        raise layout_error(GmmaLayoutError, "make_gmma_desc", "the slice is not made of 16-byte chunks",
                           str(e), layout=smem_layout) from None
    # slice index -> offset in 16-byte units (before the hardware swizzle), from the tile's own modes
    k_layout = _block_layout(tile2[1], k_size // k_inst, k_inst, elems)
    mn_layout = _block_layout(tile2[0], mn_size // mma_mn, mma_mn, elems)
    derivation = []
    if major == "K":
        if it.product(u128.shape[0]) % 8 or it.product(u128.shape[1]) != 2:
            raise _fail("u128 shape is (8n, 2)", "(multiple of 8, 2)",
                        f"({it.product(u128.shape[0])}, {it.product(u128.shape[1])})", smem_layout, sl, major)
        canon = logical_divide(u128, (Layout(8), Layout(2)))
        _, d00 = _stride(canon, 0, 0)
        _, d10 = _stride(canon, 1, 0)
        s01, d01 = _stride(canon, 0, 1)
        if d00 != w:
            raise _fail("stride<0,0> == W (row of W chunks)", w, d00, smem_layout, sl, major)
        if sw_bytes and d10 != 1:
            raise _fail("stride<1,0> == 1 (adjacent K chunks)", 1, d10, smem_layout, sl, major)
        sbo = d01 if s01 > 1 else 0
        lbo = d10 if not sw_bytes else 1
        derivation += [("LBO >> 4", lbo, f"from stride<1,0> (next 16-byte K chunk)  = {lbo * 16} bytes"),
                       ("SBO >> 4", sbo, f"from stride<0,1> (next 8-row group)  = {sbo * 16} bytes")]
    else:
        if it.product(u128.shape[1]) != k_inst:
            raise _fail("K extent == instruction K", k_inst, it.product(u128.shape[1]), smem_layout, sl, major)
        if it.product(u128.shape[0]) % w:
            raise _fail("MN extent in chunks is a multiple of W", w, it.product(u128.shape[0]), smem_layout, sl, major)
        canon = logical_divide(u128, (Layout(w), Layout(8)))
        s00, d00 = _stride(canon, 0, 0)
        s01, d01 = _stride(canon, 0, 1)
        _, d10 = _stride(canon, 1, 0)
        s11, d11 = _stride(canon, 1, 1)
        if sw_bytes and d00 != 1:
            raise _fail("stride<0,0> == 1 (adjacent MN chunks)", 1, d00, smem_layout, sl, major)
        if d10 != w:
            raise _fail("stride<1,0> == W (K rows W chunks apart)", w, d10, smem_layout, sl, major)
        atoms_mn = d01 if s01 > 1 else 0
        krows = d11 if s11 > 1 else 0
        if sw_bytes:
            lbo, sbo = atoms_mn, krows
            derivation += [("LBO >> 4", lbo, f"from stride<0,1> (next MN atom)  = {lbo * 16} bytes"),
                           ("SBO >> 4", sbo, f"from stride<1,1> (next 8-row K group)  = {sbo * 16} bytes")]
        else:
            sbo, lbo = atoms_mn, krows
            derivation += [("LBO >> 4", lbo, f"from stride<1,1> (next 8-row K group, INTERLEAVE)  = {lbo * 16} bytes"),
                           ("SBO >> 4", sbo, f"from stride<0,1> (next MN atom, INTERLEAVE)  = {sbo * 16} bytes")]
    return GmmaDescriptor(start, lbo, sbo, 0, LAYOUT_TYPES[sw_bytes], k_layout, mn_layout, major, mma_mn, canon,
                          tuple(derivation))


def _block_layout(mode: Layout, count: int, step: int, elems: int) -> Layout:
    """``coalesce(mode o count:step)`` with strides in 16-byte units: block index -> offset."""
    blocks = coalesce(composition(mode, Layout(count, step)))
    def scale(d):
        return tuple(scale(x) for x in d) if isinstance(d, tuple) else d // elems
    return Layout._make(blocks.shape, scale(blocks.stride))
