"""The kernel's fixed resources, each with a name: warpgroups, register budgets and named-barrier ids.

Hopper gives a CTA 16 named barriers (``bar.sync id, threads``); id 0 is the
one ``__syncthreads`` uses. :data:`NAMED_BARRIERS` reserves every id the
kernel uses, like CUTLASS's ``ReservedNamedBarriers`` (``cutlass/arch/barrier.h``)::

    id  0       __syncthreads (the whole CTA)
    ids 1, 2    kBarEpilogue + w   warpgroup w's 128 threads: its staging chunk is written, or its buffer free
    ids 3, 4    kBarFixup + g      the threads holding tile group g's accumulators: a partial tile's arrival
                                   count is read (split-K, stream-K; g = w under ping-pong, else 0)
    ids 5, 6    kBarPingPong + w   both consumer warpgroups: the other's mainloop is done, w may issue
    ids 7..15   free

:func:`named_barriers` returns the reservations a kernel uses, checked (when
emitting) to lie in 1..15, to hold one id per warpgroup that uses them, and
not to overlap. The kernel names each by a ``constexpr`` and never by its
number.

>>> [(b.name, b.ids) for b in named_barriers({"kBarEpilogue": 2, "kBarPingPong": 2})]
[('kBarEpilogue', (1, 2)), ('kBarPingPong', (5, 6))]
"""

from __future__ import annotations

from dataclasses import dataclass

from .checks import require

__all__ = ["NamedBarrier", "NAMED_BARRIERS", "named_barriers", "NUM_NAMED_BARRIERS", "SYNCTHREADS_BARRIER",
           "WARPGROUP_THREADS", "MBARRIER_BYTES", "STATIC_FLAGS_BYTES", "PRODUCER_REGS", "CONSUMER_REGS", "STAGING_ROWS",
           "STAGING_ROW_BYTES", "STAGING_BUFFERS", "staging_cols"]

NUM_NAMED_BARRIERS = 16
"""Named barriers per CTA (PTX ``bar.sync``: ids 0..15)."""
SYNCTHREADS_BARRIER = 0
"""The id ``__syncthreads()`` uses."""
WARPGROUP_THREADS = 128
"""Threads of a warpgroup (4 warps): the unit of ``wgmma`` and ``setmaxnreg``, and of the kernel's roles."""
MBARRIER_BYTES = 8
"""Bytes of one mbarrier object in shared memory (64-bit, 8-byte aligned)."""
STATIC_FLAGS_BYTES = 16
"""Static shared memory of a scheduler's flags, at most (split-K and stream-K: one int per tile group)."""
PRODUCER_REGS = 40
"""Registers per thread the producer warpgroup keeps (``setmaxnreg.dec``): it only issues TMA copies."""
CONSUMER_REGS = 232
"""Registers per thread a consumer warpgroup takes (``setmaxnreg.inc``): the accumulators live there. With one
producer warpgroup at 40, two consumer warpgroups at 232 use 128 * (40 + 2 * 232) = 64512 of the 65536
registers of an SM."""
STAGING_ROWS = 64
"""Rows of a TMA-store staging chunk: one consumer warpgroup's 64-row slab of the tile (a wgmma block's M)."""
STAGING_ROW_BYTES = 128
"""Bytes of a staging row: the 128-byte swizzle span, one row of the TMA store box (64 or 32 for tiles whose width
no 128-byte chunk divides: :func:`staging_cols`)."""


def staging_cols(bn: int, nbytes: int) -> int | None:
    """The columns of a TMA-store staging chunk for a tile ``bn`` wide of ``nbytes``-byte D: the widest chunk of
    128-, 64- or 32-byte rows (under the swizzle of that width) whose width divides ``bn``, so that the chunks
    cover the tile's columns exactly; None when none does.

    >>> staging_cols(256, 2), staging_cols(160, 2), staging_cols(144, 2), staging_cols(160, 4), staging_cols(8, 2)
    (64, 32, 16, 32, None)
    """
    if not isinstance(bn, int) or bn <= 0:
        return None
    return next((c for c in (STAGING_ROW_BYTES // nbytes, STAGING_ROW_BYTES // 2 // nbytes,
                             STAGING_ROW_BYTES // 4 // nbytes) if bn % c == 0), None)
STAGING_BUFFERS = 2
"""Staging buffers per consumer warpgroup: a chunk is written into one while the TMA store of the other runs."""


@dataclass(frozen=True)
class NamedBarrier:
    """A reservation of named-barrier ids ``first .. first + count - 1``: its ``constexpr`` name in the kernel,
    who syncs on it (a C expression of the thread count) and what it orders."""

    name: str
    first: int
    count: int
    threads: str
    purpose: str

    @property
    def ids(self) -> tuple:
        return tuple(range(self.first, self.first + self.count))


NAMED_BARRIERS = (
    NamedBarrier("kBarEpilogue", 1, 2, "kWarpGroupThreads",
                 "warpgroup w's staging chunk is written, or its buffer free"),
    NamedBarrier("kBarFixup", 3, 2, "kFixupThreads", "tile group g's arrival count on a partial tile is read"),
    NamedBarrier("kBarPingPong", 5, 2, "2 * kWarpGroupThreads",
                 "the other warpgroup's mainloop is done: w may issue"),
)
"""Every named barrier the kernel may use (see the module docstring)."""


def named_barriers(uses: dict) -> tuple:
    """The reservations named in ``uses`` (name -> ids the kernel uses: one per warpgroup that syncs on its
    own), in table order; raises :class:`~cute_py.emit.checks.EmitError` if a use does not fit its reservation,
    an id falls outside 1..15 or two reservations in use share an id."""
    table = {b.name: b for b in NAMED_BARRIERS}
    out = []
    for name, n in uses.items():
        require(name in table, "named_barriers", "every named barrier the kernel uses is reserved",
                barrier=name, reserved=tuple(table))
        b = table[name]
        require(1 <= n <= b.count, "named_barriers", f"{name} reserves {b.count} id(s), the kernel uses {n}")
        out.append(b)
    out.sort(key=lambda b: b.first)
    used = [i for b in out for i in b.ids]
    require(all(SYNCTHREADS_BARRIER < i < NUM_NAMED_BARRIERS for i in used), "named_barriers",
            f"named barrier ids lie in 1..{NUM_NAMED_BARRIERS - 1} (0 is __syncthreads)", ids=tuple(used))
    require(len(set(used)) == len(used), "named_barriers", "the named barriers in use do not share an id",
            ids=tuple(used))
    return tuple(out)
