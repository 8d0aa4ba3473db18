"""Warp memory requests: which lane of which warp instruction touches which elements, as numpy arrays.

The request model under :mod:`cute_py.arch.sm90.banks` (shared-memory bank
conflicts) and :mod:`cute_py.viz.coalesce` (global-memory coalescing).
Everything is computed by *evaluating* layouts, once over their whole domain
(:func:`~cute_py.layouts.offsets.layout_offsets`): an element's address is
``layout(i) * sizeof_bits(dtype)`` bits for domain index ``i``. So the cost
grows with the size: a memory layout, or an access (threads x values x
tiles), of more than :data:`ANALYSIS_LIMIT` elements is refused at once with a
:class:`~cute_py.layouts.errors.SizeLimitError` naming the operation and the
operand (the limit is more elements than Hopper's 228 KiB of shared memory
holds even at 8 bits each).

An access is given as

* a TV layout ``(thread, value) -> i`` into the domain of the memory layout;
  each thread's values are split into vectors of ``vector_bits`` (given, or the
  widest of 128/64/32/16/8 bits for which every vector is contiguous and aligned
  in memory); vector ``g`` of the threads of warp ``w`` is one warp request;
* a copy atom / tiled copy (the side of the op that lives in the given memory
  space; ldmatrix/stmatrix: each of the ``8 * num`` address lanes reads a 16-byte row);
* a named pattern: ``"vec32"``/``"vec64"``/``"vec128"`` (or the int 32/64/128),
  lane ``l`` of request ``r`` reading vector ``32 r + l`` of the domain in order,
  and ``"row128"`` (TMA: each request moves one 128-byte row of the unswizzled
  offset space, 16 bytes per lane, wherever the swizzle puts them).

>>> from cute_py.layouts import Layout
>>> addr = element_bits("example", Layout(64), 32)
>>> r = requests_of("example", Layout(64), Layout((32, 2), (2, 1)), dtype("f32"), addr)
>>> len(r), r.vector_bits, r.labels, r.index[:4].tolist()
(1, 64, ('warp 0, access 0',), [0, 1, 2, 3])
"""

from __future__ import annotations

from dataclasses import dataclass

from ...atoms import CopyAtom, CopyOp, TiledCopy, get_copy_op, make_copy_atom
from ...layouts import ComposedLayout, Layout, int_tuple as it, parse
from ...layouts.dtypes import DType, dtype
from ...layouts.errors import LayoutError, RankError, SymbolicError, layout_error, size_limit_error
from ...layouts.offsets import layout_offsets

__all__ = ["Requests", "requests_of", "tv_requests", "linear_requests", "row_requests", "element_offsets",
           "element_bits", "lanes_per_phase", "as_layout", "as_dtype", "check_size", "WARP", "VECTOR_WIDTHS", "NAMED",
           "ANALYSIS_LIMIT"]

WARP = 32
VECTOR_WIDTHS = (128, 64, 32, 16, 8)
NAMED = {"vec8": 8, "vec16": 16, "vec32": 32, "vec64": 64, "vec128": 128, "row128": 128}
#: Most elements an analysis evaluates (memory layout, or access threads x values x tiles): 2^18 = 256 KiB of
#: 8-bit elements, more than the 228 KiB of an sm_90 SM's shared memory.
ANALYSIS_LIMIT = 1 << 18


def _np():
    import numpy

    return numpy


@dataclass(frozen=True, eq=False)
class Requests:
    """The warp requests of an access pattern, flat: one row per *lane access* and one per *element*.

    ``labels[r]`` names request ``r``; lane access ``a`` belongs to request ``req[a]`` and is lane ``lane[a]``
    (thread ``thread[a]``); element ``e`` belongs to lane access ``access[e]`` (non-decreasing), is domain
    index ``index[e]`` and lies at bit address ``bits[e]``. Requests are in order, and so are the lanes of a
    request and the elements of a lane.
    """

    description: str
    vector_bits: int
    elem_bits: int
    labels: tuple
    req: object
    lane: object
    thread: object
    access: object
    index: object
    bits: object

    def __len__(self):
        return len(self.labels)


