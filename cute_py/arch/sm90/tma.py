"""TMA (``cuTensorMapEncodeTiled``) parameters derived from the gmem and smem layouts.

CuTe's ``make_tma_copy`` recipe: invert the smem layout (smem index -> tile
coordinate), compose it with the tile's gmem coordinates, and keep the longest
prefix of smem-contiguous modes that are unit steps of some gmem mode: those
modes are the TMA box, innermost first. Every other gmem mode becomes a box
dimension of extent 1. globalDim and globalStrides are the gmem extents and
byte strides of the modes the box dimensions walk.

>>> from cute_py import parse
>>> from cute_py.arch.sm90 import smem_atom, tile_smem
>>> p = make_tma_params(parse("(4096,4096):(4096,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")
>>> p.global_dim, p.global_strides, p.box_dim, p.swizzle, p.bytes_per_copy
((4096, 4096), (8192,), (64, 128), '128B', 16384)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...layouts import (
    Layout, ScaledBasis, coalesce, composition, get_nonswizzle_portion, get_swizzle_portion,
    int_tuple as it, make_identity_layout, right_inverse,
)
from ...layouts.dtypes import DType, dtype
from ...layouts.errors import LayoutError, layout_error

__all__ = ["TmaParams", "TmaError", "make_tma_params", "validate_tma", "TMA_DATA_TYPES"]

TMA_DATA_TYPES = {"f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32", "tf32": "TFLOAT32",
                  "f64": "FLOAT64", "s8": "UINT8", "u8": "UINT8", "e4m3": "UINT8", "e5m2": "UINT8",
                  "u16": "UINT16", "s32": "INT32", "u32": "UINT32", "s64": "INT64", "u64": "UINT64"}
"""Element type -> ``CU_TENSOR_MAP_DATA_TYPE_*`` (8-bit types travel as UINT8, as in CuTe)."""
_SWIZZLE = {0: "NONE", 1: "32B", 2: "64B", 3: "128B"}
_SPAN = {"NONE": None, "32B": 32, "64B": 64, "128B": 128}


class TmaError(LayoutError):
    """The layouts cannot be described by one TMA descriptor (every violated constraint is listed).

    >>> from cute_py import LayoutError
    >>> issubclass(TmaError, LayoutError)
    True
    """


@dataclass(frozen=True)
class TmaParams:
    """The arguments of ``cuTensorMapEncodeTiled`` and how they map tiles to coordinates.

    ``global_dim``/``box_dim``/``element_strides`` are innermost first;
    ``global_strides`` are bytes for dims >= 1 (what the driver takes).
    ``gmem_modes[i]`` is the gmem mode TMA dim ``i`` walks; ``box_layout`` maps
    an smem index (over the box) to gmem coordinates. ``bytes_per_copy`` is
    what one CTA receives per issue (after a multicast split).
    """

    dtype: DType
    data_type: str
    rank: int
    global_dim: tuple
    global_strides: tuple
    box_dim: tuple
    element_strides: tuple
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str
    bytes_per_copy: int
    multicast: int
    gmem_modes: tuple
    cta_tiler: tuple
    box_layout: Layout
    full_box_dim: tuple

    @property
    def copies_per_tile(self) -> int:
        """TMA issues needed to fill one CTA tile (per CTA, after the multicast split).

        >>> from cute_py import parse
        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> make_tma_params(parse("(4096,4096):(4096,1)"), tile_smem(smem_atom("K", 0, "f16"), 128, 64),
        ...                 "f16").copies_per_tile
        8
        """
        return it.product(self.cta_tiler) // it.product(self.full_box_dim)

    def box_coords(self, tile_coord, cta_rank: int = 0) -> tuple:
        """TMA coordinates (innermost first) of tile ``tile_coord``'s box; ``cta_rank`` picks the multicast slice.

        >>> from cute_py import parse
        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> p = make_tma_params(parse("(4096,4096):(4096,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64),
        ...                     "f16", multicast=2)
        >>> p.box_coords((3, 5)), p.box_coords((3, 5), cta_rank=1)
        ((320, 384), (320, 448))
        """
        tile_coord = tuple(tile_coord) if isinstance(tile_coord, (tuple, list)) else (tile_coord,)
        if not 0 <= cta_rank < self.multicast:
            raise layout_error(TmaError, "TmaParams.box_coords", "cta_rank out of range",
                               f"{cta_rank} not in [0, {self.multicast})")
        origin = [0] * len(self.global_dim)
        for mode, t in enumerate(tile_coord):
            extent = self.cta_tiler[mode] if mode < len(self.cta_tiler) else 1   # untiled modes step by 1
            for i, g in enumerate(self.gmem_modes):
                if g == mode:
                    origin[i] = t * extent
        # multicast splits the box from the last dimension inward: slice r starts r*box further
        r = cta_rank
        for i in reversed(range(len(self.box_dim))):
            n = self.full_box_dim[i] // self.box_dim[i]
            origin[i] += (r % n) * self.box_dim[i]
            r //= n
        return tuple(origin)

    def bind(self, shape, stride) -> "TmaParams":
        """These parameters for a concrete gmem layout ``shape:stride`` (ints, the gmem modes in order) with the
        structure they were derived for: the extents and byte strides of the modes the TMA dims walk
        (``gmem_modes``) replace ``global_dim`` and ``global_strides``; box, swizzle and mode map stay.
        Raises :class:`TmaError` if the contiguous mode's stride is not 1 or a TMA rule fails.

        >>> from cute_py import parse
        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> p = make_tma_params(parse("(M,K):(K,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")
        >>> p.global_dim, p.bind((4096, 1000), (1024, 1)).global_dim, p.bind((4096, 1000), (1024, 1)).global_strides
        ((K, M), (1000, 4096), (2048,))
        """
        shape, stride = tuple(shape), tuple(stride)
        nbytes = self.dtype.bits // 8
        problems = [] if stride[self.gmem_modes[0]] == 1 else [
            f"contiguous dim 0 walks gmem mode {self.gmem_modes[0]}, whose stride is {stride[self.gmem_modes[0]]}"]
        dims = tuple(int(shape[g]) for g in self.gmem_modes)
        strides = tuple(int(stride[g]) * nbytes for g in self.gmem_modes[1:])
        problems += _global_problems(dims, strides)
        if problems:
            raise layout_error(TmaError, "TmaParams.bind", "TMA constraints violated", "; ".join(problems),
                               shape=shape, stride=stride)
        return replace(self, global_dim=dims, global_strides=strides)

    def describe(self) -> str:
        """Each argument and the layout fact it came from."""
        lines = [f"TMA tiled descriptor ({self.dtype.name}, {self.data_type})",
                 f"  box layout (smem index -> gmem coord): {self.box_layout}"]
        for i, g in enumerate(self.gmem_modes):
            stride = "1 element (contiguous)" if i == 0 else f"{self.global_strides[i - 1]} bytes"
            lines.append(f"  dim {i}: gmem mode {g}, globalDim {self.global_dim[i]}, stride {stride}, "
                         f"box {self.box_dim[i]}" + (f" (of {self.full_box_dim[i]} before multicast)"
                                                      if self.box_dim[i] != self.full_box_dim[i] else ""))
        lines.append(f"  elementStrides {self.element_strides}, interleave {self.interleave}, "
                     f"swizzle {self.swizzle} (from the smem swizzle), L2 {self.l2_promotion}, OOB fill {self.oob_fill}")
        lines.append(f"  bytes per copy {self.bytes_per_copy} (multicast {self.multicast})")
        return "\n".join(lines)


def _is_sym(x) -> bool:
    return not it.is_int(x) and hasattr(x, "free_symbols")


def _gmem_modes(gmem):
    """Flat (extents, strides) of the gmem layout; a Layout or a (shape, stride) pair (sympy leaves allowed).

    A hierarchical mode whose parts are contiguous in gmem is merged into one, as CuTe's TMA builder
    coalesces the gmem modes: ``(4096,(64,64)):(4096,(1,64))`` is ``(4096,4096):(4096,1)``.
    """
    if isinstance(gmem, Layout):
        shape, stride = gmem.shape, gmem.stride
    elif isinstance(gmem, tuple) and len(gmem) == 2:
        shape, stride = gmem
    else:
        raise TypeError(f"make_tma_params: gmem_layout must be a Layout or a (shape, stride) pair, got {gmem!r}")
    shape = shape if isinstance(shape, tuple) else (shape,)
    stride = stride if isinstance(stride, tuple) else (stride,)
    if len(shape) == len(stride) and any(isinstance(x, tuple) for x in shape + stride):
        try:
            merged = coalesce(Layout(shape, stride), (1,) * len(shape))
        except LayoutError:
            merged = None
        if merged is not None:
            ms = merged.shape if isinstance(merged.shape, tuple) else (merged.shape,)
            md = merged.stride if isinstance(merged.stride, tuple) else (merged.stride,)
            if len(ms) == len(shape) and not any(isinstance(x, tuple) for x in ms + md):
                shape, stride = ms, md
    if len(shape) != len(stride) or any(isinstance(x, tuple) for x in shape + stride):
        raise layout_error(TmaError, "make_tma_params", "gmem layout must be flat with one stride per mode "
                           "(a hierarchical mode is merged only where its parts are contiguous in gmem)",
                           shape=shape, stride=stride)
    return shape, stride


def _swizzle_mode(sw, t: DType, problems):
    if sw.bits == 0:
        return "NONE"
    m_bytes = sw.base + (t.bits // 8).bit_length() - 1
    if m_bytes != 4 or sw.shift != 3:
        problems.append(f"smem swizzle {sw} on {t.bits}-bit elements is Sw<{sw.bits},{m_bytes},{sw.shift}> on bytes; "
                        f"TMA swizzles are Sw<B,4,3>")
        return "NONE"
    return _SWIZZLE[sw.bits]


def _derive(gmem, smem, dtype_, cta_tiler, multicast):
    t = dtype(dtype_)
    problems = []
    gshape, gstride = _gmem_modes(gmem)
    sw = get_swizzle_portion(smem)
    inner = get_nonswizzle_portion(smem)
    if not isinstance(inner, Layout):
        raise TypeError(f"make_tma_params: smem_layout must be a Layout or a swizzled layout, got {smem!r}")
    swizzle = _swizzle_mode(sw, t, problems)
    if cta_tiler is None:
        cta_tiler = it.product_each(inner.shape)
    cta_tiler = tuple(cta_tiler) if isinstance(cta_tiler, (tuple, list)) else (cta_tiler,)
    if len(cta_tiler) > len(gshape):
        raise layout_error(TmaError, "make_tma_params", "CTA tiler has more modes than the gmem layout",
                           cta_tiler=cta_tiler, gmem_shape=gshape)
    if it.product(cta_tiler) != it.product(inner.shape):
        raise layout_error(TmaError, "make_tma_params", "the CTA tile and the smem layout differ in size",
                           f"{it.product(cta_tiler)} vs {it.product(inner.shape)}", cta_tiler=cta_tiler, smem=inner)
    # Tile coordinates -> gmem coordinates (extents beyond the tile are irrelevant here).
    proxy = tuple(max(c, 1) for c in cta_tiler) + tuple(1 for _ in gshape[len(cta_tiler):])
    cta_v_map = composition(make_identity_layout(proxy), tuple(Layout(c) for c in cta_tiler))
    inv = right_inverse(inner)
    if it.product(inv.shape) != it.product(inner.shape):
        problems.append(f"smem layout {inner} is not compact: its right inverse covers "
                        f"{it.product(inv.shape)} of {it.product(inner.shape)} elements")
        return None, problems
    full = coalesce(composition(cta_v_map, inv))
    fs = full.shape if isinstance(full.shape, tuple) else (full.shape,)
    fd = full.stride if isinstance(full.stride, tuple) else (full.stride,)
    box, modes = [], []
    for s, d in zip(fs, fd):
        if not isinstance(d, ScaledBasis) or d.value != 1 or len(d.mode) != 1:
            break
        box.append(s)
        modes.append(d.mode[0])
    if not box:
        raise layout_error(TmaError, "make_tma_params", "could not find a common tile-gmem vectorization",
                           f"the smem's contiguous run is not a unit step of any gmem mode: {full}", smem=smem)
    box_layout = Layout._make(tuple(box) if len(box) > 1 else box[0],
                              tuple(fd[:len(box)]) if len(box) > 1 else fd[0])
    # every other gmem mode of extent > 1 walks with box extent 1
    for g, (s, d) in enumerate(zip(gshape, gstride)):
        if g not in modes and not (it.is_int(s) and s == 1) and not (it.is_int(d) and d == 0):
            box.append(1)
            modes.append(g)
    rank = len(box)
    if rank > 5:
        problems.append(f"rank {rank} > 5")
    g0 = gstride[modes[0]]
    if not (it.is_int(g0) and g0 == 1):
        problems.append(f"contiguous dim 0: the smem's contiguous mode walks gmem mode {modes[0]} whose stride is "
                        f"{g0}, not 1 (majorness of smem doesn't match majorness of gmem)")
    nbytes = t.bits // 8
    global_dim = tuple(gshape[g] for g in modes)
    global_strides = tuple(gstride[g] * nbytes for g in modes[1:])
    full_box = tuple(box)
    box = _multicast_slice(full_box, multicast, problems)
    for i, b in enumerate(full_box):
        if not 1 <= b <= 256:
            problems.append(f"boxDim[{i}] = {b} not in [1, 256]")
    problems += _global_problems(global_dim, global_strides)
    inner_bytes = box[0] * nbytes
    if inner_bytes % 16:
        problems.append(f"inner box {box[0]} x {nbytes} B = {inner_bytes} B is not a multiple of 16 B")
    span = _SPAN[swizzle]
    if span and inner_bytes > span:
        problems.append(f"inner box {inner_bytes} B exceeds the {swizzle} swizzle span ({span} B)")
    if t.name not in TMA_DATA_TYPES:
        problems.append(f"no TMA data type for {t.name}")
    params = TmaParams(t, TMA_DATA_TYPES.get(t.name, "?"), rank, global_dim, global_strides, tuple(box),
                       (1,) * rank, "NONE", swizzle, "L2_128B", "NONE",
                       it.product(tuple(box)) * nbytes, multicast, tuple(modes), cta_tiler, box_layout, full_box)
    return params, problems


def _multicast_slice(full_box: tuple, multicast: int, problems: list) -> list:
    """The box one CTA of a ``multicast`` group issues: the full box split from its last dimension inward
    (a dimension divides the remaining factor or is divided by it); a split that does not go is a problem."""
    box, m = list(full_box), multicast
    for i in reversed(range(len(box))):
        if m == 1:
            break
        if box[i] % m and m % box[i]:
            problems.append(f"multicast {multicast} does not split box dim {i} ({box[i]})")
            break
        b = box[i]
        box[i] = -(-b // m)
        m = -(-m // b)
    return box


def _global_problems(global_dim, global_strides) -> list:
    """TMA's rules for the global extents and byte strides (symbolic values are checked once bound)."""
    problems = []
    for i, dim in enumerate(global_dim):
        if it.is_int(dim) and not 1 <= dim <= 2 ** 32:
            problems.append(f"globalDim[{i}] = {dim} not in [1, 2^32]")
    for i, st in enumerate(global_strides, start=1):
        if it.is_int(st) and (st % 16 or not 0 < st < 2 ** 40):
            problems.append(f"globalStrides[{i}] = {st} bytes: must be a multiple of 16 and < 2^40")
    return problems


def validate_tma(gmem_layout, smem_layout, dtype_, cta_tiler=None, multicast: int = 1, address=None) -> list:
    """Every TMA constraint the layouts violate, each with its values (empty list: valid).

    Checks: 16-byte aligned ``address`` (if given), rank <= 5, contiguous dim 0
    (smem and gmem majorness agree), 1 <= globalDim <= 2^32, byte strides
    multiples of 16 and < 2^40, 1 <= boxDim <= 256, inner box bytes a multiple
    of 16 and within the swizzle span, multicast dividing the box. Symbolic
    extents and strides are not checked (they are checked at launch).

    >>> from cute_py import parse
    >>> from cute_py.arch.sm90 import smem_atom, tile_smem
    >>> print(validate_tma(parse("(4096,4096):(1,4096)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")[0])
    contiguous dim 0: the smem's contiguous mode walks gmem mode 1 whose stride is 4096, not 1 (majorness of smem doesn't match majorness of gmem)
    """
    params, problems = _derive(gmem_layout, smem_layout, dtype_, cta_tiler, multicast)
    if address is not None and address % 16:
        problems.insert(0, f"global address {address:#x} is not 16-byte aligned")
    return problems


def make_tma_params(gmem_layout, smem_layout, dtype_, cta_tiler=None, multicast: int = 1) -> TmaParams:
    """The ``cuTensorMapEncodeTiled`` arguments for copying tiles of ``gmem_layout`` into ``smem_layout``.

    ``gmem_layout`` is a flat Layout, or a ``(shape, stride)`` pair whose leaves
    may be sympy symbols (M, K, ld); ``smem_layout`` one stage tile (swizzled
    or plain, element units); ``cta_tiler`` the tile extents per gmem mode
    (default: the smem shape); ``multicast`` splits the box over CTAs.
    Raises :class:`TmaError` listing every violated constraint (see
    :func:`validate_tma`).

    >>> from cute_py import parse
    >>> from cute_py.arch.sm90 import smem_atom, tile_smem
    >>> p = make_tma_params(parse("(4096,4096):(1,4096)"), tile_smem(smem_atom("MN", 128, "f16"), 128, 64, major="MN"), "f16")
    >>> p.box_dim, p.bytes_per_copy
    ((64, 64), 8192)
    """
    params, problems = _derive(gmem_layout, smem_layout, dtype_, cta_tiler, multicast)
    if problems or params is None:
        raise layout_error(TmaError, "make_tma_params", "TMA constraints violated", "; ".join(problems),
                           gmem=gmem_layout if isinstance(gmem_layout, Layout) else str(gmem_layout),
                           smem=smem_layout)
    return params
