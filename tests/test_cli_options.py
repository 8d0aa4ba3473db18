"""Every ``cute-py`` option is used or refused (issue 34, sections 4 and 5).

An option that the chosen path would ignore, or that conflicts with another, is refused with one line naming
both; counts are read by one integer parser; exit statuses are those ``--help`` lists (3 without the cuda
extra, 141 when stdout's reader leaves early); each message names the option and what is wrong with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from cute_py import cli, cli_gemm
from cute_py import runtime as rt
from cute_py.cli_errors import EXIT_ERROR, EXIT_NO_CUDA
from cute_py.runtime.errors import CudaNotInstalledError

ROOT = Path(__file__).resolve().parent.parent


def run(capsys, *argv):
    """``(status, stdout, stderr)`` of ``cute-py argv`` in this process (argparse's SystemExit included)."""
    try:
        status = cli.main(list(argv))
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv) -> str:
    """The one error line of ``cute-py argv``, which must exit 2 with nothing on stdout."""
    status, out, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert status == EXIT_ERROR and len(lines) == 1 and "Traceback" not in err, (status, out, err)
    return lines[0]


class _FakeProgram(SimpleNamespace):
    def __init__(self, cached=False):
        super().__init__(registers={}, spills={}, warnings=(), nvrtc_version=(13, 0), compile_seconds=0.74,
                         cached=cached)


@pytest.fixture
def compiled(monkeypatch):
    """Compiling 'works' (a stand-in program, no NVRTC needed), no GPU is usable; the list records each compile."""
    calls = []

    def fake(src, name=None):
        calls.append(name)
        return _FakeProgram()

    monkeypatch.setattr(rt, "compile", fake)
    monkeypatch.setattr(cli_gemm, "_gpu_reason", lambda: "NoDeviceError: pretend")
    return calls


# ---------------------------------------------------------------------------------------------------------------
# cute-py gemm: -o, --emit-only, --spec and the options it fixes


def test_output_without_emit_only_writes_the_source_it_compiles(compiled, capsys, tmp_path):
    target = tmp_path / "k2.cu"
    status, out, _ = run(capsys, "gemm", "--layout", "tn", "-o", str(target))
    assert status == 0 and compiled, out
    src = target.read_text()
    assert "wgmma.mma_async" in src and f"wrote {target}" in out and "compiled  NVRTC" in out


@pytest.mark.parametrize("option", [["--check"], ["--bench"], ["--arrays", "driver"], ["--arrays", "auto"]])
def test_emit_only_refuses_the_options_of_a_run(compiled, capsys, option):
    line = refused(capsys, "gemm", "--emit-only", *option)
    assert "--emit-only" in line and option[0] in line
    assert not compiled


@pytest.mark.parametrize("option", [["--dtype", "f16"], ["--dtype", "bf16"], ["--layout", "nt"],
                                    ["--scale", "row"], ["--fast-accum"]])
def test_spec_refuses_what_it_fixes(capsys, option):
    line = refused(capsys, "gemm", "--spec", "example:tn_bf16_128x256", "--emit-only", *option)
    assert "--spec example:tn_bf16_128x256" in line and option[0] in line


@pytest.mark.parametrize("option", [["--m", "128"], ["--k", "64"], ["--groups", "4"], ["--batch", "2"]])
def test_spec_emit_only_refuses_the_sizes_of_a_run(capsys, option):
    spec = "example:tn_bf16_moe_grouped_64x256" if option[0] == "--groups" else "example:tn_bf16_128x256"
    line = refused(capsys, "gemm", "--spec", spec, "--emit-only", *option)
    assert "--emit-only" in line and option[0] in line


@pytest.mark.parametrize("spec, option, expected", [
    ("example:tn_bf16_128x256", ["--groups", "4"], "--groups 4 asks for groups along M, but --spec"),
    ("example:tn_bf16_128x256", ["--batch", "4"], "--batch 4 asks for a batch, but --spec"),
    ("example:tn_bf16_moe_grouped_64x256", ["--batch", "4"], "is a kernel for groups along M"),
    ("example:tn_bf16_bmm_batched_128x256", ["--groups", "4"], "is a kernel for a batch"),
    ("example:tn_bf16_moe_grouped_64x256", [], "pass --groups G"),
    ("example:tn_bf16_bmm_batched_128x256", [], "pass --batch L"),
])
def test_spec_and_grouping_options_must_agree_before_compiling(compiled, capsys, spec, option, expected):
    line = refused(capsys, "gemm", "--spec", spec, *option)
    assert expected in line, line
    assert not compiled


def test_spec_with_its_grouping_runs(compiled, capsys):
    status, out, _ = run(capsys, "gemm", "--spec", "example:tn_bf16_moe_grouped_64x256", "--groups", "8")
    assert status == 0 and "no GPU: stopping after the compile step" in out


