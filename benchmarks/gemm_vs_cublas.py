"""cute_py.gemm vs torch.matmul (cuBLAS): the comparison table, its summary against the targets, and a plot.

For each shape and layout both libraries are warmed up, then timed alternately, batch by batch: each sample is
one batch of 10 back-to-back calls between two CUDA events, each call on the next of several input sets
(rotated so the 50 MB L2 does not hold the inputs); medians are reported. Modes:

- burst: N alternating batches (``--burst``);
- sustained: alternating for S seconds (``--sustained``; the H100 lowers its clock under sustained load);
- graph (``--graph``): each library's batch of 10 calls is captured once into a CUDA graph
  (``torch.cuda.graph``) and the replays are timed, alternating, so host launch work is removed for both.

Rows give the spec cute_py ran (``pick_spec``'s, or with ``--autotune`` the one ``cute_py.autotune`` found for
that shape), TFLOP/s of both libraries and their ratio per mode (> 1: cute_py faster), and cute_py's relative
error against a float32 torch product. The summary states the geometric mean and the minimum of the ratios
and the 8192^3 ratio against the targets. Writes ``<out-dir>/<date>-<tag>.md``, ``.json`` and ``.png``
(the plot needs matplotlib; without it the md and json are still written).

    python benchmarks/gemm_vs_cublas.py --sweep issue8 --graph [--autotune] [--tag h100-issue8]
    python benchmarks/gemm_vs_cublas.py --shapes 4096,4096,4096 8192,8192,8192 --layouts tn tt
    python benchmarks/gemm_vs_cublas.py --plot-only benchmarks/results/2026-11-22-h100-issue8.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHAPES = ["2048,2048,2048", "4096,4096,4096", "8192,8192,8192", "4096,4096,1024", "8192,8192,2048"]
CUBES = (2048, 4096, 6144, 8192, 12288, 16384)
LLM_M = (128, 512, 4096, 16384)
LLM_NK = ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 1024))
UNALIGNED = ((1001, 1001, 1001), (2047, 2047, 2047), (4095, 4095, 4095), (8191, 8191, 8191), (1001, 4095, 8191),
             (8191, 1001, 4095), (4095, 8191, 1001), (2047, 6143, 4095))
SWEEPS = {"issue8": list(dict.fromkeys([(n, n, n) for n in CUBES] + [(m, n, k) for m in LLM_M for n, k in LLM_NK])),
          "unaligned": list(UNALIGNED)}     # odd M, N, K: no operand's rows are 16-byte multiples in any major
LAYOUT_MAJORS = {"tn": ("K", "K"), "tt": ("K", "MN"), "nn": ("MN", "K"), "nt": ("MN", "MN")}
MODES = ("burst", "sustained", "graph")
LIBS = ("cute_py", "cublas")
TARGETS = {"geomean": 1.0, "min": 0.9, "8192": 1.02}
CALLS = 10                      # calls per timed batch
L2_BYTES = 50e6                 # H100 L2; the input sets together should exceed it a few times over
INPUT_BUDGET = 8e9              # bytes of rotated inputs at most (16384^3 bf16: 1 GiB per set)


# ---------------------------------------------------------------------------------------------------------------
# Shapes and inputs

def parse_shape(text: str) -> tuple:
    """``"M,N,K"`` -> ``(M, N, K)``."""
    parts = text.replace("x", ",").split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"gemm_vs_cublas: a shape is M,N,K with positive integers, got {text!r}")
    return tuple(int(p) for p in parts)


def input_sets(M: int, N: int, K: int, itemsize: int = 2, l2_bytes: float = L2_BYTES,
               budget: float = INPUT_BUDGET) -> int:
    """How many (a, b) sets to rotate over: enough that they span 3x the L2 (2..8), never more than ``budget``
    bytes together (at least 1).

    >>> input_sets(4096, 4096, 4096), input_sets(16384, 16384, 16384), input_sets(128, 4096, 4096)
    (4, 2, 6)
    >>> input_sets(16384, 16384, 16384, budget=1.5e9)    # one 1 GiB set fits in 1.5 GB
    1
    """
    per_set = itemsize * (M * K + K * N)
    want = max(2, min(8, math.ceil(3 * l2_bytes / per_set) + 1))
    return max(1, min(want, int(budget // per_set)))


def operand(torch, rows: int, cols: int, contiguous_dim: int):
    """A (rows, cols) bf16 randn tensor whose dimension ``contiguous_dim`` has stride 1."""
    if contiguous_dim == 1:
        return torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    return torch.randn(cols, rows, device="cuda", dtype=torch.bfloat16).t()


def make_inputs(torch, M, N, K, layout, sets):
    """``sets`` pairs (a (M, K), b (K, N)) with the majors of ``layout`` (tn: a row-major, b a transposed
    row-major (N, K); tt: b row-major (K, N); nt / nn: a column-major)."""
    a_major, b_major = LAYOUT_MAJORS[layout]
    return [(operand(torch, M, K, 1 if a_major == "K" else 0), operand(torch, K, N, 0 if b_major == "K" else 1))
            for _ in range(sets)]


# ---------------------------------------------------------------------------------------------------------------
# Timing (needs torch and a GPU)

class BatchTimer:
    """Seconds per call of a batch between two CUDA events on torch's current stream
    (:class:`cute_py.runtime.timer.EventTimer`, the timer autotune and ``cute-py gemm --bench`` use)."""

    def __init__(self, torch):
        from cute_py.runtime.timer import EventTimer
        self.timer = EventTimer(torch.cuda.current_stream().cuda_stream)

    def __call__(self, run_batch, calls=CALLS) -> float:
        return self.timer.seconds(run_batch) / calls


def warm_up(torch, row: dict, calls: dict, n: int) -> None:
    """Run each of ``calls`` ``n`` times; a call that raises is recorded in ``row`` (``<name>_error``) and dropped
    from ``calls`` (the rest of the row stands)."""
    for name, call in list(calls.items()):
        try:
            for i in range(n):
                call(i)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - recorded, the rest of the row stands
            row[f"{name}_error"] = first_line(e)
            del calls[name]
            torch.cuda.synchronize()


def batch_runners(timer, calls: dict) -> dict:
    """``{name: run}``: each ``run()`` times one batch of ``CALLS`` calls ``calls[name](i)`` with ``timer``, ``i``
    running on across batches and names (so each call takes the next input set)."""
    counter = {"i": 0}

    def batch_of(call):
        def run():
            base = counter["i"]
            counter["i"] += CALLS
            return timer(lambda: [call(base + j) for j in range(CALLS)])
        return run

    return {name: batch_of(call) for name, call in calls.items()}


def alternate(batches: dict, *, count: int = 0, seconds: float = 0.0) -> dict:
    """Call each ``batches[name]() -> seconds`` in turn, round after round, for ``count`` rounds or until
    ``seconds`` have passed (at least one round); ``{name: [seconds, ...]}``."""
    times = {k: [] for k in batches}
    rounds, t0 = 0, time.perf_counter()
    while True:
        for name, fn in batches.items():
            times[name].append(fn())
        rounds += 1
        if count and rounds >= count:
            break
        if not count and time.perf_counter() - t0 >= seconds:
            break
    return times


def stats(samples: list, flops: float) -> dict:
    med = statistics.median(samples)
    return {"median_s": med, "tflops": flops / med / 1e12, "n": len(samples)}


def capture(torch, call, calls=CALLS):
    """A CUDA graph of ``calls`` back-to-back ``call(i, stream)`` (stream: the capturing torch stream), after a
    warm-up on a side stream as torch recommends."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(3):
            call(i, side)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        stream = torch.cuda.current_stream()
        for i in range(calls):
            call(i, stream)
    return graph


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def choose_spec(cute_py, M, N, K, layout, inputs, out, autotune: bool):
    """``(spec, source, autotune info)``: the heuristic's choice for these arrays (pick_spec's; the direct epilogue
    for a D whose rows TMA cannot store), or the autotuned one for this shape."""
    from cute_py.problem import Problem
    from cute_py.selection import heuristic
    if not autotune:
        return heuristic(Problem.from_arrays(*inputs[0], out=out)), "pick_spec", None
    from cute_py.autotune import autotune as tune
    res = tune(*inputs[0], out=out, cache=True, progress=False)
    print(res.table(), file=sys.stderr, flush=True)
    info = {"best_ms": res.best_ms, "default": res.default.name, "speedup_vs_default": res.speedup,
            "candidates": len(res.rows), "ran": sum(r.ok for r in res.rows)}
    return res.best, "autotune", info


