"""Sustained speed with power and SM clock: cute_py.gemm against torch.matmul (cuBLAS) at one shape.

Under sustained load the H100 runs at its power cap (700 W) and lowers its clock, so the library that spends
fewer joules per FLOP wins. Each library runs for ``--seconds`` at a time (batches of 10 back-to-back calls on
rotated inputs, CUDA events around each batch), alternating, for ``--rounds`` rounds. ``nvidia-smi`` samples SM
clock and power every 100 ms in the background; each sample is attributed to the library whose window it falls
in (the first 0.5 s of each window, while the clock settles, is dropped). Reports per library the median
TFLOP/s, the median clock and power, and TFLOP/s per watt; writes ``<out-dir>/<date>-<tag>.md`` and ``.json``.

    python benchmarks/sustained_power.py --shape 8192,8192,8192 --layout tn --seconds 4 --rounds 3
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from gemm_vs_cublas import CALLS, BatchTimer, choose_spec, input_sets, make_inputs, parse_shape  # noqa: E402

SETTLE_S = 0.5


class Sampler:
    """``nvidia-smi`` clock and power samples, each with the host time it was read."""

    def __init__(self, period_ms: int = 100):
        self.samples, self._stop = [], False
        self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,"
                                      "nounits", f"-lms={period_ms}"], stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                clock, power = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.samples.append((time.perf_counter(), clock, power))

    def close(self):
        self.proc.terminate()
        self.thread.join(timeout=2)

    def between(self, t0: float, t1: float) -> list:
        return [(c, p) for t, c, p in self.samples if t0 + SETTLE_S <= t < t1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="8192,8192,8192")
    ap.add_argument("--layout", default="tn")
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds per library per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    ap.add_argument("--tag", default="h100-sustained-power")
    args = ap.parse_args(argv)
    import torch
    import cute_py
    M, N, K = parse_shape(args.shape)
    sets = input_sets(M, N, K)
    inputs = make_inputs(torch, M, N, K, args.layout, sets)
    outs = {lib: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for lib in ("cute_py", "cublas")}
    spec, _, _ = choose_spec(cute_py, M, N, K, args.layout, inputs, outs["cute_py"], False)
    calls = {"cute_py": lambda i: cute_py.gemm(*inputs[i % sets], out=outs["cute_py"], spec=spec),
             "cublas": lambda i: torch.matmul(*inputs[i % sets], out=outs["cublas"])}
    for call in calls.values():
        for i in range(2 * CALLS):
            call(i)
    torch.cuda.synchronize()
    timer, flops = BatchTimer(torch), 2.0 * M * N * K
    sampler = Sampler()
    time.sleep(0.3)
    windows = {lib: [] for lib in calls}
    times = {lib: [] for lib in calls}
    for _ in range(args.rounds):
        for lib, call in calls.items():
            t0, i = time.perf_counter(), 0
            while time.perf_counter() - t0 < args.seconds:
                base = i
                times[lib].append(timer(lambda: [call(base + j) for j in range(CALLS)]))
                i += CALLS
            windows[lib].append((t0, time.perf_counter()))
    time.sleep(0.3)
    sampler.close()
    rows = {}
    for lib in calls:
        s = [x for t0, t1 in windows[lib] for x in sampler.between(t0, t1)]
        tflops = flops / statistics.median(times[lib]) / 1e12
        clock = statistics.median(c for c, _ in s) if s else float("nan")
        power = statistics.median(p for _, p in s) if s else float("nan")
        rows[lib] = {"tflops": tflops, "sm_mhz": clock, "watts": power, "tflops_per_watt": tflops / power,
                     "samples": len(s), "batches": len(times[lib])}
    ratio = rows["cute_py"]["tflops"] / rows["cublas"]["tflops"]
    date = _dt.date.today().isoformat()
    meta = {"date": date, "device": torch.cuda.get_device_name(), "torch": torch.__version__, "shape": [M, N, K],
            "layout": args.layout, "spec": spec.name, "seconds": args.seconds, "rounds": args.rounds}
    lines = [f"# Sustained {M}x{N}x{K} {args.layout}: speed, SM clock and power", "",
             f"{date}, {meta['device']}, torch {meta['torch']}; cute_py spec {spec.name}.", "",
             "| library | TFLOP/s | SM clock (MHz) | power (W) | TFLOP/s per W | batches | samples |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {lib} | {r['tflops']:.0f} | {r['sm_mhz']:.0f} | {r['watts']:.0f} | {r['tflops_per_watt']:.3f} | "
              f"{r['batches']} | {r['samples']} |" for lib, r in rows.items()]
    lines += ["", f"cute_py / cuBLAS: **{ratio:.3f}**", "",
              f"Method: {args.rounds} rounds of {args.seconds} s per library, alternating; each batch is {CALLS} "
              f"back-to-back calls on rotated inputs between CUDA events (median per call). nvidia-smi samples "
              f"clock and power every 100 ms; samples in the first {SETTLE_S} s of each window are dropped."]
    os.makedirs(args.out_dir, exist_ok=True)
    stem = os.path.join(args.out_dir, f"{date}-{args.tag}")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows, "ratio": ratio}, f, indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
