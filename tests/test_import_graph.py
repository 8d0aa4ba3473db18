"""The package's import graph: no circles, no upward imports between layers, no sympy at ``import cute_py``.

The graph is read from the source with :mod:`ast`, not by importing: every
``import`` and ``from ... import`` statement of every module of ``cute_py/``,
at module level and inside functions alike (a function-level import is a
dependency that is only deferred, and a circle through one is still a
circle). Relative imports are resolved against the importing module's
package; ``from X import name`` is an edge to ``X.name`` when that is a
module of the package (``from . import int_tuple``), else to ``X`` (a name
defined by ``X`` or its ``__init__``). Importing ``a.b.c`` also runs the
``__init__`` of ``a`` and ``a.b``; those implicit parent edges are not drawn
(every submodule would otherwise be in a circle with its own package).

The layers (DESIGN.md, "Layers"), lowest first; an import may only point to
the importer's own layer or one listed under it::

    layouts   the algebra                        imports: layouts
    atoms     MMA / copy atoms, tilings          imports: layouts, atoms
    arch      Hopper facts (arch/sm90)           imports: layouts, atoms, arch
    emit      GemmSpec -> CUDA C++ text          imports: layouts, atoms, arch, emit
    viz       pictures and reports, on the side  imports: layouts, atoms, arch, viz
    runtime   NVRTC, driver, arrays, tensor maps imports: runtime
    (every layer may also import the base leaves cute_py.dtypes and cute_py._version)
    product   cute_py/__init__ and cute_py/*.py  imports: everything
              (gemm, autotune, cli*, interop, problem, ...; cute_py/torch/ when it appears)

So nothing in layouts/atoms/arch/emit/runtime imports viz (viz is drawn
on top of the layers it reads, and ``import cute_py`` attaches its
``_repr_*`` hooks); runtime takes ints and buffers, not Layouts (it shares
only the element-type table ``DType``, a leaf at the package's base, with
the rest of the package); and product
modules may import anything below them, but not each other in a circle.

Known violations that someone is removing right now are listed in
:data:`KNOWN_CYCLE_EDGES` and :data:`KNOWN_UPWARD_IMPORTS`, each naming who
removes it. The tests fail on any violation not listed, and on any listed
one that no longer exists, so the lists only shrink.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "cute_py"

# ---------------------------------------------------------------------------
# The layer map

BASE = {"dtypes", "_version"}
"""Leaf modules at the package's base (they import nothing of cute_py): every layer may import them. The
element-type table is one: runtime's ``DeviceArray.dtype`` is the same :class:`~cute_py.dtypes.DType` value
that TmaParams and GemmSpec carry, without runtime importing the algebra."""

LAYER_IMPORTS = {
    "base": {"base"},
    "layouts": {"base", "layouts"},
    "atoms": {"base", "layouts", "atoms"},
    "arch": {"base", "layouts", "atoms", "arch"},
    "emit": {"base", "layouts", "atoms", "arch", "emit"},
    "viz": {"base", "layouts", "atoms", "arch", "viz"},
    "runtime": {"base", "runtime"},
    "product": {"base", "layouts", "atoms", "arch", "emit", "viz", "runtime", "product"},
}
"""layer -> the layers its modules may import (see the module docstring)."""


def layer_of(name: str) -> str:
    """The layer of a module, by its name relative to the root package ('' for the root itself)."""
    if name in BASE:
        return "base"
    head = name.split(".")[0]
    return head if head in LAYER_IMPORTS and head not in ("product", "base") else "product"


# ---------------------------------------------------------------------------
# Known violations (each entry: who removes it). Names are relative to ``cute_py`` ("cute_py" is the root
# package's __init__). Remove an entry when its import goes: the tests fail on a stale entry.

KNOWN_CYCLE_EDGES: dict = {
    # empty: the last 12-module circle inside layouts/ went with issue 16 (one algebra core, decide.py,
    # swizzle.py holding ComposedLayout, Layout's convenience methods bound through layout.ALGEBRA)
}
"""``"a -> b"``: an import of ``b`` by ``a`` that lies on a circle, and who removes it."""

KNOWN_UPWARD_IMPORTS: dict = {
    # empty: the last entry, "emit.plan -> viz.banks", went when the bank analysis moved to arch/sm90 (issue 15)
}
"""``"a -> b"``: an import against the layer order, and who removes it."""


# ---------------------------------------------------------------------------
# Reading the graph


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``importer`` imports ``target`` (both full dotted names)."""

    importer: str
    target: str
    path: str          # the importer's file, relative to the package's parent
    line: int
    text: str          # the statement, on one line
    toplevel: bool     # False: inside a function (runs on the first call)

    def where(self) -> str:
        return f"{self.path}:{self.line}  {self.text}" + ("" if self.toplevel else "   (in a function)")


