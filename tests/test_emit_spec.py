"""GemmSpec: majorness from strides, names, files, and the constructor's checks listing every violation."""

from __future__ import annotations

import json

import pytest

from cute_py import LayoutError
from cute_py import parse
from cute_py.emit import GemmSpec, SpecError, example_specs


def test_majorness_from_strides():
    assert (GemmSpec().a_major, GemmSpec().b_major, GemmSpec().blas_layout) == ("K", "K", "tn")
    s = GemmSpec(a="(M,K):(1,M)", b="(N,K):(1,ldb)")
    assert (s.a_major, s.b_major, s.blas_layout) == ("MN", "MN", "nt")
    assert GemmSpec(c="(M,N):(1,M)").c_row_major is False


def test_name_is_stable_and_distinguishes_specs():
    a, b = GemmSpec(), GemmSpec(dtype="fp16")
    assert a.name == GemmSpec().name and a.name != b.name and b.dtype == "f16"
    assert GemmSpec(bias="row", activation="relu").name.endswith("biasrow_relu")
    assert a.name.isidentifier()


def test_validate_lists_every_violation_with_values():
    bad = dict(a="(M,K):(K,K)", dtype="f32", tile=(96, 264, 40), consumers=3, cluster=(4, 1),
               schedule="pingpong", bias="diag", activation="tanh", group=0, split_k=99, epilogue="smem")
    with pytest.raises(SpecError) as e:
        GemmSpec(**bad)
    msg = str(e.value)
    assert isinstance(e.value, LayoutError)
    for needle in ("exactly one stride must be 1", "dtype = 'f32'", "consumers = 3", "schedule = 'pingpong'",
                   "cluster = (4, 1)", "bias = 'diag'", "activation = 'tanh'", "block_n 264", "block_k 40",
                   "group = 0", "split_k = 99", "epilogue = 'smem'"):
        assert needle in msg, needle
    assert len(e.value.problems) >= 12


def test_scheduling_and_epilogue_constraints():
    with pytest.raises(SpecError, match="needs a row-major D"):
        GemmSpec(c="(M,N):(1,M)", epilogue="tma").validate()
    assert GemmSpec(c="(M,N):(1,M)").epilogue == "direct" and GemmSpec().epilogue == "tma"
    assert GemmSpec(split_k=2, persistent=False).validate()          # a grid of every split: one unit per CTA
    for cluster in ((2, 1), (1, 2)):
        GemmSpec(tile=(128, 256, 64), cluster=cluster).validate()
    names = {GemmSpec(group=g, split_k=k, persistent=p).name for g in (1, 8) for k in (1, 2) for p in (True, False)}
    assert len(names) == 8 and GemmSpec(persistent=False).name.endswith("_g8_np")   # different code, other names


def problems_of(**fields) -> list:
    """The constraints the constructor lists for ``fields`` ([] when it makes the spec)."""
    try:
        GemmSpec(**fields)
    except SpecError as e:
        return e.problems
    return []


def test_pingpong_constraints():
    ok = GemmSpec(schedule="pingpong")
    assert ok.tile_warpgroups == 1 and ok.name.endswith("_pingpong")
    assert GemmSpec().tile_warpgroups == 2 and GemmSpec(tile=(64, 64, 64), consumers=1).tile_warpgroups == 1
    text = "\n".join(problems_of(schedule="pingpong", consumers=1, split_k=2, persistent=False))
    assert "needs consumers = 2" in text and "needs persistent = True" in text
    # each warpgroup holds the whole BM x BN tile: 128x256 needs 256 accumulators per thread
    assert any("accumulators need 256 registers" in p for p in problems_of(schedule="pingpong", tile=(128, 256, 64)))
    assert "schedule = 'zigzag' not in" in "\n".join(problems_of(schedule="zigzag"))


def test_raster_order():
    from cute_py.emit import emit_gemm
    assert GemmSpec().raster == "m" and GemmSpec(raster="n").name.endswith("_g8_rn")
    assert "raster = 'x' not in ('m', 'n')" in problems_of(raster="x")
    m, n = emit_gemm(GemmSpec()), emit_gemm(GemmSpec(raster="n"))
    assert "const int um = first + r % width, un = r / width;" in m
    assert "const int un = first + r % width, um = r / width;" in n and "per_group = kGroup * units_m" in n