def bench_shape(torch, M, N, K, layout, *, burst=20, sustained=2.0, graph=False, autotune=False) -> dict:
    """One row: both libraries on the same rotated inputs, in every requested mode."""
    import cute_py
    sets = input_sets(M, N, K)
    inputs = make_inputs(torch, M, N, K, layout, sets)
    outs = {lib: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for lib in LIBS}
    spec, source, tuned = choose_spec(cute_py, M, N, K, layout, inputs, outs["cute_py"], autotune)
    calls = {"cute_py": lambda i, stream=None: cute_py.gemm(*inputs[i % sets], out=outs["cute_py"], spec=spec,
                                                           stream=stream),
             "cublas": lambda i, stream=None: torch.matmul(*inputs[i % sets], out=outs["cublas"])}
    for call in calls.values():                         # warm-up: compile, load, cuBLAS heuristics, clocks
        for i in range(2 * CALLS):
            call(i)
    torch.cuda.synchronize()
    row = {"M": M, "N": N, "K": K, "layout": layout, "spec": spec.name, "spec_source": source, "input_sets": sets,
           **rel_errors(torch, inputs[0], calls, outs)}
    if tuned:
        row["autotune"] = tuned
    flops = 2.0 * M * N * K
    timer = BatchTimer(torch)
    plain = batch_runners(timer, calls)
    row["modes"] = {}
    if burst:
        row["modes"]["burst"] = mode_result(alternate(plain, count=burst), flops)
    if sustained:
        row["modes"]["sustained"] = mode_result(alternate(plain, seconds=sustained), flops)
    if graph:
        row["modes"]["graph"] = graph_mode(torch, calls, timer, flops, burst or 20)
    return row


