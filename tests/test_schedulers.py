"""The schedulers: the registry and the spec's choice, their rules, stream-K's walk, and the skeleton they fill.

Stream-K's walk (``stream_k_walk``, the model of the kernel's ``Scheduler::next``) is checked by enumeration:
every k-block of every tile is run exactly once, every unit knows how many parts its tile has, and a CTA has at
most two partial units (the two workspace slots it owns).
"""

from __future__ import annotations

import itertools

import pytest

from cute_py.emit import GemmSpec, SpecError, emit_gemm, gemm_plan
from cute_py.emit.collectives.compose import choose, collectives
from cute_py.emit.collectives.schedulers import SCHEDULERS, scheduler_class
from cute_py.emit.collectives.schedulers.stream_k import StreamKScheduler, stream_k_walk
from cute_py.problem import Problem


def test_each_spec_takes_the_scheduler_it_names_or_implies():
    implied = {"tile": GemmSpec(), "split_k": GemmSpec(split_k=2), "batches": GemmSpec(
        a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldd_l)"),
        "groups_m": GemmSpec(b="(N,K,L):(K,1,ldb_l)"),
        "groups_k": GemmSpec(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)")}
    grouped = list(implied.items())[2:5]
    for name, spec in grouped:                                 # split-K over batches and groups
        implied[f"split_k_{name}"] = spec.replace(split_k=3)
    for name, spec in implied.items():
        assert scheduler_class(spec).name == name
    assert scheduler_class(GemmSpec(scheduler="stream_k")) is StreamKScheduler
    named = {f"stream_k_{name}": spec.replace(scheduler="stream_k") for name, spec in grouped}
    for name, spec in named.items():                           # "stream_k" takes the member walking the problem
        assert scheduler_class(spec).name == name
    assert set(SCHEDULERS) == set(implied) | {"stream_k"} | set(named)
    for name, spec in named.items():                           # one spelling per kernel: one spec, one name
        assert spec.replace(scheduler=name) == spec and spec.scheduler == "stream_k"
    for name, spec in implied.items():
        assert spec.replace(scheduler=name) == spec and spec.scheduler is None
    assert GemmSpec(scheduler="stream_k").name.endswith("_streamk")


def test_unknown_and_conflicting_schedulers_are_refused():
    with pytest.raises(SpecError, match=r"scheduler = 'bogus' not in \('tile', 'split_k'"):
        GemmSpec(scheduler="bogus").validate()
    with pytest.raises(SpecError, match=r"scheduler = \['stream_k'\] not in"):
        GemmSpec(scheduler=["stream_k"]).validate()
    with pytest.raises(SpecError, match="stream-K splits K itself"):
        GemmSpec(scheduler="stream_k", split_k=2).validate()
    with pytest.raises(SpecError, match="needs persistent = True"):
        GemmSpec(scheduler="stream_k", persistent=False).validate()
    with pytest.raises(SpecError, match="scheduler = 'tile' does not walk groups along M .* its scheduler is "
                                        "'groups_m'"):
        GemmSpec(scheduler="tile", b="(N,K,L):(K,1,ldb_l)").validate()
    with pytest.raises(SpecError, match="scheduler = 'stream_k_batches' does not walk one GEMM"):
        GemmSpec(scheduler="stream_k_batches").validate()
    with pytest.raises(SpecError, match="scheduler = 'tile' conflicts with split_k = 2, which takes 'split_k'"):
        GemmSpec(scheduler="tile", split_k=2).validate()
    with pytest.raises(SpecError, match="scheduler = 'split_k' conflicts with split_k = 1, which takes 'tile'"):
        GemmSpec(scheduler="split_k").validate()
    assert GemmSpec(scheduler="split_k", split_k=2, b="(N,K,L):(K,1,ldb_l)").validate()     # the family's member


@pytest.mark.parametrize("ctas", (1, 2, 3, 5, 7, 8, 13))
def test_stream_k_walk_runs_every_k_block_once(ctas):
    for tiles, k_tiles in itertools.product(range(1, 40), range(0, 9)):
        walk = stream_k_walk(tiles, k_tiles, ctas)
        runs, parts = {}, {}
        for units in walk:
            assert sum(1 for u in units if u[3] > 1) <= 2          # two workspace slots per CTA
            for t, kb0, kb1, n in units:
                assert 0 <= kb0 < kb1 <= k_tiles or k_tiles == 0 == kb0 == kb1
                for kb in range(kb0, kb1):
                    runs[(t, kb)] = runs.get((t, kb), 0) + 1
                parts.setdefault(t, []).append(n)
        assert runs == {(t, kb): 1 for t in range(tiles) for kb in range(k_tiles)}, (tiles, k_tiles)
        for t in range(tiles):
            assert len(parts[t]) == parts[t][0] and set(parts[t]) == {parts[t][0]}, (tiles, k_tiles, t, parts[t])


@pytest.mark.parametrize("ctas", (1, 2, 3, 7, 13))
def test_stream_k_walk_of_tiles_with_their_own_k_runs_each_once(ctas):
    """Groups along K: each tile has its group's k-blocks (0 for an empty group). Every k-block runs once, every
    tile (an empty one too: its zeros are stored) is in a unit, and a CTA has at most two partial units."""
    import random
    rng = random.Random(ctas)
    for _ in range(300):
        tiles = rng.randint(1, 40)
        ks = [rng.choice((0, 0, 1, 2, 3, 5, 9)) for _ in range(tiles)]
        walk = stream_k_walk(tiles, ks, ctas)
        runs, parts = {}, {}
        for units in walk:
            assert sum(1 for u in units if u[3] > 1) <= 2
            for t, kb0, kb1, n in units:
                assert 0 <= kb0 <= kb1 <= ks[t] and (kb0 < kb1 or ks[t] == 0)      # empty: an empty tile's
                runs.update({(t, kb): runs.get((t, kb), 0) + 1 for kb in range(kb0, kb1)})
                parts.setdefault(t, []).append(n)
        assert runs == {(t, kb): 1 for t in range(tiles) for kb in range(ks[t])}, (tiles, ks)
        assert set(parts) == set(range(tiles))
        for t, n in parts.items():
            assert len(n) == n[0] and set(n) == {n[0]}, (tiles, ks, t, n)
    assert stream_k_walk(3, [2, 2, 2], 2) == stream_k_walk(3, 2, 2)


def test_stream_k_shares_only_the_last_waves():
    """Whole waves stay data-parallel; a partial one is shared with the wave before it."""
    walk = stream_k_walk(tiles=20, k_tiles=8, ctas=8)           # 2.5 waves: 8 whole tiles, then 12 shared
    assert [units[0] for units in walk] == [(c, 0, 8, 1) for c in range(8)]
    assert all(u[3] == 1 for units in walk for u in units if u[0] < 8)
    assert all(len(units) <= 4 for units in walk)
    assert stream_k_walk(tiles=16, k_tiles=8, ctas=8) == [[(c, 0, 8, 1), (c + 8, 0, 8, 1)] for c in range(8)]


def test_stream_k_bind_runs_a_whole_wave_with_two_slots_per_cta():
    p = gemm_plan(GemmSpec(scheduler="stream_k"))
    b = p.bind(Problem(512, 4096, 4096, "K", "K", "bf16", "bf16"))
    assert b.units == 128 and b.ctas(132) == 132
    assert b.workspace(132) == (2 * 132 * 128 * 128, 2 * 132)
    tile = gemm_plan(GemmSpec()).bind(Problem(512, 4096, 4096, "K", "K", "bf16", "bf16"))
    assert tile.ctas(132) == 128 and tile.workspace(128) == (0, 0)


@pytest.mark.parametrize("spec", [GemmSpec(), GemmSpec(split_k=2), GemmSpec(scheduler="stream_k"),
                                  GemmSpec(b="(N,K,L):(K,1,ldb_l)", schedule="pingpong", tile=(64, 256, 64))])
def test_producer_fetches_and_consumers_walk_with_next(spec):
    """The producer's walk has no branch (its TMA coordinates stay uniform), the consumers' returns early."""
    src = emit_gemm(spec)
    produce = src[src.index("void produce("):src.index("// ---- consumer warpgroups")]
    assert "sched.fetch(w)" in produce and "sched.next(" not in produce
    entry = src[src.index('extern "C" __global__'):]
    assert "sched.next(wk)" in entry and "fetch" not in entry
    fetch = src[src.index("bool fetch(Work& w)"):]
    fetch = fetch[:fetch.index("\n  }")]
    assert "return" not in fetch.replace("return ok;", "") and " ? " not in fetch.split("const bool ok")[0]


def test_the_skeleton_is_the_same_for_every_kernel():
    """The entry point's own lines are the same text for every spec: what differs is the collectives'."""
    def skeleton(spec):
        parts = collectives(gemm_plan(spec))
        src = emit_gemm(spec)
        entry = src[src.index('extern "C" __global__'):]
        for text in ([parts.pipeline.shared(), parts.mainloop.shared(), parts.scheduler.shared(), parts.pipeline.setup(),
                      parts.scheduler.call(),
                      parts.pipeline.sync(), parts.mainloop.producer.call(), parts.mainloop.consumer_setup(),
                      parts.epilogue.setup(), parts.mainloop.compute(), parts.scheduler.fixup(),
                      parts.epilogue.per_unit(), parts.epilogue.finish(), parts.pipeline.finish(),
                      parts.pipeline.rank()] + [x.decl for x in gemm_plan(spec).params]):
            entry = entry.replace(text, "", 1) if text else entry
        return entry.replace(spec.name, "NAME").split("{", 1)[1]
    specs = [GemmSpec(), GemmSpec(split_k=3, schedule="pingpong", epilogue="direct"), GemmSpec(scheduler="stream_k"),
             GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 128), b="(N,K,L):(K,1,ldb_l)"),
             GemmSpec(load_a=8, cluster=(1, 1), beta=True, bias="row"), GemmSpec(cluster=(2, 1))]
    assert len({skeleton(s) for s in specs}) == 1
    assert [c.name for c in choose(specs[3])] == ["groups_m", "promoting", "tma_store"]
