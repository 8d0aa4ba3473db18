"""benchmarks/gemm_vs_cublas.py without a GPU: the report it renders from a saved JSON (``--plot-only``): the table,
the summary against the targets, the plot when matplotlib is importable, and the older JSON format."""

from __future__ import annotations

import doctest
import importlib.util
import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gemm_vs_cublas.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gemm_vs_cublas", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mode(cute_tflops, cublas_tflops, flops):
    t_cute, t_cublas = flops / cute_tflops / 1e12, flops / cublas_tflops / 1e12
    return {"cute_py": {"median_s": t_cute, "tflops": cute_tflops, "n": 20},
            "cublas": {"median_s": t_cublas, "tflops": cublas_tflops, "n": 20}, "ratio": t_cublas / t_cute}


def row(M, N, K, burst, sustained, graph=None, layout="tn"):
    f = 2.0 * M * N * K
    r = {"M": M, "N": N, "K": K, "layout": layout, "spec": f"cute_gemm_{M}", "spec_source": "pick_spec",
         "input_sets": 2, "rel_err": 1.7e-3, "rel_err_cublas": 1.6e-3,
         "modes": {"burst": mode(*burst, f), "sustained": mode(*sustained, f)}}
    if graph == "fail":
        r["modes"]["graph"] = {"error": {"cute_py": "RuntimeError: capture invalidated"},
                               "cublas": {"median_s": f / 700e12, "tflops": 700.0, "n": 20}}
    elif graph:
        r["modes"]["graph"] = mode(*graph, f)
    return r


@pytest.fixture
def saved(tmp_path):
    """A synthetic sweep: burst ratios 1.05, 0.8, 1.2 (8192^3 at 1.2), one shape failed, one capture failed."""
    rows = [row(8192, 8192, 8192, (720, 600), (700, 650), (730, 600)),
            row(128, 4096, 4096, (200, 250), (210, 250), graph="fail"),
            row(4096, 4096, 4096, (630, 600), (600, 600), (640, 600), layout="tt"),
            {"M": 16384, "N": 16384, "K": 16384, "layout": "tn", "error": "OutOfMemoryError: CUDA out of memory"}]
    data = {"meta": {"date": "2026-11-22", "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "cute_py": "0.1.0",
                     "sweep": "issue8", "burst": 20, "sustained": 2.0, "graph": True, "autotune": False},
            "rows": rows}
    path = tmp_path / "2026-11-22-h100-issue8.json"
    path.write_text(json.dumps(data))
    return path


def test_summary_against_the_targets(bench, saved):
    data = json.loads(saved.read_text())
    s = bench.summarize([bench.normalize_row(r) for r in data["rows"]])
    assert list(s) == ["burst", "sustained", "graph"]
    burst = s["burst"]
    assert burst["geomean"] == pytest.approx((1.2 * 0.8 * 1.05) ** (1 / 3))
    assert (burst["min"], burst["min_shape"]) == (pytest.approx(0.8), "128x4096x4096 tn")
    assert burst["ratio_8192"] == pytest.approx(1.2)
    assert burst["missing"] == ["16384x16384x16384 tn"]
    assert burst["met"] == {"geomean": True, "min": False, "8192": True}
    graph = s["graph"]
    assert graph["n"] == 2 and graph["missing"] == ["128x4096x4096 tn", "16384x16384x16384 tn"]
    assert graph["geomean"] == pytest.approx(math.sqrt(730 / 600 * 640 / 600))