def test_cache_hit_is_not_reported_as_this_runs_compile(monkeypatch, capsys):
    monkeypatch.setattr(rt, "compile", lambda src, name=None: _FakeProgram(cached=True))
    monkeypatch.setattr(cli_gemm, "_gpu_reason", lambda: "NoDeviceError: pretend")
    status, out, _ = run(capsys, "gemm", "--spec", "example:tn_bf16_128x256")
    assert status == 0
    line = next(s for s in out.splitlines() if s.startswith("compiled"))
    assert "loaded from the kernel cache in" in line and "(the first compile took 0.74 s)" in line
    assert "in 0.74 s" not in line


# ---------------------------------------------------------------------------------------------------------------
# fp8 groups and autotune types


def test_fp8_groups_along_m_run_as_grouped_gemm_does(capsys):
    for scale in ("tensor", "row", "block"):
        status, out, err = run(capsys, "gemm", "--groups", "8", "--dtype", "e4m3", "--scale", scale, "--m", "4096",
                               "--n", "1024", "--k", "512", "--emit-only")
        assert status == 0, err
        assert f"_scale{scale}_grouped" in out.splitlines()[0]
    line = refused(capsys, "gemm", "--batch", "4", "--dtype", "e5m2", "--emit-only")
    assert "--batch runs bf16 and f16" in line and "--groups" in line


def test_autotune_takes_the_fp8_types(monkeypatch, capsys):
    monkeypatch.setattr(cli_gemm, "_gpu_reason", lambda: "NoDeviceError: pretend")
    status, out, err = run(capsys, "autotune", "--dtype", "e4m3", "--scale", "block", "--m", "256", "--n", "256",
                           "--k", "512")
    assert status == 0, err
    assert "e4m3 -> bf16" in out and "_scaleblock" in out and "candidates:" in out
    assert "--scale, --fast-accum and --scale-type apply to fp8" in refused(capsys, "autotune", "--scale", "row")
    assert "needs --layout tn" in refused(capsys, "autotune", "--dtype", "e5m2", "--layout", "nt")


def test_autotune_fp8_inputs_need_torch_with_cuda(monkeypatch):
    from cute_py.cli_autotune import _random_inputs
    from cute_py.problem import Problem
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU here: it allocates the fp8 inputs")
    reason = _random_inputs(Problem(256, 256, 512, "K", "K", "e4m3", "bf16", scale="tensor"))
    assert isinstance(reason, str) and "needs torch with CUDA" in reason and "cupy has no fp8" in reason


# ---------------------------------------------------------------------------------------------------------------
# Counts: one integer parser


@pytest.mark.parametrize("argv", [["gemm", "--m", "1e3"], ["gemm", "--groups", "1e1"], ["gemm", "--batch", "0x4"],
                                  ["autotune", "--reps", "1e1"], ["autotune", "--batch", "0x10"],
                                  ["autotune", "--reps", "2.0"]])
def test_every_count_is_a_decimal_integer(capsys, argv):
    line = refused(capsys, *argv)
    assert f"argument {argv[1]}: {argv[2]!r} is not an integer" in line


@pytest.mark.parametrize("argv, option", [(["mma", "SM80_16x8x16_F32BF16BF16F32_TN", "--tiled", "1e1,1,1"], "--tiled"),
                                          (["show", "(8,8):(8,1)", "--swizzle", "0x3,3,3"], "--swizzle")])
def test_lists_of_counts_use_the_same_parser(capsys, argv, option):
    assert f"{option} must be 3 comma-separated" in refused(capsys, *argv)


# ---------------------------------------------------------------------------------------------------------------
# show / mma / copy / explain


def test_show_dtype_without_banks_or_access_is_refused(capsys):
    line = refused(capsys, "show", "(8,8):(8,1)", "--dtype", "f32")
    assert "--dtype f32" in line and "--banks" in line and "--access" in line
    status, out, _ = run(capsys, "show", "(8,8):(8,1)", "--banks", "--dtype", "f32")
    assert status == 0 and "banks of (8,8):(8,1) (f32" in out


def test_show_full_applies_to_text(capsys):
    assert "--full" in refused(capsys, "show", "(8,8):(8,1)", "--full", "--format", "svg")


@pytest.mark.parametrize("command", [["show", "(4,8)"], ["mma", "SM80_16x8x16_F32BF16BF16F32_TN"],
                                     ["copy", "SM75_U32x4_LDSM_N"]])
def test_output_extension_must_name_the_format(capsys, tmp_path, command):
    png = tmp_path / "out.png"
    line = refused(capsys, *command, "-o", str(png))
    assert "cannot tell the format" in line and ".png" in line and not png.exists()
    line = refused(capsys, *command, "--format", "latex", "-o", str(tmp_path / "out.svg"))
    assert "names the svg format but --format is latex" in line
    svg = tmp_path / "out.svg"
    assert run(capsys, *command, "-o", str(svg))[0] == 0           # the extension picks the format
    ET.parse(svg)
    assert run(capsys, *command, "--format", "text", "-o", str(tmp_path / "out"))[0] == 0   # told: any name


