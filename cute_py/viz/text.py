"""Text views: CuTe's ``print_layout`` table, ``print_tensor``, and ``to_text`` for any drawable object.

The table is CuTe's, character for character: the layout on the first line
(``str(layout)``: cute_py prints static integers without CuTe's leading
underscores), a header of column indices ``"  %*d "``, and for each row a
separator ``"+" + "-" * w`` per column and the cells ``"| %*d "`` after a
``"%2d  "`` row label, closed by a last separator; ``w`` is
``num_digits(cosize(layout)) + 2``.

CuTe's ``print_layout`` takes rank 2 only. cute_py also accepts:

* rank 1: one row (the cells of ``layout(n)``);
* rank R > 2: modes ``1..R-1`` folded into the column mode, as
  ``group(layout, 1, R)`` would (column ``n`` is the colexicographic
  coordinate of those modes), so ``cell(m, n) == layout(m + size(mode 0) * n)``;
* swizzled and other composed layouts: drawn through their function, as
  CuTe's ``print_layout`` of a swizzled smem layout
  (``as_position_independent_swizzle_layout``);
* a :class:`~cute_py.layouts.swizzle.Swizzle` ``Sw<B,M,S>``: the composed
  layout ``Sw<B,0,S> o 0 o (2^B,2^|S|):(2^|S|,1)`` on its ``2^M``-element
  chunks (row ``r``, column ``c`` is chunk ``r*2^|S| + c``; the cell holds the
  chunk it is sent to).

>>> print_layout(Layout((2, 3), (3, 1)))  # doctest: +NORMALIZE_WHITESPACE
(2,3):(3,1)
      0   1   2
    +---+---+---+
 0  | 0 | 1 | 2 |
    +---+---+---+
 1  | 3 | 4 | 5 |
    +---+---+---+
"""

from __future__ import annotations

import io
import sys

from ..layouts import Layout  # noqa: F401 - used by the doctests
from ._grid import Grid, layout_grid, num_digits

__all__ = ["print_layout", "print_tensor", "to_text", "layout_table"]


def layout_table(grid: Grid) -> str:
    """CuTe's print_layout table of a :class:`~cute_py.viz._grid.Grid` (ends with a newline).

    >>> from cute_py.viz._grid import layout_grid
    >>> print(layout_table(layout_grid(Layout(3))), end="")  # doctest: +NORMALIZE_WHITESPACE
    3:1
          0   1   2
        +---+---+---+
     0  | 0 | 1 | 2 |
        +---+---+---+
    """
    rows, cols = grid.rows, grid.cols
    block = grid.cells()
    if grid.cosize is not None and grid.tensor is None and block.ints:
        width = num_digits(grid.cosize) + 2
        cells = [f"{v:>{width - 2}d}" for v in block.values]
    else:
        width = max((len(t) for t in block.labels), default=1) + 2
        cells = [f"{t:>{width - 2}}" for t in block.labels]
    sep = "    " + ("+" + "-" * width) * cols + "+"
    out = [grid.title, "    " + "".join(f"  {n:>{width - 2}d} " for n in range(cols))]
    for m in range(rows):
        out.append(sep)
        out.append(f"{m:2d}  " + "".join(f"| {cells[m + rows * n]} " for n in range(cols)) + "|")
    out.append(sep)
    return "\n".join(out) + "\n"


def _is_tv_object(obj) -> bool:
    from ..atoms import CopyAtom, MMAAtom, TiledCopy, TiledMMA

    return isinstance(obj, (MMAAtom, CopyAtom, TiledMMA, TiledCopy))


def to_text(obj) -> str:
    """The text view of ``obj``: CuTe's print_layout table for layouts, ``str()`` for atoms.

    * Layout, ComposedLayout, Swizzle: the table :func:`print_layout` prints
      (see the module docstring for rank 1, rank > 2 and swizzles);
    * Tensor: what :func:`print_tensor` prints (header and elements);
    * MMAAtom, CopyAtom, TiledMMA, TiledCopy: their ``str()`` (CuTe's ``print``).

    Postcondition: the result ends with a newline; nothing is printed.

    >>> print(to_text(Layout((2, 2), (1, 2))), end="")  # doctest: +NORMALIZE_WHITESPACE
    (2,2):(1,2)
          0   1
        +---+---+
     0  | 0 | 2 |
        +---+---+
     1  | 1 | 3 |
        +---+---+
    >>> from cute_py.atoms import get
    >>> to_text(get("SM80_16x8x16_F32BF16BF16F32_TN")).splitlines()[0]
    'MMA_Atom SM80_16x8x16_F32BF16BF16F32_TN'
    """
    if _is_tv_object(obj):
        s = str(obj)
        return s if s.endswith("\n") else s + "\n"
    if getattr(obj, "_is_tensor", False):
        buf = io.StringIO()
        _print_tensor(obj, buf)
        return buf.getvalue()
    return layout_table(layout_grid(obj, "to_text"))


def print_layout(obj, file=None) -> None:
    """Print ``to_text(obj)``: CuTe's ``print_layout`` table for a layout (to ``file``, default stdout).

    >>> print_layout(Layout((2, 4)))  # doctest: +NORMALIZE_WHITESPACE
    (2,4):(1,2)
          0   1   2   3
        +---+---+---+---+
     0  | 0 | 2 | 4 | 6 |
        +---+---+---+---+
     1  | 1 | 3 | 5 | 7 |
        +---+---+---+---+
    """
    (file if file is not None else sys.stdout).write(to_text(obj))


def _print_tensor(t, file):
    try:
        from ..layouts.tensor import print_tensor as _pt
    except ImportError:  # pragma: no cover - tensor.py is part of the layouts layer
        _pt = None
    if _pt is None:
        raise TypeError("print_tensor: cute_py.layouts.tensor is not available")
    _pt(t, file=file)


def print_tensor(t, file=None) -> None:
    """Print a tensor's header and elements, as CuTe's ``print_tensor`` (delegates to
    :func:`cute_py.layouts.tensor.print_tensor`).

    >>> import numpy as np
    >>> from cute_py.layouts import make_tensor
    >>> print_tensor(make_tensor(np.arange(4, dtype=np.int32), (2, 2)))
    tensor<s32>[4] o (2,2):(1,2):
        0    2
        1    3
    """
    _print_tensor(t, file if file is not None else sys.stdout)
