"""The emitter's place in the layers: it imports no viz, and neither sympy nor numpy at import time (symbolic
layouts come from cute_py.parse, the checks' arrays from numpy, when a spec is planned); the bank analysis it
checks its staging with lives below it (cute_py.arch.sm90.banks)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

EMIT = Path(__file__).resolve().parent.parent / "cute_py" / "emit"


def _imports(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")


def test_no_emit_module_imports_viz_or_sympy_at_all():
    """Not at module level and not in a function: the emitter needs neither (cprint imports sympy in its
    printer, the one place that handles sympy expressions directly)."""
    for path in sorted(EMIT.glob("*.py")):
        names = list(_imports(path))
        assert not [n for n in names if "viz" in n.split(".")], (path.name, names)
        if path.name != "cprint.py":
            assert not [n for n in names if n.split(".")[0] == "sympy"], (path.name, names)


def test_import_emit_loads_neither_sympy_nor_numpy_until_a_spec_is_planned():
    code = ("import sys\nimport cute_py.emit as e\nbefore = [m in sys.modules for m in ('sympy', 'numpy')]\n"
            "e.emit_gemm(e.GemmSpec())\nprint(*before, *[m in sys.modules for m in ('sympy', 'numpy')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=EMIT.parent.parent)
    assert out.stdout.split() == ["False", "False", "True", "True"], out.stderr
