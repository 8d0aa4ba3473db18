"""Access patterns as warp requests, for the reports of :mod:`cute_py.viz.banks` and :mod:`cute_py.viz.coalesce`.

The request model itself (which lane of which warp instruction touches which
elements, computed by evaluating layouts) is :mod:`cute_py.arch.sm90.requests`;
this module gives its requests the per-lane form the coalescing report walks
(:class:`Plan` of :class:`Request` of :class:`LaneAccess`), and the small input
helpers and report base the viz reports share.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..arch.sm90.requests import WARP, as_dtype, as_layout, element_offsets, requests_of  # noqa: F401 - for viz
from ..layouts import Swizzle, parse


@dataclass(frozen=True)
class LaneAccess:
    """One lane's part of a warp request: the elements it touches and their bit addresses."""

    lane: int
    thread: int
    indices: tuple
    bits: tuple  # bit address of each element

    def byte_range(self, elem_bits: int):
        lo = min(self.bits) // 8
        hi = (max(self.bits) + elem_bits - 1) // 8
        return lo, hi - lo + 1

    def units(self, elem_bits: int, unit_bits: int) -> set:
        """Indices of the ``unit_bits``-bit units (8: bytes, 32: bank words) that this lane's elements cover."""
        out = set()
        for b in self.bits:
            out.update(range(b // unit_bits, (b + elem_bits - 1) // unit_bits + 1))
        return out


@dataclass(frozen=True)
class Request:
    """One warp-wide memory instruction."""

    label: str
    lanes: tuple


@dataclass(frozen=True)
class Plan:
    """The requests of an access pattern over a memory layout."""

    description: str
    vector_bits: int
    requests: tuple
    elem_bits: int


class TextReport:
    """Base of the analysis results: ``str()`` is ``to_text()``, and a notebook shows it preformatted."""

    def __str__(self):
        return self.to_text()

    def _repr_html_(self):
        return f"<pre>{html.escape(str(self))}</pre>"


def as_swizzle(op: str, sw) -> Swizzle:
    """A Swizzle from a Swizzle, ``(B, M, S)``, ``"Sw<B,M,S>"`` or ``"B,M,S"``."""
    if isinstance(sw, Swizzle):
        return sw
    if isinstance(sw, str):
        text = sw.strip()
        if text[:1].isdigit():
            text = "Sw<" + text + ">"
        sw = parse(text)
        if isinstance(sw, Swizzle):
            return sw
    if isinstance(sw, (tuple, list)) and len(sw) == 3:
        return Swizzle(*sw)
    raise TypeError(f"{op}: expected a swizzle (Swizzle, (B,M,S) or 'Sw<B,M,S>'), got {sw!r}")


def offsets(op: str, layout, name: str = "layout") -> list:
    """``[layout(i) for i in range(size(layout))]``, checked to be non-negative integers (and not too many)."""
    return element_offsets(op, layout, name).tolist()


def plan(op, layout, access, t, addr_bits, *, vector_bits=None, side=None, space="smem") -> Plan:
    """Resolve ``access`` (TV layout, copy atom/op/tiled copy, named pattern, width) into a :class:`Plan`
    (:func:`cute_py.arch.sm90.requests.requests_of`, one :class:`LaneAccess` per lane)."""
    reqs = requests_of(op, layout, access, t, addr_bits, vector_bits=vector_bits, side=side, space=space)
    index, bits, access_of = reqs.index.tolist(), reqs.bits.tolist(), reqs.access.tolist()
    per_access = {}
    for e, a in enumerate(access_of):
        per_access.setdefault(a, []).append(e)
    lanes = [[] for _ in reqs.labels]
    for a, (q, lane, thread) in enumerate(zip(reqs.req.tolist(), reqs.lane.tolist(), reqs.thread.tolist())):
        es = per_access.get(a, [])
        lanes[q].append(LaneAccess(lane, thread, tuple(index[e] for e in es), tuple(bits[e] for e in es)))
    requests = tuple(Request(label, tuple(ls)) for label, ls in zip(reqs.labels, lanes))
    return Plan(reqs.description, reqs.vector_bits, requests, reqs.elem_bits)
