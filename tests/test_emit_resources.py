"""Every number of the kernel has a name: the named-barrier table, the roles' constants, and their checks."""

from __future__ import annotations

import re

import pytest

from cute_py.emit import EmitError, GemmSpec, emit_gemm, gemm_plan
from cute_py.emit import resources
from cute_py.emit.resources import NAMED_BARRIERS, NamedBarrier, named_barriers


def test_the_table_reserves_disjoint_ids_in_1_to_15():
    ids = [i for b in NAMED_BARRIERS for i in b.ids]
    assert len(ids) == len(set(ids)) and min(ids) >= 1 and max(ids) <= 15
    assert named_barriers({b.name: b.count for b in NAMED_BARRIERS}) == NAMED_BARRIERS


@pytest.mark.parametrize("spec, used", [
    (GemmSpec(), {"kBarEpilogue"}),
    (GemmSpec(epilogue="direct"), set()),
    (GemmSpec(tile=(128, 64, 64), split_k=2), {"kBarEpilogue", "kBarFixup"}),
    (GemmSpec(tile=(128, 64, 64), scheduler="stream_k", schedule="pingpong"), {"kBarEpilogue", "kBarFixup",
                                                                                 "kBarPingPong"}),
    (GemmSpec(schedule="pingpong"), {"kBarEpilogue", "kBarPingPong"}),
    (GemmSpec(schedule="pingpong", epilogue="direct"), {"kBarPingPong"}),
])
def test_the_plan_names_the_barriers_it_uses(spec, used):
    p = gemm_plan(spec)
    assert {b.name for b in p.barriers} == used
    src = emit_gemm(spec)
    for b in NAMED_BARRIERS:                          # declared exactly when used, and used only by name
        assert (f"constexpr u32 {b.name} = {b.first}u;" in src) == (b.name in used)
    assert not re.search(r"named_bar_(sync|arrive)\(\s*\d", src)


def test_colliding_or_out_of_range_barriers_are_refused(monkeypatch):
    monkeypatch.setattr(resources, "NAMED_BARRIERS", NAMED_BARRIERS + (NamedBarrier("kBarExtra", 3, 1, "32", "x"),))
    with pytest.raises(EmitError, match=r"named_barriers: the named barriers in use do not share an id; "
                                        r"ids = \(3,4,3\)"):
        named_barriers({"kBarFixup": 1, "kBarExtra": 1})
    monkeypatch.setattr(resources, "NAMED_BARRIERS", (NamedBarrier("kBarZero", 0, 1, "32", "x"),))
    with pytest.raises(EmitError, match=r"ids lie in 1..15 \(0 is __syncthreads\)"):
        named_barriers({"kBarZero": 1})
    monkeypatch.setattr(resources, "NAMED_BARRIERS", (NamedBarrier("kBarTop", 15, 2, "32", "x"),))
    with pytest.raises(EmitError, match=r"ids lie in 1..15"):
        named_barriers({"kBarTop": 2})


def test_a_use_must_fit_its_reservation():
    with pytest.raises(EmitError, match="kBarFixup reserves 2 id"):
        named_barriers({"kBarFixup": 3})
    with pytest.raises(EmitError, match="every named barrier the kernel uses is reserved"):
        named_barriers({"kBarNowhere": 1})


@pytest.mark.parametrize("spec", [GemmSpec(), GemmSpec(schedule="pingpong", cluster=(1, 2), tile=(128, 64, 64)),
                                  GemmSpec(tile=(64, 64, 64), consumers=1, split_k=2, out_dtype="f32")])
def test_role_constants_are_named_not_spelled(spec):
    """The warpgroup size, register budgets, mbarrier size, alignment and the tile's extents appear once, as
    constexprs: no tile origin, k-block coordinate or tile count is spelled with a number."""
    src = emit_gemm(spec)
    body = src[src.index("// ---- pipeline"):]
    for raw in (r"setmaxnreg_(dec|inc)<\d", r"\b8u \* s\b", r"1023u", r"threadIdx\.x / 128", r"\(u16\)0x",
                r"named_bar_sync\(\d", r"\b(kb|m_tile|n_tile|kb \+ 1|mb|j) \* \d", r"\+ \d+\) / \d+", r"kSplitK = 1\b",
                r"j < \d", r"min\(\d+, ep"):
        assert not re.search(raw, body), raw
    p = gemm_plan(spec)
    assert f"constexpr int kWarpGroupThreads = {resources.WARPGROUP_THREADS};" in src
    assert f"constexpr int kProducerRegs = {resources.PRODUCER_REGS};" in src
    assert f"constexpr int kConsumerRegs = {resources.CONSUMER_REGS};" in src
    assert f"// {p.threads}: the producer and the consumers" in src and "__launch_bounds__(kThreads, 1)" in src
    assert "setmaxnreg_dec<kProducerRegs>();" in src and "setmaxnreg_inc<kConsumerRegs>();" in src
