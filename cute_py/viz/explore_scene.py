"""The explorer's scene: what :func:`cute_py.viz.explore` shows of an object, as plain JSON data.

A *scene* is a dict of lists, strings and ints (``json.dumps`` takes it as
is) that the explorer's front end (``cute_py/viz/static/explore.js``) draws
without computing anything but the picture. It holds one *panel* per grid
(a layout or tensor: one; a TV layout: its tile; an MMA: C, A and B; a copy:
S and D), each with the rows and columns it shows and one *cell* per shown
element, and the reports of the chosen view.

A layout's cell ``(m, n)`` is domain index ``i = m + rows*n`` (the grid of
:func:`cute_py.viz.to_svg`: mode 0 down, the other modes folded across) and
holds ``crd`` (the natural coordinate ``idx2crd(i, shape)``), ``off`` (the
offset before the swizzle: the inner layout plus the preoffset of a
ComposedLayout, ``layout(i)`` otherwise), ``swz`` (``layout(i)``, after the
swizzle) and ``bank`` (the 4-byte bank of ``swz``, :mod:`cute_py.arch.sm90.banks`'s
model; none when ``swz`` is negative). With an access (``"row128"``, ``"vec128"``, ``"ldmatrix"``, a copy op or
a TV layout in CuTe text, as :func:`cute_py.viz.bank_conflicts` reads them), a
cell also holds the warp request ``req`` that touches it (its label in the
report), the ``lane``, thread ``thr`` and value ``val``, and ``cf`` when the
request's phase has a bank conflict on its word. A TV cell holds the first
thread ``t`` and value ``v`` that own it (``tv_owner``, CuTe's order).

Axes longer than 64 cells show their first and last 8, as the text views do
(``ms``/``ns`` list the shown indices, ``None`` where the ellipsis goes), so a
scene's size does not grow with the layout's; the analyses still run on the
whole layout (up to ``ANALYSIS_LIMIT`` elements; above it the report says why
it is missing).

>>> import cute_py as cp
>>> s = scene(cp.parse("(4,8):(8,1)"), view="offsets")
>>> s["panels"][0]["rows"], s["panels"][0]["cols"], s["panels"][0]["cells"][1]["swz"]
(4, 8, 8)
"""

from __future__ import annotations

from ..arch.sm90.banks import BANK_BYTES, NUM_BANKS, count_bank_conflicts
from ..arch.sm90.requests import as_dtype, element_bits, requests_of
from ..arch.sm90.synth_access import named_access
from ..atoms import CopyAtom, MMAAtom, TiledCopy, TiledMMA, make_copy_atom, make_tiled_copy_A, make_tiled_mma
from ..atoms import get as get_atom
from ..layouts import ComposedLayout, Layout
from ..layouts import int_tuple as it
from ..layouts.errors import LayoutError
from ._grid import _apply, _fmt_value, cell_values, copy_parts, layout_grid, mma_parts, tile_shape, tv_owner
from .coalesce import coalescing
from .explore_facts import python_code, smem_facts
from .svg import BANK32, BW8, TV8
from .text import TEXT_EDGE, TEXT_MAX_AXIS

__all__ = ["scene", "VIEWS", "ACCESSES", "kind_of"]

VIEWS = ("offsets", "threads", "banks", "coalescing")
"""The views of a layout or tensor; TV layouts, MMAs and copies have ``"threads"`` only."""
ACCESSES = ("row128", "vec32", "vec64", "vec128", "ldmatrix", "wgmma")
"""The accesses the explorer offers (any access :func:`cute_py.viz.bank_conflicts` reads is taken too):
TMA's 128-byte rows, lanes reading consecutive vectors, and ``ldmatrix`` (``SM75_U32x4_LDSM_N`` tiled as the A
operand of ``SM80_16x8x16_F32BF16BF16F32_TN``, 16-bit elements)."""
LDMATRIX_MMA = "SM80_16x8x16_F32BF16BF16F32_TN"
_KIND_NAMES = {"layout": "a layout", "tensor": "a tensor", "tv": "a TV layout", "mma": "an MMA atom or tiling",
               "copy": "a copy atom or tiling"}
