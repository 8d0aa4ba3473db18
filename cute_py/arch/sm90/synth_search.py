"""The search behind :func:`~cute_py.arch.sm90.synth.synthesize_smem_layout`: bank conflicts as GF(2) ranks.

A layout of a ``2^a x 2^b`` tile that keeps coordinate bits apart is a linear map over GF(2) from the
``k = a + b`` bits of the domain index to the ``k`` bits of the element offset. The candidates here are
``S o base``: ``base`` a compact order of the tile (mode 1 contiguous, ``"K"``, or mode 0, ``"MN"``) and
``S`` an offset map that XORs higher offset bits into lower ones (a swizzle; bijective by construction).

In offset bits, with elements of ``2^e`` bits: bits below ``lo = max(0, 5 - e)`` choose a byte in a
4-byte word, bits ``lo .. hi-1`` (``hi = 10 - e``) are the bank, the bits above are the 128-byte *line*.
One phase of an access reads a coset ``x0 + U`` of a subspace ``U`` of index bits (the lanes' bits and the
vector's), so its words form a coset too, and every bank holds as many of them: the phase costs
``2^(rank(word bits of L U) - rank(bank bits of L U))`` wavefronts, exactly what the bank analysis counts.
It is conflict-free when no ``u`` in ``U`` moves to another line without moving to another bank.

The vectors stay whole when their bits map to the lowest offset bits in order, so ``S`` may only XOR into
bits at or above the widest vector (``v``). A swizzle ``Sw<B,M,S>`` costs ``B`` XOR terms; the F2 family
lets each bank bit at or above ``v`` XOR any set of line bits, one term each.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import ComposedLayout, Layout, Swizzle, int_tuple as it
from ...layouts.errors import LayoutError
from ...layouts.f2 import echelon
from ...layouts.f2_algebra import bits_of
from .smem import smem_atom, tile_smem
from .synth_access import linear_form

__all__ = ["BaseModel", "Candidate", "base_models", "swizzle_candidates", "f2_search", "apply_images",
           "covering_bound", "canonical_swizzle", "EXHAUSTIVE_BITS"]

_OP = "synthesize_smem_layout"

EXHAUSTIVE_BITS = 16
"""The F2 search tries XOR matrices cheapest first, at most ``2^EXHAUSTIVE_BITS`` of them: all of them when
there are no more (every matrix of up to 16 cells, or every one below a cost); past it, the result says
the search was not exhaustive."""


def _rank(vectors) -> int:
    return len(echelon(vectors))


def apply_images(images, x: int) -> int:
    """The GF(2)-linear map with bit images ``images`` at ``x``.

    >>> apply_images([1, 6, 4], 0b011)
    7
    """
    out, j = 0, 0
    while x:
        if x & 1:
            out ^= images[j]
        x >>= 1
        j += 1
    return out


@dataclass
class BaseModel:
    """One base order of the tile and every access over it: ``forms[i]`` is access ``i``'s AccessForm (None
    where it cannot be served over this base, with the reason in ``refused``)."""

    major: str
    layout: Layout
    images: list          # base(2^j) for each index bit j
    k: int
    lo: int
    hi: int
    v: int                # offset bits the vectors need kept in place
    forms: list
    refused: dict

    @property
    def inner_runs(self) -> int:
        """How many contiguous runs the base cuts its contiguous mode into (K: a row, MN: a column): one TMA
        box each, since a box's inner extent is contiguous in shared memory."""
        a = it.product(self.layout.shape[0]).bit_length() - 1
        first, bits = (a, self.k - a) if self.major == "K" else (0, a)
        run = 0
        while run < bits and self.images[first + run] == 1 << run:
            run += 1
        return 1 << (bits - run)

    def offset_spaces(self, i):
        """Access ``i``'s phase subspaces as bases of offsets (``base`` applied)."""
        return [[apply_images(self.images, u) for u in space] for space in self.forms[i].phases]

    def ways(self, sw_images, spaces) -> int:
        """Largest wavefront count of one phase among ``spaces`` (offset bases) after the offset map ``sw``."""
        word = ((1 << self.k) - 1) & ~((1 << self.lo) - 1)
        bank = word & ((1 << self.hi) - 1)
        worst = 1
        for sp in spaces:
            img = [apply_images(sw_images, x) for x in sp]
            worst = max(worst, 1 << (_rank(x & word for x in img) - _rank(x & bank for x in img)))
        return worst



