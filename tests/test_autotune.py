"""cute_py.autotune without a GPU: candidate enumeration, the problem read from arrays, the on-disk cache and its
lookup, progress output, choosing the best from measured trials, input errors, and ``cute-py autotune``.

Arrays are fakes exposing ``__cuda_array_interface__`` (cute_py reads them without a GPU); the timing itself runs
in tests/gpu/test_gpu_autotune.py.
"""

from __future__ import annotations

import importlib
import io
import json

import pytest

from cute_py.emit import GemmSpec, SpecError
from cute_py.problem import GemmInputError, Problem
from cute_py.selection import pick_spec

from fakes import FakeArray, operands

at = importlib.import_module("cute_py.autotune")        # the module (cute_py.autotune is the function)

DEVICE = "Fake GPU 80GB"
PROBLEM = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
ARGS = (4096, 4096, 4096, "K", "K", "bf16", "bf16")


def tiles_of(spec, M, N):
    bm, bn, _ = spec.tile
    return -(-M // bm), -(-N // bn)


# ---------------------------------------------------------------------------------------------------------------
# Candidates

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (128, 4096, 4096), (512, 14336, 4096), (16384, 8192, 1024),
          (2048, 2048, 2048), (128, 8192, 1024), (100, 300, 64)]


@pytest.mark.parametrize("M,N,K", SHAPES)
@pytest.mark.parametrize("majors", [("K", "K"), ("MN", "MN")])
def test_candidates_are_valid_unique_and_start_with_the_base(M, N, K, majors):
    base = pick_spec(M, N, K, *majors, "bf16", "bf16")
    specs = at.candidate_specs(M, N, K, base, sm_count=132)
    assert specs[0] == base
    assert len(specs) == len(set(specs)), "duplicates"
    assert len({s.name for s in specs}) == len(specs), "two candidates share a kernel name"
    assert 1 <= len(specs) <= at.MAX_CANDIDATES
    for s in specs:
        assert (s.a_major, s.b_major, s.dtype, s.out_dtype, s.c) == (base.a_major, base.b_major, "bf16", "bf16",
                                                                      base.c)
    for s in specs[1:]:
        assert s.persistent
        assert s.tile in at.TILES and s.cluster in ((1, 1),) + at.CLUSTERS and s.split_k in at.SPLITS
        assert s.consumers == (1 if s.tile[0] == 64 and s.schedule == "cooperative" else 2), s.name
        if s.cluster != (1, 1) or s.schedule == "pingpong":    # tried once per tile: base group, no split
            assert s.group == base.group and s.split_k == 1, s.name


