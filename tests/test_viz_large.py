"""Huge layouts: text tables elide, pictures and analyses refuse above a stated size, all at once.

Issue 14, item 2: ``cute-py show "(100000000,100000000):(1,100000000)"`` printed
nothing for 30 s, ``(100000,100000)`` was killed for memory, and ``to_text`` /
``to_svg(collapse=False)`` raised a bare MemoryError. Now a text table shows the
first and last rows and columns of a long axis (every shown cell is the
layout's value), ``full=True`` prints everything up to ``TEXT_FULL_LIMIT``
cells, and every operation that visits each element refuses above its limit
with a SizeLimitError naming the operation, the operand and the limit.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

import cute_py
from cute_py import Layout, SizeLimitError, parse
from cute_py.arch.sm90.requests import ANALYSIS_LIMIT
from cute_py.viz import (
    bank_conflicts, bank_map, coalescing, compare_swizzle, print_layout, suggest_swizzle, to_html, to_latex,
    to_svg, to_text,
)
from cute_py.viz.svg import SVG_CELL_LIMIT
from cute_py.viz.text import TEXT_EDGE, TEXT_FULL_LIMIT, TEXT_MAX_AXIS

ROOT = Path(__file__).resolve().parents[1]
HUGE = "(100000000,100000000):(1,100000000)"


def _cells(table: str) -> dict:
    """``{(m, n): text}`` of a print_layout table (elided or not), read back from its rows."""
    lines = table.splitlines()
    cols = lines[1].split()
    out = {}
    for line in lines[2:]:
        if "|" not in line:
            continue
        label, *cells = line.split("|")
        label = label.strip()
        if label == "...":
            continue
        for c, v in zip(cols, cells):
            if c != "...":
                out[int(label), int(c)] = v.strip()
    return out


def _timed(fn, seconds):
    start = time.perf_counter()
    out = fn()
    took = time.perf_counter() - start
    assert took < seconds, f"took {took:.2f} s (limit {seconds} s)"
    return out


# ---------------------------------------------------------------------------
# to_text


def test_huge_layout_prints_elided_within_a_second_and_little_memory():
    L = parse(HUGE)
    tracemalloc.start()
    try:
        text = _timed(lambda: to_text(L), 1.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"peak {peak} bytes"
    assert len(text) < 20_000
    lines = text.splitlines()
    assert lines[0] == HUGE
    assert lines[-1].startswith(f"rows {TEXT_EDGE}..{100000000 - TEXT_EDGE - 1} of 100000000 and columns "
                                f"{TEXT_EDGE}..{100000000 - TEXT_EDGE - 1} of 100000000 not shown")
    assert "full=True" in lines[-1] and str(TEXT_FULL_LIMIT) in lines[-1]
    cells = _cells(text)
    shown = list(range(TEXT_EDGE)) + list(range(100000000 - TEXT_EDGE, 100000000))
    assert set(cells) == {(m, n) for m in shown for n in shown}
    assert all(v == str(L(m, n)) for (m, n), v in cells.items())
    assert cells[99999999, 99999999] == "9999999999999999"
    assert any(line.lstrip().startswith("...") for line in lines)   # the elided row


def test_elided_cells_are_the_layouts_values_for_every_kind_of_layout():
    for text_in in ("Sw<3,3,3> o 0 o (100000,64):(64,1)",       # swizzled: drawn through its function
                    "(3,(1000,7)):(7000,(7,1))",                  # nested column mode
                    "(2,100,3):(1,2,200)",                        # rank 3: modes 1..2 folded into the columns
                    "5000:3",                                     # rank 1: one row
                    "(100000,100000):(0,0)"):                    # all strides 0
        L = parse(text_in)
        table = to_text(L)
        rows = cute_py.size(L[0]) if cute_py.rank(L) > 1 else 1
        cells = _cells(table)
        assert cells, text_in
        assert all(v == str(L(m + rows * n)) for (m, n), v in cells.items()), text_in
        assert "not shown" in table.splitlines()[-1], text_in


def test_tables_up_to_the_axis_limit_are_cutes_exactly():
    n = TEXT_MAX_AXIS
    full = to_text(Layout((n, 2)))
    assert "not shown" not in full and len(_cells(full)) == 2 * n
    # the CuTe format: "%2d  " row labels and one separator per row
    assert full.splitlines()[2 * n + 1] == f"{n - 1:2d}  | {n - 1:>3d} | {2 * n - 1:>3d} |"
    elided = to_text(Layout((n + 1, 2)))
    assert elided.splitlines()[-1].startswith(f"rows {TEXT_EDGE}..{n - TEXT_EDGE} of {n + 1} not shown")


def test_full_prints_every_cell_up_to_the_limit_and_refuses_above_it():
    L = Layout((300, 200), (200, 1))
    table = to_text(L, full=True)
    cells = _cells(table)
    assert len(cells) == 300 * 200 and cells[299, 199] == str(L(299, 199))
    with pytest.raises(SizeLimitError) as e:
        _timed(lambda: to_text(parse(HUGE), full=True), 1.0)
    err = e.value
    assert (err.op, err.operand, err.limit, err.size) == ("to_text", "layout", TEXT_FULL_LIMIT, 10 ** 16)
    assert str(TEXT_FULL_LIMIT) in str(err) and HUGE in str(err)
    assert isinstance(err, cute_py.LayoutError)


def test_print_layout_passes_full_through(capsys):
    print_layout(Layout((100, 2)))
    assert "not shown" in capsys.readouterr().out
    print_layout(Layout((100, 2)), full=True)
    assert "not shown" not in capsys.readouterr().out


def test_cli_show_of_a_huge_layout_prints_the_elided_table():
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "cute_py", "show", HUGE], cwd=ROOT, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert time.perf_counter() - start < 30
    assert r.stdout.splitlines()[0] == HUGE and "not shown" in r.stdout.splitlines()[-1]
    assert len(r.stdout) < 20_000


# ---------------------------------------------------------------------------
# pictures


def test_svg_and_html_of_a_huge_layout_draw_a_window():
    L = parse(HUGE)
    svg = _timed(lambda: to_svg(L), 2.0)
    assert svg.count('class="cell"') == 32 * 32
    assert _timed(lambda: to_html(L), 2.0).count('class="cell"') == 32 * 32


@pytest.mark.parametrize("call, op, operand, limit", [
    (lambda L: to_svg(L, collapse=False), "to_svg", "layout", SVG_CELL_LIMIT),
    (lambda L: to_svg(L, collapse=10 ** 6), "to_svg", "layout", SVG_CELL_LIMIT),
    (lambda L: to_svg(L, color="bank", dtype="bf16", collapse=False), "to_svg", "layout", SVG_CELL_LIMIT),
    (lambda L: to_latex(L), "to_latex", "layout", TEXT_FULL_LIMIT),
    (lambda L: to_svg(Layout((32, 4)), tile=(10 ** 8, 10 ** 8)), "to_svg (TV)", "tile", TEXT_FULL_LIMIT),
    (lambda L: to_latex(Layout((32, 4)), tile=(10 ** 8, 10 ** 8)), "to_latex", "tile", TEXT_FULL_LIMIT),
    (lambda L: to_svg(Layout((10 ** 8, 4)), tile=(128, 4)), "to_svg (TV)", "TV layout", TEXT_FULL_LIMIT),
])
def test_pictures_of_everything_refuse_above_their_limit(call, op, operand, limit):
    with pytest.raises(SizeLimitError) as e:
        _timed(lambda: call(parse(HUGE)), 1.0)
    assert (e.value.op, e.value.operand, e.value.limit) == (op, operand, limit)
    assert str(e.value).startswith(f"{op}: {operand} is too large") and str(limit) in str(e.value)


def test_svg_collapse_false_still_draws_everything_below_the_limit():
    assert to_svg(Layout((512, 512)), collapse=False).count('class="cell"') == 512 * 512 == SVG_CELL_LIMIT


# ---------------------------------------------------------------------------
# analyses


@pytest.mark.parametrize("call, op, operand", [
    (lambda L: bank_map(L, "bf16"), "bank_map", "smem_layout"),
    (lambda L: bank_conflicts(L, "vec128", "bf16"), "bank_conflicts", "smem_layout"),
    (lambda L: bank_conflicts(L, "row128", "bf16"), "bank_conflicts", "smem_layout"),
    (lambda L: bank_conflicts(L, Layout((32, 8), (1, 64)), "bf16"), "bank_conflicts", "smem_layout"),
    (lambda L: bank_conflicts(cute_py.composition(cute_py.Swizzle(3, 3, 3), L), "vec128", "bf16"),
     "bank_conflicts", "smem_layout"),
    (lambda L: compare_swizzle(L, (3, 3, 3), "vec128", "bf16"), "bank_conflicts", "smem_layout"),
    (lambda L: coalescing(Layout((32, 4)), L, "f32"), "coalescing", "gmem_layout"),
    (lambda L: suggest_swizzle("bf16", 10 ** 9), "bank_conflicts", "smem_layout"),
    # a huge access over a small layout
    (lambda L: bank_conflicts(Layout(64), Layout((10 ** 8, 10 ** 8), (0, 0)), "f32"), "bank_conflicts", "access"),
    (lambda L: coalescing(Layout((10 ** 8, 10 ** 8), (0, 0)), Layout(64), "f32"), "coalescing", "access"),
])
def test_analyses_refuse_huge_operands_at_once(call, op, operand):
    with pytest.raises(SizeLimitError) as e:
        _timed(lambda: call(parse(HUGE)), 1.0)
    assert (e.value.op, e.value.operand, e.value.limit) == (op, operand, ANALYSIS_LIMIT)
    assert re.match(rf"{re.escape(op)}: {operand} is too large: \d+ elements > limit {ANALYSIS_LIMIT}", str(e.value))


def test_analyses_work_up_to_their_limit():
    L = Layout((512, 512), (512, 1))                    # exactly ANALYSIS_LIMIT elements
    assert cute_py.size(L) == ANALYSIS_LIMIT
    assert bank_conflicts(L, "row128", "bf16").conflict_free
    m = bank_map(L, "bf16")
    assert len(m) == ANALYSIS_LIMIT
    text = m.to_text()
    assert len(text.splitlines()) == 2 + 2 * TEXT_EDGE + 1 + 1 and "not shown" in text.splitlines()[-1]
    assert len(m.to_text(full=True).splitlines()) == 2 + 512


def test_bank_map_text_elides_with_the_right_banks():
    m = bank_map("(128,4):(4,1)", "f32")
    rows = {int(line.split("|")[0]): line.split("|")[1].split()
            for line in m.to_text().splitlines()[2:] if "|" in line and line.split("|")[0].strip() != "..."}
    assert sorted(rows) == list(range(8)) + list(range(120, 128))
    assert all(rows[r] == [str((4 * r + c) % 32) for c in range(4)] for r in rows)