def covering_bound(model: BaseModel, indices) -> tuple:
    """``(bound, span)``: the fewest wavefronts the worst phase of the accesses ``indices`` can take together
    under any bijective layout that is linear over GF(2) (``S o base`` for every offset map ``S``: both
    families), and the number of index bits their phases span.

    The covering argument: when the phases read every nonzero combination of ``span`` index bits and
    ``span`` exceeds the ``hi`` word and bank bits of an offset, a linear bijection maps some combination
    ``u`` to an offset whose bank bits are zero and whose line bits are not (the combinations with zero bank
    bits form a subspace of dimension at least ``span - (hi - lo)``, and at most ``lo`` of its dimensions stay
    within a word), so the phase that reads ``u`` holds two words of one bank: the bound is 2. Otherwise it is
    1: one phase reads at most 128 bytes, so it alone never forces a conflict. Only TMA's rows depend on the
    base; the phases of a TV layout are the same over every base, so for them the bound holds for any linear
    bijection.
    """
    seen = set()
    for i in indices:
        for sp in model.forms[i].phases:
            elems = [0]
            for x in sp:
                elems = elems + [y ^ x for y in elems]
            seen.update(y for y in elems if y)
    span = _rank(seen)
    return (2 if len(seen) + 1 == 1 << span and span > model.hi else 1), span


def _bases(tile_shape, t) -> list:
    """``(major, layout)`` of each distinct base order: the compact row-major (K) and column-major (MN) tile,
    and the canonical GMMA atoms of each major tiled over it (their order under the swizzle)."""
    rows, cols = tile_shape
    out, seen = [], set()
    for major in ("K", "MN"):
        layouts = [Layout((rows, cols), (cols, 1)) if major == "K" else Layout((rows, cols), (1, rows))]
        for sw_bytes in (0, 32, 64, 128):
            try:
                tiled = tile_smem(smem_atom(major, sw_bytes, t), rows, cols, major=major)
            except LayoutError:                     # the atom does not divide the tile
                continue
            layouts.append(tiled.inner if isinstance(tiled, ComposedLayout) else tiled)
        for layout in layouts:
            key = (major, tuple(bits_of(_OP, layout)))
            if key not in seen:
                seen.add(key)
                out.append((major, layout))
    return out


def base_models(tile_shape, t, accesses) -> list:
    """The :class:`BaseModel` of each base order (``_bases``)."""
    rows, cols = tile_shape
    k = (rows * cols).bit_length() - 1
    e = t.bits.bit_length() - 1
    out = []
    for major, layout in _bases(tile_shape, t):
        forms, refused = [], {}
        for i, acc in enumerate(accesses):
            if acc.major is not None and acc.major != major:
                forms.append(None)
                refused[i] = (f"{acc} moves the box with mode {1 if acc.major == 'K' else 0} contiguous "
                              f"(global memory's order), so the tile must keep that mode contiguous")
                continue
            try:
                forms.append(linear_form(acc, layout, t))
            except LayoutError as err:
                if err.rule != "not a vector access":
                    raise
                forms.append(None)
                refused[i] = f"{acc}: its {acc.vector_bits}-bit vectors are not whole with mode " \
                             f"{1 if major == 'K' else 0} contiguous"
        images = bits_of(_OP, layout)
        vbits = [len(f.vector) for f in forms if f is not None]
        v = max(vbits, default=0)
        for i, f in enumerate(forms):                  # every vector's bits must be the lowest offset bits
            if f is not None and any(apply_images(images, c) != 1 << b for b, c in enumerate(f.vector)):
                forms[i], refused[i] = None, f"{accesses[i]}: its vector does not map to the lowest offset bits"
        out.append(BaseModel(major, layout, images, k, max(0, 5 - e), min(k, 10 - e), v, forms, refused))
    return out


@dataclass(frozen=True)
class Candidate:
    """A layout found by a search: ``base`` (a BaseModel), the offset map (``swizzle`` or F2 ``xor`` cells
    ``((source bit, target bit), ...)``), its cost (XOR terms) and the worst phase of each access."""

    base: BaseModel
    swizzle: Swizzle | None
    xor: tuple
    cost: int
    ways: tuple

    @property
    def max_ways(self) -> int:
        return max(self.ways, default=1)

    def offset_images(self) -> list:
        """The offset map's bit images."""
        k = self.base.k
        if self.swizzle is not None:
            return [self.swizzle(1 << b) for b in range(k)]
        img = [1 << b for b in range(k)]
        for s, d in self.xor:
            img[s] ^= 1 << d
        return img


