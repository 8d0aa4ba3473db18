"""How long ``emit_gemm`` takes per spec, and how long ``import cute_py`` takes.

    python benchmarks/emit_speed.py [--repeats 5] [--no-cold] [--out FILE]

Specs: the shipped examples (``cute_py/specs``) and a fixed set of
heuristic-like specs (the tiles, majors, output types, epilogues and schedules
``pick_spec`` and autotune choose among). Per spec:

- *warm*: in this process, after every spec was emitted once (imports done,
  the algebra's caches primed), with the emitter's own plan caches cleared
  before each repeat, so the plan is derived and checked again; best of
  ``--repeats``;
- *cold*: the first ``emit_gemm`` of the spec in a fresh interpreter that has
  only imported ``cute_py.emit`` (lazy imports, empty caches), best of 3
  processes.

Also ``import cute_py`` and ``import cute_py.layouts`` in a fresh interpreter
(best of 5), and whether ``import cute_py`` loads sympy. The Markdown table
goes to stdout (and to ``--out``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # benchmark this checkout's cute_py

from cute_py.emit import GemmSpec, emit_gemm, example_specs  # noqa: E402
from cute_py.emit import plan as _plan_module  # noqa: E402

A = {"K": "(M,K):(K,1)", "MN": "(M,K):(1,M)"}
B = {"K": "(N,K):(K,1)", "MN": "(N,K):(1,N)"}


def heuristic_like() -> dict:
    """Specs of the kinds the heuristic and autotune pick: ``{label: GemmSpec}``."""
    s = {
        "tn 128x256 bf16": GemmSpec(tile=(128, 256, 64)),
        "tn 128x128 bf16 g16": GemmSpec(group=16),
        "nt 128x128 bf16 gelu": GemmSpec(a=A["MN"], b=B["MN"], beta=True, bias="col", activation="gelu"),
        "tn 64x128 1 consumer": GemmSpec(tile=(64, 128, 64), consumers=1),
        "tn 64x64 1 consumer s13": GemmSpec(tile=(64, 64, 64), consumers=1, stages=13),
        "tn 64x64 split-K 2": GemmSpec(tile=(64, 64, 64), consumers=1, stages=13, split_k=2),
        "f16 -> f32 128x256": GemmSpec(dtype="f16", out_dtype="f32", tile=(128, 256, 64)),
        "f16 direct col-major D": GemmSpec(dtype="f16", c="(M,N):(1,M)"),
        "tn 128x256 cluster 2x1": GemmSpec(tile=(128, 256, 64), cluster=(2, 1)),
        "tn 128x128 cluster 1x2": GemmSpec(cluster=(1, 2)),
        "tn 128x128 pingpong": GemmSpec(schedule="pingpong"),
        "mn-major A 128x256 relu": GemmSpec(a=A["MN"], tile=(128, 256, 64), bias="row", activation="relu"),
    }
    return s


def _clear_plan_caches():
    for obj in vars(_plan_module).values():
        if callable(getattr(obj, "cache_clear", None)):
            obj.cache_clear()


def warm_ms(spec: GemmSpec, repeats: int) -> float:
    emit_gemm(spec)
    best = float("inf")
    for _ in range(repeats):
        _clear_plan_caches()
        t0 = time.perf_counter()
        emit_gemm(spec)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


_COLD = """
import json, sys, time
from cute_py.emit import GemmSpec, emit_gemm
spec = GemmSpec.from_dict(json.loads(sys.argv[1]))
t0 = time.perf_counter()
emit_gemm(spec)
print((time.perf_counter() - t0) * 1e3)
"""


def cold_ms(spec: GemmSpec, processes: int = 3) -> float:
    out = []
    for _ in range(processes):
        r = subprocess.run([sys.executable, "-c", _COLD, json.dumps(spec.to_dict())], cwd=ROOT,
                           capture_output=True, text=True, check=True)
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return min(out)


def import_ms(module: str, processes: int = 5) -> tuple:
    """Best wall time of ``import module`` in a fresh interpreter, and whether sympy got loaded."""
    code = (f"import sys, time\nt0 = time.perf_counter()\nimport {module}\n"
            f"print((time.perf_counter() - t0) * 1e3, 'sympy' in sys.modules)")
    best, sympy_loaded = float("inf"), None
    for _ in range(processes):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
        ms, loaded = r.stdout.split()
        best, sympy_loaded = min(best, float(ms)), loaded == "True"
    return best, sympy_loaded


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-cold", action="store_true", help="skip the fresh-process timings")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    specs = {f"shipped: {k}": GemmSpec.from_file(p) for k, p in example_specs().items()}
    specs.update({f"heuristic-like: {k}": s for k, s in heuristic_like().items()})
    for s in specs.values():          # imports and the algebra's caches primed
        emit_gemm(s)
    lines = [f"# emit_gemm speed ({datetime.date.today()})", "",
             f"- machine: {platform.platform()} ({platform.machine()}); python {platform.python_version()}",
             f"- warm: plan caches cleared, best of {args.repeats}; cold: first emit in a fresh process, best of 3",
             "", "| spec | name | warm ms | cold ms |", "|---|---|---:|---:|"]
    worst = 0.0
    for label, s in specs.items():
        w = warm_ms(s, args.repeats)
        c = float("nan") if args.no_cold else cold_ms(s)
        worst = max(worst, w)
        lines.append(f"| {label} | `{s.name}` | {w:.1f} | {c:.1f} |")
    lines += ["", f"slowest warm emission: {worst:.1f} ms", ""]
    for mod in ("cute_py", "cute_py.layouts"):
        ms, sym = import_ms(mod)
        lines.append(f"- `import {mod}` in a fresh process: {ms:.0f} ms (sympy loaded: {sym})")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
