"""Swap-AB for decode-size M (``cute_py.selection.swaps_ab``): which problems swap, the small-N tiles the swapped
problem takes, and the product path launching ``D^T = b^T a^T`` through D's transpose. Arrays are fakes
(``tests/fakes.py``); the launch is recorded, not run (tests/gpu/test_gpu_decode.py runs it)."""

from __future__ import annotations

import pytest

import cute_py.gemm as g
from cute_py.problem import Problem
from cute_py.selection import SWAP_AB_MAX_M, heuristic, pick_spec, swaps_ab

from fakes import FakeArray, operands


@pytest.mark.parametrize("M,N,K,grouping,scale,want", [
    (1, 4096, 4096, None, None, True), (SWAP_AB_MAX_M, 256, 64, None, None, True),
    (SWAP_AB_MAX_M + 1, 4096, 4096, None, None, False),     # the unswapped tiles are as fast from M = 64 on
    (16, 255, 4096, None, None, False), (16, 4096, 0, None, None, False),
    (16, 4096, 4096, "m", None, False), (16, 4096, 4096, None, "tensor", True), (16, 4096, 4096, None, "row", True),
    (16, 4096, 4096, None, "block", False),                 # 1 x 128 blocks of a, 128 x 128 of b: no swap
])
def test_which_problems_swap(M, N, K, grouping, scale, want):
    p = Problem(M, N, K, "K", "K", "e4m3" if scale else "bf16", "bf16", grouping=grouping, scale=scale)
    assert swaps_ab(p) is want


@pytest.mark.parametrize("N,bn", [(1, 8), (8, 8), (9, 16), (17, 24), (32, 32)])
def test_few_columns_take_tiles_in_steps_of_eight_and_split_k_that_fills_the_sms(N, bn):
    s = pick_spec(4096, N, 4096, "K", "K", "bf16", "bf16", c_row_major=False)
    assert s.tile == (64, bn, 128) and s.consumers == 1 and s.epilogue == "direct"
    assert 64 * s.split_k <= 132 < 64 * (s.split_k + 1)                 # 64 tiles of 64 rows: 2 splits
    assert pick_spec(14336, N, 4096, "K", "K", "bf16", "bf16").split_k == 1     # 224 tiles already fill them
    assert pick_spec(4096, N, 512, "K", "K", "bf16", "bf16").split_k == 1       # 4 k-blocks: nothing to split


class _Recorded:
    def run(self, out):
        return out


@pytest.fixture
def recorded(monkeypatch):
    """The product path up to the launch: ``seen`` gets the problem, spec and D shape it prepares."""
    seen = {}

    def prepare(problem, spec, stream=None, capturing=False, out_shape=None, out_like=None):
        seen.update(problem=problem, spec=spec, out_shape=out_shape, out_like=out_like)
        return _Recorded()
    monkeypatch.setattr(g.LAUNCHES, "prepare", prepare)
    monkeypatch.setattr(g, "stream_capturing", lambda s: False)
    monkeypatch.setattr(g, "select", lambda p: heuristic(p, 132))
    return seen


@pytest.mark.parametrize("layout", ["tn", "tt", "nn", "nt"])
def test_decode_sized_m_launches_the_transposed_problem(recorded, layout):
    a, b = operands(16, 4096, 1024, layout)
    out = FakeArray((16, 4096), ptr=1 << 42)
    c = FakeArray((16, 4096), ptr=1 << 43)
    bias = FakeArray((4096,), ptr=1 << 44)
    assert g.gemm(a, b, c, beta=1.0, bias=bias, activation="gelu", out=out) is out
    p, spec = recorded["problem"], recorded["spec"]
    assert (p.M, p.N, p.K) == (4096, 16, 1024) and recorded["out_shape"] == (16, 4096)
    assert recorded["out_like"] is a                           # a repeated call allocates D from a's library
    assert (p.a_major, p.b_major) == ({"t": "MN", "n": "K"}[layout[1]], {"t": "K", "n": "MN"}[layout[0]])
    assert not p.c_row_major and p.ldd == 4096                 # D^T: column-major, D's rows its columns
    assert p.bias == "row" and p.beta and p.activation == "gelu"    # a bias along N is one per row of D^T
    assert spec.tile == (64, 16, 128) and spec.epilogue == "direct" and not p.mismatches(spec)


def test_a_given_spec_or_a_larger_m_runs_as_called(recorded):
    a, b = operands(16, 4096, 1024)
    out = FakeArray((16, 4096), ptr=1 << 42)
    spec = heuristic(Problem.from_arrays(a, b, out=out))
    g.gemm(a, b, out=out, spec=spec)
    assert (recorded["problem"].M, recorded["out_shape"]) == (16, None)
    a, b = operands(SWAP_AB_MAX_M + 1, 4096, 1024)
    g.gemm(a, b, out=FakeArray((SWAP_AB_MAX_M + 1, 4096), ptr=1 << 45))
    assert recorded["problem"].M == SWAP_AB_MAX_M + 1 and recorded["out_shape"] is None


def test_stream_k_keeps_the_refusals_of_the_scheduler_it_walks_over():
    from cute_py.emit import GemmSpec, SpecError
    with pytest.raises(SpecError, match="groups along M with epilogue = 'direct' and 128 accumulators"):
        GemmSpec(b="(N,K,L):(K,1,ldb_l)", tile=(128, 256, 64), epilogue="direct", scheduler="stream_k")


def test_autotune_tunes_a_decode_problem_as_the_swapped_problem_gemm_launches(monkeypatch):
    import cute_py.autotune as at
    seen = {}

    def swapped(a, b, c=None, **kw):
        seen.update(a=a, b=b, c=c, **kw)
        return "tuned"
    real = at.autotune
    monkeypatch.setattr(at, "autotune", swapped)               # the recursive call: the swapped problem
    a, b = operands(16, 4096, 1024)
    out = FakeArray((16, 4096), ptr=1 << 42)
    assert real(a, b, out=out, bias=FakeArray((4096,), ptr=1 << 44)) == "tuned"
    p = Problem.from_arrays(seen["a"], seen["b"], out=seen["out"], bias=seen["bias"])
    assert (p.M, p.N, p.K, p.c_row_major, p.bias) == (4096, 16, 1024, False, "row")
    seen.clear()

    class Unswapped(Exception):
        pass

    def device():
        raise Unswapped
    monkeypatch.setattr(at, "device", device)                 # past the swap decision: the problem as called
    with pytest.raises(Unswapped):
        real(a, b, out=out, candidates=[heuristic(Problem.from_arrays(a, b, out=out))], check=False)
    assert not seen                                           # candidates of the problem as called: not swapped
