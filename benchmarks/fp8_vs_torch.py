"""cute_py.scaled_gemm vs PyTorch's fp8 GEMMs (cuBLAS / CUTLASS inside torch), same run, alternating.

For each shape (TN: a (M, K) row-major e4m3, b = w.t() of a row-major w (N, K)) and scale mode:

- tensor: ``torch._scaled_mm`` with one f32 scale each;
- row: ``torch._scaled_mm`` with scale_a (M, 1) and scale_b (1, N);
- tensor-fast, row-fast: the same with ``use_fast_accum=True`` on both sides (fp8 accumulation over all of K);
- block: ``torch.nn.functional.scaled_mm`` with ``ScalingType.BlockWise1x128`` (scale_a (M, K/128),
  M-major) and ``BlockWise128x128`` (scale_b (K/128, N/128)) where this torch has it; cute_py takes the same
  scale arrays.

Both write bf16. Inputs rotate over enough sets to exceed the L2 (as gemm_vs_cublas.py); batches of 10 calls
between CUDA events, the two libraries alternating batch by batch; medians. ``--bf16`` adds cute_py's own bf16
GEMM (same shape, TN) for the "blockwise above bf16" comparison. Writes ``<out-dir>/<date>-<tag>.json`` and
``.md``.

    python benchmarks/fp8_vs_torch.py --sweep issue8 --bf16
    python benchmarks/fp8_vs_torch.py --shapes 8192,8192,8192 --modes block --sustained 2
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gemm_vs_cublas import (CALLS, SWEEPS, BatchTimer, alternate, batch_runners, first_line, input_sets,  # noqa: E402
                            parse_shape, stats, warm_up)

HERE = os.path.dirname(os.path.abspath(__file__))
PEAK_FP8 = 1979.0               # H100 SXM dense fp8 TFLOP/s (datasheet)
BLOCK = 128
MODES = ("tensor", "tensor-fast", "row", "row-fast", "block")


def make_sets(torch, M, N, K, sets):
    """``sets`` pairs (a (M, K), b (K, N) K-major) of randn quantized to e4m3."""
    f8 = torch.float8_e4m3fn
    return [(torch.randn(M, K, device="cuda").to(f8), torch.randn(N, K, device="cuda").to(f8).t())
            for _ in range(sets)]


def make_scales(torch, mode, M, N, K):
    """The f32 scales of ``mode`` (PyTorch's shapes; blockwise scales in the layouts torch's kernel wants:
    scale_a (M, KB) M-major, scale_b (KB, NB) KB-major)."""
    kb, nb = -(-K // BLOCK), -(-N // BLOCK)
    if mode == "tensor":
        return torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
    if mode == "row":
        return torch.rand(M, 1, device="cuda") + 0.5, torch.rand(1, N, device="cuda") + 0.5
    return (torch.rand(kb, M, device="cuda") + 0.5).t(), (torch.rand(nb, kb, device="cuda") + 0.5).t()


def torch_call(torch, mode, sa, sb, fast=False):
    """PyTorch's fp8 GEMM for ``mode`` as ``f(a, b, out)``, or None when this torch lacks it."""
    if mode in ("tensor", "row"):
        return lambda a, b, out: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, out=out,
                                                  use_fast_accum=fast)
    F = torch.nn.functional
    if not hasattr(F, "scaled_mm") or not hasattr(F, "ScalingType"):
        return None
    st = F.ScalingType
    return lambda a, b, out: F.scaled_mm(a, b, sa, st.BlockWise1x128, sb, st.BlockWise128x128,
                                         output_dtype=torch.bfloat16)


def reference_error(torch, mode, a, b, sa, sb, d) -> float:
    """Relative Frobenius error of ``d`` against a float64 product of the dequantized inputs."""
    K, N = a.shape[1], b.shape[1]
    if mode.startswith("block"):
        ea = sa.double().repeat_interleave(BLOCK, 1)[:, :K]
        eb = sb.double().repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)[:K, :N]
    else:
        ea, eb = sa.double(), sb.double()
    ref = (a.double() * ea) @ (b.double() * eb)
    return float((d.double() - ref).norm() / ref.norm())


