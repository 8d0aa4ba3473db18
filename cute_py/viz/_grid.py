"""The renderers' shared model (internal): a layout seen as a grid of cells, TV ownership, windows.

Every view (text, SVG, LaTeX, HTML) draws one of two things:

* a :class:`Grid`: a layout-like function on ``rows x cols`` cells. Rank 2 is
  ``(m, n)``; rank 1 is one row; deeper ranks fold modes ``1..R-1`` into the
  column mode (``n`` is the colexicographic coordinate of those modes, i.e. the
  picture of ``group(layout, 1, R)``). Cell ``(m, n)`` holds
  ``layout(m + rows * n)``, the same value as ``layout(m, n)`` for rank 2.
* a TV ownership map: for each element of an ``(M, N)`` tile, the first
  ``(thread, value)`` (threads outer, values inner, as CuTe's printers loop)
  whose TV layout maps to it.

Nothing here prints or writes files.
"""

from __future__ import annotations

from ..layouts import ComposedLayout, Layout, Swizzle
from ..layouts import int_tuple as it
from ..layouts.errors import size_limit_error
from ..layouts.layout import flat_modes

_TABLE_LIMIT = 1 << 22  # largest outer layout tabulated when a ComposedLayout's outer is a Layout
#: Most cells a picture draws one by one (a text table with ``full=True``, an SVG with ``collapse=False``,
#: a LaTeX picture, a TV ownership map); above it they raise :class:`~cute_py.layouts.errors.SizeLimitError`.
CELL_LIMIT = 1 << 20


def num_digits(x: int) -> int:
    """CuTe's ``num_digits``: 1 below 10, 2 below 100, ... (1 for negatives)."""
    x = int(x)
    d = 1
    while x >= 10 and d < 10:
        x //= 10
        d += 1
    return d


def _is_layout_like(x) -> bool:
    return isinstance(x, Layout) or getattr(x, "_is_composed_layout", False)


def _require_int_shape(op, shape):
    for s in it.flatten_to_tuple(shape):
        if not it.is_int(s):
            raise TypeError(f"{op}: cannot draw a layout with a non-integer extent {s!r}")


def offsets(obj) -> list:
    """``[obj(i) for i in range(size(obj))]`` for a Layout or ComposedLayout, built without per-call overhead."""
    if isinstance(obj, Layout):
        shapes, strides = flat_modes(obj)
        if all(it.is_int(d) for d in strides):
            offs = [0]
            for s, d in zip(shapes, strides):
                if s == 1:
                    continue
                if d == 0:
                    offs = offs * s
                else:
                    offs = [o + j * d for j in range(s) for o in offs]
            return offs
        return [obj(i) for i in range(it.product(obj.shape))]
    if getattr(obj, "_is_composed_layout", False):
        inner = offsets(obj.inner)
        off = obj.offset
        if not it.is_int(off):
            return [obj(i) for i in range(it.product(obj.shape))]
        xs = [off + v for v in inner] if off else inner
        return _apply(obj.outer, xs)
    raise TypeError(f"offsets: expected a Layout or ComposedLayout, got {type(obj).__name__}")


def _apply(f, xs: list) -> list:
    """``[f(x) for x in xs]`` for a Swizzle, Layout or ComposedLayout ``f``."""
    if isinstance(f, Swizzle):
        y, s = f.yyy_msk, f.shift
        if f.bits == 0:
            return list(xs)
        if s >= 0:
            return [x ^ ((x & y) >> s) for x in xs]
        return [x ^ ((x & y) << -s) for x in xs]
    if isinstance(f, Layout):
        n = it.product(f.shape)
        if n <= min(_TABLE_LIMIT, max(4096, 4 * len(xs))):
            table = offsets(f)
            return [table[x] if 0 <= x < n else f(x) for x in xs]
        return [f(x) for x in xs]
    if getattr(f, "_is_composed_layout", False):
        inner = _apply(f.inner, xs)
        if f.offset:
            inner = [f.offset + v for v in inner]
        return _apply(f.outer, inner)
    return [f(x) for x in xs]


def prefix_boundaries(leaves) -> tuple:
    """Prefix products of the leaf extents, without the full extent: where nested modes end."""
    out, acc = [], 1
    for s in leaves[:-1]:
        acc *= s
        if acc > 1:
            out.append(acc)
    return tuple(out)


def boundary_level(idx: int, bounds) -> int:
    """How many nested-mode boundaries fall before cell ``idx`` (0: none)."""
    return sum(1 for p in bounds if idx % p == 0)


