"""Access patterns as warp requests: which lane of which warp instruction touches which bits.

Shared by :mod:`cute_py.viz.banks` (shared memory) and :mod:`cute_py.viz.coalesce`
(global memory). Everything is computed by *evaluating* layouts: an element's
address is ``layout(i) * sizeof_bits(dtype)`` bits for domain index ``i``.

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
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..layouts import ComposedLayout, Layout, Swizzle, int_tuple as it, parse
from ..layouts.dtypes import DType, dtype as _dtype
from ..layouts.errors import LayoutError, RankError, layout_error

WARP = 32
VECTOR_WIDTHS = (128, 64, 32, 16, 8)
NAMED = {"vec8": 8, "vec16": 16, "vec32": 32, "vec64": 64, "vec128": 128, "row128": 128}


@dataclass(frozen=True)
class LaneAccess:
    """One lane's part of a warp request: the elements it touches and their bit addresses."""

    lane: int
    thread: int
    indices: tuple
    bits: tuple  # bit address of each element

    def byte_range(self, elem_bits: int):
        lo = min(self.bits) // 8
        hi = (max(self.bits) + elem_bits - 1) // 8
        return lo, hi - lo + 1

    def units(self, elem_bits: int, unit_bits: int) -> set:
        """Indices of the ``unit_bits``-bit units (8: bytes, 32: bank words) that this lane's elements cover."""
        out = set()
        for b in self.bits:
            out.update(range(b // unit_bits, (b + elem_bits - 1) // unit_bits + 1))
        return out


@dataclass(frozen=True)
class Request:
    """One warp-wide memory instruction."""

    label: str
    lanes: tuple


@dataclass(frozen=True)
class Plan:
    """The requests of an access pattern over a memory layout."""

    description: str
    vector_bits: int
    requests: tuple
    elem_bits: int


class TextReport:
    """Base of the analysis results: ``str()`` is ``to_text()``, and a notebook shows it preformatted."""

    def __str__(self):
        return self.to_text()

    def _repr_html_(self):
        return f"<pre>{html.escape(str(self))}</pre>"


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
    try:
        return _dtype(t)
    except (KeyError, ValueError, TypeError) as e:
        raise layout_error(LayoutError, op, "unknown element type", f"{t!r} ({e})") from None


def as_swizzle(op: str, sw) -> Swizzle:
    """A Swizzle from a Swizzle, ``(B, M, S)``, ``"Sw<B,M,S>"`` or ``"B,M,S"``."""
    if isinstance(sw, Swizzle):
        return sw
    if isinstance(sw, str):
        text = sw.strip()
        if text[:1].isdigit():
            text = "Sw<" + text + ">"
        sw = parse(text)
        if isinstance(sw, Swizzle):
            return sw
    if isinstance(sw, (tuple, list)) and len(sw) == 3:
        return Swizzle(*sw)
    raise TypeError(f"{op}: expected a swizzle (Swizzle, (B,M,S) or 'Sw<B,M,S>'), got {sw!r}")


def offsets(op: str, layout) -> list:
    """``[layout(i) for i in range(size(layout))]``, checked to be integers."""
    n = layout.size() if hasattr(layout, "size") else it.product(layout.shape)
    if not it.is_int(n):
        raise layout_error(LayoutError, op, "needs a layout with static (integer) extents", layout=layout)
    out = [layout(i) for i in range(n)]
    for o in out:
        if not it.is_int(o) or o < 0:
            raise layout_error(LayoutError, op, "needs non-negative integer offsets",
                               f"found offset {o}", layout=layout)
    return out


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


def _vector_ok(bitaddrs, elem_bits):
    n = len(bitaddrs)
    a0 = bitaddrs[0]
    if a0 % (n * elem_bits):
        return False
    return all(bitaddrs[k] == a0 + k * elem_bits for k in range(n))


def _choose_vec(op, groups_of, nval, elem_bits, vector_bits):
    """Elements per vector: ``vector_bits // elem_bits`` (checked) or the widest that fits."""
    if vector_bits is not None:
        if vector_bits not in VECTOR_WIDTHS or vector_bits % elem_bits:
            raise layout_error(LayoutError, op, "vector width must be 8, 16, 32, 64 or 128 bits and a "
                               "multiple of the element width", f"{vector_bits} bits for {elem_bits}-bit elements")
        vec = vector_bits // elem_bits
        if nval % vec:
            raise layout_error(LayoutError, op, "values per thread are not a whole number of vectors",
                               f"{nval} values, {vec} per {vector_bits}-bit vector")
        for who, addrs in groups_of(vec):
            if not _vector_ok(addrs, elem_bits):
                raise layout_error(LayoutError, op, "not a vector access",
                                   f"{who} would read {vector_bits} bits at bit addresses {list(addrs)}, which are "
                                   f"not contiguous and {vector_bits}-bit aligned")
        return vec
    for vb in VECTOR_WIDTHS:
        if vb < elem_bits or vb % elem_bits:
            continue
        vec = vb // elem_bits
        if nval % vec == 0 and all(_vector_ok(a, elem_bits) for _w, a in groups_of(vec)):
            return vec
    return 1


def plan_tv(op, tv, tiles, addr_bits, elem_bits, vector_bits=None, active_lanes=WARP, description=""):
    """Requests of a TV layout ``(thread, value) -> tile index`` over each of ``tiles``.

    ``tiles`` is a list of ``(label, f)`` with ``f(tile index) -> domain index``;
    ``addr_bits[i]`` is the bit address of domain index ``i``. Lanes with
    ``lane >= active_lanes`` (ldmatrix x1/x2) are left out.
    """
    if not isinstance(tv, Layout):
        raise TypeError(f"{op}: a TV layout must be a Layout, got {type(tv).__name__}")
    nthr, nval = _tv_size(op, tv)
    n = len(addr_bits)
    vals = [tv(i) for i in range(nthr * nval)]  # 1-D colex index: t + nthr * v
    for x in vals:
        if not it.is_int(x):
            raise layout_error(LayoutError, op, "TV layout must map to integer indices", layout=tv)

    def dom(f, x):
        d = f(x)
        if not 0 <= d < n:
            raise layout_error(LayoutError, op, "the access reaches outside the memory layout",
                               f"index {d} not in [0, {n})", access=tv)
        return d

    def groups_of(vec):
        f = tiles[0][1]
        for t in range(nthr):
            if t % WARP >= active_lanes:
                continue
            for g in range(nval // vec):
                yield (f"thread {t}", [addr_bits[dom(f, vals[t + nthr * (g * vec + k)])] for k in range(vec)])

    vec = _choose_vec(op, groups_of, nval, elem_bits, vector_bits)
    requests = []
    nwarps = -(-nthr // WARP)
    for label, f in tiles:
        for w in range(nwarps):
            for g in range(nval // vec):
                lanes = []
                for lane in range(min(WARP, nthr - w * WARP)):
                    if lane >= active_lanes:
                        continue
                    t = w * WARP + lane
                    idx = tuple(dom(f, vals[t + nthr * (g * vec + k)]) for k in range(vec))
                    lanes.append(LaneAccess(lane, t, idx, tuple(addr_bits[i] for i in idx)))
                parts = ([label] if label else []) + [f"warp {w}", f"access {g}"]
                requests.append(Request(", ".join(parts), tuple(lanes)))
    vb = vec * elem_bits
    return Plan(description or f"TV layout {tv}", vb, tuple(requests), elem_bits)


def plan_linear(op, addr_bits, elem_bits, vector_bits):
    """Lane ``l`` of request ``r`` reads vector ``32 r + l`` of the domain, in domain order."""
    vec = max(1, vector_bits // elem_bits)
    n = len(addr_bits)
    if n % vec:
        raise layout_error(LayoutError, op, "the layout is not a whole number of vectors",
                           f"{n} elements, {vec} per {vector_bits}-bit vector")
    nvec = n // vec
    tv = Layout((min(WARP, nvec), (vec, -(-nvec // WARP))), (vec, (1, WARP * vec))) if nvec % WARP == 0 or nvec < WARP \
        else None
    if tv is not None:
        return plan_tv(op, tv, [("", lambda x: x)], addr_bits, elem_bits, vector_bits,
                       description=f"{vector_bits}-bit vectors over the domain in order")
    requests = []
    for r in range(-(-nvec // WARP)):
        lanes = []
        for lane in range(min(WARP, nvec - r * WARP)):
            v = r * WARP + lane
            idx = tuple(range(v * vec, v * vec + vec))
            a = tuple(addr_bits[i] for i in idx)
            if vec > 1 and not _vector_ok(a, elem_bits):
                raise layout_error(LayoutError, op, "not a vector access",
                                   f"lane {lane} of request {r} would read bits {list(a)}")
            lanes.append(LaneAccess(lane, v, idx, a))
        requests.append(Request(f"warp {r}, access 0", tuple(lanes)))
    return Plan(f"{vector_bits}-bit vectors over the domain in order", vector_bits, tuple(requests), elem_bits)


def plan_rows(op, layout, elem_bits, row_bits=1024, lane_bits=128):
    """TMA-style: each request moves one 128-byte row of the unswizzled offset space, 16 bytes per lane."""
    if isinstance(layout, ComposedLayout):
        inner, outer, off = layout.inner, layout.outer, layout.offset
    else:
        inner, outer, off = layout, (lambda x: x), 0
    pre = offsets(op, inner)
    rows = {}
    for i, o in enumerate(pre):
        p = (off + o) * elem_bits
        a = outer(off + o) * elem_bits
        rows.setdefault(p // row_bits, {}).setdefault((p % row_bits) // lane_bits, []).append((p, i, a))
    requests = []
    for r in sorted(rows):
        lanes = []
        for lane in sorted(rows[r]):
            items = sorted(rows[r][lane])
            lanes.append(LaneAccess(lane, lane, tuple(i for _p, i, _a in items), tuple(a for _p, _i, a in items)))
        requests.append(Request(f"row {r}", tuple(lanes)))
    return Plan("TMA 128-byte rows (16 bytes per lane)", lane_bits, tuple(requests), elem_bits)


# ---------------------------------------------------------------------------


def _tile_maps(op, layout, tiler):
    """``(label, tile index -> domain index)`` for every tile of ``tiler`` over ``layout``'s modes."""
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
            c = it.idx2crd(x, full_tiler)
            return sum((base[i] + c[i]) * strides[i] for i in range(len(shape)))

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


def plan(op, layout, access, t: DType, addr_bits, *, vector_bits=None, side=None, space="smem"):
    """Resolve ``access`` (TV layout, copy atom/op/tiled copy, named pattern, width) into a :class:`Plan`."""
    from ..atoms import CopyAtom, CopyOp, TiledCopy, get_copy_op, make_copy_atom

    bits = t.bits
    if isinstance(access, bool):
        raise TypeError(f"{op}: access must be a TV layout, a copy atom or a pattern name, got {access!r}")
    if it.is_int(access):
        return plan_linear(op, addr_bits, bits, _named_width(op, f"vec{access}"))
    if isinstance(access, str):
        name = access.strip()
        if name.lower() == "row128" or name.lower() == "tma":
            return plan_rows(op, layout, bits)
        if name.lower() in NAMED or name.isdigit():
            w = _named_width(op, name.lower() if not name.isdigit() else f"vec{name}")
            return plan_linear(op, addr_bits, bits, vector_bits or w)
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
        atom = access if isinstance(access, CopyAtom) else access.atom
        if atom.value_type.bits != bits:
            raise layout_error(LayoutError, op, "the copy atom's element type differs from dtype",
                               f"{atom.value_type.name} vs {t.name}", atom=atom.name)
        cop = atom.op
        if cop.name.startswith("SM90_TMA"):
            return plan_rows(op, layout, bits)
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
            return plan_tv(op, atom_side, [("", lambda x: x)], addr_bits, bits, vb, active, desc)
        tv = access.get_layoutS_TV() if s == "src" else access.get_layoutD_TV()
        return plan_tv(op, tv, _tile_maps(op, layout, access.tiler_mn), addr_bits, bits, vb, active, desc)
    if isinstance(access, Layout):
        return plan_tv(op, access, [("", lambda x: x)], addr_bits, bits, vector_bits)
    raise TypeError(f"{op}: access must be a TV layout, a copy atom / tiled copy or a pattern name "
                    f"('row128', 'vec32', 'vec128', ...), got {type(access).__name__}")


def _named_width(op, name):
    if name not in NAMED:
        raise layout_error(LayoutError, op, "unknown access pattern",
                           f"{name!r}; use 'row128' or 'vec8'...'vec128' (or 8...128)")
    return NAMED[name]
