"""The explorer's Python side: the scene against the API it reads, the widget's round trip, the page, the CLI.

Every cell fact is checked against the function that defines it (``layout(i)``, ``idx2crd``,
:func:`cute_py.viz.bank_map`, the TV layout of the access, ``tv_owner``); the reports and side panels against
:func:`~cute_py.viz.bank_conflicts`, :func:`~cute_py.viz.coalescing`, ``make_gmma_desc`` and ``make_tma_params``.
tests/test_explore_browser.py drives the same front end in Chromium.
"""

import json
import re
import subprocess
import sys

import pytest

import cute_py as cp
from cute_py.arch.sm90.synth_access import named_access
from cute_py.arch.sm90 import make_gmma_desc, make_tma_params, smem_atom, tile_smem
from cute_py.layouts import int_tuple as it
from cute_py.viz import bank_conflicts, bank_map, coalescing, explore, explore_html
from cute_py.viz._grid import tv_owner
from cute_py.viz.explore_scene import scene, shown
from cute_py.viz.explorer import _dtype_bits
from test_cli_commands import fails, run_cli

anywidget = pytest.importorskip("anywidget", reason="the explore extra (anywidget) is not installed")

LAYOUTS = ["(4,8):(8,1)", "Sw<3,3,3> o 0 o (8,64):(64,1)", "(2,(3,4)):(12,(1,3))", "(4,3,2):(1,8,4)", "24:2",
           "Sw<2,1,4> o 3 o (16,16):(1,16)", "Sw<2,2,-2> o 0 o (8,16):(16,1)"]


def cells(sc, p=0):
    return sc["panels"][p]["cells"]


@pytest.mark.parametrize("text", LAYOUTS)
@pytest.mark.parametrize("dtype", ["bf16", "f32"])
def test_layout_cells_are_the_layouts_facts(text, dtype):
    lay = cp.parse(text)
    sc = scene(lay, dtype=dtype)
    banks = bank_map(lay, dtype)
    pn = sc["panels"][0]
    assert len(cells(sc)) == pn["rows"] * pn["cols"] == cp.size(lay)
    inner = lay.inner if isinstance(lay, cp.ComposedLayout) else lay
    pre = lay.offset if isinstance(lay, cp.ComposedLayout) else 0
    for c in cells(sc):
        i = c["i"]
        assert i == c["m"] + pn["rows"] * c["n"]
        assert c["crd"] == it.to_str(it.idx2crd(i, lay.shape))
        assert c["swz"] == lay(i) == banks[i].offset
        assert c["off"] == pre + inner(i)
        assert c["bank"] == banks[i].bank


@pytest.mark.parametrize("text", ["(4,4):(-4,1)", "8:-1", "Sw<3,3,3> o -8 o (4,8):(8,1)"])
def test_negative_offsets_have_no_bank_as_bank_map_has_none(text):
    lay = cp.parse(text)
    sc = scene(lay, view="banks", access="row128")
    with pytest.raises(cp.LayoutError, match="non-negative integer offsets"):
        bank_map(lay, "bf16")
    assert "non-negative" in sc["report_error"]
    assert any(c["swz"] < 0 for c in cells(sc)) and all(c["swz"] == lay(c["i"]) for c in cells(sc))
    for c in cells(sc):
        assert ("bank" in c) == (c["swz"] >= 0)
        if c["swz"] >= 0:
            assert c["bank"] == bank_map(cp.Layout(2, c["swz"]), "bf16")[1].bank        # element 1 is at swz


def test_large_layouts_are_elided_as_the_text_views_are():
    sc = scene(cp.Layout((256, 300), (300, 1)), view="banks", access="row128")
    pn = sc["panels"][0]
    assert pn["ms"] == list(range(8)) + [None] + list(range(248, 256)) == shown(256)
    assert pn["ns"][-1] == 299 and len(cells(sc)) == 16 * 16
    assert {(c["m"], c["n"]) for c in cells(sc)} == {(m, n) for m in pn["ms"] if m is not None
                                                      for n in pn["ns"] if n is not None}
    assert sc["report"]["count"] == len(bank_conflicts(cp.Layout((256, 300), (300, 1)), "row128", "bf16").requests)
    assert len(json.dumps(sc)) < 200_000