def modules(root: Path) -> dict:
    """Full dotted name -> file, for every ``.py`` file of the package at ``root``."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


class _Visitor(ast.NodeVisitor):
    def __init__(self):
        self.found = []       # (node, toplevel)
        self.depth = 0

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        self.found.append((node, self.depth == 0))

    visit_ImportFrom = visit_Import


def _segment(lines: list, node: ast.stmt) -> str:
    """``ast.get_source_segment`` over the lines of a file split once (it splits the whole file per call, which
    made reading the package take seconds)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset:node.end_col_offset].decode()
    return "".join([lines[first].encode()[node.col_offset:].decode(), *lines[first + 1:last],
                    lines[last].encode()[:node.end_col_offset].decode()])


def imports_of(name: str, path: Path, known: dict) -> list:
    """Every import statement of module ``name`` (file ``path``) as :class:`Import` edges, external ones included
    (``target`` is then the imported module's name, e.g. ``sympy``)."""
    src = path.read_text()
    lines = src.splitlines(keepends=True)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    v = _Visitor()
    v.visit(ast.parse(src, str(path)))
    rel = str(path.relative_to(path.parents[len(name.split(".")) - (path.name != "__init__.py")]))
    out = []
    for node, top in v.found:
        text = " ".join(_segment(lines, node).split())
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            if node.level:
                parts = package.split(".")
                if node.level - 1 > len(parts) - 1:
                    raise ValueError(f"{rel}:{node.lineno}: relative import beyond the top-level package")
                base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in dict.fromkeys(targets):
            out.append(Import(name, t, rel, node.lineno, text, top))
    return out


def import_graph(root: Path = PACKAGE) -> dict:
    """Full dotted name -> its :class:`Import` edges to modules of the same package."""
    known = modules(root)
    return {m: [e for e in imports_of(m, p, known) if e.target in known] for m, p in known.items()}


