"""SVG pictures of layouts, swizzles, TV layouts, MMAs and copies, as standalone strings.

One function, :func:`to_svg`, draws whatever it is given:

* Layout / ComposedLayout / Swizzle / Tensor: a grid of cells, one
  ``<rect class="cell">`` and one ``<text class="v">`` per element, labelled
  with its offset (a tensor: its element), colored by offset (CuTe's 8 greys,
  ``offset % 8``) or by 4-byte shared-memory bank (``color="bank"``, needs
  ``dtype``). Thicker lines mark where nested modes end (the boundaries of the
  ``(2,4)`` in ``((2,4),8)``). Rank 1 is one row; ranks above 2 fold modes
  ``1..R-1`` into the columns; a Swizzle ``Sw<B,M,S>`` is drawn on its
  ``2^M``-element chunks as a ``2^B x 2^|S|`` grid (see :mod:`cute_py.viz.text`).
* A TV layout with ``tile=(M, N)``, an MMAAtom / TiledMMA, a CopyAtom /
  TiledCopy: the tiles with each element labelled ``T#``/``V#`` (the first
  thread and value that own it, threads outer as in CuTe's printers) and
  colored by thread with CuTe's 8 TV colors. MMAs are laid out as CuTe's
  ``print_svg``/``print_latex`` do: A to the left of C, B above C and
  transposed so that K runs vertically in both. Copies show the source and
  destination TV layouts side by side.

Big pictures stay small and fast. ``collapse`` chooses a window of each long
axis: ``None`` (default) windows axes longer than 64 cells to at most 32,
``True`` windows axes longer than 32, an int ``n`` axes longer than ``n``, a
pair ``(rows, cols)`` per axis, ``False`` draws everything. A window is a
prefix of the axis's nested modes (``_grid.window``), so for a plain layout
the hidden rows (columns) are exact translates of the drawn block: the
picture says how many are hidden and which layout translates them (``row
32*j+m = row m + 8:32(j)``), and the axis labels keep the true indices.

Styles live in the SVG's own ``<style>``, every selector scoped to the root's
``class="cutepy"``, so a picture inlined in a notebook page changes nothing
else on it. Nothing is printed or written; :func:`cute_py.viz.save` writes files.

>>> svg = to_svg(Layout((2, 3)))
>>> svg.startswith("<svg") and svg.count('class="cell"')
6
"""

from __future__ import annotations

import colorsys

from ..layouts import Layout  # noqa: F401 - used by the doctests
from ..layouts import int_tuple as it
from ..layouts.errors import names_caller
from ._grid import (
    axis_window, boundary_level, check_cells, copy_parts, layout_grid, limits, mma_parts, prefix_boundaries,
    rest_layout, tile_shape, tv_owner,
)

__all__ = ["to_svg", "BW8", "TV8", "BANK32", "SVG_CELL_LIMIT"]

#: Most cells one picture draws (``collapse=False`` on a bigger layout raises SizeLimitError).
SVG_CELL_LIMIT = 1 << 18
_WINDOW_HINT = "draw a window instead (collapse=None, True, n or (rows, cols))"

#: CuTe's ``TSVGColor_BWx8``: greys by ``offset % 8``.
BW8 = ((255, 255, 255), (230, 230, 230), (205, 205, 205), (180, 180, 180),
       (155, 155, 155), (130, 130, 130), (105, 105, 105), (80, 80, 80))
#: CuTe's ``SVGColor_TV`` / ``TikzColor_TV``: pastel colors by ``thread % 8``.
TV8 = ((175, 175, 255), (175, 255, 175), (255, 255, 175), (255, 175, 175),
       (210, 210, 255), (210, 255, 210), (255, 255, 210), (255, 210, 210))


def _bank_palette():
    out = []
    for b in range(32):
        h = ((b * 13) % 32) / 32.0  # neighbouring banks get distant hues
        r, g, bl = colorsys.hls_to_rgb(h, 0.78 if b % 2 else 0.70, 0.75)
        out.append((round(r * 255), round(g * 255), round(bl * 255)))
    return tuple(out)


