"""``cute_py.autotune``: time candidate kernels on your arrays, keep the fastest, remember it on disk.

:func:`autotune` runs every candidate :class:`~cute_py.emit.GemmSpec` through
``cute_py.gemm(..., spec=s)`` on the arrays you pass, checks each result against
the default spec's (:func:`cute_py.gemm.pick_spec`), times the ones that agree
with CUDA events and returns an :class:`AutotuneResult`. The winner is recorded
in ``autotune.json`` in cute_py's cache folder (the one of
:func:`cute_py.runtime.cache.cache_dir`), keyed by :func:`problem_key`: the GPU,
M, N, K, the majors, the types and the epilogue. :func:`lookup` reads it back;
``cute_py.gemm`` asks it on every call without ``spec=``, so it is a dict lookup
in memory (the file is read once per process, the device name queried once).
``CUTE_PY_AUTOTUNE=0`` (or ``off``, ``false``, ``no``) turns lookups off.

The candidates (:func:`candidate_specs`) vary the default spec's tile, cluster,
L2 raster group and split-K, keeping only specs whose ``problems()`` is empty:

>>> from cute_py.emit import GemmSpec
>>> base = GemmSpec(tile=(128, 256, 64))
>>> specs = candidate_specs(4096, 4096, 4096, base)
>>> specs[0] == base, len(specs) <= MAX_CANDIDATES, all(s.split_k == 1 for s in specs)
(True, True, True)
>>> problem_key(4096, 4096, 4096, "K", "K", "bf16", "bf16", device="NVIDIA H100 80GB HBM3")
'v1|NVIDIA H100 80GB HBM3|4096x4096x4096|a:K b:K|bf16->bf16|beta:0 bias:- act:- c:row'
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import statistics
import sys
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .emit.spec import GemmSpec
from .runtime.cache import atomic_write, cache_dir

__all__ = ["autotune", "candidate_specs", "problem_key", "lookup", "record", "clear_cache", "cache_path",
           "progress_line", "Problem", "AutotuneResult", "AutotuneRow", "AutotuneError",
           "FORMAT", "ENV", "TOLERANCE", "MAX_CANDIDATES", "TILES", "CLUSTERS", "GROUPS", "SPLITS"]

FORMAT = 1
"""Version of the autotune file's keys and entries; part of every key, so a new format never reads an old entry."""
ENV = "CUTE_PY_AUTOTUNE"
"""Environment variable: ``0``, ``off``, ``false`` or ``no`` makes :func:`lookup` return None."""
FILENAME = "autotune.json"
TOLERANCE = 1e-2
"""Largest relative Frobenius error of a candidate's result against the default spec's result."""
MAX_CANDIDATES = 40
FINALISTS = 3
"""The fastest candidates of the first pass, which are timed again (with the default spec) in a final round."""
FINAL_ROUNDS = 5
"""Rounds of the final: each times every finalist once, in turn, so slow drifts (clocks, heat) hit all alike."""
MARGIN = 0.01
"""A finalist replaces the default spec only when its final-round median is faster by more than this fraction:
first-pass times of near-equal kernels differ by noise, and the default is the better-tested choice."""
TILES = ((128, 256, 64), (128, 128, 64), (256, 128, 64), (128, 64, 64), (64, 256, 64), (64, 128, 64), (64, 64, 64))
"""Tiles tried; 64-row tiles run with one consumer warpgroup, the others with two."""
CLUSTERS = ((2, 1), (1, 2))
"""2-CTA clusters tried once per tile (with the base's raster group, no split): they measured at par or below
(benchmarks/NOTES.md, version 3), so they get no grid of their own."""
GROUPS = (1, 4, 8, 16, 32)
SPLITS = (1, 2, 4, 8)
_OFF = ("0", "off", "false", "no")


class AutotuneError(ValueError):
    """Bad input to :func:`autotune` / :func:`candidate_specs` (raised before anything runs), or no candidate worked.

    >>> raise AutotuneError("autotune: candidates is empty")
    Traceback (most recent call last):
    ...
    cute_py.autotune.AutotuneError: autotune: candidates is empty
    """


# ---------------------------------------------------------------------------------------------------------------
# The problem: what a tuned kernel is chosen for.

