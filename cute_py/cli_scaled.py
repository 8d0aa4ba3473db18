"""``cute-py gemm --dtype e4m3|e5m2``: the GPU run of a scaled fp8 GEMM (check and time), with torch arrays.

The check uses small integers (exact in both fp8 types) and power-of-two scales, so D must equal the float64
reference rounded once to D's type; the bench times :func:`cute_py.scaled_gemm` next to ``torch._scaled_mm``
(per-tensor and row-wise scales) on randn inputs quantized to the fp8 type.
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from .emit.spec import SCALE_BLOCK
from .runtime.timer import EventTimer

__all__ = ["run_scaled", "scale_shapes", "torch_dtype"]

TORCH_TYPES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "e4m3": "float8_e4m3fn",
               "e5m2": "float8_e5m2", "ue8m0": "float8_e8m0fnu"}


def torch_dtype(torch, t: str):
    """torch's dtype for cute_py's element type ``t`` (the fp8 types too, which cute_py.arraylib leaves out)."""
    return getattr(torch, TORCH_TYPES[t])


def run_scaled(args, spec, xp) -> int:
    """Check and/or time ``spec`` (an fp8 GemmSpec) on ``xp``'s arrays; 2 without torch arrays."""
    if getattr(xp, "torch", None) is None:
        print("cute-py gemm: fp8 runs need torch arrays (pip install torch; --arrays torch): the driver arrays "
              "have no fp8 types", file=sys.stderr)
        return 2
    from .gemm import scaled_gemm
    from .problem import GemmInputError
    torch = xp.torch
    M, N, K = args.m, args.n, args.k
    print(f"GPU       {xp.device_name}; arrays from torch")
    try:
        status = _check(torch, scaled_gemm, spec, M, N, K)
        if args.bench:
            _bench(torch, scaled_gemm, spec, M, N, K)
    except GemmInputError as e:
        print(f"cute-py gemm: {e}", file=sys.stderr)
        return 2
    return status


def scale_shapes(mode: str, M: int, N: int, K: int) -> tuple:
    """The shapes of ``scale_a`` and ``scale_b`` that :func:`cute_py.scaled_gemm` reads in scale ``mode``.

    >>> scale_shapes("block", 256, 384, 512)
    ((256, 4), (4, 3))
    """
    kb, nb = -(-K // SCALE_BLOCK), -(-N // SCALE_BLOCK)
    return {"tensor": ((), ()), "row": ((M, 1), (1, N)), "block": ((M, kb), (kb, nb))}[mode]


def _scales(torch, spec, M, N, K, values):
    """``(scale_a, scale_b, per-element scale of a, of b)``: device scales of the spec's mode from ``values(shape)``
    and the float64 factors a reference multiplies a (M, K) and b (K, N) by."""
    shapes = scale_shapes(spec.scale, M, N, K)
    sa64, sb64 = values(shapes[0]), values(shapes[1])
    if spec.scale == "block":
        ea = np.repeat(sa64, SCALE_BLOCK, axis=1)[:, :K]
        eb = np.repeat(np.repeat(sb64, SCALE_BLOCK, axis=0), SCALE_BLOCK, axis=1)[:K, :N]
    else:
        ea, eb = sa64, sb64
    t = torch_dtype(torch, spec.scale_type)                  # f32, or ue8m0 (exact: the values are powers of two)
    dev = lambda x: torch.from_numpy(np.asarray(x, dtype=np.float32)).cuda().to(t)  # noqa: E731
    sa = dev(sa64) if spec.scale != "block" else dev(np.ascontiguousarray(sa64.T)).t()  # M-major, as torch's blockwise
    return sa, dev(sb64), ea, eb


def _operands(torch, spec, a64, b64):
    t = torch_dtype(torch, spec.dtype)
    return (torch.from_numpy(a64).to(t).cuda(), torch.from_numpy(np.ascontiguousarray(b64.T)).to(t).cuda().t())


def _check(torch, scaled_gemm, spec, M, N, K) -> int:
    """Small integers and power-of-two scales: every element must equal the float64 reference rounded once."""
    rng = np.random.default_rng(0)
    a64 = rng.integers(-3, 4, size=(M, K)).astype(np.float64)
    b64 = rng.integers(-3, 4, size=(K, N)).astype(np.float64)
    a, b = _operands(torch, spec, a64, b64)
    sa, sb, ea, eb = _scales(torch, spec, M, N, K, lambda s: np.exp2(rng.integers(-2, 3, size=s)).astype(np.float64))
    out_t = torch_dtype(torch, spec.out_dtype)
    out = torch.full((M, N), float("nan"), dtype=out_t, device="cuda")
    scaled_gemm(a, b, sa, sb, out=out, spec=spec, use_fast_accum=spec.fast_accum)
    ref = torch.from_numpy(a64 * ea).cuda() @ torch.from_numpy(b64 * eb).cuda()     # float64: exact here
    want = ref.to(out_t)
    bad = int((out != want).sum())
    unwritten = int(torch.isnan(out).sum())
    print(f"check     {'PASS' if bad == 0 else 'FAIL'}: {M * N - bad} of {M * N} elements equal to the float64 "
          f"reference (small-integer inputs, power-of-two {spec.scale} scales"
          f"{', ue8m0' if spec.scale_type == 'ue8m0' else ''}), {unwritten} unwritten")
    return 0 if bad == 0 else 1


def _bench(torch, scaled_gemm, spec, M, N, K, calls=10, batches=10):
    """cute_py (and torch._scaled_mm for per-tensor and row-wise scales) on randn inputs, alternating batches of
    ``calls`` back-to-back calls between CUDA events; medians."""
    rng = np.random.default_rng(1)
    a, b = _operands(torch, spec, rng.standard_normal((M, K)), rng.standard_normal((K, N)))
    near_one = ((lambda s: np.exp2(rng.integers(-1, 2, size=s)).astype(np.float64)) if spec.scale_type == "ue8m0"
                else (lambda s: 0.5 + rng.random(s)))
    sa, sb, _, _ = _scales(torch, spec, M, N, K, near_one)
    out_t = torch_dtype(torch, spec.out_dtype)
    out = torch.empty(M, N, dtype=out_t, device="cuda")
    fns = {"cute_py": lambda: scaled_gemm(a, b, sa, sb, out=out, spec=spec, use_fast_accum=spec.fast_accum)}
    if spec.scale != "block" and spec.out_dtype == "bf16":
        fns["torch._scaled_mm"] = lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                                           use_fast_accum=spec.fast_accum)
    skipped = None
    with EventTimer() as ev:
        for name, fn in list(fns.items()):
            try:
                ev.per_call(lambda j, f=fn: f(), 3)
            except RuntimeError as e:                    # torch refuses some shapes (N % 16, ...): time cute_py alone
                if name == "cute_py":
                    raise
                skipped = f"{name} not timed: {str(e).splitlines()[0]}"
                del fns[name]
        times = {k: [ev.per_call(lambda j, f=fn: f(), calls) for _ in range(batches)] for k, fn in fns.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    fl = 2.0 * M * N * K
    print(f"bench     {M}x{N}x{K} {spec.dtype}, {spec.scale} scales: {batches} batches of {calls} calls; medians:")
    for k, t in med.items():
        print(f"          {k:<16}  {t * 1e3:8.3f} ms  {fl / t / 1e12:6.0f} TFLOP/s")
    if len(med) == 2:
        print(f"          ratio cute_py / torch._scaled_mm = {med['torch._scaled_mm'] / med['cute_py']:.2f}")
    if skipped:
        print(f"          ({skipped})")