_MAX_REQUESTS = 64                                    # report rows a scene carries (the summary counts them all)


def kind_of(obj, op: str = "explore") -> str:
    """``"layout"``, ``"tensor"``, ``"tv"`` (needs a tile), ``"mma"`` or ``"copy"``; TypeError naming ``op`` for
    anything else."""
    if isinstance(obj, (MMAAtom, TiledMMA)):
        return "mma"
    if isinstance(obj, (CopyAtom, TiledCopy)):
        return "copy"
    if getattr(obj, "_is_tensor", False):
        return "tensor"
    if isinstance(obj, (Layout, ComposedLayout)):
        return "layout"
    raise TypeError(f"{op}: expected a Layout, ComposedLayout, Tensor, MMA or copy atom, TiledMMA or "
                    f"TiledCopy, got {type(obj).__name__}" +
                    ("; a bare swizzle has no tile: compose it with one, e.g. Sw<3,3,3> o 0 o (8,64):(64,1)"
                     if type(obj).__name__ == "Swizzle" else ""))


def shown(extent: int) -> list:
    """The indices of an axis the explorer shows, ``None`` for the ellipsis (the text views' rule).

    >>> shown(3), len(shown(64)), shown(100)[7:10]
    ([0, 1, 2], 64, [7, None, 92])
    """
    if extent <= TEXT_MAX_AXIS:
        return list(range(extent))
    return list(range(TEXT_EDGE)) + [None] + list(range(extent - TEXT_EDGE, extent))


def _palette() -> dict:
    return {"bw8": [list(c) for c in BW8], "tv8": [list(c) for c in TV8], "bank32": [list(c) for c in BANK32]}


def _int(x):
    return int(x) if it.is_int(x) else str(x)


# ---------------------------------------------------------------------------
# access resolution


def resolve_access(access, t, layout=None):
    """The access object :func:`~cute_py.arch.sm90.requests.requests_of` takes for the explorer's ``access`` text.
    ``wgmma`` (and ``stmatrix``, ``epilogue``) are the named accesses of
    :func:`~cute_py.arch.sm90.synth_access.named_access` over ``layout``'s 2-D tile: wgmma reading core matrices of
    8 rows x 16 bytes, one phase each (the model swizzle synthesis uses)."""
    name = access.strip()
    head = name.split(":")[0].lower()
    if head in ("wgmma", "stmatrix", "epilogue"):
        shape = getattr(layout, "inner", layout).shape if layout is not None else None
        if not isinstance(shape, tuple) or len(shape) != 2:
            raise LayoutError(f"explore: access {name!r} reads a 2-D tile (rows, columns); the layout's shape is "
                              f"{shape}")
        try:
            return named_access(name, (it.product(shape[0]), it.product(shape[1])), t, "read").access
        except LayoutError as e:
            raise LayoutError(f"explore: access {name!r}: " + str(e).split(": ", 1)[-1]) from None
    if name.lower() == "ldmatrix":
        if t.bits != 16:
            raise LayoutError(f"explore: access 'ldmatrix' is {LDMATRIX_MMA}'s A operand read with "
                              f"SM75_U32x4_LDSM_N, for 16-bit elements; dtype is {t.name} ({t.bits} bits)")
        mma = make_tiled_mma(get_atom(LDMATRIX_MMA))
        return make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", t), mma)
    return name


def _requests(layout, access, t, space):
    """``(Requests, per-index dict)``: the warp requests of ``access`` and, per domain index, its first
    ``(request, lane, thread, value)``."""
    addr = element_bits("explore", layout, t.bits, name="layout")
    reqs = requests_of("explore", layout, resolve_access(access, t, layout), t, addr, space=space)
    where, seen = {}, {}
    req, lane, thread = reqs.req.tolist(), reqs.lane.tolist(), reqs.thread.tolist()
    for a, i in zip(reqs.access.tolist(), reqs.index.tolist()):
        thr = thread[a]
        val = seen.get(thr, 0)
        seen[thr] = val + 1
        where.setdefault(i, (req[a], lane[a], thr, val))
    return reqs, where


