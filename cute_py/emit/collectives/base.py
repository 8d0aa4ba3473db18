"""What every collective of the kernel owns, and the two C structures they share (``Work`` and the ring).

A collective is a Python object made from a :class:`~cute_py.emit.plan.GemmPlan` that prints one part of the
kernel from the plan's layout facts. The kernel skeleton (:mod:`cute_py.emit.kernel`) composes four of them
(:mod:`cute_py.emit.collectives`): the pipeline, a scheduler, a mainloop and an epilogue. Each owns:

- its spec constraints (:meth:`Collective.problems`: why a spec cannot use it, [] if it can),
- its rows of the kernel parameter table (:meth:`Collective.params`),
- its named barriers (:meth:`Collective.barriers`, ids reserved in :data:`cute_py.emit.resources.NAMED_BARRIERS`),
- the PTX wrappers it calls (:meth:`Collective.wrappers`),
- its rows of the dynamic shared memory (:meth:`Collective.smem`) and its static shared arrays
  (:meth:`Collective.shared`),
- its device code (:meth:`Collective.device`) behind the fixed C interface the skeleton calls,

and, for a scheduler, its bind step (work units and workspace of one problem). The constraints, parameters and
barriers are class methods of the spec, so a spec is checked and its parameter table known before anything is
planned; the device code is printed from the plan.

A feature that is off prints nothing: a collective prints only what its own facts need.
"""

from __future__ import annotations

__all__ = ["Collective", "tile_row"]


class Collective:
    """The interface every collective implements (each method's default: the collective needs nothing)."""

    kind = ""
    """Its role in the skeleton: "pipeline", "scheduler", "mainloop" or "epilogue"."""
    name = ""
    """Its registry name (:mod:`cute_py.emit.collectives`)."""

    def __init__(self, plan):
        self.p = plan

    @classmethod
    def problems(cls, spec) -> list:
        """Why ``spec`` cannot use this collective, one line per violated rule ([] if it can)."""
        return []

    @classmethod
    def params(cls, spec) -> tuple:
        """Its rows of the kernel parameter table (:class:`~cute_py.emit.params.KernelParam`), in order."""
        return ()

    @classmethod
    def barriers(cls, spec) -> dict:
        """The named barriers it syncs on: ``{name: ids used}``."""
        return {}

    def wrappers(self) -> tuple:
        """Names of the PTX wrapper snippets (:data:`cute_py.emit.ptx.WRAPPERS`) its device code calls."""
        return ()

    def device(self) -> str:
        """Its device code: constants, types and functions, printed before the entry point."""
        return ""

    def smem(self) -> list:
        """Its rows of the dynamic shared memory budget: ``[(what, bytes), ...]``."""
        return []

    def shared(self) -> str:
        """Its static ``__shared__`` declarations, printed in the kernel's setup."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.p.name})"


def tile_row(coords: dict, w: str) -> str:
    """The C expression of the first row of unit ``w``'s tile (the C name of a ``Work``), from the scheduler's
    :meth:`~cute_py.emit.collectives.schedulers.tile.TileScheduler.coords` of ``w`` (its M tiles start at row
    ``m_origin``, "" for row 0).

    >>> tile_row({"m_origin": ""}, "w"), tile_row({"m_origin": "wk.row0"}, "wk")
    ('w.m_tile * kBM', 'wk.row0 + wk.m_tile * kBM')
    """
    return f"{coords['m_origin']} + {w}.m_tile * kBM" if coords["m_origin"] else f"{w}.m_tile * kBM"
