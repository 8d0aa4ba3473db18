"""The tile walk of a grouped GEMM: which work unit (and so which CTA, and when) computes each tile.

:func:`tile_walk` runs the group scheduler of a kernel with groups along M
(``cute_py.emit.collectives.schedulers.groups``: ``group_of`` and the tile scheduler's ``place`` inside a
group) in Python, for group sizes given on the host;
:func:`tile_walk_svg` draws it: one row per M tile of every group (groups separated by thick lines, their
partial last tile hatched by its empty rows), one column per N tile, each cell labelled with its unit and
colored by the wave of persistent CTAs that computes it.

>>> w = tile_walk([200, 0, 64], tile_m=128, n=512, tile_n=256)
>>> w.units, w.rows
(6, ((0, 0, 128), (0, 128, 200), (2, 200, 264)))
>>> w.unit
((0, 2), (1, 3), (4, 5))
"""

from __future__ import annotations

from dataclasses import dataclass

from .svg import TV8, _esc, _header, _open, _rgb, _text_width

__all__ = ["TileWalk", "tile_walk", "tile_walk_svg", "MAX_WALK_TILES"]

MAX_WALK_TILES = 1 << 14
"""The most tiles :func:`tile_walk` walks (it draws a picture; a real problem's walk is the kernel's)."""


@dataclass(frozen=True)
class TileWalk:
    """A grouped GEMM's tiles in walk order: ``rows[i]`` = (group, first row, end row) of M tile row ``i`` (the
    groups' tiles stacked, empty groups have none), ``unit[i][j]`` the work unit of M tile row ``i`` and N tile
    ``j``; ``units`` in all; ``ctas`` persistent CTAs (unit ``u`` runs on CTA ``u % ctas`` in wave
    ``u // ctas``); ``tile`` (BM, BN); ``sizes`` the group sizes."""

    sizes: tuple
    tile: tuple
    rows: tuple
    unit: tuple
    units: int
    ctas: int


