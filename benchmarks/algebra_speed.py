"""Speed of the cute_py layout algebra against NVIDIA's legacy pure-Python ``pycute``.

    python benchmarks/algebra_speed.py [--seed 0] [--cases 3000] [--repeats 5] [--profile K] [--first-pass N]

A seeded workload of ``--cases`` operand sets per op, accepted by both libraries
and avoiding the inputs where pycute is known to be wrong (CUTE_REFERENCE.md §1.7),
is timed per op, best of ``--repeats``, the two libraries alternating: "pass" is one
pass over freshly built operands, "again" a second pass over the same operands. The
algebra caches nothing, so the two differ only in what the interpreter and the
operands keep warm. Results are cross-checked as functions on their domain. The
Markdown report goes to stdout and benchmarks/results/<date>-algebra-speed.md;
``--profile K`` adds cProfile output for the K ops with the lowest speedup.

``--first-pass N`` adds the true first pass: the workload is written to a file,
and each op is timed once per library in a fresh Python process (nothing
warmed: not the interpreter's specializations, not the operands), N processes
per library, the libraries alternating; the table gives the median.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import io
import math
import os
import pickle
import platform
import pstats
import statistics
import subprocess
import tempfile
import random
import sys
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout's cute_py
import cute_py as cute  # noqa: E402

try:
    import pycute
except ImportError:
    print("pycute is not importable. It ships inside NVIDIA's CUTLASS wheel (the PyPI package\n"
          "named 'pycute' is unrelated):  pip install --no-deps nvidia-cutlass==4.2.0.0", file=sys.stderr)
    sys.exit(2)

LEAVES = (1, 2, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8, 8, 16)
STRIDES = (0, 1, 1, 2, 3, 4, 6, 8, 16, 32, 64, 128)

# -- workload as plain tuples ------------------------------------------------
# A layout is ("L", shape, stride); a by-mode tiler is ("T", (tiler, ...));
# ("V", x) is passed as it is; a bare int is an int tiler.


def tmap(t, f):
    return tuple(tmap(x, f) for x in t) if isinstance(t, tuple) else f(t)


def flat(t):
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


def size(spec):
    return math.prod(flat(spec[1]))


def cosize(spec):
    return sum((s - 1) * d for s, d in zip(flat(spec[1]), flat(spec[2]))) + 1


def modes(spec):
    return [("L", s, d) for s, d in zip(spec[1], spec[2])] if isinstance(spec[1], tuple) else [spec]


def layout_spec(rng, fs, fd):
    """Group flat modes into a layout of rank 1-3, some modes nested."""
    n = len(fs)
    if n == 1:
        return ("L", fs[0], fd[0])
    cuts = sorted(rng.sample(range(1, n), rng.randint(2, min(3, n)) - 1))
    groups = [list(range(a, b)) for a, b in zip([0] + cuts, cuts + [n])]
    tree = tuple(g[0] if len(g) == 1 else tuple(g) for g in groups)
    return ("L", tmap(tree, fs.__getitem__), tmap(tree, fd.__getitem__))


def flat_shape(rng, max_size):
    fs = [rng.choice(LEAVES) for _ in range(rng.randint(1, 5))]
    while math.prod(fs) > max_size:
        fs.pop()
    return fs or [rng.choice((1, 2, 3, 4))]


def random_layout(rng, max_size=1024):
    """Any layout: random strides, stride-0 modes and overlaps included."""
    fs = flat_shape(rng, max_size)
    return layout_spec(rng, fs, [rng.choice(STRIDES) for _ in fs])


def injective_layout(rng, max_size=1024):
    """A permuted compact layout with gaps: sorted strides each divide the next (complementable)."""
    fs = flat_shape(rng, min(max_size, 1024))
    fd, cur = [0] * len(fs), 1
    for k in rng.sample(range(len(fs)), len(fs)):
        cur *= rng.choice((2, 3)) if rng.random() < 0.25 else 1
        fd[k], cur = cur, cur * fs[k]
    return layout_spec(rng, fs, fd)


def divisor_tiler(rng, n, allow_int=True):
    """A layout (or int) of size dividing ``n`` and cosize <= ``n``, built from n's prime factors."""
    ps, p = [], 2
    while n > 1:
        while n % p == 0:
            ps.append(p)
            n //= p
        p += 1
    if allow_int and rng.random() < 0.2:
        return math.prod(rng.sample(ps, rng.randint(0, len(ps))))
    rng.shuffle(ps)
    ms, cur = [], 1
    for p in ps:
        u = rng.random()
        if 0.25 <= u < 0.55 and ms and ms[-1][0] * ms[-1][1] == cur:
            ms[-1][0] *= p                         # grow the last mode
        elif u >= 0.25:
            ms.append([p, cur])                    # else: a gap the tiler skips
        cur *= p
    rng.shuffle(ms)
    return layout_spec(rng, [m[0] for m in ms], [m[1] for m in ms]) if ms else ("L", 1, 0)


