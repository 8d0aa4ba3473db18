"""A GemmSpec is checked where it is made (issue 34, section 1): the constructor, ``replace``, ``from_dict`` and
``from_file`` refuse every field of the wrong type or range and every rule the kernel keeps, naming the field,
the value and the rule, so no invalid GemmSpec exists and ``gemm_plan`` can rely on the one it is given; files
without fields or with unknown keys are refused; the defaults are valid for every dtype and scale mode."""

from __future__ import annotations

import dataclasses
import json

import pytest

from cute_py import cli
from cute_py.emit import GemmSpec, SpecError, emit_gemm, example_specs, gemm_plan
from cute_py.emit.spec_fields import BOOL_FIELDS, INPUT_DTYPES, INT_FIELDS, PAIR_FIELDS
from cute_py.emit.scaling import FP8_DTYPES

# (TOML text of one field, the problem the constructor lists for it: field, value and rule)
REFUSED = [
    ('tile = "abc"', "tile = 'abc' must be a tuple of 3 positive ints (BM, BN, BK)"),
    ("tile = [128, 128]", "tile = (128, 128) must be a tuple of 3 positive ints (BM, BN, BK)"),
    ("tile = [128, 128, 64.5]", "tile = (128, 128, 64.5) must be a tuple of 3 positive ints"),
    ('consumers = "2"', "consumers = '2' must be an int"),
    ("stages = true", "stages = True must be an int or None, not a bool"),
    ("stages = 1", "stages = 1: the smem ring needs at least 2"),
    ("group = 1e9", "group = 1000000000.0 must be an int"),
    ("group = 100", "group = 100 not an int in [1, 64]"),
    ('a = "(M,K):(K,1"', "gmem layout '(M,K):(K,1' is not of the form '(M,K):(s0,s1)'"),
    ('dtype = "e4m3"', "dtype = 'e4m3' needs a scale mode (scale = 'tensor', 'row' or 'block')"),
    ('schedule = "pingpong"\nconsumers = 1', "schedule = 'pingpong' needs consumers = 2"),
    ('dtype = "e4m3"\nscale = "block"\ntile = [128, 128, 64]', "BK must be 128, got BK = 64"),
]


def _fields(toml_text: str) -> dict:
    import tomllib
    return tomllib.loads(toml_text)


@pytest.mark.parametrize("text, problem", REFUSED, ids=[t for t, _ in REFUSED])
def test_a_file_with_a_bad_field_is_refused_when_loaded(tmp_path, text, problem):
    path = tmp_path / "spec.toml"
    path.write_text(text + "\n")
    with pytest.raises(SpecError) as e:
        GemmSpec.from_file(path)
    assert str(e.value).startswith(f"GemmSpec.from_file: {path}: ") and problem in str(e.value)
    assert e.value.op == "GemmSpec.from_file" and e.value.source == path
    assert any(problem in p for p in e.value.problems), e.value.problems


@pytest.mark.parametrize("text, problem", REFUSED, ids=[t for t, _ in REFUSED])
def test_the_constructor_and_from_dict_refuse_the_same(text, problem):
    fields = _fields(text)
    with pytest.raises(SpecError, match=r"^GemmSpec: \d+ constraint\(s\) violated") as e:
        GemmSpec(**fields)
    assert any(problem in p for p in e.value.problems), e.value.problems
    with pytest.raises(SpecError, match=r"^GemmSpec\.from_dict: ") as e:
        GemmSpec.from_dict({"gemm": fields})
    assert problem in str(e.value)
    with pytest.raises(SpecError) as e:                         # replace makes a spec too
        GemmSpec().replace(**{k: v for k, v in fields.items()})
    assert any(problem in p for p in e.value.problems)


def test_no_invalid_spec_reaches_the_planner():
    """``gemm_plan(GemmSpec(stages=1))`` returned a plan; the spec is now refused before the planner runs."""
    with pytest.raises(SpecError, match="stages = 1: the smem ring needs at least 2"):
        gemm_plan(GemmSpec(stages=1))
    with pytest.raises(SpecError, match="stages = 1"):
        dataclasses.replace(GemmSpec(), stages=1)
    spec = GemmSpec(stages=2)
    assert spec.validate() is spec and gemm_plan(spec).stages == 2


