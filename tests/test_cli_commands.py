"""The cute-py show / mma / explain commands, end to end, error paths included.

The commands run in this process through :func:`cute_py.cli.main` (what ``python -m cute_py`` and the ``cute-py``
script call), with stdout and stderr captured: a process per command line cost about a third of a second of
Python start-up and import each. An exception that escapes ``main`` fails the test as a traceback on stderr would;
tests/test_cli_errors.py runs the real process (the entry points, exit statuses, a closed pipe).
"""

import contextlib
import io
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import cute_py as cp
from cute_py.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args):
    """``cute-py ARGS`` from the repository root: (returncode, stdout, stderr) as a CompletedProcess."""
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:                      # argparse's usage errors and --help
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(["cute-py", *args], code, out.getvalue(), err.getvalue())


def ok(*args):
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout


def fails(code, *args):
    r = run_cli(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr  # one line, no traceback
    return lines[0]


# ---------------------------------------------------------------------------
# show


def test_show_text_is_print_layout():
    out = ok("show", "(4,8):(8,1)")
    assert out == cp.viz.to_text(cp.parse("(4,8):(8,1)"))
    assert out.splitlines()[0] == "(4,8):(8,1)"
    assert "| 31 |" in out


def test_show_swizzle_option():
    out = ok("show", "(8,8):(8,1)", "--swizzle", "1,0,1")
    assert out.splitlines()[0] == "Sw<1,0,1> o 0 o (8,8):(8,1)"
    assert " 0  |  0 |  1 |  3 |  2 |" in out
    assert ok("show", "Sw<1,0,1> o 0 o (8,8):(8,1)") == out


def test_show_svg_parses_and_file_output(tmp_path):
    root = ET.fromstring(ok("show", "(4,8):(8,1)", "--format", "svg"))
    ns = "{http://www.w3.org/2000/svg}"
    cells = [r for r in root.iter(ns + "rect") if r.get("class") == "cell"]
    assert len(cells) == 32
    target = tmp_path / "l.svg"
    assert ok("show", "(4,8):(8,1)", "--format", "svg", "-o", str(target)) == ""
    ET.parse(target)
    assert "\\documentclass" in ok("show", "(2,2):(1,2)", "--format", "latex")
    assert "<figure" in ok("show", "(2,2):(1,2)", "--format", "html")


def test_show_banks_and_access():
    out = ok("show", "(8,64):(64,1)", "--banks", "--dtype", "bf16")
    assert "banks of (8,64):(64,1) (bf16" in out
    bank_rows = out.split("banks of")[1].splitlines()
    row1 = bank_rows[3].split("|")[1].split()
    assert row1[:4] == ["0", "0", "1", "1"]  # row 1 starts at byte 128: bank 0 again
    out = ok("show", "(64,64):(64,1)", "--access", "(32,8):(1,64)", "--dtype", "bf16")
    assert "8-way conflicts" in out
    out = ok("show", "(64,64):(64,1)", "--swizzle", "3,3,3", "--access", "(32,8):(1,64)")
    assert "conflict-free" in out
    svg = ok("show", "(8,8):(8,1)", "--banks", "--dtype", "f32", "--format", "svg")
    ET.fromstring(svg)


@pytest.mark.parametrize("text,pos", [("(4,2]:(1,4)", 4), ("(4,8):(8,1", 10), ("(4,8):(8;1)", 8), ("4:$", 2)])
def test_show_malformed_layout_points_at_the_character(text, pos):
    line = fails(2, "show", text)
    assert f"at position {pos}" in line
    with pytest.raises(cp.ParseError) as err:
        cp.parse(text)
    assert err.value.pos == pos
    assert repr(text[:pos]) + " >>> " + repr(text[pos:]) in line


def test_show_other_errors():
    assert "--swizzle must be 3" in fails(2, "show", "(8,8):(8,1)", "--swizzle", "3,3")
    assert "unknown --dtype" in fails(2, "show", "(8,8):(8,1)", "--banks", "--dtype", "f13")
    assert "Swizzle" in fails(2, "show", "(8,8):(8,1)", "--swizzle", "3,3,1")  # |S| < B: a LayoutError, 2
    r = run_cli("show")
    assert r.returncode == 2 and "LAYOUT" in r.stderr  # argparse usage error


# ---------------------------------------------------------------------------
# mma


def test_mma_atom_and_tiled():
    out = ok("mma", "SM80_16x8x16_F32BF16BF16F32_TN")
    assert out.startswith("MMA_Atom SM80_16x8x16_F32BF16BF16F32_TN")
    assert "LayoutC_TV: ((4,8),(2,2)):((32,1),(16,8))" in out
    out = ok("mma", "SM90_64x128x16_F32BF16BF16_SS", "--tiled", "2,1,1")
    mma = cp.make_tiled_mma(cp.atoms.get("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))
    assert "ThrLayoutVMNK:  (128,2,1,1):(1,128,0,0)" in out
    assert f"LayoutC_TV: {mma.get_layoutC_TV()}" in out
    assert f"LayoutA_TV: {mma.get_layoutA_TV()}" in out
    ET.fromstring(ok("mma", "SM80_16x8x16_F32BF16BF16F32_TN", "--format", "svg"))


def test_mma_unknown_atom():
    line = fails(2, "mma", "SM80_16x8x16_F32BF16BF16_TN")
    assert "unknown MMA atom" in line and "did you mean SM80_16x8x16_F32BF16BF16F32_TN" in line
    assert "not an MMA atom" in fails(2, "mma", "SM75_U32x4_LDSM_N")
    assert "--tiled must be 3" in fails(2, "mma", "SM80_16x8x16_F32BF16BF16F32_TN", "--tiled", "2,x,1")


# ---------------------------------------------------------------------------
# explain


def test_explain_commands():
    out = ok("explain", "composition", "(4,3):(3,1)", "6:2")
    assert out == str(cp.explain("composition", "(4,3):(3,1)", "6:2")) + "\n"
    assert out.rstrip().endswith("result = (2,3):(6,1)")
    out = ok("explain", "complement", "4:2", "24")
    assert out.rstrip().endswith("result = (2,3):(1,8)")
    out = ok("explain", "zipped_divide", "(12,32):(32,1)", "<4:1,8:1>")
    assert out.rstrip().endswith(str(cp.zipped_divide(cp.parse("(12,32):(32,1)"), (cp.Layout(4), cp.Layout(8)))))
    assert ok("explain", "logical_divide", "(12,32):(32,1)", "4:1", "8:1") == \
        ok("explain", "logical_divide", "(12,32):(32,1)", "<4:1,8:1>")


def test_explain_errors():
    assert "unknown operation 'frobnicate'" in fails(2, "explain", "frobnicate", "4:1")
    line = fails(2, "explain", "composition", "(4,3]:(3,1)", "6:2")
    assert "ARG 1" in line and "at position 4" in line
    line = fails(2, "explain", "logical_divide", "(12,32):(32,1)", "<4:1,8:1x>")
    assert "ARG 2" in line and "at position 8" in line and "'<4:1,8:1' >>> 'x>'" in line
    assert "takes 1 argument" in fails(2, "explain", "right_inverse", "4:1", "4:1")
    line = fails(2, "explain", "composition", "(6,4):(1,10)", "4:4")  # the algebra rejects it: an input error, 2
    assert "stride divisibility condition" in line


def test_tour_still_default():
    assert "composition((4,3):(3,1), 6:2) = (2,3):(6,1)" in ok()


def test_docstring_examples():
    import doctest

    import cute_py.cli
    import cute_py.cli_errors

    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in (cute_py.cli, cute_py.cli_errors)]
    assert sum(r.attempted for r in results) >= 4 and sum(r.failed for r in results) == 0


def test_show_elides_large_layouts_unless_full():
    """A 100x100 table is elided (first and last 8 rows and columns); --full prints all 100 rows."""
    elided = ok("show", "(100,100):(1,100)")
    assert "not shown" in elided and len(elided.splitlines()) < 50
    full = ok("show", "(100,100):(1,100)", "--full")
    assert "not shown" not in full and "9999" in full and "4950" in full
    assert len(full.splitlines()) > 200