def prefix_offsets(obj, count: int) -> list:
    """``[obj(i) for i in range(count)]`` (``count <= size(obj)``), touching only those indices."""
    if isinstance(obj, Layout):
        shapes, strides = flat_modes(obj)
        if all(it.is_int(d) for d in strides):
            offs = [0]
            for s, d in zip(shapes, strides):
                if len(offs) >= count:
                    break
                if s == 1:
                    continue
                reps = min(s, -(-count // len(offs)))
                offs = offs * reps if d == 0 else [o + j * d for j in range(reps) for o in offs]
            return offs[:count]
        return [obj(i) for i in range(count)]
    if getattr(obj, "_is_composed_layout", False):
        off = obj.offset
        if not it.is_int(off):
            return [obj(i) for i in range(count)]
        inner = prefix_offsets(obj.inner, count)
        return _apply(obj.outer, [off + v for v in inner] if off else inner)
    raise TypeError(f"offsets: expected a Layout or ComposedLayout, got {type(obj).__name__}")


def _split(obj):
    """``(rows_layout, cols_layout)`` of a plain rank >= 2 Layout: mode 0 and modes 1.. grouped."""
    return (Layout._make(obj.shape[0], obj.stride[0]),
            Layout._make(tuple(obj.shape[1:]), tuple(obj.stride[1:])))


def window_offsets(obj, rows: int, wr: int, wc: int) -> list:
    """``obj(m + rows*n)`` for ``m < wr``, ``n < wc``, listed at ``m + wr*n``; only those cells are evaluated."""
    if wr == rows:
        return prefix_offsets(obj, rows * wc)
    if isinstance(obj, Layout) and it.rank(obj.shape) >= 2 and all(
            it.is_int(d) for d in flat_modes(obj)[1]):
        rl, cl = _split(obj)
        r = prefix_offsets(rl, wr)
        c = prefix_offsets(cl, wc)
        return [ro + co for co in c for ro in r]
    if getattr(obj, "_is_composed_layout", False) and it.is_int(obj.offset):
        inner = window_offsets(obj.inner, rows, wr, wc)
        return _apply(obj.outer, [obj.offset + v for v in inner] if obj.offset else inner)
    return [obj(m + rows * n) for n in range(wc) for m in range(wr)]


def check_cells(op: str, obj, count: int, limit: int = CELL_LIMIT, hint: str = "", operand: str = "layout"):
    """Raise :class:`~cute_py.layouts.errors.SizeLimitError` when drawing ``count`` cells of ``obj`` exceeds ``limit``."""
    if count > limit:
        raise size_limit_error(op, operand, str(obj), count, limit, "cells", hint)


def cell_values(layout, rows: int, ms, ns) -> list:
    """``layout(m + rows*n)`` for ``n`` in ``ns``, ``m`` in ``ms`` (``m`` fastest): only those cells are evaluated."""
    if isinstance(layout, Layout) and it.rank(layout.shape) >= 2 and all(
            it.is_int(d) for d in flat_modes(layout)[1]):
        rl, cl = _split(layout)
        r = [rl(m) for m in ms]
        return [ro + cl(n) for n in ns for ro in r]
    return [layout(m + rows * n) for n in ns for m in ms]


def _fmt_value(v) -> str:
    if isinstance(v, tuple):
        return it.to_str(v)
    if isinstance(v, float):
        return f"{v:.3g}"
    try:
        import numpy as np

        if isinstance(v, np.floating):
            return f"{float(v):.3g}"
        if isinstance(v, np.integer):
            return str(int(v))
    except ImportError:  # pragma: no cover - numpy is a core dependency
        pass
    return str(v) if it.is_int(v) else it.to_str(v)


class Cells:
    """The drawn block of a :class:`Grid`: ``values[m + wr*n]`` and ``labels[m + wr*n]`` for ``m < wr, n < wc``."""

    __slots__ = ("wr", "wc", "values", "labels", "ints")

    def __init__(self, wr, wc, values, labels):
        self.wr, self.wc, self.values, self.labels = wr, wc, values, labels
        self.ints = all(it.is_int(v) for v in values)

    def value(self, m: int, n: int):
        return self.values[m + self.wr * n]

    def label(self, m: int, n: int) -> str:
        return self.labels[m + self.wr * n]


class Grid:
    """A layout-like object on ``rows x cols`` cells (see the module docstring).

    ``cells(wr, wc)`` evaluates only the drawn block (the first ``wr`` rows and
    ``wc`` columns), so a huge layout costs what its window costs. Cell
    ``(m, n)``'s value is ``obj(m + rows*n)`` (a tensor: its engine offset);
    its label the value's text (a tensor: its element).
    ``row_leaves``/``col_leaves`` are the leaf extents of the row and column
    modes (for nested-mode boundaries and windows), ``row_strides``/
    ``col_strides`` their strides when the object is a plain Layout (else
    ``None``); ``unit`` is the number of elements one value counts (``2^M``
    for a swizzle drawn on its chunks); ``note`` is a line saying what the
    cells mean when that is not plain offsets.
    """

    __slots__ = ("title", "obj", "layout", "rows", "cols", "row_leaves", "col_leaves", "row_strides",
                 "col_strides", "cosize", "unit", "note", "rank", "tensor")

    def __init__(self, title, obj, layout, rows, cols, *, row_leaves=(), col_leaves=(), row_strides=None,
                 col_strides=None, cosize=None, unit=1, note="", rank=2, tensor=None):
        self.title, self.obj, self.layout, self.rows, self.cols = title, obj, layout, rows, cols
        self.row_leaves, self.col_leaves = tuple(row_leaves), tuple(col_leaves)
        self.row_strides, self.col_strides = row_strides, col_strides
        self.cosize, self.unit, self.note, self.rank, self.tensor = cosize, unit, note, rank, tensor

    def cells(self, wr=None, wc=None) -> Cells:
        wr = self.rows if wr is None else wr
        wc = self.cols if wc is None else wc
        vals = window_offsets(self.layout, self.rows, wr, wc)
        t = self.tensor
        if t is None:
            return Cells(wr, wc, vals, [_fmt_value(v) for v in vals])
        if t.is_identity:
            labels = [_fmt_value(t(m + self.rows * n)) for n in range(wc) for m in range(wr)]
            return Cells(wr, wc, vals, labels)
        idx = [t.offset + v for v in vals]
        import numpy as np

        raw = t.engine[np.asarray(idx, dtype=np.int64)] if idx else t.engine[:0]
        if t.dtype is not None:
            try:
                raw = t.dtype.decode(raw)
            except Exception:  # noqa: BLE001 - keep the raw values when the type has no decoder
                pass
        cells = Cells(wr, wc, idx, [_fmt_value(v) for v in raw.tolist()])
        return cells


def swizzle_layout(sw: Swizzle):
    """A swizzle as a layout on its ``2^M``-element chunks: ``Sw<B,0,S> o 0 o (2^B,2^|S|):(2^|S|,1)``.

    Row ``r``, column ``c`` is chunk ``r*2^|S| + c``; its value is the chunk the
    swizzle sends it to (the element offsets are the value times ``2^M``).
    """
    rows, cols = 1 << sw.bits, 1 << abs(sw.shift)
    return ComposedLayout(Swizzle(sw.bits, 0, sw.shift), 0, Layout((rows, cols), (cols, 1)))


def layout_grid(obj, op="to_svg") -> Grid:
    """The :class:`Grid` of a Layout, ComposedLayout, Swizzle or Tensor (nothing is evaluated yet)."""
    if isinstance(obj, Swizzle):
        g = layout_grid(swizzle_layout(obj), op)
        g.obj, g.unit = obj, 1 << obj.base
        g.title = f"{obj} on {1 << obj.base}-element chunks: {g.title}"
        g.note = (f"cell (r,c) = chunk r*{g.cols}+c of {1 << obj.base} elements; "
                  f"value = the chunk {obj} sends it to")
        return g
    if getattr(obj, "_is_tensor", False):
        g = layout_grid(obj.layout, op)
        g.title, g.obj, g.tensor = str(obj), obj, obj
        g.note = ("cells show the coordinates" if obj.is_identity else
                  "cells show the elements; colors follow their offsets")
        return g
    if not _is_layout_like(obj):
        raise TypeError(f"{op}: expected a Layout, ComposedLayout, Swizzle, Tensor, atom, TiledMMA or "
                        f"TiledCopy, got {type(obj).__name__}")
    shape = obj.shape
    _require_int_shape(op, shape)
    r = it.rank(shape)
    plain = isinstance(obj, Layout)
    stride = obj.stride if plain else None
    if r <= 1:
        rows, row_leaves, row_strides = 1, (), ()
        col_leaves = it.flatten_to_tuple(shape)
        col_strides = it.flatten_to_tuple(stride) if plain else None
    else:
        rows = it.product(shape[0])
        row_leaves = it.flatten_to_tuple(shape[0])
        col_leaves = it.flatten_to_tuple(shape[1:])
        row_strides = it.flatten_to_tuple(stride[0]) if plain else None
        col_strides = it.flatten_to_tuple(stride[1:]) if plain else None
    cols = it.product(shape[1:]) if r > 1 else it.product(shape)
    try:
        cos = obj.cosize()
    except Exception:  # noqa: BLE001 - basis-valued strides have no integer cosize
        cos = None
    if cos is not None and not it.is_int(cos):
        cos = None
    return Grid(str(obj), obj, obj, rows, cols, row_leaves=row_leaves, col_leaves=col_leaves,
                row_strides=row_strides if plain else None, col_strides=col_strides if plain else None,
                cosize=cos, rank=r)


# ---------------------------------------------------------------------------
# Windows: how much of a long axis to draw


def window(extent: int, leaves, limit: int) -> int:
    """How many leading cells of an axis of ``extent`` cells to draw, at most ``limit``.

    The window is a prefix ``w`` of the axis's leaf extents (the last leaf it
    reaches split by its largest divisor that fits), so that the mode splits
    exactly as ``(w, rest)``: for a plain Layout the hidden cells ``w*j + m``
    hold ``offset(m) + rest(j)``, translates of the drawn block. When that
    prefix is under a quarter of ``limit`` (extents with large prime factors)
    the window is simply the first ``limit`` cells.

    >>> window(256, (8, 32), 32), window(256, (256,), 32), window(97, (97,), 32), window(12, (12,), 32)
    (32, 32, 32, 12)
    """
    if extent <= limit:
        return extent
    acc = 1
    for s in leaves:
        if acc * s <= limit:
            acc *= s
            continue
        k = next(d for d in range(min(s, limit // acc), 0, -1) if s % d == 0)
        acc *= k
        break
    if 4 * acc < limit:  # the modes split badly (large prime extents): a plain prefix of `limit` cells
        return limit
    return acc


def rest_layout(leaves, strides, w: int):
    """The layout of the blocks after a window of ``w`` cells, ``None`` without strides or when
    the modes do not split as ``(w, rest)`` (then the hidden cells are not translates).

    >>> str(rest_layout((8, 32), (1, 8), 8))
    '32:8'
    """
    if strides is None:
        return None
    acc = 1
    rest_s, rest_d = [], []
    for s, d in zip(leaves, strides):
        if acc >= w:
            rest_s.append(s)
            rest_d.append(d)
            continue
        if acc * s <= w:
            acc *= s
            continue
        k = w // acc
        if w % acc or s % k:
            return None
        rest_s.append(s // k)
        rest_d.append(d * k if it.is_int(d) else d)
        acc *= k
    if not rest_s:
        return None
    if len(rest_s) == 1:
        return Layout(rest_s[0], rest_d[0])
    return Layout(tuple(rest_s), tuple(rest_d))


def limits(collapse, auto_max: int = 64, auto_window: int = 32):
    """``(row_limit, col_limit, threshold_row, threshold_col)`` for a ``collapse`` argument.

    ``None``: axes longer than ``auto_max`` are windowed to ``auto_window``;
    ``False``: nothing is collapsed; ``True``: axes longer than
    ``auto_window`` are windowed to it; an int ``n``: axes longer than ``n``
    are windowed to ``n``; a pair ``(r, c)``: per axis.
    """
    big = 1 << 62
    if collapse is None:
        return auto_window, auto_window, auto_max, auto_max
    if collapse is False:
        return big, big, big, big
    if collapse is True:
        return auto_window, auto_window, auto_window, auto_window
    if it.is_int(collapse) and not isinstance(collapse, bool):
        n = int(collapse)
        if n < 1:
            raise ValueError(f"collapse: a window must hold at least one cell, got {collapse}")
        return n, n, n, n
    if isinstance(collapse, tuple) and len(collapse) == 2 and all(it.is_int(c) and c >= 1 for c in collapse):
        return collapse[0], collapse[1], collapse[0], collapse[1]
    raise ValueError(f"collapse: expected None, True, False, a cell count or a (rows, cols) pair, "
                     f"got {collapse!r}")


def axis_window(extent, leaves, limit, threshold) -> int:
    """``window(extent, leaves, limit)`` when ``extent > threshold``, else ``extent``."""
    return extent if extent <= threshold else window(extent, leaves, limit)


# ---------------------------------------------------------------------------
# TV layouts over tiles


def tile_extent(x) -> int:
    """An int tile extent, or the size of a Layout / shape given as a tiler."""
    if isinstance(x, Layout):
        return it.product(x.shape)
    if it.is_int(x):
        return int(x)
    return it.product(x)


def tv_owner(layout_tv, M: int, N: int, op: str = "TV") -> list:
    """``owner[m + M*n] = (t, v)``: the first (thread, value) that maps to element (m, n), or ``None``.

    ``layout_tv`` maps ``(t, v)`` to the column-major index ``m + M*n`` of the
    ``(M, N)`` tile; threads are visited outer, values inner (CuTe's order).
    Raises ValueError if an index falls outside the tile, SizeLimitError if the
    tile or the TV layout has more than :data:`CELL_LIMIT` elements.
    """
    if not _is_layout_like(layout_tv) or it.rank(layout_tv.shape) != 2:
        raise ValueError(f"{op}: a TV layout must be a rank-2 layout (thread, value), got {layout_tv}")
    T = it.product(layout_tv.shape[0])
    V = it.product(layout_tv.shape[1])
    check_cells(op, f"{M}x{N}", M * N, operand="tile")
    check_cells(op, layout_tv, T * V, operand="TV layout")
    offs = offsets(layout_tv)
    total = M * N
    owner = [None] * total
    for t in range(T):
        for v in range(V):
            idx = offs[t + T * v]
            if not it.is_int(idx) or not 0 <= idx < total:
                raise ValueError(f"{op}: TV layout {layout_tv} sends (T{t},V{v}) to {idx}, "
                                 f"outside the {M}x{N} tile")
            if owner[idx] is None:
                owner[idx] = (t, v)
    return owner


def mma_parts(obj):
    """``(title, tiled_mma, (M, N, K), [(name, layout_tv, (rows, cols)) for C, A, B])``."""
    from ..atoms import MMAAtom, TiledMMA, make_tiled_mma

    mma = make_tiled_mma(obj) if isinstance(obj, MMAAtom) else obj
    if not isinstance(mma, TiledMMA):
        raise TypeError(f"expected an MMAAtom or TiledMMA, got {type(obj).__name__}")
    M, N, K = (tile_extent(x) for x in mma.tile_size)
    title = obj.name if isinstance(obj, MMAAtom) else f"TiledMMA of {mma.atom.name} {mma.tile_size}"
    return title, mma, (M, N, K), [("C", mma.get_layoutC_TV(), (M, N)),
                                   ("A", mma.get_layoutA_TV(), (M, K)),
                                   ("B", mma.get_layoutB_TV(), (N, K))]


def copy_parts(obj):
    """``(title, tiled_copy, (M, N), S_TV, D_TV)``; a CopyAtom is tiled as one thread per row.

    A bare copy atom is drawn through ``make_tiled_copy(atom, Layout((threads, 1)),
    Layout((1, values)))``: row ``t`` of the ``(threads, values)`` tile is thread
    ``t``'s reference slice, so S and D show where each thread's source and
    destination values sit.
    """
    from ..atoms import CopyAtom, TiledCopy, make_tiled_copy

    if isinstance(obj, CopyAtom):
        tc = make_tiled_copy(obj, Layout((obj.num_threads, 1)), Layout((1, obj.num_values)))
        title = f"{obj.name} ({obj.value_type})"
    elif isinstance(obj, TiledCopy):
        tc = obj
        title = f"TiledCopy of {obj.atom.name} ({obj.atom.value_type}), tile {it.to_str(obj.tiler_mn)}"
    else:
        raise TypeError(f"expected a CopyAtom or TiledCopy, got {type(obj).__name__}")
    tiler = tuple(tile_extent(x) for x in tc.tiler_mn)
    if len(tiler) == 1:
        tiler = (tiler[0], 1)
    M, N = tiler[0], it.product(tiler[1:])
    return title, tc, (M, N), tc.get_layoutS_TV(), tc.get_layoutD_TV()


def tile_shape(tile):
    """``(M, N)`` from a tile argument: an int, an (M, N) pair or a Layout (its mode sizes)."""
    if isinstance(tile, Layout):
        shape = it.product_each(tile.shape)
        tile = shape if isinstance(shape, tuple) else (shape,)
    if it.is_int(tile):
        return int(tile), 1
    if not isinstance(tile, (tuple, list)):
        raise TypeError(f"tile: expected an int, an (M, N) pair or a Layout, got {type(tile).__name__}")
    tile = tuple(tile_extent(x) for x in tile)
    if len(tile) == 1:
        return tile[0], 1
    if len(tile) < 1:
        raise ValueError("tile: expected (M, N)")
    return tile[0], it.product(tile[1:])
