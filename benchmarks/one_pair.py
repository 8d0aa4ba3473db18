"""Run one feature pair (``python benchmarks/one_pair.py "groups along K" split-K``) as
tests/gpu/test_gpu_feature_pairs.py checks it: for compute-sanitizer or a debugger on a single pair. The pair may
be one the spec rules refuse (``--force`` lifts the refusal, to study a known defect)."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests", "gpu")]


def main(argv) -> int:
    force = "--force" in argv
    x, y = [a for a in argv if a != "--force"]
    if force:
        from cute_py.emit.collectives.schedulers import split_k
        split_k.GROUPS_K = "no grouping refused"          # the refusal compares spec.grouping with this name
    import test_gpu_feature_pairs as t
    t.check_pair((x, y))
    print(f"ok {x} + {y}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
