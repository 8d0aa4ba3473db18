"""Probe the groups-along-K kernels that stop with an illegal address (benchmarks/NOTES.md, version 10): run one
spec on the feature-pair harness's groups-along-K problem, with the operands either fresh allocations or views
into buffers with ``--guard R`` rows before and after them, and report exactness or the error.

``python benchmarks/gk_probe.py split-K [--guard 128 [--before-only | --after-only]] [--direct]``"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "tests", "gpu")]


def main(argv) -> int:
    import numpy as np
    import torch

    import cute_py
    from cute_py.emit.collectives.features import spec_of
    import test_gpu_feature_pairs as t

    variant = argv[argv.index("--variant") + 1] if "--variant" in argv else ""
    if variant:                     # push some K tiles' rows all below the map (they load zeros: D is then wrong)
        from cute_py.emit.collectives.schedulers.groups import GroupsAlongK
        cond = {"no-partial": "min(kBK, w.k1 - ks) < kBK", "no-full": "min(kBK, w.k1 - ks) == kBK",
                "no-first": "ks == w.k0", "no-small": "w.k1 < kBK", "none": "true"}[variant]
        base = GroupsAlongK.coords

        def coords(self, w="w"):
            c = base(self, w)
            c["k_prologue"] = c["k_prologue"].replace("kc1 = min", f"kc1 = ({cond}) ? -kBK : min")
            return c
        GroupsAlongK.coords = coords
    feature = argv[0]
    guard = int(argv[argv.index("--guard") + 1]) if "--guard" in argv else 0
    before = "--after-only" not in argv
    after = "--before-only" not in argv
    spec = spec_of("groups along K", feature)
    if "--direct" in argv:
        spec = spec.replace(epilogue="direct")
    rng = np.random.default_rng(7)
    Kt, G = sum(t.SIZES), len(t.SIZES)
    x, dy = t.ints(rng, Kt, t.MS), t.ints(rng, Kt, t.NS)
    offs = torch.tensor(np.cumsum(t.SIZES), dtype=torch.int32, device="cuda")

    guarded = argv[argv.index("--guard-on") + 1].split(",") if "--guard-on" in argv else ["x", "dy"]

    def dev(h, name):
        if not guard or name not in guarded:
            return torch.from_numpy(h).bfloat16().cuda()
        lo = guard if before else 0
        buf = torch.zeros(h.shape[0] + lo + (guard if after else 0), h.shape[1], dtype=torch.bfloat16, device="cuda")
        buf[lo:lo + h.shape[0]] = torch.from_numpy(h).bfloat16()
        return buf[lo:lo + h.shape[0]]

    xd, dyd = dev(x, "x"), dev(dy, "dy")
    print(f"{spec.name}: offs at {offs.data_ptr():#x}, x at {xd.data_ptr():#x}, dy at {dyd.data_ptr():#x}",
          flush=True)
    ends = np.cumsum(t.SIZES)
    ref = np.stack([x[e - s:e].T @ dy[e - s:e] for s, e in zip(t.SIZES, ends)])
    spacer = torch.empty(1 << 21, dtype=torch.uint8, device="cuda") if "--spacer" in argv else None  # moves D, ws
    try:
        d = cute_py.grouped_gemm(xd.t(), dyd, offs, spec=spec)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        print(f"FAIL guard={guard}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return 1
    bad = (d.float().cpu() != torch.from_numpy(ref).bfloat16().float()).sum().item()
    print(f"{'ok' if bad == 0 else 'WRONG'} guard={guard}: {bad} of {ref.size} wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