def strongly_connected(graph: dict) -> list:
    """The circles of ``graph``: its strongly connected components of more than one module (or a module that
    imports itself), as sets (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, edges = work[-1]
            for e in edges:
                w = e.target
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1 or any(e.target == v for e in graph[v]):
                        out.append(comp)
    return out


def short(name: str, root: str = "cute_py") -> str:
    """``cute_py.layouts.tensor`` -> ``layouts.tensor``; the root package stays ``cute_py``."""
    return name[len(root) + 1:] if name.startswith(root + ".") else name


def cycle_edges(graph: dict) -> dict:
    """``"a -> b"`` (short names) -> the :class:`Import` statements of every edge that lies on a circle."""
    out = {}
    for comp in strongly_connected(graph):
        for m in comp:
            for e in graph[m]:
                if e.target in comp:
                    out.setdefault(f"{short(m)} -> {short(e.target)}", []).append(e)
    return out


def upward_imports(graph: dict, root: str = "cute_py") -> dict:
    """``"a -> b"`` (short names) -> the :class:`Import` statements that point against the layer order."""
    out = {}
    for m, edges in graph.items():
        src = short(m, root) if m != root else ""
        layer = layer_of(src)
        for e in edges:
            dst = short(e.target, root) if e.target != root else ""
            if layer_of(dst) in LAYER_IMPORTS[layer]:
                continue
            out.setdefault(f"{short(m, root)} -> {short(e.target, root)}", []).append(e)
    return out


def explain_cycle(graph: dict, first: Import) -> str:
    """The circle through the edge ``first`` as a path ``a -> b -> ... -> a``, each hop with its file:line."""
    start, goal = first.target, first.importer
    prev = {start: None}
    queue = deque([start])
    while queue and goal not in prev:
        v = queue.popleft()
        for e in graph[v]:
            if e.target not in prev:
                prev[e.target] = e
                queue.append(e.target)
    hops, v = [], goal
    while prev.get(v) is not None:
        hops.append(prev[v])
        v = prev[v].importer
    hops = [first] + hops[::-1]
    path = " -> ".join([short(first.importer)] + [short(e.target) for e in hops])
    return path + "".join(f"\n      {e.where()}" for e in hops)


# ---------------------------------------------------------------------------
# The package's graph


GRAPH = import_graph()


def test_graph_reads_the_package():
    """Guards the reader itself: module-level, function-level, ``from . import x`` and ``from .. import x`` edges."""
    assert len(GRAPH) > 50
    edges = {(e.importer, e.target, e.toplevel) for es in GRAPH.values() for e in es}
    assert ("cute_py.atoms.copy", "cute_py.layouts", True) in edges                  # from ..layouts import Layout
    assert ("cute_py.layouts.algebra", "cute_py.layouts.int_tuple", True) in edges   # from . import int_tuple as it
    assert ("cute_py.viz.explain", "cute_py.layouts", True) in edges                 # from .. import layouts as L
    assert ("cute_py.viz._grid", "cute_py.atoms", False) in edges                    # in a function
    assert ("cute_py", "cute_py.viz", True) in edges
    assert all(e.target in GRAPH for es in GRAPH.values() for e in es)


def _fake_package(tmp_path: Path) -> Path:
    files = {
        "__init__.py": "from .layouts import a\n",
        "layouts/__init__.py": "from .a import f\n",
        "layouts/a.py": "from . import b\n\ndef f():\n    pass\n",
        "layouts/b.py": "def g():\n    from .a import f\n    from ..viz import draw\n    import pkg.runtime\n",
        "viz/__init__.py": "def draw():\n    pass\n",
        "runtime/__init__.py": "",
        "runtime/arrays.py": "from ..dtypes import T\nfrom ..layouts import f\nimport sympy\n",
        "dtypes.py": "T = 1\n",
    }
    for rel, text in files.items():
        p = tmp_path / "pkg" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / "pkg"


def test_reader_finds_circles_and_upward_imports(tmp_path):
    """The checks can fail: a synthetic package with one circle (through a function-level import), one upward
    import to viz, one to runtime, and runtime reaching into layouts (the base dtype table is allowed)."""
    graph = import_graph(_fake_package(tmp_path))
    assert strongly_connected(graph) == [{"pkg.layouts.a", "pkg.layouts.b"}]
    cyc = cycle_edges(graph)
    assert sorted(cyc) == ["pkg.layouts.a -> pkg.layouts.b", "pkg.layouts.b -> pkg.layouts.a"]
    text = explain_cycle(graph, cyc["pkg.layouts.b -> pkg.layouts.a"][0])
    assert text.splitlines()[0] == "pkg.layouts.b -> pkg.layouts.a -> pkg.layouts.b"
    assert "pkg/layouts/b.py:2  from .a import f   (in a function)" in text
    assert "pkg/layouts/a.py:1  from . import b" in text
    up = upward_imports(graph, root="pkg")
    assert sorted(up) == ["layouts.b -> runtime", "layouts.b -> viz", "runtime.arrays -> layouts"]
    assert [e.line for e in up["layouts.b -> viz"]] == [3]
    external = [e.target for e in imports_of("pkg.runtime.arrays", tmp_path / "pkg/runtime/arrays.py",
                                             modules(tmp_path / "pkg"))]
    assert external == ["pkg.dtypes", "pkg.layouts", "sympy"]


def _unlisted(found: dict, known: dict) -> dict:
    return {k: v for k, v in sorted(found.items()) if k not in known}


def _stale(found: dict, known: dict) -> list:
    return sorted(k for k in known if k not in found)


def test_no_new_circles():
    new = _unlisted(cycle_edges(GRAPH), KNOWN_CYCLE_EDGES)
    text = "\n".join(f"  {k} is on the circle\n    {explain_cycle(GRAPH, v[0])}" for k, v in new.items())
    assert not new, "new circular imports (a function-level import does not break a circle):\n" + text


def test_known_circles_still_exist():
    """The allowlist only shrinks: an entry whose import is gone (or no longer on a circle) must be removed."""
    stale = _stale(cycle_edges(GRAPH), KNOWN_CYCLE_EDGES)
    assert not stale, f"no longer on a circle; remove from KNOWN_CYCLE_EDGES: {stale}"


def test_no_new_upward_imports():
    new = _unlisted(upward_imports(GRAPH), KNOWN_UPWARD_IMPORTS)
    text = "\n".join(f"  {k} ({layer_of(k.split(' -> ')[0])} may not import {layer_of(k.split(' -> ')[1])}):"
                     + "".join(f"\n      {e.where()}" for e in v) for k, v in new.items())
    assert not new, "imports against the layer order (see this module's docstring):\n" + text


def test_known_upward_imports_still_exist():
    stale = _stale(upward_imports(GRAPH), KNOWN_UPWARD_IMPORTS)
    assert not stale, f"these imports are gone; remove them from KNOWN_UPWARD_IMPORTS: {stale}"


# ---------------------------------------------------------------------------
# A submodule is also an attribute of its package: ``cute_py/select.py``, once imported, replaces the
# function ``cute_py.select`` that ``from .layouts import *`` put there.

KNOWN_SHADOWS: dict = {}
"""Top-level module names that shadow a name ``cute_py`` re-exports from :mod:`cute_py.layouts`."""


def shadowed_names(root: Path = PACKAGE) -> list:
    """Names in ``cute_py.layouts.__all__`` (read from the source) that a top-level module or package of
    ``root`` also has, except the modules that layouts re-exports as modules (``dtypes``, ``int_tuple``)."""
    tree = ast.parse((root / "layouts" / "__init__.py").read_text())
    exported = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and any(getattr(t, "id", None) == "__all__" for t in n.targets))
    top = {p.stem for p in root.glob("*.py")} | {p.parent.name for p in root.glob("*/__init__.py")}
    return sorted(n for n in set(exported) & top if not (root / "layouts" / f"{n}.py").exists())


def test_no_module_shadows_a_reexported_name(tmp_path):
    fake = _fake_package(tmp_path)
    (fake / "layouts" / "__init__.py").write_text('__all__ = ["f", "select", "dtypes"]\n')
    (fake / "select.py").write_text("")
    (fake / "dtypes.py").write_text("")
    (fake / "layouts" / "dtypes.py").write_text("")
    assert shadowed_names(fake) == ["select"]                    # dtypes is layouts' own module, re-exported
    new = [n for n in shadowed_names() if n not in KNOWN_SHADOWS]
    stale = [n for n in KNOWN_SHADOWS if n not in shadowed_names()]
    assert not new, f"top-level modules named like functions that cute_py re-exports from layouts: {new}"
    assert not stale, f"no longer shadowed; remove from KNOWN_SHADOWS: {stale}"


# ---------------------------------------------------------------------------
# What importing costs: no sympy (nor numpy, nor a GPU library) until a symbolic extent or an array needs it.
# Timing belongs in benchmarks; these check which modules get loaded, in a fresh interpreter.

HEAVY = ("sympy", "numpy", "cuda", "torch", "cupy")
_STUB_PARENT = ("import sys, types; p = types.ModuleType('cute_py'); p.__path__ = [{path!r}]; "
                "sys.modules['cute_py'] = p; ")


def _loaded_after(statement: str, stub_parent: bool) -> list:
    """The modules of :data:`HEAVY` that ``statement`` loads, run in a fresh interpreter. With ``stub_parent``,
    ``cute_py`` is an empty namespace, so only the named subpackage and what it imports are measured
    (``import cute_py.layouts`` otherwise runs ``cute_py/__init__``, which imports everything)."""
    pre = _STUB_PARENT.format(path=str(PACKAGE)) if stub_parent else ""
    code = pre + statement + f"; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    if "import sys" not in code:
        code = "import sys; " + code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=PACKAGE.parent, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def sympy_chains(root: str = "cute_py") -> str:
    """Every module-level import chain from ``root`` to an ``import sympy``: for each module that imports sympy
    at module level and that ``root`` reaches through module-level imports, the shortest chain (file:line of
    each hop), chains separated by a blank line; '' if none."""
    known = modules(PACKAGE)
    prev, queue, chains = {root: None}, deque([root]), []
    while queue:
        v = queue.popleft()
        hit = [e for e in imports_of(v, known[v], known) if e.toplevel and e.target.split(".")[0] == "sympy"]
        if hit:
            hops, u = [hit[0]], v
            while prev[u] is not None:
                hops.append(prev[u])
                u = prev[u].importer
            chains.append("\n".join(e.where() for e in reversed(hops)))
        for e in GRAPH[v]:
            if e.toplevel and e.target not in prev:
                prev[e.target] = e
                queue.append(e.target)
    return "\n\n".join(chains)


@pytest.mark.parametrize("package", ["layouts", "atoms", "arch.sm90", "viz", "runtime"])
def test_layers_import_nothing_heavy(package):
    """Each layer below the product imports none of sympy, numpy, cuda, torch, cupy at import time."""
    loaded = _loaded_after(f"import cute_py.{package}", stub_parent=True)
    assert loaded == [], f"import cute_py.{package} loads {loaded}; import them inside the functions that need them"
    assert sympy_chains(f"cute_py.{package}") == ""


_SYMPY_REASON = ("emit/ loads sympy at import (files of the lead and the emit helper): cute_py/__init__.py "
                 "`from .gemm import gemm` -> gemm.py `from .emit import GemmSpec` -> emit/__init__.py "
                 "`from .plan import ...` -> emit/plan.py `import sympy`; and emit/__init__.py `from .cprint import "
                 "to_c` -> emit/cprint.py `import sympy as sp`. Remove the marker when both go (strict: it fails then)")


@pytest.mark.parametrize("statement", ["import cute_py", "import cute_py.layouts"])
def test_import_cute_py_does_not_load_sympy(statement):
    """``import cute_py.layouts`` runs ``cute_py/__init__`` first, so both wait for the same fix."""
    loaded = _loaded_after(statement, stub_parent=False)
    assert "sympy" not in loaded, f"{statement} loads sympy through:\n" + sympy_chains()


# ---------------------------------------------------------------------------
# The product path's own order: arrays -> Problem -> select -> ... -> Launch, then gemm, autotune, the CLI.

PRODUCT_RANKS = {
    "_version": 0, "_callable": 0, "dtypes": 0, "int_tuple": 0, "symbolic": 0, "interop": 0,   # leaves and re-export shims
    "options": 0,                                        # checks of the API's options (a leaf)
    "problem_fields": 0,                                 # the checks of a Problem's fields (a leaf)
    "problem": 1,                                        # the arrays, read once
    "arraylib": 2, "tuned": 2,                           # array libraries; the tuned table
    "selection": 3, "launch": 3,                         # select(problem); the launch (bind happens in emit)
    "gemm": 4,                                           # the path, end to end
    "autotune": 5,                                       # measures through gemm, writes the tuned table
    "problem_groups": 3,                                 # grouped and batched arrays (problem's reader, arraylib)
    "cli_errors": 6, "cli_scaled": 6, "cli_grouped": 7, "cli_draw": 7, "cli_swizzle": 8, "cli_gemm": 8,
    "cli_explore": 8, "cli_autotune": 9, "cli": 10,
    "__main__": 11,
    "torch.ops": 6, "torch.functional": 7, "torch.grouped": 7, "torch.nn": 8, "torch.tune": 8,
    "torch": 9,                                          # the PyTorch operators
    "": 11,                                              # cute_py/__init__: re-exports the product
}
"""Product module -> its rank: a product module imports only product modules of a lower rank (so the path
runs one way: ``launch`` never asks ``tuned``, ``gemm`` never imports ``autotune``)."""


def test_product_modules_import_down_the_path():
    modules = {short(m) if m != "cute_py" else "" for m in GRAPH}
    product = {m for m in modules if layer_of(m) == "product"}
    unranked = sorted(product - set(PRODUCT_RANKS))
    assert not unranked, f"rank these product modules in PRODUCT_RANKS: {unranked}"
    bad = []
    for m, edges in GRAPH.items():
        src = short(m) if m != "cute_py" else ""
        if src not in PRODUCT_RANKS:
            continue
        for e in edges:
            dst = short(e.target) if e.target != "cute_py" else ""
            if dst in PRODUCT_RANKS and PRODUCT_RANKS[dst] >= PRODUCT_RANKS[src]:
                bad.append(f"{src or 'cute_py'} (rank {PRODUCT_RANKS[src]}) -> {dst or 'cute_py'} "
                           f"(rank {PRODUCT_RANKS[dst]}) at {e.importer}:{getattr(e, 'line', '?')}")
    assert not bad, "product imports against the path:\n  " + "\n  ".join(bad)
