"""Time fp8 kernel variants on one shape: specs (fields replaced in the heuristic's choice) and, for experiments,
text patches of the emitted source (``old=>new``), each against torch in the same alternating run.

    python benchmarks/fp8_variants.py 8192,8192,8192 block "tile=(128,128,128)" \\
        "tile=(128,128,128)|sa[mb][r] = sc.a[min(m_row + mb * 128 + r * 8, sc.M - 1) * sc.a_m + kb * sc.a_k] * sb;=>sa[mb][r] = sb;"

A patched kernel is renamed (its symbol gets a suffix) so it never meets the unpatched one in a cache. Prints
one line per variant: TFLOP/s of the variant and of torch, and their ratio (medians of alternating batches).
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from fp8_vs_torch import make_scales, make_sets, torch_call  # noqa: E402
from gemm_vs_cublas import CALLS, BatchTimer, alternate, input_sets, parse_shape, stats  # noqa: E402
from spec_sweep import parse_variant  # noqa: E402


def patched_compile(launches, patches: dict):
    """Wrap ``launches.compiled`` so a spec listed in ``patches`` compiles its patched source."""
    import cute_py.runtime as rt
    from cute_py.emit import emit_gemm
    original = launches.compiled

    def compiled(spec):
        edits = patches.get(spec)
        if not edits:
            return original(spec)
        hit = launches.kernels.get(spec)
        if hit is None:
            src = emit_gemm(spec)
            for old, new in edits:
                if old not in src:
                    raise SystemExit(f"fp8_variants: patch text not in the source of {spec.name}: {old!r}")
                src = src.replace(old, new)
            prog = rt.compile(src, name=f"{spec.name}_patched.cu")
            hit = launches.kernels.put(spec, (prog, prog.kernel(spec.name)))
        return hit
    launches.compiled = compiled


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shape")
    ap.add_argument("mode", choices=["tensor", "tensor-fast", "row", "row-fast", "block"])
    ap.add_argument("variants", nargs="+", help="'fields[|old=>new|...]'")
    ap.add_argument("--burst", type=int, default=15)
    args = ap.parse_args(argv)
    import torch

    import cute_py
    from cute_py.gemm import LAUNCHES
    from cute_py.problem import Problem
    from cute_py.selection import select
    M, N, K = parse_shape(args.shape)
    sets = input_sets(M, N, K, itemsize=1)
    inputs = make_sets(torch, M, N, K, sets)
    mode, fast = args.mode.removesuffix("-fast"), args.mode.endswith("-fast")
    sa, sb = make_scales(torch, mode, M, N, K)
    base = select(Problem.from_arrays(*inputs[0], scale_a=sa, scale_b=sb, fast_accum=fast, op="scaled_gemm"))
    patches, specs = {}, []
    for i, text in enumerate(args.variants):
        fields, *edits = text.split("|")
        spec = base.replace(**parse_variant(fields or "base"))
        if edits:
            free = [g for g in range(64, 0, -1) if g != base.group]
            spec = spec.replace(group=free[i])                    # a distinct spec (and symbol) per patched variant
            patches[spec] = [tuple(e.split("=>", 1)) for e in edits]
        specs.append((text, spec))
    patched_compile(LAUNCHES, patches)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    tcall = torch_call(torch, mode, sa, sb, fast)
    timer = BatchTimer(torch)
    flops = 2.0 * M * N * K
    for text, spec in specs:
        calls = {"cute_py": lambda i, s=spec: cute_py.scaled_gemm(*inputs[i % sets], sa, sb, out=out, spec=s,
                                                                  use_fast_accum=fast),
                 "torch": lambda i: tcall(*inputs[i % sets], out)}
        for call in calls.values():
            for i in range(CALLS):
                call(i)
        torch.cuda.synchronize()
        times = alternate({k: (lambda c=c: timer(lambda: [c(j) for j in range(CALLS)])) for k, c in calls.items()},
                          count=args.burst)
        res = {k: stats(t, flops) for k, t in times.items()}
        print(f"{args.shape} {args.mode} {res['cute_py']['tflops']:7.1f} vs torch {res['torch']['tflops']:7.1f} "
              f"ratio {res['torch']['median_s'] / res['cute_py']['median_s']:.3f}  {spec.name}  {text[:120]}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
