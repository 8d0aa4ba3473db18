"""TMA (``cuTensorMapEncodeTiled``) parameters derived from the gmem and smem layouts.

CuTe's ``make_tma_copy`` recipe: invert the smem layout (smem index -> tile
coordinate), compose it with the tile's gmem coordinates, and keep the longest
prefix of smem-contiguous modes that are unit steps of some gmem mode: those
modes are the TMA box, innermost first. Every other gmem mode becomes a box
dimension of extent 1. globalDim and globalStrides are the gmem extents and
byte strides of the modes the box dimensions walk.

A hierarchical gmem mode is coalesced first (parts contiguous in gmem merge,
as CuTe's coalesce does); every part that remains is its own TMA dimension,
as each leaf of the gmem layout is a basis ``E<i,j>`` of CuTe's
``tma_gbasis``. The tile along such a mode splits over its parts, and a
coordinate ``x`` along it becomes the digits ``(x // d) % s`` of its parts
(:meth:`TmaParams.tma_coords`).

>>> from cute_py import parse
>>> from cute_py.arch.sm90 import smem_atom, tile_smem
>>> p = make_tma_params(parse("(4096,4096):(4096,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")
>>> p.global_dim, p.global_strides, p.box_dim, p.swizzle, p.bytes_per_copy
((4096, 4096), (8192,), (64, 128), '128B', 16384)
"""

from __future__ import annotations

