"""Shared-memory banks: how many wavefronts a warp's access takes, and which lanes conflict.

The model (what every number below means)
-----------------------------------------
* Shared memory is 32 banks of 4-byte words: the byte at address ``a`` is in
  word ``a // 4`` and bank ``(a // 4) % 32``. Its 16-byte *chunk* is
  ``(a // 16) % 8``, the group of banks ``4c .. 4c+3`` within a 128-byte line.
* Addresses come from evaluating the layout: domain index ``i`` is at byte
  ``layout(i) * sizeof_bits(dtype) / 8`` (the buffer starts at a 1024-byte
  aligned address, so swizzles act on absolute addresses as the hardware does).
* A *warp request* is one memory instruction of one warp: each lane accesses one
  vector of W bits. The hardware serves it in phases: W <= 32 bits: one phase of
  32 lanes; W = 64: two phases of 16 lanes (half-warps); W = 128: four phases of
  8 lanes (quarter-warps). ldmatrix/stmatrix: each address lane moves a 16-byte
  row (one phase per 8x8 matrix); TMA (``"row128"``): one 128-byte row per request.
* Within a phase, the number of *wavefronts* (shared-memory cycles) is the
  largest number of distinct 4-byte words that fall in one bank. Lanes reading
  the same word are served together (broadcast); different words in the same
  bank are an n-way conflict. A request's wavefronts are the sum over its phases;
  its ideal is the sum over phases of ``ceil(distinct words / 32)`` (at least 1),
  i.e. one wavefront per phase for accesses of up to 128 bits. Phases are never
  merged (the hardware may merge 64-bit half-warps that do not conflict; this
  model is the documented worst case).

The requests come from :mod:`cute_py.arch.sm90.requests`; the count works on
all of them at once (numpy). :mod:`cute_py.viz.banks` adds the bank map and the
swizzle comparisons and suggestions on top.

>>> from cute_py.layouts import Layout
>>> r = bank_conflicts(Layout((32, 32), (32, 1)), "vec32", "f32")
>>> r.max_ways, r.wavefronts[0], r.ideal_wavefronts[0]
(32, 32, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...layouts.errors import names_caller
from .requests import Requests, as_dtype, as_layout, element_bits, lanes_per_phase, requests_of

__all__ = ["BankConflict", "RequestBanks", "BankConflictReport", "bank_conflicts", "count_bank_conflicts",
           "NUM_BANKS", "BANK_BYTES", "CHUNK_BYTES", "LINE_BYTES"]

NUM_BANKS = 32
BANK_BYTES = 4
CHUNK_BYTES = 16
LINE_BYTES = 128


def _np():
    import numpy

    return numpy


@dataclass(frozen=True)
class BankConflict:
    """Distinct words of one bank within one phase of one request: ``words`` is ``((byte address, lanes), ...)``."""

    request: int
    label: str
    phase: int
    bank: int
    words: tuple

    @property
    def ways(self) -> int:
        return len(self.words)

    def __str__(self):
        ws = ", ".join(f"{a:#06x} (lane{'s' if len(ls) > 1 else ''} {','.join(map(str, ls))})" for a, ls in self.words[:8])
        if len(self.words) > 8:
            ws += f", ... ({len(self.words) - 8} more)"
        return f"request {self.request} ({self.label}), phase {self.phase}, bank {self.bank}: {self.ways}-way: {ws}"


@dataclass(frozen=True)
class RequestBanks:
    """One warp request: wavefronts and ideal wavefronts per phase, and its largest conflict."""

    label: str
    phase_wavefronts: tuple
    phase_ideal: tuple
    max_ways: int

    @property
    def wavefronts(self) -> int:
        return sum(self.phase_wavefronts)

    @property
    def ideal(self) -> int:
        return sum(self.phase_ideal)


@dataclass(frozen=True)
class BankConflictReport:
    """Bank-conflict analysis of an access pattern over a shared-memory layout (see the module docstring).

    Attributes: ``max_ways`` (largest n-way conflict, 1 = conflict-free),
    ``wavefronts`` / ``ideal_wavefronts`` (per warp request),
    ``total_wavefronts`` / ``total_ideal``, ``conflicts`` (every bank of every
    phase with more than one distinct word, with the lanes involved),
    ``requests`` (per-request details), ``vector_bits``, ``lanes_per_phase``.
    ``str()`` is :meth:`to_text`.

    >>> from cute_py.layouts import Layout
    >>> r = bank_conflicts(Layout(256), Layout((32, 2), (2, 1)), "f32")   # 64-bit: two half-warps
    >>> r.vector_bits, r.lanes_per_phase, r.requests[0].phase_wavefronts, r.summary()
    (64, 16, (1, 1), '1 warp request: 2 wavefronts (ideal 2); conflict-free')
    """

    layout: object
    dtype: object
    access: str
    vector_bits: int
    lanes_per_phase: int
    requests: tuple
    conflicts: tuple = field(repr=False)

    @property
    def wavefronts(self) -> tuple:
        return tuple(r.wavefronts for r in self.requests)

    @property
    def ideal_wavefronts(self) -> tuple:
        return tuple(r.ideal for r in self.requests)

    @property
    def total_wavefronts(self) -> int:
        return sum(self.wavefronts)

    @property
    def total_ideal(self) -> int:
        return sum(self.ideal_wavefronts)

    @property
    def max_ways(self) -> int:
        return max((r.max_ways for r in self.requests), default=0)

    @property
    def conflict_free(self) -> bool:
        return self.max_ways <= 1

    def summary(self) -> str:
        n = len(self.requests)
        tw, ti = self.total_wavefronts, self.total_ideal
        verdict = "conflict-free" if self.conflict_free else \
            f"{self.max_ways}-way conflicts, {tw / ti:.2f}x the ideal"
        return f"{n} warp request{'s' if n != 1 else ''}: {tw} wavefronts (ideal {ti}); {verdict}"

    def to_text(self, max_requests: int = 16, max_conflicts: int = 8) -> str:
        """The report as text: the summary, the first ``max_requests`` requests and the first ``max_conflicts``
        conflicts."""
        lpp = self.lanes_per_phase
        lines = [f"Shared-memory bank conflicts: {self.layout} ({self.dtype.name})",
                 f"  access: {self.access}; {self.vector_bits}-bit accesses, "
                 f"phases of {lpp} lanes ({NUM_BANKS} banks x {BANK_BYTES} B)",
                 "  " + self.summary()]
        shown = self.requests[:max_requests]
        for i, r in enumerate(shown):
            lines.append(f"  request {i} ({r.label}): {r.wavefronts} wavefronts (ideal {r.ideal}), "
                         f"phases {list(r.phase_wavefronts)}, max {r.max_ways}-way")
        if len(self.requests) > len(shown):
            lines.append(f"  ... {len(self.requests) - len(shown)} more requests")
        if self.conflicts:
            k = min(max_conflicts, len(self.conflicts))
            lines.append(f"  conflicts (first {k} of {len(self.conflicts)}):")
            lines += ["    " + str(c) for c in self.conflicts[:k]]
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()


def _words(reqs: Requests, lpp: int):
    """Every (request, phase, word, lane) that the requests touch, as four int64 arrays."""
    np = _np()
    eb, bits = reqs.elem_bits, reqs.bits
    lo, hi = bits // (BANK_BYTES * 8), (bits + eb - 1) // (BANK_BYTES * 8)
    span = int((hi - lo).max()) + 1 if len(bits) else 1
    words = lo[:, None] + np.arange(span)
    valid = words <= hi[:, None]
    per = np.broadcast_to(reqs.access[:, None], words.shape)[valid]
    return reqs.req[per], reqs.lane[per] // lpp, words[valid], reqs.lane[per]


def _group_starts(*keys):
    """Indices where a run of equal ``keys`` (parallel sorted arrays) starts."""
    np = _np()
    n = len(keys[0])
    start = np.zeros(n, dtype=bool)
    if n:
        start[0] = True
        for k in keys:
            start[1:] |= k[1:] != k[:-1]
    return np.flatnonzero(start)


def count_bank_conflicts(reqs: Requests, layout, t, access_desc=None) -> BankConflictReport:
    """Wavefronts of every phase of every request (the model in the module docstring), and the conflicts."""
    np = _np()
    lpp = lanes_per_phase(reqs.vector_bits)
    r, p, w, lane = _words(reqs, lpp)
    order = np.lexsort((lane, w, w % NUM_BANKS, p, r))
    r, p, w, lane = r[order], p[order], w[order], lane[order]
    b = w % NUM_BANKS
    word_at = _group_starts(r, p, w)                       # distinct words of each phase
    wr, wp, wb = r[word_at], p[word_at], b[word_at]
    bank_at = _group_starts(wr, wp, wb)                    # banks of each phase, with their distinct words
    ways = np.diff(np.append(bank_at, len(wr)))
    br, bp = wr[bank_at], wp[bank_at]
    phase_at = _group_starts(br, bp)
    phase_ways = np.maximum.reduceat(ways, phase_at) if len(phase_at) else ways
    phase_words = np.add.reduceat(ways, phase_at) if len(phase_at) else ways
    phase_req, phase_no = br[phase_at], bp[phase_at]
    per_req = {}
    for q, pw, pd in zip(phase_req.tolist(), phase_ways.tolist(), phase_words.tolist()):
        per_req.setdefault(q, []).append((pw, max(1, -(-pd // NUM_BANKS))))
    requests = []
    for q, label in enumerate(reqs.labels):
        ph = per_req.get(q, [])
        requests.append(RequestBanks(label, tuple(x for x, _ in ph), tuple(y for _, y in ph),
                                     max((x for x, _ in ph), default=0)))
    conflicts = []
    word_end = np.append(word_at[1:], len(r))
    for k in np.flatnonzero(ways > 1).tolist():
        first = bank_at[k]
        words = []
        for j in range(first, first + int(ways[k])):
            lanes = tuple(sorted(set(lane[word_at[j]:word_end[j]].tolist())))
            words.append((int(w[word_at[j]]) * BANK_BYTES, lanes))
        q = int(wr[first])
        conflicts.append(BankConflict(q, reqs.labels[q], int(wp[first]), int(wb[first]), tuple(words)))
    return BankConflictReport(layout, t, access_desc or reqs.description, reqs.vector_bits, lpp, tuple(requests),
                              tuple(conflicts))


@names_caller
def bank_conflicts(smem_layout, access, dtype, *, vector_bits=None, side=None) -> BankConflictReport:
    """Wavefronts and n-way bank conflicts of ``access`` over ``smem_layout`` (model: module docstring).

    ``access`` is a TV layout ``(thread, value) -> domain index of smem_layout``
    (threads ``32w .. 32w+31`` form warp ``w``; each thread's values are split into
    vectors of ``vector_bits``, default the widest contiguous aligned width up to
    128 bits, and vector ``g`` of a warp is one request); a copy atom, copy op
    (name or object) or TiledCopy (its shared-memory side, or ``side``; a
    TiledCopy's tile is repeated over the whole layout); or a named pattern:
    ``"row128"`` (TMA rows), ``"vec32"``/``"vec64"``/``"vec128"`` (or 32/64/128:
    lanes read consecutive vectors in domain order).

    A layout or an access of more than
    :data:`~cute_py.arch.sm90.requests.ANALYSIS_LIMIT` elements raises
    :class:`~cute_py.layouts.errors.SizeLimitError` at once.

    Postconditions: ``len(result.wavefronts) == len(result.ideal_wavefronts)`` ==
    number of warp requests; ``wavefronts[r] >= ideal_wavefronts[r]``;
    ``result.conflict_free == (result.max_ways <= 1)``.

    >>> from cute_py.layouts import Layout
    >>> tv = Layout((32, 8), (1, 64))          # lane i reads row i, 8 bf16 = 128 bits
    >>> bank_conflicts("(64,64):(64,1)", tv, "bf16").max_ways
    8
    >>> bank_conflicts("Sw<3,3,3> o 0 o (64,64):(64,1)", tv, "bf16").conflict_free
    True
    """
    layout = as_layout("bank_conflicts", smem_layout, "smem_layout")
    t = as_dtype("bank_conflicts", dtype)
    addr = element_bits("bank_conflicts", layout, t.bits, name="smem_layout")
    reqs = requests_of("bank_conflicts", layout, access, t, addr, vector_bits=vector_bits, side=side, space="smem")
    return count_bank_conflicts(reqs, layout, t)
