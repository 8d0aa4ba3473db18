"""Docstring examples: every ``>>>`` example in the package runs and passes, there are
plenty of them, and every public function / class exported by ``cute_py`` shows one."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import cute_py
import cute_py.layouts

MIN_EXAMPLES = 500  # guard: 541 docstring examples across the package when this was set


def _modules():
    """Every module of the package (runtime examples that need CUDA are marked +SKIP there)."""
    names = ["cute_py"]
    names += [m.name for m in pkgutil.walk_packages(cute_py.__path__, "cute_py.") if m.name != "cute_py.__main__"]
    return [importlib.import_module(n) for n in names]


MODULES = _modules()


def _tests(module):
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module) if t.examples]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_doctests_pass(module):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = []
    for t in _tests(module):
        runner.run(t, out=out.append)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} doctest examples failed in {module.__name__}:\n" + "".join(out)


def test_enough_doctest_examples():
    seen = set()
    count = 0
    for m in MODULES:
        for t in _tests(m):
            key = (t.name, t.filename, t.lineno)
            if key in seen:
                continue
            seen.add(key)
            count += len(t.examples)
    assert count >= MIN_EXAMPLES, f"only {count} doctest examples"


def _public_callables():
    out = []
    for name in cute_py.__all__:
        obj = getattr(cute_py, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            out.append((name, obj))
    return out


def test_every_public_function_and_class_has_an_example():
    missing = [name for name, obj in _public_callables() if ">>>" not in (inspect.getdoc(obj) or "")]
    assert not missing, f"public names without a '>>>' example in their docstring: {missing}"


@pytest.mark.parametrize("name, obj", _public_callables(), ids=[n for n, _o in _public_callables()])
def test_public_name_has_docstring(name, obj):
    assert (inspect.getdoc(obj) or "").strip(), f"{name} has no docstring"