@pytest.mark.parametrize("M,N,K", SHAPES)
def test_split_k_only_when_the_tiles_do_not_fill_the_gpu(M, N, K):
    base = GemmSpec(tile=(128, 128, 64))
    specs = at.candidate_specs(M, N, K, base, sm_count=132)
    for s in specs[1:]:
        m, n = tiles_of(s, M, N)
        if s.split_k > 1:
            assert m * n < 132, s.name
            assert m * n * s.split_k <= 2 * 132 and -(-K // s.tile[2]) >= 2 * s.split_k, s.name
        if s.group != base.group:
            assert m * n > 132 and s.group < m, s.name
        assert s.cluster[0] <= m and s.cluster[1] <= n, s.name


def test_split_k_depends_on_the_sm_count():
    base = GemmSpec(tile=(128, 128, 64))
    assert {s.split_k for s in at.candidate_specs(1024, 1024, 4096, base, sm_count=132)} == {1, 2, 4, 8}
    assert {s.split_k for s in at.candidate_specs(1024, 1024, 4096, base, sm_count=16)} == {1}


def test_big_problems_vary_tile_cluster_and_group():
    specs = at.candidate_specs(8192, 8192, 8192, GemmSpec(tile=(128, 256, 64)))
    assert {s.tile for s in specs} == set(at.TILES)
    assert {s.cluster for s in specs} == {(1, 1)} | set(at.CLUSTERS)
    assert {s.schedule for s in specs} == {"cooperative", "pingpong"}
    assert {s.group for s in specs} == set(at.GROUPS)
    assert {s.split_k for s in specs} == {1}


def test_candidates_keep_the_base_even_when_it_is_off_the_grid():
    base = GemmSpec(tile=(128, 64, 64), group=3, consumers=1)
    specs = at.candidate_specs(4096, 4096, 4096, base)
    assert specs[0] == base and specs.count(base) == 1


@pytest.mark.parametrize("args, message", [
    ((0, 64, 64, GemmSpec()), "M must be a positive int"),
    ((64, 64, 2.5, GemmSpec()), "K must be a positive int"),
    ((64, 64, 64, "spec"), "base must be a GemmSpec"),
])
def test_candidate_specs_rejects_bad_input(args, message):
    with pytest.raises(at.AutotuneError, match=message):
        at.candidate_specs(*args)


def test_candidate_specs_rejects_a_bad_sm_count():
    with pytest.raises(at.AutotuneError, match="sm_count must be a positive int"):
        at.candidate_specs(64, 64, 64, GemmSpec(), sm_count=0)


# ---------------------------------------------------------------------------------------------------------------
# Progress and choosing the best

def test_progress_line_format():
    assert at.progress_line(3, 12, "cute_gemm_x", 0.812e-3, 677.4) == "autotune [3/12] cute_gemm_x: 0.812 ms, 677 TFLOP/s"
    assert at.progress_line(1, 2, "k", status="wrong result: relative error 3.00e-01") == \
        "autotune [1/2] k: wrong result: relative error 3.00e-01"
    assert len(at.progress_line(1, 2, "k", status="failed: " + "x" * 500)) < 160


class FakeTrial:
    """``trial(spec)`` from a table: seconds, an exception to raise, or ("wrong", rel_err)."""

    def __init__(self, outcomes, final=None):
        self.outcomes, self.calls, self.final, self.timed = outcomes, [], final or {}, []

    def time(self, spec):
        """A final-round timing: ``final[spec]`` if given, else the first-pass seconds."""
        self.timed.append(spec)
        return self.final.get(spec, self.outcomes[spec])

    def __call__(self, spec):
        self.calls.append(spec)
        what = self.outcomes[spec]
        if isinstance(what, Exception):
            raise what
        if isinstance(what, tuple):
            return None, what[1]
        return what, 1e-3


def four_specs():
    base = pick_spec(*ARGS)
    return [base, base.replace(tile=(128, 128, 64)), base.replace(cluster=(2, 1)), base.replace(group=1)]


def test_tune_picks_the_fastest_correct_candidate(monkeypatch):
    monkeypatch.setattr(at, "_tqdm", lambda: None)
    s = four_specs()
    trial = FakeTrial({s[0]: 0.30e-3, s[1]: RuntimeError("CompileError: ptxas died\nmore"), s[2]: ("wrong", 0.5),
                       s[3]: 0.25e-3})
    err = io.StringIO()
    res = at._tune(PROBLEM, s[0], s, trial, stream=err, device=DEVICE)
    assert trial.calls == s
    assert res.best == s[3] and res.best_seconds == 0.25e-3 and res.speedup == pytest.approx(1.2)
    assert [r.ok for r in res.rows] == [True, False, False, True]
    assert res.rows[1].status == "failed: RuntimeError: CompileError: ptxas died"
    assert res.rows[2].status.startswith("wrong result: relative error 5.00e-01 > 0.01")
    assert res.rows[3].tflops == pytest.approx(PROBLEM.flops / 0.25e-3 / 1e12)
    lines = err.getvalue().splitlines()
    assert lines == [at.progress_line(i + 1, 4, r.name, r.seconds, r.tflops, r.status) for i, r in enumerate(res.rows)]
    assert lines[0] == f"autotune [1/4] {s[0].name}: 0.300 ms, 458 TFLOP/s"
    table = str(res)
    assert f"best {s[3].name}" in table and "1.20x the default spec" in table and "2 of 4 candidates ran" in table
    assert [ln[0] for ln in table.splitlines()[3:]] == [" ", " ", " ", "*"]
    assert "(default)" in table.splitlines()[3]


def test_tune_final_round_keeps_the_default_within_the_margin(monkeypatch):
    """A first-pass winner by noise: in the final round it is within MARGIN of the default, which stays."""
    s = four_specs()
    trial = FakeTrial({s[0]: 0.30e-3, s[1]: 0.31e-3, s[2]: 0.40e-3, s[3]: 0.25e-3},
                      final={s[0]: 0.300e-3, s[1]: 0.32e-3, s[3]: 0.299e-3})
    res = at._tune(PROBLEM, s[0], s, trial, progress=False)
    assert set(trial.timed) == {s[0], s[1], s[3]} and len(trial.timed) == 3 * at.FINAL_ROUNDS
    assert trial.timed[:3] == [s[3], s[0], s[1]]                  # finalists by first-pass time, in turn
    assert res.best == s[0] and res.best_seconds == 0.300e-3 and res.speedup == 1.0
    assert dict(res.final) == {s[0]: 0.300e-3, s[1]: 0.32e-3, s[3]: 0.299e-3}


def test_tune_final_round_adds_the_default_and_can_overturn_the_first_pass(monkeypatch):
    s = four_specs()
    trial = FakeTrial({s[0]: 0.50e-3, s[1]: 0.21e-3, s[2]: 0.22e-3, s[3]: 0.20e-3},
                      final={s[0]: 0.5e-3, s[1]: 0.19e-3, s[2]: 0.23e-3, s[3]: 0.22e-3})
    res = at._tune(PROBLEM, s[0], s, trial, progress=False)
    assert set(trial.timed) == set(s)                             # 3 finalists + the default
    assert res.best == s[1] and res.best_seconds == 0.19e-3
    assert res.speedup == pytest.approx(0.5 / 0.19)


def test_tune_is_silent_without_progress(monkeypatch, capsys):
    monkeypatch.setattr(at, "_tqdm", lambda: None)
    s = four_specs()[:1]
    at._tune(PROBLEM, s[0], s, FakeTrial({s[0]: 1e-3}), progress=False)
    assert capsys.readouterr() == ("", "")


def test_tune_prints_to_stderr_by_default(monkeypatch, capsys):
    monkeypatch.setattr(at, "_tqdm", lambda: None)
    s = four_specs()[:1]
    at._tune(PROBLEM, s[0], s, FakeTrial({s[0]: 1e-3}))
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("autotune [1/1] ")


def test_tune_raises_when_nothing_ran(monkeypatch):
    monkeypatch.setattr(at, "_tqdm", lambda: None)
    s = four_specs()[:2]
    trial = FakeTrial({s[0]: ValueError("boom"), s[1]: ("wrong", float("nan"))})
    with pytest.raises(at.AutotuneError, match=r"(?s)none of the 2 candidates ran correctly.*ValueError: boom"):
        at._tune(PROBLEM, s[0], s, trial, progress=False)


def test_tune_uses_tqdm_when_it_is_there(monkeypatch):
    made = []

    class Bar:
        def __init__(self, **kw):
            made.append(self)
            self.kw, self.n, self.post, self.closed = kw, 0, None, False

        def update(self, n):
            self.n += n

        def set_postfix_str(self, s, refresh=True):
            self.post = s

        def close(self):
            self.closed = True

    monkeypatch.setattr(at, "_tqdm", lambda: Bar)
    s = four_specs()
    at._tune(PROBLEM, s[0], s, FakeTrial({s[0]: 0.3e-3, s[1]: 0.2e-3, s[2]: 0.4e-3, s[3]: ("wrong", 1.0)}),
             stream=io.StringIO())
    (bar,) = made
    assert bar.kw["total"] == 4 and bar.n == 4 and bar.closed
    assert bar.post == "best 0.200 ms, 687 TFLOP/s"


# ---------------------------------------------------------------------------------------------------------------
# autotune(): bad input is refused before anything runs (these would otherwise need a GPU)

def test_autotune_rejects_host_arrays():
    np = pytest.importorskip("numpy")
    with pytest.raises(GemmInputError, match="autotune: a: .*CPU"):
        at.autotune(np.ones((64, 64)), np.ones((64, 64)))


def test_autotune_rejects_an_empty_candidate_list():
    with pytest.raises(at.AutotuneError, match="candidates is empty"):
        at.autotune(*operands(256, 256, 256), candidates=[])


def test_autotune_rejects_non_specs():
    with pytest.raises(at.AutotuneError, match="candidates must be GemmSpecs, got str"):
        at.autotune(*operands(256, 256, 256), candidates=["cute_gemm_sm90_bf16_tn"])


def test_autotune_rejects_candidates_that_do_not_fit_the_arrays():
    a, b = operands(256, 256, 256, "tn")
    tt = pick_spec(256, 256, 256, "K", "MN", "bf16", "bf16")
    f16 = pick_spec(256, 256, 256, "K", "K", "f16", "f16")
    with pytest.raises(at.AutotuneError) as e:
        at.autotune(a, b, candidates=[pick_spec(256, 256, 256, "K", "K", "bf16", "bf16"), tt, f16])
    msg = str(e.value)
    assert "2 candidate(s) do not fit the arrays" in msg
    assert f"{tt.name}: b_major: spec 'MN', arrays 'K'" in msg
    assert f"{f16.name}: dtype: spec 'f16', arrays 'bf16'" in msg


def test_an_invalid_candidate_cannot_be_made():
    with pytest.raises(SpecError, match="consumers = 3"):                # the constructor refuses it
        pick_spec(256, 256, 256, "K", "K", "bf16", "bf16").replace(consumers=3)


@pytest.mark.parametrize("kw, message", [(dict(reps=0), "reps must be an int >= 1"),
                                         (dict(batch=1.5), "batch must be an int >= 1"),
                                         (dict(warmup=-1), "warmup must be an int >= 0")])
def test_autotune_rejects_bad_counts(kw, message):
    with pytest.raises(at.AutotuneError, match=message):
        at.autotune(*operands(256, 256, 256), **kw)


def test_autotune_check_needs_torch_or_cupy():
    with pytest.raises(at.AutotuneError, match="check=True compares results with torch or cupy"):
        at.autotune(*operands(256, 256, 256))


def test_autotune_refuses_out_aliasing_c():
    a, b = operands(256, 256, 256)
    c = FakeArray((256, 256), ptr=1 << 42)
    with pytest.raises(at.AutotuneError, match="out is c"):
        at.autotune(a, b, c, beta=1.0, out=c, check=False)


# ---------------------------------------------------------------------------------------------------------------
# cute-py autotune

def test_cli_lists_candidates_and_stops_without_a_gpu(monkeypatch, capsys):
    from cute_py import cli, cli_gemm
    monkeypatch.setattr(cli_gemm, "_gpu_reason", lambda: "NoDeviceError: pretend")
    assert cli.main(["autotune", "--m", "512", "--n", "1024", "--k", "4096", "--layout", "tt"]) == 0
    out = capsys.readouterr().out
    base = pick_spec(512, 1024, 4096, "K", "MN", "bf16", "bf16")
    specs = at.candidate_specs(512, 1024, 4096, base)
    assert f"default   {base.name}" in out
    assert f"{len(specs)} candidates:" in out
    assert all(s.name in out for s in specs)
    assert "no GPU: stopping after listing the candidates" in out and "reason: NoDeviceError: pretend" in out


def test_cli_rejects_a_bad_size(capsys):
    from cute_py import cli
    with pytest.raises(SystemExit) as e:                  # argparse refuses it (cute_py.cli_errors.extent)
        cli.main(["autotune", "--m", "0"])
    assert e.value.code == 2
    assert "cute-py autotune: error: argument --m: 0 is not a size" in capsys.readouterr().err


def test_cli_subprocess_without_a_gpu():
    import subprocess
    import sys
    from cute_py.cli_gemm import _gpu_reason
    if _gpu_reason() is None:
        pytest.skip("a GPU is usable here: the command would tune")
    r = subprocess.run([sys.executable, "-m", "cute_py", "autotune", "--m", "4096", "--n", "4096", "--k", "4096"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "candidates:" in r.stdout and "no GPU" in r.stdout


