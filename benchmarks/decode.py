"""Decode-size M: cute_py against torch.matmul on ``x @ W.T`` (x (M, K) row-major, W (N, K) row-major as
nn.Linear stores it), kernel time in CUDA-graph replay, with the swap-AB variants beside the heuristic's choice.

Swap-AB computes ``D^T = W @ x^T`` with the same kernels: ``cute_py.gemm(W, x.t(), out=out.t())``, the weights as
the kernel's A (their N rows take wgmma's 64-row M), the tokens as its B (wgmma's N, in steps of 8), D written
through its transposed layout (column-major D^T: the direct epilogue). Runners per shape:

- ``torch``: ``torch.matmul(x, W.t())``;
- ``swap<BM>_sk``: swap-AB, tile (BM, BN, 64) with BN = M rounded up to 8, stream-K over the tiles (every SM
  streams weights: the tiles' k-blocks are shared out evenly);
- ``swap<BM>_split``: swap-AB, (BM, BN, 64) tiles, split-K filling the SMs (the CTAs a wave holds / the tiles,
  at most 8, at least 4 k-blocks a split); ``swap64_split_bk128``: the same with 128-wide K tiles;
- ``default``: ``cute_py.gemm(x, W.t(), spec=select(problem))``, the unswapped heuristic's spec;
- ``split_fill``: that spec with split-K filling the SMs (tiles x splits <= the SMs, at most 8, 4 k-blocks a split);
- ``auto``: the public path (``cute_py.gemm(x, W.t())`` with no spec), which swaps for M <= 32
  (``cute_py.selection.swaps_ab``).

Each runner's batch of 10 calls is captured once into a CUDA graph; the replays alternate (medians of ``--rounds``),
inputs rotated past the L2 (``gemm_vs_cublas.input_sets``). Reports microseconds per call, the ratio torch /
cute_py (> 1: faster), and the HBM bandwidth achieved (weights + activations + output bytes / time). Writes
``<out-dir>/<date>-<tag>.json`` and ``.md``.

    python benchmarks/decode.py [--m 1 16 128] [--nk 4096,4096] [--variants default swap64_sk] [--tag h200-decode]
    python benchmarks/decode.py --fp8 row-fast --variants default auto
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

from gemm_vs_cublas import CALLS, BatchTimer, alternate, batch_runners, capture, first_line, input_sets  # noqa: E402

MS = (1, 8, 16, 32, 64, 128, 256)
NKS = ((4096, 4096), (14336, 4096), (4096, 14336), (7168, 2048), (2112, 7168), (24576, 1536))
VARIANTS = ("default", "auto", "split_fill", "swap64_sk", "swap128_sk", "swap64_split", "swap128_split",
            "swap64_split_bk128")
HBM = 4.8e12


def swap_spec(variant: str, M: int, N: int, K: int, sm_count: int):
    """The spec of a swap-AB variant for ``x @ W.T`` of (M, N, K): the kernel's problem is (N, M, K)."""
    from cute_py.emit import GemmSpec
    bn = min(256, max(8, -(-M // 8) * 8))
    bm = 128 if variant.startswith("swap128") else 64
    bk = 128 if variant.endswith("bk128") else 64
    c = "(M,N):(N,1)" if M == 1 else "(M,N):(1,M)"          # D^T of one token is a column: read as row-major
    kw = dict(a="(M,K):(K,1)", b="(N,K):(K,1)", c=c, epilogue="direct", tile=(bm, bn, bk), consumers=bm // 64)
    if variant.endswith("_sk"):
        return GemmSpec(scheduler="stream_k", **kw)
    tiles = -(-N // bm)
    split = max(1, min(8, sm_count // tiles, -(-K // bk) // 4))
    return GemmSpec(split_k=split, **kw)


def fp8_row(torch, M, N, K, variants, rounds, fp8) -> dict:
    """fp8 (e4m3) with per-tensor or row-wise scales, fast accumulation or not (``fp8``: "tensor", "row",
    "tensor-fast", "row-fast"): ``scaled_gemm`` with the unswapped heuristic's spec ("default") and without a spec
    ("auto") against ``torch._scaled_mm``."""
    import cute_py
    from cute_py.problem import Problem
    from cute_py.selection import select
    mode, fast = fp8.split("-")[0], fp8.endswith("-fast")
    sets = input_sets(M, N, K, itemsize=1)
    f8 = torch.float8_e4m3fn
    xs = [torch.randn(M, K, device="cuda").to(f8) for _ in range(sets)]
    ws = [(torch.randn(N, K, device="cuda") * 0.05).to(f8) for _ in range(sets)]
    if mode == "tensor":
        sa, sb = torch.ones((), device="cuda"), torch.ones((), device="cuda")
    else:
        sa, sb = torch.rand(M, 1, device="cuda") + 0.5, torch.rand(1, N, device="cuda") + 0.5
    outs = {v: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for v in ("torch",) + tuple(variants)}
    row = {"M": M, "N": N, "K": K, "fp8": fp8, "specs": {}, "us": {}, "errors": {}}
    calls = {"torch": lambda i, s: torch._scaled_mm(xs[i % sets], ws[i % sets].t(), scale_a=sa, scale_b=sb,
                                                    out_dtype=torch.bfloat16, use_fast_accum=fast)}
    spec = select(Problem.from_arrays(xs[0], ws[0].t(), scale_a=sa, scale_b=sb, fast_accum=fast,
                                      out=outs["torch"], op="scaled_gemm"))
    for v in variants:
        calls[v] = (lambda i, s, v=v: cute_py.scaled_gemm(xs[i % sets], ws[i % sets].t(), sa, sb, out=outs[v],
                                                          use_fast_accum=fast, stream=s,
                                                          spec=spec if v == "default" else None))
        row["specs"][v] = spec.name if v == "default" else "(selected)"
    return time_graphs(torch, row, calls, outs, lambda: torch._scaled_mm(
        xs[(CALLS - 1) % sets], ws[(CALLS - 1) % sets].t(), scale_a=sa, scale_b=sb, out_dtype=torch.float32,
        use_fast_accum=fast), rounds, 1)


def shape_row(torch, M, N, K, variants, rounds, sm_count, w_major="K", eager=False) -> dict:
    import cute_py
    from cute_py.problem import Problem
    from cute_py.selection import select
    sets = input_sets(M, N, K)
    xs = [torch.randn(M, K, device="cuda", dtype=torch.bfloat16) for _ in range(sets)]
    ws = [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) * 0.05 for _ in range(sets)]
    if w_major == "N":                                   # W stored (K, N) row-major: W.t() of it is (N, K)
        ws = [w.t().contiguous().t() for w in ws]
    outs = {v: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for v in ("torch",) + tuple(variants)}
    row = {"M": M, "N": N, "K": K, "w_major": w_major, "specs": {}, "us": {}, "errors": {}}
    calls = {"torch": lambda i, s: torch.matmul(xs[i % sets], ws[i % sets].t(), out=outs["torch"])}
    for v in variants:
        try:
            if v == "default":
                spec = select(Problem.from_arrays(xs[0], ws[0].t(), out=outs[v]))
                calls[v] = (lambda i, s, spec=spec: cute_py.gemm(xs[i % sets], ws[i % sets].t(), out=outs["default"],
                                                                 spec=spec, stream=s))
            elif v == "split_fill":
                base = select(Problem.from_arrays(xs[0], ws[0].t(), out=outs[v]))
                tiles = -(-M // base.tile[0]) * -(-N // base.tile[1])
                spec = base.replace(split_k=max(1, min(8, sm_count // tiles, -(-K // base.tile[2]) // 4)),
                                    scheduler=None)
                calls[v] = (lambda i, s, spec=spec: cute_py.gemm(xs[i % sets], ws[i % sets].t(),
                                                                 out=outs["split_fill"], spec=spec, stream=s))
            elif v == "auto":
                spec = None
                calls[v] = lambda i, s: cute_py.gemm(xs[i % sets], ws[i % sets].t(), out=outs["auto"], stream=s)
            else:
                spec = swap_spec(v, M, N, K, sm_count)
                calls[v] = (lambda i, s, spec=spec, v=v: cute_py.gemm(ws[i % sets], xs[i % sets].t(),
                                                                      out=outs[v].t(), spec=spec, stream=s))
            row["specs"][v] = spec.name if spec is not None else "(selected)"
        except Exception as e:  # noqa: BLE001 - recorded; the other runners stand
            row["errors"][v] = first_line(e)
    return time_graphs(torch, row, calls, outs, lambda: torch.matmul(
        xs[(CALLS - 1) % sets].float(), ws[(CALLS - 1) % sets].float().t()), rounds, 2, eager)


def time_graphs(torch, row, calls, outs, reference, rounds, itemsize, eager=False) -> dict:
    """Capture each of ``calls`` as a graph of :data:`CALLS` calls, check cute_py's last D against ``reference()``
    (relative error), time the replays alternating; ``row`` with ``us``, ``rel_err``, ``bytes``. With ``eager``,
    also time batches of the plain calls (Python and launches included): ``us_eager``."""
    M, N, K = row["M"], row["N"], row["K"]
    graphs = {}
    for name, call in calls.items():
        try:
            graphs[name] = capture(torch, call)
        except Exception as e:  # noqa: BLE001
            row["errors"][name] = first_line(e)
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    ref = reference()
    for name in graphs:
        graphs[name].replay()
    torch.cuda.synchronize()
    row["rel_err"] = {n: float((outs[n].float() - ref).norm() / ref.norm()) for n in graphs if n != "torch"}
    timer = BatchTimer(torch)
    times = alternate({n: (lambda g=g: timer(g.replay)) for n, g in graphs.items()}, count=rounds)
    row["us"] = {n: statistics.median(t) * 1e6 for n, t in times.items()}
    if eager:
        runs = batch_runners(timer, {n: (lambda i, c=calls[n]: c(i, torch.cuda.current_stream())) for n in graphs})
        row["us_eager"] = {n: statistics.median(t) * 1e6 for n, t in alternate(runs, count=rounds).items()}
    row["bytes"] = itemsize * (M * K + N * K) + 2 * M * N
    return row


def table(rows, variants, key="us") -> list:
    head = "| M | N | K | torch us | " + " | ".join(f"{v} us (torch/it, HBM %)" for v in variants) + " |"
    lines = [head, "|" + "---|" * (4 + len(variants))]
    for r in rows:
        t = r[key].get("torch", float("nan"))
        cells = []
        for v in variants:
            us = r[key].get(v)
            if us is None:
                cells.append("error")
                continue
            cells.append(f"{us:.1f} ({t / us:.2f}, {r['bytes'] / (us * 1e-6) / HBM * 100:.0f}%)")
        lines.append(f"| {r['M']} | {r['N']} | {r['K']} | {t:.1f} | " + " | ".join(cells) + " |")
    lines += ["", "Geomean torch / cute_py per variant and M:", "",
              "| variant | " + " | ".join(f"M={m}" for m in sorted({r['M'] for r in rows})) + " | all |",
              "|" + "---|" * (2 + len({r['M'] for r in rows}))]
    for v in variants:
        cells = []
        for m in sorted({r["M"] for r in rows}) + [None]:
            xs = [r[key]["torch"] / r[key][v] for r in rows if (m is None or r["M"] == m) and v in r[key]
                  and "torch" in r[key]]
            cells.append(f"{math.exp(sum(map(math.log, xs)) / len(xs)):.2f}" if xs else "-")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", nargs="*", type=int, default=list(MS))
    ap.add_argument("--nk", nargs="*", default=[f"{n},{k}" for n, k in NKS], metavar="N,K")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--w-major", choices=("K", "N"), default="K",
                    help="W stored (N, K) row-major as nn.Linear does (K), or (K, N) row-major (N); bf16 only")
    ap.add_argument("--eager", action="store_true", help="also time plain calls (Python and launches included)")
    ap.add_argument("--fp8", choices=("tensor", "row", "tensor-fast", "row-fast"),
                    help="fp8 e4m3 against torch._scaled_mm (variants default and auto only)")
    ap.add_argument("--tag", default="decode")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    import torch
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for nk in args.nk:
        N, K = (int(x) for x in nk.split(","))
        for M in args.m:
            rows.append(fp8_row(torch, M, N, K, [v for v in args.variants if v in ("default", "auto")], args.rounds,
                                args.fp8) if args.fp8 else shape_row(torch, M, N, K, args.variants, args.rounds,
                                                                     sm_count, args.w_major, args.eager))
            r = rows[-1]
            print(M, N, K, {n: round(u, 1) for n, u in r["us"].items()}, r["errors"] or "", flush=True)
    base = os.path.join(args.out_dir, f"{_dt.date.today().isoformat()}-{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(0), "calls_per_graph": CALLS, "rounds": args.rounds,
                   "rows": rows}, f, indent=1)
    what = f"e4m3, {args.fp8} scales, vs torch._scaled_mm" if args.fp8 else "bf16"
    lines = [f"# Decode-size M: kernel time in CUDA-graph replay ({torch.cuda.get_device_name(0)}, {what}, x @ W.T, "
             f"{args.rounds} alternating rounds of {CALLS}-call graphs)", ""] + table(rows, args.variants)
    if args.eager and not args.fp8:
        lines += ["", "## Eager (batches of plain calls: Python and launches included)", ""] + table(
            rows, args.variants, "us_eager")
    if plot(rows, args.variants, base + ".png"):
        lines += ["", f"![torch / cute_py against M]({os.path.basename(base)}.png)"]
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def plot(rows, variants, path) -> bool:
    """torch / cute_py against M, one line per variant and (N, K) shape (graph replay; eager dashed)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    shapes = sorted({(r["N"], r["K"]) for r in rows})
    for vi, v in enumerate(variants):
        for key, style in (("us", "-"), ("us_eager", "--")):
            for si, nk in enumerate(shapes):
                pts = [(r["M"], r[key]["torch"] / r[key][v]) for r in rows
                       if (r["N"], r["K"]) == nk and key in r and v in r[key] and "torch" in r[key]]
                if pts:
                    ax.plot(*zip(*sorted(pts)), style, color=f"C{vi}", alpha=0.35 + 0.65 * (si == 0), marker=".",
                            label=f"{v}{' eager' if key == 'us_eager' else ''}" if si == 0 else None)
    ax.set_xscale("log", base=2)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("M (tokens)")
    ax.set_ylabel("torch time / cute_py time")
    ax.set_title("x @ W.T at decode sizes, one line per (N, K), H200")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


if __name__ == "__main__":
    sys.exit(main())
