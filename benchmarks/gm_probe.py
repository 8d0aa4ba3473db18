"""Probe the ragged TMA store map of groups along M (``cute_py.emit.grouping.ragged_rows``: based ``rows`` rows
before D) the way version 10c of benchmarks/NOTES.md found the groups-along-K fault: D is the process's first CUDA
allocation (the start of a fresh segment, with nothing mapped before it), or a view ``--guard R`` rows into a
larger buffer. ``python benchmarks/gm_probe.py [--guard 64] [--direct]``"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..")]


def main(argv) -> int:
    import numpy as np
    import torch

    import cute_py
    from cute_py.emit import GemmSpec

    guard = int(argv[argv.index("--guard") + 1]) if "--guard" in argv else 0
    sizes = [0, 1, 127, 128, 129, 0, 389, 51]
    Mt, G, N, K = sum(sizes), len(sizes), 1304, 640
    buf = torch.empty(Mt + guard, N, dtype=torch.bfloat16, device="cuda")      # the first CUDA allocation
    out = buf[guard:]
    rng = np.random.default_rng(3)
    a, b = rng.integers(-3, 4, (Mt, K)).astype(np.float64), rng.integers(-3, 4, (G, K, N)).astype(np.float64)
    ad = torch.from_numpy(a).bfloat16().cuda()
    bd = torch.from_numpy(np.swapaxes(b, -1, -2).copy()).bfloat16().cuda().transpose(-2, -1)
    offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    spec = GemmSpec(b="(N,K,L):(K,1,ldb_l)", tile=(128, 128, 64), epilogue="direct" if "--direct" in argv else "tma")
    print(f"{spec.name}: D at {out.data_ptr():#x}, a at {ad.data_ptr():#x}", flush=True)
    group = np.repeat(np.arange(G), sizes)
    ref = torch.from_numpy(np.einsum("mk,mkn->mn", a, b[group])).bfloat16()
    try:
        cute_py.grouped_gemm(ad, bd, offs, out=out, spec=spec)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        print(f"FAIL guard={guard}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return 1
    bad = (out.cpu() != ref).sum().item()
    print(f"{'ok' if bad == 0 else 'WRONG'} guard={guard}: {bad} of {ref.numel()} wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