def test_explain_writes_text_only(capsys, tmp_path):
    line = refused(capsys, "explain", "complement", "4:2", "24", "-o", str(tmp_path / "d.svg"))
    assert "names svg" in line and "writes text" in line
    assert run(capsys, "explain", "complement", "4:2", "24", "-o", str(tmp_path / "d.txt"))[0] == 0


def test_copy_draws_copy_atoms(capsys):
    status, out, _ = run(capsys, "copy", "SM75_U32x4_LDSM_N", "--dtype", "f16")
    assert status == 0 and out.startswith("Copy_Atom SM75_U32x4_LDSM_N") and "ValueType:    16b" in out
    status, out, _ = run(capsys, "copy", "SM75_U32x4_LDSM_N", "--format", "svg")
    assert status == 0 and "<title>SM75_U32x4_LDSM_N (bf16)</title>" in out
    assert "cute-py copy 'SM75_U32x4_LDSM_N'" in refused(capsys, "mma", "SM75_U32x4_LDSM_N")
    assert "cute-py mma" in refused(capsys, "copy", "SM80_16x8x16_F32BF16BF16F32_TN")
    assert "unknown copy op 'nope'" in refused(capsys, "copy", "nope")
    assert "fractional number of elements" in refused(capsys, "copy", "UniversalCopy<uint8_t>")


def test_tiled_names_the_option_and_the_rule(capsys):
    for bad in ("0,1,1", "-1,1,1"):
        line = refused(capsys, "mma", "SM80_16x8x16_F32BF16BF16F32_TN", "--tiled", bad)
        assert line == f"cute-py mma: error: --tiled must be 3 comma-separated positive integers, got {bad!r}"


def test_negative_swizzle_says_what_is_wrong(capsys):
    line = refused(capsys, "show", "(8,8):(8,1)", "--swizzle", "-1,3,3")
    assert "--swizzle -1,3,3" in line and "need B >= 0" in line and "expected one argument" not in line


def test_unclosed_tiler_is_named(capsys):
    line = refused(capsys, "explain", "logical_divide", "(12,32):(32,1)", "<4:1,8:1")
    assert "ARG 2 '<4:1,8:1'" in line and "needs its closing '>'" in line


@pytest.mark.parametrize("layout", ["(8,64):(64,1)", "(64,64):(64,1)", "(16,32):(32,1)"])
def test_vector_access_message_suggests_an_access_that_works(capsys, layout):
    """The vec128 refusal on a row-major tile suggests a TV layout; that layout is a valid 128-bit access."""
    line = refused(capsys, "show", layout, "--access", "vec128")
    assert "(the columns of a row-major" not in line and "contiguous along its rows" in line
    example = re.search(r"e\.g\. (\S+) has lane i read 8 elements of row i", line).group(1)
    status, out, err = run(capsys, "show", layout, "--access", example)
    assert status == 0, err
    assert "128-bit accesses" in out


# ---------------------------------------------------------------------------------------------------------------
# Exit statuses


def test_autotune_without_the_cuda_extra_exits_3(monkeypatch, capsys):
    def missing():
        raise CudaNotInstalledError(CudaNotInstalledError.default_message("No module named 'cuda'"))

    monkeypatch.setattr(rt, "device", missing)
    status, out, err = run(capsys, "autotune", "--m", "256", "--n", "256", "--k", "256")
    assert status == EXIT_NO_CUDA, (out, err)
    assert "candidates:" in out and 'pip install "cute-py[cuda]"' in err and len(err.strip().splitlines()) == 1


def _closes_early(*argv, env=None):
    """Run ``cute-py argv`` with a reader that takes one line of its output and leaves."""
    proc = subprocess.Popen([sys.executable, "-m", "cute_py", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=env)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    return proc.wait(), err


def test_long_output_to_a_reader_that_leaves_exits_141():
    status, err = _closes_early("show", "(512,512)", "--full")
    assert status == cli.EXIT_BROKEN_PIPE and "Traceback" not in err, err


def test_readme_141_example_exits_141():
    """The README's example of status 141 is a command that gives it."""
    text = " ".join((ROOT / "README.md").read_text().split())
    command = re.search(r"141 the reader of the output went away[^`]*`cute-py ([^`|]*) \| head`", text).group(1)
    import shlex
    status, err = _closes_early(*shlex.split(command))
    assert status == cli.EXIT_BROKEN_PIPE, (command, err)


def test_python_m_cute_py_is_the_command():
    """README: ``python -m cute_py`` runs the same command (the tour prints the same either way)."""
    r = subprocess.run([sys.executable, "-m", "cute_py", "tour"], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0 and r.stdout.startswith("cute-py ") and "composition(" in r.stdout
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "`python -m cute_py` runs the same `cute-py` command" in text and "shows more" not in text


def test_help_names_copy_and_the_141_condition(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "copy" in out and "141  the reader of the output went away before the command finished" in out

