"""The schedulers: which work units (tiles, and their k-blocks) each persistent CTA runs, and the fixup of
tiles whose K was shared out. One module each; :data:`SCHEDULERS` registers them by name.

A spec names its scheduler (``GemmSpec(scheduler="stream_k")``) or lets its other fields imply one: groups and
batches take their group scheduler, ``split_k > 1`` split-K over the scheduler its problem takes
(:func:`~.split_k.split_k_of`), everything else the persistent tile scheduler.

>>> from cute_py.emit import GemmSpec
>>> [scheduler_class(s).name for s in (GemmSpec(), GemmSpec(split_k=2), GemmSpec(scheduler="stream_k"))]
['tile', 'split_k', 'stream_k']
"""

from __future__ import annotations

from .groups import Batches, GroupsAlongK, GroupsAlongM
from .split_k import SplitKScheduler, split_k_of
from .stream_k import StreamKScheduler, stream_k_of
from .tile import TileScheduler

__all__ = ["SCHEDULERS", "scheduler_class", "implied_scheduler", "canonical_scheduler", "TileScheduler", "SplitKScheduler", "StreamKScheduler", "Batches",
           "GroupsAlongM", "GroupsAlongK"]

SCHEDULERS = {cls.name: cls for cls in (
    TileScheduler,
    SplitKScheduler,
    Batches,
    GroupsAlongM,
    GroupsAlongK,
    StreamKScheduler,
    split_k_of(Batches),
    split_k_of(GroupsAlongM),
    split_k_of(GroupsAlongK),
    stream_k_of(Batches),
    stream_k_of(GroupsAlongM),
    stream_k_of(GroupsAlongK),
)}
"""Every scheduler by name; the first whose ``implied_by(spec)`` holds serves a spec that names none."""


def scheduler_class(spec):
    """The scheduler class of ``spec``: the one it names (a family's name, "stream_k", takes the member that walks
    ``spec``'s problem: stream-K over batches or groups), else the one its fields imply (None if none does:
    :class:`~cute_py.emit.GemmSpec`'s constructor says why).

    >>> from cute_py.emit import GemmSpec
    >>> scheduler_class(GemmSpec(scheduler="stream_k", b="(N,K,L):(K,1,ldb_l)")).name
    'stream_k_groups_m'
    """
    if spec.scheduler is not None:
        if not isinstance(spec.scheduler, str):
            return None
        named = [c for c in SCHEDULERS.values() if spec.scheduler in (c.name, getattr(c, "family", None))]
        return next((c for c in named if c.walks(spec)), named[0] if named else None)
    return implied_scheduler(spec)


def implied_scheduler(spec):
    """The scheduler ``spec``'s fields imply, whatever it names (None if none).

    >>> from cute_py.emit import GemmSpec
    >>> implied_scheduler(GemmSpec(scheduler="stream_k", split_k=1)).name, implied_scheduler(GemmSpec(split_k=2)).name
    ('tile', 'split_k')
    """
    return next((cls for cls in SCHEDULERS.values() if cls.implied_by(spec)), None)


def canonical_scheduler(spec):
    """The ``scheduler`` field that names ``spec``'s kernel one way (``spec`` valid): None for the scheduler its
    other fields imply, else the name of the family its scheduler belongs to, so that two spellings of one kernel
    are one spec (and one compiled kernel).

    >>> from cute_py.emit import GemmSpec
    >>> GemmSpec(scheduler="tile") == GemmSpec(), GemmSpec(scheduler="stream_k_batches", a="(M,K,L):(K,1,lda_l)",
    ...     b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldd_l)").scheduler
    (True, 'stream_k')
    """
    cls = scheduler_class(spec)
    if spec.scheduler is None or cls is implied_scheduler(spec):
        return None
    return getattr(cls, "family", cls.name)
