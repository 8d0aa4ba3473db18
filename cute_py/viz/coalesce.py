"""Global-memory coalescing: the 32-byte sectors and 128-byte lines each warp request touches.

The model: element ``i`` of the global layout is at byte
``base + gmem_layout(i) * sizeof_bits(dtype) / 8`` (``base`` defaults to 0, a
line-aligned buffer). A TV layout ``(thread, value) -> i`` is split into warp
requests exactly as for bank conflicts (threads ``32w .. 32w+31`` are warp
``w``; each thread's values are cut into vectors of up to 128 bits that are
contiguous and aligned, and vector ``g`` of a warp is one request). For each
request: the distinct bytes it reads (*useful* bytes), the 32-byte sectors and
128-byte lines that hold them, the minimum possible (``ceil(useful / 32)``
sectors, ``ceil(useful / 128)`` lines) and the efficiency ``useful / (32 *
sectors)``.

>>> import cute_py as cp
>>> r = coalescing(cp.Layout((32, 4), (4, 1)), cp.Layout(128), "f32")   # 16 B per lane, contiguous
>>> r.sectors, r.min_sectors, r.efficiency
((16,), (16,), 1.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _requests as rq
from ..layouts.errors import names_caller

__all__ = ["coalescing", "CoalescingReport", "RequestCoalescing", "SECTOR_BYTES", "LINE_BYTES"]

SECTOR_BYTES = 32
LINE_BYTES = 128


@dataclass(frozen=True)
class RequestCoalescing:
    """One warp request: useful bytes, sectors and lines touched, and their minimum."""

    label: str
    useful_bytes: int
    sectors: int
    lines: int
    min_sectors: int
    min_lines: int

    @property
    def efficiency(self) -> float:
        """``useful_bytes / (32 * sectors)`` (1.0 for a perfectly coalesced request)."""
        return self.useful_bytes / (SECTOR_BYTES * self.sectors) if self.sectors else 1.0


@dataclass(frozen=True)
class CoalescingReport(rq.TextReport):
    """Coalescing of a TV layout over a global layout: per-request tuples and overall ``efficiency``.

    >>> import cute_py as cp
    >>> r = coalescing(cp.Layout((32, 2), (1, 32)), cp.Layout(64), "f32")   # two fully coalesced requests
    >>> r.sectors, r.lines, r.coalesced, r.summary()
    ((4, 4), (1, 1), True, '2 warp requests: 8 sectors (minimum 8), 2 lines (minimum 2); efficiency 100.0%')
    """

    layout: object
    dtype: object
    access: str
    vector_bits: int
    requests: tuple

    @property
    def sectors(self) -> tuple:
        return tuple(r.sectors for r in self.requests)

    @property
    def lines(self) -> tuple:
        return tuple(r.lines for r in self.requests)

    @property
    def min_sectors(self) -> tuple:
        return tuple(r.min_sectors for r in self.requests)

    @property
    def min_lines(self) -> tuple:
        return tuple(r.min_lines for r in self.requests)

    @property
    def useful_bytes(self) -> int:
        return sum(r.useful_bytes for r in self.requests)

    @property
    def total_sectors(self) -> int:
        return sum(self.sectors)

    @property
    def efficiency(self) -> float:
        """Useful bytes over the bytes of all sectors touched, over all requests."""
        return self.useful_bytes / (SECTOR_BYTES * self.total_sectors) if self.total_sectors else 1.0

    @property
    def coalesced(self) -> bool:
        """Every request touches the minimum number of sectors."""
        return all(r.sectors == r.min_sectors for r in self.requests)

    def summary(self) -> str:
        n = len(self.requests)
        return (f"{n} warp request{'s' if n != 1 else ''}: {self.total_sectors} sectors "
                f"(minimum {sum(self.min_sectors)}), {sum(self.lines)} lines (minimum {sum(self.min_lines)}); "
                f"efficiency {self.efficiency:.1%}")

    def to_text(self, max_requests: int = 16) -> str:
        lines = [f"Global-memory coalescing: {self.layout} ({self.dtype.name})",
                 f"  access: {self.access}; {self.vector_bits}-bit accesses; "
                 f"{SECTOR_BYTES}-byte sectors, {LINE_BYTES}-byte lines",
                 "  " + self.summary()]
        for i, r in enumerate(self.requests[:max_requests]):
            lines.append(f"  request {i} ({r.label}): {r.useful_bytes} B in {r.sectors} sectors (min {r.min_sectors}), "
                         f"{r.lines} lines (min {r.min_lines}), efficiency {r.efficiency:.1%}")
        if len(self.requests) > max_requests:
            lines.append(f"  ... {len(self.requests) - max_requests} more requests")
        return "\n".join(lines)


@names_caller
def coalescing(tv_layout, gmem_layout, dtype, *, vector_bits=None, base: int = 0) -> CoalescingReport:
    """Sectors, lines and efficiency of each warp request of ``tv_layout`` over ``gmem_layout``.

    ``tv_layout`` maps ``(thread, value)`` to a domain index of ``gmem_layout``
    (or is a TiledCopy / copy atom, whose global-memory side is used, or a
    pattern name as in :func:`cute_py.viz.bank_conflicts`). ``base`` is the
    buffer's byte address.

    A layout or an access of more than
    :data:`~cute_py.arch.sm90.requests.ANALYSIS_LIMIT` elements raises
    :class:`~cute_py.layouts.errors.SizeLimitError` at once.

    Postconditions: for every request, ``min_sectors <= sectors``,
    ``min_lines <= lines`` and ``0 < efficiency <= 1``.

    >>> import cute_py as cp
    >>> r = coalescing(cp.Layout(32, 8), cp.Layout(256), "f32")    # thread t reads float 8t
    >>> r.sectors[0], r.min_sectors[0], r.lines[0], f"{r.efficiency:.1%}"
    (32, 4, 8, '12.5%')
    """
    layout = rq.as_layout("coalescing", gmem_layout, "gmem_layout")
    t = rq.as_dtype("coalescing", dtype)
    addr = [base * 8 + o * t.bits for o in rq.offsets("coalescing", layout, "gmem_layout")]
    plan = rq.plan("coalescing", layout, tv_layout, t, addr, vector_bits=vector_bits, space="gmem")
    reqs = []
    for req in plan.requests:
        useful = set()
        for acc in req.lanes:
            useful |= acc.units(t.bits, 8)
        nbytes = len(useful)
        reqs.append(RequestCoalescing(req.label, nbytes, len({a // SECTOR_BYTES for a in useful}),
                                      len({a // LINE_BYTES for a in useful}),
                                      math.ceil(nbytes / SECTOR_BYTES), math.ceil(nbytes / LINE_BYTES)))
    return CoalescingReport(layout, t, plan.description, plan.vector_bits, tuple(reqs))
