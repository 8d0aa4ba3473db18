"""cute_py.autotune on the GPU: a small shape with three candidates, on torch and on cupy arrays; every candidate
is checked and timed, the best is one of them, and the autotune file then makes ``lookup`` return it."""

from __future__ import annotations

import importlib
import json

import pytest

from cute_py import arraylib, tuned
from cute_py.gemm import pick_spec
from cute_py.problem import Problem

at = importlib.import_module("cute_py.autotune")

pytestmark = pytest.mark.gpu
M = N = K = 512


def three_candidates(a_major, b_major):
    """The default spec and two variants of it that differ in tile and split-K."""
    base = pick_spec(M, N, K, a_major, b_major, "bf16", "bf16")
    others = [base.replace(tile=(128, 128, 64), consumers=2, split_k=1),
              base.replace(tile=(128, 256, 64), consumers=2, split_k=1, group=1)]
    specs = list(dict.fromkeys([base] + others))
    assert len(specs) == 3, [s.name for s in specs]
    return specs


def check_result(res, specs, a_major, b_major, capsys):
    assert res.best in specs
    assert [r.spec for r in res.rows] == specs
    bad = [(r.name, r.status) for r in res.rows if not r.ok]
    assert not bad, bad
    for r in res.rows:
        assert r.seconds > 0 and r.tflops > 0 and r.rel_err is not None and r.rel_err <= at.TOLERANCE, r
    final = dict(res.final)                                             # every one of 3 specs is a finalist
    assert set(final) == set(specs) and res.best_seconds == final[res.best]
    if res.best != res.default:
        assert final[res.best] * (1 + at.MARGIN) < final[res.default]
    else:
        assert final[res.default] <= min(final.values()) * (1 + at.MARGIN)
    assert capsys.readouterr().err == ""                                # progress=False: silent
    # the autotune file now answers for this problem (the GPU tests run in an isolated cache folder)
    data = json.loads(tuned.cache_path().read_text())
    assert tuned.problem_key(res.problem, device=res.device) in data["entries"]
    tuned._State.where = None                                           # as a new process would read it
    assert tuned.lookup(Problem(M, N, K, a_major, b_major, "bf16", "bf16")) == res.best
    assert f"best {res.best.name}" in str(res)


def test_autotune_torch(capsys):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)          # b = w.t(): K-major
    specs = three_candidates("K", "K")
    res = at.autotune(a, w.t(), candidates=specs, reps=3, warmup=1, progress=False)
    check_result(res, specs, "K", "K", capsys)


def test_autotune_cupy(capsys):
    cupy = pytest.importorskip("cupy")
    rng = cupy.random.default_rng(0)

    def bf16(shape):
        x = rng.standard_normal(shape, dtype=cupy.float32)
        return (x.view(cupy.uint32) >> 16).astype(cupy.uint16)

    a = bf16((K, M)).T                                                  # column-major a: M-major
    b = bf16((K, N))                                                    # row-major b (K, N): N-major
    specs = three_candidates("MN", "MN")
    res = at.autotune(a, b, candidates=specs, reps=3, warmup=1, progress=False)
    check_result(res, specs, "MN", "MN", capsys)


def test_autotune_default_candidates_with_progress(capsys):
    torch = pytest.importorskip("torch")
    a = torch.randn(256, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 384, device="cuda", dtype=torch.float16)
    res = at.autotune(a, b, reps=2, warmup=0, batch=2, cache=False)
    base = pick_spec(256, 384, 1024, "K", "MN", "f16", "f16")
    assert res.rows[0].spec == base and res.default == base
    assert any(r.ok for r in res.rows)
    err = capsys.readouterr().err
    assert "autotune" in err                                             # a tqdm bar or one line per candidate


@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_the_check_sees_poison_and_agreement(lib):
    """The helpers behind check=True: f32 copies (cupy bf16 is raw uint16), NaN poison, relative error."""
    mod = pytest.importorskip(lib)
    if lib == "torch":
        x = mod.full((64, 32), 1.5, device="cuda", dtype=mod.bfloat16)
    else:
        x = mod.full((64, 32), 0x3FC0, dtype=mod.uint16)               # 1.5 in bf16
    ref = arraylib.f32_copy(x)
    assert float(ref.sum()) == 1.5 * 64 * 32
    assert arraylib.rel_err(x, ref) == 0.0
    arraylib.fill(x, float("nan"))
    assert not arraylib.rel_err(x, ref) <= at.TOLERANCE                      # NaN: a kernel that wrote nothing fails
