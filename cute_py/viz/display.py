"""Notebook display hooks and :func:`save`, the one function of ``cute_py.viz`` that writes files.

Importing ``cute_py.viz`` (which ``import cute_py`` does, at the end of
``cute_py/__init__.py``) sets ``_repr_svg_`` and ``_repr_html_`` on Layout,
ComposedLayout, Swizzle, Tensor, MMAAtom, CopyAtom, TiledMMA and TiledCopy, so
a notebook cell that ends with one of them shows its picture with no extra
call. The layers below (``cute_py.layouts``, ``cute_py.atoms``) never import
``cute_py.viz``: the hooks are attached from above, with ``setattr`` on the
classes. Frontends that take HTML show the SVG with the object's text as a
caption; a hook returns ``None`` (the frontend then shows the text) when the
object cannot be drawn, e.g. a TV layout that leaves its tile or a composed
layout whose function fails on its domain. Rendering never prints or writes.

>>> from cute_py.layouts import Layout
>>> Layout((2, 2))._repr_svg_().startswith("<svg")
True
"""

from __future__ import annotations

import os
import pathlib

from .html import to_html
from .latex import to_latex
from .svg import _esc, to_svg
from .text import to_text

__all__ = ["save", "install", "FORMATS"]

#: file extension -> format name understood by :func:`save`.
FORMATS = {".svg": "svg", ".html": "html", ".htm": "html", ".tex": "tex", ".txt": "txt"}
_ALIASES = {"svg": "svg", "html": "html", "tex": "tex", "latex": "tex", "txt": "txt", "text": "txt"}


def _repr_svg_(self):
    """The SVG picture of this object (``cute_py.viz.to_svg``), or ``None`` if it cannot be drawn."""
    try:
        return to_svg(self)
    except Exception:  # noqa: BLE001 - a display hook must never break the notebook
        return None


def _repr_html_(self):
    """The picture with a caption (``cute_py.viz.to_html``), or ``None`` if it cannot be drawn."""
    try:
        return to_html(self)
    except Exception:  # noqa: BLE001
        return None


def _classes() -> list:
    from ..atoms import CopyAtom, MMAAtom, TiledCopy, TiledMMA
    from ..layouts import ComposedLayout, Layout, Swizzle

    classes = [Layout, ComposedLayout, Swizzle, MMAAtom, CopyAtom, TiledMMA, TiledCopy]
    try:
        from ..layouts.tensor import Tensor
    except ImportError:  # pragma: no cover - tensor.py is part of the layouts layer
        Tensor = None
    if Tensor is not None:
        classes.append(Tensor)
    return classes


def install() -> list:
    """Set ``_repr_svg_`` and ``_repr_html_`` on the drawable classes; returns them (idempotent).

    >>> from cute_py.layouts import Swizzle
    >>> Swizzle in install() and callable(Swizzle._repr_html_)
    True
    """
    classes = _classes()
    for cls in classes:
        setattr(cls, "_repr_svg_", _repr_svg_)
        setattr(cls, "_repr_html_", _repr_html_)
    return classes


def _html_document(obj, **options) -> str:
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{_esc(str(obj).splitlines()[0] if str(obj) else 'cute_py')}</title></head>\n"
            f"<body>\n{to_html(obj, **options)}\n</body></html>\n")


def save(obj, path, format=None, **options) -> pathlib.Path:  # noqa: A002 - the natural name
    """Write a picture or text of ``obj`` to ``path``; the format comes from the extension.

    ``.svg`` (:func:`~cute_py.viz.to_svg`), ``.html``/``.htm`` (a small
    document around :func:`~cute_py.viz.to_html`), ``.tex``
    (:func:`~cute_py.viz.to_latex`), ``.txt`` (:func:`~cute_py.viz.to_text`);
    ``format`` (``"svg"``, ``"html"``, ``"tex"``/``"latex"``, ``"txt"``/``"text"``)
    overrides the extension. ``options`` go to the renderer (``color``,
    ``collapse``, ``dtype``, ``tile``). Writes UTF-8, replacing any existing
    file; returns the path. Raises ValueError for an unknown format.

    >>> import tempfile, os
    >>> from cute_py.layouts import Layout
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = save(Layout((2, 2)), os.path.join(d, "l.txt"))
    ...     print(p.read_text().splitlines()[0])
    (2,2):(1,2)
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"save: path must be a str or os.PathLike, got {type(path).__name__}")
    p = pathlib.Path(os.fspath(path))
    if format is None:
        fmt = FORMATS.get(p.suffix.lower())
        if fmt is None:
            raise ValueError(f"save: cannot tell the format of {str(p)!r} from its extension; use one of "
                             f"{', '.join(sorted(FORMATS))} or pass format=")
    else:
        fmt = _ALIASES.get(str(format).lower())
        if fmt is None:
            raise ValueError(f"save: unknown format {format!r}; expected one of {', '.join(sorted(_ALIASES))}")
    if fmt == "svg":
        text = to_svg(obj, **options)
    elif fmt == "html":
        text = _html_document(obj, **options)
    elif fmt == "tex":
        text = to_latex(obj, **options)
    else:
        if options:
            raise TypeError(f"save: text output takes no options, got {sorted(options)}")
        text = to_text(obj)
    p.write_text(text, encoding="utf-8")
    return p


install()
