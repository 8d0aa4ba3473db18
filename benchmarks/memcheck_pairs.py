"""The feature pairs that involve a grouping (groups along M or K, a batch), run one after another in one process:
for ``compute-sanitizer --tool memcheck --report-api-errors no python benchmarks/memcheck_pairs.py``. Each pair is
checked exactly as tests/gpu/test_gpu_feature_pairs.py checks it; the script exits 1 on a wrong result."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests", "gpu")]


def main() -> int:
    import test_gpu_feature_pairs as t

    groupings = ("groups along M", "groups along K", "batch")
    pairs = [p for p in t.COMPOSING if p[0] in groupings and p not in t.UNREACHABLE]
    bad = 0
    for pair in pairs:
        try:
            t.check_pair(pair)
            print(f"ok    {pair[0]} + {pair[1]}")
        except AssertionError as e:
            bad += 1
            print(f"WRONG {pair[0]} + {pair[1]}: {e}")
    print(f"{len(pairs) - bad} of {len(pairs)} grouped pairs exact")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