def test_pingpong_and_cluster_emission():
    """Ping-pong: one warpgroup's C TV layout per tile, one warp group's arrivals per stage, the handoff before
    the drain; clusters: the remote release is a plain arrive (an explicit .release.cluster costs a GPU fence)."""
    from cute_py.emit import emit_gemm, gemm_plan
    p = gemm_plan(GemmSpec(schedule="pingpong"))
    assert p.tv_rows == 64 and p.m_blocks == 2 and p.threads == 384
    assert p.empty_arrivals == 4 and gemm_plan(GemmSpec()).empty_arrivals == 8     # one warpgroup reads a stage
    src = emit_gemm(GemmSpec(schedule="pingpong"))
    loop = src[src.index("void mainloop("):]
    assert loop.index("named_bar_arrive(kBarPingPong + (1 - w), 2 * kWarpGroupThreads)") < loop.index("wgmma_wait<0>();")
    coop = emit_gemm(GemmSpec())
    assert "named_bar_arrive" not in coop[coop.index("void mainloop("):] and "kBarPingPong" not in coop
    cl = emit_gemm(GemmSpec(cluster=(2, 1)))
    assert "mbarrier.arrive.shared::cluster.b64" in cl and "arrive.release.cluster" not in cl


def test_register_and_smem_budgets():
    with pytest.raises(SpecError, match="accumulators need 256 registers"):
        GemmSpec(tile=(128, 256, 64), consumers=1).validate()
    with pytest.raises(SpecError, match="smem: 9 stages"):
        GemmSpec(stages=9).validate()


def test_layout_problems_reported_per_operand():
    with pytest.raises(SpecError, match="operand A"):
        GemmSpec(swizzle=128, tile=(128, 128, 32)).validate()     # a 128 B K-major atom needs BK % 64 == 0


def test_layouts_are_parsed_symbolic_layouts():
    """The gmem layouts are held as cute_py.parse's Layouts (symbolic extents); text is their file form."""
    s = GemmSpec(a="(M,K):(lda,1)")
    assert s.a == parse("(M,K):(lda,1)") and str(s.a) == "(M,K):(lda,1)" and s.to_dict()["a"] == "(M,K):(lda,1)"
    assert s.a.shape[0].is_Symbol and s.a.stride[0].name == "lda"
    assert GemmSpec(a=parse("(M,K):(1,M)")) == GemmSpec(a="(M,K):(1,M)") and GemmSpec(a=parse("(M,K):(1,M)")).a_major == "MN"
    assert GemmSpec.from_dict(s.to_dict()) == s and hash(GemmSpec.from_dict(s.to_dict())) == hash(s)


@pytest.mark.parametrize("a, needle", [
    ("(K,M):(1,K)", "modes must be named ('M', 'K'), found ('K', 'M')"),
    ("M,K", "is not of the form '(M,K):(s0,s1)'"),
    ("(M,K)", "is not of the form '(M,K):(s0,s1)'"),
    ("(M,K,L):(K,1,1)", "the group mode L cannot be the contiguous one"),
    ("(M,K,B):(K,1,ldl)", "modes must be named ('M', 'K', 'L'), found ('M', 'K', 'B')"),
    ("(M,K,L,Q):(K,1,ldl,q)", "is not of the form '(M,K):(s0,s1)'"),
    ("(128,K):(K,1)", "modes must be named ('M', 'K'), found ('128', 'K')"),
    ("(M,K):(K,K)", "exactly one stride must be 1 (the contiguous mode), found ('K', 'K')"),
    ("(M,K):(K,2)", "stride 2 must be 1 or a symbol"),
    ("(M,K):(K+1,1)", "stride K + 1 must be 1 or a symbol"),
    ("((64,M1),K):((1,ldm),lda)", "a hierarchical mode is not emitted"),   # make_tma_params takes it; the GEMM not
])
def test_wrong_gmem_layouts_are_listed(a, needle):
    with pytest.raises(SpecError) as e:
        GemmSpec(a=a)
    assert any(needle in p and p.startswith("a: gmem layout") for p in e.value.problems), e.value.problems


def test_validation_never_plans(monkeypatch):
    """The constructor's checks ask cute_py.arch.sm90 about the operand tiles; they never call the planner."""
    from cute_py.emit import plan

    def boom(*args):
        raise AssertionError("validation planned")

    monkeypatch.setattr(plan, "operand_plan", boom)
    monkeypatch.setattr(plan, "gemm_plan", boom)
    assert GemmSpec(tile=(128, 64, 64)).tile == (128, 64, 64)
    assert "operand A" in "\n".join(problems_of(swizzle=128, tile=(128, 128, 32)))


def test_files_round_trip(tmp_path):
    s = GemmSpec(a="(M,K):(1,M)", tile=(128, 256, 64), bias="col")
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"gemm": s.to_dict()}))
    assert GemmSpec.from_file(p) == s
    t = tmp_path / "s.toml"
    t.write_text('a = "(M,K):(1,M)"\ntile = [128, 256, 64]\nbias = "col"\n')
    assert GemmSpec.from_file(t) == s
    t.write_text('tiles = [1]\n')
    with pytest.raises(SpecError, match="unknown spec key"):
        GemmSpec.from_file(t)
    assert GemmSpec.from_file(str(t.with_name("s.json"))) == s


