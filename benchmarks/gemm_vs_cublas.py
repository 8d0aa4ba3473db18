"""cute_py.gemm vs torch.matmul (cuBLAS), side by side in one run.

For each shape and layout: both kernels are warmed up, then timed alternately
with CUDA events, each call on the next of several input sets (rotated so the
50 MB L2 does not hold them), and the median is reported. Two modes: "burst"
(a few short alternating calls) and "sustained" (alternating for a few seconds,
as the H100 lowers its clock under load). Writes a Markdown table and JSON.

    python benchmarks/gemm_vs_cublas.py [--shapes 4096,4096,4096 ...] [--out-dir benchmarks/results]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

DEFAULT_SHAPES = ["2048,2048,2048", "4096,4096,4096", "8192,8192,8192", "4096,4096,1024", "8192,8192,2048"]


def make_inputs(torch, M, N, K, layout, sets):
    out = []
    for _ in range(sets):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        if layout == "tn":                       # B K-major: b is (N, K) row-major, transposed view
            b = b.t().contiguous().t()
        out.append((a, b))
    return out


def time_one(torch, fn, inputs, i, calls=10):
    """Seconds per call: ``calls`` back-to-back calls (each on the next input set) between two events, so the
    host enqueues ahead of the GPU and Python's per-call overhead is hidden wherever the kernel outlasts it."""
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for j in range(calls):
        fn(*inputs[(i * calls + j) % len(inputs)])
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / 1e3 / calls


def bench(torch, M, N, K, layout, burst_reps, sustained_s):
    import cute_py
    nbytes = 2 * (M * K + K * N + M * N)
    sets = max(2, min(8, int(3 * 50e6 / nbytes) + 1))
    inputs = make_inputs(torch, M, N, K, layout, sets)
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    fns = {"cute_py": lambda a, b: cute_py.gemm(a, b, out=outs[0]),
           "cublas": lambda a, b: torch.matmul(a, b, out=outs[1])}
    for name, fn in fns.items():                 # warm-up: compile, load, cuBLAS heuristics
        for i in range(5):
            fn(*inputs[i % sets])
    torch.cuda.synchronize()
    a, b = inputs[0]
    ref = torch.matmul(a.float(), b.float())
    err = float((fns["cute_py"](a, b).float() - ref).norm() / ref.norm())
    res = {}
    for mode in ("burst", "sustained"):
        times = {k: [] for k in fns}
        i, t0 = 0, time.perf_counter()
        while True:
            for name, fn in fns.items():
                times[name].append(time_one(torch, fn, inputs, i))
            i += 1
            if mode == "burst" and i >= burst_reps:
                break
            if mode == "sustained" and time.perf_counter() - t0 > sustained_s:
                break
        flops = 2.0 * M * N * K
        res[mode] = {k: {"median_s": statistics.median(v), "tflops": flops / statistics.median(v) / 1e12,
                         "n": len(v)} for k, v in times.items()}
    return {"M": M, "N": N, "K": K, "layout": layout, "rel_err": err, "input_sets": sets,
            "spec": sys.modules["cute_py.gemm"].pick_spec(M, N, K, "K", "K" if layout == "tn" else "MN", "bf16", "bf16").name,
            **res}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=DEFAULT_SHAPES)
    ap.add_argument("--layouts", nargs="*", default=["tn", "tt"])
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--sustained", type=float, default=2.0)
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--tag", default="h100")
    args = ap.parse_args(argv)
    import torch
    rows = []
    for shp in args.shapes:
        M, N, K = (int(x) for x in shp.split(","))
        for layout in args.layouts:
            r = bench(torch, M, N, K, layout, args.burst, args.sustained)
            rows.append(r)
            print(f"{M}x{N}x{K} {layout}: cute_py {r['burst']['cute_py']['tflops']:.0f} / cuBLAS "
                  f"{r['burst']['cublas']['tflops']:.0f} TFLOP/s (burst), sustained {r['sustained']['cute_py']['tflops']:.0f}"
                  f" / {r['sustained']['cublas']['tflops']:.0f}; rel err {r['rel_err']:.2e}", flush=True)
    date = _dt.date.today().isoformat()
    os.makedirs(args.out_dir, exist_ok=True)
    dev = torch.cuda.get_device_name()
    meta = {"date": date, "device": dev, "torch": torch.__version__}
    with open(os.path.join(args.out_dir, f"{date}-{args.tag}-gemm.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = [f"# cute_py.gemm vs torch.matmul (cuBLAS), bf16 in / bf16 out, f32 accumulate", "",
             f"{date}, {dev}, torch {torch.__version__}. Medians of CUDA-event times over batches of 10 back-to-back "
             f"calls, the two libraries alternating batch by batch, inputs rotated over several sets (L2 cold-ish). "
             f"cute_py times include its Python per-call work (~0.1 ms) where the kernel is shorter. TFLOP/s = 2MNK / time.", "",
             "| M | N | K | layout | cute_py spec | burst cute_py | burst cuBLAS | ratio | sustained cute_py | sustained cuBLAS | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, s = r["burst"], r["sustained"]
        lines.append(f"| {r['M']} | {r['N']} | {r['K']} | {r['layout']} | {r['spec']} | {b['cute_py']['tflops']:.0f} | "
                     f"{b['cublas']['tflops']:.0f} | {b['cute_py']['tflops'] / b['cublas']['tflops']:.2f} | "
                     f"{s['cute_py']['tflops']:.0f} | {s['cublas']['tflops']:.0f} | {r['rel_err']:.1e} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out_dir, f"{date}-{args.tag}-gemm.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
