"""cute_py.tuned without a GPU: problem keys, the on-disk table, lookups (and when they miss), and what a change
of the table does to prepared gemm launches."""

from __future__ import annotations

import importlib
import json

import pytest

from cute_py import tuned
from cute_py.emit import GemmSpec
from cute_py.problem import Problem
from cute_py.selection import pick_spec

DEVICE = "Fake GPU 80GB"


# ---------------------------------------------------------------------------------------------------------------
# Problem keys and the cache

def test_problem_key_is_sensitive_to_every_field():
    args = dict(M=4096, N=4096, K=4096, a_major="K", b_major="K", dtype="bf16", out_dtype="bf16", beta=False,
                bias=None, activation=None, c_row_major=True)
    changes = dict(M=4095, N=8192, K=1024, a_major="MN", b_major="MN", dtype="f16", out_dtype="f32", beta=True,
                   bias="col", activation="relu", c_row_major=False)
    base = tuned.problem_key(Problem(**args), device=DEVICE)
    assert base == tuned.problem_key(Problem(**args), device=DEVICE)
    keys = {tuned.problem_key(Problem(**dict(args, **{k: v})), device=DEVICE) for k, v in changes.items()}
    assert len(keys) == len(changes) and base not in keys
    assert tuned.problem_key(Problem(**args), device="NVIDIA H200") != base
    assert tuned.problem_key(Problem(**dict(args, bias="row")), device=DEVICE) != \
        tuned.problem_key(Problem(**dict(args, bias="col")), device=DEVICE)
    assert base.startswith(f"v{tuned.FORMAT}|")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty autotune cache in tmp_path on a pretend GPU named DEVICE; lookups enabled."""
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CUTE_PY_AUTOTUNE", raising=False)
    monkeypatch.setattr(tuned._State, "device", DEVICE)
    monkeypatch.setattr(tuned._State, "device_known", True)
    monkeypatch.setattr(tuned._State, "where", None)
    monkeypatch.setattr(tuned._State, "entries", {})
    monkeypatch.setattr(tuned._State, "specs", {})
    return tmp_path


def forget_memory():
    """As if in a new process: the next lookup reads the file again."""
    tuned._State.where = None


PROBLEM = Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16")
ARGS = (4096, 4096, 4096, "K", "K", "bf16", "bf16")
TUNED = pick_spec(*ARGS).replace(tile=(128, 128, 64), cluster=(2, 1), group=4)


def test_cache_round_trip(cache):
    assert tuned.cache_path() == cache / "autotune.json"
    assert tuned.lookup(Problem(*ARGS)) is None                                          # miss: no file
    path = tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    assert path == cache / "autotune.json" and path.is_file()
    assert [p.name for p in cache.iterdir()] == ["autotune.json"]            # no temporary file left behind
    assert tuned.lookup(Problem(*ARGS)) == TUNED                                         # hit, from memory
    forget_memory()
    assert tuned.lookup(Problem(*ARGS)) == TUNED                                         # hit, from the file
    data = json.loads(path.read_text())
    entry = data["entries"][tuned.problem_key(PROBLEM, device=DEVICE)]
    assert data["format"] == tuned.FORMAT
    assert entry["name"] == TUNED.name and entry["time_ms"] == 0.25 and entry["tflops"] == pytest.approx(549.8, 0.01)
    assert entry["cute_py"] == importlib.import_module("cute_py").__version__
    assert GemmSpec.from_dict(entry["spec"]) == TUNED


def test_lookup_misses_other_problems_and_other_gpus(cache):
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    assert tuned.lookup(Problem(4096, 4096, 2048, "K", "K", "bf16", "bf16")) is None
    assert tuned.lookup(Problem(*ARGS, beta=True)) is None
    assert tuned.lookup(Problem(*ARGS, bias="col")) is None
    assert tuned.lookup(Problem(*ARGS, activation="gelu")) is None
    assert tuned.lookup(Problem(*ARGS, c_row_major=False)) is None
    assert tuned.lookup(Problem(*ARGS[:3], "MN", "K", "bf16", "bf16")) is None
    tuned._State.device = "Another GPU"
    assert tuned.lookup(Problem(*ARGS)) is None


def test_record_merges_entries_written_by_another_process(cache):
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    other = Problem(8192, 8192, 8192, "K", "K", "bf16", "bf16")
    spec = pick_spec(8192, 8192, 8192, "K", "K", "bf16", "bf16")
    # another process writes the file behind this one's back ...
    data = json.loads(tuned.cache_path().read_text())
    data["entries"][tuned.problem_key(other, device=DEVICE)] = dict(data["entries"][tuned.problem_key(PROBLEM, device=DEVICE)], spec=spec.to_dict())
    tuned.cache_path().write_text(json.dumps(data))
    # ... and a later record keeps its entry
    tuned.record(PROBLEM, TUNED.replace(group=16), 0.2e-3, device=DEVICE)
    assert tuned.lookup(Problem(8192, 8192, 8192, "K", "K", "bf16", "bf16")) == spec
    assert tuned.lookup(Problem(*ARGS)) == TUNED.replace(group=16)


def test_lookup_can_be_turned_off(cache, monkeypatch):
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    for off in ("0", "off", "False", " no "):
        monkeypatch.setenv("CUTE_PY_AUTOTUNE", off)
        assert tuned.lookup(Problem(*ARGS)) is None, off
    monkeypatch.setenv("CUTE_PY_AUTOTUNE", "1")
    assert tuned.lookup(Problem(*ARGS)) == TUNED


def test_lookup_of_a_tma_spec_for_a_d_that_tma_cannot_store(cache):
    assert TUNED.epilogue == "tma"
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    assert tuned.lookup(Problem(*ARGS, d_tma=False)) is None
    direct = TUNED.replace(epilogue="direct")
    tuned.record(PROBLEM, direct, 0.25e-3, device=DEVICE)
    assert tuned.lookup(Problem(*ARGS, d_tma=False)) == direct == tuned.lookup(Problem(*ARGS))


def test_lookup_without_a_gpu_is_a_miss(cache):
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    tuned._State.device = None
    assert tuned.lookup(Problem(*ARGS)) is None


def test_stale_or_damaged_entries_are_misses(cache):
    path = tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    data = json.loads(path.read_text())
    key = tuned.problem_key(PROBLEM, device=DEVICE)
    for entry in (dict(data["entries"][key], cute_py="0.0.1"),                         # another cute_py version
                  dict(data["entries"][key], spec={"tile": [96, 264, 40]}),            # no longer valid
                  dict(data["entries"][key], spec={"no_such_field": 1}),               # unreadable
                  "not an entry"):
        path.write_text(json.dumps({"format": tuned.FORMAT, "entries": {key: entry}}))
        forget_memory()
        assert tuned.lookup(Problem(*ARGS)) is None, entry
    for text in ("{not json", json.dumps({"format": tuned.FORMAT + 1, "entries": data["entries"]}), "[]"):
        path.write_text(text)
        forget_memory()
        assert tuned.lookup(Problem(*ARGS)) is None, text
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)                   # a damaged file is replaced
    forget_memory()
    assert tuned.lookup(Problem(*ARGS)) == TUNED


def test_clear_cache(cache):
    assert tuned.clear_cache() is False
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    assert tuned.clear_cache() is True
    assert not tuned.cache_path().exists()
    assert tuned.lookup(Problem(*ARGS)) is None


def test_a_new_cache_folder_is_read_afresh(cache, tmp_path_factory, monkeypatch):
    tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path_factory.mktemp("elsewhere")))
    assert tuned.lookup(Problem(*ARGS)) is None
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(cache))
    assert tuned.lookup(Problem(*ARGS)) == TUNED


def test_problem_key_needs_a_device_name_or_a_gpu(monkeypatch):
    monkeypatch.setattr(tuned._State, "device", None)
    monkeypatch.setattr(tuned._State, "device_known", True)
    from cute_py.cli_gemm import _gpu_reason
    if _gpu_reason() is None:
        pytest.skip("a GPU is usable here")
    from cute_py.runtime import CudaRuntimeError
    with pytest.raises(CudaRuntimeError):                # NoDeviceError, or CudaNotInstalledError
        tuned.problem_key(Problem(*ARGS))


def test_record_into_an_unwritable_folder_raises(cache, monkeypatch):
    blocker = cache / "file"
    blocker.write_text("")
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(blocker / "sub"))
    with pytest.raises(OSError):
        tuned.record(PROBLEM, TUNED, 0.25e-3, device=DEVICE)


def test_a_changed_table_drops_prepared_gemm_launches(tmp_path, monkeypatch):
    """A prepared gemm launch chose its spec before the record: recording (or clearing) drops it, so the next
    call chooses again."""
    from cute_py.gemm import LAUNCHES
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))
    LAUNCHES.get("stale", tuned.generation())           # the launches have seen the table's current state
    LAUNCHES.put("stale", object())
    assert LAUNCHES.get("stale", tuned.generation()) is not None
    tuned.record(Problem(4096, 4096, 4096, "K", "K", "bf16", "bf16"), GemmSpec(tile=(128, 256, 64)), 1e-3,
                 device="H100")
    assert LAUNCHES.get("stale", tuned.generation()) is None
    LAUNCHES.put("stale", object())
    tuned.clear_cache()
    assert LAUNCHES.get("stale", tuned.generation()) is None