def test_plot_only_renders_md_and_png(bench, saved, capsys):
    assert bench.main(["--plot-only", str(saved)]) == 0
    md = saved.with_suffix(".md").read_text()
    png = saved.with_suffix(".png")
    lines = md.splitlines()
    header = ("| M | N | K | layout | cute_py spec | burst cute_py | burst cuBLAS | burst ratio | sustained cute_py | "
              "sustained cuBLAS | sustained ratio | graph cute_py | graph cuBLAS | graph ratio | rel err |")
    assert header in lines
    assert "| 8192 | 8192 | 8192 | tn | cute_gemm_8192 | 720 | 600 | 1.20 | 700 | 650 | 1.08 | 730 | 600 | 1.22 | " \
           "1.7e-03 |" in lines
    assert "| 128 | 4096 | 4096 | tn | cute_gemm_128 | 200 | 250 | 0.80 | 210 | 250 | 0.84 | capture failed | 700 | - " \
           "| 1.7e-03 |" in lines
    assert any(ln.startswith("| 16384 | 16384 | 16384 | tn | error: OutOfMemoryError") for ln in lines)
    burst = next(ln for ln in lines if ln.startswith("- burst:"))
    assert "geometric mean of the ratios 1.00 over 3 shapes (target >= 1.00: met)" in burst
    assert "minimum 0.80 at 128x4096x4096 tn (target >= 0.90: not met)" in burst
    assert "8192^3 1.20 (target >= 1.02: met)" in burst
    assert "1 shape(s) without a ratio: 16384x16384x16384 tn" in burst
    sustained = next(ln for ln in lines if ln.startswith("- sustained:"))
    assert "geometric mean of the ratios 0.97" in sustained and "(target >= 1.00: not met)" in sustained
    assert "- 128x4096x4096 tn: cute_py capture failed: RuntimeError: capture invalidated" in lines
    assert "## Method" in lines and "2026-11-22, NVIDIA H100 80GB HBM3, torch 2.11.0" in md
    out = capsys.readouterr()
    assert f"wrote {saved.with_suffix('.md')}" in out.out
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"wrote {png}" in out.out
    else:
        assert not png.exists() and "plot skipped: matplotlib is not installed" in out.err


def test_plot_is_skipped_cleanly_without_matplotlib(bench, saved, monkeypatch, capsys):
    monkeypatch.setattr(bench, "render_png", lambda data, path: False)
    assert bench.main(["--plot-only", str(saved)]) == 0
    assert saved.with_suffix(".md").is_file() and not saved.with_suffix(".png").exists()
    assert "plot skipped: matplotlib is not installed here; render it later with" in capsys.readouterr().err


def test_older_json_rows_are_converted(bench, tmp_path):
    old = {"M": 4096, "N": 4096, "K": 4096, "layout": "tn", "rel_err": 1.7e-3, "input_sets": 6, "spec": "s",
           "burst": {"cute_py": {"median_s": 2e-4, "tflops": 687, "n": 10},
                     "cublas": {"median_s": 1.8e-4, "tflops": 763, "n": 10}}}
    new = bench.normalize_row(old)
    assert new["modes"]["burst"]["ratio"] == pytest.approx(0.9) and "burst" not in new
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"meta": {"date": "2026-11-21"}, "rows": [old]}))
    assert bench.plot_only(str(path)) == 0
    assert "| 4096 | 4096 | 4096 | tn | s | 687 | 763 | 0.90 | 1.7e-03 |" in (tmp_path / "old.md").read_text()


def test_the_sweep_and_its_memory(bench):
    shapes = bench.SWEEPS["issue8"]
    assert len(shapes) == 6 + 16 - 1 and len(set(shapes)) == len(shapes)      # 4096^3 is in both halves
    assert (8192, 8192, 8192) in shapes and (16384, 14336, 4096) in shapes and (128, 8192, 1024) in shapes
    for M, N, K in shapes:
        sets = bench.input_sets(M, N, K)
        assert sets >= 1 and sets * 2 * (M * K + K * N) <= bench.INPUT_BUDGET


def test_script_doctests(bench):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in finder.find(bench):
        runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 5 and failed == 0


def test_a_run_without_torch_says_so(bench, capsys):
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here")
    assert bench.main(["--shapes", "256,256,256"]) == 2
    assert "torch is needed" in capsys.readouterr().err