def _bank_report(layout, access, t):
    reqs, where = _requests(layout, access, t, "smem")
    rep = count_bank_conflicts(reqs, layout, t)
    words = {(c.request, a) for c in rep.conflicts for a, _lanes in c.words}
    rows = [{"label": r.label, "wavefronts": r.wavefronts, "ideal": r.ideal, "max_ways": r.max_ways}
            for r in rep.requests[:_MAX_REQUESTS]]
    return where, words, {"kind": "banks", "summary": rep.summary(), "text": rep.to_text(max_requests=8, max_conflicts=4),
                          "requests": rows, "count": len(rep.requests), "labels": list(reqs.labels),
                          "access": rep.access, "vector_bits": rep.vector_bits, "max_ways": rep.max_ways}


def _coalescing_report(layout, access, t):
    reqs, where = _requests(layout, access, t, "gmem")
    rep = coalescing(resolve_access(access, t, layout), layout, t)
    rows = [{"label": r.label, "useful": r.useful_bytes, "sectors": r.sectors, "min_sectors": r.min_sectors,
             "lines": r.lines, "efficiency": round(r.efficiency, 4)} for r in rep.requests[:_MAX_REQUESTS]]
    return where, {"kind": "coalescing", "summary": rep.summary(), "text": rep.to_text(max_requests=8),
                   "requests": rows, "count": len(rep.requests), "labels": list(reqs.labels),
                   "access": rep.access, "vector_bits": rep.vector_bits}


# ---------------------------------------------------------------------------
# panels


