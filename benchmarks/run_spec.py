"""Run one spec variant a few times on random inputs, for a profiler to attach to (ncu, nsys).

    ncu --kernel-name regex:cute_gemm --launch-skip 2 --launch-count 1 --section SpeedOfLight \\
        python benchmarks/run_spec.py 4096,4096,4096 "tile=(128,128,64);schedule='pingpong'"
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import LAYOUT_MAJORS, make_inputs, parse_shape  # noqa: E402
from spec_sweep import parse_variant  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape", help="M,N,K")
    ap.add_argument("variant", nargs="?", default="base", help="fields replaced in pick_spec's choice, as in spec_sweep")
    ap.add_argument("--layout", default="tn", choices=sorted(LAYOUT_MAJORS))
    ap.add_argument("--calls", type=int, default=4)
    args = ap.parse_args(argv)
    import torch

    import cute_py
    from cute_py.gemm import pick_spec
    M, N, K = parse_shape(args.shape)
    a, b = make_inputs(torch, M, N, K, args.layout, 1)[0]
    spec = pick_spec(M, N, K, *LAYOUT_MAJORS[args.layout], "bf16", "bf16",
                     sm_count=torch.cuda.get_device_properties(0).multi_processor_count)
    spec = spec.replace(**parse_variant(args.variant))
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for _ in range(args.calls):
        cute_py.gemm(a, b, out=out, spec=spec)
    torch.cuda.synchronize()
    print(spec.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
