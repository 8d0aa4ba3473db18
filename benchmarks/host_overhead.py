"""Host time of the GEMM product path: per call when prepared, and the first call in a fresh process.

    python benchmarks/host_overhead.py [--calls 3000] [--rounds 7] [--json out.json]

1. Per-call host time of a prepared ``cute_py.gemm`` on a 128x128x128 bf16 problem against
   ``torch.matmul`` on the same arrays (wall time of ``calls`` back-to-back calls over a
   synchronize, so it is the host's work wherever the kernels are shorter than it; the two
   alternate for ``rounds`` rounds, medians reported), and of a call that walks the whole path
   (``Problem`` -> ``select`` -> ``bind`` -> launch) because its prepared launch was dropped.
2. The first GEMM on a new shape in a fresh process: ``import cute_py`` (and torch), then the first
   ``cute_py.gemm`` (emit + NVRTC compile, from the disk cache when warm + first launch), timed in
   a subprocess with a cold and then a warm NVRTC cache, and once more warm with numpy and sympy
   imported before the clock starts (their one-time imports apart from cute_py's own work).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FRESH = r"""
import time, json, sys
if "--preimport" in sys.argv:
    import numpy, sympy                    # the libraries' one-time imports, outside the timing
t0 = time.perf_counter()
import cute_py
t1 = time.perf_counter()
import torch
a = torch.randn(1000, 776, device="cuda", dtype=torch.bfloat16)
b = torch.randn(776, 1160, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t2 = time.perf_counter()
d = cute_py.gemm(a, b)
torch.cuda.synchronize()
t3 = time.perf_counter()
err = float((d.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm())
print(json.dumps({"import_cute_py_s": t1 - t0, "first_gemm_s": t3 - t2, "rel_err": err}))
"""


def per_call(torch, calls: int, rounds: int) -> dict:
    import cute_py
    gemm_module = sys.modules["cute_py.gemm"]
    launches = getattr(gemm_module, "LAUNCHES", None) or gemm_module._LAUNCHES     # _LAUNCHES: before issue 15
    a = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
    fns = {"cute_py.gemm prepared": lambda: cute_py.gemm(a, b, out=out),
           "cute_py.gemm whole path": lambda: (launches.clear(), cute_py.gemm(a, b, out=out)),
           "torch.matmul": lambda: torch.matmul(a, b, out=out)}
    times = {k: [] for k in fns}
    for fn in fns.values():
        for _ in range(50):
            fn()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for k, fn in fns.items():
            n = calls if "whole" not in k else max(calls // 20, 50)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            times[k].append((time.perf_counter() - t0) / n * 1e6)
    ref = (a.float() @ b.float())
    cute_py.gemm(a, b, out=out)
    err = float((out.float() - ref).norm() / ref.norm())
    return {"us_per_call": {k: statistics.median(v) for k, v in times.items()}, "rel_err": err}


def fresh(cache_dir: str, *flags) -> dict:
    env = dict(os.environ, CUTE_PY_CACHE_DIR=cache_dir, PYTHONPATH=os.getcwd())
    r = subprocess.run([sys.executable, "-c", FRESH, *flags], capture_output=True, text=True, env=env)
    if r.returncode:
        return {"error": r.stderr[-2000:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    res = {"device": torch.cuda.get_device_name(), "per_call": per_call(torch, args.calls, args.rounds)}
    for k, v in res["per_call"]["us_per_call"].items():
        print(f"host time per call, 128x128x128 bf16, {k:<24} {v:7.1f} us")
    pc = res["per_call"]["us_per_call"]
    print(f"prepared cute_py.gemm / torch.matmul host time: {pc['cute_py.gemm prepared'] / pc['torch.matmul']:.2f}")
    with tempfile.TemporaryDirectory() as d:
        res["fresh_cold"], res["fresh_warm"] = fresh(d), fresh(d)
        res["fresh_warm_preimported"] = fresh(d, "--preimport")
    for k in ("fresh_cold", "fresh_warm", "fresh_warm_preimported"):
        print(f"fresh process, {k[6:].replace('_', ' ')} NVRTC cache: {res[k]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