@pytest.mark.parametrize("layout, access, ways", [("(64,64):(64,1)", "ldmatrix", 8), ("(64,64):(64,1)", "(32,8):(1,64)", 8),
                                                 ("Sw<3,3,3> o 0 o (64,64):(64,1)", "ldmatrix", 1),
                                                 ("(32,32):(32,1)", "vec32", 32), ("(64,64):(64,1)", "wgmma", 8),
                                                 ("Sw<3,3,3> o 0 o (64,64):(64,1)", "wgmma", 1)])
def test_banks_view_is_the_bank_conflict_report(layout, access, ways):
    """wgmma: the core-matrix reads of swizzle synthesis's model (synth_access.named_access)."""
    dtype = "f32" if access == "vec32" else "bf16"
    lay = cp.parse(layout)
    sc = scene(lay, view="banks", access=access, dtype=dtype)
    acc = sc["report"]["access"]
    ref = bank_conflicts(lay, cp.parse(access) if ":" in access else _ldmatrix(dtype) if access == "ldmatrix"
                         else named_access("wgmma", (64, 64), cp.dtype(dtype), "read").access
                         if access == "wgmma" else access, dtype)
    assert sc["report"]["summary"] == ref.summary() and ref.max_ways == ways and acc == ref.access
    assert [r["wavefronts"] for r in sc["report"]["requests"]] == list(ref.wavefronts[:64])
    words = {(c.request, a) for c in ref.conflicts for a, _ in c.words}
    bits = cp.dtype(dtype).bits
    for c in cells(sc):
        touched = "req" in c                              # (32,8):(1,64) reads rows 0..31, columns 0..7 only
        assert bool(c.get("cf")) == (touched and (c["req"], c["swz"] * bits // 32 * 4) in words)
    assert any(c.get("cf") for c in cells(sc)) == (ways > 1)


def test_wgmma_access_needs_a_2d_tile():
    sc = scene(cp.parse("64:1"), view="banks", access="wgmma", dtype="bf16")
    assert sc["report_error"] == "explore: access 'wgmma' reads a 2-D tile (rows, columns); the layout's shape is 64"


def _ldmatrix(dtype):
    mma = cp.make_tiled_mma(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    return cp.make_tiled_copy_A(cp.make_copy_atom("SM75_U32x4_LDSM_N", dtype), mma)


def test_threads_view_is_the_access_tv_layout():
    tv = cp.Layout((64, (8, 8)), (1, (64, 512)))       # 2 warps; lane l reads 8 bf16 of row l, 8 column blocks
    sc = scene(cp.parse("(64,64):(64,1)"), view="threads", access=str(tv))
    for c in cells(sc):
        assert tv(c["thr"] + 64 * c["val"]) == c["i"]
        assert sc["report"]["labels"][c["req"]] == f"warp {c['thr'] // 32}, access {c['val'] // 8}"
        assert c["lane"] == c["thr"] % 32


def test_coalescing_view_is_the_coalescing_report():
    lay, tv = cp.parse("(64,64):(64,1)"), cp.Layout((32, 8), (1, 64))
    sc = scene(lay, view="coalescing", access=str(tv), dtype="f32")
    ref = coalescing(tv, lay, "f32")
    assert sc["report"]["summary"] == ref.summary()
    assert [r["sectors"] for r in sc["report"]["requests"]] == list(ref.sectors)


def test_an_access_that_does_not_fit_is_a_line_in_the_scene():
    sc = scene(cp.parse("(64,64):(64,1)"), view="banks", access="vec128")
    assert sc["report"] is None and sc["report_error"].startswith("explore: not a vector access")
    assert "\n" not in sc["report_error"] and all("req" not in c for c in cells(sc))
    assert "ldmatrix" in scene(cp.Layout((8, 8)), view="banks", access="ldmatrix", dtype="f32")["report_error"]


def test_smem_tile_facts_are_the_descriptor_and_tma_box():
    tile = tile_smem(smem_atom("K", 128, "bf16"), 64, 64)
    facts = {f["title"]: f for f in scene(tile)["facts"]}
    assert facts["wgmma descriptor, K-major"]["text"] == make_gmma_desc(tile, "bf16", "K").describe()
    assert facts["TMA box, gmem (M,K):(K,1)"]["text"] == make_tma_params(cp.parse("(M,K):(K,1)"), tile, "bf16").describe()
    assert "wgmma descriptor, MN-major" in facts["refused"]["text"]
    plain = {f["title"] for f in scene(cp.parse("(64,64):(64,1)"))["facts"] if f["ok"]}
    assert plain == {"TMA box, gmem (M,K):(K,1)"}                # no descriptor: not a canonical GMMA layout
    assert scene(cp.Layout((4, 3, 2)))["facts"] == []


def test_a_layout_under_a_layout_has_no_smem_facts_and_still_explores():
    lay = cp.parse("(4,8):(8,1) o 0 o (4,4):(1,4)")            # no swizzle outside: no tile TMA or wgmma reads
    sc = scene(lay, view="banks")
    assert sc["facts"] == [] and [c["swz"] for c in cells(sc)] == [lay(c["i"]) for c in cells(sc)]
    assert explore(lay).error == ""


def test_tv_mma_and_copy_cells_are_the_owners():
    tv = cp.parse("((4,8),(2,2)):((32,1),(16,8))")
    sc = scene(tv, tile=(16, 8))
    owner = tv_owner(tv, 16, 8)
    assert all((c["t"], c["v"]) == owner[c["i"]] for c in cells(sc)) and len(cells(sc)) == 128
    mma = cp.make_tiled_mma(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"), cp.Layout((2, 2, 1)))
    sc = scene(mma)
    assert [p["name"] for p in sc["panels"]] == ["C", "A", "B"]
    ownerA = tv_owner(mma.get_layoutA_TV(), 32, 16)
    assert all((c["t"], c["v"]) == ownerA[c["m"] + 32 * c["n"]] for c in cells(sc, 1))
    sc = scene(cp.make_copy_atom("SM75_U32x4_LDSM_N", "bf16"))
    assert [p["name"] for p in sc["panels"]] == ["S", "D"] and sc["views"] == ["threads"]


def test_explore_options_are_checked():
    lay = cp.parse("(4,8):(8,1)")
    with pytest.raises(ValueError, match="explore: view must be one of offsets, threads, banks, coalescing, got .bank."):
        explore(lay, view="bank")
    with pytest.raises(TypeError, match="explore: access must be a str"):
        explore(lay, access=128)
    with pytest.raises(ValueError, match="view 'banks' is not one of threads for an MMA"):
        explore(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"), view="banks")
    with pytest.raises(TypeError, match="bare swizzle has no tile"):
        explore(cp.Swizzle(3, 3, 3))
    with pytest.raises(cp.LayoutError, match="unknown element type"):
        explore(lay, dtype="bf17")
    with pytest.raises(TypeError, match="explore_html: access must be a str .*got NoneType"):
        explore_html(lay, view="banks", access=None)
    with pytest.raises(ValueError, match="explore: an MMA atom or tiling names its own element types; dtype='f32'"):
        explore(cp.atoms.get("SM90_64x64x16_F32BF16BF16_SS"), dtype="f32")


def test_widget_recomputes_on_input_and_reports_errors_inline():
    w = explore(cp.parse("(8,64):(64,1)"), view="banks", access="row128")
    assert isinstance(w, anywidget.AnyWidget) and w.error == "" and "export default" in w._esm
    w.text = "Sw<3,3,3> o 0 o (8,64):(64,1)"
    assert w.error == "" and cells(w.scene)[1]["swz"] == cp.parse(w.text)(1)
    before = w.scene
    w.text = "(4,8):(8,1"
    assert w.error == "parse: expected ')', found end of input at position 10" and w.scene is before
    w.text = "(8,64):(64,1)"
    w.swizzle = "Sw<3,3,3>"
    assert w.error == "" and w.scene["title"] == "Sw<3,3,3> o 0 o (8,64):(64,1)"
    w.access = "vec128"
    assert w.error == "" and w.scene["report_error"].startswith("explore: not a vector access")
    w.view = "sideways"
    assert w.error.startswith("explore: view 'sideways'")


def test_widget_of_an_atom_retypes_atoms_and_a_tiling_is_read_only():
    w = explore(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    w.text = "SM80_16x8x8_F32F16F16F32_TN"
    assert w.error == "" and w.scene["title"].endswith("16\u00d78\u00d78")
    w.text = "SM80_16x8x9"
    assert w.error.startswith("atoms.get: unknown atom name")
    tiled = explore(cp.make_tiled_mma(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"), cp.Layout((2, 1, 1))))
    assert tiled.scene["editable"] is False
    tiled.text = "(4,8):(8,1)"
    assert tiled.error.startswith("this tiling is built in Python")


def test_tensor_cells_hold_its_elements():
    import numpy as np

    t = cp.Tensor(np.arange(32, dtype=np.float32) * 2, cp.parse("(4,8):(8,1)"))
    w = explore(t, view="banks", access="row128")
    assert [c["elem"] for c in cells(w.scene)[:3]] == ["0", "16", "32"] and w.scene["dtype"] == "f32"
    w.text = "(4,8):(1,4)"
    assert w.error == "" and cells(w.scene)[1]["elem"] == "2"
    w.dtype = "bf16"
    assert w.error == "explore: the tensor's elements are f32; dtype bf16 contradicts them"
    with pytest.raises(ValueError, match="contradicts"):
        explore(t, dtype="f16")


@pytest.mark.parametrize("text, swizzle, view, access", [
    ("Sw<3,3,3> o 0 o (64,64):(64,1)", None, "banks", "ldmatrix"),
    ("Sw<3,3,3> o 0 o (64,64):(64,1)", None, "coalescing", "(32,8):(1,64)"),
    ("Sw<3,3,3> o 0 o (64,64):(64,1)", None, "offsets", "row128"),
    ("(64,64):(64,1)", "Sw<3,3,3>", "banks", "ldmatrix"),            # the swizzle picker's choice is in the code
    ("Sw<2,1,4> o 0 o (64,64):(64,1)", "Sw<3,3,3>", "offsets", "row128"),
])
def test_exported_python_rebuilds_the_view(text, swizzle, view, access, capsys):
    w = explore(cp.parse(text), view=view, access=access, swizzle=swizzle)
    shown_lay = cp.parse("Sw<3,3,3> o 0 o (64,64):(64,1)")
    assert w.scene["title"] == str(shown_lay)
    ns = {}
    exec(w.scene["python"], ns)                       # noqa: S102 - the code the Python button shows
    ref = scene(shown_lay, view=view, access=access)
    assert ns["obj"] == shown_lay
    assert (ref["report"]["summary"] if ref["report"] else str(shown_lay)) in capsys.readouterr().out


def test_exported_python_rebuilds_a_tensor_with_its_offset_and_dtype():
    import numpy as np

    engine = np.arange(64, dtype=np.uint16)
    t = cp.Tensor(engine, cp.parse("(4,8):(8,1)"), 3, dtype="bf16")
    ns = {"engine": engine}
    exec(explore(t).scene["python"], ns)              # noqa: S102
    obj = ns["obj"]
    assert (obj.layout, obj.offset, obj.dtype) == (t.layout, 3, t.dtype)


def test_import_cute_py_does_not_load_anywidget():
    code = "import sys, cute_py, cute_py.viz; print(sorted(m for m in ('anywidget', 'traitlets', 'ipywidgets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def test_explore_without_anywidget_says_which_extra(monkeypatch):
    from cute_py.viz import explorer

    explorer._widget_class.cache_clear()
    monkeypatch.setitem(sys.modules, "anywidget", None)
    try:
        with pytest.raises(ImportError, match=re.escape('pip install "cute-py[explore]"')):
            explore(cp.Layout(4))
        assert explore_html(cp.Layout(4)).startswith("<!DOCTYPE html>")       # the page needs no anywidget
    finally:
        explorer._widget_class.cache_clear()


def test_page_is_offline_and_holds_the_scene():
    lay = cp.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    page = explore_html(lay, view="banks", access="row128")
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:|import\s*\(?\s*["']https?:|@import""", page)
    state = json.loads(re.search(r'<script type="application/json" id="cpx-state">(.*?)</script>', page, re.S)[1])
    module = json.loads(re.search(r'<script type="application/json" id="cpx-module">(.*?)</script>', page, re.S)[1])
    want = scene(lay, view="banks", access="row128") | {"editable": True, "dtypes": _dtype_bits("bf16")}
    assert state["scene"] == json.loads(json.dumps(want))          # every key, every value
    assert state["text"] == str(lay) and "export default { render }" in module and "</script" not in module


def test_cli_writes_the_page(tmp_path):
    out = tmp_path / "page.html"
    r = run_cli("explore", "Sw<3,3,3> o 0 o (8,64):(64,1)", "--view", "banks", "--dtype", "f16", "-o", str(out))
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    state = json.loads(re.search(r'id="cpx-state">(.*?)</script>', out.read_text(), re.S)[1])
    assert state["view"] == "banks" and state["dtype"] == "f16" and state["scene"]["report"]["summary"]
    tv = tmp_path / "tv.html"
    assert run_cli("explore", "((4,8),(2,2)):((32,1),(16,8))", "--tile", "16,8", "-o", str(tv)).returncode == 0
    assert '"kind": "tv"' in tv.read_text()
    assert run_cli("explore", "SM75_U32x4_LDSM_N", "--dtype", "f16", "-o", str(tv)).returncode == 0


@pytest.mark.parametrize("args, message", [
    (["(4,8):(8,1)", "-o", "page.svg"], "page.svg: the explorer page is HTML; name the file .html"),
    (["(4,8):(8,1", "-o", "p.html"], "malformed LAYOUT '(4,8):(8,1' at position 10"),
    (["(64,64):(64,1)", "-o", "p.html", "--view", "banks", "--access", "vec128"], "--access vec128: explore: not a vector"),
    (["(64,64):(64,1)", "-o", "p.html", "--access", "vec128"], "with the offsets view it would change nothing"),
    (["(4,8)", "--tile", "4,8", "--view", "banks", "-o", "p.html"], "--view would change nothing"),
    (["Sw<3,3,3>", "-o", "p.html"], "a bare swizzle has no tile"),
    (["SM80_16x8x16_F32BF16BF16F32_TN", "--view", "banks", "-o", "p.html"], "view 'banks' is not one of threads"),
    (["(4,8)", "--dtype", "bf17", "-o", "p.html"], "unknown --dtype 'bf17'"),
    (["(4,8)", "--swizzle", "3,3", "-o", "p.html"], "--swizzle"),
    (["(4,8)"], "the following arguments are required: -o/--output"),
    (["SM90_64x64x16_F32BF16BF16_SS", "--dtype", "f32", "-o", "p.html"],
     "--dtype f32: the MMA atom SM90_64x64x16_F32BF16BF16_SS names its own element types"),
    (["SM75_U32x4_LDSM_N", "--view", "threads", "--access", "vec32", "-o", "p.html"],
     "--access vec32: an atom's picture shows its own threads"),
    (["(4,8)", "--tile", "4,8", "--dtype", "f32", "-o", "p.html"], "--dtype would change nothing"),
])
def test_cli_refuses_bad_input_in_one_line(tmp_path, args, message):
    args = [str(tmp_path / a) if a.endswith((".html", ".svg")) else a for a in args]
    assert message in fails(2, "explore", *args)
    assert not list(tmp_path.iterdir())
