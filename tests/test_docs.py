"""The docs build cleanly: any Sphinx warning (a broken autodoc target, a bad
docstring, a dangling toctree entry) fails the build under -W."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(
    importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_parser") is None,
    reason="sphinx and myst-parser are not installed (pip install -e '.[docs]')",
)
def test_docs_build_without_warnings(tmp_path):
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
           str(ROOT / "docs"), str(tmp_path / "html")]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stdout}\n{result.stderr}"
    assert (tmp_path / "html" / "guide" / "algebra.html").is_file()
    assert (tmp_path / "html" / "api.html").is_file()
