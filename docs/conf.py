"""Sphinx configuration for the cute_py docs (Markdown via myst-parser).

The build is nitpicky (every cross-reference must resolve): ``tests/test_docs.py``
builds with ``-n`` and fails on any warning outside its shrinking allowlist.
"""

import importlib
import importlib.util
import inspect
import os
import re
import sys

# Document the source tree even when cute_py is not installed.
sys.path.insert(0, os.path.abspath(".."))

project = "cute_py"
author = "cute_py developers"
copyright = "2026, cute_py developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"

# Every cross-reference must resolve. The build machine has no network, so there
# is no intersphinx: names from the standard library and third-party packages
# that appear in signatures and docstrings are listed here instead.
nitpicky = True
nitpick_ignore = [
    ("py:class", "pathlib.Path"),
    ("py:class", "Path"),
    ("py:class", "os.PathLike"),
    ("py:class", "numpy.ndarray"),
    ("py:class", "np.ndarray"),
    ("py:class", "sympy.Symbol"),
    ("py:class", "sympy.Expr"),
    ("py:class", "ctypes.c_void_p"),
    ("py:class", "collections.abc.Mapping"),
    ("py:class", "collections.abc.Iterable"),
    ("py:class", "collections.abc.Sequence"),
    ("py:class", "collections.abc.Callable"),
    ("py:class", "typing.Any"),
]
nitpick_ignore_regex = [
    # torch's own names in cute_py.torch's signatures (torch.Tensor, torch.nn.Module, torch.dtype, ...)
    (r"py:.*", r"(torch|Tensor|Optional)(\.\w+)*"),
    # Private helpers (``cute_py.viz._grid.Grid`` ...) are not part of the API
    # reference; signatures that mention them still render the name.
    (r"py:.*", r"cute_py(\.\w+)*\._[a-z]\w*(\.\w+)*"),
]

html_theme = "furo" if importlib.util.find_spec("furo") else "alabaster"
html_title = "cute_py"
# _static/figures/ is copied as is: the guide shows its widest pictures at their natural size in a
# scrolling box (raw HTML <img src="../_static/figures/...">), since scaled to the text width they are unreadable.
html_static_path = ["_static"]


# --- cross-references to re-exported names ------------------------------------
#
# The public names are re-exported (``cute_py.Layout``, ``cute_py.runtime.compile``,
# ``cute_py.arch.sm90.make_tma_params``) and docstrings use those short or
# re-exported spellings (``:class:`CompileError``` in cute_py.runtime.nvrtc, which
# imports it). The API reference documents each object once, where it is
# defined. This resolver follows Python's own name lookup: it imports the
# referring module (or the named one), finds the object, and links to the place
# the object is documented. A name Python cannot find stays unresolved, so the
# nitpicky build still catches a misspelt or stale reference.

_PY_TYPES = {"class", "func", "meth", "mod", "data", "attr", "exc", "obj", "const"}


def _lookup(dotted):
    """The object that the dotted name denotes in Python, or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        try:
            obj = importlib.import_module(modname)
        except Exception:
            continue
        try:
            for attr in parts[i:]:
                obj = inspect.getattr_static(obj, attr) if inspect.isclass(obj) else getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _unwrap(obj):
    if isinstance(obj, (staticmethod, classmethod)):
        return obj.__func__
    if isinstance(obj, property):
        return obj.fget
    return obj


def _documented_name(obj, attr_name, objects):
    """Where ``obj`` is documented (a key of the py domain's objects), or None."""
    if inspect.ismodule(obj):
        return obj.__name__ if obj.__name__ in objects else None
    target = _unwrap(obj)
    module = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        name = f"{module}.{qualname}"
        if name in objects:
            return name
    # data (constants, tables): the documented name whose module holds this very object
    for name in objects:
        if name.rsplit(".", 1)[-1] != attr_name:
            continue
        parent = _lookup(name.rsplit(".", 1)[0])
        if parent is not None and inspect.ismodule(parent) and getattr(parent, attr_name, None) is obj:
            return name
    return None


def _resolve_reexport(app, env, node, contnode):
    if node.get("refdomain") != "py" or node.get("reftype") not in _PY_TYPES:
        return None
    target = node.get("reftarget", "")
    if not re.fullmatch(r"[A-Za-z_][\w.]*", target):
        return None
    scopes = []
    module, cls = node.get("py:module"), node.get("py:class")
    if module and cls:
        scopes.append(f"{module}.{cls}")
    if module:
        scopes.append(module)
    scopes.append("")
    domain = env.get_domain("py")
    objects = domain.objects
    from sphinx.util.nodes import make_refnode

    for scope in scopes:
        dotted = f"{scope}.{target}" if scope else target
        if not dotted.startswith("cute_py"):
            continue
        obj = _lookup(dotted)
        if obj is None:
            continue
        name = _documented_name(obj, target.rsplit(".", 1)[-1], objects)
        if name is None:
            continue
        entry = objects[name]
        return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)
    return None


# --- attribute docstrings are prose -------------------------------------------
#
# Napoleon reads the first line of an attribute, property or constant docstring
# as "TYPE: description" (Google style). cute_py's docstrings are prose ("Bytes
# of a staging row: the 128-byte swizzle span"), and the types come from the
# annotations (autodoc_typehints), so the text before a colon would be rendered
# as a bogus type and cross-referenced. Keep the whole docstring as description.


def _prose_attribute(self):
    return "", self.__class__(self._consume_to_end(), self._config).lines()


def setup(app):
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    GoogleDocstring._consume_inline_attribute = _prose_attribute
    app.connect("missing-reference", _resolve_reexport)
    return {"parallel_read_safe": True}
