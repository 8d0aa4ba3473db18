"""cute_py.grouped_gemm and cute_py.bmm vs PyTorch (torch._grouped_mm, a torch.matmul loop, torch.bmm), same run,
alternating.

Mixture-of-experts shapes of real models, bf16, a (tokens * top_k, hidden) row-major, expert weights stored
(E, N, K) and passed as ``w.transpose(-2, -1)`` (K-major, as torch._grouped_mm wants them), int32 ``offs``:

- DeepSeek-V3: E = 256 routed experts, hidden 7168, expert intermediate 2048, top-8;
- Qwen3-30B-A3B: E = 128, hidden 2048, intermediate 768, top-8;
- Mixtral-8x7B: E = 8, hidden 4096, intermediate 14336, top-2;

at 4096 and 16384 tokens, with uniform routing and Zipf-skewed routing (expert popularity ~ 1 / rank, a random
permutation of the ranks; each token picks top_k distinct experts by Gumbel top-k; seed fixed), up projection
(N = 2 * intermediate, K = hidden) and down (N = hidden, K = intermediate). TFLOP/s count real rows only
(2 * tokens * top_k * N * K). cute_py runs with ``check_offs=False`` (no host read of the offsets, like torch).

Batched: B in {8, 32, 128} x (M, N, K) in {(512, 512, 512), (1024, 1024, 128), (4096, 4096, 64)}, a (B, M, K)
row-major, b (B, K, N) K-major (q @ k^T), against torch.bmm.

Batches of 10 calls between CUDA events, libraries alternating batch by batch; medians ("burst"), and with
``--sustained S`` the same for S seconds per case. Writes ``<out-dir>/<date>-<tag>.{json,md,png}``.

    python benchmarks/grouped_vs_torch.py --tag h100-grouped --fp8 --wgrad
    python benchmarks/grouped_vs_torch.py --models qwen3 --tokens 4096 --no-bmm
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gemm_vs_cublas import BatchTimer, alternate, batch_runners, first_line, stats, warm_up  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"deepseek-v3": (256, 7168, 2048, 8), "qwen3-30b-a3b": (128, 2048, 768, 8), "mixtral-8x7b": (8, 4096, 14336, 2)}
BMM = [(B, M, N, K) for B in (8, 32, 128) for M, N, K in ((512, 512, 512), (1024, 1024, 128), (4096, 4096, 64))]


def expert_loads(E: int, tokens: int, top_k: int, routing: str, seed: int = 0) -> list:
    """Tokens per expert: each token picks ``top_k`` distinct experts (Gumbel top-k over the log popularity:
    uniform, or Zipf ~ 1 / rank over a random permutation of the experts)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    logp = np.zeros(E) if routing == "uniform" else -np.log(1.0 + rng.permutation(E))
    keys = logp[None, :] + rng.gumbel(size=(tokens, E))
    picks = np.argpartition(-keys, top_k - 1, axis=1)[:, :top_k]
    return np.bincount(picks.ravel(), minlength=E).tolist()


def moe_case(torch, model, tokens, routing, proj, *, burst, sustained, spec=None, fp8=False) -> dict:
    """One MoE row (``fp8``: e4m3 with row-wise scales and fast accumulation on both sides, against
    torch._scaled_grouped_mm; the loop then runs bf16 matmuls)."""
    import cute_py
    E, hidden, inter, top_k = MODELS[model]
    N, K = (2 * inter, hidden) if proj == "up" else (hidden, inter)
    loads = expert_loads(E, tokens, top_k, routing)
    if fp8:                                            # torch's fp8 grouped kernel wants 16-row multiples per group
        loads = [x + (-x) % 16 for x in loads]
    M = sum(loads)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16) * 0.05
    b = w.transpose(-2, -1)
    offs = torch.tensor([sum(loads[:g + 1]) for g in range(E)], dtype=torch.int32, device="cuda")
    if fp8:
        return _fp8_moe(torch, cute_py, a, w, offs, {"kind": "moe", "model": model, "tokens": tokens,
                        "routing": routing, "proj": f"{proj} e4m3", "E": E, "M": M, "N": N, "K": K}, burst, sustained)
    outs = {k: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for k in ("cute_py", "torch", "loop")}
    bounds = [0] + offs.tolist()
    row = {"kind": "moe", "model": model, "tokens": tokens, "routing": routing, "proj": proj, "E": E, "M": M,
           "N": N, "K": K, "max_load": max(loads), "empty_groups": sum(1 for x in loads if x == 0),
           "spec": spec.name if spec else _chosen(cute_py, a, b, offs)}

    def loop(i):
        for g in range(E):
            if bounds[g + 1] > bounds[g]:
                torch.matmul(a[bounds[g]:bounds[g + 1]], b[g], out=outs["loop"][bounds[g]:bounds[g + 1]])

    calls = {"cute_py": lambda i: cute_py.grouped_gemm(a, b, offs, out=outs["cute_py"], check_offs=False, spec=spec),
             "torch": lambda i: _drop(torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)),
             "loop": loop}
    return _measure(torch, row, calls, 2.0 * M * N * K, burst, sustained,
                    check=lambda: _rel(torch, outs["cute_py"], torch._grouped_mm(a, b, offs=offs)))