def test_pingpong_with_split_k_composes_and_loads(tmp_path):
    """Ping-pong with split-K is a composing pair (the feature table of docs/guide/collectives.md; the fixup
    barrier is per tile group), so its file loads: only ping-pong's own rules refuse (consumers, persistent)."""
    path = tmp_path / "spec.toml"
    path.write_text('schedule = "pingpong"\nsplit_k = 2\n')
    spec = GemmSpec.from_file(path)
    assert spec == GemmSpec(schedule="pingpong", split_k=2) and "kSplitK = 2" in emit_gemm(spec)
    path.write_text('schedule = "pingpong"\nsplit_k = 2\npersistent = false\n')
    with pytest.raises(SpecError, match="needs persistent = True"):
        GemmSpec.from_file(path)


@pytest.mark.parametrize("name, text", [("empty.toml", ""), ("comment.toml", "# nothing here\n"),
                                        ("table.toml", "[gemm]\n"), ("empty.json", "{}"),
                                        ("table.json", '{"gemm": {}}')])
def test_a_file_without_fields_is_refused(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SpecError, match=f"GemmSpec.from_file: {path}: holds no spec fields"):
        GemmSpec.from_file(path)
    with pytest.raises(SpecError, match="GemmSpec.from_dict: holds no spec fields"):
        GemmSpec.from_dict({})


@pytest.mark.parametrize("text, needle", [
    ('tile = [128, 256, 64]\n[extra]\nx = 1\n', "unknown spec key(s) ['extra']; known: ['a', 'b', 'c', 'dtype'"),
    ('[gemm]\ntile = [128, 256, 64]\n[extra]\nx = 1\n', "key(s) ['extra'] beside the gemm table"),
    ('dtype = "bf16"\n[gemm]\ntile = [128, 256, 64]\n', "key(s) ['dtype'] beside the gemm table"),
    ('[gemm]\ntiles = [128, 256, 64]\n', "unknown spec key(s) ['tiles']; known: ['a', 'b', 'c', 'dtype'"),
])
def test_unknown_keys_and_sections_are_refused_with_the_known_ones(tmp_path, text, needle):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    with pytest.raises(SpecError) as e:
        GemmSpec.from_file(path)
    assert needle in str(e.value) and "'tile'" in str(e.value) and "load_b" in str(e.value)


def test_a_missing_file_named_like_an_example_hints_the_example_prefix(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as e:
        GemmSpec.from_file("tn_bf16_128x256")
    assert str(e.value) == ("GemmSpec.from_file: 'tn_bf16_128x256': No such file or directory; the shipped example "
                            "of that name is 'example:tn_bf16_128x256'")
    with pytest.raises(FileNotFoundError) as e:
        GemmSpec.from_file(tmp_path / "mine.toml")
    assert str(e.value).endswith("mine.toml': No such file or directory")            # no hint: no such example
    assert GemmSpec.from_file("example:tn_bf16_128x256") == GemmSpec.from_file(example_specs()["tn_bf16_128x256"])
    with pytest.raises(SpecError, match="GemmSpec.from_file: no example spec 'nope'; shipped: "):
        GemmSpec.from_file("example:nope")


@pytest.mark.parametrize("path", [None, 5, b"spec.toml", ["spec.toml"]])
def test_a_path_of_the_wrong_type_names_from_file(path):
    with pytest.raises(TypeError, match=r"^GemmSpec\.from_file: path must be a str or os\.PathLike"):
        GemmSpec.from_file(path)


def test_other_files_are_refused_by_name(tmp_path):
    yaml = tmp_path / "spec.yaml"
    yaml.write_text("tile = [128, 256, 64]\n")
    with pytest.raises(SpecError, match=r"spec.yaml: a spec file is TOML \(.toml\) or JSON \(.json\), not .yaml"):
        GemmSpec.from_file(yaml)
    with pytest.raises(IsADirectoryError, match=f"^GemmSpec.from_file: '{tmp_path}'"):
        GemmSpec.from_file(tmp_path)


def test_json_files_are_checked_alike(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"gemm": {"tile": [128, 128, 64.0], "consumers": 2}}))
    with pytest.raises(SpecError, match=r"tile = \(128, 128, 64.0\) must be a tuple of 3 positive ints"):
        GemmSpec.from_file(path)


