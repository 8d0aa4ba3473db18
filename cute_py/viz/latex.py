"""LaTeX/TikZ text in the format of CuTe's ``print_latex`` family (``cute/util/print_latex.hpp``).

:func:`to_latex` writes a standalone document (``\\documentclass[convert]{standalone}``
with ``tikz``), compiled as is by ``pdflatex``:

* a layout: CuTe's ``print_latex(layout)``: one ``\\node[fill=...] at (m,n) {idx};``
  per element, grey by ``idx % 8`` (``TikzColor_BWx8``), a grid and the row and
  column indices. As in CuTe, a rank-1 layout is drawn as ``append(layout, 1:0)``:
  one column. Ranks above 2 fold modes ``1..R-1`` into the columns (CuTe accepts
  rank <= 2 only); swizzled layouts are drawn through their function; a Swizzle on
  its chunks (see :mod:`cute_py.viz.text`).
* a rank-2 TV layout with ``tile=(M, N)``: ``print_latex_tv``: each element
  ``\\shortstack{T# \\\\ V#}`` for the first thread and value owning it, filled with
  ``TikzColor_TV`` (8 colors by thread).
* an MMAAtom / TiledMMA: ``print_latex_mma``: C at (0,0), A to its left
  (columns ``k-K-1``), B above it (rows ``k-K-1``, K running vertically).
* a CopyAtom / TiledCopy: ``print_latex_copy``: S and D side by side (D shifted
  ``N+3`` columns).

TikZ coordinates are CuTe's: ``x={(0cm,-1cm)}, y={(1cm,0cm)}``, so ``(m,n)`` is
row ``m`` (down), column ``n`` (right).

>>> tex = to_latex(Layout((2, 2)))
>>> tex.splitlines()[0], tex.count("\\\\node[fill=")
('% Layout: (2,2):(1,2)', 4)
"""

from __future__ import annotations

from ..layouts import Layout
from ..layouts import append as _append
from ._grid import check_cells, copy_parts, layout_grid, mma_parts, tile_shape, tv_owner
from ..layouts.errors import names_caller

__all__ = ["to_latex", "BW8", "TV8"]

#: CuTe's ``TikzColor_BWx8``.
BW8 = ("black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70")
#: CuTe's ``TikzColor_TV``.
TV8 = ("{rgb,255:red,175;green,175;blue,255}", "{rgb,255:red,175;green,255;blue,175}",
       "{rgb,255:red,255;green,255;blue,175}", "{rgb,255:red,255;green,175;blue,175}",
       "{rgb,255:red,210;green,210;blue,255}", "{rgb,255:red,210;green,255;blue,210}",
       "{rgb,255:red,255;green,255;blue,210}", "{rgb,255:red,255;green,210;blue,210}")

_HEADER = ("\\documentclass[convert]{standalone}\n"
           "\\usepackage{tikz}\n\n"
           "\\begin{document}\n"
           "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},"
           "every node/.style={minimum size=1cm, outer sep=0pt}]\n")
_FOOTER = "\\end{tikzpicture}\n\\end{document}\n"


def _grid_line(x0, y0, x1, y1) -> str:
    return f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] ({x0},{y0}) grid ({x1},{y1});\n"


def _label(m, n, v) -> str:
    return f"\\node at ({m},{n}) {{\\Large{{\\texttt{{{v}}}}}}};"


def _tv_node(t, v, m, n) -> str:
    return f"\\node[fill={TV8[t % 8]}] at ({m},{n}) {{\\shortstack{{T{t} \\\\ V{v}}}}};"


def _layout_latex(obj) -> str:
    g = layout_grid(obj, "to_latex")
    check_cells("to_latex", g.obj, g.rows * g.cols, hint="a TikZ picture has one node per element")
    block = g.cells()
    if g.rank <= 1:  # CuTe: append<2>(layout, Layout<_1,_0>{}) -- one column
        M, N = g.cols, 1
        title = str(_append(obj, Layout(1, 0))) if isinstance(obj, Layout) else g.title
    else:
        M, N = g.rows, g.cols
        title = g.title
    out = [f"% Layout: {title}", _HEADER]
    for m in range(M):
        for n in range(N):
            i = m + M * n  # the same colexicographic index in both orientations
            v = block.values[i]
            fill = BW8[v % 8] if block.ints else "white"
            out.append(f"\\node[fill={fill}] at ({m},{n}) {{{block.labels[i]}}};")
    out.append(_grid_line(0, 0, M, N))
    out.extend(_label(m, -1, m) for m in range(M))
    out.extend(_label(-1, n, n) for n in range(N))
    return "\n".join(out) + "\n" + _FOOTER


