"""``cute-py gemm --groups/--batch`` and ``cute-py autotune`` on an sm_90 GPU (issue 34): the grouped run checks
fp8 (every scale mode) as grouped_gemm computes it, bf16 groups and batches still check exactly, and autotune
tunes the fp8 types."""

from __future__ import annotations

import pytest

from cute_py import cli

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("GPU test skipped: torch has no CUDA device", allow_module_level=True)


def _ok(capsys, *argv) -> str:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert status == 0, (out, err)
    return out


@pytest.mark.parametrize("scale, fast", [("tensor", False), ("row", False), ("row", True), ("block", False)])
def test_fp8_groups_check_exactly_and_time(capsys, scale, fast):
    out = _ok(capsys, "gemm", "--groups", "8", "--dtype", "e4m3", "--scale", scale, *(["--fast-accum"] * fast),
              "--m", "1000", "--n", "384", "--k", "512", "--check", "--bench")
    assert "check     PASS: 384000 of 384000 elements equal" in out and f"power-of-two {scale} scales" in out
    assert "TFLOP/s" in out


@pytest.mark.parametrize("argv", [["--groups", "8"], ["--batch", "3"]])
def test_bf16_groups_and_batches_still_check_exactly(capsys, argv):
    out = _ok(capsys, "gemm", *argv, "--m", "512", "--n", "256", "--k", "128", "--check", "--bench")
    assert "check     PASS" in out and "TFLOP/s" in out


def test_autotune_tunes_fp8(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))
    out = _ok(capsys, "autotune", "--dtype", "e5m2", "--scale", "row", "--m", "512", "--n", "512", "--k", "1024",
              "--reps", "2", "--batch", "2")
    assert "e5m2 -> bf16" in out and "recorded" in out