from numbers import Integral

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
    ``gmem_modes[i]`` is the gmem mode TMA dim ``i`` walks and ``gmem_parts[i]``
    which part of it (0 for a flat mode); ``mode_parts[g]`` holds the static
    extents of every part of gmem mode ``g`` but its outermost (``()`` for a
    flat mode); ``box_layout`` maps an smem index (over the box) to gmem
    coordinates. ``bytes_per_copy`` is what one CTA receives per issue (after
    a multicast split).
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
    gmem_parts: tuple
    mode_parts: tuple

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
        # untiled modes step by 1
        origin = list(self.tma_coords(tuple(t * (self.cta_tiler[mode] if mode < len(self.cta_tiler) else 1)
                                            for mode, t in enumerate(tile_coord))))
        # multicast splits the box from the last dimension inward: slice r starts r*box further
        r = cta_rank
        for i in reversed(range(len(self.box_dim))):
            n = self.full_box_dim[i] // self.box_dim[i]
            origin[i] += (r % n) * self.box_dim[i]
            r //= n
        return tuple(origin)

    def tma_coords(self, gmem_coord) -> tuple:
        """The TMA coordinates (innermost first) of the gmem element at ``gmem_coord`` (one natural coordinate
        per gmem mode; missing trailing modes are 0). Dim ``i`` takes ``(x // d) % s`` of the coordinate ``x``
        along gmem mode ``gmem_modes[i]``: ``d`` is the product of the parts before part ``gmem_parts[i]``
        and ``s`` that part's extent (no ``% s`` on the outermost part, so a coordinate past the end stays out
        of bounds for the TMA).

        >>> from cute_py import Layout
        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> p = make_tma_params(Layout(((64, 64), 256), ((16384, 256), 1)), tile_smem(smem_atom("K", 128, "bf16"), 128, 64),
        ...                     "bf16")
        >>> p.gmem_modes, p.gmem_parts, p.box_dim, p.tma_coords((200, 70))
        ((1, 0, 0), (0, 0, 1), (64, 64, 2), (70, 8, 3))
        """
        gmem_coord = tuple(gmem_coord) if isinstance(gmem_coord, (tuple, list)) else (gmem_coord,)
        out = []
        for g, p in zip(self.gmem_modes, self.gmem_parts):
            x = gmem_coord[g] if g < len(gmem_coord) else 0
            inner = self.mode_parts[g]
            x = x // it.product(inner[:p]) if p else x
            out.append(x % inner[p] if p < len(inner) else x)
        return tuple(out)

    def bind(self, shape, stride) -> "TmaParams":
        """These parameters for a concrete gmem layout ``shape:stride`` (ints, the gmem modes in order, a
        hierarchical mode with the same inner parts) with the structure they were derived for: the extents and
        byte strides of the leaves the TMA dims walk (``gmem_modes``, ``gmem_parts``) replace ``global_dim`` and
        ``global_strides``; box, swizzle and mode map stay.
        Raises :class:`TmaError` if the contiguous mode's stride is not 1 or a TMA rule fails.

        >>> from cute_py import parse
        >>> from cute_py.arch.sm90 import smem_atom, tile_smem
        >>> p = make_tma_params(parse("(M,K):(K,1)"), tile_smem(smem_atom("K", 128, "f16"), 128, 64), "f16")
        >>> p.global_dim, p.bind((4096, 1000), (1024, 1)).global_dim, p.bind((4096, 1000), (1024, 1)).global_strides
        ((K, M), (1000, 4096), (2048,))
        """
        shape, stride = _gmem_modes((shape, stride), "TmaParams.bind")
        leaves = [_parts(s, d) for s, d in zip(shape, stride)]
        nbytes = self.dtype.bits // 8
        problems = [] if len(leaves) == len(self.mode_parts) else [
            f"{len(leaves)} gmem modes; these params were derived for {len(self.mode_parts)}"]
        problems += [f"gmem mode {g} has the parts {tuple(x for x, _ in parts)}; these params were derived for "
                     f"inner parts {inner}" for g, (parts, inner) in enumerate(zip(leaves, self.mode_parts))
                     if tuple(x for x, _ in parts[:-1]) != inner]
        if problems:
            raise layout_error(TmaError, "TmaParams.bind", "the gmem layout has another structure", "; ".join(problems),
                               shape=shape, stride=stride)
        dims = tuple(int(leaves[g][p][0]) for g, p in zip(self.gmem_modes, self.gmem_parts))
        steps = tuple(leaves[g][p][1] for g, p in zip(self.gmem_modes, self.gmem_parts))
        bad = [f"{self._name(i)} has stride {d!r}, not an int" for i, d in enumerate(steps)
               if isinstance(d, bool) or not isinstance(d, Integral)]
        if bad:                                       # an F2 stride converts to an int, but it combines by XOR
            raise layout_error(TmaError, "TmaParams.bind", "int strides", "; ".join(bad), shape=shape, stride=stride)
        if steps[0] != 1:
            problems.append(f"contiguous dim 0 walks {self._name(0)}, whose stride is {steps[0]}")
        strides = tuple(int(d) * nbytes for d in steps[1:])
        problems += _global_problems(dims, strides, [self._name(i) for i in range(self.rank)])
        if problems:
            raise layout_error(TmaError, "TmaParams.bind", "TMA constraints violated", "; ".join(problems),
                               shape=shape, stride=stride)
        return replace(self, global_dim=dims, global_strides=strides)

    def _name(self, i: int) -> str:
        return _name(self.gmem_modes[i], self.gmem_parts[i], self.mode_parts[self.gmem_modes[i]])

    def describe(self) -> str:
        """Each argument and the layout fact it came from."""
        lines = [f"TMA tiled descriptor ({self.dtype.name}, {self.data_type})",
                 f"  box layout (smem index -> gmem coord): {self.box_layout}"]
        for i, g in enumerate(self.gmem_modes):
            stride = "1 element (contiguous)" if i == 0 else f"{self.global_strides[i - 1]} bytes"
            lines.append(f"  dim {i}: {self._name(i)}, globalDim {self.global_dim[i]}, stride {stride}, "
                         f"box {self.box_dim[i]}" + (f" (of {self.full_box_dim[i]} before multicast)"
                                                      if self.box_dim[i] != self.full_box_dim[i] else ""))
        lines.append(f"  elementStrides {self.element_strides}, interleave {self.interleave}, "
                     f"swizzle {self.swizzle} (from the smem swizzle), L2 {self.l2_promotion}, OOB fill {self.oob_fill}")
        lines.append(f"  bytes per copy {self.bytes_per_copy} (multicast {self.multicast})")
        return "\n".join(lines)


