"""CLI errors (issue 14, items 4 and 6): one line on stderr, no traceback, and a documented exit status.

2 for every error in the input, 3 when the ``cuda`` extra is missing, 4 for ``gemm --check`` / ``--bench``
without a GPU, 141 when the reader of stdout goes away (see cute_py.cli_errors).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from cute_py import cli, cli_gemm
from cute_py import runtime as rt
from cute_py.cli_errors import EXIT_ERROR, EXIT_NO_CUDA, EXIT_NO_GPU
from cute_py.runtime.errors import CudaNotInstalledError

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "cute_py", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, **kw)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def fails_in_process(capsys, code, *argv) -> str:
    """``cute-py argv`` run in this process: its exit status (returned, or argparse's SystemExit) and its one line."""
    try:
        status = cli.main(list(argv))
    except SystemExit as e:
        status = e.code
    assert status == code, capsys.readouterr()
    return one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------------------
# Spec files and layouts that used to end in tracebacks

@pytest.mark.parametrize("name, text, expected", [
    ("bad.toml", "tile = [128,\n", "malformed TOML"),
    ("bad.json", '{"tile": [1,', "malformed JSON"),
    ("list.json", "[1, 2, 3]", "must be a mapping"),
    ("bool.toml", "tile = true\n", "tile = True must be a tuple of 3 positive ints"),
    ("yes.toml", 'persistent = "yes"\n', "persistent = 'yes' must be True or False"),
])
def test_bad_spec_files_are_one_line(tmp_path, capsys, name, text, expected):
    p = tmp_path / name
    p.write_text(text)
    line = fails_in_process(capsys, EXIT_ERROR, "gemm", "--spec", str(p), "--emit-only")
    assert line.startswith("cute-py gemm: error: ") and expected in line


def test_bad_spec_file_subprocess(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("tile = [128,\n")
    r = run_cli("gemm", "--spec", str(p))
    assert r.returncode == EXIT_ERROR and "malformed TOML" in one_error_line(r.stderr)


def test_missing_file_and_unknown_example(capsys):
    assert "No such file" in fails_in_process(capsys, EXIT_ERROR, "gemm", "--spec", "/nonexistent/s.toml")
    assert "no example spec 'nope'" in fails_in_process(capsys, EXIT_ERROR, "gemm", "--spec", "example:nope")


def test_show_symbolic_layout_or_a_tiler(capsys):
    line = fails_in_process(capsys, EXIT_ERROR, "show", "(M,K):(K,1)")
    assert "symbolic" in line and "M, K" in line
    line = fails_in_process(capsys, EXIT_ERROR, "show", "<4:1,_>")
    assert "LAYOUT must be a layout, a swizzle or a shape" in line


# ---------------------------------------------------------------------------
# Sizes

@pytest.mark.parametrize("value, expected", [
    ("0", "0 is not a size"), ("-5", "-5 is not a size"), ("100000000000", "larger than 2147483647"),
    ("2147483648", "larger than 2147483647"), ("12.5", "not an integer"), ("x", "not an integer"),
    ("1e3", "'1e3' is not an integer"), ("0x100", "'0x100' is not an integer"), ("1_000", "not an integer"),
])
@pytest.mark.parametrize("command", ["gemm", "autotune"])
def test_sizes_out_of_range_are_refused(capsys, command, value, expected):
    line = fails_in_process(capsys, EXIT_ERROR, command, "--m", value, "--emit-only" if command == "gemm" else "--n=8")
    assert "argument --m: " in line and expected in line and f"cute-py {command} --help" in line


def test_largest_extent_is_accepted():
    args = cli._parser().parse_args(["gemm", "--m", "2147483647", "--n", "1000"])
    assert (args.m, args.n, args.k) == (2147483647, 1000, None)           # None: the default, 4096, when run


# ---------------------------------------------------------------------------
# No GPU, no cuda extra

class _FakeProgram(SimpleNamespace):
    def __init__(self):
        super().__init__(registers={}, spills={}, warnings=(), nvrtc_version=(13, 0), compile_seconds=0.0,
                         cached=True)


@pytest.fixture
def no_gpu(monkeypatch):
    """Compiling 'works' (a stand-in program, so NVRTC is not needed) and no GPU is usable."""
    monkeypatch.setattr(rt, "compile", lambda src, name=None: _FakeProgram())
    monkeypatch.setattr(cli_gemm, "_gpu_reason", lambda: "NoDeviceError: pretend")


@pytest.mark.parametrize("flags", [["--check"], ["--bench"], ["--check", "--bench"]])
def test_check_or_bench_without_a_gpu_is_not_success(no_gpu, capsys, flags):
    assert cli.main(["gemm", "--spec", "example:tn_bf16_128x256", *flags]) == EXIT_NO_GPU
    out, err = capsys.readouterr()
    assert "no GPU: stopping after the compile step" in out
    assert f"{' '.join(flags)} did not run" in one_error_line(err)


def test_compile_only_without_a_gpu_is_success(no_gpu, capsys):
    assert cli.main(["gemm", "--spec", "example:tn_bf16_128x256"]) == 0
    assert "no GPU: stopping after the compile step." in capsys.readouterr().out


def test_missing_cuda_extra_in_process(monkeypatch, capsys):
    def missing(src, name=None):
        raise CudaNotInstalledError(CudaNotInstalledError.default_message("No module named 'cuda'"))

    monkeypatch.setattr(rt, "compile", missing)
    line = fails_in_process(capsys, EXIT_NO_CUDA, "gemm", "--spec", "example:tn_bf16_128x256", "--check", "--bench")
    assert 'pip install "cute-py[cuda]"' in line and "cuda.bindings" in line


BLOCK_CUDA = '''
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "cuda" or name.startswith("cuda."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _Block())
'''


def test_missing_cuda_extra_subprocess(tmp_path):
    """As installed without the extra: a sitecustomize hides the ``cuda`` package from the command."""
    (tmp_path / "sitecustomize.py").write_text(BLOCK_CUDA)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               CUTE_PY_CACHE_DIR=str(tmp_path / "cache"))      # a cold compile cache: NVRTC is really needed
    probe = run_cli("tour", env=env)
    assert probe.returncode == 0
    r = run_cli("gemm", "--spec", "example:tn_bf16_128x256", "--check", "--bench", env=env)
    assert r.returncode == EXIT_NO_CUDA, (r.stdout, r.stderr)
    line = one_error_line(r.stderr)
    assert 'pip install "cute-py[cuda]"' in line and r.stdout == ""


# ---------------------------------------------------------------------------
# Pipes and help

def test_closed_pipe_is_quiet():
    """The reader is gone before the command writes (``cute-py tour | head`` at its worst): no traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([sys.executable, "-m", "cute_py", "tour"], stdout=write, stderr=subprocess.PIPE,
                           text=True, cwd=ROOT)
    finally:
        os.close(write)
    assert "Traceback" not in r.stderr and "BrokenPipeError" not in r.stderr, r.stderr
    assert r.returncode == cli.EXIT_BROKEN_PIPE


def test_help_lists_the_exit_statuses():
    r = run_cli("--help")
    assert r.returncode == 0
    assert "exit statuses:" in r.stdout and "3  the cuda extra is not installed" in r.stdout