#: 32 distinct light colors, one per 4-byte shared-memory bank.
BANK32 = _bank_palette()

_CHAR = 6.6  # width of one monospace character at 11px
_STYLE = ("<style>.cutepy text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;"
          "text-anchor:middle;dominant-baseline:central;fill:#000}"
          ".cutepy .cell{stroke:#555;stroke-width:0.5}.cutepy .frame{fill:none;stroke:#000;stroke-width:1.5}"
          ".cutepy .b{stroke:#000}.cutepy .w{fill:#fff}.cutepy .t,.cutepy .n{font-size:8px}.cutepy .ix{fill:#555}"
          ".cutepy .title{font-size:13px;text-anchor:start;font-weight:bold}"
          ".cutepy .note{text-anchor:start;fill:#333}.cutepy .legend{stroke:#555;stroke-width:0.5}"
          ".cutepy .lg{font-size:8px}.cutepy .hdr{font-size:12px;font-weight:bold}</style>")


def _esc(s) -> str:
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _rgb(c) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def _open(width, height, title) -> list:
    w, h = int(round(width)), int(round(height))
    return [f'<svg xmlns="http://www.w3.org/2000/svg" class="cutepy" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}">',
            f"<title>{_esc(title)}</title>", _STYLE,
            f'<rect class="bg" x="0" y="0" width="{w}" height="{h}" fill="#fff"/>']


def _text_width(s: str, px: float = _CHAR) -> float:
    return len(s) * px


def _header(out, lines, x, y) -> float:
    """Title (first line, bold) and notes; returns the y below them."""
    for i, line in enumerate(lines):
        cls = "title" if i == 0 else "note"
        out.append(f'<text class="{cls}" x="{x}" y="{y + 8:.0f}">{_esc(line)}</text>')
        y += 18 if i == 0 else 15
    return y


def _dtype(dtype):
    from ..layouts.dtypes import dtype as _dt

    return _dt(dtype)


# ---------------------------------------------------------------------------
# Layout grids


def _axis_note(kind, extent, w, leaves, strides):
    if w >= extent:
        return None
    rest = rest_layout(leaves, strides, w)
    s = f"{kind}s {w}\u2013{extent - 1} not drawn ({extent} {kind}s in all)"
    if rest is not None:
        s += f"; {kind} {w}\u00b7j+i = {kind} i + {rest}(j)"
    return s