@dataclass(frozen=True)
class Problem:
    """One GEMM problem as the kernel choice sees it: sizes, majors, types and the epilogue's shape.

    ``a_major`` is "K" when a's K dimension is contiguous, else "MN"; ``b_major``
    is "K" when b ``(K, N)`` has K contiguous (``b.t()`` row-major), else "MN";
    ``bias`` is None, "row" (length M) or "col" (length N); ``d_tma``: D can be
    stored by TMA (row-major, 16-byte aligned base and leading dimension). The
    problem key (:meth:`key`) leaves ``d_tma`` out: it limits the epilogue, not
    the problem.

    >>> p = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
    >>> p.flops, p.shape, p.default_spec().problems()
    (137438953472, '4096x4096x4096', [])
    """

    M: int
    N: int
    K: int
    a_major: str
    b_major: str
    dtype: str
    out_dtype: str
    beta: bool = False
    bias: str | None = None
    activation: str | None = None
    c_row_major: bool = True
    d_tma: bool = True

    @property
    def flops(self) -> int:
        """``2 * M * N * K``."""
        return 2 * self.M * self.N * self.K

    @property
    def shape(self) -> str:
        """``"MxNxK"``."""
        return f"{self.M}x{self.N}x{self.K}"

    def key(self, device: str) -> str:
        """:func:`problem_key` of this problem on ``device``."""
        return problem_key(self.M, self.N, self.K, self.a_major, self.b_major, self.dtype, self.out_dtype,
                           self.beta, self.bias, self.activation, self.c_row_major, device=device)

    def default_spec(self, sm_count: int = 132) -> GemmSpec:
        """The spec ``cute_py.gemm`` picks without tuning on a GPU of ``sm_count`` SMs
        (:func:`cute_py.gemm.pick_spec`)."""
        from .gemm import pick_spec
        return pick_spec(self.M, self.N, self.K, self.a_major, self.b_major, self.dtype, self.out_dtype,
                         beta=self.beta, bias=self.bias, activation=self.activation, c_row_major=self.c_row_major,
                         d_tma=self.d_tma, sm_count=sm_count)

    def mismatches(self, spec: GemmSpec) -> list:
        """What of ``spec`` disagrees with this problem (majors, types, epilogue, D's layout); [] if nothing.

        >>> from cute_py.emit import GemmSpec
        >>> Problem(64, 64, 64, "K", "K", "bf16", "bf16").mismatches(GemmSpec(dtype="f16"))
        ["dtype: spec 'f16', arrays 'bf16'", "out_dtype: spec 'f16', arrays 'bf16'"]
        """
        have = {"a_major": spec.a_major, "b_major": spec.b_major, "dtype": spec.dtype, "out_dtype": spec.out_dtype,
                "beta": spec.beta, "bias": spec.bias, "activation": spec.activation}
        want = {k: getattr(self, k) for k in have}
        bad = [f"{k}: spec {have[k]!r}, arrays {want[k]!r}" for k in have if have[k] != want[k]]
        try:
            row = spec.c_row_major
        except Exception:  # noqa: BLE001 - an unparsable c is reported by spec.problems()
            row = None
        if row != self.c_row_major:
            bad.append(f"c_row_major: spec {row!r}, arrays {self.c_row_major!r}")
        elif spec.epilogue == "tma" and not self.d_tma:
            bad.append("epilogue: spec 'tma' stores D with TMA, which needs a row-major out with a 16-byte aligned "
                       "base and leading dimension; use epilogue='direct'")
        return bad

    @classmethod
    def from_arrays(cls, a, b, c=None, *, beta=0.0, bias=None, activation=None, out=None,
                    op: str = "autotune") -> "Problem":
        """The problem of ``gemm(a, b, c, beta=beta, bias=bias, activation=activation, out=out)``, read from the
        arrays' shapes, strides and types (no GPU needed). Raises :class:`AutotuneError` naming ``op``.

        >>> class Fake:
        ...     def __init__(self, shape, strides, typestr="<f2"):
        ...         self.__cuda_array_interface__ = {"version": 3, "data": (1 << 40, False), "shape": shape,
        ...                                          "typestr": typestr, "strides": tuple(2 * s for s in strides)}
        >>> Problem.from_arrays(Fake((256, 64), (64, 1)), Fake((64, 128), (1, 64)))
        Problem(M=256, N=128, K=64, a_major='K', b_major='K', dtype='f16', out_dtype='f16', beta=False, bias=None, activation=None, c_row_major=True, d_tma=True)
        """
        A, B = _record(a, "a", op), _record(b, "b", op)
        if len(A.shape) != 2 or len(B.shape) != 2:
            raise AutotuneError(f"{op}: a and b must be 2-D, got shapes {A.shape} and {B.shape}")
        (M, K), (K2, N) = A.shape, B.shape
        if K != K2:
            raise AutotuneError(f"{op}: inner dimensions differ: a is {A.shape}, b is {B.shape} (K {K} vs {K2})")
        if min(M, N, K) <= 0:
            raise AutotuneError(f"{op}: M, N and K must be positive, got {M}x{N}x{K}")
        t, tb = _type_name(A, "a", op), _type_name(B, "b", op)
        if t != tb or t not in ("bf16", "f16"):
            raise AutotuneError(f"{op}: a and b must both be bf16 or both f16, got {t} and {tb}")
        a_major = "K" if _contiguous_dim(A, "a", op) == 1 else "MN"
        b_major = "K" if _contiguous_dim(B, "b", op) == 0 else "MN"
        out_dtype, row, d_tma = t, True, (N * A.itemsize) % 16 == 0      # gemm allocates a compact row-major D
        if out is not None:
            D = _record(out, "out", op)
            if D.shape != (M, N):
                raise AutotuneError(f"{op}: out has shape {D.shape}, expected {(M, N)}")
            out_dtype = _type_name(D, "out", op)
            row = _contiguous_dim(D, "out", op) == 1
            ld = D.strides[0] if row else D.strides[1]
            d_tma = row and D.ptr % 16 == 0 and (ld * D.itemsize) % 16 == 0
        has_c = c is not None and beta != 0
        if has_c:
            C = _record(c, "c", op)
            if C.shape != (M, N):
                raise AutotuneError(f"{op}: c has shape {C.shape}, expected {(M, N)}")
        bias_mode = None
        if bias is not None:
            V = _record(bias, "bias", op)
            if len(V.shape) != 1 or V.shape[0] not in (M, N):
                raise AutotuneError(f"{op}: bias must be a vector of length N={N} or M={M}, got shape {V.shape}")
            bias_mode = "col" if V.shape[0] == N else "row"
        if activation not in (None, "relu", "gelu"):
            raise AutotuneError(f"{op}: activation {activation!r} not in (None, 'relu', 'gelu')")
        return cls(M, N, K, a_major, b_major, t, out_dtype, has_c, bias_mode, activation, row, d_tma)