def _tv_nodes(owner, M, N, place) -> list:
    """Nodes in CuTe's order (threads outer, values inner) -- one per owned element."""
    cells = sorted(((tv, i) for i, tv in enumerate(owner) if tv is not None))
    out = []
    for (t, v), i in cells:
        r, c = place(i % M, i // M)
        out.append(_tv_node(t, v, r, c))
    return out


def _tv_latex(layout_tv, tile) -> str:
    M, N = tile_shape(tile)
    owner = tv_owner(layout_tv, M, N, "to_latex")
    out = [f"% Layout TV: {layout_tv}", _HEADER]
    out.extend(_tv_nodes(owner, M, N, lambda m, n: (m, n)))
    out.append(_grid_line(0, 0, M, N))
    out.extend(_label(m, -1, m) for m in range(M))
    out.extend(_label(-1, n, n) for n in range(N))
    return "\n".join(out) + "\n" + _FOOTER


def _mma_latex(obj) -> str:
    _title, _mma, (M, N, K), parts = mma_parts(obj)
    lay = {name: (layout, shape) for name, layout, shape in parts}
    out = [f"% LayoutC: {lay['C'][0]}", f"% LayoutA: {lay['A'][0]}", f"% LayoutB: {lay['B'][0]}", _HEADER]
    c = tv_owner(lay["C"][0], M, N, "to_latex (C)")
    out.extend(_tv_nodes(c, M, N, lambda m, n: (m, n)))
    out.append(_grid_line(0, 0, M, N))
    a = tv_owner(lay["A"][0], M, K, "to_latex (A)")
    out.extend(_tv_nodes(a, M, K, lambda m, k: (m, k - K - 1)))
    out.append(_grid_line(0, -K - 1, M, -1))
    out.extend(_label(m, -1 - K - 1, m) for m in range(M))
    out.extend(_label(-1, k - K - 1, k) for k in range(K))
    b = tv_owner(lay["B"][0], N, K, "to_latex (B)")
    out.extend(_tv_nodes(b, N, K, lambda n, k: (k - K - 1, n)))
    out.append(_grid_line(-K - 1, 0, -1, N))
    out.extend(_label(-1 - K - 1, n, n) for n in range(N))
    out.extend(_label(k - K - 1, -1, k) for k in range(K))
    return "\n".join(out) + "\n" + _FOOTER


def _copy_latex(obj) -> str:
    _title, _tc, (M, N), S, D = copy_parts(obj)
    out = [f"% Layout S TV: {S}", f"% Layout D TV: {D}", _HEADER]
    out.extend(_tv_nodes(tv_owner(S, M, N, "to_latex (S)"), M, N, lambda m, n: (m, n)))
    out.append(_grid_line(0, 0, M, N))
    out.extend(_label(m, -1, m) for m in range(M))
    out.extend(_label(-1, n, n) for n in range(N))
    out.extend(_tv_nodes(tv_owner(D, M, N, "to_latex (D)"), M, N, lambda m, n: (m, n + N + 3)))
    out.append(_grid_line(0, N + 3, M, N + N + 3))
    out.extend(_label(m, N + N + 3, m) for m in range(M))
    out.extend(_label(-1, n + N + 3, n) for n in range(N))
    return "\n".join(out) + "\n" + _FOOTER


@names_caller
def to_latex(obj, tile=None) -> str:
    """A standalone TikZ document picturing ``obj`` in the format of CuTe's ``print_latex`` family.

    ``obj`` is a Layout, ComposedLayout, Swizzle or Tensor (its layout),
    a rank-2 TV layout with ``tile=(M, N)``, an MMAAtom / TiledMMA or a
    CopyAtom / TiledCopy (see the module docstring). Nothing is printed.

    A layout of more than :data:`~cute_py.viz._grid.CELL_LIMIT` elements (or a
    TV tile of more) raises :class:`~cute_py.layouts.errors.SizeLimitError`.

    Postconditions: a layout gives one ``\\node[fill=...]`` per element
    labelled with its offset; a TV picture one ``\\node[fill=...]`` per
    tile element that some (thread, value) owns.

    >>> print(to_latex(Layout((2, 1))), end="")
    % Layout: (2,1):(1,0)
    \\documentclass[convert]{standalone}
    \\usepackage{tikz}
    <BLANKLINE>
    \\begin{document}
    \\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, outer sep=0pt}]
    <BLANKLINE>
    \\node[fill=black!00] at (0,0) {0};
    \\node[fill=black!40] at (1,0) {1};
    \\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (2,1);
    <BLANKLINE>
    \\node at (0,-1) {\\Large{\\texttt{0}}};
    \\node at (1,-1) {\\Large{\\texttt{1}}};
    \\node at (-1,0) {\\Large{\\texttt{0}}};
    \\end{tikzpicture}
    \\end{document}
    >>> from cute_py.atoms import get
    >>> to_latex(get("SM80_16x8x16_F32BF16BF16F32_TN")).count("shortstack")  # C 16x8, A 16x16, B 8x16
    512
    """
    from .svg import _kind

    kind = _kind(obj)
    if kind == "mma":
        return _mma_latex(obj)
    if kind == "copy":
        return _copy_latex(obj)
    if tile is not None:
        return _tv_latex(obj, tile)
    if getattr(obj, "_is_tensor", False):
        obj = obj.layout
    return _layout_latex(obj)
