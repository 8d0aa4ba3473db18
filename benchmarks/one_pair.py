"""Run one feature pair (``python benchmarks/one_pair.py "groups along K" split-K``) as
tests/gpu/test_gpu_feature_pairs.py checks it: for compute-sanitizer or a debugger on a single pair."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests", "gpu")]


def main(argv) -> int:
    x, y = argv
    import test_gpu_feature_pairs as t
    t.check_pair((x, y))
    print(f"ok {x} + {y}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