def rel_errors(torch, ab, calls, outs) -> dict:
    """Relative Frobenius errors of both libraries against a float32 product of the first input set."""
    a, b = ab
    ref = torch.matmul(a.float(), b.float())
    norm = float(ref.norm())
    out = {}
    for lib, key in (("cute_py", "rel_err"), ("cublas", "rel_err_cublas")):
        calls[lib](0)
        out[key] = float((outs[lib].float() - ref).norm()) / norm
    del ref
    return out


def mode_result(times: dict, flops: float) -> dict:
    res = {lib: stats(t, flops) for lib, t in times.items()}
    res["ratio"] = res["cublas"]["median_s"] / res["cute_py"]["median_s"]
    return res


def graph_mode(torch, calls, timer, flops, count) -> dict:
    """Replays of one captured batch per library, alternating; a library whose capture fails is reported."""
    graphs, errors = {}, {}
    for lib, call in calls.items():
        try:
            graphs[lib] = capture(torch, lambda i, s, c=call, lib=lib: c(i, s) if lib == "cute_py" else c(i))
        except Exception as e:  # noqa: BLE001 - recorded in the row; the other modes stand
            errors[lib] = first_line(e)
            torch.cuda.synchronize()
    res = {"error": errors} if errors else {}
    if not graphs:
        return res
    times = alternate({lib: (lambda g=g: timer(g.replay)) for lib, g in graphs.items()}, count=count)
    res.update({lib: stats(t, flops) for lib, t in times.items()})
    if len(graphs) == 2:
        res["ratio"] = res["cublas"]["median_s"] / res["cute_py"]["median_s"]
    return res


# ---------------------------------------------------------------------------------------------------------------
# Summary, tables and the plot (no GPU needed; --plot-only runs these on a saved JSON)

