"""cute_py.viz renderers: CuTe's print_layout text, SVG, LaTeX/TikZ, HTML, notebook hooks and save()."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import cute_py
from cute_py import ComposedLayout, Layout, Swizzle, atoms, make_tensor
from cute_py import viz
from cute_py.viz import print_layout, print_tensor, save, to_html, to_latex, to_svg, to_text
from cute_py.viz.svg import BANK32, BW8

NS = "{http://www.w3.org/2000/svg}"
ROOT = pathlib.Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# print_layout: CuTe's exact table. Expected strings written out from CuTe's format rules:
# w = num_digits(cosize) + 2; header "    " + "  %*d " per column (width w-2); per row a
# separator "    " + ("+" + "-"*w) per column + "+", then "%2d  " + "| %*d " per cell + "|".

EXPECT_4x8 = (
    "(4,8):(1,4)\n"
    "       0    1    2    3    4    5    6    7 \n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 0  |  0 |  4 |  8 | 12 | 16 | 20 | 24 | 28 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 1  |  1 |  5 |  9 | 13 | 17 | 21 | 25 | 29 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 2  |  2 |  6 | 10 | 14 | 18 | 22 | 26 | 30 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 3  |  3 |  7 | 11 | 15 | 19 | 23 | 27 | 31 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
)

EXPECT_2x3_ROW_MAJOR = (
    "(2,3):(3,1)\n"
    "      0   1   2 \n"
    "    +---+---+---+\n"
    " 0  | 0 | 1 | 2 |\n"
    "    +---+---+---+\n"
    " 1  | 3 | 4 | 5 |\n"
    "    +---+---+---+\n"
)

# Sw<3,0,3> o (8,8):(8,1): cell (r,c) = (8r+c) ^ ((8r+c) >> 3 & 7) = 8r + (c ^ r)
EXPECT_SWIZZLED_8x8 = (
    "Sw<3,0,3> o 0 o (8,8):(8,1)\n"
    "       0    1    2    3    4    5    6    7 \n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 0  |  0 |  1 |  2 |  3 |  4 |  5 |  6 |  7 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 1  |  9 |  8 | 11 | 10 | 13 | 12 | 15 | 14 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 2  | 18 | 19 | 16 | 17 | 22 | 23 | 20 | 21 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 3  | 27 | 26 | 25 | 24 | 31 | 30 | 29 | 28 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 4  | 36 | 37 | 38 | 39 | 32 | 33 | 34 | 35 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 5  | 45 | 44 | 47 | 46 | 41 | 40 | 43 | 42 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 6  | 54 | 55 | 52 | 53 | 50 | 51 | 48 | 49 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
    " 7  | 63 | 62 | 61 | 60 | 59 | 58 | 57 | 56 |\n"
    "    +----+----+----+----+----+----+----+----+\n"
)

SW8x8 = ComposedLayout(Swizzle(3, 0, 3), 0, Layout((8, 8), (8, 1)))


@pytest.mark.parametrize("layout, expected", [
    (Layout((4, 8)), EXPECT_4x8),
    (Layout((2, 3), (3, 1)), EXPECT_2x3_ROW_MAJOR),
    (SW8x8, EXPECT_SWIZZLED_8x8),
], ids=["4x8", "2x3-row-major", "swizzled-8x8"])
def test_print_layout_exact(layout, expected, capsys):
    print_layout(layout)
    assert capsys.readouterr().out == expected
    assert to_text(layout) == expected


def test_print_layout_width_follows_cosize():
    # cosize = 1 + 7*100 + 1 = 702: three digits, cells "| %3d ", separators "+-----"
    text = to_text(Layout((2, 8), (1, 100)))
    lines = text.splitlines()
    assert lines[1] == "    " + "".join(f"  {n:3d} " for n in range(8))
    assert lines[2] == "    " + "+-----" * 8 + "+"
    assert lines[3] == " 0  " + "".join(f"| {100 * n:3d} " for n in range(8)) + "|"
    assert lines[5] == " 1  " + "".join(f"| {100 * n + 1:3d} " for n in range(8)) + "|"


def test_print_layout_rank1_is_one_row():
    assert to_text(Layout(4, 2)) == (
        "4:2\n"
        "      0   1   2   3 \n"
        "    +---+---+---+---+\n"
        " 0  | 0 | 2 | 4 | 6 |\n"
        "    +---+---+---+---+\n"
    )


def test_print_layout_deeper_ranks_fold_into_columns():
    L = Layout((2, 3, 2), (1, 4, 2))
    text = to_text(L)
    assert text.splitlines()[0] == "(2,3,2):(1,4,2)"
    # the same table as group(L, 1, 3) = (2,(3,2)):(1,(4,2)), but for the title line
    grouped = to_text(Layout((2, (3, 2)), (1, (4, 2))))
    assert text.splitlines()[1:] == grouped.splitlines()[1:]
    rows = [ln for ln in text.splitlines() if re.match(r"^ *\d+  \|", ln)]
    for m, row in enumerate(rows):
        cells = [int(c) for c in row.split("|")[1:-1]]
        assert cells == [L(m + 2 * n) for n in range(6)]


def test_print_layout_swizzle_object_is_its_chunk_grid():
    text = to_text(Swizzle(3, 4, 3))
    first, rest = text.split("\n", 1)
    assert "Sw<3,4,3>" in first and "16-element chunks" in first
    assert rest == EXPECT_SWIZZLED_8x8.split("\n", 1)[1]


def test_to_text_of_atoms_is_their_str():
    atom = atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")
    assert to_text(atom) == str(atom)
    mma = atoms.make_tiled_mma(atom, (2, 2, 1))
    assert to_text(mma).rstrip("\n") == str(mma).rstrip("\n")


def test_print_tensor_delegates(capsys):
    from cute_py.layouts.tensor_print import print_tensor as layers_print_tensor

    t = make_tensor(np.arange(6, dtype=np.int32), (2, 3))
    layers_print_tensor(t)
    expected = capsys.readouterr().out
    print_tensor(t)
    assert capsys.readouterr().out == expected
    assert to_text(t) == expected


# ---------------------------------------------------------------------------
# SVG: XML, one cell per element, labels equal the layout's values


def _parse(svg: str):
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


def _grid_cells(root):
    """[(m, n, fill, label)] for each rect.cell, its label the next text.v."""
    elems = list(root.iter())
    out = []
    for i, e in enumerate(elems):
        if e.tag == NS + "rect" and e.get("class") == "cell":
            label = elems[i + 1]
            assert label.tag == NS + "text" and label.get("class", "").split()[0] == "v"
            out.append((int(e.get("data-m")), int(e.get("data-n")), e.get("fill"), label.text))
    return out


GRID_CASES = [
    (Layout((4, 8)), lambda L, m, n: L(m, n)),
    (Layout(((2, 4), (2, 4)), ((1, 16), (2, 4))), lambda L, m, n: L(m, n)),
    (SW8x8, lambda L, m, n: L(m, n)),
    (ComposedLayout(Swizzle(2, 1, 3), 0, Layout((4, 32), (32, 1))), lambda L, m, n: L(m, n)),
    (Layout(6, 3), lambda L, m, n: L(n)),
    (Layout((2, 3, 2), (1, 4, 2)), lambda L, m, n: L(m + 2 * n)),
]


@pytest.mark.parametrize("layout, value", GRID_CASES, ids=[str(c[0]) for c in GRID_CASES])
def test_svg_one_cell_per_element_with_its_offset(layout, value):
    root = _parse(to_svg(layout, collapse=False))
    cells = _grid_cells(root)
    assert len(cells) == cute_py.size(layout)
    assert len({(m, n) for m, n, _f, _l in cells}) == len(cells)
    for m, n, fill, label in cells:
        v = value(layout, m, n)
        assert label == str(v), (m, n)
        assert fill == "rgb({},{},{})".format(*BW8[v % 8])


def test_svg_bank_colors_need_dtype_and_follow_banks():
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    with pytest.raises(ValueError, match="dtype"):
        to_svg(L, color="bank")
    cells = _grid_cells(_parse(to_svg(L, color="bank", dtype="bf16")))
    assert len(cells) == 512
    for m, n, fill, _label in cells:
        bank = (L(m, n) * 16 // 32) % 32
        assert fill == "rgb({},{},{})".format(*BANK32[bank])
    assert len(set(BANK32)) == 32


def test_svg_thread_color_needs_a_tv_picture():
    with pytest.raises(ValueError, match="tile"):
        to_svg(Layout((4, 8)), color="thread")
    with pytest.raises(ValueError):
        to_svg(Layout((4, 8)), color="plaid")


def test_svg_nested_mode_boundaries_are_thicker():
    lines = lambda s: [e for e in _parse(s).iter(NS + "line") if e.get("class") == "b"]  # noqa: E731
    assert lines(to_svg(Layout((8, 8)))) == []
    # rows (2,4): boundaries after rows 2,4,6; columns (2,4) likewise
    nested = lines(to_svg(Layout(((2, 4), (2, 4)))))
    assert len(nested) == 6
    # ((2,2),...) rows: the boundary at 2 ends one nested mode, at 4 two of them -> thicker
    widths = {int(e.get("y1")): float(e.get("stroke-width")) for e in lines(to_svg(Layout(((2, 2, 2), 1))))}
    ys = sorted(widths)
    assert widths[ys[1]] > widths[ys[0]] == widths[ys[2]]


def test_svg_rank1_swizzle_and_tensor():
    sw_cells = _grid_cells(_parse(to_svg(Swizzle(3, 4, 3))))
    assert len(sw_cells) == 64
    assert {(m, n): int(lab) for m, n, _f, lab in sw_cells} == {(r, c): 8 * r + (c ^ r)
                                                               for r in range(8) for c in range(8)}
    t = make_tensor(np.arange(12, dtype=np.int32) * 10, Layout((3, 4), (4, 1)))
    cells = _grid_cells(_parse(to_svg(t)))
    assert {(m, n): lab for m, n, _f, lab in cells} == {(m, n): str(int(t(m, n))) for m in range(3) for n in range(4)}


# ---------------------------------------------------------------------------
# TV pictures: every tile element labelled T#/V# of the first (thread, value) that owns it


def _tv_cells(root):
    """{op: {(i, j): (t, v)}} from rect.cell followed by its T# and V# texts."""
    elems = list(root.iter())
    out = {}
    for k, e in enumerate(elems):
        if e.tag == NS + "rect" and e.get("class") == "cell":
            t_txt, v_txt = elems[k + 1], elems[k + 2]
            assert t_txt.text.startswith("T") and v_txt.text.startswith("V")
            key = (int(e.get("data-i")), int(e.get("data-j")))
            cells = out.setdefault(e.get("data-op"), {})
            assert key not in cells
            cells[key] = (int(t_txt.text[1:]), int(v_txt.text[1:]))
    return out


