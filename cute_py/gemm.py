"""``cute_py.gemm``: ``D = act(alpha * a @ b + beta * c + bias)`` with a kernel generated from a GemmSpec.

Works on torch or cupy device arrays (or anything with
``__cuda_array_interface__`` / ``__dlpack__``) without importing torch.
``a`` is ``(M, K)`` and ``b`` is ``(K, N)``, as in ``torch.matmul``; each may
be row- or column-major (the spec's majorness is read from the strides).
A call walks the product path once per new set of arrays::

    arrays -> Problem -> select(problem) -> GemmSpec -> GemmPlan -> plan.bind(problem) -> Launch

and afterwards, for the same arrays, scalars, spec and stream, makes one driver call.
"""

from __future__ import annotations

import sys

from ._callable import make_callable
from .arraylib import allocator, current_stream, swap_last, swapped_operands, zeros
from .dtypes import dtype
from .emit import GemmSpec
from .emit.spec import OUT_DTYPES
from . import tuned
from .launch import Launches
from .options import flag
from .problem import GemmInputError, Problem
from .problem_groups import Epilogue, bmm_problem, check_device_offsets, grouped_problem
from .runtime import DriverError, stream_capturing, stream_int
from .selection import pick_spec, select, swaps_ab

__all__ = ["gemm", "scaled_gemm", "grouped_gemm", "bmm", "pick_spec", "compiled", "GemmInputError", "LAUNCHES"]

LAUNCHES = Launches()
"""The prepared launches, compiled kernels, tensor maps and workspaces of :func:`gemm` (bounded)."""


def compiled(spec: GemmSpec):
    """``(Program, Kernel)`` for ``spec``: emitted, compiled with NVRTC (disk-cached) and loaded once per process.

    >>> prog, kernel = compiled(GemmSpec())                             # doctest: +SKIP
    >>> prog.registers[kernel.name], prog.spills[kernel.name]          # doctest: +SKIP
    (168, 0)
    """
    return LAUNCHES.compiled(spec)


def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out=None, spec=None, stream=None):
    """``D = act(alpha * a @ b + beta * c + bias)``; returns D (``out`` if given).

    - ``a`` (M, K), ``b`` (K, N): bf16 or f16 (the same type), each
      contiguous along one dimension, on one device; any M, N, K >= 0 (K = 0
      gives ``act(beta * c + bias)``), any leading dimension and 2-byte aligned
      base. An operand TMA cannot read (base or leading dimension not a
      multiple of 16 bytes) is copied to a staging buffer first, on the same
      stream (:mod:`cute_py.emit.stage_copy`).
    - ``c`` (M, N), with ``beta``: read in D's layout and type (not read when ``beta`` is 0; a
      ``beta`` other than 0 needs a ``c``). ``out`` may be ``c`` itself, but shares no memory with ``a``,
      ``b`` or ``bias``.
    - ``bias``: a vector in D's type; length N adds ``bias[n]`` to every row
      (as ``torch.nn.Linear``), length M (M != N) adds ``bias[m]`` to every column.
    - ``activation``: None, "relu" or "gelu" (erf form).
    - ``out``: (M, N), row- or column-major; default a new row-major array of
      a's type from a's library. ``spec`` overrides the kernel choice (its
      majors and types must match the arrays).
    - ``stream``: where to launch (a handle or a torch / cupy / cuda.core stream). Default: the stream a's
      library has current (torch's or cupy's current stream, the ``stream`` of a CUDA array interface v3, else
      the legacy default stream), so the GEMM is ordered with that library's work and, while that stream is
      being captured into a CUDA graph, is captured with it.

    Raises :class:`GemmInputError` before launching for mismatched shapes,
    unsupported types, operands contiguous along neither dimension, different devices,
    or a ``spec`` that does not fit the arrays (:class:`~cute_py.emit.SpecError`
    for a ``spec`` no kernel can implement), and for a ``stream`` other than the arrays' while theirs is being
    captured (the launch would run outside the graph).

    >>> d = gemm(a, b, bias=bias, activation="relu")          # doctest: +SKIP
    >>> import numpy as np
    >>> gemm(np.ones((64, 64)), np.ones((64, 64)))            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: gemm: a: as_device_array: the array lives on the CPU device, not a CUDA GPU; ...
    """
    a, b = _k_stand_ins(a, b)

    def read(o, t):
        return Problem.from_arrays(a, b, c, alpha=alpha, beta=beta, bias=bias, activation=activation, out=o,
                                   out_dtype=t)
    def read_swapped(o, t):                      # D^T = b^T a^T: the swap-AB problem (selection.swaps_ab)
        s = swapped_operands(a, b, c, o)
        return Problem.from_arrays(s["a"], s["b"], s["c"], alpha=alpha, beta=beta, bias=bias, activation=activation,
                                   out=s["out"], out_dtype=t)
    return _run("gemm", (a, b, c, bias, out, None, None), (alpha, beta, activation, None, False), read, out, spec,
                stream, swapped=read_swapped)


