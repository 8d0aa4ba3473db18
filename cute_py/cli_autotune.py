"""``cute-py autotune``: time the candidate kernels of one GEMM shape on random inputs and print the table.

It lists the candidates (:func:`cute_py.autotune.candidate_specs` around the default spec), then on an sm_90
GPU allocates random inputs (torch if importable, else cupy), runs :func:`cute_py.autotune.autotune` and
prints its table; the winner is recorded in the autotune file unless ``--no-cache``. Without a GPU it stops
after the list and says why (exit 0; without the ``cuda`` extra it says what to install, exit 3). fp8 types
(``--dtype e4m3|e5m2``, layout tn, ``--scale tensor|row|block``) are tuned with unit scales, on torch arrays.
"""

from __future__ import annotations

import sys

from .cli_errors import count, extent
from .emit.spec import FP8_DTYPES, INPUT_DTYPES, SCALES
from .emit.scaling import SCALE_TYPES
from .problem import MAX_EXTENT

__all__ = ["add_parser", "run"]


def add_parser(sub):
    from .cli_gemm import LAYOUT_MAJORS
    p = sub.add_parser("autotune", help="time candidate GEMM kernels for one shape on this GPU; remember the best")
    for dim in ("m", "n", "k"):
        p.add_argument(f"--{dim}", type=extent, default=4096, help=f"{dim.upper()}, 1 to {MAX_EXTENT} (default 4096)")
    p.add_argument("--dtype", default="bf16", choices=INPUT_DTYPES,
                   help="input type (default bf16); e4m3 / e5m2 tune the scaled fp8 GEMM (layout tn only)")
    p.add_argument("--scale", choices=[s for s in SCALES if s], help="fp8 scale mode (default tensor), as cute-py gemm")
    p.add_argument("--fast-accum", action="store_true", help="fp8 with tensor/row scales: as cute-py gemm")
    p.add_argument("--scale-type", choices=SCALE_TYPES, help="fp8 row/block scales' element type: as cute-py gemm")
    p.add_argument("--layout", default="tn", choices=tuple(LAYOUT_MAJORS),
                   help="BLAS naming: first letter A, second B; t = A K-major / B N-major (default tn: both K-major)")
    p.add_argument("--reps", type=count, default=10, help="timed batches per candidate (median; default 10)")
    p.add_argument("--batch", type=count, default=10, help="back-to-back calls per timed batch (default 10)")
    p.add_argument("--no-cache", action="store_true", help="do not record the winner in the autotune file")
    p.add_argument("--no-check", action="store_true", help="skip comparing each result with the default spec's")
    return p


def _describe(args):
    """``(problem, default spec, candidates)`` for the command's shape, layout and type (no GPU needed)."""
    from .autotune import candidate_specs
    from .cli_gemm import LAYOUT_MAJORS, fp8_scale
    from .problem import Problem
    from .selection import heuristic
    scale = fp8_scale(args.dtype, args.layout, args.scale, args.fast_accum, args.scale_type)
    a_major, b_major = LAYOUT_MAJORS[args.layout]
    problem = Problem(args.m, args.n, args.k, a_major, b_major, args.dtype, "bf16" if scale else args.dtype,
                      scale=scale, fast_accum=args.fast_accum, scale_type=args.scale_type or "f32")  # D: compact
    sm_count = _sm_count() or 132
    default = heuristic(problem, sm_count)
    return problem, default, candidate_specs(args.m, args.n, args.k, default, sm_count)


def _sm_count():
    try:
        from .runtime import device
        return device().sm_count
    except Exception:  # noqa: BLE001 - no GPU: list for an H100's 132 SMs
        return None


def run(args) -> int:
    from .cli_gemm import _gpu_reason
    problem, default, specs = _describe(args)
    print(f"problem   {problem.shape} {args.layout} (a {problem.a_major}-major, b {problem.b_major}-major), "
          f"{problem.dtype} -> {problem.out_dtype}")
    print(f"default   {default.name}")
    print(f"{len(specs)} candidates:")
    for i, s in enumerate(specs, 1):
        print(f"  {i:>2}  {s.name}")
    reason = _gpu_reason()
    if reason:
        print("no GPU: stopping after listing the candidates (nothing timed, nothing recorded).")
        print(f"          reason: {reason}")
        return 0
    arrays = _random_inputs(problem)
    if isinstance(arrays, str):
        print(f"cute-py autotune: {arrays}", file=sys.stderr)
        return 2
    from .autotune import autotune, cache_path
    a, b, scales = arrays
    result = autotune(a, b, candidates=specs, reps=args.reps, batch=args.batch, cache=not args.no_cache,
                      check=not args.no_check, **scales)
    print(result.table())
    if not args.no_cache:
        print(f"recorded  {result.best.name} in {cache_path()}")
    return 0


def _random_inputs(problem):
    """randn ``a`` (M, K) and ``b`` (K, N) with the problem's majors, from torch if importable, else cupy, and
    the autotune keywords of an fp8 problem (unit scales, torch only); or an error string."""
    M, N, K = problem.M, problem.N, problem.K
    try:
        import torch
    except ImportError:
        torch = None
    scales = {}
    if torch is not None and torch.cuda.is_available():
        from .cli_scaled import scale_shapes, torch_dtype
        dt = torch_dtype(torch, problem.dtype)

        def randn(rows, cols, contiguous_dim):
            shape = (rows, cols) if contiguous_dim == 1 else (cols, rows)
            t = torch.randn(shape, device="cuda").to(dt)
            return t if contiguous_dim == 1 else t.t()
        if problem.scale:
            sa, sb = scale_shapes(problem.scale, M, N, K)
            st = torch_dtype(torch, problem.scale_type)
            scales = {"scale_a": torch.ones(sa, device="cuda").to(st), "scale_b": torch.ones(sb, device="cuda").to(st),
                      "use_fast_accum": problem.fast_accum}
    elif problem.dtype in FP8_DTYPES:
        return f"--dtype {problem.dtype} needs torch with CUDA to allocate fp8 inputs (cupy has no fp8 types)"
    else:
        try:
            import cupy
        except ImportError:
            return "neither torch (with CUDA) nor cupy is importable; install one to allocate the inputs"

        def randn(rows, cols, contiguous_dim):
            shape = (rows, cols) if contiguous_dim == 1 else (cols, rows)
            x = cupy.random.standard_normal(shape, dtype=cupy.float32)
            x = (x.view(cupy.uint32) >> 16).astype(cupy.uint16) if problem.dtype == "bf16" else x.astype(cupy.float16)
            return x if contiguous_dim == 1 else x.T
    a = randn(M, K, 1 if problem.a_major == "K" else 0)
    b = randn(K, N, 0 if problem.b_major == "K" else 1)
    return a, b, scales