def _record(x, what, op):
    from .runtime import as_device_array
    try:
        return as_device_array(x)
    except Exception as e:  # noqa: BLE001 - re-raised with the argument's name
        raise AutotuneError(f"{op}: {what}: {e}") from None


def _type_name(x, what, op) -> str:
    name = x.dtype.name
    name = "bf16" if name == "u16" else name          # cupy has no bf16: its 16-bit words are read as bf16
    if name not in ("bf16", "f16", "f32"):
        raise AutotuneError(f"{op}: {what} has element type {name}; supported: bf16, f16 (f32 for out)")
    return name


def _contiguous_dim(x, what, op) -> int:
    """Which dimension of the 2-D array ``x`` has stride 1 (1 when both could be: a single row or element)."""
    (r, c), (sr, sc) = x.shape, x.strides
    if sc == 1 or c == 1:
        return 1
    if sr == 1 or r == 1:
        return 0
    raise AutotuneError(f"{op}: {what} with shape {x.shape} and element strides {x.strides} is not contiguous "
                        f"along either dimension (one stride must be 1)")


# ---------------------------------------------------------------------------------------------------------------
# Candidates

def candidate_specs(M: int, N: int, K: int, base: GemmSpec, sm_count: int = 132) -> list:
    """The specs :func:`autotune` times by default: ``base`` first, then ``base`` varied over the tile
    (:data:`TILES`), the L2 raster group (:data:`GROUPS`) and split-K (:data:`SPLITS`), then per tile each
    cluster of :data:`CLUSTERS` and the ping-pong schedule once; all persistent; only specs with
    ``problems() == []``, without duplicates, at most :data:`MAX_CANDIDATES`.

    Per tile shape, with ``tiles`` output tiles of it (``m_tiles`` along M):

    - a cluster is tried only where it fits in the tile grid (``m_tiles >= 2`` for (2, 1));
    - the raster group matters only when the tiles do not all run at once (``tiles > sm_count``):
      then each group below ``m_tiles`` is tried (a group spanning all M tiles is ``base.group``);
    - split-K matters only when they do not fill the GPU (``tiles < sm_count``): then ``s`` in
      :data:`SPLITS` with ``tiles * s <= 2 * sm_count`` and at least two k-blocks per split.

    Postconditions: ``result[0] == base``; every spec is valid and persistent (but ``base`` as given); no
    two are equal; ``len(result) <= MAX_CANDIDATES``.

    >>> from cute_py.emit import GemmSpec
    >>> few = candidate_specs(512, 1024, 4096, GemmSpec(tile=(128, 128, 64)))
    >>> sorted({s.split_k for s in few}), sorted({s.group for s in few})
    ([1, 2, 4, 8], [8])
    >>> sorted({s.split_k for s in candidate_specs(512, 1024, 256, GemmSpec(tile=(128, 128, 64)))})
    [1, 2]
    >>> many = candidate_specs(8192, 8192, 8192, GemmSpec(tile=(128, 256, 64)))
    >>> sorted({s.split_k for s in many}), sorted({s.group for s in many}), len({s.tile for s in many})
    ([1], [1, 4, 8, 16, 32], 7)
    >>> sorted({(s.cluster, s.schedule) for s in many})[:3]
    [((1, 1), 'cooperative'), ((1, 1), 'pingpong'), ((1, 2), 'cooperative')]
    """
    _check_sizes("candidate_specs", M, N, K)
    if not isinstance(base, GemmSpec):
        raise AutotuneError(f"candidate_specs: base must be a GemmSpec, got {type(base).__name__}")
    bad = base.problems()
    if bad:
        raise AutotuneError(f"candidate_specs: the base spec {base.name} is not valid: {'; '.join(bad)}")
    if not isinstance(sm_count, int) or sm_count < 1:
        raise AutotuneError(f"candidate_specs: sm_count must be a positive int, got {sm_count!r}")
    specs, extra = [base], []
    for tile in TILES:
        bm, bn, bk = tile
        m_tiles, n_tiles, k_blocks = -(-M // bm), -(-N // bn), -(-K // bk)
        at = base.replace(tile=tile, consumers=1 if bm == 64 else 2, cluster=(1, 1), schedule="cooperative",
                          persistent=True, split_k=1)
        for group, split in _schedules(m_tiles, n_tiles, k_blocks, sm_count, base.group):
            specs.append(at.replace(group=group, split_k=split))
        extra += [at.replace(cluster=c) for c in CLUSTERS if c[0] <= m_tiles and c[1] <= n_tiles]
        extra.append(at.replace(consumers=2, schedule="pingpong"))
    specs += extra
    unique = list(dict.fromkeys(specs))
    valid = [unique[0]] + [s for s in unique[1:] if not s.problems()]
    return valid[:MAX_CANDIDATES]


def _schedules(m_tiles, n_tiles, k_blocks, sm_count, base_group):
    """``(group, split_k)`` pairs worth trying for one tile shape (see :func:`candidate_specs`)."""
    tiles = m_tiles * n_tiles
    if tiles > sm_count:
        groups = dict.fromkeys([g for g in GROUPS if g < m_tiles] + [base_group])
        return [(g, 1) for g in sorted(groups)]
    if tiles < sm_count:
        return [(base_group, s) for s in SPLITS
                if s == 1 or (tiles * s <= 2 * sm_count and k_blocks >= 2 * s)]
    return [(base_group, 1)]


def _check_sizes(op, M, N, K):
    for name, v in (("M", M), ("N", N), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise AutotuneError(f"{op}: {name} must be a positive int, got {v!r}")


def _resolve_candidates(candidates, problem: Problem) -> list:
    """User-given candidates, checked against the problem and deduplicated (order kept)."""
    specs = list(candidates)
    if not specs:
        raise AutotuneError("autotune: candidates is empty; pass None for candidate_specs(...) or at least one "
                            "GemmSpec")
    wrong = [type(s).__name__ for s in specs if not isinstance(s, GemmSpec)]
    if wrong:
        raise AutotuneError(f"autotune: candidates must be GemmSpecs, got {', '.join(sorted(set(wrong)))}")
    problems = []
    for s in dict.fromkeys(specs):
        bad = problem.mismatches(s) or s.problems()
        if bad:
            problems.append(f"{s.name}: {'; '.join(bad)}")
    if problems:
        raise AutotuneError(f"autotune: {len(problems)} candidate(s) do not fit the arrays "
                            f"({problem.shape}, a {problem.a_major}-major, b {problem.b_major}-major, "
                            f"{problem.dtype} -> {problem.out_dtype}) or are not valid:\n  - " + "\n  - ".join(problems))
    return list(dict.fromkeys(specs))


# ---------------------------------------------------------------------------------------------------------------
# Results

@dataclass(frozen=True)
class AutotuneRow:
    """One candidate's outcome: ``status`` is "ok", "failed: <reason>" or "wrong result: <error>".

    >>> from cute_py.emit import GemmSpec
    >>> r = AutotuneRow(GemmSpec(), 0.5e-3, 275.0)
    >>> r.ok, r.ms
    (True, 0.5)
    """

    spec: GemmSpec
    seconds: float | None = None
    tflops: float | None = None
    status: str = "ok"
    rel_err: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def ms(self) -> float | None:
        return None if self.seconds is None else self.seconds * 1e3

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class AutotuneResult:
    """What :func:`autotune` measured: ``best`` (spec), ``best_seconds``, ``default`` (the untuned spec),
    ``rows`` (one :class:`AutotuneRow` per candidate, in the order timed, first-pass times), ``final``
    (``(spec, seconds)`` of the final round's finalists; ``best_seconds`` comes from there when the best is
    one of them), ``problem`` and ``device``. ``str(result)`` is a plain-text table.

    >>> from cute_py.emit import GemmSpec
    >>> p = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
    >>> a, b = GemmSpec(tile=(128, 256, 64)), GemmSpec(tile=(128, 128, 64))
    >>> res = AutotuneResult(p, b, 0.2e-3, a, (AutotuneRow(a, 0.25e-3, 550.0), AutotuneRow(b, 0.2e-3, 687.0),
    ...                                       AutotuneRow(GemmSpec(tile=(256, 128, 64)), status="failed: LaunchError")))
    >>> round(res.speedup, 2), res.best_ms
    (1.25, 0.2)
    >>> print(res)  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
    autotune 4096x4096x4096 (a K-major, b K-major, bf16 -> bf16): best cute_gemm_sm90_bf16_tn_128x128x64...
             0.200 ms, 687 TFLOP/s, 1.25x the default spec; 2 of 3 candidates ran
      #  spec... time ms  TFLOP/s  status
      1  cute_gemm_sm90_bf16_tn_128x256x64... 0.250  550  ok (default)
    * 2  cute_gemm_sm90_bf16_tn_128x128x64... 0.200  687  ok
      3  cute_gemm_sm90_bf16_tn_256x128x64...  -  -  failed: LaunchError
    """

    problem: Problem
    best: GemmSpec
    best_seconds: float
    default: GemmSpec
    rows: tuple = field(default_factory=tuple)
    device: str | None = None
    final: tuple = field(default_factory=tuple)

    @property
    def best_ms(self) -> float:
        return self.best_seconds * 1e3

    @property
    def best_tflops(self) -> float:
        return self.problem.flops / self.best_seconds / 1e12

    @property
    def speedup(self) -> float | None:
        """The default spec's time over the best time (final-round times where the default was a finalist;
        None when the default was not among the timed rows)."""
        t = [x for s, x in self.final if s == self.default] or [r.seconds for r in self.rows
                                                                 if r.spec == self.default and r.ok]
        return t[0] / self.best_seconds if t else None

    def table(self) -> str:
        """The plain-text table ``str(result)`` prints."""
        p = self.problem
        ran = sum(r.ok for r in self.rows)
        gain = f", {self.speedup:.2f}x the default spec" if self.speedup is not None else ""
        on = f" on {self.device}" if self.device else ""
        head = [f"autotune {p.shape} (a {p.a_major}-major, b {p.b_major}-major, {p.dtype} -> {p.out_dtype}){on}: "
                f"best {self.best.name}",
                f"         {self.best_ms:.3f} ms, {self.best_tflops:.0f} TFLOP/s{gain}; "
                f"{ran} of {len(self.rows)} candidates ran"]
        w = max([len("spec")] + [len(r.name) for r in self.rows])
        lines = [f"  {'#':>2}  {'spec':<{w}}  {'time ms':>7}  {'TFLOP/s':>7}  status"]
        for i, r in enumerate(self.rows, 1):
            mark = "*" if r.spec == self.best and r.ok else " "
            ms = f"{r.ms:7.3f}" if r.ok else f"{'-':>7}"
            tf = f"{r.tflops:7.0f}" if r.ok else f"{'-':>7}"
            status = _short(r.status) + (" (default)" if r.spec == self.default else "")
            lines.append(f"{mark} {i:>2}  {r.name:<{w}}  {ms}  {tf}  {status}")
        return "\n".join(head + lines)

    def __str__(self) -> str:
        return self.table()


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------------------------------------------------------
# Progress

def progress_line(i: int, n: int, name: str, seconds: float | None = None, tflops: float | None = None,
                  status: str = "ok") -> str:
    """The line printed for candidate ``i`` of ``n`` when tqdm is not installed.

    >>> progress_line(3, 12, "cute_gemm_x", 0.812e-3, 677.2)
    'autotune [3/12] cute_gemm_x: 0.812 ms, 677 TFLOP/s'
    >>> progress_line(4, 12, "cute_gemm_y", status="failed: CompileError: ...")
    'autotune [4/12] cute_gemm_y: failed: CompileError: ...'
    """
    if status == "ok" and seconds is not None:
        return f"autotune [{i}/{n}] {name}: {seconds * 1e3:.3f} ms, {tflops:.0f} TFLOP/s"
    return f"autotune [{i}/{n}] {name}: {_short(status)}"


def _tqdm():
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


class _Progress:
    """A tqdm bar when tqdm is importable, else one :func:`progress_line` per candidate on ``stream``."""

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.total, self.enabled = total, enabled
        self.stream = stream
        tqdm = _tqdm() if enabled else None
        self.bar = tqdm(total=total, desc="autotune", file=stream or sys.stderr, unit="spec") if tqdm else None
        self.best = None

    def update(self, i: int, row: AutotuneRow) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            print(progress_line(i, self.total, row.name, row.seconds, row.tflops, row.status),
                  file=self.stream or sys.stderr, flush=True)
            return
        if row.ok and (self.best is None or row.seconds < self.best.seconds):
            self.best = row
        if self.best is not None:
            self.bar.set_postfix_str(f"best {self.best.ms:.3f} ms, {self.best.tflops:.0f} TFLOP/s", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------------------------------------------
# Measuring

def _measure(spec: GemmSpec, trial, flops: int) -> AutotuneRow:
    """Run ``trial(spec) -> (seconds | None, rel_err | None)`` and turn its outcome into a row."""
    try:
        seconds, err = trial(spec)
    except Exception as e:  # noqa: BLE001 - any failure of one candidate is its row's reason
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return AutotuneRow(spec, status=f"failed: {type(e).__name__}: {first}".rstrip(": "))
    if seconds is None:
        return AutotuneRow(spec, rel_err=err,
                           status=f"wrong result: relative error {err:.2e} > {TOLERANCE:g} against the default spec")
    return AutotuneRow(spec, seconds, flops / seconds / 1e12, "ok", err)


def _tune(problem: Problem, default: GemmSpec, specs, trial, *, progress=True, stream=None,
          device=None) -> AutotuneResult:
    """Measure every spec with ``trial``, then time the :data:`FINALISTS` fastest and the default again in
    :data:`FINAL_ROUNDS` alternating rounds (``trial.time(spec)``); the fastest finalist is best, unless the
    default is within :data:`MARGIN` of it. Raises if none ran."""
    bar = _Progress(len(specs), progress, stream)
    rows = []
    try:
        for i, spec in enumerate(specs, 1):
            rows.append(_measure(spec, trial, problem.flops))
            bar.update(i, rows[-1])
    finally:
        bar.close()
    ran = [r for r in rows if r.ok]
    if not ran:
        reasons = "\n".join(f"  - {r.name}: {_short(r.status)}" for r in rows)
        raise AutotuneError(f"autotune: none of the {len(rows)} candidates ran correctly for {problem.shape}:\n"
                            f"{reasons}")
    finalists = [r.spec for r in sorted(ran, key=lambda r: r.seconds)[:FINALISTS]]
    if default not in finalists and any(r.spec == default for r in ran):
        finalists.append(default)
    if len(finalists) == 1:
        best = ran[0]
        return AutotuneResult(problem, best.spec, best.seconds, default, tuple(rows), device)
    times = {s: [] for s in finalists}
    for _ in range(FINAL_ROUNDS):
        for s in finalists:
            times[s].append(trial.time(s))
    final = {s: statistics.median(v) for s, v in times.items()}
    best = min(final, key=final.get)
    if default in final and final[default] <= final[best] * (1 + MARGIN):
        best = default
    return AutotuneResult(problem, best, final[best], default, tuple(rows), device, tuple(final.items()))


class _Timer:
    """Two CUDA events (driver API) on the legacy default stream, where ``cute_py.gemm`` launches by default."""

    def __init__(self):
        from .runtime import device
        from .runtime.driver import _check, _driver
        device()
        self._d, self._check = _driver(), _check
        self._start = _check(self._d.cuEventCreate(0), "cuEventCreate")
        self._end = _check(self._d.cuEventCreate(0), "cuEventCreate")

    def per_call(self, fn, calls: int) -> float:
        """Seconds per call over ``calls`` back-to-back calls of ``fn()`` between the two events."""
        d, check, stream = self._d, self._check, self._d.CUstream(0)
        check(d.cuEventRecord(self._start, stream), "cuEventRecord")
        for _ in range(calls):
            fn()
        check(d.cuEventRecord(self._end, stream), "cuEventRecord")
        check(d.cuEventSynchronize(self._end), "cuEventSynchronize")
        return check(d.cuEventElapsedTime(self._start, self._end), "cuEventElapsedTime") / 1e3 / calls

    def close(self) -> None:
        for ev in (self._start, self._end):
            self._d.cuEventDestroy(ev)


class _Trial:
    """Checks and times one candidate on the user's arrays: ``trial(spec) -> (seconds | None, rel_err | None)``.

    ``run(spec, out) -> out`` is one ``cute_py.gemm`` call. The default spec runs first (allocating ``out``
    when it is None); its result, copied to f32 by the arrays' own library, is the reference. Before a
    candidate's checked call ``out`` is filled with NaN, so a kernel that writes nothing fails the check.
    """

    def __init__(self, run, default: GemmSpec, out, *, check: bool, reps: int, warmup: int, batch: int):
        from .runtime import synchronize
        self._run, self._sync = run, synchronize
        self.out = run(default, out)
        synchronize()
        self._ref = _f32_copy(self.out) if check else None
        self.reps, self.warmup, self.batch = reps, warmup, batch
        self._timer = _Timer()

    def __call__(self, spec: GemmSpec):
        err = None
        if self._ref is not None:
            _poison(self.out)
            self._sync()
            self._run(spec, self.out)
            self._sync()
            err = _rel_err(self.out, self._ref)
            if not err <= TOLERANCE:                   # NaN too
                return None, err
        else:
            self._run(spec, self.out)                  # compile and load outside the timing
        for _ in range(self.warmup):
            self._run(spec, self.out)
        return self.time(spec), err

    def time(self, spec: GemmSpec) -> float:
        """Seconds per call: the median over ``reps`` batches of ``batch`` calls (``spec`` already ran)."""
        once = lambda: self._run(spec, self.out)       # noqa: E731
        return statistics.median(self._timer.per_call(once, self.batch) for _ in range(self.reps))

    def close(self) -> None:
        self._timer.close()


# Array-library helpers for the check: torch or cupy, whichever the arrays come from.

def _lib(x) -> str:
    return type(x).__module__.split(".")[0]


def _check_lib(x, op="autotune") -> None:
    if _lib(x) not in ("torch", "cupy"):
        raise AutotuneError(f"{op}: check=True compares results with torch or cupy, but the output would be a "
                            f"{type(x).__name__}; pass torch/cupy arrays (or out=), or check=False")


def _f32_copy(x):
    """A new float32 array with ``x``'s values (cupy bf16 arrives as raw uint16 words)."""
    if _lib(x) == "torch":
        import torch
        return x.to(dtype=torch.float32, copy=True)
    import cupy
    if x.dtype == cupy.uint16:
        return (x.astype(cupy.uint32) << 16).view(cupy.float32)
    return x.astype(cupy.float32)


def _poison(x) -> None:
    if _lib(x) == "torch":
        x.fill_(float("nan"))
        return
    import cupy
    x.fill(0x7FC0 if x.dtype == cupy.uint16 else float("nan"))     # 0x7FC0: a bf16 NaN


def _rel_err(x, ref) -> float:
    """``||x - ref||_F / ||ref||_F`` (``||x - ref||_F`` when ref is all zeros)."""
    diff = _f32_copy(x) - ref
    if _lib(x) == "torch":
        num, den = float(diff.norm()), float(ref.norm())
    else:
        import cupy
        num, den = float(cupy.linalg.norm(diff)), float(cupy.linalg.norm(ref))
    return num / den if den > 0 else num


def _same_memory(x, y) -> bool:
    from .runtime import as_device_array
    return as_device_array(x).ptr == as_device_array(y).ptr


# ---------------------------------------------------------------------------------------------------------------
# The entry point

def autotune(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out=None, candidates=None,
             reps: int = 10, warmup: int = 3, batch: int = 10, progress: bool = True, cache: bool = True,
             check: bool = True) -> AutotuneResult:
    """Time every candidate spec on these arrays through ``cute_py.gemm(..., spec=s)``; return the best.

    Arguments as :func:`cute_py.gemm` (``D = act(alpha * a @ b + beta * c + bias)``), plus:

    - ``candidates``: the specs to try (default :func:`candidate_specs` around the default spec, for
      this GPU's SM count); each must fit the arrays (majors, types, epilogue) and be valid.
    - ``reps`` batches of ``batch`` back-to-back calls are timed between CUDA events (driver API, legacy
      default stream) after ``warmup`` untimed calls; a candidate's time is the median per call.
    - ``check``: each candidate's result must be within a relative Frobenius error of
      :data:`TOLERANCE` of the default spec's (computed on the GPU by torch or cupy).
    - ``progress``: a tqdm bar if tqdm is installed, else one :func:`progress_line` per candidate on
      stderr; False is silent.
    - ``cache``: record the winner in the autotune file (:func:`record`), where :func:`lookup`, and so
      ``cute_py.gemm`` without ``spec=``, finds it.

    Times are those of eager calls, as a loop of ``cute_py.gemm`` calls sees them: where a kernel is shorter
    than the host's per-call work, that work is what is measured. A candidate that fails to compile or
    launch, or whose result is wrong, is kept as a failed row with its reason and never chosen. Bad input raises :class:`AutotuneError` before anything runs; so does a
    run in which no candidate worked. ``out`` is overwritten many times (and ``c`` must not be ``out``).

    >>> import torch, cute_py                                          # doctest: +SKIP
    >>> a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)   # doctest: +SKIP
    >>> w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)   # doctest: +SKIP
    >>> print(cute_py.autotune(a, w.t()))                              # doctest: +SKIP
    >>> import numpy as np
    >>> autotune(np.ones((64, 64)), np.ones((64, 64)))                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.autotune.AutotuneError: autotune: a: as_device_array: the array lives on the CPU device, ...
    """
    for name, v, low in (("reps", reps, 1), ("warmup", warmup, 0), ("batch", batch, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise AutotuneError(f"autotune: {name} must be an int >= {low}, got {v!r}")
    problem = Problem.from_arrays(a, b, c, beta=beta, bias=bias, activation=activation, out=out)
    specs = _resolve_candidates(candidates, problem) if candidates is not None else None
    if check:
        _check_lib(out if out is not None else a)
    if out is not None and problem.beta and _same_memory(c, out):
        raise AutotuneError("autotune: out is c; every timed call would change c (pass a separate out)")
    from .gemm import gemm
    from .runtime import device
    dev = device()
    default = problem.default_spec(dev.sm_count)
    if specs is None:
        specs = candidate_specs(problem.M, problem.N, problem.K, default, dev.sm_count)

    def run(spec, dst):
        return gemm(a, b, c, alpha=alpha, beta=beta, bias=bias, activation=activation, out=dst, spec=spec)

    trial = _Trial(run, default, out, check=check, reps=reps, warmup=warmup, batch=batch)
    try:
        result = _tune(problem, default, specs, trial, progress=progress, device=dev.name)
    finally:
        trial.close()
    if cache:
        try:
            record(problem, result.best, result.best_seconds, device=dev.name)
        except OSError as e:                              # keep the measurement; say why it is not remembered
            warnings.warn(f"autotune: could not record the best spec in {cache_path()}: {e}", stacklevel=2)
    return result


# ---------------------------------------------------------------------------------------------------------------
# The autotune file: {"format": FORMAT, "entries": {problem_key: entry}}, read once per process.

def problem_key(M, N, K, a_major, b_major, dtype, out_dtype, beta=False, bias=None, activation=None,
                c_row_major=True, *, device: str | None = None) -> str:
    """The autotune file's key of one problem on one GPU (``device``: its name; default the current GPU's).

    Postcondition: two problems share a key exactly when every argument (and :data:`FORMAT`) is equal.

    >>> problem_key(128, 4096, 4096, "K", "MN", "bf16", "f32", True, "col", "gelu", device="H100")
    'v1|H100|128x4096x4096|a:K b:MN|bf16->f32|beta:1 bias:col act:gelu c:row'
    """
    if device is None:
        device = _device_name()
        if device is None:
            from .runtime import device as _dev
            device = _dev().name                         # raises NoDeviceError with its reason
    return (f"v{FORMAT}|{device}|{M}x{N}x{K}|a:{a_major} b:{b_major}|{dtype}->{out_dtype}|"
            f"beta:{int(bool(beta))} bias:{bias or '-'} act:{activation or '-'} c:{'row' if c_row_major else 'col'}")


def cache_path() -> Path:
    """``autotune.json`` in cute_py's cache folder (:func:`cute_py.runtime.cache.cache_dir`).

    >>> cache_path().name
    'autotune.json'
    """
    return cache_dir() / FILENAME


class _State:
    """The autotune file in memory: loaded once per cache location, updated by :func:`record`."""

    lock = threading.Lock()
    where = None            # (CUTE_PY_CACHE_DIR, XDG_CACHE_HOME) the entries were read under
    entries: dict = {}
    specs: dict = {}        # key -> GemmSpec | None, parsed on first lookup
    device = None           # the current GPU's name, once known
    device_known = False


def _where():
    env = os.environ
    return env.get("CUTE_PY_CACHE_DIR"), env.get("XDG_CACHE_HOME")


def _entries() -> dict:
    where = _where()
    if where != _State.where:
        with _State.lock:
            _State.entries, _State.specs, _State.where = _read(cache_path()), {}, where
    return _State.entries


def _read(path: Path) -> dict:
    """The entries of the file at ``path``; {} if it is missing, damaged or of another format."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def _device_name():
    if not _State.device_known:
        try:
            from .runtime import device
            _State.device = device().name
        except Exception:  # noqa: BLE001 - no GPU: nothing was tuned for this machine
            _State.device = None
        _State.device_known = True
    return _State.device


def _enabled() -> bool:
    v = os.environ.get(ENV)
    return v is None or v.strip().lower() not in _OFF


def lookup(M, N, K, a_major, b_major, dtype, out_dtype, beta=False, bias=None, activation=None,
           c_row_major=True, *, d_tma=True) -> GemmSpec | None:
    """The spec :func:`autotune` recorded for this problem on the current GPU, or None.

    None also when :data:`ENV` is ``0``, there is no GPU, the entry was made by another cute_py version
    or names a spec that is no longer valid, or ``d_tma`` is False (D cannot be stored by TMA) and the
    recorded spec's epilogue is "tma". Fast: after the first call it is one dict lookup (the file is
    read once per process and cache folder; the device name is queried once).

    >>> import os; os.environ["CUTE_PY_AUTOTUNE"] = "0"
    >>> lookup(4096, 4096, 4096, "K", "K", "bf16", "bf16") is None
    True
    >>> del os.environ["CUTE_PY_AUTOTUNE"]
    """
    if not _enabled():
        return None
    entries = _entries()
    if not entries:
        return None
    device = _device_name()
    if device is None:
        return None
    key = problem_key(M, N, K, a_major, b_major, dtype, out_dtype, beta, bias, activation, c_row_major,
                      device=device)
    try:
        spec = _State.specs[key]
    except KeyError:
        spec = _State.specs[key] = _parse_entry(entries.get(key))
    if spec is not None and not d_tma and spec.epilogue == "tma":
        return None
    return spec


def _parse_entry(entry) -> GemmSpec | None:
    if not isinstance(entry, dict) or entry.get("cute_py") != _version():
        return None
    try:
        spec = GemmSpec.from_dict(entry["spec"])
        return None if spec.problems() else spec
    except Exception:  # noqa: BLE001 - an entry the current GemmSpec cannot read is a miss
        return None


def _version() -> str:
    from . import __version__
    return __version__


def record(problem: Problem, spec: GemmSpec, seconds: float, *, device: str | None = None) -> Path:
    """Store ``spec`` (measured at ``seconds`` per call) as the best for ``problem`` on ``device`` (default the
    current GPU); returns the file written. The file is re-read first (merging entries written by other
    processes) and replaced atomically. An unwritable cache folder raises ``OSError``.

    >>> import tempfile, os
    >>> from cute_py.emit import GemmSpec
    >>> os.environ["CUTE_PY_CACHE_DIR"] = tempfile.mkdtemp()
    >>> p = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
    >>> record(p, GemmSpec(tile=(128, 256, 64)), 0.2e-3, device="H100").name
    'autotune.json'
    >>> _entries()[p.key("H100")]["time_ms"]
    0.2
    >>> clear_cache(); del os.environ["CUTE_PY_CACHE_DIR"]
    True
    """
    if device is None:
        from .runtime import device as _dev
        device = _dev().name
    key = problem.key(device)
    entry = {"spec": spec.to_dict(), "name": spec.name, "time_ms": round(seconds * 1e3, 6),
             "tflops": round(problem.flops / seconds / 1e12, 1), "cute_py": _version(),
             "recorded": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    path = cache_path()
    with _State.lock:
        entries = _read(path)
        entries[key] = entry
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True).encode())
        _State.entries, _State.specs, _State.where = entries, {}, _where()
    _forget_launches()
    return path


def _forget_launches() -> None:
    """Drop cute_py.gemm's prepared launches, so calls that picked their spec before this record pick again."""
    gemm_module = sys.modules.get("cute_py.gemm")
    if gemm_module is not None:
        gemm_module._LAUNCHES.clear()


def clear_cache() -> bool:
    """Delete the autotune file and forget its entries in memory; True if a file was removed.

    >>> import tempfile, os
    >>> os.environ["CUTE_PY_CACHE_DIR"] = tempfile.mkdtemp()
    >>> clear_cache()
    False
    >>> del os.environ["CUTE_PY_CACHE_DIR"]
    """
    _forget_launches()
    with _State.lock:
        _State.entries, _State.specs, _State.where = {}, {}, None
        try:
            cache_path().unlink()
        except FileNotFoundError:
            return False
    return True
