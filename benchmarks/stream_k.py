"""Stream-K against the data-parallel schedule of the same tile, and cuBLAS, on shapes whose last wave is partial.

For each shape (TN, bf16) the heuristic's spec (``cute_py.selection.heuristic``) runs as it is and again with
``scheduler="stream_k"`` (split-K dropped: stream-K splits K itself), and ``torch.matmul`` runs beside them; the
three alternate batch by batch (10 calls between CUDA events, inputs rotated past the L2; medians), as
``gemm_vs_cublas.py`` times. The table gives each one's TFLOP/s, the tiles and waves of the tile schedule
(``T / 132``), stream-K / data-parallel and stream-K / cuBLAS, and checks stream-K's D against the
data-parallel one (exact on small integers). Writes ``<out-dir>/<date>-<tag>.json`` and ``.md``.

    python benchmarks/stream_k.py [--shapes 2048,2048,2048 512,4096,4096] [--tag h200-stream-k]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import CALLS, BatchTimer, alternate, batch_runners, parse_shape, warm_up  # noqa: E402

SHAPES = ["2048,2048,2048", "512,4096,4096", "512,8192,1024", "4096,8192,1024", "1024,4096,4096", "128,14336,4096",
          "512,14336,4096", "4096,4096,4096", "3072,3072,4096", "8192,8192,8192"]


def bench(torch, M, N, K, burst):
    import cute_py
    from cute_py.problem import Problem
    from cute_py.selection import heuristic
    sets = max(2, min(8, int(200e6 // ((M * K + N * K) * 2)) + 1))
    a = [torch.randint(-3, 4, (M, K), device="cuda").bfloat16() for _ in range(sets)]
    w = [torch.randint(-3, 4, (N, K), device="cuda").bfloat16() for _ in range(sets)]
    out = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in ("dp", "sk", "cublas")}
    dp = heuristic(Problem.from_arrays(a[0], w[0].t(), out=out["dp"]))
    sk = dp.replace(scheduler="stream_k", split_k=1)
    calls = {"dp": lambda i: cute_py.gemm(a[i % sets], w[i % sets].t(), out=out["dp"], spec=dp),
             "sk": lambda i: cute_py.gemm(a[i % sets], w[i % sets].t(), out=out["sk"], spec=sk),
             "cublas": lambda i: torch.matmul(a[i % sets], w[i % sets].t(), out=out["cublas"])}
    row = {"M": M, "N": N, "K": K, "dp_spec": dp.name, "sk_spec": sk.name}
    warm_up(torch, row, calls, 3)
    torch.cuda.synchronize()
    row["exact"] = bool(torch.equal(out["dp"], out["sk"]) and torch.equal(out["dp"], out["cublas"]))
    times = alternate(batch_runners(BatchTimer(torch), calls), count=burst)
    flops = 2.0 * M * N * K
    for name, t in times.items():
        row[f"{name}_tflops"] = flops / statistics.median(t) / 1e12
    bm, bn, _ = dp.tile
    row["tiles"] = math.ceil(M / bm) * math.ceil(N / bn)
    row["waves"] = row["tiles"] / torch.cuda.get_device_properties(0).multi_processor_count
    return row


def write_tables(torch, args, rows, title, head, cells, ref, ref_name) -> None:
    """``<out-dir>/<date>-<tag>.json`` and ``.md``: the rows, and a table of their ``cells(row)`` (under ``head``)
    followed by data-parallel, stream-K and ``ref`` TFLOP/s, their ratios and exactness."""
    base = os.path.join(args.out_dir, f"{_dt.date.today().isoformat()}-{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(0), "calls_per_batch": CALLS, "burst": args.burst, "rows": rows},
                  f, indent=1)
    cols = head.count("|") - 1
    lines = [f"# {title}, {args.burst} alternating batches of {CALLS}", "",
             f"{head} data-parallel TFLOP/s | stream-K | {ref_name} | SK / DP | SK / {ref_name} | exact |",
             "|" + "---|" * (cols + 6)]
    for r in rows:
        dp, sk, rf = (r.get(f"{n}_tflops", float("nan")) for n in ("dp", "sk", ref))
        lines.append(f"{cells(r)} {dp:.0f} | {sk:.0f} | {rf:.0f} | {sk / dp:.3f} | {sk / rf:.3f} | {r['exact']} |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=SHAPES, metavar="M,N,K")
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--tag", default="stream-k")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    import torch
    rows = []
    for text in args.shapes:
        M, N, K = parse_shape(text)
        rows.append(bench(torch, M, N, K, args.burst))
        r = rows[-1]
        print(f"{M}x{N}x{K}: dp {r.get('dp_tflops', 0):.0f} sk {r.get('sk_tflops', 0):.0f} cublas "
              f"{r.get('cublas_tflops', 0):.0f} TFLOP/s exact {r['exact']}", flush=True)
    title = f"Stream-K vs data-parallel tiles ({torch.cuda.get_device_name(0)}, bf16 TN)"
    head = "| M x N x K | tile spec (heuristic) | tiles | waves |"

    def cells(r):
        return f"| {r['M']}x{r['N']}x{r['K']} | {r['dp_spec']} | {r['tiles']} | {r['waves']:.2f} |"
    write_tables(torch, args, rows, title, head, cells, "cublas", "cuBLAS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
