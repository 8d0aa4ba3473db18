"""Stream-K over batches and groups against their data-parallel group schedulers, and PyTorch, on problems whose
last wave of tiles is partial.

For each case the spec cute_py selects runs as it is ("dp": the batch or group scheduler) and again with
``scheduler="stream_k"`` (split-K dropped), beside the PyTorch equivalent (``torch.bmm``, ``torch._grouped_mm``
with offsets along M or K); the three alternate batch by batch (10 calls between CUDA events; medians), as
``gemm_vs_cublas.py`` times. Inputs are small integers, so the two cute_py results must be equal, and equal to
PyTorch's. The table gives TFLOP/s, the tiles and waves of the data-parallel walk (``T / 132``), stream-K / dp and
stream-K / torch. Writes ``<out-dir>/<date>-<tag>.json`` and ``.md``.

    python benchmarks/stream_k_groups.py [--tag h200-stream-k-groups]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import BatchTimer, alternate, batch_runners, warm_up  # noqa: E402
from stream_k import write_tables  # noqa: E402

CASES = [  # (form, groups, M or rows per group, N, K or K per group)
    ("batch", 3, 1024, 1536, 4096), ("batch", 4, 1024, 1024, 8192), ("batch", 16, 384, 640, 2048),
    ("moe", 8, 520, 2048, 2048), ("moe", 16, 200, 1536, 4096), ("moe", 8, 384, 2048, 4096),
    ("wgrad", 4, 1024, 1024, 4096), ("wgrad", 8, 1024, 1536, 1024), ("wgrad", 16, 768, 1024, 512),
]


def case(torch, form, G, M, N, K, burst):
    import cute_py
    from cute_py.problem_groups import bmm_problem, grouped_problem
    from cute_py.selection import select

    def ints(*shape):
        return torch.randint(-3, 4, shape, device="cuda").bfloat16()

    if form == "batch":
        a, b = ints(G, M, K), ints(G, N, K).transpose(1, 2)
        problem, flops = bmm_problem(a, b), 2.0 * G * M * N * K
        run = lambda spec: cute_py.bmm(a, b, spec=spec)                       # noqa: E731
        ref = lambda: torch.bmm(a, b)                                          # noqa: E731
    else:
        offs = torch.arange(1, G + 1, device="cuda", dtype=torch.int32) * (M if form == "moe" else K)
        if form == "moe":                                  # G experts of M rows each: D (G M, N)
            a, b = ints(G * M, K), ints(G, N, K).transpose(1, 2)
        else:                                              # weight gradient: G groups of K rows each, D (G, M, N)
            a, b = ints(G * K, M).t(), ints(G * K, N)
        problem, flops = grouped_problem(a, b, offs, check_offs=False), 2.0 * G * M * N * K
        run = lambda spec: cute_py.grouped_gemm(a, b, offs, spec=spec, check_offs=False)   # noqa: E731
        ref = lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)      # noqa: E731
    dp = select(problem)
    sk = dp.replace(scheduler="stream_k", split_k=1)
    outs = {}
    calls = {"dp": lambda i: outs.__setitem__("dp", run(dp)), "sk": lambda i: outs.__setitem__("sk", run(sk)),
             "torch": lambda i: outs.__setitem__("torch", ref())}
    row = {"form": form, "G": G, "M": M, "N": N, "K": K, "dp_spec": dp.name, "sk_spec": sk.name}
    warm_up(torch, row, calls, 3)
    torch.cuda.synchronize()
    row["exact"] = bool(torch.equal(outs["dp"], outs["sk"]) and torch.equal(outs["dp"], outs["torch"]))
    times = alternate(batch_runners(BatchTimer(torch), calls), count=burst)
    for name, t in times.items():
        row[f"{name}_tflops"] = flops / statistics.median(t) / 1e12
    row["tiles"] = G * math.ceil(M / dp.tile[0]) * math.ceil(N / dp.tile[1])    # every group has G's tiles
    row["waves"] = row["tiles"] / torch.cuda.get_device_properties(0).multi_processor_count
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--tag", default="stream-k-groups")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    import torch
    rows = []
    for c in CASES:
        rows.append(case(torch, *c, args.burst))
        r = rows[-1]
        print(f"{c}: dp {r.get('dp_tflops', 0):.0f} sk {r.get('sk_tflops', 0):.0f} torch {r.get('torch_tflops', 0):.0f}"
              f" TFLOP/s exact {r['exact']}", flush=True)
    title = f"Stream-K over batches and groups vs their group schedulers ({torch.cuda.get_device_name(0)}, bf16)"
    head = "| form | groups | M | N | K | tiles | waves |"

    def cells(r):
        return f"| {r['form']} | {r['G']} | {r['M']} | {r['N']} | {r['K']} | {r['tiles']} | {r['waves']:.2f} |"
    write_tables(torch, args, rows, title, head, cells, "torch", "torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
