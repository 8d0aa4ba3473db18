"""``cute_py.autotune``: time candidate kernels on your arrays, keep the fastest, remember it on disk.

:func:`autotune` runs every candidate :class:`~cute_py.emit.GemmSpec` through
``cute_py.gemm(..., spec=s)`` on the arrays you pass, checks each result against
the default spec's (:func:`cute_py.selection.heuristic`), times the ones that agree
with the CUDA-event timer (:class:`cute_py.runtime.timer.EventTimer`) and returns
an :class:`AutotuneResult`. The winner is recorded in the tuned table
(:mod:`cute_py.tuned`: ``autotune.json`` in cute_py's cache folder, keyed by the
GPU, M, N, K, the majors, the types and the epilogue), where
:func:`cute_py.selection.select`, and so ``cute_py.gemm`` without ``spec=``, finds it.
``CUTE_PY_AUTOTUNE=0`` (or ``off``, ``false``, ``no``) turns lookups off.

The candidates (:func:`candidate_specs`) vary the default spec's tile, cluster,
L2 raster group and split-K, keeping only the specs a kernel implements (the others' constructors refuse them):

>>> from cute_py.emit import GemmSpec
>>> base = GemmSpec(tile=(128, 256, 64))
>>> specs = candidate_specs(4096, 4096, 4096, base)
>>> specs[0] == base, len(specs) <= MAX_CANDIDATES, all(s.split_k == 1 for s in specs)
(True, True, True)
"""

from __future__ import annotations

import statistics
import sys
import warnings
from dataclasses import dataclass, field

from . import arraylib
from ._callable import make_callable
from .emit.spec import GemmSpec, SpecError
from .gemm import gemm, grouped_gemm, scaled_gemm
from .options import flag
from .problem import Problem
from .problem_groups import grouped_problem
from .runtime import device, synchronize
from .runtime.timer import EventTimer
from .selection import heuristic, swaps_ab
from .tuned import ENV, FORMAT, cache_path, clear_cache, lookup, problem_key, record

__all__ = ["autotune", "candidate_specs", "check_options", "progress_line", "AutotuneResult", "AutotuneRow",
           "AutotuneError",
           "TOLERANCE", "MAX_CANDIDATES", "TILES", "PROMOTED_TILES", "CLUSTERS", "GROUPS", "SPLITS",
           # the tuned table and the problem, where they live now (kept importable from here)
           "Problem", "lookup", "record", "clear_cache", "cache_path", "problem_key", "FORMAT", "ENV"]

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
PROMOTED_TILES = ((128, 160, 64), (128, 144, 64))
"""Tiles tried besides :data:`TILES` when the base promotes per-tensor or row-wise scales (fp8 without
``fast_accum``): the widest whose two accumulator sets fit (:data:`~cute_py.emit.scaling.PROMOTE_REGS`). On the
H200 at M = 4096 they beat 128 x 128 by 2-7% on four of DeepSeek-V3's six shapes and lost up to 21% on the others
(benchmarks/NOTES.md, version 13), so only measuring picks them; blockwise tiles over two scale blocks lost
everywhere, and are not tried."""
CLUSTERS = ((2, 1), (1, 2))
"""2-CTA clusters tried once per tile (with the base's raster group, no split): they measured at par or below
(benchmarks/NOTES.md, version 3), so they get no grid of their own."""
GROUPS = (1, 4, 8, 16, 32)
SPLITS = (1, 2, 4, 8)


class AutotuneError(ValueError):
    """Bad input to :func:`autotune` / :func:`candidate_specs` (raised before anything runs), or no candidate worked.

    >>> raise AutotuneError("autotune: candidates is empty")
    Traceback (most recent call last):
    ...
    cute_py.autotune.AutotuneError: autotune: candidates is empty
    """


# ---------------------------------------------------------------------------------------------------------------
# Candidates

