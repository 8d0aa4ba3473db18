"""Put tests/ on sys.path so test modules can ``from strategies import ...``, make hypothesis deterministic, and
give the NVRTC tests one kernel cache.

Hypothesis profiles (pick one with ``HYPOTHESIS_PROFILE=NAME`` or ``pytest --hypothesis-profile=NAME``):

``ci``, the default
    ``derandomize=True``, no example database: every run, CI included, draws the same examples, so a test that
    passes once passes every time. Each property test asks for the examples its law needs
    (``@settings(max_examples=...)``), chosen so that the whole suite runs in minutes.
``deep``
    As ``ci``, with :data:`DEEP_FACTOR` times each test's examples: the long run, for a schedule (nightly CI)
    or before a release. ``HYPOTHESIS_PROFILE=deep pytest -n auto``.
``explore``
    Fresh random examples each run (``derandomize=False``). A failure found this way (or by ``deep``) is a bug
    to fix and then to pin with an ``@example``.

The tests listed in :data:`SLOW` are marked ``slow``: ``pytest -m "not slow"`` is the quick subset to iterate with
(everything but the docs build, the notebooks, the browser tests, the NVRTC compiles and the CLI fuzzing).

Under pytest-xdist (``pytest -n auto``) each worker runs whole test files (a file's tests share module state: the
docs build, the fuzz harness's counts), the files of :data:`SLOW` first, so that no long file starts last.
"""

import os
import sys

import pytest
from hypothesis import is_hypothesis_test, settings

# The processes the suite starts (xdist workers, notebook kernels, Sphinx, the CLI and import-graph runs) import
# cute_py from source: where PYTHONDONTWRITEBYTECODE is set (as on the CI machine), each compiled every module it
# imports again. The suite caches bytecode for them (in __pycache__, which git ignores).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

DEEP_FACTOR = 20
"""How many times its ``ci`` examples each property test runs under the ``deep`` profile."""

CI_EXAMPLES = 50
"""The examples of a property test that names no count of its own (hypothesis's default is 100)."""

settings.register_profile("ci", derandomize=True, database=None, max_examples=CI_EXAMPLES)
settings.register_profile("deep", derandomize=True, database=None, max_examples=CI_EXAMPLES)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


SLOW = {
    "tests/test_docs.py": "builds the docs with Sphinx",
    "tests/test_fuzz_api.py::test_cli": "starts a process per generated command line",
    "tests/test_emit_compile.py::test_compiles_without_spills": "compiles kernels with NVRTC",
    "tests/test_emit_compile.py::test_whole_tile_promotion_compiles_without_spills": "compiles kernels with NVRTC",
    "tests/test_feature_pairs.py::test_composing_pair_compiles_without_spills": "compiles kernels with NVRTC",
    "tests/test_notebooks.py": "executes every notebook in a Jupyter kernel",
    "tests/test_explore_browser.py": "drives a headless Chromium",
    "tests/test_runtime_compile.py::test_gpu_test_kernels_compile": "compiles kernels with NVRTC",
    "tests/test_emit_pins.py::test_compiled_facts_are_pinned": "compiles kernels with NVRTC",
}
"""The slow tests (a file, or a test function with all its parameters) -> what makes them slow; their files
longest first (the order xdist workers start them in)."""


def pytest_collection_modifyitems(items):
    """Mark the tests of :data:`SLOW` ``slow``; under the ``deep`` profile, multiply each property test's
    ``max_examples`` by :data:`DEEP_FACTOR`; in an xdist worker, put the files of :data:`SLOW` first.

    The tests set their counts with ``@settings(max_examples=n)``, which a profile cannot override, so the factor
    goes onto the settings hypothesis reads when the test runs (the attribute where ``@settings`` puts them).
    """
    deep = settings.get_current_profile_name() == "deep"
    scaled = set()
    for item in items:
        if item.nodeid.split("[")[0] in SLOW or _file(item) in SLOW:
            item.add_marker(pytest.mark.slow)
        test = getattr(item, "obj", None)
        if deep and is_hypothesis_test(test) and id(test) not in scaled:
            scaled.add(id(test))
            own = test._hypothesis_internal_use_settings
            test._hypothesis_internal_use_settings = settings(own, max_examples=own.max_examples * DEEP_FACTOR)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        first = list(dict.fromkeys(key.split("::")[0] for key in SLOW))
        items.sort(key=lambda item: first.index(_file(item)) if _file(item) in first else len(first))


def _file(item) -> str:
    return item.nodeid.split("::")[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``-n`` alone (``--dist load``) hands out whole files, in the order of the collection (slow files first)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False
    return LoadFileScheduling(config, log)


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory):
    """A compile cache shared by the tests that compile generated kernels (never the user's): a kernel that two
    tests compile (the same source, name and options) is compiled once. A hit returns the cubin, log and ptxas
    report of the miss that stored it, so what the tests check is the same. Under pytest-xdist the workers share
    it (entries are written atomically)."""
    root = tmp_path_factory.getbasetemp()
    return (root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root) / "kernel-cache"