def _grid_svg(g, color, collapse, dtype):
    if color not in ("offset", "bank"):
        raise ValueError(f"to_svg: color={color!r} is not one of 'offset', 'bank' for a layout "
                         f"('thread' needs a TV picture: pass tile=(M, N), an atom, TiledMMA or TiledCopy)")
    bits = None
    if color == "bank":
        if dtype is None and g.tensor is not None and not g.tensor.is_identity:
            dtype = g.tensor.dtype
        if dtype is None:
            raise ValueError("to_svg: color='bank' needs dtype= (the element type, e.g. 'bf16') to find "
                             "each element's 4-byte bank")
        bits = _dtype(dtype).bits
    lr, lc, tr, tc = limits(collapse)
    R, C = g.rows, g.cols
    wr = axis_window(R, g.row_leaves, lr, tr)
    wc = axis_window(C, g.col_leaves, lc, tc)
    check_cells("to_svg", g.obj, wr * wc, SVG_CELL_LIMIT, _WINDOW_HINT)
    block = g.cells(wr, wc)
    if not block.ints:
        color = "none"
    labels, vals = block.labels, block.values
    maxlen = max((len(s) for s in labels), default=1)
    cw = max(24, int(maxlen * _CHAR) + 10)
    ch = 22
    notes = [n for n in (g.note,
                         f"{R}\u00d7{C} cells" + (f", showing {wr}\u00d7{wc}" if (wr, wc) != (R, C) else ""))
             if n]
    if g.rank > 2:
        notes.append(f"rank {g.rank}: columns fold modes 1..{g.rank - 1} (colexicographic)")
    if color == "bank":
        notes.append(f"colored by 4-byte bank of {_dtype(dtype)} elements ({bits} bits)")
    tail = [n for n in (_axis_note("row", R, wr, g.row_leaves, g.row_strides),
                        _axis_note("column", C, wc, g.col_leaves, g.col_strides)) if n]

    left = max(24, int(len(str(R - 1)) * _CHAR) + 14)
    top_lines = [g.title] + notes
    y0 = 10 + 18 + 15 * (len(top_lines) - 1) + 18
    x0 = 8 + left
    band_r = 24 if wr < R else 0
    band_c = 26 if wc < C else 0
    grid_w, grid_h = wc * cw, wr * ch
    legend_h = 40 if color == "bank" else 0
    height = y0 + grid_h + band_r + 8 + 15 * len(tail) + legend_h + 10
    width = max(x0 + grid_w + band_c + 12,
                16 + max(_text_width(s) for s in top_lines[1:] + tail) if (top_lines[1:] + tail) else 0,
                16 + _text_width(g.title, 7.8),
                (16 + 32 * 18) if color == "bank" else 0)

    out = _open(width, height, g.title)
    _header(out, top_lines, 8, 8)
    # column and row indices
    out.extend(f'<text class="ix" x="{x0 + n * cw + cw / 2:.1f}" y="{y0 - 9}">{n}</text>' for n in range(wc))
    out.extend(f'<text class="ix" x="{x0 - left / 2:.1f}" y="{y0 + m * ch + ch / 2:.1f}">{m}</text>'
               for m in range(wr))
    # cells
    for n in range(wc):
        x = x0 + n * cw
        xc = x + cw / 2
        for m in range(wr):
            y = y0 + m * ch
            v = vals[m + wr * n]
            dark = False
            if color == "offset":
                k = v % 8
                fill = _rgb(BW8[k])
                dark = k >= 6
            elif color == "bank":
                fill = _rgb(BANK32[(v * g.unit * bits // 32) % 32])
            else:
                fill = "#fff"
            out.append(f'<rect class="cell" x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{fill}" '
                       f'data-m="{m}" data-n="{n}"/>')
            out.append(f'<text class="v{" w" if dark else ""}" x="{xc:.1f}" y="{y + ch / 2:.1f}">'
                       f'{_esc(labels[m + wr * n])}</text>')
    # nested-mode boundaries
    rb, cb = prefix_boundaries(g.row_leaves), prefix_boundaries(g.col_leaves)
    for m in range(1, wr):
        lv = boundary_level(m, rb)
        if lv:
            y = y0 + m * ch
            out.append(f'<line class="b" x1="{x0}" y1="{y}" x2="{x0 + grid_w}" y2="{y}" '
                       f'stroke-width="{min(0.5 + lv, 3)}"/>')
    for n in range(1, wc):
        lv = boundary_level(n, cb)
        if lv:
            x = x0 + n * cw
            out.append(f'<line class="b" x1="{x}" y1="{y0}" x2="{x}" y2="{y0 + grid_h}" '
                       f'stroke-width="{min(0.5 + lv, 3)}"/>')
    out.append(f'<rect class="frame" x="{x0}" y="{y0}" width="{grid_w}" height="{grid_h}"/>')
    # ellipsis bands
    if band_r:
        out.append(f'<text class="ix" x="{x0 + grid_w / 2:.1f}" y="{y0 + grid_h + 12}">'
                   f'\u22ee {R - wr} more rows \u22ee</text>')
    if band_c:
        xb = x0 + grid_w + 13
        out.append(f'<text class="ix" x="{xb}" y="{y0 + grid_h / 2:.1f}" '
                   f'transform="rotate(90 {xb} {y0 + grid_h / 2:.1f})">'
                   f'\u22ef {C - wc} more columns \u22ef</text>')
    y = y0 + grid_h + band_r + 8
    for line in tail:
        out.append(f'<text class="note" x="8" y="{y + 6}">{_esc(line)}</text>')
        y += 15
    if color == "bank":
        out.append(f'<text class="note" x="8" y="{y + 6}">bank</text>')
        for b in range(32):
            x = 40 + b * 17
            out.append(f'<rect class="legend" x="{x}" y="{y}" width="16" height="14" fill="{_rgb(BANK32[b])}"/>')
            out.append(f'<text class="lg" x="{x + 8}" y="{y + 7}">{b}</text>')
    out.append("</svg>")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# TV pictures


def _tv_cells(out, owner, rows_total, w0, w1, x0, y0, cs, name, transpose=False):
    """Cells of one TV panel: element (i, j) of the operand (i < w0, j < w1), owner index i + rows_total*j.

    Drawn at column j, row i (or column i, row j when ``transpose``).
    """
    half, q1, q3 = cs / 2, cs * 0.3, cs * 0.72
    for j in range(w1):
        for i in range(w0):
            col, row = (i, j) if transpose else (j, i)
            x, y = x0 + col * cs, y0 + row * cs
            tv = owner[i + rows_total * j]
            if tv is None:
                out.append(f'<rect class="cell" x="{x}" y="{y}" width="{cs}" height="{cs}" fill="#fff" '
                           f'data-op="{name}" data-i="{i}" data-j="{j}"/>')
                continue
            t, v = tv
            out.append(f'<rect class="cell" x="{x}" y="{y}" width="{cs}" height="{cs}" fill="{_rgb(TV8[t % 8])}" '
                       f'data-op="{name}" data-i="{i}" data-j="{j}"/>')
            out.append(f'<text class="t" x="{x + half:.1f}" y="{y + q1:.1f}">T{t}</text>')
            out.append(f'<text class="n" x="{x + half:.1f}" y="{y + q3:.1f}">V{v}</text>')


def _ix_row(out, count, x0, y, cs, start=0):
    out.extend(f'<text class="ix" x="{x0 + k * cs + cs / 2:.1f}" y="{y + cs / 2:.1f}">{start + k}</text>'
               for k in range(count))


def _ix_col(out, count, x, y0, cs):
    out.extend(f'<text class="ix" x="{x + cs / 2:.1f}" y="{y0 + k * cs + cs / 2:.1f}">{k}</text>'
               for k in range(count))


def _frame(out, x, y, w, h):
    out.append(f'<rect class="frame" x="{x}" y="{y}" width="{w}" height="{h}"/>')


def _cell_size(max_thread: int) -> int:
    return 24 if max_thread < 100 else 28 if max_thread < 1000 else 34


def _windows(collapse, *extents):
    lr, _lc, tr, _tc = limits(collapse)
    return [axis_window(e, (e,), lr, tr) for e in extents]


def _check_panels(title, *panels):
    """SizeLimitError when the drawn ``(rows, cols)`` panels hold more than :data:`SVG_CELL_LIMIT` cells."""
    check_cells("to_svg", title, sum(r * c for r, c in panels), SVG_CELL_LIMIT, _WINDOW_HINT, "picture")


def _shown(name, full, shown):
    return [f"{name} {s} of {f}" for f, s in zip(full, shown) if s < f]


def _mma_svg(obj, collapse):
    title, mma, (M, N, K), parts = mma_parts(obj)
    Mw, Nw, Kw = _windows(collapse, M, N, K)
    _check_panels(title, (Mw, Nw), (Mw, Kw), (Nw, Kw))
    owners = {name: tv_owner(layout, r, c, f"to_svg ({name})") for name, layout, (r, c) in parts}
    max_t = max(it.product(layout.shape[0]) for _n, layout, _s in parts) - 1
    cs = _cell_size(max_t)
    lines = [title, f"M\u00d7N\u00d7K = {M}\u00d7{N}\u00d7{K}; A is M\u00d7K (left), B is N\u00d7K drawn "
             f"K-down (top), C is M\u00d7N; cells: first thread T and value V owning the element"]
    for name, layout, _s in parts:
        lines.append(f"{name}_TV: {layout}")
    hidden = _shown("M", (M,), (Mw,)) + _shown("N", (N,), (Nw,)) + _shown("K", (K,), (Kw,))
    if hidden:
        lines.append("drawn: " + ", ".join(hidden) + " (collapse=False draws all)")
    top = 10 + 18 + 15 * (len(lines) - 1) + 8
    width = max(8 + (Kw + Nw + 2) * cs + 8, 16 + max(_text_width(s) for s in lines[1:]),
                16 + _text_width(title, 7.8))
    height = top + (Kw + Mw + 2) * cs + 8
    out = _open(width, height, title)
    _header(out, lines, 8, 8)
    X, Y = 8, top
    # C at column n+K+2, row m+K+2
    cx, cy = X + (Kw + 2) * cs, Y + (Kw + 2) * cs
    _tv_cells(out, owners["C"], M, Mw, Nw, cx, cy, cs, "C")
    _frame(out, cx, cy, Nw * cs, Mw * cs)
    # A at column k+1, row m+K+2
    ax, ay = X + cs, cy
    _tv_cells(out, owners["A"], M, Mw, Kw, ax, ay, cs, "A")
    _frame(out, ax, ay, Kw * cs, Mw * cs)
    _ix_col(out, Mw, X, ay, cs)                 # m labels left of A
    _ix_row(out, Kw, ax, ay - cs, cs)           # k labels above A
    # B at column n+K+2, row k+1 (transposed: K runs down)
    bx, by = cx, Y + cs
    _tv_cells(out, owners["B"], N, Nw, Kw, bx, by, cs, "B", transpose=True)
    _frame(out, bx, by, Nw * cs, Kw * cs)
    _ix_row(out, Nw, bx, Y, cs)                 # n labels above B
    _ix_col(out, Kw, bx - cs, by, cs)           # k labels left of B
    # operand names in the empty corner
    mid_x, mid_y = ax + Kw * cs / 2, by + Kw * cs / 2
    out.append(f'<text class="hdr" x="{mid_x:.1f}" y="{mid_y - 16:.1f}">B (N\u00d7K) \u2192</text>')
    out.append(f'<text class="hdr" x="{mid_x:.1f}" y="{mid_y:.1f}">\u2193 A (M\u00d7K)</text>')
    if (Kw + 1) * cs >= 220:
        out.append(f'<text class="hdr" x="{mid_x:.1f}" y="{mid_y + 16:.1f}">C[m,n] = \u03a3k A[m,k]\u00b7B[n,k]</text>')
    out.append("</svg>")
    return "\n".join(out)


def _tv_panels_svg(title, panels, collapse, extra_lines=()):
    """Panels side by side: ``[(name, layout_tv, M, N), ...]``."""
    shown = []
    owners = []
    max_t = 0
    for name, layout, M, N in panels:
        Mw, Nw = _windows(collapse, M, N)
        shown.append((Mw, Nw))
        _check_panels(title, *shown)
        owners.append(tv_owner(layout, M, N, f"to_svg ({name})"))
        max_t = max(max_t, it.product(layout.shape[0]) - 1)
    cs = _cell_size(max_t)
    lines = [title] + list(extra_lines)
    for (name, layout, M, N), (Mw, Nw) in zip(panels, shown):
        s = f"{name}: {layout} over the {M}\u00d7{N} tile"
        if (Mw, Nw) != (M, N):
            s += f" (drawn {Mw}\u00d7{Nw}; collapse=False draws all)"
        lines.append(s)
    top = 10 + 18 + 15 * (len(lines) - 1) + 8
    X = 8
    panel_w = [(Nw + 1) * cs for (_Mw, Nw) in shown]
    width = max(X + sum(panel_w) + 2 * cs * (len(panels) - 1) + 8,
                16 + max(_text_width(s) for s in lines[1:]), 16 + _text_width(title, 7.8))
    height = top + (2 + max(Mw for Mw, _Nw in shown)) * cs + 8
    out = _open(width, height, title)
    _header(out, lines, 8, 8)
    x = X
    for (name, _layout, M, _N), (Mw, Nw), owner in zip(panels, shown, owners):
        out.append(f'<text class="hdr" x="{x + cs + Nw * cs / 2:.1f}" y="{top + cs / 2:.1f}">{_esc(name)}</text>')
        _ix_row(out, Nw, x + cs, top + cs, cs)
        _ix_col(out, Mw, x, top + 2 * cs, cs)
        _tv_cells(out, owner, M, Mw, Nw, x + cs, top + 2 * cs, cs, name)
        _frame(out, x + cs, top + 2 * cs, Nw * cs, Mw * cs)
        x += (Nw + 1) * cs + 2 * cs
    out.append("</svg>")
    return "\n".join(out)


def _copy_svg(obj, collapse):
    title, tc, (M, N), S, D = copy_parts(obj)
    return _tv_panels_svg(title, [("S", S, M, N), ("D", D, M, N)], collapse,
                          ["source (S) and destination (D) TV layouts; cells: first thread T and value V "
                           "owning the element"])


def _kind(obj) -> str:
    from ..atoms import CopyAtom, MMAAtom, TiledCopy, TiledMMA

    if isinstance(obj, (MMAAtom, TiledMMA)):
        return "mma"
    if isinstance(obj, (CopyAtom, TiledCopy)):
        return "copy"
    return "grid"


@names_caller
def to_svg(obj, color=None, collapse=None, dtype=None, tile=None) -> str:
    """A standalone SVG document (a string) picturing ``obj``; nothing is printed or written.

    * ``obj``: Layout, ComposedLayout, Swizzle, Tensor (a grid of cells), or
      MMAAtom, TiledMMA, CopyAtom, TiledCopy (TV pictures); a rank-2 TV layout
      ``(thread, value) -> m + M*n`` with ``tile=(M, N)`` draws that layout
      over its tile.
    * ``color``: ``"offset"`` (default for grids: CuTe's greys by
      ``offset % 8``), ``"bank"`` (the 4-byte bank of each element, needs
      ``dtype``, e.g. ``"bf16"``), ``"thread"`` (default and only choice for TV
      pictures: CuTe's 8 TV colors by ``thread % 8``).
    * ``collapse``: ``None`` windows axes longer than 64 cells to at most 32
      (the picture states what is hidden), ``True`` axes longer than 32,
      ``n`` axes longer than ``n``, ``(r, c)`` per axis, ``False`` nothing.
      A picture of more than :data:`SVG_CELL_LIMIT` drawn cells raises
      :class:`~cute_py.layouts.errors.SizeLimitError` (so do tiles and TV
      layouts of more than ``CELL_LIMIT`` elements).

    Postconditions: parses as XML; a grid has exactly one ``rect.cell`` and
    one ``text.v`` per drawn element, ``data-m``/``data-n`` on the rect and the
    text ``str(obj(m, n))``; a TV picture has one ``rect.cell`` per drawn tile
    element (``data-op`` names the operand, ``data-i``/``data-j`` its
    coordinate) followed by its ``T#`` and ``V#`` texts.

    >>> import xml.etree.ElementTree as ET
    >>> root = ET.fromstring(to_svg(Layout((4, 8), (8, 1))))
    >>> ns = "{http://www.w3.org/2000/svg}"
    >>> [t.text for t in root.iter(ns + "text") if t.get("class") == "v"][:4]
    ['0', '8', '16', '24']
    >>> from cute_py.atoms import get
    >>> to_svg(get("SM80_16x8x16_F32BF16BF16F32_TN")).count('data-op="C"')
    128
    """
    kind = _kind(obj)
    if kind != "grid" or tile is not None:
        if color not in (None, "thread"):
            raise ValueError(f"to_svg: a TV picture is colored by thread, got color={color!r}")
        if kind == "mma":
            return _mma_svg(obj, collapse)
        if kind == "copy":
            return _copy_svg(obj, collapse)
        M, N = tile_shape(tile)
        return _tv_panels_svg(f"TV layout {obj} over the {M}\u00d7{N} tile", [("TV", obj, M, N)], collapse)
    return _grid_svg(layout_grid(obj, "to_svg"), color or "offset", collapse, dtype)