def scaled_gemm(a, b, scale_a, scale_b, *, out_dtype=None, bias=None, out=None, use_fast_accum=False, spec=None,
                stream=None):
    """``D = (scale_a * a) @ (scale_b * b) (+ bias)`` for fp8 ``a`` and ``b``, f32 accumulation; returns D.

    - ``a`` (M, K) and ``b`` (K, N): ``float8_e4m3fn`` or ``float8_e5m2`` (one type), both K-major (a
      row-major, b the transpose of a row-major (N, K) array): Hopper's fp8 wgmma reads only K-major operands.
      Any K (rows of K bytes that are not 16-byte multiples are staged, as :func:`gemm` stages).
    - ``scale_a``, ``scale_b``: f32 arrays (or, row-wise and blockwise, both ``float8_e8m0fnu``: UE8M0, one byte
      per power of two) whose shapes choose the mode, as ``torch._scaled_mm`` does:
      one element each (per tensor); (M, 1) and (1, N) (row-wise: ``scale_a[m]``, ``scale_b[n]``);
      (M, ceil(K/128)) and (ceil(K/128), ceil(N/128)) (blockwise, DeepSeek-V3's 1 x 128 blocks of a and
      128 x 128 of b: each 128-wide K tile's partial sums are scaled before they join the f32 accumulators).
      Any strides (PyTorch's blockwise kernels want scale_a M-major, strides (1, M); both work here).
    - ``out_dtype``: "bf16", "f16" or "f32" (or a torch dtype), D's type when ``out`` is None; default ``spec``'s
      when one is given, else bf16 (with ``out``, D is out's type, and an ``out_dtype`` must name it).
      ``bias``: a vector of length N (or M) in D's type, added after scaling;
      ``spec``, ``stream``: as :func:`gemm` (a spec's ``fast_accum`` must be ``use_fast_accum``).
    - ``use_fast_accum`` (a bool; per-tensor and row-wise scales, as in ``torch._scaled_mm``): False (default) sums
      each 128-wide K tile in the tensor core and adds it into f32 accumulators; True accumulates all of K in the
      tensor core's fp8 accumulator (about 14 bits kept: faster, and about 10x the error at K = 4096).

    Raises :class:`GemmInputError` before launching for wrong scale shapes or types, MN-major operands,
    mixed devices, or a ``spec`` that does not fit.

    >>> d = scaled_gemm(a8, w8.t(), sa, sb, out_dtype="bf16")          # doctest: +SKIP
    """
    fast = flag("scaled_gemm", "use_fast_accum", use_fast_accum, GemmInputError)
    out_dtype = _type_name(out_dtype)               # with out, D's type is out's: out_dtype may only agree

    def read(o, t):
        return Problem.from_arrays(a, b, bias=bias, out=o, out_dtype=t, scale_a=scale_a, scale_b=scale_b,
                                   fast_accum=fast, op="scaled_gemm")

    def read_swapped(o, t):                      # D^T = (scale_b b)^T (scale_a a)^T: the scales trade places
        s = swapped_operands(a, b, out=o, scale_a=scale_a, scale_b=scale_b)
        return Problem.from_arrays(s["a"], s["b"], bias=bias, out=s["out"], out_dtype=t, scale_a=s["scale_a"],
                                   scale_b=s["scale_b"], fast_accum=fast, op="scaled_gemm")
    return _run("scaled_gemm", (a, b, None, bias, out, scale_a, scale_b), (1.0, 0.0, None, out_dtype, fast), read,
                out, spec, stream, out_dtype, swapped=read_swapped)


