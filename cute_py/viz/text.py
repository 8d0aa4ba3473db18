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

Large layouts are elided, whatever their size, in time and memory that do
not grow with it: an axis longer than :data:`TEXT_MAX_AXIS` (64) cells shows
its first and last :data:`TEXT_EDGE` (8) rows (columns) around a row (column)
of ``...``, row labels widen to fit, and a last line says what was left out.
``full=True`` prints every cell, up to :data:`TEXT_FULL_LIMIT` cells
(a :class:`~cute_py.layouts.errors.SizeLimitError` above it).

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
from ._grid import CELL_LIMIT, Grid, cell_values, check_cells, layout_grid, num_digits
from ..layouts.errors import names_caller
from ..layouts.tensor_print import print_tensor as _layouts_print_tensor

__all__ = ["print_layout", "print_tensor", "to_text", "layout_table", "TEXT_MAX_AXIS", "TEXT_EDGE",
           "TEXT_FULL_LIMIT"]

#: Longest axis (rows or columns) a table prints in full by default.
TEXT_MAX_AXIS = 64
#: Rows (columns) shown at each end of an elided axis.
TEXT_EDGE = 8
#: Most cells ``full=True`` prints.
TEXT_FULL_LIMIT = CELL_LIMIT


def layout_table(grid: Grid, full: bool = False) -> str:
    """CuTe's print_layout table of a :class:`~cute_py.viz._grid.Grid` (ends with a newline).

    Elided as the module docstring says unless ``full``; ``full`` prints every
    cell, up to :data:`TEXT_FULL_LIMIT` cells.

    >>> from cute_py.viz._grid import layout_grid
    >>> print(layout_table(layout_grid(Layout(3))), end="")  # doctest: +NORMALIZE_WHITESPACE
    3:1
          0   1   2
        +---+---+---+
     0  | 0 | 1 | 2 |
        +---+---+---+
    >>> t = layout_table(layout_grid(Layout((1000, 3))))
    >>> len(t.splitlines()), t.splitlines()[-1]
    (38, 'rows 8..991 of 1000 not shown (1000x3 cells); full=True prints every cell, up to 1048576')
    """
    rows, cols = grid.rows, grid.cols
    if full:
        check_cells("to_text", grid.obj, rows * cols, TEXT_FULL_LIMIT,
                    f"rows x columns = {rows}x{cols}; without full=True the table is elided")
    elif rows > TEXT_MAX_AXIS or cols > TEXT_MAX_AXIS:
        return _elided_table(grid)
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


def _shown(extent: int) -> list:
    """The indices of an axis that an elided table shows, ``None`` where the ellipsis goes."""
    if extent <= TEXT_MAX_AXIS:
        return list(range(extent))
    return list(range(TEXT_EDGE)) + [None] + list(range(extent - TEXT_EDGE, extent))


def _elided_table(grid: Grid) -> str:
    """The table of the first and last rows and columns of a large grid (only those cells are evaluated)."""
    from ._grid import _fmt_value

    rows, cols = grid.rows, grid.cols
    ms, ns = _shown(rows), _shown(cols)
    vm, vn = [m for m in ms if m is not None], [n for n in ns if n is not None]
    values = cell_values(grid.layout, rows, vm, vn)
    if grid.cosize is not None and all(isinstance(v, int) for v in values):
        labels = [str(v) for v in values]
        width = max([num_digits(grid.cosize), 3] + [len(t) for t in labels]) + 2
    else:
        labels = [_fmt_value(v) for v in values]
        width = max([3] + [len(t) for t in labels]) + 2
    cell = {(m, n): labels[i + len(vm) * j] for j, n in enumerate(vn) for i, m in enumerate(vm)}
    lw = max(2, len(str(rows - 1)))
    pad = " " * (lw + 2)
    sep = pad + "".join("+" + "-" * width for _n in ns) + "+"
    out = [grid.title, pad + "".join(f"  {'...' if n is None else n:>{width - 2}} " for n in ns)]
    for m in ms:
        out.append(sep)
        label = f"{'...':>{lw}}  " if m is None else f"{m:>{lw}d}  "
        out.append(label + "".join(f"| {'...' if m is None or n is None else cell[m, n]:>{width - 2}} "
                                   for n in ns) + "|")
    out.append(sep)
    hidden = [f"{kind} {TEXT_EDGE}..{ext - TEXT_EDGE - 1} of {ext}"
              for kind, ext in (("rows", rows), ("columns", cols)) if ext > TEXT_MAX_AXIS]
    out.append(f"{' and '.join(hidden)} not shown ({rows}x{cols} cells); "
               f"full=True prints every cell, up to {TEXT_FULL_LIMIT}")
    return "\n".join(out) + "\n"