# ---------------------------------------------------------------------------------------------------------------
# every field refuses each value of the wrong type (generated per field type)

WRONG = {"bool": ["yes", 1, 0, None, 1.0], "int": [True, 2.0, "2", [2]], "pair": [128, "128", [1.5] * 3, (0,) * 3]}


def _cases():
    for name in BOOL_FIELDS:
        yield from ((name, v) for v in WRONG["bool"])
    for name, optional in INT_FIELDS.items():
        yield from ((name, v) for v in WRONG["int"] + ([] if optional else [None]))
    for name, n in PAIR_FIELDS.items():
        yield from ((name, v) for v in WRONG["pair"] + [(1,) * (n + 1), [True] * n])


@pytest.mark.parametrize("name, value", list(_cases()), ids=repr)
def test_every_field_refuses_a_value_of_the_wrong_type(name, value):
    with pytest.raises(SpecError) as e:
        GemmSpec(**{name: value})
    assert any(p.startswith(f"{name} = ") for p in e.value.problems), e.value.problems


# ---------------------------------------------------------------------------------------------------------------
# defaults: valid for every dtype and scale mode


def _modes():
    for dtype in INPUT_DTYPES:
        if dtype not in FP8_DTYPES:
            yield dict(dtype=dtype)
            continue
        for scale in ("tensor", "row", "block"):
            yield dict(dtype=dtype, scale=scale)
        for scale in ("tensor", "row"):
            yield dict(dtype=dtype, scale=scale, fast_accum=True)


@pytest.mark.parametrize("fields", list(_modes()), ids=repr)
def test_the_defaults_are_valid_for_every_dtype_and_scale_mode(fields):
    spec = GemmSpec(**fields)                                   # refused before the fix: BK 64 with scale='block'
    assert spec.tile == ((128, 128, 128) if spec.dtype in FP8_DTYPES else (128, 128, 64))
    assert GemmSpec.from_dict(spec.to_dict()) == spec and spec.name == GemmSpec(**fields, tile=spec.tile).name


def test_the_default_tile_is_the_dtypes_and_a_given_tile_is_kept():
    assert GemmSpec().tile == GemmSpec(tile=None).tile == (128, 128, 64)
    assert GemmSpec().name == "cute_gemm_sm90_bf16_tn_128x128x64_s6_c2_obf16_dr_g8"      # unchanged
    assert GemmSpec(dtype="e4m3", scale="block").tile == (128, 128, 128)
    with pytest.raises(SpecError, match=r"BK must be 128, got BK = 64"):             # says what to set
        GemmSpec(dtype="e4m3", scale="block", tile=(128, 128, 64))


# ---------------------------------------------------------------------------------------------------------------
# the CLI reports a refused spec file in one line


def test_the_cli_reports_a_refused_file_in_one_line(tmp_path, capsys, monkeypatch):
    path = tmp_path / "spec.toml"
    path.write_text('tile = "abc"\n')
    assert cli.main(["gemm", "--spec", str(path), "--emit-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "GemmSpec.from_file" in err and "tile = 'abc' must be a tuple" in err
    monkeypatch.chdir(tmp_path)
    assert cli.main(["gemm", "--spec", "tn_bf16_128x256", "--emit-only"]) == 2
    assert "example:tn_bf16_128x256" in capsys.readouterr().err


def test_numpy_bools_are_bools():
    np = pytest.importorskip("numpy")
    spec = GemmSpec(persistent=np.bool_(False), beta=np.bool_(True))
    assert spec.persistent is False and spec.beta is True and spec == GemmSpec(persistent=False, beta=True)
    assert json.loads(json.dumps(spec.to_dict()))["beta"] is True
    with pytest.raises(SpecError, match=r"alpha = (np.int64\(1\)|1) must be True or False"):
        GemmSpec(alpha=np.int64(1))