def normalize_row(row: dict) -> dict:
    """A row in this script's format; rows of the older format (modes at top level, no ratios) are converted."""
    if "modes" in row or "error" in row:
        return row
    modes = {}
    for m in MODES:
        if m in row and "cute_py" in row[m] and "cublas" in row[m]:
            modes[m] = dict(row[m], ratio=row[m]["cublas"]["median_s"] / row[m]["cute_py"]["median_s"])
    out = {k: v for k, v in row.items() if k not in MODES}
    out["modes"] = modes
    return out


def shape_label(row: dict) -> str:
    return f"{row['M']}x{row['N']}x{row['K']} {row['layout']}"


def modes_of(rows) -> list:
    seen = {m for r in rows for m in r.get("modes", {})}
    return [m for m in MODES if m in seen]


def summarize(rows: list) -> dict:
    """Per mode: geometric mean and minimum (with its shape) of the cute_py/cuBLAS ratios, the 8192^3 ratio,
    the shapes without a ratio, and whether each target is met.

    >>> rows = [{"M": n, "N": n, "K": n, "layout": "tn", "modes": {"burst": {"ratio": r}}}
    ...         for n, r in ((4096, 0.8), (8192, 1.25))]
    >>> s = summarize(rows)["burst"]
    >>> round(s["geomean"], 3), s["min"], s["min_shape"], s["ratio_8192"], s["met"]
    (1.0, 0.8, '4096x4096x4096 tn', 1.25, {'geomean': True, 'min': False, '8192': True})
    """
    out = {}
    for mode in modes_of(rows):
        ratios = [(shape_label(r), r["modes"][mode]["ratio"]) for r in rows
                  if "error" not in r and r.get("modes", {}).get(mode, {}).get("ratio")]
        missing = [shape_label(r) for r in rows if "error" in r or not r.get("modes", {}).get(mode, {}).get("ratio")]
        s = {"n": len(ratios), "missing": missing, "geomean": None, "min": None, "min_shape": None,
             "ratio_8192": None}
        if ratios:
            s["geomean"] = math.exp(sum(math.log(r) for _, r in ratios) / len(ratios))
            s["min_shape"], s["min"] = min(ratios, key=lambda x: x[1])
        cube = [r for label, r in ratios if label.startswith("8192x8192x8192 ")]
        s["ratio_8192"] = min(cube) if cube else None
        s["met"] = {"geomean": s["geomean"] is not None and s["geomean"] >= TARGETS["geomean"],
                    "min": s["min"] is not None and s["min"] >= TARGETS["min"] and not missing,
                    "8192": s["ratio_8192"] is not None and s["ratio_8192"] >= TARGETS["8192"]}
        out[mode] = s
    return out


def _met(flag: bool) -> str:
    return "met" if flag else "not met"


def summary_lines(summary: dict) -> list:
    """One plain line per mode and target.

    >>> summary_lines({"burst": {"n": 2, "missing": [], "geomean": 1.0, "min": 0.8, "min_shape": "a",
    ...                          "ratio_8192": None, "met": {"geomean": True, "min": False, "8192": False}}})
    ['- burst: geometric mean of the ratios 1.00 over 2 shapes (target >= 1.00: met); minimum 0.80 at a (target >= 0.90: not met); 8192^3 not measured (target >= 1.02: not met)']
    """
    lines = []
    for mode, s in summary.items():
        if s["geomean"] is None:
            lines.append(f"- {mode}: no ratios measured; every target not met")
            continue
        r8192 = f"8192^3 {s['ratio_8192']:.2f}" if s["ratio_8192"] is not None else "8192^3 not measured"
        miss = f"; {len(s['missing'])} shape(s) without a ratio: {', '.join(s['missing'])}" if s["missing"] else ""
        lines.append(f"- {mode}: geometric mean of the ratios {s['geomean']:.2f} over {s['n']} shapes "
                     f"(target >= {TARGETS['geomean']:.2f}: {_met(s['met']['geomean'])}); minimum {s['min']:.2f} at "
                     f"{s['min_shape']} (target >= {TARGETS['min']:.2f}: {_met(s['met']['min'])}); {r8192} "
                     f"(target >= {TARGETS['8192']:.2f}: {_met(s['met']['8192'])}){miss}")
    return lines


