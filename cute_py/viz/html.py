"""HTML snippets for notebooks: the SVG picture with the object's text as a caption.

:func:`to_html` returns a ``<figure class="cutepy-figure">`` holding the SVG of
:func:`cute_py.viz.to_svg` (in a scrolling ``<div>``, so a wide picture never
widens the page) and a ``<figcaption>`` with the object's text: ``str(obj)``
and, for layouts of at most 32 columns and 1024 cells, CuTe's print_layout
table in a collapsed ``<details>``; for atoms and tilings their ``str()``.

>>> html = to_html(Layout((2, 2)))
>>> html.startswith('<figure class="cutepy-figure"') and "<svg" in html and "(2,2):(1,2)" in html
True
"""

from __future__ import annotations

from ..layouts import Layout  # noqa: F401 - used by the doctests
from .svg import _esc, _kind, to_svg
from .text import to_text
from ..layouts.errors import names_caller

__all__ = ["to_html"]

_TABLE_CELLS = 1024
_TABLE_COLS = 32


def _caption(obj) -> str:
    if _kind(obj) != "grid":
        return f'<pre style="margin:0.3em 0;font-size:12px">{_esc(str(obj).rstrip())}</pre>'
    head = f'<code>{_esc(str(obj))}</code>'
    shape = getattr(obj, "shape", None)
    if getattr(obj, "_is_tensor", False) or shape is None:
        return head
    from ..layouts import int_tuple as it

    try:
        size = it.product(shape)
        cols = size // it.product(shape[0]) if it.rank(shape) > 1 else size
    except Exception:  # noqa: BLE001 - a caption never fails the picture
        return head
    if size > _TABLE_CELLS or cols > _TABLE_COLS:
        return head
    table = _esc(to_text(obj).rstrip("\n"))
    return (head + '<details><summary style="cursor:pointer;font-size:12px">print_layout</summary>'
            f'<pre style="margin:0.3em 0;font-size:12px;line-height:1.15">{table}</pre></details>')


@names_caller
def to_html(obj, **svg_options) -> str:
    """An HTML snippet: ``to_svg(obj, **svg_options)`` in a figure captioned with the object's text.

    ``svg_options`` are :func:`cute_py.viz.to_svg`'s (``color``, ``collapse``,
    ``dtype``, ``tile``). A Swizzle's caption is ``str(swizzle)``. Nothing is
    printed or written.

    >>> snippet = to_html(Layout(4))
    >>> snippet.count("<figure"), snippet.count("</figure>"), "print_layout" in snippet
    (1, 1, True)
    """
    svg = to_svg(obj, **svg_options)
    return ('<figure class="cutepy-figure" style="margin:0.5em 0">'
            f'<div style="overflow:auto;max-width:100%">{svg}</div>'
            f'<figcaption style="font-size:12px">{_caption(obj)}</figcaption></figure>')