def grouped_gemm(a, b, offs=None, *, scale_a=None, scale_b=None, use_fast_accum=False, c=None, alpha=1.0, beta=0.0,
                 bias=None, activation=None, out_dtype=None, out=None, spec=None, stream=None, check_offs=True):
    """PyTorch's ``grouped_mm``: groups of GEMMs in one persistent kernel; returns D.

    - ``a`` (total_M, K), ``b`` (G, K, N), ``offs`` (G,) int32 on the device: groups stacked along M (a
      mixture-of-experts layer: expert g's tokens are rows ``[offs[g-1], offs[g])`` of ``a``, ``offs[-1]`` = 0);
      D (total_M, N), row g of a group times ``b[g]``. Groups may be empty and of any size.
    - ``a`` (M, total_K), ``b`` (total_K, N), ``offs`` (G,) int32: groups stacked along K (the weight gradient
      of a mixture-of-experts layer, ``x.t()`` and ``dy``): D (G, M, N), D[g] the product of columns
      ``[offs[g-1], offs[g])`` of ``a`` and those rows of ``b``. Both MN-major (K outermost: TMA zero-fills the
      K tile that crosses a group's end); an empty group gives zeros.
    - ``a`` (G, M, K), ``b`` (G, K, N), no ``offs``: a batch (as :func:`bmm`); D (G, M, N).
    - bf16 or f16; each matrix contiguous along one dimension (``b`` stored (G, N, K) and passed as
      ``w.transpose(-2, -1)`` is the common, K-major case), any strides (what TMA cannot read is staged), as
      :func:`gemm`.
    - fp8 (e4m3 / e5m2, both K-major) with f32 (or UE8M0: :func:`scaled_gemm`) ``scale_a`` and ``scale_b``,
      groups along M, as
      ``torch._scaled_grouped_mm``: scale_a (total_M,) and scale_b (G, N) are row-wise (scale_a[m] per token,
      scale_b[g, n] per expert and column); scale_a (total_M, ceil(K/128)) and scale_b (G, ceil(K/128),
      ceil(N/128)) blockwise (DeepGEMM's contiguous layout); one element each per tensor. A batch of fp8 GEMMs
      (3-D a and b): scale_a (G, M) and scale_b (G, N) row-wise, (G, M, ceil(K/128)) and (G, ceil(K/128),
      ceil(N/128)) blockwise. D defaults to bf16; ``use_fast_accum`` as :func:`scaled_gemm`.
    - ``D = act(alpha * A @ B + beta * c + bias)`` as :func:`gemm`: ``c`` has D's shape; ``bias`` is one vector
      for every group (length N, or M) or one per group, (G, N) or (G, M) (a mixture of experts' per-expert
      bias).
    - ``check_offs`` (a bool): read ``offs`` back to the host and check it (non-decreasing, the last one total_M) before
      launching: one device-to-host copy, which synchronises. Pass False in a hot loop or while capturing a CUDA
      graph (the kernel reads ``offs`` on the device and clamps it into ``[previous, total_M]``, so bad offsets
      never touch memory out of bounds; a capture skips the check by itself).
    - ``out_dtype``, ``out``, ``spec``, ``stream``: as :func:`gemm` and :func:`scaled_gemm`.

    Raises :class:`GemmInputError` before launching for wrong ranks, shapes, types or offsets.

    >>> d = grouped_gemm(x, w.transpose(-2, -1), offs)          # doctest: +SKIP
    """
    fast = flag("grouped_gemm", "use_fast_accum", use_fast_accum, GemmInputError)
    check_offs = flag("grouped_gemm", "check_offs", check_offs, GemmInputError)
    out_dtype = _type_name(out_dtype)
    check = check_offs and offs is not None and not stream_capturing(current_stream(a) if stream is None else stream)
    verify = ((lambda a=a, b=b: check_device_offsets(a, b, offs, "grouped_gemm"))   # the caller's arrays: their
              if check else None)                                                        # offsets may change
    if scale_a is None and scale_b is None:
        a, b = _k_stand_ins(a, b, grouped=True)

    epi = Epilogue(c, alpha, beta, bias, activation)

    def read(o, t):
        return grouped_problem(a, b, offs, scale_a=scale_a, scale_b=scale_b, fast_accum=fast, out=o, out_dtype=t,
                               check_offs=False, epilogue=epi)
    return _run("grouped_gemm", (a, b, offs, bias, out, scale_a, scale_b, c), (alpha, beta, activation, out_dtype,
                fast), read, out, spec, stream, out_dtype, verify)