def _check_owner(layout_tv, rows, cols, cells):
    T = cute_py.size(layout_tv, 0)
    V = cute_py.size(layout_tv, 1)
    first = {}
    for t in range(T):
        for v in range(V):
            first.setdefault(layout_tv(t, v), (t, v))
    assert len(cells) == rows * cols
    for (i, j), tv in cells.items():
        assert tv == first[i + rows * j], (i, j)


def test_mma_atom_svg_labels_every_element_of_a_b_c():
    atom = atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")
    cells = _tv_cells(_parse(to_svg(atom)))
    M, N, K = atom.shape_mnk
    assert set(cells) == {"A", "B", "C"}
    _check_owner(atom.c_layout, M, N, cells["C"])
    _check_owner(atom.a_layout, M, K, cells["A"])
    _check_owner(atom.b_layout, N, K, cells["B"])
    # C(0,0) is thread 0 value 0; C(8,0) is thread 0 value 2 (rows g and g+8)
    assert cells["C"][(0, 0)] == (0, 0) and cells["C"][(8, 0)] == (0, 2)


def test_mma_svg_places_a_left_and_b_transposed_above_c():
    root = _parse(to_svg(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")))
    pos = {}
    for e in root.iter(NS + "rect"):
        if e.get("class") == "cell":
            key = (e.get("data-op"), int(e.get("data-i")), int(e.get("data-j")))
            pos[key] = (float(e.get("x")), float(e.get("y")))
    cx, cy = pos[("C", 0, 0)]
    ax, ay = pos[("A", 0, 0)]
    bx, by = pos[("B", 0, 0)]
    assert ay == cy and ax < cx            # A to the left of C, same rows (m)
    assert bx == cx and by < cy            # B above C, same columns (n)
    assert pos[("B", 0, 1)][1] > by and pos[("B", 0, 1)][0] == bx   # K runs down in B
    assert pos[("A", 0, 1)][0] > ax and pos[("A", 0, 1)][1] == ay   # K runs right in A


def test_tiled_mma_and_gmma_svgs():
    mma = atoms.make_tiled_mma(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"), (2, 2, 1))
    cells = _tv_cells(_parse(to_svg(mma)))
    M, N, K = mma.tile_size
    _check_owner(mma.get_layoutC_TV(), M, N, cells["C"])
    _check_owner(mma.get_layoutA_TV(), M, K, cells["A"])
    _check_owner(mma.get_layoutB_TV(), N, K, cells["B"])
    gmma = atoms.get("SM90_64x128x16_F32BF16BF16_SS")
    svg = to_svg(gmma)  # N=128 is windowed to 32 columns by default
    cells = _tv_cells(_parse(svg))
    assert len(cells["C"]) == 64 * 32 and len(cells["B"]) == 32 * 16 and len(cells["A"]) == 64 * 16
    assert "N 32 of 128" in svg


def test_copy_svgs_show_source_and_destination():
    atom = atoms.make_copy_atom("SM75_U32x4_LDSM_N", "f16")
    cells = _tv_cells(_parse(to_svg(atom)))
    assert set(cells) == {"S", "D"}
    from cute_py.viz._grid import copy_parts

    _title, tc, (M, N), S, D = copy_parts(atom)
    _check_owner(S, M, N, cells["S"])
    _check_owner(D, M, N, cells["D"])
    tc = atoms.make_tiled_copy(atoms.make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"),
                               Layout((16, 8), (8, 1)), Layout((1, 8)))
    cells = _tv_cells(_parse(to_svg(tc, collapse=False)))
    _check_owner(tc.get_layoutS_TV(), 16, 64, cells["S"])
    _check_owner(tc.get_layoutD_TV(), 16, 64, cells["D"])


def test_tv_layout_over_a_tile():
    tv = Layout((4, 2), (2, 1))
    cells = _tv_cells(_parse(to_svg(tv, tile=(2, 4))))
    _check_owner(tv, 2, 4, cells["TV"])
    with pytest.raises(ValueError, match="outside"):
        to_svg(tv, tile=(2, 2))
    with pytest.raises(ValueError):
        to_svg(tv, tile=(2, 4), color="offset")


# ---------------------------------------------------------------------------
# LaTeX


_NODE = re.compile(r"^\\node\[fill=([^\]]+)\] at \((-?\d+),(-?\d+)\) \{(.*)\};$")


def test_latex_one_node_per_element():
    L = Layout((4, 8), (8, 1))
    tex = to_latex(L)
    lines = tex.splitlines()
    assert lines[0] == "% Layout: (4,8):(8,1)"
    assert lines[1] == "\\documentclass[convert]{standalone}"
    assert lines[-2:] == ["\\end{tikzpicture}", "\\end{document}"]
    nodes = [_NODE.match(ln) for ln in lines if ln.startswith("\\node[fill=")]
    assert len(nodes) == 32
    bw = ["black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70"]
    seen = set()
    for mt in nodes:
        fill, m, n, v = mt.group(1), int(mt.group(2)), int(mt.group(3)), int(mt.group(4))
        assert v == L(m, n) and fill == bw[v % 8]
        seen.add((m, n))
    assert len(seen) == 32
    assert "\\draw[color=black,thick,shift={(-0.5,-0.5)}] (0,0) grid (4,8);" in lines


def test_latex_rank1_is_a_column_and_swizzle_goes_through_its_function():
    tex = to_latex(Layout(3, 2))
    assert tex.splitlines()[0] == "% Layout: (3,1):(2,0)"
    assert "grid (3,1);" in tex
    nodes = [_NODE.match(ln) for ln in to_latex(SW8x8).splitlines() if ln.startswith("\\node[fill=")]
    assert {(int(x.group(2)), int(x.group(3))): int(x.group(4)) for x in nodes} == {
        (m, n): SW8x8(m, n) for m in range(8) for n in range(8)}


def test_latex_mma_and_tv():
    atom = atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")
    tex = to_latex(atom)
    M, N, K = atom.shape_mnk
    nodes = [_NODE.match(ln) for ln in tex.splitlines() if ln.startswith("\\node[fill=")]
    assert len(nodes) == M * N + M * K + N * K
    assert tex.startswith("% LayoutC: ")
    # C at (m, n); A at (m, k-K-1); B at (k-K-1, n) as CuTe's print_latex_mma
    c = {(int(x.group(2)), int(x.group(3))) for x in nodes if int(x.group(2)) >= 0 and int(x.group(3)) >= 0}
    a = {(int(x.group(2)), int(x.group(3))) for x in nodes if int(x.group(3)) < 0}
    b = {(int(x.group(2)), int(x.group(3))) for x in nodes if int(x.group(2)) < 0}
    assert c == {(m, n) for m in range(M) for n in range(N)}
    assert a == {(m, k - K - 1) for m in range(M) for k in range(K)}
    assert b == {(k - K - 1, n) for n in range(N) for k in range(K)}
    tv = to_latex(Layout((2, 2), (2, 1)), tile=(2, 2))
    assert "\\node[fill={rgb,255:red,175;green,175;blue,255}] at (0,0) {\\shortstack{T0 \\\\ V0}};" in tv
    assert tv.count("shortstack") == 4


# ---------------------------------------------------------------------------
# HTML, notebook hooks


def test_html_snippet_wraps_the_svg_with_a_caption():
    html = to_html(Layout((2, 3), (3, 1)))
    assert html.startswith('<figure class="cutepy-figure"') and html.endswith("</figure>")
    assert "<svg" in html and "(2,3):(3,1)" in html and "+---+" in html
    assert "MMA_Atom" in to_html(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    big = to_html(Layout((256, 256)))
    assert "print_layout" not in big  # no 65536-cell table in a caption


DRAWABLE = [
    Layout((2, 2)),
    SW8x8,
    Swizzle(3, 4, 3),
    make_tensor(np.arange(4, dtype=np.float32), (2, 2)),
    atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"),
    atoms.make_copy_atom("SM75_U32x4_LDSM_N", "f16"),
    atoms.make_tiled_mma(atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"), (2, 1, 1)),
    atoms.make_tiled_copy(atoms.make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout((32, 4), (4, 1))),
]


@pytest.mark.parametrize("obj", DRAWABLE, ids=lambda o: type(o).__name__)
def test_repr_hooks_after_import_cute_py(obj):
    svg = obj._repr_svg_()
    _parse(svg)
    assert obj._repr_html_().startswith("<figure")


def test_import_cute_py_alone_installs_the_hooks():
    code = ("import cute_py, sys\n"
            "names = ['Layout', 'ComposedLayout', 'Swizzle', 'Tensor', 'MMAAtom', 'CopyAtom',\n"
            "         'TiledMMA', 'TiledCopy']\n"
            "missing = [n for n in names if not (hasattr(getattr(cute_py, n), '_repr_svg_') and "
            "hasattr(getattr(cute_py, n), '_repr_html_'))]\n"
            "assert not missing, missing\n"
            "assert 'cute_py.viz' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_lower_layers_never_import_viz():
    for pkg in ("layouts", "atoms"):
        for path in (ROOT / "cute_py" / pkg).rglob("*.py"):
            src = path.read_text()
            assert not re.search(r"^\s*(from\s+(\.\.|cute_py\.)viz|import\s+cute_py\.viz)", src, re.M), path


def test_repr_returns_none_when_it_cannot_draw(monkeypatch):
    import cute_py.viz.display as display

    def boom(*_a, **_k):
        raise ValueError("cannot draw")

    monkeypatch.setattr(display, "to_svg", boom)
    monkeypatch.setattr(display, "to_html", boom)
    assert Layout(2)._repr_svg_() is None and Layout(2)._repr_html_() is None


# ---------------------------------------------------------------------------
# Big layouts: fast and bounded


def test_256x256_renders_fast_and_small():
    L = Layout((256, 256))
    to_svg(Layout((4, 4)))  # warm up imports
    t0 = time.perf_counter()
    svg = to_svg(L)
    dt = time.perf_counter() - t0
    print(f"\n256x256 to_svg (auto collapse): {dt * 1000:.1f} ms, {len(svg) / 1024:.0f} KiB")
    assert dt < 2.0
    assert len(svg) < 400_000
    cells = _grid_cells(_parse(svg))
    assert len(cells) == 32 * 32
    assert all(lab == str(L(m, n)) for m, n, _f, lab in cells)
    assert "224 more rows" in svg and "224 more columns" in svg
    assert "row 32\u00b7j+i = row i + 8:32(j)" in svg          # the hidden rows are translates
    t0 = time.perf_counter()
    full = to_svg(L, collapse=False)
    dt_full = time.perf_counter() - t0
    print(f"256x256 to_svg (collapse=False, 65536 cells): {dt_full * 1000:.0f} ms, {len(full) / 2**20:.1f} MiB")
    assert full.count('class="cell"') == 65536
    assert dt_full < 5.0


def test_huge_layouts_only_evaluate_the_drawn_window():
    for L in (Layout((1 << 20, 1 << 20)), Layout(1 << 30),
              ComposedLayout(Swizzle(3, 4, 3), 0, Layout((1 << 20, 1 << 20), (1 << 20, 1)))):
        t0 = time.perf_counter()
        svg = L._repr_svg_()
        assert time.perf_counter() - t0 < 2.0, str(L)
        cells = _grid_cells(_parse(svg))
        assert all(lab == str(L(m, n) if cute_py.rank(L) == 2 else L(n)) for m, n, _f, lab in cells)


def test_collapse_options():
    L = Layout((40, 100))
    def count(svg):
        return svg.count('class="cell"')
    assert count(to_svg(L)) == 40 * 25           # only the 100 columns exceed 64; 100 -> 25 (a divisor)
    assert count(to_svg(L, collapse=False)) == 4000
    assert count(to_svg(L, collapse=True)) == 20 * 25
    assert count(to_svg(L, collapse=10)) == 10 * 10
    assert count(to_svg(L, collapse=(8, 50))) == 8 * 50
    with pytest.raises(ValueError):
        to_svg(L, collapse=0)
    # a prime extent still collapses to a readable window
    assert count(to_svg(Layout((1, 97)))) == 32


# ---------------------------------------------------------------------------
# Nothing printed or written, except print_* and save()


def test_renderers_print_and_write_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for obj in DRAWABLE:
        to_svg(obj)
        to_html(obj)
        to_latex(obj)
        to_text(obj)
    assert capsys.readouterr().out == ""
    assert list(tmp_path.iterdir()) == []


def test_save_writes_only_when_called(tmp_path):
    L = Layout((2, 3), (3, 1))
    for name, check in [("l.svg", lambda s: ET.fromstring(s).tag == NS + "svg"),
                        ("l.html", lambda s: s.startswith("<!DOCTYPE html>") and "<svg" in s),
                        ("l.tex", lambda s: s.startswith("% Layout: (2,3):(3,1)")),
                        ("l.txt", lambda s: s == EXPECT_2x3_ROW_MAJOR)]:
        p = tmp_path / name
        assert not p.exists()
        assert save(L, p) == p
        assert check(p.read_text(encoding="utf-8")), name
    p = save(L, tmp_path / "picture.out", format="svg", color="bank", dtype="f32")
    assert "bank" in p.read_text()
    with pytest.raises(ValueError, match="extension"):
        save(L, tmp_path / "l.png")
    with pytest.raises(ValueError, match="format"):
        save(L, tmp_path / "l.svg", format="png")
    assert not (tmp_path / "l.png").exists()


# ---------------------------------------------------------------------------
# Docstring examples of the renderers


VIZ_MODULES = ["cute_py.viz", "cute_py.viz.text", "cute_py.viz.svg", "cute_py.viz.latex",
               "cute_py.viz.html", "cute_py.viz.display", "cute_py.viz._grid"]


@pytest.mark.parametrize("name", VIZ_MODULES)
def test_viz_doctests(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = []
    n = 0
    for t in doctest.DocTestFinder(exclude_empty=True).find(module):
        runner.run(t, out=out.append)
        n += len(t.examples)
    failed, _ = runner.summarize(verbose=False)
    assert failed == 0, "".join(out)
    assert n > 0


def test_public_viz_functions_have_examples():
    for name in ["print_layout", "print_tensor", "to_text", "to_svg", "to_latex", "to_html", "save"]:
        assert ">>>" in (getattr(viz, name).__doc__ or ""), name


# ---------------------------------------------------------------------------
# The "Seeing layouts" docs page: its examples run, its figures are the library's current output


def test_seeing_guide_examples_run():
    text = (ROOT / "docs" / "guide" / "seeing.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "seeing.md", "seeing.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


def test_seeing_guide_figures_are_current():
    spec = importlib.util.spec_from_file_location("render_figures", ROOT / "docs" / "render_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = "".join((ROOT / "docs" / "guide" / f).read_text(encoding="utf-8") for f in ("seeing.md", "grouped.md"))
    for name, svg in module.figures().items():
        path = ROOT / "docs" / "_static" / "figures" / name
        assert path.read_text(encoding="utf-8") == svg + "\n", \
            f"{path} is stale: run python3 docs/render_figures.py"
        assert f"../_static/figures/{name}" in page
        _parse(svg)
    assert "guide/seeing" in (ROOT / "docs" / "index.md").read_text()
