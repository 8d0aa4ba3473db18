"""Which kernels torch.matmul (cuBLAS) launches per shape: the tile, cluster and split-K choices cuBLAS made,
as the kernel names the profiler records say them.

    python benchmarks/cublas_kernels.py --sweep issue8 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gemm_vs_cublas import LAYOUT_MAJORS, SWEEPS, make_inputs, parse_shape  # noqa: E402


def kernels_of(torch, M, N, K, layout) -> list:
    """``[{name, us}]`` of the kernels one torch.matmul launches (after a warm-up call)."""
    a, b = make_inputs(torch, M, N, K, layout, 1)[0]
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    torch.matmul(a, b, out=out)
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b, out=out)
        torch.cuda.synchronize()
    rows = []
    for e in prof.events():
        if str(e.device_type).endswith("CUDA"):
            us = getattr(e, "device_time", None) or getattr(e, "cuda_time", None)
            rows.append({"name": e.name, "us": None if us is None else round(us, 2)})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", choices=sorted(SWEEPS))
    ap.add_argument("--shapes", nargs="*", default=[])
    ap.add_argument("--layout", default="tn", choices=sorted(LAYOUT_MAJORS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    shapes = [parse_shape(s) for s in args.shapes] + (SWEEPS[args.sweep] if args.sweep else [])
    out = []
    for M, N, K in shapes:
        ks = kernels_of(torch, M, N, K, args.layout)
        out.append({"M": M, "N": N, "K": K, "layout": args.layout, "kernels": ks})
        print(f"{M}x{N}x{K} {args.layout}: " + "; ".join(f"{k['name']} ({k['us']} us)" for k in ks), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
