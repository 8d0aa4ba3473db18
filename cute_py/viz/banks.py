"""Shared-memory banks: the bank map of a layout, bank-conflict reports, swizzle comparison and suggestion.

The model (banks, phases, wavefronts) and the conflict count are
:mod:`cute_py.arch.sm90.banks` (the emitter checks its staging layouts with
them); this module re-exports :func:`bank_conflicts` and its report, and adds
the bank map of a layout and the swizzle comparison and suggestion.

>>> import cute_py as cp
>>> r = bank_conflicts(cp.Layout((32, 32), (32, 1)), "vec32", "f32")
>>> r.max_ways, r.wavefronts[0], r.ideal_wavefronts[0]
(32, 32, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.sm90.banks import (  # noqa: F401 - the analysis lives below emit; viz re-exports it
    BANK_BYTES, CHUNK_BYTES, LINE_BYTES, NUM_BANKS, BankConflict, BankConflictReport, RequestBanks, bank_conflicts,
)
from ..atoms import TiledCopy
from ..layouts import ComposedLayout, Layout, Swizzle, composition, int_tuple as it
from ..layouts.errors import LayoutError, layout_error
from . import _requests as rq
from .text import TEXT_EDGE, TEXT_MAX_AXIS
from ..layouts.errors import names_caller

__all__ = ["BankMap", "BankEntry", "BankConflictReport", "BankConflict", "RequestBanks", "SwizzleComparison",
           "SwizzleSuggestion", "bank_map", "bank_conflicts", "compare_swizzle", "suggest_swizzle",
           "NUM_BANKS", "BANK_BYTES"]

BankConflictReport._repr_html_ = rq.TextReport._repr_html_      # notebooks show the report preformatted


# ---------------------------------------------------------------------------
# bank map


def _shown(extent: int, full: bool) -> list:
    """The indices of an axis a table shows (``None`` for the ellipsis), as :func:`cute_py.viz.to_text` elides."""
    if full or extent <= TEXT_MAX_AXIS:
        return list(range(extent))
    return list(range(TEXT_EDGE)) + [None] + list(range(extent - TEXT_EDGE, extent))


@dataclass(frozen=True)
class BankEntry:
    """Where one element lives: domain ``index``, element ``offset``, byte ``address``, ``bank``, ``chunk``."""

    index: int
    offset: int
    address: int
    bank: int
    chunk: int


class BankMap(rq.TextReport):
    """The bank of every element of a shared-memory layout, in the layout's domain order.

    ``entries[i]`` (also ``bank_map[i]``) describes domain index ``i``;
    ``banks``, ``addresses``, ``chunks`` are the columns. ``grid(field)`` folds
    them into rows x columns (mode 0 down, the other modes across) and
    ``str()`` prints the bank grid.

    >>> m = bank_map("(4,32):(32,1)", "f32")
    >>> m.grid()[1][:3], m.banks[:4]
    ([0, 1, 2], (0, 0, 0, 0))
    """

    def __init__(self, layout, dtype, entries):
        self.layout = layout
        self.dtype = dtype
        try:
            self.entries = tuple(entries)
        except TypeError:
            raise TypeError(f"BankMap: entries must be an iterable of bank entries, got {type(entries).__name__}"
                            ) from None

    @property
    def banks(self):
        return tuple(e.bank for e in self.entries)

    @property
    def addresses(self):
        return tuple(e.address for e in self.entries)

    @property
    def chunks(self):
        return tuple(e.chunk for e in self.entries)

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        return self.entries[i]

    def __iter__(self):
        return iter(self.entries)

    def _rows(self):
        s = self.layout.shape
        rows = it.product(s[0]) if isinstance(s, tuple) else 1
        return rows, len(self.entries) // rows

    def grid(self, field: str = "bank"):
        """``[[value of (row m, column n)] ...]`` with ``field`` one of index/offset/address/bank/chunk."""
        rows, cols = self._rows()
        return [[getattr(self.entries[m + rows * n], field) for n in range(cols)] for m in range(rows)]

    def to_text(self, field: str = "bank", full: bool = False) -> str:
        """The grid of ``field`` as a text table with row and column numbers.

        As :func:`cute_py.viz.to_text`, an axis longer than 64 is elided to its
        first and last 8 (a last line says what is not shown) unless ``full``.

        >>> t = bank_map("(128,4):(4,1)", "f32").to_text().splitlines()
        >>> t[1], t[10], t[-1]
        ('       0  1  2  3', '... | .. .. .. ..', 'rows 8..119 of 128 not shown; full=True prints them all')
        """
        rows, cols = self._rows()
        ms, ns = _shown(rows, full), _shown(cols, full)
        vals = {(m, n): str(getattr(self.entries[m + rows * n], field))
                for m in ms if m is not None for n in ns if n is not None}
        w = max([len(v) for v in vals.values()] + [len(str(cols - 1))])
        lw = max(3, len(str(rows - 1))) if None in ms else len(str(rows - 1))
        head = " " * (lw + 3) + " ".join(("." * min(w, 3) if n is None else str(n)).rjust(w) for n in ns)
        body = [("..." if m is None else str(m)).rjust(lw) + " | " + " ".join(
            ("." * min(w, 3) if m is None or n is None else vals[m, n]).rjust(w) for n in ns) for m in ms]
        title = f"{field}s of {self.layout} ({self.dtype.name}, {NUM_BANKS} banks x {BANK_BYTES} B)"
        hidden = [f"{kind} {TEXT_EDGE}..{ext - TEXT_EDGE - 1} of {ext}"
                  for kind, ext, shown in (("rows", rows, ms), ("columns", cols, ns)) if None in shown]
        tail = [f"{' and '.join(hidden)} not shown; full=True prints them all"] if hidden else []
        return "\n".join([title, head, *body, *tail])

    def __repr__(self):
        return f"<BankMap of {self.layout} ({self.dtype.name}): {len(self.entries)} elements>"


@names_caller
def bank_map(smem_layout, dtype) -> BankMap:
    """The byte address, 4-byte bank and 16-byte chunk of every element, in domain order.

    ``smem_layout`` is a Layout, a ComposedLayout (swizzled) or CuTe text.
    Postconditions: ``len(result) == size(smem_layout)``; for every ``i``,
    ``result[i].address == smem_layout(i) * sizeof_bits(dtype) // 8``,
    ``result[i].bank == result[i].address // 4 % 32`` and
    ``result[i].chunk == result[i].address // 16 % 8``.

    >>> m = bank_map("(8,64):(64,1)", "bf16")
    >>> m[1].address, m[1].bank, m[8].address, m.grid()[1][:4]      # m[1] is (1,0), m[8] is (0,1)
    (128, 0, 2, [0, 0, 1, 1])
    >>> print(bank_map("Sw<3,3,3> o 0 o (8,64):(64,1)", "bf16")[1].address)
    144
    """
    layout = rq.as_layout("bank_map", smem_layout)
    t = rq.as_dtype("bank_map", dtype)
    entries = []
    for i, o in enumerate(rq.offsets("bank_map", layout, "smem_layout")):
        a = o * t.bits // 8
        entries.append(BankEntry(i, o, a, (a // BANK_BYTES) % NUM_BANKS, (a // CHUNK_BYTES) % (LINE_BYTES // CHUNK_BYTES)))
    return BankMap(layout, t, entries)


# ---------------------------------------------------------------------------
# swizzles


def _apply_swizzle(layout, sw: Swizzle):
    if isinstance(layout, ComposedLayout):
        return ComposedLayout(sw, layout.offset, layout.inner) if sw.bits else layout.inner
    return composition(sw, layout) if sw.bits else layout


@dataclass(frozen=True)
class SwizzleComparison(rq.TextReport):
    """``before`` (the layout as given) and ``after`` (with the swizzle) bank-conflict reports.

    >>> import cute_py as cp
    >>> print(compare_swizzle("(32,32):(32,1)", "Sw<5,0,5>", cp.Layout(32, 1), "f32").speedup)  # a column
    32.0
    """

    swizzle: Swizzle
    before: BankConflictReport
    after: BankConflictReport

    @property
    def speedup(self) -> float:
        """``before.total_wavefronts / after.total_wavefronts``."""
        return self.before.total_wavefronts / max(1, self.after.total_wavefronts)

    def __str__(self):
        b, a = self.before, self.after
        return "\n".join([
            f"Swizzle {self.swizzle}: {b.dtype.name}, access {a.access}",
            f"  before: {b.layout}",
            f"          {b.summary()}",
            f"  after:  {a.layout}",
            f"          {a.summary()}",
            f"  wavefronts {b.total_wavefronts} -> {a.total_wavefronts} ({self.speedup:.2f}x fewer); "
            f"max {b.max_ways}-way -> {a.max_ways}-way"])


@names_caller
def compare_swizzle(layout, swizzle, access, dtype, *, vector_bits=None) -> SwizzleComparison:
    """Bank conflicts of ``access`` over ``layout`` without and with ``swizzle``.

    ``swizzle`` is a Swizzle, ``(B, M, S)`` or ``"Sw<B,M,S>"``. "After" is
    ``composition(swizzle, layout)`` (for a ComposedLayout: its outer swizzle
    replaced). Postcondition: ``result.before == bank_conflicts(layout, access, dtype)``.

    >>> import cute_py as cp
    >>> c = compare_swizzle("(64,64):(64,1)", (3, 3, 3), cp.Layout((32, 8), (1, 64)), "bf16")
    >>> c.before.max_ways, c.after.max_ways, c.before.total_wavefronts, c.after.total_wavefronts
    (8, 1, 32, 4)
    """
    lay = rq.as_layout("compare_swizzle", layout)
    sw = rq.as_swizzle("compare_swizzle", swizzle)
    before = bank_conflicts(lay, access, dtype, vector_bits=vector_bits)
    after = bank_conflicts(_apply_swizzle(lay, sw), access, dtype, vector_bits=vector_bits)
    return SwizzleComparison(sw, before, after)


@dataclass(frozen=True)
class SwizzleSuggestion(rq.TextReport):
    """The result of :func:`suggest_swizzle`; unpacks as ``swizzle, explanation``.

    ``before``/``after``: the reports of the checked access patterns on the
    unswizzled and swizzled tile; ``conflict_free``: whether ``after`` is.

    >>> sw, why = suggest_swizzle("f16", 128, 128)
    >>> print(sw), why.splitlines()[0]
    Sw<3,3,3>
    (None, 'suggest_swizzle(f16, 128-byte rows = 64 elements, access 128):')
    """

    swizzle: Swizzle
    explanation: str
    before: tuple
    after: tuple
    conflict_free: bool

    def __iter__(self):
        return iter((self.swizzle, self.explanation))

    def __str__(self):
        return self.explanation


def _pattern_tvs(access, rows, cols, vec):
    """The TV layouts (over the (rows, cols) col-major domain) a vector-width access stands for."""
    col_read = Layout((rows, (vec, cols // vec)), (1, (rows, rows * vec)))
    row_major = Layout((cols, rows), (rows, 1))  # row-major linear element -> domain index
    n = rows * cols // vec
    thr = min(rq.WARP, n)
    row_read = composition(row_major, Layout((thr, (vec, n // thr)), (vec, (1, thr * vec))))
    return [("column-wise (lane i reads row i)", col_read, access),
            ("row-wise (lanes read consecutive vectors)", row_read, access)]


def suggest_swizzle(dtype, row_bytes, access=128, *, rows=None) -> SwizzleSuggestion:
    """The cheapest ``Sw<B,M,S>`` that makes ``access`` conflict-free on a row-major tile of ``row_bytes`` rows.

    The tile is ``(rows, C):(C, 1)`` with ``C = row_bytes / sizeof(dtype)``
    elements per row (default ``rows``: 32, or what the access needs). ``access``:
    a vector width in bits (32/64/128, or ``"vec128"``...; ``"ldmatrix"`` is 128)
    checks the column-wise read (lane ``i`` reads row ``i``) and the row-wise read;
    ``"row128"`` (TMA rows); a TV layout over the tile's (rows, C) domain; or a
    TiledCopy. ``M`` is ``log2`` of the access vector in elements (vectors stay
    whole), ``B`` is as small as possible, and among those ``S`` is the
    smallest that XORs row (line) bits into the chunk bits conflict-free.

    Postcondition: ``result.conflict_free`` implies every checked access pattern
    is conflict-free on ``composition(result.swizzle, tile)``.

    >>> print(suggest_swizzle("bf16", 128, 128).swizzle)
    Sw<3,3,3>
    >>> print(suggest_swizzle("bf16", 64, "ldmatrix").swizzle)
    Sw<2,3,3>
    >>> print(suggest_swizzle("f32", 128, 32).swizzle)
    Sw<5,0,5>
    """
    t = rq.as_dtype("suggest_swizzle", dtype)
    if not it.is_int(row_bytes) or row_bytes <= 0 or (row_bytes * 8) % t.bits:
        raise layout_error(LayoutError, "suggest_swizzle", "row_bytes must hold a whole number of elements",
                           f"row_bytes={row_bytes!r}, {t.name}")
    cols = row_bytes * 8 // t.bits
    acc = access
    if isinstance(acc, str) and acc.lower() in ("ldmatrix", "ldsm", "stmatrix", "stsm"):
        acc = 128
    if isinstance(acc, str) and acc.lower().startswith("vec") and acc[3:].isdigit():
        acc = int(acc[3:])
    nrows = rows or 32
    if isinstance(acc, TiledCopy):
        tm = acc.tiler_mn
        nrows = max(nrows, tm[0])
        nrows = -(-nrows // tm[0]) * tm[0]
        if cols % tm[1]:
            raise layout_error(LayoutError, "suggest_swizzle", "the tiled copy's tile does not divide the row",
                               f"{cols} elements per row, tile {tm}")
    tile = Layout((nrows, cols), (cols, 1))
    patterns, vector_bits = _access_patterns(acc, t, tile)
    m = max(0, (vector_bits // t.bits).bit_length() - 1)
    before, (sw, after), found = _search_swizzle(tile, patterns, t, m)
    lines = _explain(t, row_bytes, access, tile, vector_bits, m, patterns, before, sw, after, found)
    return SwizzleSuggestion(sw, "\n".join(lines), before, after, found)


def _access_patterns(acc, t, tile) -> tuple:
    """``(patterns, vector_bits)``: the ``(name, access, vector_bits)`` patterns :func:`suggest_swizzle` checks for
    ``acc`` (a width, ``"row128"``, a TV layout or a TiledCopy) over the row-major ``tile``."""
    nrows, cols = tile.shape
    if it.is_int(acc) and not isinstance(acc, bool):
        if acc not in (8, 16, 32, 64, 128) or acc < t.bits:
            raise layout_error(LayoutError, "suggest_swizzle", "vector width must be 8..128 bits, at least one element",
                               f"{acc} bits for {t.name}")
        vec = acc // t.bits
        if cols % vec:
            raise layout_error(LayoutError, "suggest_swizzle", "a row is not a whole number of vectors",
                               f"{cols} elements, {vec} per vector")
        return _pattern_tvs(acc, nrows, cols, vec), acc
    if isinstance(acc, str) and acc.lower() in ("row128", "tma"):
        return [("TMA 128-byte rows", "row128", None)], 128
    if isinstance(acc, (Layout, TiledCopy)) or isinstance(acc, str):
        name = f"tiled copy of {acc.atom.name}" if isinstance(acc, TiledCopy) else f"TV layout {acc}"
        patterns = [(name, rq.parse(acc) if isinstance(acc, str) else acc, None)]
        return patterns, bank_conflicts(tile, patterns[0][1], t).vector_bits
    raise TypeError(f"suggest_swizzle: access must be a vector width, 'ldmatrix', 'row128', a TV layout "
                    f"or a TiledCopy, got {type(acc).__name__}")


def _search_swizzle(tile, patterns, t, m) -> tuple:
    """``(before, (swizzle, after), found)``: the reports on ``tile``, the cheapest ``Sw<B,m,S>`` (fewest bits, then
    smallest shift) that makes every pattern conflict-free (else the one with the fewest wavefronts), its reports,
    and whether it is conflict-free."""
    nrows, cols = tile.shape

    def evaluate(layout):
        return tuple(bank_conflicts(layout, p, t, vector_bits=vb) for _n, p, vb in patterns)

    elem_bits_total = (nrows * cols).bit_length() - 1
    line_elems = LINE_BYTES * 8 // t.bits
    bank_elems = BANK_BYTES * 8 // t.bits if t.bits <= 32 else 1
    max_b = max(0, (line_elems.bit_length() - 1) - max(m, bank_elems.bit_length() - 1))
    before = evaluate(tile)
    best = (Swizzle(0, m, 0), before)
    found = all(r.conflict_free for r in before)
    for b in range(1, max_b + 1) if not found else ():
        for s in range(b, elem_bits_total - m - b + 1):
            sw = Swizzle(b, m, s)
            reps = evaluate(composition(sw, tile))
            if sum(r.total_wavefronts for r in reps) < sum(r.total_wavefronts for r in best[1]):
                best = (sw, reps)
            if all(r.conflict_free for r in reps):
                found = True
                break
        if found:
            break
    return before, best, found


def _explain(t, row_bytes, access, tile, vector_bits, m, patterns, before, sw, after, found) -> list:
    """The lines of :func:`suggest_swizzle`'s explanation."""
    cols = tile.shape[1]
    row_bit = cols.bit_length() - 1
    line_elems = LINE_BYTES * 8 // t.bits
    shown = f"tiled copy of {access.atom.name}" if isinstance(access, TiledCopy) else (
        str(access) if isinstance(access, Layout) else repr(access))
    lines = [f"suggest_swizzle({t.name}, {row_bytes}-byte rows = {cols} elements, access {shown}):",
             f"  tile {tile}; {vector_bits}-bit accesses = {vector_bits // t.bits} element(s) -> M = {m} "
             f"(the low {m} offset bits stay put, so each vector stays contiguous)"]
    for (name, _p, _v), r in zip(patterns, before):
        lines.append(f"  unswizzled, {name}: {r.summary()}")
    if sw.bits == 0:
        lines.append("  no swizzle needed: Sw<0,...> (the identity) is already conflict-free" if found else
                     "  no swizzle found that helps")
        return lines
    lo, hi = m + sw.shift, m + sw.shift + sw.bits - 1
    unit = "row"
    if cols * t.bits < LINE_BYTES * 8 and lo >= (line_elems.bit_length() - 1):
        unit = "128-byte line"  # several short rows share one line of 32 banks
    elif lo < row_bit:
        unit = "column/row"
    lines.append(f"  {sw}: XORs offset bits {lo}..{hi} ({unit} index bits; rows start at bit {row_bit}) "
                 f"into the vector-slot bits {m}..{m + sw.bits - 1}, so {1 << sw.bits} consecutive "
                 f"{unit}s put the same column in {1 << sw.bits} different bank groups; "
                 f"B = {sw.bits} is the fewest bits that works, S = {sw.shift} the smallest shift that does")
    for (name, _p, _v), r in zip(patterns, after):
        lines.append(f"  swizzled, {name}: {r.summary()}")
    if not found:
        lines.append("  no conflict-free Sw<B,M,S> exists for this access; this is the best found")
    return lines
