"""One launch each of the data-parallel batch scheduler and stream-K over it, for ncu's L2 and DRAM counters:
why stream-K over a batch of 4 x 1024 x 1024 x 8192 runs at half the data-parallel rate (benchmarks/NOTES.md,
version 11).

    ncu --kernel-name regex:cute_gemm --metrics lts__t_sector_hit_rate.pct,dram__bytes_read.sum,gpu__time_duration.sum \
        python benchmarks/sk_l2_probe.py
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main() -> int:
    import torch

    import cute_py
    from cute_py.problem_groups import bmm_problem
    from cute_py.selection import select

    L, M, N, K = 4, 1024, 1024, 8192
    a = torch.randint(-3, 4, (L, M, K), device="cuda").bfloat16()
    b = torch.randint(-3, 4, (L, N, K), device="cuda").bfloat16().transpose(1, 2)
    dp = select(bmm_problem(a, b))
    for spec in (dp, dp.replace(scheduler="stream_k", split_k=1)):
        d = cute_py.bmm(a, b, spec=spec)
        torch.cuda.synchronize()
        print(spec.name, bool(torch.equal(d, torch.bmm(a, b))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