def as_layout(op: str, x, name: str = "layout"):
    """A Layout or ComposedLayout from a layout, CuTe text or a shape."""
    if isinstance(x, str):
        x = parse(x)
    if isinstance(x, (Layout, ComposedLayout)):
        return x
    if it.is_int(x) or isinstance(x, tuple):
        return Layout(x)
    raise TypeError(f"{op}: expected a layout (or CuTe text) for {name}, got {type(x).__name__}")


def as_dtype(op: str, t) -> DType:
    """The element type named ``t`` (a LayoutError naming ``op`` if there is none)."""
    try:
        return dtype(t)
    except (KeyError, ValueError, TypeError) as e:
        raise layout_error(LayoutError, op, "unknown element type", f"{t!r} ({e})") from None


def check_size(op: str, name: str, value, size, limit: int = ANALYSIS_LIMIT) -> None:
    """Raise :class:`~cute_py.layouts.errors.SizeLimitError` when an analysis would evaluate ``size > limit`` elements.

    ``size`` that is not an int (symbolic) passes: the evaluation then fails with its own error.

    >>> check_size("bank_conflicts", "smem_layout", Layout((1024, 1024)), 1 << 20)
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.SizeLimitError: bank_conflicts: smem_layout is too large: 1048576 elements > limit 262144; \
the analysis evaluates every element; smem_layout = (1024,1024):(1,1024)
    """
    if it.is_int(size) and size > limit:
        raise size_limit_error(op, name, value, size, limit, hint="the analysis evaluates every element")


def element_offsets(op: str, layout, name: str = "layout"):
    """``layout(i)`` for every ``i`` of its domain (an int64 array), checked to be non-negative integers.

    Raises SizeLimitError (naming ``op`` and the operand ``name``) above :data:`ANALYSIS_LIMIT` elements.
    """
    np = _np()
    check_size(op, name, layout, it.product(layout.shape))
    try:
        out = layout_offsets(layout)
    except (SymbolicError, TypeError):
        n = layout.size() if hasattr(layout, "size") else it.product(layout.shape)
        if not it.is_int(n):
            raise layout_error(LayoutError, op, "needs a layout with static (integer) extents", layout=layout) from None
        for o in (layout(i) for i in range(n)):
            if not it.is_int(o):
                raise layout_error(LayoutError, op, "needs non-negative integer offsets",
                                   f"found offset {o}", layout=layout) from None
        raise
    bad = np.flatnonzero(out < 0)
    if bad.size:
        raise layout_error(LayoutError, op, "needs non-negative integer offsets",
                           f"found offset {int(out[bad[0]])}", layout=layout)
    return out


def element_bits(op: str, layout, bits: int, base_bits: int = 0, name: str = "layout"):
    """Bit address of every domain index: ``base_bits + layout(i) * bits`` (errors name ``op`` and ``name``)."""
    return element_offsets(op, layout, name) * bits + base_bits


def lanes_per_phase(vector_bits: int) -> int:
    """Lanes served together: 32 for accesses up to 32 bits, 16 for 64 bits, 8 for 128 bits."""
    return WARP if vector_bits <= 32 else (16 if vector_bits == 64 else 8)


# ---------------------------------------------------------------------------


def _tv_size(op, tv: Layout):
    r = it.rank(tv.shape)
    if r == 1:
        return it.product(tv.shape), 1
    if r != 2:
        raise layout_error(RankError, op, "a TV layout has two modes (thread, value)", layout=tv)
    return it.product(tv.shape[0]), it.product(tv.shape[1])


def _vector_bad(bits, elem_bits):
    """Per group (last axis = the vector's elements): True where the elements are not one aligned vector."""
    np = _np()
    vec = bits.shape[-1]
    a0 = bits[..., :1]
    ok = (a0[..., 0] % (vec * elem_bits) == 0) & np.all(bits == a0 + np.arange(vec) * elem_bits, axis=-1)
    return ~ok


