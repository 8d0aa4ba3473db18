"""Run feature pairs one after another in one process (``python benchmarks/pair_sequence.py [--sync]
"groups along M" "beta, bias, gelu" "groups along K" split-K ...``, pairs given as consecutive names), as
tests/gpu/test_gpu_feature_pairs.py checks each, and report the first that fails: to isolate the open defect of a
launch after grouped launches (benchmarks/NOTES.md, versions 9 and 10c). ``--sync`` synchronises after every pair,
so a fault is charged to the pair that made it."""

from __future__ import annotations

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests", "gpu")]


def main(argv) -> int:
    sync = "--sync" in argv
    names = [a for a in argv if a != "--sync"]
    import torch

    import test_gpu_feature_pairs as t
    for x, y in zip(names[::2], names[1::2]):
        t0 = time.perf_counter()
        try:
            t.check_pair((x, y))
            if sync:
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - report and stop: a fault kills the context
            print(f"FAIL {x} + {y}: {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
            return 1
        print(f"ok {x} + {y} ({time.perf_counter() - t0:.2f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
