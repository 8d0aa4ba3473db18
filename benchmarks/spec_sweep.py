"""Time spec variants of cute_py.gemm against torch.matmul on a few shapes (the development loop of issue 8).

Each variant is ``pick_spec``'s choice with fields replaced (``cluster=(2,1)``, ``group=16``, ...). Every
timing alternates a batch of 10 cute_py calls with a batch of 10 torch.matmul calls (CUDA events around
each batch, inputs rotated over several sets); the median over batches is reported, as a ratio to cuBLAS
measured in the same loop. ``--overhead`` also measures the Python cost per call (tiny shape, wall clock).

    python benchmarks/spec_sweep.py --shapes 4096,4096,4096 --variants base "cluster=(2,1)" "group=16"
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import CALLS, LAYOUT_MAJORS, BatchTimer, alternate, input_sets, make_inputs  # noqa: E402


def parse_variant(text):
    if text == "base":
        return {}
    out = {}
    for part in text.split(";"):
        k, v = part.split("=", 1)
        out[k.strip()] = ast.literal_eval(v.strip())
    return out


def run_shape(torch, M, N, K, layout, variants, reps):
    import cute_py
    from cute_py.gemm import pick_spec
    sets = input_sets(M, N, K)
    ins = make_inputs(torch, M, N, K, layout, sets)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    out2 = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    base = pick_spec(M, N, K, *LAYOUT_MAJORS[layout], "bf16", "bf16",
                     sm_count=torch.cuda.get_device_properties(0).multi_processor_count)
    timer = BatchTimer(torch)
    nxt = iter(range(1 << 62))
    ref = torch.matmul(ins[0][0].float(), ins[0][1].float())
    rows = []
    for text in variants:
        try:
            spec = base.replace(**parse_variant(text))
            spec.validate()
        except Exception as e:  # noqa: BLE001
            rows.append({"variant": text, "error": str(e).splitlines()[-1]})
            continue
        fns = {"cute": lambda a, b: cute_py.gemm(a, b, out=out, spec=spec),
               "cublas": lambda a, b: torch.matmul(a, b, out=out2)}
        try:
            for f in fns.values():
                for i in range(3):
                    f(*ins[i % sets])
            torch.cuda.synchronize()
            d = cute_py.gemm(*ins[0], spec=spec)
            err = float((d.float() - ref).norm() / ref.norm())
            t = alternate({k: (lambda f=f: timer(lambda: [f(*ins[next(nxt) % sets]) for _ in range(CALLS)]))
                           for k, f in fns.items()}, count=reps)
        except Exception as e:  # noqa: BLE001
            rows.append({"variant": text, "spec": spec.name, "error": repr(e)[:300]})
            continue
        med = {k: statistics.median(v) for k, v in t.items()}
        fl = 2.0 * M * N * K
        rows.append({"variant": text, "spec": spec.name, "err": err, "cute_tflops": fl / med["cute"] / 1e12,
                     "cublas_tflops": fl / med["cublas"] / 1e12, "ratio": med["cublas"] / med["cute"]})
    return rows


def overhead(torch, n=2000):
    import cute_py
    G = sys.modules["cute_py.gemm"]
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    res = {}
    for name, fn in (("cute_py prepared", lambda: cute_py.gemm(a, b, out=out)),
                     ("cute_py checked", lambda: (G.LAUNCHES.clear(), cute_py.gemm(a, b, out=out))),
                     ("torch.matmul", lambda: torch.matmul(a, b, out=out))):
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        res[name] = (t1 - t0) / n * 1e6
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=["4096,4096,4096"])
    ap.add_argument("--layout", default="tn")
    ap.add_argument("--variants", nargs="*", default=["base"])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--overhead", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    allrows = []
    if args.overhead:
        for k, v in overhead(torch).items():
            print(f"host time per call, {k}: {v:.1f} us", flush=True)
    for shp in args.shapes:
        M, N, K = (int(x) for x in shp.split(","))
        for r in run_shape(torch, M, N, K, args.layout, args.variants, args.reps):
            r.update(M=M, N=N, K=K, layout=args.layout)
            allrows.append(r)
            if "error" in r:
                print(f"{M}x{N}x{K} {args.layout} {r['variant']:<28} ERROR {r['error']}", flush=True)
            else:
                print(f"{M}x{N}x{K} {args.layout} {r['variant']:<28} {r['cute_tflops']:6.0f} vs {r['cublas_tflops']:6.0f}"
                      f" TFLOP/s  ratio {r['ratio']:.3f}  err {r['err']:.1e}  {r['spec']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(allrows, f, indent=1)


if __name__ == "__main__":
    main()
