"""The docs build cleanly in nitpicky mode: every cross-reference resolves, and no
Sphinx warning (a broken autodoc target, a bad docstring, a dangling toctree entry)
appears except those in ALLOWED below.

ALLOWED only shrinks: each entry names the file whose docstring must change, and
the test fails when an allowed warning no longer appears, so the fix also removes
its entry. Do not add entries; fix the docstring (or docs/api.md) instead.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# (file whose docstring must change, regex matched against the warning line with ROOT stripped)
ALLOWED = [
]

# The reference sections the API docs must have (issue 14, item 7): public name -> anchor in api.html.
SECTIONS = {
    "bank_conflicts": "cute_py.arch.sm90.banks.bank_conflicts",
    "bank_map": "cute_py.viz.banks.bank_map",
    "compare_swizzle": "cute_py.viz.banks.compare_swizzle",
    "suggest_swizzle": "cute_py.viz.banks.suggest_swizzle",
    "coalescing": "cute_py.viz.coalesce.coalescing",
    "explain": "cute_py.viz.explain.explain",
}


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_parser") is None:
        pytest.skip("sphinx and myst-parser are not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("docs") / "html"
    # Sphinx's plain theme: the warnings come from reading the sources and resolving references, which every
    # theme shares; furo (the published docs' theme) recomputes its navigation tree for each of the ~130 pages,
    # which took 19 of the build's 44 s on a 2-core machine
    cmd = [sys.executable, "-m", "sphinx", "-n", "-N", "-q", "-b", "html", "-D", "html_theme=basic",
           str(ROOT / "docs"), str(out)]
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stdout}\n{result.stderr}"
    prefix = str(ROOT) + os.sep
    warnings = [line.replace(prefix, "") for line in result.stderr.splitlines()
                if re.search(r"\b(WARNING|ERROR|CRITICAL|SEVERE)\b", line)]
    return out, warnings, result.stderr


def test_docs_build_nitpicky_without_new_warnings(build):
    out, warnings, stderr = build
    unexpected = [w for w in warnings if not any(re.search(rx, w) for _, rx in ALLOWED)]
    assert not unexpected, "new Sphinx warnings (nitpicky build):\n" + "\n".join(unexpected)
    assert (out / "guide" / "algebra.html").is_file()
    assert (out / "api.html").is_file()


def test_allowlist_only_shrinks(build):
    _, warnings, _ = build
    gone = [f"{owner}: {rx}" for owner, rx in ALLOWED if not any(re.search(rx, w) for w in warnings)]
    assert not gone, ("these allowed warnings no longer appear; remove their entries from ALLOWED "
                      "in tests/test_docs.py:\n" + "\n".join(gone))


def test_api_reference_has_the_analysis_sections(build):
    out, _, _ = build
    api = (out / "api.html").read_text(encoding="utf-8")
    missing = [name for name, anchor in SECTIONS.items() if f'id="{anchor}"' not in api]
    assert not missing, f"docs/api.md documents no {missing}"
