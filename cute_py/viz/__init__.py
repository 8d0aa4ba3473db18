"""Seeing layouts: text tables, SVG, LaTeX/TikZ and HTML pictures of layouts, swizzles, atoms and tilings.

Pure Python (no matplotlib, no TeX, no GPU). Every function returns a string
and prints nothing, except the ``print_*`` functions; :func:`save` is the
only one that writes a file. Importing this package (``import cute_py`` does)
gives Layout, ComposedLayout, Swizzle, Tensor, the atoms and the tilings
``_repr_svg_``/``_repr_html_`` hooks, so notebooks draw them.

* :func:`print_layout` / :func:`to_text`: CuTe's ``print_layout`` table
  (``str()`` for atoms and tilings); :func:`print_tensor`.
* :func:`to_svg`: layouts (colored by offset or by bank), TV layouts, MMA
  and copy pictures, swizzle grids; big pictures collapse to a window.
* :func:`to_latex`: CuTe's ``print_latex`` / ``print_latex_tv`` /
  ``print_latex_mma`` / ``print_latex_copy`` TikZ documents.
* :func:`to_html`: the SVG with a caption, for notebooks.
* :func:`explore`: an interactive explorer widget (the ``explore`` extra);
  :func:`explore_html`: the same explorer as one offline HTML page.

>>> import cute_py
>>> from cute_py.viz import to_text
>>> to_text(cute_py.Layout((2, 2))).splitlines()[0]
'(2,2):(1,2)'
"""

from .display import save
from .html import to_html
from .latex import to_latex
from .svg import to_svg
from .text import print_layout, print_tensor, to_text

__all__ = ["print_layout", "print_tensor", "to_text", "to_svg", "to_latex", "to_html", "save"]

# --- analysis views (banks, coalescing, explain) are exported below this line ---
from .banks import (  # noqa: E402
    BankConflictReport, BankMap, SwizzleComparison, SwizzleSuggestion, bank_conflicts, bank_map,
    compare_swizzle, suggest_swizzle,
)
from .coalesce import CoalescingReport, coalescing  # noqa: E402
from .explain import Explanation, explain  # noqa: E402
from .walk import TileWalk, tile_walk, tile_walk_svg  # noqa: E402
from .explorer import explore, explore_html  # noqa: E402 - anywidget is imported by explore() only

__all__ += ["bank_map", "bank_conflicts", "compare_swizzle", "suggest_swizzle", "BankMap", "BankConflictReport",
            "SwizzleComparison", "SwizzleSuggestion", "coalescing", "CoalescingReport", "explain", "Explanation",
            "tile_walk", "tile_walk_svg", "TileWalk", "explore", "explore_html"]