def _cell(row, mode, lib=None) -> str:
    m = row.get("modes", {}).get(mode)
    if not m:
        return "-"
    if lib is None:
        return f"{m['ratio']:.2f}" if m.get("ratio") else "-"
    if lib in m:
        return f"{m[lib]['tflops']:.0f}"
    err = m.get("error", {}).get(lib)
    return "capture failed" if err else "-"


def table_lines(rows: list) -> list:
    """The Markdown table: TFLOP/s of both libraries and their ratio per mode."""
    modes = modes_of(rows)
    head = ["M", "N", "K", "layout", "cute_py spec"]
    for m in modes:
        head += [f"{m} cute_py", f"{m} cuBLAS", f"{m} ratio"]
    head.append("rel err")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if "error" in r:
            cells = [str(r["M"]), str(r["N"]), str(r["K"]), r["layout"], f"error: {r['error']}"]
            cells += ["-"] * (len(head) - len(cells))
        else:
            spec = r["spec"] + (" (autotuned)" if r.get("spec_source") == "autotune" else "")
            cells = [str(r["M"]), str(r["N"]), str(r["K"]), r["layout"], spec]
            for m in modes:
                cells += [_cell(r, m, "cute_py"), _cell(r, m, "cublas"), _cell(r, m)]
            cells.append(f"{r['rel_err']:.1e}" if r.get("rel_err") is not None else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def graph_errors(rows: list) -> list:
    out = []
    for r in rows:
        for lib, err in r.get("modes", {}).get("graph", {}).get("error", {}).items():
            out.append(f"- {shape_label(r)}: {lib} capture failed: {err}")
    return out


METHOD = ("For each shape both libraries are warmed up, then timed alternately, batch by batch. A sample "
          "is one batch of {calls} back-to-back calls between two CUDA events, each call on the next of several "
          "input sets (2-8, rotated so the L2 does not hold the inputs; at most 8 GB of them); medians per call are "
          "reported. burst: {burst} alternating batches per library; sustained: alternating for {sustained} s (the "
          "H100 lowers its clock under sustained load); graph: each library's batch of {calls} calls captured once "
          "into a CUDA graph and replayed, alternating, so host launch work is removed for both (cute_py.gemm gets "
          "the capturing stream). cute_py ran the spec shown: {spec_note}; outside graph mode its times include "
          "its Python per-call work where the kernel is shorter. cuBLAS is torch.matmul(a, b, out=...). "
          "TFLOP/s = 2MNK / time; ratio = cute_py TFLOP/s / cuBLAS TFLOP/s (> 1: cute_py faster). rel err: "
          "cute_py's relative Frobenius error against torch.matmul of the float32 inputs. Targets: 8192^3 ratio "
          ">= {t8192}, geometric mean >= {tgeo}, minimum >= {tmin}.")


def render_md(data: dict) -> str:
    """The report: title, summary against the targets, the table and the method paragraph."""
    meta, rows = data.get("meta", {}), [normalize_row(r) for r in data["rows"]]
    summary = summarize(rows)
    spec_note = ("the one cute_py.autotune found for that shape" if meta.get("autotune")
                 else "cute_py.gemm.pick_spec's choice")
    title = "# cute_py.gemm vs torch.matmul (cuBLAS), bf16 in / bf16 out, f32 accumulate"
    about = ", ".join(str(x) for x in (meta.get("date"), meta.get("device"),
                                        meta.get("torch") and f"torch {meta['torch']}",
                                        meta.get("cute_py") and f"cute_py {meta['cute_py']}",
                                        meta.get("sweep") and f"sweep {meta['sweep']}") if x)
    method = METHOD.format(calls=meta.get("calls", CALLS), burst=meta.get("burst", "N"),
                           sustained=meta.get("sustained", "S"), spec_note=spec_note, t8192=TARGETS["8192"],
                           tgeo=TARGETS["geomean"], tmin=TARGETS["min"])
    parts = [title, "", about + ".", "", "## Summary", "", *summary_lines(summary), "", "## Results", "",
             *table_lines(rows), ""]
    errs = graph_errors(rows)
    if errs:
        parts += ["Graph capture failures:", "", *errs, ""]
    parts += ["## Method", "", method, ""]
    return "\n".join(parts)


def render_png(data: dict, path: str) -> bool:
    """TFLOP/s of both libraries per shape (grouped bars, first mode measured) over their ratio per mode
    (points, with the 1.0 and the minimum-target lines). False when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    import numpy as np
    rows = [r for r in (normalize_row(r) for r in data["rows"]) if "error" not in r and r.get("modes")]
    modes = modes_of(rows)
    labels = [shape_label(r) for r in rows]
    x = np.arange(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(10.0, 0.45 * len(rows) + 3), 9), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    if rows:
        mode = modes[0]
        tf = {lib: [r["modes"].get(mode, {}).get(lib, {}).get("tflops", np.nan) for r in rows] for lib in LIBS}
        top.bar(x - 0.2, tf["cute_py"], 0.4, label="cute_py", color="#1f77b4")
        top.bar(x + 0.2, tf["cublas"], 0.4, label="cuBLAS (torch.matmul)", color="#ff7f0e")
        top.set_ylabel(f"TFLOP/s ({mode})")
        top.set_ylim(0, 1.2 * max([v for v in tf["cute_py"] + tf["cublas"] if v == v] or [1.0]))   # room for the legend
        top.legend(loc="upper right", ncol=2)
        top.grid(axis="y", alpha=0.3)
        for i, m in enumerate(modes):
            ratio = [r["modes"].get(m, {}).get("ratio") or np.nan for r in rows]
            bottom.plot(x + (i - (len(modes) - 1) / 2) * 0.12, ratio, marker="o", linestyle="none", label=m)
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.axhline(TARGETS["min"], color="gray", linestyle="--", linewidth=0.8, label=f"min target {TARGETS['min']}")
    bottom.set_ylabel("cute_py / cuBLAS")
    bottom.legend(loc="best", fontsize=8)
    bottom.grid(axis="y", alpha=0.3)
    bottom.set_xticks(x)
    bottom.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    meta = data.get("meta", {})
    fig.suptitle(f"cute_py.gemm vs cuBLAS, bf16 - {meta.get('device', '')} {meta.get('date', '')}".strip())
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def write_report(data: dict, stem: str, *, json_too: bool = True, plot: bool = True) -> list:
    """Write ``stem.md`` (and ``stem.json``, ``stem.png``); returns the paths written."""
    written = []
    if json_too:
        with open(stem + ".json", "w") as f:
            json.dump(dict(data, summary=summarize([normalize_row(r) for r in data["rows"]])), f, indent=1)
        written.append(stem + ".json")
    with open(stem + ".md", "w") as f:
        f.write(render_md(data))
    written.append(stem + ".md")
    if plot:
        if render_png(data, stem + ".png"):
            written.append(stem + ".png")
        else:
            print(f"plot skipped: matplotlib is not installed here; render it later with "
                  f"python benchmarks/gemm_vs_cublas.py --plot-only {stem}.json", file=sys.stderr)
    return written


def plot_only(path: str) -> int:
    """Re-render the md and png of a saved JSON (next to it, same stem)."""
    with open(path) as f:
        data = json.load(f)
    stem = path[:-5] if path.endswith(".json") else path
    for p in write_report(data, stem, json_too=False):
        print(f"wrote {p}")
    return 0


# ---------------------------------------------------------------------------------------------------------------
# The run

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="*", default=None, metavar="M,N,K", help=f"default {' '.join(DEFAULT_SHAPES)}")
    ap.add_argument("--sweep", choices=tuple(SWEEPS), help="a named sweep (replaces --shapes): issue8 = "
                    "{2048..16384}^3 and M in {128, 512, 4096, 16384} x (N, K) of Llama-style layers; unaligned = "
                    "eight shapes with odd M, N, K in [1000, 8191] (staged operands, direct epilogue)")
    ap.add_argument("--layouts", nargs="*", choices=tuple(LAYOUT_MAJORS), default=None,
                    help="default tn for a sweep, tn tt otherwise")
    ap.add_argument("--burst", type=int, default=20, help="alternating batches per library in burst mode (0: off)")
    ap.add_argument("--sustained", type=float, default=2.0, help="seconds of sustained mode (0: off)")
    ap.add_argument("--graph", action="store_true", help="also time CUDA-graph replays of each batch")
    ap.add_argument("--autotune", action="store_true", help="run cute_py.autotune for each shape first and time "
                    "its best spec")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--tag", default=None, help="file name tag: <date>-<tag>.md/json/png (default from the GPU and "
                    "sweep, e.g. h100-issue8)")
    ap.add_argument("--plot-only", metavar="JSON", help="re-render the md and png of a saved JSON; no GPU needed")
    return ap.parse_args(argv)


def default_tag(device: str, sweep: str | None) -> str:
    """``h100-issue8``, ``h200-gemm``, ...

    >>> default_tag("NVIDIA H100 80GB HBM3", "issue8"), default_tag("NVIDIA H200", None)
    ('h100-issue8', 'h200-gemm')
    """
    gpu = next((g for g in ("h100", "h200", "a100", "b200") if g in device.lower()), "gpu")
    return f"{gpu}-{sweep or 'gemm'}"


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.plot_only:
        return plot_only(args.plot_only)
    shapes = SWEEPS[args.sweep] if args.sweep else [parse_shape(s) for s in (args.shapes or DEFAULT_SHAPES)]
    layouts = args.layouts or (["tn"] if args.sweep else ["tn", "tt"])
    try:
        import torch
    except ImportError:
        print("gemm_vs_cublas: torch is needed (torch.matmul is the reference)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gemm_vs_cublas: torch sees no CUDA device", file=sys.stderr)
        return 2
    import cute_py
    device = torch.cuda.get_device_name()
    date = _dt.date.today().isoformat()
    stem = os.path.join(args.out_dir, f"{date}-{args.tag or default_tag(device, args.sweep)}")
    os.makedirs(args.out_dir, exist_ok=True)
    meta = {"date": date, "device": device, "torch": torch.__version__, "cute_py": cute_py.__version__,
            "sweep": args.sweep, "layouts": layouts, "burst": args.burst, "sustained": args.sustained,
            "graph": args.graph, "autotune": args.autotune, "calls": CALLS, "argv": sys.argv[1:] if argv is None
            else list(argv)}
    data = {"meta": meta, "rows": []}
    for M, N, K in shapes:
        for layout in layouts:
            data["rows"].append(run_row(torch, M, N, K, layout, args))
            print(row_line(data["rows"][-1]), flush=True)
            write_report(data, stem, plot=False)           # a run stopped midway keeps what it measured
    written = write_report(data, stem)
    print(render_md(data))
    print("\n".join(f"wrote {p}" for p in written))
    return 0


def run_row(torch, M, N, K, layout, args) -> dict:
    try:
        return bench_shape(torch, M, N, K, layout, burst=args.burst, sustained=args.sustained, graph=args.graph,
                           autotune=args.autotune)
    except Exception as e:  # noqa: BLE001 - one shape's failure is its row; the sweep goes on
        return {"M": M, "N": N, "K": K, "layout": layout, "error": first_line(e)}
    finally:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def row_line(r: dict) -> str:
    if "error" in r:
        return f"{shape_label(r)}: error: {r['error']}"
    parts = [f"{m} {v['cute_py']['tflops']:.0f} / {v['cublas']['tflops']:.0f} TFLOP/s ({v['ratio']:.2f})"
             for m, v in r["modes"].items() if v.get("ratio")]
    parts += [f"{m}: {v['error']}" for m, v in r["modes"].items() if v.get("error")]
    return f"{shape_label(r)} [{r['spec']}]: " + "; ".join(parts) + f"; rel err {r['rel_err']:.1e}"


if __name__ == "__main__":
    sys.exit(main())