def test_shipped_examples_are_valid():
    ex = example_specs()
    assert len(ex) >= 3
    for path in ex.values():
        GemmSpec.from_file(path).validate()


# ---------------------------------------------------------------------------
# Field types (issue 14, item 5): every field is type-checked and each violation listed like the others


@pytest.mark.parametrize("changes, expected", [
    (dict(persistent="no"), "persistent = 'no' must be True or False"),
    (dict(alpha="no"), "alpha = 'no' must be True or False"),
    (dict(beta="yes"), "beta = 'yes' must be True or False"),
    (dict(beta=1), "beta = 1 must be True or False"),
    (dict(consumers=True), "consumers = True must be an int, not a bool"),
    (dict(group=True), "group = True must be an int, not a bool"),
    (dict(split_k=2.0), "split_k = 2.0 must be an int"),
    (dict(stages="4"), "stages = '4' must be an int or None"),
    (dict(swizzle=False), "swizzle = False must be an int or None, not a bool"),
    (dict(tile="abc"), "tile = 'abc' must be a tuple of 3 positive ints"),
    (dict(tile=128), "tile = 128 must be a tuple of 3 positive ints"),
    (dict(tile=(128, 128)), "tile = (128, 128) must be a tuple of 3 positive ints"),
    (dict(tile=(True, 128, 64)), "tile = (True, 128, 64) must be a tuple of 3 positive ints"),
    (dict(cluster=(True, True)), "cluster = (True, True) must be a tuple of 2 positive ints"),
    (dict(cluster="2,1"), "cluster = '2,1' must be a tuple of 2 positive ints"),
])
def test_wrong_field_types_are_listed(changes, expected):
    with pytest.raises(SpecError) as e:              # constructing never raises a bare Python error
        GemmSpec(**changes)
    assert any(p.startswith(expected) for p in e.value.problems), e.value.problems


def test_several_type_violations_are_all_listed():
    text = "\n".join(problems_of(persistent="no", consumers=True, tile=128, dtype="f32", group=0))
    assert all(s in text for s in ("persistent = 'no'", "consumers = True", "tile = 128", "dtype = 'f32'", "group = 0"))


def test_right_types_still_pass_and_emit_the_same_kernel():
    from cute_py import parse
    from cute_py.emit import emit_gemm
    assert GemmSpec(tile=[128, 256, 64], cluster=[2, 1]).validate() == GemmSpec(tile=(128, 256, 64), cluster=(2, 1))
    assert GemmSpec(a=parse("(M,K):(1,M)")) == GemmSpec(a="(M,K):(1,M)")       # a Layout for a is accepted
    assert GemmSpec(stages=None, swizzle=None, persistent=False).validate().name.endswith("_np")
    assert emit_gemm(GemmSpec(a=parse("(M,K):(1,M)"))) == emit_gemm(GemmSpec(a="(M,K):(1,M)"))


@pytest.mark.parametrize("data", [[1, 2, 3], "tile", None, 5, {"gemm": [1]}])
def test_from_dict_of_a_non_mapping(data):
    with pytest.raises(SpecError, match="GemmSpec.from_dict: a spec must be a mapping"):
        GemmSpec.from_dict(data)


@pytest.mark.parametrize("name, text, match", [
    ("s.toml", "tile = [128,\n", "malformed TOML"),
    ("s.json", '{"tile": [1,', "malformed JSON"),
    ("s.json", "[1, 2, 3]", "must be a mapping"),
    ("s.toml", 'persistent = "yes"\n', None),
    ("s.toml", b"\xff\xfe\x00tile", "malformed text"),
])
def test_bad_files_give_spec_errors(tmp_path, name, text, match):
    p = tmp_path / name
    p.write_bytes(text) if isinstance(text, bytes) else p.write_text(text)
    with pytest.raises(SpecError, match=match):
        GemmSpec.from_file(p)                         # "yes" in TOML is a string, not True


def test_a_spec_hashes_once_and_pickles_without_its_hash():
    """A spec keys the prepared launch of every call that passes one, so its hash is computed once; a pickled
    spec carries no hash (a string's hash differs between processes) and gets its own when loaded."""
    import pickle
    s = GemmSpec(split_k=2)
    assert hash(s) == hash(GemmSpec(split_k=2)) == s.__dict__["_hash"] and hash(s) != hash(GemmSpec())
    assert "_hash" not in s.__getstate__()
    t = pickle.loads(pickle.dumps(s))
    assert t == s and hash(t) == hash(s) and {s: 1}[t] == 1