def bmm(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out_dtype=None, out=None, spec=None,
        stream=None):
    """``torch.bmm`` (and ``torch.baddbmm``): ``D[l] = act(alpha * a[l] @ b[l] + beta * c[l] + bias)`` for ``a``
    (L, M, K) and ``b`` (L, K, N) in one persistent kernel (3-D tensor maps: the batch is their outer mode);
    returns D (L, M, N).

    Any batch strides (a broadcast, stride 0, or one TMA cannot read is staged: copied matrix by matrix); each
    matrix as :func:`gemm` takes it. ``c`` (L, M, N) with ``beta``; ``bias`` one vector for every entry (length N,
    or M) or one per entry, (L, N) or (L, M). ``out_dtype``, ``out``, ``spec``, ``stream``: as :func:`gemm`.

    >>> d = bmm(q, k.transpose(1, 2))                               # doctest: +SKIP
    """
    out_dtype = _type_name(out_dtype)
    a, b = _k_stand_ins(a, b)

    epi = Epilogue(c, alpha, beta, bias, activation)

    def read(o, t):
        return bmm_problem(a, b, out=o, out_dtype=t, epilogue=epi)
    return _run("bmm", (a, b, c, bias, out, None, None), (alpha, beta, activation, out_dtype, False), read, out,
                spec, stream, out_dtype)


K_STAND_IN = 8
"""The K of the zero operands that stand in for K = 0 (one 16-byte row of bf16)."""


def _k_stand_ins(a, b, grouped: bool = False) -> tuple:
    """``(a, b)``, or for K = 0 zero operands of K = :data:`K_STAND_IN` from ``a``'s library: the product is
    then 0 and the kernel (and its epilogue: ``beta * C + bias``, the activation) runs as for any K, with
    TMA maps over real memory (K-major; ``grouped`` with a 2-D b: groups along K, both operands stay MN-major).
    Arrays without a shape
    or of another library are left to the reader."""
    try:
        sa, sb = tuple(int(x) for x in a.shape), tuple(int(x) for x in b.shape)
    except (AttributeError, TypeError, ValueError):          # no shape: the reader names what is wrong
        return a, b
    if len(sa) < 2 or len(sb) < 2 or sa[-1] != 0 or sb[-2] != 0:
        return a, b
    try:
        if grouped and len(sb) == 2:                         # groups along K: a (M, K) M-major, b (K, N) N-major
            return swap_last(zeros(a, (K_STAND_IN, sa[0]))), zeros(b, (K_STAND_IN, sb[-1]))
        za = zeros(a, tuple(sa[:-1]) + (K_STAND_IN,))
        zb = swap_last(zeros(b, tuple(sb[:-2]) + (sb[-1], K_STAND_IN)))
        return za, zb
    except GemmInputError:                                   # not a torch or cupy array: the reader decides
        return a, b


def _type_name(t):
    """``t`` as cute_py names element types: "f32" for "float32", torch.float32 or numpy's float32; None stays."""
    if t is None or isinstance(t, str) and t in OUT_DTYPES:
        return t
    try:
        return dtype(str(t).removeprefix("torch.")).name
    except (TypeError, ValueError, KeyError):
        return str(t)                            # Problem refuses it by name


