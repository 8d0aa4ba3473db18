"""Sphinx configuration for the cute_py docs (Markdown via myst-parser)."""

import importlib.util
import os
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
nitpicky = False

html_theme = "furo" if importlib.util.find_spec("furo") else "alabaster"
html_title = "cute_py"