def _work_of(unit: int, num_m: int, num_n: int, group: int, raster: str) -> tuple:
    """(m tile, n tile) of ``unit`` in one GEMM's tiles: the dense scheduler's ``work_of`` (clusters of 1, no
    split K): bands of ``group`` tile rows (raster "m") or columns ("n")."""
    along, across = (num_m, num_n) if raster == "m" else (num_n, num_m)
    per_group = group * across
    first = (unit // per_group) * group
    width = min(along - first, group)
    r = unit % per_group
    u_along, u_across = first + r % width, r // width
    return (u_along, u_across) if raster == "m" else (u_across, u_along)


def tile_walk(sizes, tile_m: int, n: int, tile_n: int, *, group: int = 8, raster: str = "m",
              ctas: int = 132) -> TileWalk:
    """The walk of groups of ``sizes`` rows (N = ``n``) in ``tile_m`` x ``tile_n`` tiles: group ``g`` owns the
    ``ceil(sizes[g] / tile_m) * ceil(n / tile_n)`` units after those of groups ``< g``, placed inside the group
    by ``work_of`` with L2 bands of ``group`` tiles (``raster``), as the kernel's ``group_of`` does."""
    _require_walk(sizes, tile_m, n, tile_n, group, raster, ctas)
    num_n = -(-n // tile_n)
    rows, unit, first, row0 = [], [], 0, 0
    for g, size in enumerate(sizes):
        num_m = -(-size // tile_m)
        block = [[0] * num_n for _ in range(num_m)]
        for u in range(num_m * num_n):
            m, j = _work_of(u, num_m, num_n, group, raster)
            block[m][j] = first + u
        rows += [(g, row0 + m * tile_m, min(row0 + (m + 1) * tile_m, row0 + size)) for m in range(num_m)]
        unit += [tuple(r) for r in block]
        first += num_m * num_n
        row0 += size
    return TileWalk(tuple(sizes), (tile_m, tile_n), tuple(rows), tuple(unit), first, ctas)


def _is_count(x, least: int = 1) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= least


def _require_walk(sizes, tile_m, n, tile_n, group, raster, ctas) -> None:
    """tile_walk's arguments: ``sizes`` a sequence of ints >= 0, the others positive ints, ``raster`` "m" or "n",
    and at most :data:`MAX_WALK_TILES` tiles (a picture, not a simulation)."""
    if not isinstance(sizes, (list, tuple)) or not all(_is_count(x, 0) for x in sizes):
        raise ValueError(f"tile_walk: sizes must be a list of group sizes (ints >= 0), got {sizes!r:.80}")
    for name, x in (("tile_m", tile_m), ("n", n), ("tile_n", tile_n), ("group", group), ("ctas", ctas)):
        if not _is_count(x):
            raise ValueError(f"tile_walk: {name} must be a positive int, got {x!r:.80}")
    if raster not in ("m", "n"):
        raise ValueError(f"tile_walk: raster must be 'm' or 'n', got {raster!r:.80}")
    tiles = sum(-(-x // tile_m) for x in sizes) * -(-n // tile_n)
    if tiles > MAX_WALK_TILES:
        raise ValueError(f"tile_walk: {tiles} tiles exceed {MAX_WALK_TILES}; draw fewer groups or larger tiles")


def tile_walk_svg(walk: TileWalk, title: str | None = None) -> str:
    """The walk as SVG: a row per M tile (a thick line where a group ends; a partial tile's empty part greyed),
    a column per N tile, each cell its unit ``u``, colored by the CTA wave ``u // ctas``."""
    if not isinstance(walk, TileWalk):
        raise TypeError(f"tile_walk_svg: walk must be a TileWalk (from tile_walk), got {type(walk).__name__}")
    bm, bn = walk.tile
    cw, ch, left = 34, 22, 118
    cols = len(walk.unit[0]) if walk.unit else 0
    title = title or (f"tile walk: {len(walk.sizes)} groups of {list(walk.sizes)} rows, {bm}x{bn} tiles, "
                      f"{walk.units} units on {walk.ctas} CTAs")
    notes = [f"cell: work unit u (CTA u % {walk.ctas}); color: wave u // {walk.ctas}; thick line: a group ends; "
             f"grey: rows past the group's end (never stored)"]
    width = max(left + cols * cw + 16, 16 + max(_text_width(s) for s in [title] + notes))
    out = _open(width, 70 + len(walk.rows) * ch + 16, title)
    y0 = _header(out, [title] + notes, 8, 10) + 8
    for i, (g, r0, r1) in enumerate(walk.rows):
        y = y0 + i * ch
        out.append(f'<text class="note" x="8" y="{y + 15}">g{g} rows {r0}..{r1 - 1}</text>')
        empty = 1 - (r1 - r0) / bm
        for j, u in enumerate(walk.unit[i]):
            x = left + j * cw
            out.append(f'<rect class="cell" x="{x}" y="{y}" width="{cw}" height="{ch}" '
                       f'fill="{_rgb(TV8[(u // walk.ctas) % len(TV8)])}" stroke="#333" stroke-width="0.5"/>')
            if empty > 0:
                h = ch * empty
                out.append(f'<rect x="{x}" y="{y + ch - h:.1f}" width="{cw}" height="{h:.1f}" fill="#999" '
                           f'fill-opacity="0.55"/>')
            out.append(f'<text class="v" x="{x + cw / 2}" y="{y + 15}" text-anchor="middle">{_esc(u)}</text>')
        last = i + 1 == len(walk.rows) or walk.rows[i + 1][0] != g
        if last:
            out.append(f'<line x1="{left}" y1="{y + ch}" x2="{left + cols * cw}" y2="{y + ch}" stroke="#000" '
                       f'stroke-width="2.5"/>')
    out.append("</svg>")
    return "\n".join(out)
