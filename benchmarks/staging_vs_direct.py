"""Operands TMA cannot read: the staging copy + TMA kernel against the kernel reading them itself, and cuBLAS.

For each shape (TN: a row-major, b a transposed row-major; K chosen so the rows allow 2-, 4- or 8-byte loads,
i.e. K odd, K = 2 mod 4, K = 4 mod 8), three calls are timed alternately on the same rotated inputs: the
heuristic's spec with the staging copy (what ``cute_py.gemm`` does by default), the same spec with
``load_a``/``load_b`` set to the widest load the rows allow (cute_py.emit.loads), and torch.matmul. Each sample
is a batch of 10 back-to-back calls between CUDA events; medians per call. Writes ``<out-dir>/<date>-<tag>.md``
and ``.json``.

    python benchmarks/staging_vs_direct.py [--burst 15] [--tag h100-staging-vs-direct]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import CALLS, BatchTimer, alternate, input_sets, make_inputs  # noqa: E402

SIZES = ((1024, 1024), (2048, 2048), (4096, 4096), (8192, 8192), (128, 4096), (512, 14336))
K_BASE = (1024, 4096)
ALIGNS = {2: 1, 4: 2, 8: 4}          # load bytes -> K offset from a multiple of 8 that gives that alignment


def cases():
    for (M, N) in SIZES:
        for kb in K_BASE:
            for load, dk in ALIGNS.items():
                yield M, N, kb - 8 + dk, load


def run_case(torch, M, N, K, load, burst):
    import cute_py
    from cute_py.problem import Problem
    from cute_py.selection import heuristic
    sets = input_sets(M, N, K)
    ins = make_inputs(torch, M, N, K, "tn", sets)
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    p = Problem.from_arrays(*ins[0], out=outs[0])
    assert p.align == (load, load), (M, N, K, p.align)
    staged = heuristic(p)
    direct = staged.replace(load_a=load, load_b=load)
    calls = {"staged": lambda a, b: cute_py.gemm(a, b, out=outs[0], spec=staged),
             "direct": lambda a, b: cute_py.gemm(a, b, out=outs[1], spec=direct),
             "cublas": lambda a, b: torch.matmul(a, b, out=outs[2])}
    for f in calls.values():
        for i in range(2 * CALLS):
            f(*ins[i % sets])
    torch.cuda.synchronize()
    ref = torch.matmul(ins[0][0].float(), ins[0][1].float())
    errs = {}
    for k, f in calls.items():
        f(*ins[0])
        errs[k] = float((outs[list(calls).index(k)].float() - ref).norm() / ref.norm())
    timer, counter = BatchTimer(torch), {"i": 0}

    def batch(f):
        def run():
            base = counter["i"]
            counter["i"] += CALLS
            return timer(lambda: [f(*ins[(base + j) % sets]) for j in range(CALLS)])
        return run
    t = alternate({k: batch(f) for k, f in calls.items()}, count=burst)
    fl = 2.0 * M * N * K
    tf = {k: fl / statistics.median(v) / 1e12 for k, v in t.items()}
    return {"M": M, "N": N, "K": K, "load": load, "spec": staged.name, "tflops": tf, "rel_err": errs,
            "staged_vs_cublas": tf["staged"] / tf["cublas"], "direct_vs_cublas": tf["direct"] / tf["cublas"],
            "direct_vs_staged": tf["direct"] / tf["staged"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--burst", type=int, default=15)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--tag", default="h100-staging-vs-direct")
    args = ap.parse_args(argv)
    import torch
    rows = []
    for M, N, K, load in cases():
        r = run_case(torch, M, N, K, load, args.burst)
        rows.append(r)
        print(f"{M}x{N}x{K} load {load}: staged {r['tflops']['staged']:.0f} direct {r['tflops']['direct']:.0f} "
              f"cuBLAS {r['tflops']['cublas']:.0f} TFLOP/s; direct/staged {r['direct_vs_staged']:.3f}", flush=True)
    date = _dt.date.today().isoformat()
    lines = ["# Staging copy vs loads without TMA vs cuBLAS (bf16, TN, rows TMA cannot read)", "",
             f"{date}, {torch.cuda.get_device_name()}, torch {torch.__version__}; burst {args.burst} alternating "
             f"batches of {CALLS} calls, medians.", "",
             "| M | N | K | load (B) | spec (staged) | staged | direct | cuBLAS | direct / staged | staged / cuBLAS |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['M']} | {r['N']} | {r['K']} | {r['load']} | {r['spec']} | {r['tflops']['staged']:.0f} | "
              f"{r['tflops']['direct']:.0f} | {r['tflops']['cublas']:.0f} | {r['direct_vs_staged']:.3f} | "
              f"{r['staged_vs_cublas']:.2f} |" for r in rows]
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, f"{date}-{args.tag}")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(stem + ".json", "w") as f:
        json.dump({"date": date, "device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
