"""``cute-py gemm --groups G`` and ``--batch L``: the GPU run of a grouped (mixture-of-experts) or batched GEMM
(check and time), with torch arrays.

``--groups G`` splits the ``--m`` rows into G groups of uneven sizes (seeded; some empty when G is large) and
multiplies group g by its own (K, N) matrix, as ``torch._grouped_mm(a, b, offs=offs)`` (bf16, f16) or
``torch._scaled_grouped_mm`` (fp8 with ``--scale tensor|row|block``); ``--batch L`` runs L GEMMs of ``--m`` x
``--n`` x ``--k``, as ``torch.bmm``. The check uses small integers (and power-of-two scales), so D must equal
the float64 reference rounded once; the bench times cute_py next to torch's grouped or batched GEMM (bf16).
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from .cli_scaled import torch_dtype
from .emit.spec import SCALE_BLOCK
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
    """Check and/or time ``spec`` (grouped or batched; fp8 grouped along M too) on torch arrays; 2 without them."""
    if getattr(xp, "torch", None) is None:
        print("cute-py gemm: --groups and --batch runs need torch arrays (pip install torch; --arrays torch)",
              file=sys.stderr)
        return 2
    from .gemm import bmm, grouped_gemm
    from .problem import GemmInputError
    torch = xp.torch
    t, out_t = torch_dtype(torch, spec.dtype), torch_dtype(torch, spec.out_dtype)
    M, N, K = args.m, args.n, args.k
    L = args.groups or args.batch
    print(f"GPU       {xp.device_name}; arrays from torch")

    def operands(values):
        """``(a, b, offs, group sizes)`` of the run from ``values(shape)`` (float64 on the device)."""
        b_shape = (L, N, K) if spec.b_major == "K" else (L, K, N)
        b = values(b_shape).float().to(t)
        b = b.transpose(-2, -1) if spec.b_major == "K" else b
        if args.groups:
            a = (values((M, K)) if spec.a_major == "K" else values((K, M)).t()).float().to(t)
            sizes = group_sizes(M, L)
            offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
            return a, b, offs, sizes
        a = (values((L, M, K)) if spec.a_major == "K" else values((L, K, M)).transpose(-2, -1)).float().to(t)
        return a, b, None, None

    def run(a, b, offs, scales, out=None):
        if scales:
            return grouped_gemm(a, b, offs, scale_a=scales[0], scale_b=scales[1], use_fast_accum=spec.fast_accum,
                                spec=spec, out=out, check_offs=False)
        if args.groups:
            return grouped_gemm(a, b, offs, spec=spec, out=out, check_offs=False)
        return bmm(a, b, spec=spec, out=out)

    def small_ints(shape):
        return torch.from_numpy(np.asarray(rng.integers(-3, 4, size=shape), dtype=np.float64)).cuda()

    def powers_of_two(shape):                       # shape () too: one scale per tensor
        return torch.from_numpy(np.asarray(np.exp2(rng.integers(-2, 3, size=shape)), dtype=np.float64)).cuda()

    try:
        rng = np.random.default_rng(0)
        a, b, offs, sizes = operands(small_ints)
        scales = _scales(torch, spec, M, N, K, L, powers_of_two) if spec.scale else None   # exact
        d = run(a, b, offs, scales)
        fa, fb = scales[2:] if scales else (1.0, 1.0)
        ref = _reference(torch, a.float().double() * fa, b.float().double() * fb, sizes)   # fp8 reads as f32
        bad = int((d != ref.to(out_t)).sum())
        what = f"{L} groups of {min(sizes)}..{max(sizes)} rows" if sizes else f"a batch of {L}"
        how = (f", power-of-two {spec.scale} scales{', ue8m0' if spec.scale_type == 'ue8m0' else ''}"
               if spec.scale else "")
        print(f"check     {'PASS' if bad == 0 else 'FAIL'}: {d.numel() - bad} of {d.numel()} elements equal to the "
              f"float64 reference ({what}, small-integer inputs{how})")
        if args.bench:
            _bench(torch, spec, run, operands, args.groups is not None, M, N, K, L)
    except GemmInputError as e:
        print(f"cute-py gemm: {e}", file=sys.stderr)
        return 2
    return 0 if bad == 0 else 1


def _scales(torch, spec, M, N, K, L, values):
    """``(scale_a, scale_b, factor of a, factor of b)`` of an fp8 grouped GEMM in ``spec``'s scale mode from
    ``values(shape)`` (float64 on the device): the scales grouped_gemm reads (f32 as torch._scaled_grouped_mm, or
    UE8M0) and the float64 factors a (M, K) and b (G, K, N) are multiplied by in the reference (broadcast)."""
    mode = spec.scale
    kb, nb = -(-K // SCALE_BLOCK), -(-N // SCALE_BLOCK)
    shape_a, shape_b = {"tensor": ((), ()), "row": ((M,), (L, N)), "block": ((M, kb), (L, kb, nb))}[mode]
    sa = values(shape_a) if mode != "block" else values(shape_a[::-1]).t()    # blockwise: M-major, as DeepGEMM's
    sb = values(shape_b)
    if mode == "tensor":
        fa, fb = sa, sb
    elif mode == "row":
        fa, fb = sa[:, None], sb[:, None, :]
    else:
        fa = sa.repeat_interleave(SCALE_BLOCK, 1)[:, :K]
        fb = sb.repeat_interleave(SCALE_BLOCK, 1).repeat_interleave(SCALE_BLOCK, 2)[:, :K, :N]
    t = torch_dtype(torch, spec.scale_type)
    return sa.float().to(t), sb.float().to(t), fa, fb


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
    """cute_py next to torch._grouped_mm (bf16) or torch.bmm on randn inputs (scales near 1 for fp8),
    alternating batches of ``calls`` calls between CUDA events; medians."""
    a, b, offs, _ = operands(lambda s: torch.randn(s, device="cuda"))
    near_one = ((lambda s: torch.exp2(torch.randint(-1, 2, s, device="cuda").double())) if spec.scale_type == "ue8m0"
                else (lambda s: 0.5 + torch.rand(s, device="cuda", dtype=torch.float64)))
    scales = _scales(torch, spec, M, N, K, L, near_one) if spec.scale else None
    fns = {"cute_py": lambda: run(a, b, offs, scales)}
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
