"""The cute-py command runs its tour and prints live results."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "cute_py", *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_tour_prints_composition_result():
    result = run_cli("tour")
    assert result.returncode == 0, result.stderr
    assert "composition((4,3):(3,1), 6:2) = (2,3):(6,1)" in result.stdout
    assert "Sw<3,3,3> o 0 o (8,64):(64,1)" in result.stdout


def test_no_subcommand_runs_the_tour():
    result = run_cli()
    assert result.returncode == 0, result.stderr
    assert "(2,3):(6,1)" in result.stdout


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("cute-py ")