def candidate_specs(M: int, N: int, K: int, base: GemmSpec, sm_count: int = 132) -> list:
    """The specs :func:`autotune` times by default: ``base`` first, then ``base`` varied over the tile
    (:data:`TILES`), the L2 raster group (:data:`GROUPS`) and split-K (:data:`SPLITS`), then per tile each
    cluster of :data:`CLUSTERS` and the ping-pong schedule once; all persistent; only the variants that are
    GemmSpecs (their constructors refuse the others), without duplicates, at most :data:`MAX_CANDIDATES`.

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

    An fp8 base keeps its K tile of 128 and its scale mode; tiles whose promotion does not fit are dropped:

    >>> block = candidate_specs(8192, 8192, 8192, GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128)))
    >>> sorted({s.tile for s in block})
    [(64, 64, 128), (64, 128, 128), (64, 256, 128), (128, 64, 128), (128, 128, 128)]

    A promoted per-tensor or row-wise base also tries :data:`PROMOTED_TILES`:

    >>> row = candidate_specs(8192, 8192, 8192, GemmSpec(dtype="e4m3", scale="row", tile=(128, 128, 128)))
    >>> sorted({s.tile for s in row} - {s.tile for s in block})
    [(128, 144, 128), (128, 160, 128)]
    """
    _check_sizes("candidate_specs", M, N, K)
    if not isinstance(base, GemmSpec):
        raise AutotuneError(f"candidate_specs: base must be a GemmSpec, got {type(base).__name__}")
    if not isinstance(sm_count, int) or sm_count < 1:
        raise AutotuneError(f"candidate_specs: sm_count must be a positive int, got {sm_count!r}")
    specs, extra = [base], []
    for bm, bn, _ in TILES:
        tile = bm, bn, bk = bm, bn, base.tile[2]            # BK as the base's: 64 for 16-bit types, 128 for fp8
        m_tiles, n_tiles, k_blocks = -(-M // bm), -(-N // bn), -(-K // bk)
        at = dict(tile=tile, consumers=1 if bm == 64 else 2, cluster=(1, 1), schedule="cooperative",
                  persistent=True, split_k=1)
        for group, split in _schedules(m_tiles, n_tiles, k_blocks, sm_count, base.group):
            specs.append(_made(base, **{**at, "group": group, "split_k": split}))
        extra += [_made(base, **{**at, "cluster": c}) for c in CLUSTERS if c[0] <= m_tiles and c[1] <= n_tiles]
        extra.append(_made(base, **{**at, "consumers": 2, "schedule": "pingpong"}))
    if base.promotes and base.scale in ("tensor", "row"):     # one schedule each, after every other candidate
        extra += [_made(base, tile=(bm, bn, base.tile[2]), consumers=2, cluster=(1, 1), schedule="cooperative",
                        persistent=True, split_k=1) for bm, bn, _ in PROMOTED_TILES]
    return [s for s in dict.fromkeys(specs + extra) if s is not None][:MAX_CANDIDATES]


def _made(base: GemmSpec, **changes) -> GemmSpec | None:
    """``base`` with ``changes``, or None where no kernel implements that spec (its constructor refuses it)."""
    try:
        return base.replace(**changes)
    except SpecError:
        return None


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


def check_options(op: str, *, reps, warmup, batch, progress, cache, check) -> None:
    """Raise :class:`AutotuneError` naming ``op`` unless the timing options of :func:`autotune` are right:
    ``reps`` and ``batch`` ints >= 1, ``warmup`` an int >= 0, ``progress``, ``cache`` and ``check`` bools.

    >>> check_options("autotune", reps=0, warmup=3, batch=10, progress=True, cache=True, check=True)
    Traceback (most recent call last):
    ...
    cute_py.autotune.AutotuneError: autotune: reps must be an int >= 1, got 0
    """
    for name, v, low in (("reps", reps, 1), ("warmup", warmup, 0), ("batch", batch, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise AutotuneError(f"{op}: {name} must be an int >= {low}, got {v!r}")
    for name, v in (("progress", progress), ("cache", cache), ("check", check)):
        flag(op, name, v, AutotuneError)


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
        bad = problem.mismatches(s)
        if bad:
            problems.append(f"{s.name}: {'; '.join(bad)}")
    if problems:
        raise AutotuneError(f"autotune: {len(problems)} candidate(s) do not fit the arrays "
                            f"({problem.shape}, a {problem.a_major}-major, b {problem.b_major}-major, "
                            f"{problem.dtype} -> {problem.out_dtype}):\n  - " + "\n  - ".join(problems))
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


class _Trial:
    """Checks and times one candidate on the user's arrays: ``trial(spec) -> (seconds | None, rel_err | None)``.

    ``run(spec, out) -> out`` is one ``cute_py.gemm`` call. The default spec runs first (allocating ``out``
    when it is None); its result, copied to f32 by the arrays' own library, is the reference. Before a
    candidate's checked call ``out`` is filled with NaN, so a kernel that writes nothing fails the check.
    """

    def __init__(self, run, default: GemmSpec, out, *, check: bool, reps: int, warmup: int, batch: int,
                 stream: int = 0):
        self._run, self._sync = run, synchronize
        self.out = run(default, out)
        synchronize()
        self._ref = arraylib.f32_copy(self.out) if check else None
        self.reps, self.warmup, self.batch = reps, warmup, batch
        self._timer = EventTimer(stream)                 # where cute_py.gemm launches: the arrays' current stream

    def __call__(self, spec: GemmSpec):
        err = None
        if self._ref is not None:
            arraylib.fill(self.out, float("nan"))
            self._sync()
            self._run(spec, self.out)
            self._sync()
            err = arraylib.rel_err(self.out, self._ref)
            if not err <= TOLERANCE:                   # NaN too
                return None, err
        else:
            self._run(spec, self.out)                  # compile and load outside the timing
        for _ in range(self.warmup):
            self._run(spec, self.out)
        return self.time(spec), err

    def time(self, spec: GemmSpec) -> float:
        """Seconds per call: the median over ``reps`` batches of ``batch`` calls (``spec`` already ran)."""
        once = lambda i: self._run(spec, self.out)     # noqa: E731
        return statistics.median(self._timer.per_call(once, self.batch) for _ in range(self.reps))

    def close(self) -> None:
        self._timer.close()


# ---------------------------------------------------------------------------------------------------------------
# The entry point

def autotune(a, b, c=None, *, alpha=1.0, beta=0.0, bias=None, activation=None, out=None, candidates=None,
             reps: int = 10, warmup: int = 3, batch: int = 10, progress: bool = True, cache: bool = True,
             check: bool = True, scale_a=None, scale_b=None, use_fast_accum: bool = False,
             offs=None) -> AutotuneResult:
    """Time every candidate spec on these arrays through ``cute_py.gemm(..., spec=s)``; return the best.

    Arguments as :func:`cute_py.gemm.gemm` (``D = act(alpha * a @ b + beta * c + bias)``), or with ``scale_a``
    and ``scale_b`` (and ``use_fast_accum``) as :func:`cute_py.gemm.scaled_gemm` for fp8 ``a`` and ``b``
    (timed through ``scaled_gemm(..., spec=s)``), or with ``offs`` (or 3-D ``a`` and ``b``) as
    :func:`cute_py.gemm.grouped_gemm` (timed through ``grouped_gemm(..., spec=s)``; the winner is recorded for the
    group count and sizes of the problem, not for the offsets' values), plus:

    - ``candidates``: the specs to try (default :func:`candidate_specs` around the default spec, for
      this GPU's SM count); each must fit the arrays (majors, types, epilogue) and be valid.
    - ``reps`` batches of ``batch`` back-to-back calls are timed between CUDA events (driver API, on the
      stream the GEMMs launch on: the arrays' current stream) after ``warmup`` untimed calls; a candidate's
      time is the median per call.
    - ``check``: each candidate's result must be within a relative Frobenius error of
      :data:`TOLERANCE` of the default spec's (computed on the GPU by torch or cupy).
    - ``progress``: a tqdm bar if tqdm is installed, else one :func:`progress_line` per candidate on
      stderr; False is silent.
    - ``cache``: record the winner in the autotune file (:func:`record`), where :func:`lookup`, and so
      ``cute_py.gemm`` without ``spec=``, finds it.

    A decode-size problem that ``cute_py.gemm`` runs as swap-AB (:func:`~cute_py.selection.swaps_ab`) is tuned
    as the problem it launches, ``D^T = b^T a^T``, unless ``candidates`` are given (specs of the problem as
    called: they are timed as called).

    Times are those of eager calls, as a loop of ``cute_py.gemm`` calls sees them: where a kernel is shorter
    than the host's per-call work, that work is what is measured. A candidate that fails to compile or
    launch, or whose result is wrong, is kept as a failed row with its reason and never chosen. Arrays the GEMM
    cannot take raise :class:`~cute_py.problem.GemmInputError` and other bad input :class:`AutotuneError`,
    before anything runs; a run in which no candidate worked raises :class:`AutotuneError`. ``out`` is overwritten many times (and ``c`` must not be ``out``).

    >>> import torch, cute_py                                          # doctest: +SKIP
    >>> a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)   # doctest: +SKIP
    >>> w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)   # doctest: +SKIP
    >>> print(cute_py.autotune(a, w.t()))                              # doctest: +SKIP
    >>> import numpy as np
    >>> autotune(np.ones((64, 64)), np.ones((64, 64)))                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cute_py.problem.GemmInputError: autotune: a: as_device_array: the array lives on the CPU device, ...
    """
    check_options("autotune", reps=reps, warmup=warmup, batch=batch, progress=progress, cache=cache, check=check)
    use_fast_accum = flag("autotune", "use_fast_accum", use_fast_accum, AutotuneError)
    if offs is not None or len(getattr(a, "shape", ())) == 3:
        if c is not None or bias is not None or activation is not None:
            raise AutotuneError("autotune: grouped and batched GEMMs take no c, bias or activation")
        problem = grouped_problem(a, b, offs, scale_a=scale_a, scale_b=scale_b, fast_accum=use_fast_accum, out=out,
                                  op="autotune")
    else:
        problem = Problem.from_arrays(a, b, c, beta=beta, bias=bias, activation=activation, out=out,
                                      scale_a=scale_a, scale_b=scale_b, fast_accum=use_fast_accum, op="autotune")
    _check_sizes("autotune", problem.M, problem.N, problem.K)
    if candidates is None and swaps_ab(problem):      # gemm runs it as D^T = b^T a^T: tune (and record) that
        if out is None:
            out = arraylib.allocator(a, "autotune")(problem.out_shape, problem.out_dtype)
        return autotune(**arraylib.swapped_operands(a, b, c, out, scale_a, scale_b), alpha=alpha, beta=beta,
                        bias=bias, activation=activation, use_fast_accum=use_fast_accum, reps=reps, warmup=warmup,
                        batch=batch, progress=progress, cache=cache, check=check)
    specs = _resolve_candidates(candidates, problem) if candidates is not None else None
    if check and arraylib.library(out if out is not None else a) not in arraylib.LIBRARIES:
        raise AutotuneError(f"autotune: check=True compares results with torch or cupy, but the output would be a "
                            f"{type(out if out is not None else a).__name__}; pass torch/cupy arrays (or out=), "
                            f"or check=False")
    ops = problem.operands
    if ops.out is not None and ops.c is not None and ops.out.ptr == ops.c.ptr:
        raise AutotuneError("autotune: out is c; every timed call would change c (pass a separate out)")
    dev = device()
    default = heuristic(problem, dev.sm_count)
    if specs is None:
        specs = candidate_specs(problem.M, problem.N, problem.K, default, dev.sm_count)

    def run(spec, dst):
        if problem.grouping:
            return grouped_gemm(a, b, offs, scale_a=scale_a, scale_b=scale_b, use_fast_accum=use_fast_accum, out=dst,
                                spec=spec, check_offs=False)
        if problem.scale:
            return scaled_gemm(a, b, scale_a, scale_b, bias=bias, out=dst, spec=spec, use_fast_accum=use_fast_accum)
        return gemm(a, b, c, alpha=alpha, beta=beta, bias=bias, activation=activation, out=dst, spec=spec)

    trial = _Trial(run, default, out, check=check, reps=reps, warmup=warmup, batch=batch,
                   stream=arraylib.current_stream(a))
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


make_callable(sys.modules[__name__])    # cute_py.autotune(a, b) runs autotune; cute_py.autotune.lookup is this module's