def canonical_swizzle(sw: Swizzle, t) -> bool:
    """``Sw<B,4,3>`` on bytes: the swizzles TMA and wgmma know."""
    return sw.bits == 0 or (sw.base + (t.bits // 8).bit_length() - 1 == 4 and sw.shift == 3 and t.bits >= 8)


def swizzle_candidates(model: BaseModel, t) -> list:
    """Every ``Sw<B,M,S>`` (``B >= 0``, ``M >= v``, ``S >= B``, within the tile's bits) over ``model``'s base
    with each access's worst phase, cheapest first (then the TMA/GMMA ones, then by ``S`` and ``M``)."""
    spaces = [model.offset_spaces(i) if f is not None else [] for i, f in enumerate(model.forms)]
    k = model.k
    found = [Swizzle(0, 0, 0)]
    for m in range(model.v, k):
        for b in range(1, k - m):
            for s in range(b, k - m - b + 1):
                found.append(Swizzle(b, m, s))
    out = []
    for sw in found:
        img = [sw(1 << j) for j in range(k)]
        ways = tuple(model.ways(img, sp) for sp in spaces)
        out.append(Candidate(model, sw, (), sw.bits, ways))
    out.sort(key=lambda c: (c.cost, not canonical_swizzle(c.swizzle, t), c.swizzle.shift, c.swizzle.base))
    return out


def _cells(model: BaseModel, spaces) -> tuple:
    """The XOR cells that can matter: (line source bit, bank target bit >= v)."""
    src = 0
    for sps in spaces:
        for sp in sps:
            for x in sp:
                src |= x >> model.hi << model.hi
    sources = [j for j in range(model.hi, model.k) if src >> j & 1]
    targets = list(range(max(model.v, model.lo), model.hi))
    return tuple((s, d) for s in sources for d in targets)


def _popcount(masks):
    out = masks & 0
    for b in range(int(masks.max()).bit_length() if len(masks) else 0):
        out = out + ((masks >> b) & 1)
    return out


def _masks(n: int, max_cost):
    """``(masks, complete)``: the XOR matrices to try as cell masks, cheapest first: all of them up to
    ``max_cost`` cells (None: any), unless there are more than ``2^EXHAUSTIVE_BITS``; then that many."""
    import itertools

    import numpy as np

    top = n if max_cost is None else min(n, max_cost)
    out = []
    for c in range(top + 1):
        for combo in itertools.combinations(range(n), c):
            out.append(sum(1 << i for i in combo))
            if len(out) > 1 << EXHAUSTIVE_BITS:
                return np.array(out[:-1], dtype=np.int64), False
    return np.array(out, dtype=np.int64), True


def f2_search(model: BaseModel, max_cost=None):
    """``(cells, masks, ways, costs, exhaustive)``: the F2 family over ``model``'s base (up to ``max_cost``
    XOR terms), evaluated at once (numpy): ``ways[i][j]`` is access ``i``'s worst phase under XOR matrix
    ``masks[j]`` (bit ``c`` of a mask sets ``cells[c]``: line bit ``s`` XORed into bank bit ``d``), ``costs[j]``
    its number of terms; ``exhaustive``: every matrix up to ``max_cost`` was tried."""
    import numpy as np

    spaces = [model.offset_spaces(i) if f is not None else [] for i, f in enumerate(model.forms)]
    cells = _cells(model, spaces)
    masks, exhaustive = _masks(len(cells), max_cost)
    word = ((1 << model.k) - 1) & ~((1 << model.lo) - 1)
    bank = word & ((1 << model.hi) - 1)
    shift = {}                                       # line bit -> its contribution to the bank bits, per mask

    def flips(line: int):
        if line not in shift:
            acc = np.zeros_like(masks)
            for c, (s, d) in enumerate(cells):
                if line >> s & 1:
                    acc ^= ((masks >> c) & 1) << d
            shift[line] = acc
        return shift[line]

    ways = []
    for sps in spaces:
        worst = np.ones(len(masks), dtype=np.int64)
        for sp in sps:
            elems = [0]
            for x in sp:
                elems = elems + [y ^ x for y in elems]
            word_zero = sum(1 for x in elems if not x & word)
            zero = np.zeros(len(masks), dtype=np.int64)
            for x in elems:
                line, b = x & ~((1 << model.hi) - 1), x & bank
                zero += flips(line) == b if line else (b == 0)
            worst = np.maximum(worst, zero // word_zero)
        ways.append(worst)
    return cells, masks, ways, _popcount(masks), exhaustive


def f2_candidate(model: BaseModel, cells, mask: int, ways) -> Candidate:
    """The Candidate of one XOR matrix of :func:`f2_search`."""
    xor = tuple(cells[c] for c in range(len(cells)) if mask >> c & 1)
    return Candidate(model, None, xor, len(xor), tuple(int(w) for w in ways))