def _is_sym(x) -> bool:
    return not it.is_int(x) and hasattr(x, "free_symbols")


def _gmem_modes(gmem, op: str = "make_tma_params"):
    """(extents, strides) of the gmem layout, one entry per mode: a leaf, or a flat tuple of parts for a
    hierarchical mode; a Layout or a (shape, stride) pair (sympy leaves allowed).

    Each mode is coalesced, as CuTe's TMA builder merges gmem modes contiguous in gmem:
    ``(4096,(64,64)):(4096,(1,64))`` is ``(4096,4096):(4096,1)``, and ``(4096,(64,64)):(4096,(1,8192))``
    keeps its two parts.
    """
    if isinstance(gmem, Layout):
        shape, stride = gmem.shape, gmem.stride
    elif isinstance(gmem, tuple) and len(gmem) == 2:
        shape, stride = gmem
    else:
        raise TypeError(f"{op}: gmem_layout must be a Layout or a (shape, stride) pair, got {gmem!r}")
    shape = shape if isinstance(shape, tuple) else (shape,)
    stride = stride if isinstance(stride, tuple) else (stride,)
    if not it.congruent(shape, stride):
        raise layout_error(TmaError, op, "gmem shape and stride must be congruent (one stride per leaf)",
                           shape=shape, stride=stride)
    if any(isinstance(x, tuple) for x in shape):
        try:
            merged = coalesce(Layout(shape, stride), (1,) * len(shape))
            shape, stride = merged.shape, merged.stride
        except LayoutError:                 # undecidable symbolic merge: every leaf stays a part
            pass
        shape = tuple(it.flatten(x) if isinstance(x, tuple) else x for x in shape)
        stride = tuple(it.flatten(x) if isinstance(x, tuple) else x for x in stride)
    return shape, stride


def _parts(shape, stride) -> list:
    """``[(extent, stride), ...]`` of the parts of one gmem mode, innermost first (one for a flat mode)."""
    return list(zip(shape, stride)) if isinstance(shape, tuple) else [(shape, stride)]


def _name(g: int, p: int, inner: tuple) -> str:
    """How messages name part ``p`` of gmem mode ``g`` (whose inner parts are ``inner``)."""
    return f"gmem mode {g}" + (f" part {p}" if inner else "")


