"""Every dotted ``cute_py.…`` name that README.md, docs/**/*.md and the package's docstrings use resolves.

A name resolves the way Python evaluates it after ``import cute_py.x.y``: the
longest importable module prefix is imported (for its side effects), then the
attributes are walked from the ``cute_py`` package itself. So a function that
shadows its module (``cute_py.gemm`` the function over ``cute_py.gemm`` the
module) makes ``cute_py.gemm.pick_spec`` fail here as it fails for a user,
although ``importlib.import_module("cute_py.gemm")`` would find the module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import cute_py

ROOT = Path(__file__).resolve().parent.parent

NAME = re.compile(r"(?<![\w.])cute_py(?:\.[A-Za-z_]\w*)+(?![\w{])")
"""A dotted name starting at ``cute_py``; not one followed by ``{`` (an f-string template such as
``cute_py.viz.to_{fmt}``, which is not a name)."""

ILLUSTRATIVE: dict = {}
"""name -> why it is written although it does not resolve (intentionally illustrative). Empty: none is."""


def docstrings(path: Path) -> list:
    """The module, class and function docstrings of one source file."""
    tree = ast.parse(path.read_text())
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    out = [ast.get_docstring(n, clean=False) for n in nodes]
    # attribute docstrings: a string statement right after an assignment (as Sphinx reads them)
    for n in ast.walk(tree):
        body = getattr(n, "body", None)
        if isinstance(body, list):
            out += [b.value.value for a, b in zip(body, body[1:])
                    if isinstance(a, (ast.Assign, ast.AnnAssign)) and isinstance(b, ast.Expr)
                    and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)]
    return [d for d in out if d]


def texts() -> dict:
    """source (file, relative to the repository) -> the texts whose names must resolve."""
    out = {"README.md": [(ROOT / "README.md").read_text()]}
    for p in sorted((ROOT / "docs").rglob("*.md")):
        out[str(p.relative_to(ROOT))] = [p.read_text()]
    for p in sorted((ROOT / "cute_py").rglob("*.py")):
        out[str(p.relative_to(ROOT))] = docstrings(p)
    return out


def names_in(text: str) -> set:
    return {m.group(0) for m in NAME.finditer(text)}


def used_names() -> dict:
    """dotted name -> the files that use it."""
    found: dict = {}
    for source, parts in texts().items():
        for text in parts:
            for name in names_in(text):
                found.setdefault(name, set()).add(source)
    return found


def resolve(name: str):
    """The object ``name`` denotes, as ``import <longest module prefix>; <name>`` evaluates it (AttributeError if
    it does not resolve)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
    obj = cute_py
    for j, p in enumerate(parts[1:], 1):
        if not hasattr(obj, p):
            raise AttributeError(f"{'.'.join(parts[:j])} is {type(obj).__name__} {obj!r:.60}, which has no "
                                 f"attribute {p!r}")
        obj = getattr(obj, p)
    return obj


USED = used_names()


def test_the_extraction_sees_the_docs():
    """Guard against an extractor that finds nothing (a test that cannot fail): the README's and docs' names are
    read, from docstrings too, and the template and the trailing dot are left out."""
    assert len(USED) > 150
    assert "cute_py.GemmInputError" in USED and "README.md" in USED["cute_py.GemmInputError"]
    assert any(s.startswith("cute_py/") for s in USED.get("cute_py.autotune.AutotuneError", ()))
    assert names_in("see cute_py.viz.to_{fmt} and cute_py.tuned.clear_cache(). Also cute_py.gemm.") == {
        "cute_py.viz", "cute_py.tuned.clear_cache", "cute_py.gemm"}             # the template's package only


def test_resolve_walks_from_the_package():
    """A function shadowing its module is caught although import_module would find the module."""
    with pytest.raises(AttributeError):
        resolve("cute_py.layouts.recast.upcast")           # cute_py.layouts.recast is the Tensor function
    assert importlib.import_module("cute_py.layouts.recast").upcast   # ... though its module has upcast


@pytest.mark.parametrize("name", sorted(USED), ids=str)
def test_name_resolves(name):
    if name in ILLUSTRATIVE:
        pytest.skip(ILLUSTRATIVE[name])
    try:
        resolve(name)
    except AttributeError as e:
        pytest.fail(f"{name} (used in {', '.join(sorted(USED[name]))}) does not resolve: {e}")


def test_gemm_and_autotune_are_their_modules_and_callable():
    import cute_py.gemm as g
    import cute_py.autotune as at
    from cute_py import gemm
    assert inspect.ismodule(g) and g is cute_py.gemm is gemm and callable(gemm)
    assert inspect.ismodule(at) and at is cute_py.autotune and callable(at)
    assert cute_py.gemm.GemmInputError is cute_py.GemmInputError and callable(cute_py.gemm.pick_spec)
    assert inspect.signature(cute_py.gemm) == inspect.signature(cute_py.gemm.gemm)
    for name in ("clear_cache", "lookup", "record", "cache_path", "problem_key", "TOLERANCE", "AutotuneError"):
        assert hasattr(cute_py.autotune, name), name
    np = pytest.importorskip("numpy")
    with pytest.raises(cute_py.GemmInputError, match="CPU device"):      # the call reaches gemm.gemm
        gemm(np.ones((64, 64)), np.ones((64, 64)))
    with pytest.raises(cute_py.AutotuneError, match="positive int"):    # ... and autotune's own checks
        cute_py.autotune.candidate_specs(0, 1, 1, cute_py.emit.GemmSpec())


def _error_classes():
    out = []
    for m in pkgutil.walk_packages(cute_py.__path__, "cute_py."):
        if m.name.endswith("__main__") or m.name.startswith("cute_py.torch"):
            continue
        mod = importlib.import_module(m.name)
        out += [(k, v) for k, v in vars(mod).items() if inspect.isclass(v) and issubclass(v, Exception)
                and v.__module__ == m.name and not k.startswith("_")]
    return out


NOT_EXPORTED = {"CliError": "the CLI's own exit signal (message + exit code), caught in cute_py.cli.main"}


def test_every_error_class_is_importable_from_cute_py():
    errors = _error_classes()
    assert len(errors) >= 20
    missing = [f"{v.__module__}.{k}" for k, v in errors if k not in NOT_EXPORTED and getattr(cute_py, k, None) is not v]
    assert not missing, f"error classes not importable from cute_py: {missing}"
    assert all(k in cute_py.__all__ for k in cute_py.ERRORS)
