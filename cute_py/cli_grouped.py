"""``cute-py gemm --groups G`` and ``--batch L``: the GPU run of a grouped (mixture-of-experts) or batched GEMM
(check and time), with torch arrays.

``--groups G`` splits the ``--m`` rows into G groups of uneven sizes (seeded; some empty when G is large) and
multiplies group g by its own (K, N) matrix, as ``torch._grouped_mm(a, b, offs=offs)``; ``--batch L`` runs L
GEMMs of ``--m`` x ``--n`` x ``--k``, as ``torch.bmm``. The check uses small integers, so D must equal the
float64 reference rounded once; the bench times cute_py next to torch's grouped or batched GEMM.
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from .runtime.timer import EventTimer

__all__ = ["run_grouped", "group_sizes"]


def group_sizes(M: int, G: int, seed: int = 0) -> list:
    """``G`` uneven group sizes summing to ``M`` (seeded: proportional to exponential draws).

    >>> sizes = group_sizes(1000, 8); sum(sizes), len(sizes)
    (1000, 8)
    """
    w = np.random.default_rng(seed).exponential(size=G)
    sizes = np.floor(M * w / w.sum()).astype(int)
    sizes[0] += M - int(sizes.sum())
    return [int(x) for x in sizes]


def run_grouped(args, spec, xp) -> int:
    """Check and/or time ``spec`` (grouped or batched) on torch arrays; 2 without them."""
    if getattr(xp, "torch", None) is None:
        print("cute-py gemm: --groups and --batch runs need torch arrays (pip install torch; --arrays torch)",
              file=sys.stderr)
        return 2
    from .gemm import bmm, grouped_gemm
    from .problem import GemmInputError
    torch = xp.torch
    t = {"bf16": torch.bfloat16, "f16": torch.float16}[spec.dtype]
    M, N, K = args.m, args.n, args.k
    L = args.groups or args.batch
    print(f"GPU       {xp.device_name}; arrays from torch")

    def operands(values):
        b_shape = (L, N, K) if spec.b_major == "K" else (L, K, N)
        b = values(b_shape)
        b = b.transpose(-2, -1) if spec.b_major == "K" else b
        if args.groups:
            a = values((M, K)) if spec.a_major == "K" else values((K, M)).t()
            sizes = group_sizes(M, L)
            offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
            return a, b, offs, sizes
        a = values((L, M, K)) if spec.a_major == "K" else values((L, K, M)).transpose(-2, -1)
        return a, b, None, None

    def run(a, b, offs, out=None):
        if args.groups:
            return grouped_gemm(a, b, offs, spec=spec, out=out, check_offs=False)
        return bmm(a, b, spec=spec, out=out)

    try:
        rng = np.random.default_rng(0)
        a, b, offs, sizes = operands(lambda s: torch.from_numpy(rng.integers(-3, 4, size=s).astype(np.float64))
                                     .to(t).cuda())
        d = run(a, b, offs)
        ref = _reference(torch, a, b, sizes)
        bad = int((d != ref.to(t)).sum())
        what = f"{L} groups of {min(sizes)}..{max(sizes)} rows" if sizes else f"a batch of {L}"
        print(f"check     {'PASS' if bad == 0 else 'FAIL'}: {d.numel() - bad} of {d.numel()} elements equal to the "
              f"float64 reference ({what}, small-integer inputs)")
        if args.bench:
            _bench(torch, spec, run, operands, args.groups is not None, M, N, K, L)
    except GemmInputError as e:
        print(f"cute-py gemm: {e}", file=sys.stderr)
        return 2
    return 0 if bad == 0 else 1


def _reference(torch, a, b, sizes):
    """float64 per-group (or per-batch) products: exact for small integers."""
    if sizes is None:
        return torch.bmm(a.double(), b.double())
    out, row = torch.zeros(a.shape[0], b.shape[2], dtype=torch.float64, device="cuda"), 0
    for g, n in enumerate(sizes):
        out[row:row + n] = a[row:row + n].double() @ b[g].double()
        row += n
    return out


def _bench(torch, spec, run, operands, grouped, M, N, K, L, calls=10, batches=10):
    """cute_py next to torch._grouped_mm or torch.bmm on randn inputs, alternating batches of ``calls`` calls
    between CUDA events; medians."""
    t = {"bf16": torch.bfloat16, "f16": torch.float16}[spec.dtype]
    a, b, offs, _ = operands(lambda s: torch.randn(s, device="cuda").to(t))
    fns = {"cute_py": lambda: run(a, b, offs)}
    if grouped and hasattr(torch, "_grouped_mm") and spec.dtype == "bf16":
        fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b, offs=offs)
    elif not grouped:
        fns["torch.bmm"] = lambda: torch.bmm(a, b)
    with EventTimer() as ev:
        for fn in fns.values():
            ev.per_call(lambda j, f=fn: f(), 3)
        times = {k: [ev.per_call(lambda j, f=fn: f(), calls) for _ in range(batches)] for k, fn in fns.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    fl = 2.0 * M * N * K * (1 if grouped else L)
    print(f"bench     {'groups' if grouped else 'batch'} of {L}, {M}x{N}x{K}{' in all' if grouped else ' each'}: "
          f"{batches} batches of {calls} calls, alternating; medians:")
    for k, x in med.items():
        print(f"          {k:<18}  {x * 1e3:8.3f} ms  {fl / x / 1e12:6.0f} TFLOP/s")
    if len(med) == 2:
        other = [k for k in med if k != "cute_py"][0]
        print(f"          ratio cute_py / {other} = {med[other] / med['cute_py']:.2f}")