def _run(op, arrays, options, read, out, spec, stream, out_dtype=None, verify=None, swapped=None):
    """The product path of every operation, with the prepared launches of repeated calls: ``arrays`` identify the
    call's arrays (a first; the launch key), ``options`` its scalars (alpha, beta, activation, out_dtype,
    fast_accum; alpha and beta numbers), ``read(out, out_dtype)`` its :class:`Problem`; ``verify()`` checks what
    no launch key covers (values in device memory) before every launch, after the arrays were read.
    ``swapped(out, out_dtype)`` reads the swap-AB problem ``D^T = b^T a^T`` (D^T written through ``out``'s
    transpose): the launch runs it instead when no spec is given and :func:`~cute_py.selection.swaps_ab` says so
    (the prepared launch keeps D's shape, so a repeated call allocates D as an unswapped one does)."""
    a = arrays[0]
    current = current_stream(a)
    launch_on = current if stream is None else stream
    foreign = stream is not None and stream_int(stream) != current
    key = _launch_key(arrays, options, spec, launch_on)
    if key is not None:
        call = LAUNCHES.get(key, tuned.generation())
        if call is not None and call.keep and stream_capturing(launch_on):
            call = None                      # its staging buffers or workspace are shared: a graph gets its own
        if call is not None:                 # the same arrays, scalars and spec as a checked call before
            if foreign:
                _refuse_outside_capture(op, stream, current)
            if verify is not None:
                verify()
            return call.run(out)
    if isinstance(spec, GemmSpec) and out_dtype is None and out is None:
        out_dtype = spec.out_dtype
    problem = read(out, out_dtype)
    if foreign:
        _refuse_outside_capture(op, stream, current)
    if verify is not None:
        verify()
    if out is None:                          # D from a's library, read like a given out (its alignment counts)
        out = allocator(a, op)(problem.out_shape, problem.out_dtype)
        if not problem.empty:
            problem = problem.with_out(out, op) if problem.grouping is None else read(out, problem.out_dtype)
    if problem.empty:
        return out
    capturing = stream_capturing(launch_on)
    if spec is None and swapped is not None and swaps_ab(problem):
        shape, problem = problem.out_shape, swapped(out, problem.out_dtype)
        call = LAUNCHES.prepare(problem, _spec_for(op, problem, None), launch_on, capturing, out_shape=shape,
                                out_like=a)
    else:
        call = LAUNCHES.prepare(problem, _spec_for(op, problem, spec), launch_on, capturing)
    if key is not None and not capturing:    # a launch prepared inside a capture owns its captured workspace
        LAUNCHES.put(key, call)
    return call.run(out)


def _refuse_outside_capture(op: str, stream, current: int) -> None:
    """Raise when the arrays' stream is being captured into a CUDA graph and ``stream`` is not part of that
    capture: the launch would run now, outside the graph, and a replay would not repeat it. (A stream that joined
    the capture, by waiting on an event of the capturing stream, is being captured too and is accepted.)"""
    if not stream_capturing(current):
        return
    try:
        joined = stream_capturing(stream)
    except DriverError:                      # asking broke nothing, but a launch there would break the capture
        joined = False
    if not joined:
        raise GemmInputError(f"{op}: the arrays' stream {current:#x} is being captured into a CUDA graph, but "
                             f"stream={stream!r} is not part of that capture: the GEMM would run outside the "
                             f"graph; pass the capturing stream (or no stream=, which launches on the arrays' "
                             f"current stream)")


def _spec_for(op: str, problem: Problem, spec) -> GemmSpec:
    """``spec`` checked against the problem, or :func:`~cute_py.selection.select`'s choice when it is None."""
    if spec is None:
        return select(problem)
    if not isinstance(spec, GemmSpec):
        raise GemmInputError(f"{op}: spec must be a GemmSpec, got {type(spec).__name__}")
    spec.validate()                          # a SpecError listing every violated constraint
    bad = problem.mismatches(spec)
    if bad:
        raise GemmInputError(f"{op}: the spec {spec.name} does not fit the arrays: " + "; ".join(bad))
    return spec


def _array_key(x):
    """A cheap identity of a device array (address, shape, strides, type), or None for unknown array types."""
    if x is None:
        return ()
    mod = type(x).__module__
    if mod.startswith("torch"):
        return (x.data_ptr(), x.shape, x.stride(), x.dtype)
    if mod.startswith("cupy"):
        return (x.data.ptr, x.shape, x.strides, x.dtype)
    return None


def _launch_key(arrays, options, spec, stream):
    """The key of a prepared launch: the arrays' identities (a, b, c or offs, bias, out, scale_a, scale_b), the
    call's ``options`` (alpha, beta, activation, out_dtype, fast_accum), the spec and the stream; None when some
    array has no cheap identity or alpha or beta is no number."""
    keys = tuple(_array_key(x) for x in arrays)
    alpha, beta = options[:2]
    if None in keys or not isinstance(alpha, (int, float)) or not isinstance(beta, (int, float)):
        return None
    if arrays[4] is None:                    # out: D is allocated by a's library
        keys += (type(arrays[0]).__module__,)
    s = stream_int(stream)
    if s is None:
        return None
    return keys + (float(alpha), float(beta)) + tuple(options[2:]) + (spec, s)


make_callable(sys.modules[__name__])    # cute_py.gemm(a, b) runs gemm; cute_py.gemm.pick_spec is this module's