def _tile_proxy(g: int, parts: list, c, problems: list):
    """The extents the tile's identity layout takes along gmem mode ``g`` of tile extent ``c``: ``c`` for a flat
    mode; for a hierarchical one its static inner parts, then the outer part the tile reaches. The tile must
    split over the parts (``c`` a multiple of each inner part it covers, or a divisor of the part it stops in)."""
    if len(parts) == 1:
        return max(c, 1)
    inner = [s for s, _ in parts[:-1]]
    if not all(it.is_int(s) for s in inner):
        problems.append(f"gmem mode {g} has symbolic inner parts {tuple(inner)}: a hierarchical mode needs "
                        f"static extents in all parts but the outermost")
        return None
    rest = c
    for s in inner:
        if rest % s == 0:
            rest //= s
        elif s % rest == 0:
            rest = 1
        else:
            problems.append(f"the tile extent {c} along gmem mode {g} does not split over its parts "
                            f"{tuple(x for x, _ in parts)} (each part must divide it or be divided by it)")
            return None
    return tuple(inner) + (rest,)


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
    leaves = [_parts(s, d) for s, d in zip(gshape, gstride)]
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
    # Tile coordinates -> gmem coordinates, one basis E<g> (E<g,p> for part p of a hierarchical mode) per gmem
    # leaf (extents beyond the tile are irrelevant here).
    proxy = tuple(_tile_proxy(g, leaves[g], c, problems) for g, c in enumerate(cta_tiler))
    if None in proxy:
        return None, problems
    proxy += tuple(1 for _ in gshape[len(cta_tiler):])
    cta_v_map = composition(make_identity_layout(proxy), tuple(Layout(c) for c in cta_tiler))
    inv = right_inverse(inner)
    if it.product(inv.shape) != it.product(inner.shape):
        problems.append(f"smem layout {inner} is not compact: its right inverse covers "
                        f"{it.product(inv.shape)} of {it.product(inner.shape)} elements")
        return None, problems
    full = coalesce(composition(cta_v_map, inv))
    fs = full.shape if isinstance(full.shape, tuple) else (full.shape,)
    fd = full.stride if isinstance(full.stride, tuple) else (full.stride,)
    box, keys = [], []
    for s, d in zip(fs, fd):
        if not isinstance(d, ScaledBasis) or d.value != 1 or len(d.mode) != (1 if len(leaves[d.mode[0]]) == 1 else 2):
            break
        box.append(s)
        keys.append((d.mode[0], d.mode[1] if len(d.mode) > 1 else 0))
    if not box:
        raise layout_error(TmaError, "make_tma_params", "could not find a common tile-gmem vectorization",
                           f"the smem's contiguous run is not a unit step of any gmem mode: {full}", smem=smem)
    box_layout = Layout._make(tuple(box) if len(box) > 1 else box[0],
                              tuple(fd[:len(box)]) if len(box) > 1 else fd[0])
    # every other gmem leaf of extent > 1 walks with box extent 1
    for g, parts in enumerate(leaves):
        for p, (s, d) in enumerate(parts):
            if (g, p) not in keys and not (it.is_int(s) and s == 1) and not (it.is_int(d) and d == 0):
                box.append(1)
                keys.append((g, p))
    mode_parts = tuple(tuple(s for s, _ in parts[:-1]) for parts in leaves)
    names = [_name(g, p, mode_parts[g]) for g, p in keys]
    rank = len(box)
    if rank > 5:
        problems.append(f"rank {rank} > 5" + ("" if all(p == () for p in mode_parts) else
                        f" (one TMA dim per gmem leaf: {', '.join(names)})"))
    g0 = leaves[keys[0][0]][keys[0][1]][1]
    if not (it.is_int(g0) and g0 == 1):
        problems.append(f"contiguous dim 0: the smem's contiguous mode walks {names[0]} whose stride is "
                        f"{g0}, not 1 (majorness of smem doesn't match majorness of gmem)")
    nbytes = t.bits // 8
    global_dim = tuple(leaves[g][p][0] for g, p in keys)
    global_strides = tuple(leaves[g][p][1] * nbytes for g, p in keys[1:])
    full_box = tuple(box)
    box = _multicast_slice(full_box, multicast, problems)
    for i, b in enumerate(full_box):
        if not 1 <= b <= 256:
            problems.append(f"boxDim[{i}] = {b} not in [1, 256]")
    problems += _global_problems(global_dim, global_strides, names)
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
                       it.product(tuple(box)) * nbytes, multicast, tuple(g for g, _ in keys), cta_tiler, box_layout,
                       full_box, tuple(p for _, p in keys), mode_parts)
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


def _global_problems(global_dim, global_strides, names=None) -> list:
    """TMA's rules for the global extents and byte strides (symbolic values are checked once bound); ``names``
    (the gmem leaf each dim walks) are added to the messages of dims that walk a part of a hierarchical mode."""
    def of(i):
        return f" ({names[i]})" if names and "part" in names[i] else ""
    problems = []
    for i, dim in enumerate(global_dim):
        if it.is_int(dim) and not 1 <= dim <= 2 ** 32:
            problems.append(f"globalDim[{i}] = {dim}{of(i)} not in [1, 2^32]")
    for i, st in enumerate(global_strides, start=1):
        if it.is_int(st) and (st % 16 or not 0 < st < 2 ** 40):
            problems.append(f"globalStrides[{i}] = {st} bytes{of(i)}: must be a multiple of 16 and < 2^40")
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
