"""A transformer MLP block, forward and backward, with ``cute_py.torch.Linear`` against ``torch.nn.Linear``.

    python benchmarks/torch_mlp.py [--tokens 4096 16384] [--reps 7] [--json out.json]

The block is ``Linear(4096 -> 14336) -> GELU -> Linear(14336 -> 4096)`` in bf16 with biases (the cute_py one is
``Linear(..., activation="gelu")``, which under autograd applies gelu outside the GEMM, as nn.GELU does). A step
is ``y = mlp(x)`` and ``torch.autograd.grad(y, (x, *params), dy)``: six GEMMs, 3 x 2 x 2 x T x 4096 x 14336 FLOPs.
Eager and ``torch.compile`` (default mode) variants; the two libraries alternate in each round and each round
times a batch of steps between CUDA events (cute_py's :class:`~cute_py.runtime.timer.EventTimer`); medians over
rounds. Also the host time per forward call on a small shape (128 tokens, 4096 -> 4096, no grad): wall time of
back-to-back calls over a synchronize.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time

import torch

import cute_py
import cute_py.torch as ct
from cute_py.runtime.timer import EventTimer

HIDDEN, INTER = 4096, 14336


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(HIDDEN, INTER), torch.nn.GELU(), torch.nn.Linear(INTER, HIDDEN))


def cute_mlp(ref):
    m = copy.deepcopy(ref)
    m[0] = ct.Linear.from_linear(m[0], activation="gelu")
    m[1] = torch.nn.Identity()
    m[2] = ct.Linear.from_linear(m[2])
    return m


def step_fn(model, x, dy):
    params = tuple(model.parameters())

    def step(_i=0):
        y = model(x)
        torch.autograd.grad(y, (x, *params), dy)
    return step


def time_steps(steps: dict, reps: int, batch: int) -> dict:
    times = {k: [] for k in steps}
    with EventTimer() as timer:
        for fn in steps.values():                 # warm-up (compiles)
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        names = list(steps)
        for r in range(reps):                     # alternate, starting each round at the next variant
            for k in names[r % len(names):] + names[:r % len(names)]:
                times[k].append(timer.per_call(steps[k], batch))
    return {k: statistics.median(v) for k, v in times.items()}


def overhead(calls: int, reps: int) -> dict:
    ref = torch.nn.Linear(HIDDEN, HIDDEN).to("cuda", torch.bfloat16)
    mine = ct.Linear.from_linear(copy.deepcopy(ref))
    x = torch.randn(128, HIDDEN, device="cuda", dtype=torch.bfloat16)
    w, bias = mine.weight.t(), mine.bias
    fns = {"nn.Linear": ref, "cute_py.torch.Linear": mine,
           "torch.ops.cute_py.gemm": lambda x: ct.gemm(x, w, None, bias),
           "cute_py.gemm": lambda x: cute_py.gemm(x, w, bias=bias)}
    us = {k: [] for k in fns}
    with torch.no_grad():
        for f in fns.values():
            for _ in range(100):
                f(x)
        for _ in range(reps):
            for k, f in fns.items():
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(calls):
                    f(x)
                torch.cuda.synchronize()
                us[k].append((time.perf_counter() - t0) / calls * 1e6)
    return {k: statistics.median(v) for k, v in us.items()}


def per_gemm(T: int, reps: int, batch: int) -> list:
    """The step's six GEMMs one by one, each as cute_py.torch's autograd calls it (the operand views of
    ``ops.gemm``/``ops.mm_like``), against ``torch.matmul`` on the same views."""
    def r(*shape):
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    x, w1, w2, dy, h, dz = r(T, HIDDEN), r(INTER, HIDDEN), r(HIDDEN, INTER), r(T, HIDDEN), r(T, INTER), r(T, INTER)
    gemms = {"fwd1 x@W1^T": (x, w1.t()), "fwd2 h@W2^T": (h, w2.t()),
             "dh=dy@W2": (dy, w2), "dW2=(dy^T@h)": (dy.t(), h),
             "dx=dz@W1": (dz, w1), "dW1=(dz^T@x)": (dz.t(), x)}
    rows = []
    for name, (a, b) in gemms.items():
        out = torch.empty(a.shape[0], b.shape[1], device="cuda", dtype=torch.bfloat16)
        t = time_steps({"cute": lambda _i=0: ct.gemm(a, b), "torch": lambda _i=0: torch.matmul(a, b, out=out)},
                       reps, batch)
        flops = 2 * a.shape[0] * b.shape[1] * a.shape[1]
        rows.append({"gemm": name, "shape": f"{a.shape[0]}x{b.shape[1]}x{a.shape[1]}",
                     "cute TFLOP/s": flops / t["cute"] / 1e12, "torch TFLOP/s": flops / t["torch"] / 1e12,
                     "ratio": t["torch"] / t["cute"]})
        print(f"  {name:<14} {rows[-1]['shape']:<18} cute {rows[-1]['cute TFLOP/s']:6.1f}  torch "
              f"{rows[-1]['torch TFLOP/s']:6.1f} TFLOP/s  ratio {rows[-1]['ratio']:.3f}")
    return rows


def profile(steps: dict, path: str) -> None:
    """One step of each variant under torch.profiler: the kernels by total GPU time, written to ``path``."""
    from torch.profiler import ProfilerActivity, profile as torch_profile
    with open(path, "w") as f:
        for name, fn in steps.items():
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            f.write(f"== {name}\n{prof.key_averages().table(sort_by='cuda_time_total', row_limit=15)}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, nargs="+", default=[4096, 16384])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--per-gemm", action="store_true", help="also time the step's six GEMMs one by one")
    ap.add_argument("--autotune", action="store_true", help="then tune the step's GEMMs and time again")
    ap.add_argument("--profile", default=None, help="write a torch.profiler kernel table of one step per variant")
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}
    ref = mlp().to("cuda", torch.bfloat16)
    mine = cute_mlp(ref)
    ref_c, mine_c = torch.compile(ref), torch.compile(mine)
    for T in args.tokens:
        x = torch.randn(T, HIDDEN, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        dy = torch.randn(T, HIDDEN, device="cuda", dtype=torch.bfloat16)
        steps = {"nn eager": step_fn(ref, x, dy), "cute eager": step_fn(mine, x, dy),
                 "nn compiled": step_fn(ref_c, x, dy), "cute compiled": step_fn(mine_c, x, dy)}
        if args.profile:
            profile(steps, f"{args.profile}-{T}.txt")
        t = time_steps(steps, args.reps, args.batch)
        flops = 3 * 2 * 2 * T * HIDDEN * INTER
        row = {"tokens": T, **{f"{k} ms": v * 1e3 for k, v in t.items()},
               **{f"{k} TFLOP/s": flops / v / 1e12 for k, v in t.items()},
               "eager ratio": t["nn eager"] / t["cute eager"], "compiled ratio": t["nn compiled"] / t["cute compiled"]}
        if args.autotune:                          # tune the six GEMM problems of a step, then time again
            t0 = time.perf_counter()
            ct.autotune(mine, (x,), progress=False, reps=5, batch=5)
            row["autotune s"] = time.perf_counter() - t0
            tt = time_steps(steps, args.reps, args.batch)
            row.update({f"tuned {k} TFLOP/s": flops / v / 1e12 for k, v in tt.items()},
                       **{"tuned eager ratio": tt["nn eager"] / tt["cute eager"],
                          "tuned compiled ratio": tt["nn compiled"] / tt["cute compiled"]})
            print(f"T={T:6d}  after cute_py.torch.autotune ({row['autotune s']:.0f} s): cute/nn eager "
                  f"{row['tuned eager ratio']:.3f}, compiled {row['tuned compiled ratio']:.3f}")
        if args.per_gemm:
            row["gemms"] = per_gemm(T, args.reps, 10)
        res["rows"].append(row)
        print(f"T={T:6d}  " + "  ".join(f"{k} {flops / v / 1e12:6.1f}" for k, v in t.items()) +
              f"  TFLOP/s; cute/nn eager {row['eager ratio']:.3f}, compiled {row['compiled ratio']:.3f}")
    res["overhead_us"] = overhead(2000, args.reps)
    o = res["overhead_us"]
    print("host time per forward call, 128 tokens, 4096 -> 4096: " +
          ", ".join(f"{k} {v:.1f} us" for k, v in o.items()) +
          f" (cute/nn {o['cute_py.torch.Linear'] / o['nn.Linear']:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