def tiler_for(rng, a, full_rank=False):
    """A divisor tiler of A: whole, or by mode over the first k modes (all of them with ``full_rank``)."""
    ms = modes(a)
    if len(ms) == 1 or rng.random() < 0.4:
        return divisor_tiler(rng, size(a))
    k = len(ms) if full_rank else rng.randint(1, len(ms))
    return ("T", tuple(divisor_tiler(rng, size(m)) for m in ms[:k]))


def product_tiler(rng, a):
    """Layout tilers only (pycute's logical_product mishandles an int tiler); result size <= 4096."""
    room, ms = max(1, 4096 // size(a)), modes(a)
    if len(ms) == 1 or rng.random() < 0.5:
        return injective_layout(rng, room)
    k = rng.randint(1, len(ms))
    return ("T", tuple(injective_layout(rng, max(1, int(room ** (1 / k)))) for _ in range(k)))


def gen_tile_to_shape(rng):
    block = injective_layout(rng, 256)
    ms = modes(block)
    r = len(ms) + rng.randint(0, 1)
    target = tuple(size(m) * rng.choice((1, 2, 3, 4)) for m in ms) + (rng.choice((1, 2, 4)),) * (r - len(ms))
    order = tuple(rng.sample(range(r), r)) if r > 1 and rng.random() < 0.5 else None
    return (block, ("V", target if r > 1 else target[0]), ("V", order))


GENERATORS = {
    "composition": lambda r: (a := random_layout(r), tiler_for(r, a, full_rank=True)),
    "complement": lambda r: (a := injective_layout(r), ("V", r.choice((1, 2, 3)) * cosize(a) + r.randint(0, 8))),
    # injective only: with overlapping strides a right inverse is not unique (pycute stops early)
    "right_inverse": lambda r: (injective_layout(r),),
    "left_inverse": lambda r: (injective_layout(r),),
    "logical_divide": lambda r: (a := random_layout(r), tiler_for(r, a)),
    "zipped_divide": lambda r: (a := random_layout(r), tiler_for(r, a)),
    "logical_product": lambda r: (a := injective_layout(r, 256), product_tiler(r, a)),
    "zipped_product": lambda r: (a := injective_layout(r, 256), product_tiler(r, a)),
    "coalesce": lambda r: (random_layout(r),),
    "blocked_product": lambda r: (a := injective_layout(r, 256), injective_layout(r, 4096 // size(a))),
    "raked_product": lambda r: (a := injective_layout(r, 256), injective_layout(r, 4096 // size(a))),
    "tile_to_shape": gen_tile_to_shape,
    # layout evaluation: a fresh layout called on 16 indices and on 16 coordinates (one int per mode)
    "evaluate": lambda r: (a := random_layout(r), ("V", tuple(r.randrange(size(a)) for _ in range(16))),
                           ("V", tuple(tuple(r.randrange(size(m)) for m in modes(a)) for _ in range(16)))),
}


def evaluate(layout, indices, coords):
    """``layout`` at every index and every coordinate (the "evaluate" op, the same code for both libraries)."""
    return [layout(i) for i in indices] + [layout(*c) for c in coords]


CUTE_FNS = {op: getattr(cute, op) for op in GENERATORS if op != "evaluate"}
CUTE_FNS["evaluate"] = evaluate
CUTE_FNS["tile_to_shape"] = lambda b, t, o: cute.tile_to_shape(b, t, cute.LayoutLeft if o is None else o)
PY_FNS = {op: getattr(pycute, op) for op in GENERATORS if hasattr(pycute, op)}
PY_FNS["evaluate"] = evaluate


def build(x, lib):
    if isinstance(x, int):
        return x
    if x[0] == "L":
        return lib.Layout(x[1], x[2])
    return tuple(build(t, lib) for t in x[1]) if x[0] == "T" else x[1]


def make_workload(rng, op, n):
    """``n`` operand sets that cute_py (and pycute, where it has the op) accept."""
    cases, tries = [], 0
    while len(cases) < n and tries < 200 * n:
        tries += 1
        case = GENERATORS[op](rng)
        try:
            CUTE_FNS[op](*(build(x, cute) for x in case))
            if op in PY_FNS:
                PY_FNS[op](*(build(x, pycute) for x in case))
        except Exception:  # noqa: BLE001 - inadmissible for one of the two: draw again
            continue
        cases.append(case)
    return cases


# -- checking: both libraries' layouts have .shape/.stride as nested int tuples --


def values(layout):
    vals = [0]
    for s, d in zip(flat(layout.shape), flat(layout.stride)):
        vals = [v + j * d for j in range(s) for v in vals]
    return vals


def at(layout, x):
    fs, fd = flat(layout.shape), flat(layout.stride)
    off = 0
    for s, d in zip(fs[:-1], fd[:-1]):
        off, x = off + (x % s) * d, x // s
    return off + x * fd[-1]


def disagreements(op, cases):
    bad = []
    for case in cases:
        args = [build(x, pycute) for x in case]
        rc, rp = CUTE_FNS[op](*(build(x, cute) for x in case)), PY_FNS[op](*args)
        if op == "evaluate":                       # offsets, not a layout
            ok = rc == rp
        elif op == "left_inverse":                 # a left inverse is only defined on the image
            image = values(args[0])
            ok = [at(rc, y) for y in image] == [at(rp, y) for y in image]
        else:
            ok = values(rc) == values(rp)
        if not ok:
            bad.append((case, rc, rp))
    return bad


# -- timing ------------------------------------------------------------------


def run_pass(fn, argsets, profiler=None):
    gc.collect()
    gc.disable()
    try:
        if profiler:
            profiler.enable()
        t0 = time.perf_counter()
        for args in argsets:
            fn(*args)
        return time.perf_counter() - t0
    finally:
        if profiler:
            profiler.disable()
        gc.enable()


def built(cases, lib):
    return [tuple(build(x, lib) for x in case) for case in cases]


def time_op(op, cases, repeats):
    """(pycute, cute_py pass, cute_py again) seconds per pass, each the best of ``repeats``, alternating."""
    cute_fn, py_fn = CUTE_FNS[op], PY_FNS.get(op)
    first, again, py = [], [], []
    for _ in range(repeats):
        args = built(cases, cute)                      # fresh objects: nothing of an earlier pass is reused
        first.append(run_pass(cute_fn, args))
        again.append(run_pass(cute_fn, args))
        if py_fn:
            py.append(run_pass(py_fn, built(cases, pycute)))
    return min(first), min(again), (min(py) if py else None)


def profile_op(op, cases, top=10):
    prof = cProfile.Profile()
    run_pass(CUTE_FNS[op], built(cases, cute), prof)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    text = out.getvalue()
    return text[text.find("   ncalls"):].rstrip()


# -- report ------------------------------------------------------------------


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def first_pass_child(op, lib_name, path):
    """In a fresh process: build the op's operands for one library and time one pass (seconds, printed)."""
    with open(path, "rb") as f:
        cases = pickle.load(f)[op]
    lib, fns = (cute, CUTE_FNS) if lib_name == "cute_py" else (pycute, PY_FNS)
    print(run_pass(fns[op], built(cases, lib)))


def first_pass(work, runs):
    """{op: (pycute seconds, cute_py seconds)}: the median over ``runs`` fresh processes of one pass each."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "work.pickle")
        with open(path, "wb") as f:
            pickle.dump(work, f)
        for op in work:
            if op not in PY_FNS:
                continue
            times = {"pycute": [], "cute_py": []}
            for _ in range(runs):
                for lib, t in times.items():
                    t.append(float(subprocess.run([sys.executable, __file__, "--first-pass-child", op, lib, path],
                                                  capture_output=True, text=True, check=True).stdout))
            out[op] = (statistics.median(times["pycute"]), statistics.median(times["cute_py"]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=3000, help="operand sets per op family")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", type=int, default=0, metavar="K",
                    help="cProfile cute_py on the K ops with the lowest speedup")
    ap.add_argument("--first-pass", type=int, default=0, metavar="N",
                    help="also time one pass per op and library in N fresh processes each (median, alternating)")
    ap.add_argument("--first-pass-child", nargs=3, metavar=("OP", "LIB", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    opts = ap.parse_args(argv)
    if opts.first_pass_child:
        return first_pass_child(*opts.first_pass_child)

    rng, t0 = random.Random(opts.seed), time.perf_counter()
    work = {op: make_workload(rng, op, opts.cases) for op in GENERATORS}
    total = sum(map(len, work.values()))
    print(f"workload: {total} operand sets in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    rows = []
    for op, cases in work.items():
        first, again, py = time_op(op, cases, opts.repeats)
        bad = disagreements(op, cases) if py else []
        for case, rc, rp in bad[:20]:
            print(f"DISAGREE {op}{case}: cute_py {rc}  pycute {rp}", file=sys.stderr)
        if len(bad) > 20:
            print(f"DISAGREE {op}: ... and {len(bad) - 20} more", file=sys.stderr)
        rows.append((op, len(cases), py, first, again, len(bad)))

    us = lambda t, n: f"{1e6 * t / n:.1f}" if t else "—"  # noqa: E731
    x = lambda a, b: f"{a / b:.2f}x" if a else "—"  # noqa: E731
    compared = [r for r in rows if r[2]]
    gm_first = geomean([r[2] / r[3] for r in compared])
    gm_again = geomean([r[2] / r[4] for r in compared])
    try:
        cutlass = metadata.version("nvidia-cutlass")
    except metadata.PackageNotFoundError:
        cutlass = "?"
    lines = [
        f"# cute_py vs pycute: layout algebra speed ({datetime.date.today()})", "",
        f"- machine: {platform.platform()} ({platform.machine()}), {os.cpu_count()} CPUs",
        f"- python: {platform.python_implementation()} {platform.python_version()}",
        f"- cute_py {cute.__version__}; pycute from nvidia-cutlass {cutlass}",
        f"- workload: seed {opts.seed}, {opts.cases} operand sets per op requested ({total} generated); "
        f"best of {opts.repeats} repeats",
        "- µs per call, averaged over the op's workload; speedup = pycute / cute_py; pass = one pass over",
        "  freshly built operands, again = a second pass over the same operands (the algebra caches nothing)", "",
        "| op | cases | pycute µs | cute_py pass µs | cute_py again µs | speedup pass | speedup again | disagree |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for op, n, py, first, again, nbad in rows:
        cells = [op, n, us(py, n), us(first, n), us(again, n), x(py, first), x(py, again), nbad if py else "—"]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    below = [r[0] for r in compared if r[2] / r[3] < 3]
    verdict = lambda g: "met" if g >= 3 else "NOT met"  # noqa: E731
    lines += [
        "", f"Geometric mean speedup over the {len(compared)} compared ops: "
        f"**pass {gm_first:.2f}x**, **again {gm_again:.2f}x**.", "",
        f"Target (cute_py >= 3x faster than pycute): pass {verdict(gm_first)}, again {verdict(gm_again)}. "
        f"Ops below 3x on a pass: {', '.join(below) or 'none'}.",
    ]
    if opts.first_pass:
        fp = first_pass(work, opts.first_pass)
        gm = geomean([py / cu for py, cu in fp.values()])
        lines += ["", f"## True first pass: one pass per op and library in a fresh process "
                  f"(median of {opts.first_pass} processes)", "",
                  "| op | cases | pycute µs | cute_py µs | speedup |", "|---|---:|---:|---:|---:|"]
        for op, (py, cu) in fp.items():
            n = len(work[op])
            lines.append(f"| {op} | {n} | {us(py, n)} | {us(cu, n)} | {x(py, cu)} |")
        lines += ["", f"Geometric mean first-pass speedup: **{gm:.2f}x** (target 3x: {verdict(gm)})."]
    for op, n, *_ in sorted(compared, key=lambda r: r[2] / r[3])[:opts.profile]:
        lines += ["", f"## cProfile: cute_py {op}, one pass, {n} calls, top 10 by tottime", "",
                  "```", profile_op(op, work[op]), "```"]
    report = "\n".join(lines) + "\n"
    print(report)
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / f"{datetime.date.today()}-algebra-speed.md"
    path.write_text(report, encoding="utf-8")
    print(f"written to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