def wgrad_case(torch, model, tokens, routing, *, burst, sustained) -> dict:
    """The up projection's weight gradient, dW[g] = x[rows of g].t() @ dy[rows of g]: groups along K."""
    import cute_py
    E, hidden, inter, top_k = MODELS[model]
    loads = expert_loads(E, tokens, top_k, routing)
    K = sum(loads)
    M, N = hidden, 2 * inter
    x = torch.randn(K, M, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor([sum(loads[:g + 1]) for g in range(E)], dtype=torch.int32, device="cuda")
    out = torch.empty(E, M, N, device="cuda", dtype=torch.bfloat16)
    from cute_py.problem_groups import grouped_problem
    from cute_py.selection import select
    row = {"kind": "wgrad", "model": model, "tokens": tokens, "routing": routing, "proj": "up dW", "E": E, "M": M,
           "N": N, "K": K, "spec": select(grouped_problem(x.t(), dy, offs, check_offs=False)).name}
    calls = {"cute_py": lambda i: cute_py.grouped_gemm(x.t(), dy, offs, out=out, check_offs=False),
             "torch": lambda i: _drop(torch._grouped_mm(x.t(), dy, offs=offs, out_dtype=torch.bfloat16))}
    return _measure(torch, row, calls, 2.0 * M * N * K, burst, sustained,
                    check=lambda: _rel(torch, out, torch._grouped_mm(x.t(), dy, offs=offs, out_dtype=torch.bfloat16)))


def _drop(x) -> None:
    """Discard a result: a batch of calls keeps its calls' results alive until it ends, and torch's grouped GEMMs
    (which take no ``out``) would hold ten outputs of up to 15 GB."""
    del x


def _fp8_moe(torch, cute_py, a, w, offs, row, burst, sustained) -> dict:
    f8 = torch.float8_e4m3fn
    a8, b8 = a.to(f8), w.to(f8).transpose(-2, -1)
    sa = torch.rand(a.shape[0], device="cuda") + 0.5
    sb = torch.rand(w.shape[0], w.shape[1], device="cuda") + 0.5
    out = torch.empty(a.shape[0], w.shape[1], device="cuda", dtype=torch.bfloat16)
    calls = {"cute_py": lambda i: cute_py.grouped_gemm(a8, b8, offs, scale_a=sa, scale_b=sb, use_fast_accum=True,
                                                       out=out, check_offs=False),
             "torch": lambda i: _drop(torch._scaled_grouped_mm(a8, b8, sa, sb, offs=offs, out_dtype=torch.bfloat16,
                                                               use_fast_accum=True))}
    from cute_py.problem_groups import grouped_problem
    from cute_py.selection import select
    row["spec"] = select(grouped_problem(a8, b8, offs, scale_a=sa, scale_b=sb, fast_accum=True,
                                         check_offs=False)).name
    return _measure(torch, row, calls, 2.0 * row["M"] * row["N"] * row["K"], burst, sustained,
                    check=lambda: _rel(torch, out, torch._scaled_grouped_mm(a8, b8, sa, sb, offs=offs,
                                                                            out_dtype=torch.bfloat16,
                                                                            use_fast_accum=True)))


def bmm_case(torch, B, M, N, K, *, burst, sustained, spec=None) -> dict:
    import cute_py
    a = torch.randn(B, M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(B, N, K, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    outs = {k: torch.empty(B, M, N, device="cuda", dtype=torch.bfloat16) for k in ("cute_py", "torch")}
    calls = {"cute_py": lambda i: cute_py.bmm(a, b, out=outs["cute_py"], spec=spec),
             "torch": lambda i: torch.bmm(a, b, out=outs["torch"])}
    row = {"kind": "bmm", "B": B, "M": M, "N": N, "K": K, "spec": spec.name if spec else _chosen(cute_py, a, b)}
    return _measure(torch, row, calls, 2.0 * B * M * N * K, burst, sustained,
                    check=lambda: _rel(torch, outs["cute_py"], torch.bmm(a, b)))


def _chosen(cute_py, a, b, offs=None) -> str:
    """The name of the spec cute_py selects for these arrays."""
    from cute_py.problem_groups import bmm_problem, grouped_problem
    from cute_py.selection import select
    p = bmm_problem(a, b) if offs is None else grouped_problem(a, b, offs, check_offs=False)
    return select(p).name


def _rel(torch, x, ref) -> float:
    """||x - ref|| / ||ref||, in chunks along the first dimension (the outputs reach 15 GB)."""
    num = den = 0.0
    step = max(1, (1 << 28) // max(1, x[0].numel()))
    for i in range(0, x.shape[0], step):
        a, b = x[i:i + step].float(), ref[i:i + step].float()
        num += float((a - b).norm()) ** 2
        den += float(b.norm()) ** 2
    return (num / den) ** 0.5 if den else num ** 0.5


def _guarded(torch, case, *args, **kw) -> dict:
    """``case(torch, *args, **kw)``, or a row with the error when it fails (one case does not end the run)."""
    try:
        return case(torch, *args, **kw)
    except Exception as e:  # noqa: BLE001 - recorded in the report
        torch.cuda.empty_cache()
        return {"kind": "error", "case": f"{case.__name__}{args}", "error": first_line(e)}


def _measure(torch, row, calls, flops, burst, sustained, check) -> dict:
    warm_up(torch, row, calls, 3)
    if "cute_py" not in calls:
        return row
    if "torch" in calls:
        row["rel_err_vs_torch"] = check()
    runners = batch_runners(BatchTimer(torch), calls)
    row["modes"] = {}
    for label, kw in (("burst", {"count": burst}), ("sustained", {"seconds": sustained})):
        if not list(kw.values())[0]:
            continue
        res = {k: stats(t, flops) for k, t in alternate(runners, **kw).items()}
        for other in ("torch", "loop"):
            if other in res:
                res[f"ratio_{other}"] = res[other]["median_s"] / res["cute_py"]["median_s"]
        row["modes"][label] = res
    return row


def label(r) -> str:
    if r["kind"] == "wgrad":
        return f"{r['model']} {r['tokens']} {r['routing']} dW (K groups)"
    if r["kind"] == "bmm":
        return f"bmm B={r['B']} {r['M']}x{r['N']}x{r['K']}"
    return f"{r['model']} {r['tokens']} {r['routing']} {r['proj']}"


def _gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summary(rows, mode="burst") -> list:
    out = []
    for kind, other, bar, fp8 in (("moe", "torch", 1.1, False), ("moe", "loop", 1.5, False),
                                  ("bmm", "torch", 1.0, False), ("moe", "torch", 1.1, True),
                                  ("wgrad", "torch", 1.0, False)):
        rs = [r for r in rows if r["kind"] == kind and f"ratio_{other}" in r.get("modes", {}).get(mode, {})
              and (other != "loop" or r["E"] >= 8) and ("e4m3" in r.get("proj", "")) == fp8]
        xs = [r["modes"][mode][f"ratio_{other}"] for r in rs]
        if xs:
            name = {"torch": "torch.bmm" if kind == "bmm" else "torch._grouped_mm", "loop": "a torch.matmul loop"}[other]
            name = "torch._scaled_grouped_mm (e4m3, row-wise, fast accumulation)" if fp8 else name
            low = min(zip(xs, rs), key=lambda p: p[0])
            out.append(f"- {kind} vs {name} ({mode}): geometric mean {_gm(xs):.3f} (bar {bar}), min {low[0]:.3f} "
                       f"({label(low[1])}), {len(xs)} cases")
    return out


def table(rows, mode="burst") -> list:
    lines = ["| case | M (real rows) | N | K | cute_py TFLOP/s | torch TFLOP/s | loop TFLOP/s | vs torch | vs loop | "
             "rel. err vs torch | cute_py spec |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "error":
            lines.append(f"| {r['case']} | error: {r['error'][:80]} |")
            continue
        m = r.get("modes", {}).get(mode, {})

        def tf(k):
            return f"{m[k]['tflops']:.0f}" if k in m else r.get(f"{k}_error", "-")[:40]
        ratio = {k: f"{m[k]:.3f}" if k in m else "-" for k in ("ratio_torch", "ratio_loop")}
        M = f"{r['B']}x{r['M']}" if r["kind"] == "bmm" else r["M"]
        lines.append(f"| {label(r)} | {M} | {r['N']} | {r['K']} | {tf('cute_py')} | {tf('torch')} | {tf('loop')} | "
                     f"{ratio['ratio_torch']} | {ratio['ratio_loop']} | {r.get('rel_err_vs_torch', float('nan')):.1e} | "
                     f"{r.get('spec', '-').removeprefix('cute_gemm_sm90_')} |")
    return lines


def plot(rows, path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rs = [r for r in rows if "ratio_torch" in r.get("modes", {}).get("burst", {})]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(rs) + 1.5))
    xs = [r["modes"]["burst"]["ratio_torch"] for r in rs]
    colors = {"moe": "tab:blue", "bmm": "tab:orange", "wgrad": "tab:green"}
    ax.barh(range(len(rs)), xs, color=[colors[r["kind"]] for r in rs])
    ax.set_yticks(range(len(rs)), [label(r) for r in rs], fontsize=7)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.invert_yaxis()
    ax.set_xlabel("torch time / cute_py time\nblue: vs torch._grouped_mm (e4m3 rows: _scaled_grouped_mm); "
                  "green: weight gradients (K groups); orange: vs torch.bmm")
    ax.set_title("cute_py grouped and batched GEMM on the H100, bf16, burst")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--tokens", default="4096,16384")
    ap.add_argument("--routings", default="uniform,zipf")
    ap.add_argument("--no-bmm", action="store_true")
    ap.add_argument("--wgrad", action="store_true", help="also the up projection's weight gradient (groups along "
                    "K) against torch._grouped_mm of 2-D operands")
    ap.add_argument("--fp8", action="store_true", help="also e4m3 MoE rows (row-wise scales, fast accumulation) "
                    "against torch._scaled_grouped_mm")
    ap.add_argument("--no-moe", action="store_true")
    ap.add_argument("--burst", type=int, default=8)
    ap.add_argument("--sustained", type=float, default=0.0)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--tag", default="grouped")
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="render one report from earlier runs' JSON files "
                    "(no GPU needed)")
    args = ap.parse_args(argv)
    if args.merge:
        parts = [json.load(open(path)) for path in args.merge]
        data = {"device": parts[0]["device"], "torch": parts[0]["torch"], "rows": [r for d in parts for r in d["rows"]]}
        return _report(data, os.path.join(args.out_dir, f"{_dt.date.today().isoformat()}-{args.tag}"))
    import torch
    rows = []
    if not args.no_moe:
        for model in args.models.split(","):
            for tokens in map(int, args.tokens.split(",")):
                for routing in args.routings.split(","):
                    for proj in ("up", "down"):
                        rows.append(_guarded(torch, moe_case, model, tokens, routing, proj, burst=args.burst,
                                             sustained=args.sustained))
                        print(table(rows[-1:])[-1], flush=True)
                        torch.cuda.empty_cache()
                        if args.fp8:
                            rows.append(_guarded(torch, moe_case, model, tokens, routing, proj, burst=args.burst,
                                                 sustained=args.sustained, fp8=True))
                            print(table(rows[-1:])[-1], flush=True)
                            torch.cuda.empty_cache()
    if args.wgrad:
        for model in args.models.split(","):
            for tokens in map(int, args.tokens.split(",")):
                for routing in args.routings.split(","):
                    rows.append(_guarded(torch, wgrad_case, model, tokens, routing, burst=args.burst,
                                         sustained=args.sustained))
                    print(table(rows[-1:])[-1], flush=True)
                    torch.cuda.empty_cache()
    if not args.no_bmm:
        for B, M, N, K in BMM:
            rows.append(_guarded(torch, bmm_case, B, M, N, K, burst=args.burst, sustained=args.sustained))
            print(table(rows[-1:])[-1], flush=True)
            torch.cuda.empty_cache()
    data = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}
    return _report(data, os.path.join(args.out_dir, f"{_dt.date.today().isoformat()}-{args.tag}"))


def _report(data, stem) -> int:
    """Write ``stem``.json, .md and .png of ``data`` (device, torch version, rows) and print the summary."""
    rows = data["rows"]
    os.makedirs(os.path.dirname(stem), exist_ok=True)
    with open(stem + ".json", "w") as f:
        json.dump(data, f, indent=1)
    md = [f"# cute_py grouped and batched GEMM vs PyTorch ({data['device']}, torch {data['torch']})", "",
          "Written by benchmarks/grouped_vs_torch.py (method in its docstring).", "", "## Summary", ""]
    for mode in ("burst", "sustained"):
        md += summary(rows, mode)
    for mode in ("burst", "sustained"):
        if any(mode in r.get("modes", {}) for r in rows):
            md += ["", f"## {mode}", ""] + table(rows, mode)
    with open(stem + ".md", "w") as f:
        f.write("\n".join(md) + "\n")
    plot(rows, stem + ".png")
    print("\n".join(summary(rows) + summary(rows, "sustained")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