def _layout_panel(obj, t, where=None, words=()):
    """The one panel of a layout (or a tensor's layout) with the cells' facts."""
    tensor = obj if getattr(obj, "_is_tensor", False) else None
    layout = obj.layout if tensor is not None else obj
    g = layout_grid(layout, "explore")
    rows, cols = g.rows, g.cols
    ms, ns = shown(rows), shown(cols)
    vm, vn = [m for m in ms if m is not None], [n for n in ns if n is not None]
    if isinstance(layout, ComposedLayout):
        pre = cell_values(layout.inner, rows, vm, vn)
        off = [layout.offset + v for v in pre] if layout.offset else pre
        swz = _apply(layout.outer, off)
    else:
        off = swz = cell_values(layout, rows, vm, vn)
    shape = layout.shape
    cells = []
    k = 0
    for n in vn:
        for m in vm:
            i = m + rows * n
            cell = {"m": m, "n": n, "i": i, "crd": it.to_str(it.idx2crd(i, shape)), "off": _int(off[k]),
                    "swz": _int(swz[k])}
            if it.is_int(swz[k]) and swz[k] >= 0:        # a negative offset has no bank (bank_map refuses it)
                cell["bank"] = (int(swz[k]) * t.bits // 8 // BANK_BYTES) % NUM_BANKS
            if tensor is not None:
                cell["elem"] = _fmt_value(tensor(i))
            if where is not None and i in where:
                q, lane, thr, val = where[i]
                cell.update(req=q, lane=lane, thr=thr, val=val)
                if (q, int(swz[k]) * t.bits // 8 // BANK_BYTES * BANK_BYTES) in words:
                    cell["cf"] = 1
            cells.append(cell)
            k += 1
    return {"name": "", "rows": rows, "cols": cols, "ms": ms, "ns": ns, "cells": cells}


def _tv_panel(name, layout_tv, M, N):
    owner = tv_owner(layout_tv, M, N, f"explore ({name or 'TV'})")
    ms, ns = shown(M), shown(N)
    cells = []
    for n in ns:
        for m in ms:
            if m is None or n is None:
                continue
            tv = owner[m + M * n]
            cell = {"m": m, "n": n, "i": m + M * n}
            if tv is not None:
                cell["t"], cell["v"] = tv
            cells.append(cell)
    return {"name": name, "rows": M, "cols": N, "ms": ms, "ns": ns, "cells": cells, "layout": str(layout_tv)}


# ---------------------------------------------------------------------------
# the scene


def scene(obj, *, dtype="bf16", view=None, access="row128", tile=None, text=None) -> dict:
    """The scene of ``obj`` in ``view`` (see the module docstring); raises what the object or options break.

    ``dtype`` is the element type of the bank and coalescing views (a tensor's own type, if it has one);
    ``access`` the access pattern of the threads, banks and coalescing views; ``tile`` the ``(M, N)`` tile of
    a TV layout (then ``obj`` is drawn as a TV layout); ``text`` the text box's content (default ``str(obj)``).

    >>> import cute_py as cp
    >>> s = scene(cp.parse("Sw<3,3,3> o 0 o (8,64):(64,1)"), view="banks", access="row128")
    >>> c = s["panels"][0]["cells"][1]        # element (1, 0): row 1 starts at 64, the swizzle moves it to 72
    >>> c["off"], c["swz"], c["bank"], s["report"]["summary"]
    (64, 72, 4, '8 warp requests: 8 wavefronts (ideal 8); conflict-free')
    """
    kind = "tv" if tile is not None else kind_of(obj)
    if tile is not None and not isinstance(obj, (Layout, ComposedLayout)):
        raise TypeError(f"explore: tile= draws a TV layout over a tile; {type(obj).__name__} has its own tiles")
    views = VIEWS if kind in ("layout", "tensor") else ("threads",)
    view = view or views[0]
    if view not in views:
        raise ValueError(f"explore: view {view!r} is not one of {', '.join(views)} for {_KIND_NAMES[kind]}")
    t = as_dtype("explore", dtype)
    if kind == "tensor" and obj.dtype is not None and not obj.is_identity and t != obj.dtype:
        raise ValueError(f"explore: the tensor's elements are {obj.dtype.name}; dtype {t.name} contradicts them")
    out = {"kind": kind, "text": str(obj) if text is None else text, "view": view, "views": list(views),
           "dtype": t.name, "bits": t.bits, "access": access, "accesses": list(ACCESSES), "tile": None,
           "report": None, "report_error": "", "facts": [], "notes": [], "palette": _palette()}
    if kind in ("layout", "tensor"):
        layout = obj.layout if kind == "tensor" else obj
        where, words = None, ()
        if view != "offsets":
            try:
                if view == "coalescing":
                    where, out["report"] = _coalescing_report(layout, access, t)
                else:
                    where, words, out["report"] = _bank_report(layout, access, t)
            except (LayoutError, TypeError, ValueError) as e:
                out["report_error"] = str(e).splitlines()[0]
        out["panels"] = [_layout_panel(obj, t, where, words)]
        out["title"] = str(obj) if kind == "tensor" else str(layout)
        if kind == "layout":
            out["facts"] = smem_facts(layout, t)
        out["js"] = kind == "layout" and _js_evaluable(layout)
    elif kind == "tv":
        M, N = tile_shape(tile)
        out["tile"] = [M, N]
        out["panels"] = [_tv_panel("TV", obj, M, N)]
        out["title"] = f"TV layout {obj} over the {M}\u00d7{N} tile"
        out["js"] = _js_evaluable(obj)
    elif kind == "mma":
        title, _mma, (M, N, K), parts = mma_parts(obj)
        out["panels"] = [_tv_panel(name, lay, r, c) for name, lay, (r, c) in parts]
        out["title"] = f"{title}: M\u00d7N\u00d7K = {M}\u00d7{N}\u00d7{K}"
        out["js"] = False
    else:
        title, _tc, (M, N), S, D = copy_parts(obj)
        out["panels"] = [_tv_panel("S", S, M, N), _tv_panel("D", D, M, N)]
        out["title"] = title
        out["js"] = False
    out["python"] = python_code(obj, kind, out)
    return out


def _js_evaluable(layout) -> bool:
    """Whether the standalone page's evaluator can redo this layout: integer strides, under a swizzle at most."""
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    if isinstance(layout, ComposedLayout) and (type(layout.outer).__name__ != "Swizzle" or not it.is_int(layout.offset)):
        return False
    return isinstance(inner, Layout) and all(it.is_int(x) for x in it.flatten_to_tuple((inner.shape, inner.stride)))