def _choose_vec(op, addrs, threads, elem_bits, vector_bits):
    """Elements per vector: ``vector_bits // elem_bits`` (checked) or the widest that fits.

    ``addrs[k, v]``: bit address of value ``v`` of thread ``threads[k]``."""
    np = _np()
    nval = addrs.shape[1]

    def grouped(vec):
        return addrs.reshape(-1, nval // vec, vec)

    if vector_bits is not None:
        if vector_bits not in VECTOR_WIDTHS or vector_bits % elem_bits:
            raise layout_error(LayoutError, op, "vector width must be 8, 16, 32, 64 or 128 bits and a "
                               "multiple of the element width", f"{vector_bits} bits for {elem_bits}-bit elements")
        vec = vector_bits // elem_bits
        if nval % vec:
            raise layout_error(LayoutError, op, "values per thread are not a whole number of vectors",
                               f"{nval} values, {vec} per {vector_bits}-bit vector")
        g = grouped(vec)
        bad = np.argwhere(_vector_bad(g, elem_bits))
        if len(bad):
            t, k = (int(x) for x in bad[0])
            raise layout_error(LayoutError, op, "not a vector access",
                               f"thread {int(threads[t])} would read {vector_bits} bits at bit "
                               f"addresses {g[t, k].tolist()}, which are not contiguous and {vector_bits}-bit aligned")
        return vec
    for vb in VECTOR_WIDTHS:
        if vb < elem_bits or vb % elem_bits:
            continue
        vec = vb // elem_bits
        if nval % vec == 0 and not _vector_bad(grouped(vec), elem_bits).any():
            return vec
    return 1


def _domain(op, f, vals, n, tv):
    """``f(vals)`` (tile index -> domain index), checked to lie in ``[0, n)``."""
    np = _np()
    d = f(vals)
    bad = np.flatnonzero((d < 0) | (d >= n))
    if bad.size:
        raise layout_error(LayoutError, op, "the access reaches outside the memory layout",
                           f"index {int(d.flat[bad[0]])} not in [0, {n})", access=tv)
    return d


def _identity(x):
    return x


def tv_requests(op, tv, tiles, addr_bits, elem_bits, vector_bits=None, active_lanes=WARP, description=""):
    """Requests of a TV layout ``(thread, value) -> tile index`` over each of ``tiles``.

    ``tiles`` is a list of ``(label, f)`` with ``f(tile indices) -> domain indices`` (on int64 arrays);
    ``addr_bits[i]`` is the bit address of domain index ``i``. Lanes with ``lane >= active_lanes``
    (ldmatrix x1/x2) are left out.
    """
    np = _np()
    if not isinstance(tv, Layout):
        raise TypeError(f"{op}: a TV layout must be a Layout, got {type(tv).__name__}")
    nthr, nval = _tv_size(op, tv)
    check_size(op, "access", tv if len(tiles) == 1 else f"{tv} over {len(tiles)} tiles", nthr * nval * len(tiles))
    addr_bits = np.asarray(addr_bits, dtype=np.int64)
    n = len(addr_bits)
    try:
        vals = layout_offsets(tv).reshape(nval, nthr).T      # vals[t, v] = tv(t + nthr * v)
    except (SymbolicError, TypeError):
        raise layout_error(LayoutError, op, "TV layout must map to integer indices", layout=tv) from None
    threads = np.arange(nthr)
    ts = threads[threads % WARP < active_lanes]               # the threads that take part
    vals = vals[ts]
    doms = [_domain(op, f, vals, n, tv) for _label, f in tiles]
    vec = _choose_vec(op, addr_bits[doms[0]], ts, elem_bits, vector_bits)
    ngroups, nwarps = nval // vec, -(-nthr // WARP)
    # lane accesses (tile, thread, group g) ordered by request (tile, warp, g), then by thread
    tile_of = np.repeat(np.arange(len(tiles)), len(ts) * ngroups)
    pos_of = np.tile(np.repeat(np.arange(len(ts)), ngroups), len(tiles))
    g_of = np.tile(np.arange(ngroups), len(tiles) * len(ts))
    req = (tile_of * nwarps + ts[pos_of] // WARP) * ngroups + g_of
    order = np.argsort(req, kind="stable")
    req, pos_of, g_of, tile_of = req[order], pos_of[order], g_of[order], tile_of[order]
    cols = g_of[:, None] * vec + np.arange(vec)
    index = np.stack(doms)[tile_of[:, None], pos_of[:, None], cols]
    t_of = ts[pos_of]
    labels = tuple(", ".join(([label] if label else []) + [f"warp {w}", f"access {g}"])
                   for label, _f in tiles for w in range(nwarps) for g in range(ngroups))
    index = index.reshape(-1)
    return Requests(description or f"TV layout {tv}", vec * elem_bits, elem_bits, labels, req, t_of % WARP, t_of,
                    np.repeat(np.arange(len(req)), vec), index, addr_bits[index])


def linear_requests(op, addr_bits, elem_bits, vector_bits):
    """Lane ``l`` of request ``r`` reads vector ``32 r + l`` of the domain, in domain order."""
    np = _np()
    addr_bits = np.asarray(addr_bits, dtype=np.int64)
    vec = max(1, vector_bits // elem_bits)
    n = len(addr_bits)
    if n % vec:
        raise layout_error(LayoutError, op, "the layout is not a whole number of vectors",
                           f"{n} elements, {vec} per {vector_bits}-bit vector")
    nvec = n // vec
    desc = f"{vector_bits}-bit vectors over the domain in order"
    if nvec % WARP == 0 or nvec < WARP:
        tv = Layout((min(WARP, nvec), (vec, -(-nvec // WARP))), (vec, (1, WARP * vec)))
        return tv_requests(op, tv, [("", _identity)], addr_bits, elem_bits, vector_bits, description=desc)
    v = np.arange(nvec)
    index = (v[:, None] * vec + np.arange(vec)).reshape(-1)
    bits = addr_bits[index]
    if vec > 1:
        bad = np.flatnonzero(_vector_bad(bits.reshape(nvec, vec), elem_bits))
        if bad.size:
            r, lane = divmod(int(bad[0]), WARP)
            raise layout_error(LayoutError, op, "not a vector access",
                               f"lane {lane} of request {r} would read bits {bits.reshape(nvec, vec)[bad[0]].tolist()}")
    labels = tuple(f"warp {r}, access 0" for r in range(-(-nvec // WARP)))
    return Requests(desc, vector_bits, elem_bits, labels, v // WARP, v % WARP, v, np.repeat(v, vec), index, bits)


def row_requests(op, layout, elem_bits, row_bits=1024, lane_bits=128):
    """TMA-style: each request moves one 128-byte row of the unswizzled offset space, 16 bytes per lane."""
    np = _np()
    if isinstance(layout, ComposedLayout):
        inner, off = layout.inner, layout.offset
    else:
        inner, off = layout, 0
    p = (off + element_offsets(op, inner)) * elem_bits          # unswizzled bit address
    a = layout_offsets(layout) * elem_bits                     # where the swizzle puts it
    i = np.arange(len(p))
    row, lane = p // row_bits, (p % row_bits) // lane_bits
    order = np.lexsort((i, p, lane, row))
    row, lane, i, a = row[order], lane[order], i[order], a[order]
    key = np.stack([row, lane], axis=1)
    first = np.ones(len(row), dtype=bool)
    first[1:] = np.any(key[1:] != key[:-1], axis=1)
    access = np.cumsum(first) - 1
    rows, req = np.unique(row[first], return_inverse=True)
    labels = tuple(f"row {int(r)}" for r in rows)
    return Requests("TMA 128-byte rows (16 bytes per lane)", lane_bits, elem_bits, labels, req.reshape(-1),
                    lane[first], lane[first], access, i, a)


# ---------------------------------------------------------------------------


def _tile_maps(op, layout, tiler):
    """``(label, tile indices -> domain indices)`` for every tile of ``tiler`` over ``layout``'s modes."""
    shape = it.product_each(layout.shape)
    shape = shape if isinstance(shape, tuple) else (shape,)
    tiler = tuple(tiler)
    if len(shape) < len(tiler):
        if it.product(shape) % it.product(tiler):
            raise layout_error(LayoutError, op, "the tiled copy's tile does not fit the layout",
                               f"tile {it.to_str(tiler)}", layout=layout)
        shape = (it.product(tiler), it.product(shape) // it.product(tiler))
        tiler = (it.product(tiler),)
    counts = []
    for i, s in enumerate(shape):
        if i < len(tiler):
            if s % tiler[i]:
                raise layout_error(LayoutError, op, "the tiled copy's tile does not divide the layout",
                                   f"mode {i}: {s} % {tiler[i]} != 0", layout=layout)
            counts.append(s // tiler[i])
        else:
            counts.append(s)
    full_tiler = tuple(tiler) + (1,) * (len(shape) - len(tiler))
    strides = it.prefix_product(shape)
    strides = strides if isinstance(strides, tuple) else (strides,)
    tiles = []
    ntiles = it.product(tuple(counts))
    for r in range(ntiles):
        rest = it.idx2crd(r, tuple(counts))
        base = [rest[i] * full_tiler[i] for i in range(len(shape))]

        def f(x, base=base):
            out, rem = 0, x
            for i, s in enumerate(full_tiler):          # colexicographic coordinate, the last mode unbounded
                c, rem = (rem, 0) if i == len(full_tiler) - 1 else (rem % s, rem // s)
                out = out + (base[i] + c) * strides[i]
            return out

        tiles.append((f"tile {it.to_str(rest)}" if ntiles > 1 else "", f))
    return tiles


def _copy_side(op_, side, space):
    if side is None:
        side = "src" if op_.src_space == space else ("dst" if op_.dst_space == space else "src")
    if side not in ("src", "dst"):
        raise ValueError(f"side must be 'src' or 'dst', got {side!r}")
    return side


def _ldsm_lanes(op_):
    if "LDSM" in op_.name or "STSM" in op_.name:
        for num in (1, 2, 4):
            if f".x{num}." in op_.ptx:
                return 8 * num
    return WARP


def _named_width(op, name):
    if name not in NAMED:
        raise layout_error(LayoutError, op, "unknown access pattern",
                           f"{name!r}; use 'row128' or 'vec8'...'vec128' (or 8...128)")
    return NAMED[name]


def _copy_requests(op, layout, access, t, addr_bits, vector_bits, side, space):
    """The requests of a copy atom or tiled copy: its side in ``space`` (or ``side``); TMA moves rows."""
    bits = t.bits
    atom = access if isinstance(access, CopyAtom) else access.atom
    if atom.value_type.bits != bits:
        raise layout_error(LayoutError, op, "the copy atom's element type differs from dtype",
                           f"{atom.value_type.name} vs {t.name}", atom=atom.name)
    cop = atom.op
    if cop.name.startswith("SM90_TMA"):
        return row_requests(op, layout, bits)
    s = _copy_side(cop, side, space)
    atom_side = atom.src_layout if s == "src" else atom.dst_layout
    vb = vector_bits
    active = _ldsm_lanes(cop)
    if vb is None:
        # one access per lane moves the atom's values of this side (ldmatrix: one 16-byte row)
        per = it.product(atom_side.shape[1]) * bits
        vb = per if per in VECTOR_WIDTHS else None
    desc = f"{'tiled copy of ' if isinstance(access, TiledCopy) else ''}{cop.name} ({s} side)"
    if isinstance(access, CopyAtom):
        return tv_requests(op, atom_side, [("", _identity)], addr_bits, bits, vb, active, desc)
    tv = access.get_layoutS_TV() if s == "src" else access.get_layoutD_TV()
    return tv_requests(op, tv, _tile_maps(op, layout, access.tiler_mn), addr_bits, bits, vb, active, desc)


def _named_linear(op, layout, name, addr_bits, elem_bits, vector_bits):
    """:func:`linear_requests` for a named ``vecN`` pattern; when the layout's domain order is not made of
    vectors (a row-major tile is contiguous along its rows, not down its columns), the error says what to use
    instead, with a TV layout that reads vectors along the rows where one fits (checked before it is shown)."""
    try:
        return linear_requests(op, addr_bits, elem_bits, vector_bits)
    except LayoutError as e:
        if e.rule != "not a vector access":
            raise
        example = _row_vectors_example(op, layout, addr_bits, elem_bits, vector_bits)
        raise LayoutError(
            f"{e}; {name!r} reads {vector_bits}-bit vectors of consecutive domain indices, and the domain runs "
            f"down mode 0 first (down the columns of a (rows, cols) tile), where this layout's elements are not "
            f"contiguous (a row-major tile is contiguous along its rows). Use 'row128' (TMA's 128-byte rows), "
            f"or pass a TV layout (thread, value) -> domain index whose values run along a row{example}.",
            op=e.op, rule=e.rule) from None


def _row_vectors_example(op, layout, addr_bits, elem_bits, vector_bits) -> str:
    """``"; e.g. TV has lane i read ..."``: a warp reading ``vector_bits`` vectors along the rows of ``layout``'s
    (rows, cols) domain, lanes down the rows first; ``""`` where none fits or it is no vector access either."""
    shape = it.product_each(layout.shape)
    if not (isinstance(shape, tuple) and len(shape) >= 2 and all(it.is_int(x) for x in shape)):
        return ""
    rows, cols, vec = shape[0], it.product(shape[1:]), max(1, vector_bits // elem_bits)
    lanes = min(rows, WARP)
    if WARP % lanes or cols < vec * (WARP // lanes):
        return ""
    if lanes == WARP:
        tv, who = Layout((WARP, vec), (1, rows)), "row i"
    else:
        tv, who = Layout(((lanes, WARP // lanes), vec), ((1, rows * vec), rows)), \
            f"row i % {lanes} from column {vec} * (i // {lanes})"
    try:
        tv_requests(op, tv, [("", _identity)], addr_bits, elem_bits, vector_bits)
    except LayoutError:
        return ""
    return f"; e.g. {tv} has lane i read {vec} elements of {who}"


def requests_of(op, layout, access, t: DType, addr_bits, *, vector_bits=None, side=None, space="smem") -> Requests:
    """Resolve ``access`` (TV layout, copy atom/op/tiled copy, named pattern, width) over ``layout`` (whose
    domain index ``i`` lies at bit ``addr_bits[i]``) into its :class:`Requests`."""
    bits = t.bits
    if isinstance(access, bool):
        raise TypeError(f"{op}: access must be a TV layout, a copy atom or a pattern name, got {access!r}")
    if it.is_int(access):
        return _named_linear(op, layout, access, addr_bits, bits, _named_width(op, f"vec{access}"))
    if isinstance(access, str):
        name = access.strip()
        if name.lower() == "row128" or name.lower() == "tma":
            return row_requests(op, layout, bits)
        if name.lower() in NAMED or name.isdigit():
            w = _named_width(op, name.lower() if not name.isdigit() else f"vec{name}")
            return _named_linear(op, layout, name, addr_bits, bits, vector_bits or w)
        if ":" in name:
            access = parse(name)
        else:
            try:
                access = get_copy_op(name)
            except LayoutError:
                raise layout_error(LayoutError, op, "unknown access pattern",
                                   f"{name!r}; use a TV layout, a copy atom, 'row128' or 'vec32'/'vec64'/'vec128'") from None
    if isinstance(access, CopyOp):
        access = make_copy_atom(access, t)
    if isinstance(access, (CopyAtom, TiledCopy)):
        return _copy_requests(op, layout, access, t, addr_bits, vector_bits, side, space)
    if isinstance(access, Layout):
        return tv_requests(op, access, [("", _identity)], addr_bits, bits, vector_bits)
    raise TypeError(f"{op}: access must be a TV layout, a copy atom / tiled copy or a pattern name "
                    f"('row128', 'vec32', 'vec128', ...), got {type(access).__name__}")