def _is_tv_object(obj) -> bool:
    from ..atoms import CopyAtom, MMAAtom, TiledCopy, TiledMMA

    return isinstance(obj, (MMAAtom, CopyAtom, TiledMMA, TiledCopy))


def to_text(obj, full: bool = False) -> str:
    """The text view of ``obj``: CuTe's print_layout table for layouts, ``str()`` for atoms.

    * Layout, ComposedLayout, Swizzle: the table :func:`print_layout` prints
      (see the module docstring for rank 1, rank > 2 and swizzles); an axis
      longer than 64 cells is elided to its first and last 8 unless ``full``
      (every cell, up to :data:`TEXT_FULL_LIMIT` cells, else
      :class:`~cute_py.layouts.errors.SizeLimitError`);
    * Tensor: what :func:`print_tensor` prints (header and elements);
    * MMAAtom, CopyAtom, TiledMMA, TiledCopy: their ``str()`` (CuTe's ``print``).

    Postcondition: the result ends with a newline; nothing is printed; its
    length is bounded whatever the layout's size (unless ``full``).

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
    >>> big = to_text(Layout((100000000, 100000000), (1, 100000000))).splitlines()
    >>> len(big), big[3][:40], big[-1][:41]
    (38, '       0  |                0 |        10', 'rows 8..99999991 of 100000000 and columns')
    """
    if _is_tv_object(obj):
        s = str(obj)
        return s if s.endswith("\n") else s + "\n"
    if getattr(obj, "_is_tensor", False):
        buf = io.StringIO()
        _layouts_print_tensor(obj, file=buf)
        return buf.getvalue()
    return layout_table(layout_grid(obj, "to_text"), full)


def _writable(file, fn):
    """Refuse a ``file=`` argument that is neither None nor has a ``write`` method, naming ``fn``."""
    if file is not None and not callable(getattr(file, "write", None)):
        raise TypeError(f"{fn}: file must be a text stream with .write (or None for stdout), "
                        f"got {type(file).__name__}")


@names_caller
def print_layout(obj, file=None, full: bool = False) -> None:
    """Print ``to_text(obj, full)``: CuTe's ``print_layout`` table for a layout (to ``file``, default stdout).

    Large layouts are elided unless ``full`` (see :func:`to_text`).

    >>> print_layout(Layout((2, 4)))  # doctest: +NORMALIZE_WHITESPACE
    (2,4):(1,2)
          0   1   2   3
        +---+---+---+---+
     0  | 0 | 2 | 4 | 6 |
        +---+---+---+---+
     1  | 1 | 3 | 5 | 7 |
        +---+---+---+---+
    """
    _writable(file, "print_layout")
    (file if file is not None else sys.stdout).write(to_text(obj, full))


@names_caller
def print_tensor(t, file=None) -> None:
    """Print a tensor's header and elements, as CuTe's ``print_tensor`` (delegates to
    :func:`cute_py.layouts.tensor_print.print_tensor`).

    >>> import numpy as np
    >>> from cute_py.layouts import make_tensor
    >>> print_tensor(make_tensor(np.arange(4, dtype=np.int32), (2, 2)))
    tensor<s32>[4] o (2,2):(1,2):
        0    2
        1    3
    """
    _writable(file, "print_tensor")
    _layouts_print_tensor(t, file=file if file is not None else sys.stdout)
