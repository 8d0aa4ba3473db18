"""The explorer in a real browser: headless Chromium (Debian's package) driven by Playwright.

Three ways the front end (``cute_py/viz/static/explore.js``) runs, each checked against the Python API:

* the standalone page of :func:`cute_py.viz.explore_html` (``file://``), where retyped layouts are evaluated by
  the page's own evaluator: every cell it computes is compared with Python's, and hovering a cell shows them;
* the ES module under a model with Jupyter's interface (get/set/on/save_changes) whose ``save_changes`` sends
  the inputs to a real :func:`cute_py.viz.explore` widget in this process (as the kernel's comm would);
* the widget state a notebook executed by nbclient stores (``store_widget_state``): what a saved notebook
  renders, fed to the module as JupyterLab's widget manager would (its ``_esm`` and its state).

Playwright launches the system's Chromium (``executable_path``), so no ``playwright install`` is needed; the
tests skip, saying why, when Playwright or Chromium is missing (.ci/run installs Debian's chromium).
With ``CUTE_PY_SCREENSHOTS=1`` they also write the guide's screenshots (docs/_static/explore_*.png).
"""

import json
import os
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import cute_py as cp
from cute_py.layouts import int_tuple as it
from cute_py.viz import bank_conflicts, bank_map, explore_html
from cute_py.viz._grid import tv_owner
from cute_py.viz.explore_scene import scene

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = os.environ.get("CUTE_PY_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium, or set "
                                                         "CUTE_PY_CHROMIUM to a Chromium binary)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "docs" / "_static"
CELL_KEYS = ("m", "n", "i", "crd", "off", "swz", "bank")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page(viewport={"width": 1100, "height": 700}, accept_downloads=True)
    pg.set_default_timeout(10_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield pg
    pg.close()
    assert errors == []


def shot(pg, name):
    if os.environ.get("CUTE_PY_SCREENSHOTS"):
        pg.screenshot(path=str(SHOTS / name), clip={"x": 0, "y": 0, "width": 1100, "height": 520})


def open_page(pg, tmp_path, obj, **options):
    path = tmp_path / "page.html"
    path.write_text(explore_html(obj, **options), encoding="utf-8")
    pg.goto(path.as_uri())
    pg.wait_for_selector("rect.cpx-c")


def count(pg, selector):
    return pg.evaluate("q => document.querySelectorAll(q).length", selector)


def retype(pg, text):
    pg.fill(".cpx-text", text)
    pg.press(".cpx-text", "Enter")


def js_cells(pg, p=0):
    return pg.evaluate(f"window.cpxModel.get('scene').panels[{p}].cells")


def hover_facts(pg, m, n, p=0):
    pg.hover(f'rect.cpx-c[data-p="{p}"][data-m="{m}"][data-n="{n}"]')
    return pg.evaluate("() => Object.fromEntries([...document.querySelectorAll('.cpx-cell dd[data-k]')]"
                       ".map((d) => [d.dataset.k, d.textContent]))")


RETYPED = ["Sw<3,3,3> o 0 o (8,64):(64,1)", "(2,(3,4)):(12,(1,3))", "(4,3,2):(1,8,4)", "24:2", "(4,8)",
           "Sw<2,1,4> o 3 o (16,16):(1,16)", "(128,80):(80,1)", "(4,4):(-4,1)", "8:-1", "Sw<3,3,3> o -8 o (4,8):(8,1)",
           "Sw<2,2,-2> o 0 o (8,16):(16,1)", "Sw<3,3,3>o 0 o(8,64):(64,1)",
           "Sw<3,4,3> o 0 o ((8,2),(4,16)):((64,4096),(16,1))"]


def test_page_evaluates_retyped_layouts_as_python_does(page, tmp_path):
    open_page(page, tmp_path, cp.parse("(4,8):(8,1)"), dtype="bf16", view="banks")      # banks: cells read bank
    for text in RETYPED:
        retype(page, text)
        want = scene(cp.parse(text) if ":" in text else cp.Layout(cp.parse(text)), dtype="bf16")
        page.wait_for_function("t => window.cpxModel.get('scene').text === t", arg=text)
        got = js_cells(page)
        assert [{k: c.get(k) for k in CELL_KEYS} for c in got] == [{k: c.get(k) for k in CELL_KEYS}
                                                                   for c in want["panels"][0]["cells"]]
        assert page.inner_text(".cpx-error") == "" and count(page, "rect.cpx-c") == len(got)
    lay = cp.parse(RETYPED[-1])
    facts = hover_facts(page, 9, 50)
    i = 9 + 16 * 50
    assert facts == {"crd": it.to_str(it.idx2crd(i, lay.shape)), "mn": "(9,50)", "i": str(i),
                     "off": str(lay.inner(i)), "swz": str(lay(i)), "bank": str(bank_map(lay, "bf16")[i].bank)}
    shot(page, "explore_page.png")


def picked(pg, q=".cpx-swizzle"):
    return pg.evaluate("q => { const s = document.querySelector(q); return [s.value, s.selectedOptions[0].text]; }", q)


def test_page_dtype_and_swizzle_pickers(page, tmp_path):
    open_page(page, tmp_path, cp.parse("(8,64):(64,1)"), dtype="bf16")
    assert picked(page) == ["", "none"]
    page.select_option(".cpx-swizzle", label="128B")
    page.wait_for_function("window.cpxModel.get('scene').title.startsWith('Sw<3,3,3>')")
    lay = cp.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert [(c["swz"], c["bank"]) for c in js_cells(page)] == [(lay(c["i"]), bank_map(lay, "bf16")[c["i"]].bank)
                                                              for c in js_cells(page)]
    assert picked(page) == ["Sw<3,3,3>", "128B"]
    page.select_option(".cpx-dtype", "f32")            # 128B in f32 elements: Sw<3,2,3>, the width kept
    page.wait_for_function("window.cpxModel.get('scene').bits === 32")
    lay32 = cp.parse("Sw<3,2,3> o 0 o (8,64):(64,1)")
    banks = bank_map(lay32, "f32")
    assert window_model(page, "swizzle") == "Sw<3,2,3>" and picked(page) == ["Sw<3,2,3>", "128B"]
    assert [(c["swz"], c["bank"]) for c in js_cells(page)] == [(lay32(c["i"]), banks[c["i"]].bank) for c in js_cells(page)]


def test_page_swizzle_picker_shows_the_swizzle_it_was_given(page, tmp_path):
    for swizzle, dtype, shows in [("Sw<3,3,3>", "bf16", "128B"), ("Sw<1,2,3>", "f32", "32B"),
                                  ("Sw<2,1,4>", "bf16", "Sw<2,1,4>"), ("Sw<3,3,3>", "f32", "Sw<3,3,3>")]:
        open_page(page, tmp_path, cp.parse("(8,64):(64,1)"), dtype=dtype, swizzle=swizzle)
        assert picked(page) == [swizzle, shows], (swizzle, dtype)


def window_model(pg, key):
    return pg.evaluate("k => window.cpxModel.get(k)", key)


def test_page_retyped_tv_layout_owns_the_tile_as_python(page, tmp_path):
    open_page(page, tmp_path, cp.parse("((4,8),(2,2)):((32,1),(16,8))"), tile=(16, 8))
    text = "((4,8),(2,2)):((16,1),(8,64))"
    retype(page, text)
    page.wait_for_function("t => window.cpxModel.get('scene').text === t", arg=text)
    owner = tv_owner(cp.parse(text), 16, 8)
    got = js_cells(page)
    assert len(got) == 128 and all((c.get("t"), c.get("v")) == owner[c["i"]] for c in got)
    facts = hover_facts(page, 3, 5)
    assert (facts["t"], facts["v"]) == tuple(map(str, owner[3 + 16 * 5]))
    retype(page, "((4,8),(2,2)):((32,1),(16,9))")
    page.wait_for_function("document.querySelector('.cpx-error').textContent !== ''")
    assert "outside the 16x8 tile" in page.inner_text(".cpx-error")


@pytest.mark.parametrize("bad", ["(4,8):(8,1", "(4,2]:(1,4)", "Sw<3,3,3> o (8,64):(64,1)", "(4,8):(8,1)x"])
def test_page_shows_an_invalid_layout_inline_as_python_words_it(page, tmp_path, bad):
    open_page(page, tmp_path, cp.parse("(4,8):(8,1)"))
    retype(page, bad)
    page.wait_for_function("document.querySelector('.cpx-error').textContent !== ''")
    with pytest.raises(cp.ParseError) as e:
        cp.parse(bad)
    python = str(e.value).splitlines()[0]
    shown = page.inner_text(".cpx-error")
    assert shown.split(" at position")[0] == python.split(" at position")[0].replace("trailing text, found ", "")
    assert count(page, "rect.cpx-c") == 32          # the last good picture stays


def test_page_of_an_atom_shows_its_scene_and_says_retyping_needs_the_notebook(page, tmp_path):
    atom = cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN")
    open_page(page, tmp_path, atom)
    assert count(page, "rect.cpx-c") == 16 * 8 + 16 * 16 + 8 * 16
    owner = tv_owner(cp.make_tiled_mma(atom).get_layoutA_TV(), 16, 16)
    facts = hover_facts(page, 5, 9, p=1)
    assert (facts["t"], facts["v"]) == tuple(map(str, owner[5 + 16 * 9]))
    retype(page, "SM80_16x8x8_F32F16F16F32_TN")
    page.wait_for_function("document.querySelector('.cpx-error').textContent !== ''")
    assert "retyping it needs the notebook" in page.inner_text(".cpx-error")


HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><div id="root"></div>
<script type="module">
const state = JSON.parse(document.getElementById("state").textContent);
const src = JSON.parse(document.getElementById("module").textContent);
const mod = await import(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
const data = {...state}, handlers = {}, dirty = {};
const emit = (k) => (handlers["change:" + k] || []).forEach((cb) => cb());
window.model = {                                   // what anywidget gives render(): Backbone's get/set/on
  get: (k) => data[k],
  set: (k, v) => { data[k] = v; dirty[k] = v; emit(k); },
  on: (ev, cb) => { (handlers[ev] ||= []).push(cb); },
  off: (ev, cb) => { handlers[ev] = (handlers[ev] || []).filter((f) => f !== cb); },
  save_changes: async () => {
    if (!window.pySync) return;
    const sent = {...dirty}; for (const k in dirty) delete dirty[k];
    const back = JSON.parse(await window.pySync(JSON.stringify(sent)));   // the kernel: set traits, send changes
    for (const [k, v] of Object.entries(back)) { data[k] = v; emit(k); }
  },
};
mod.default.render({model: window.model, el: document.getElementById("root")});
window.rendered = true;
</script>
<script type="application/json" id="state">STATE</script><script type="application/json" id="module">MODULE</script>
</body></html>"""


def harness(pg, state, module, sync=None):
    if sync is not None:
        pg.expose_function("pySync", sync)
    html = HARNESS.replace("STATE", json.dumps(state).replace("</", "<\\/")).replace(
        "MODULE", json.dumps(module).replace("</", "<\\/"))
    pg.set_content(html)
    pg.wait_for_function("window.rendered === true")


def test_widget_module_with_a_jupyter_model_follows_python(page, tmp_path):
    w = cp.viz.explore(cp.parse("(64,64):(64,1)"), view="banks", access="ldmatrix")

    def sync(changes):                    # the comm: set the traits, send back what the observers changed (JSON)
        before = (w.scene, w.error)
        for k, v in json.loads(changes).items():
            setattr(w, k, v)
        out = {}
        if w.scene is not before[0]:
            out["scene"] = w.scene
        if w.error != before[1]:
            out["error"] = w.error
        return json.dumps(out)

    harness(page, {k: getattr(w, k) for k in ("text", "dtype", "view", "access", "swizzle", "scene", "error")},
            w._esm, sync)
    ref = bank_conflicts(cp.parse("(64,64):(64,1)"), _ldsm(), "bf16")
    assert ref.summary() in page.inner_text(".cpx-summary") and ref.max_ways == 8
    assert count(page, "rect.cpx-c.cf") == sum(1 for c in w.scene["panels"][0]["cells"] if c.get("cf"))
    hover_facts(page, 9, 1)
    shot(page, "explore_widget.png")
    page.select_option(".cpx-swizzle", label="128B")
    page.wait_for_function("document.querySelector('.cpx-summary').textContent.includes('conflict-free')")
    lay = cp.parse("Sw<3,3,3> o 0 o (64,64):(64,1)")
    assert w.swizzle == "Sw<3,3,3>" and count(page, "rect.cpx-c.cf") == 0
    facts = hover_facts(page, 17, 9)
    i = 17 + 64 * 9
    cell = next(c for c in w.scene["panels"][0]["cells"] if c["i"] == i)
    assert facts["swz"] == str(lay(i)) and facts["bank"] == str(bank_map(lay, "bf16")[i].bank)
    assert facts["req"] == w.scene["report"]["labels"][cell["req"]] and facts["thr"] == str(cell["thr"])
    retype(page, "(64,64):(64,1")
    page.wait_for_function("document.querySelector('.cpx-error').textContent !== ''")
    assert page.inner_text(".cpx-error") == w.error == "parse: expected ')', found end of input at position 13"
    with page.expect_download() as dl:
        page.click(".cpx-export-svg")
    svg = ET.parse(dl.value.path()).getroot()
    rects = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.get("class", "").startswith("cpx-c")]
    assert len(rects) == 64 * 64
    page.click(".cpx-export-py")
    assert page.inner_text(".cpx-python").strip() == w.scene["python"]


def _ldsm():
    mma = cp.make_tiled_mma(cp.atoms.get("SM80_16x8x16_F32BF16BF16F32_TN"))
    return cp.make_tiled_copy_A(cp.make_copy_atom("SM75_U32x4_LDSM_N", "bf16"), mma)


def test_notebook_widget_state_renders_in_the_module(page, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import cute_py as cp\ncp.viz.explore(cp.parse('Sw<3,3,3> o 0 o (8,64):(64,1)'), view='banks')")])
    t0 = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    assert time.perf_counter() - t0 < 30
    view = nb.cells[0].outputs[0]["data"]["application/vnd.jupyter.widget-view+json"]
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"][view["model_id"]]["state"]
    harness(page, state, state["_esm"])
    lay = cp.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert page.inner_text(".cpx-summary").endswith(bank_conflicts(lay, "row128", "bf16").summary())
    facts = hover_facts(page, 3, 17)
    assert facts["swz"] == str(lay(3 + 8 * 17)) and facts["bank"] == str(bank_map(lay, "bf16")[3 + 8 * 17].bank)