def bench(torch, M, N, K, name, *, burst, sustained, bf16) -> dict:
    """One row: ``name`` is a scale mode, "-fast" appended for fast accumulation (both libraries)."""
    import cute_py
    mode, fast = name.removesuffix("-fast"), name.endswith("-fast")
    sets = input_sets(M, N, K, itemsize=1)
    inputs = make_sets(torch, M, N, K, sets)
    sa, sb = make_scales(torch, mode, M, N, K)
    outs = {k: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for k in ("cute_py", "torch", "bf16")}
    tcall = torch_call(torch, mode, sa, sb, fast)
    calls = {"cute_py": lambda i: cute_py.scaled_gemm(*inputs[i % sets], sa, sb, out=outs["cute_py"],
                                                      use_fast_accum=fast)}
    row = {"M": M, "N": N, "K": K, "mode": name, "input_sets": sets}
    if tcall is not None:
        calls["torch"] = lambda i: tcall(*inputs[i % sets], outs["torch"])
    else:
        row["torch_error"] = "this torch has no torch.nn.functional.scaled_mm with blockwise scaling"
    if bf16:
        b16 = [(a.to(torch.bfloat16), b.to(torch.bfloat16)) for a, b in inputs[:2]]
        calls["bf16"] = lambda i: cute_py.gemm(*b16[i % 2], out=outs["bf16"])
    warm_up(torch, row, calls, 2 * CALLS)
    if "cute_py" not in calls:
        return row
    from cute_py.selection import select
    from cute_py.problem import Problem
    row["spec"] = select(Problem.from_arrays(*inputs[0], scale_a=sa, scale_b=sb, fast_accum=fast,
                                             op="scaled_gemm")).name
    d = calls["cute_py"](0)
    row["rel_err"] = reference_error(torch, mode, *inputs[0], sa, sb, d)
    if "torch" in calls:
        t = calls["torch"](0)
        row["rel_err_torch"] = reference_error(torch, mode, *inputs[0], sa, sb, t)
    flops = 2.0 * M * N * K
    plain = batch_runners(BatchTimer(torch), calls)
    row["modes"] = {}
    for label, kw in (("burst", {"count": burst}), ("sustained", {"seconds": sustained})):
        if not list(kw.values())[0]:
            continue
        times = alternate(plain, **kw)
        res = {k: stats(t, flops) for k, t in times.items()}
        if "torch" in res:
            res["ratio"] = res["torch"]["median_s"] / res["cute_py"]["median_s"]
        if "bf16" in res:
            res["ratio_bf16"] = res["bf16"]["median_s"] / res["cute_py"]["median_s"]
        row["modes"][label] = res
    return row


def table(rows, mode_name="burst") -> str:
    lines = [f"| shape | scale | cute_py TFLOP/s (% of {PEAK_FP8:.0f}) | torch TFLOP/s | cute_py / torch | "
             f"cute_py bf16 TFLOP/s | fp8 / bf16 | rel. err cute_py / torch | spec |", "|---|---|---|---|---|---|---|---|---|"]
    nan = float("nan")
    for r in rows:
        m = r.get("modes", {}).get(mode_name, {})
        c, t, b = (m.get(k, {}).get("tflops") for k in ("cute_py", "torch", "bf16"))
        mine = f"{c:.0f} ({100 * c / PEAK_FP8:.0f}%)" if c else r.get("error", "-")[:40]
        theirs = f"{t:.0f}" if t else r.get("torch_error", "-")[:40]
        lines.append(f"| {r['M']}x{r['N']}x{r['K']} | {r['mode']} | {mine} | {theirs} | {m.get('ratio', nan):.3f} | "
                     f"{f'{b:.0f}' if b else '-'} | {m.get('ratio_bf16', nan):.3f} | {r.get('rel_err', nan):.1e} / "
                     f"{r.get('rel_err_torch', nan):.1e} | {r.get('spec', r.get('cute_py_error', ''))} |")
    return "\n".join(lines)


