"""``cute-py gemm`` without a GPU: emits, compiles, prints the resource report, and says it stopped."""

from __future__ import annotations

import pytest

from cute_py.cli import main


def test_emit_only_writes_source(tmp_path, capsys):
    out = tmp_path / "k.cu"
    assert main(["gemm", "--layout", "nt", "--emit-only", "-o", str(out)]) == 0
    src = out.read_text()
    assert "wgmma.mma_async" in src and "(M,K):(1,M)" in src and "#include" not in src


def test_example_spec_compiles_and_reports(capsys):
    pytest.importorskip("cuda.bindings")
    try:
        from cute_py.runtime import nvrtc_version
        nvrtc_version()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"NVRTC unavailable: {e}")
    assert main(["gemm", "--spec", "example:tn_bf16_128x256"]) == 0
    text = capsys.readouterr().out
    assert "0 spill bytes" in text and "registers/thread" in text


def test_bad_spec_file_is_reported(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('tile = [96, 264, 40]\n')
    assert main(["gemm", "--spec", str(p), "--emit-only"]) == 2
    assert "block_n 264" in capsys.readouterr().err