def summary(rows, mode_name="burst") -> str:
    out = []
    for mode in MODES:
        ratios = [r["modes"][mode_name]["ratio"] for r in rows
                  if r["mode"] == mode and "ratio" in r.get("modes", {}).get(mode_name, {})]
        if ratios:
            g = math.exp(statistics.fmean(math.log(x) for x in ratios))
            out.append(f"- {mode}: geometric mean {g:.3f} over {len(ratios)} shapes, min {min(ratios):.3f}, "
                       f"max {max(ratios):.3f} (cute_py / torch, {mode_name})")
    return "\n".join(out)


def plot(rows, path: str, mode_name="burst") -> bool:
    """Bars of cute_py / torch per shape, one panel per scale mode; False without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    modes = [m for m in MODES if any(r["mode"] == m for r in rows)]
    fig, axes = plt.subplots(len(modes), 1, figsize=(12, 2.6 * len(modes)), sharex=True, squeeze=False)
    for ax, mode in zip(axes[:, 0], modes):
        sel = [r for r in rows if r["mode"] == mode]
        ratios = [r.get("modes", {}).get(mode_name, {}).get("ratio", float("nan")) for r in sel]
        ax.bar(range(len(sel)), ratios, color=["tab:green" if x >= 1 else "tab:red" for x in ratios])
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_ylabel(f"{mode}\ncute_py / torch")
        ax.set_ylim(0, max(1.5, max((x for x in ratios if x == x), default=1) * 1.05))
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([f"{r['M']}x{r['N']}x{r['K']}" for r in sel], rotation=60, ha="right", fontsize=7)
    fig.suptitle(f"cute_py.scaled_gemm vs torch (e4m3, bf16 out, {mode_name})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(data: dict, stem: str) -> list:
    """``<stem>.md`` (and ``.png`` with matplotlib) from a run's JSON data; the paths written."""
    rows, meta = data["rows"], data["meta"]
    text = [f"# cute_py.scaled_gemm vs torch fp8 ({meta['device']}, torch {meta['torch']})", "", summary(rows), "",
            table(rows)]
    if meta.get("sustained_s"):
        text += ["", "## Sustained", "", summary(rows, "sustained"), "", table(rows, "sustained")]
    written = [stem + ".md"]
    if plot(rows, stem + ".png"):
        written.append(stem + ".png")
        text[1:1] = ["", f"![ratios]({os.path.basename(stem)}.png)"]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(text) + "\n")
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=[])
    ap.add_argument("--sweep", choices=sorted(SWEEPS))
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--sustained", type=float, default=0.0)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--tag", default="h100-fp8")
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--plot-only", metavar="JSON", help="re-render the md and png of a saved JSON; no GPU needed")
    args = ap.parse_args(argv)
    if args.plot_only:
        with open(args.plot_only) as f:
            print("wrote", *write_report(json.load(f), args.plot_only.removesuffix(".json")))
        return 0
    import torch
    shapes = [parse_shape(s) for s in args.shapes] + (SWEEPS[args.sweep] if args.sweep else [])
    rows = []
    for M, N, K in shapes:
        for mode in args.modes:
            try:
                row = bench(torch, M, N, K, mode, burst=args.burst, sustained=args.sustained, bf16=args.bf16)
            except Exception as e:  # noqa: BLE001 - one row's failure does not end the sweep
                row = {"M": M, "N": N, "K": K, "mode": mode, "error": first_line(e)}
                torch.cuda.synchronize()
            rows.append(row)
            b = row.get("modes", {}).get("burst", {})
            print(f"{M}x{N}x{K} {mode}: " + " ".join(f"{k} {v['tflops']:.0f}" for k, v in b.items()
                                                      if isinstance(v, dict)) + f" ratio {b.get('ratio', 0):.3f} "
                  f"{row.get('error', '')}", file=sys.stderr, flush=True)
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, f"{_dt.date.today().isoformat()}-{args.tag}")
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "burst": args.burst,
            "sustained_s": args.sustained}
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    write_report({"meta": meta, "rows": rows}, stem)
    with open(stem + ".md") as f:
        print(f.read())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
