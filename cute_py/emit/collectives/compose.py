"""Which collectives a spec's kernel is made of, and what they give together: the kernel parameter table and
the named barriers in use.

>>> [c.name for c in choose(GemmSpec(split_k=2))]
['split_k', 'tma_ws', 'tma_store']
>>> [p.name for p in kernel_params(GemmSpec(split_k=2))]
['tma_a', 'tma_b', 'tma_d', 'd', 'c', 'bias', 'ld_d', 'ld_c', 'alpha', 'beta', 'ws', 'counters', 'M', 'N', 'K']
"""

from __future__ import annotations

from dataclasses import dataclass

from ..params import KernelParam
from ..spec import GemmSpec, require_spec
from .epilogues import epilogue_class
from .mainloops import mainloop_class
from .pipeline import Pipeline
from .schedulers import scheduler_class

__all__ = ["choose", "kernel_params", "barrier_uses", "Collectives", "collectives", "smem_rows", "EXTENTS"]

EXTENTS = (KernelParam("M", "s32"), KernelParam("N", "s32"), KernelParam("K", "s32"))
"""The problem's extents, the last rows of every kernel's parameter table."""


def choose(spec) -> tuple:
    """``(scheduler, mainloop, epilogue)`` classes of a valid ``spec``.

    >>> [c.__name__ for c in choose(GemmSpec(epilogue="direct", dtype="e4m3", scale="row", tile=(128, 128, 128)))]
    ['TileScheduler', 'Promoting', 'Direct']
    """
    return scheduler_class(spec), mainloop_class(spec), epilogue_class(spec)


def kernel_params(spec) -> tuple:
    """The parameters of ``spec``'s kernel, in order: the mainloop's (A's and B's tensor maps, or a pointer and a
    leading dimension for an operand read without TMA; the fp8 scales and their strides), the epilogue's (D's
    tensor map for TMA stores, the D, C and bias pointers, the leading dimensions, alpha and beta), the
    scheduler's (a workspace, group offsets and count), then the extents M, N, K. The kernel's signature is
    printed from this table and the host packs its arguments by it (:meth:`cute_py.emit.bind.Binding.arguments`).

    >>> from cute_py.emit import GemmSpec
    >>> [p.decl for p in kernel_params(GemmSpec(out_dtype="f32", epilogue="direct"))][2:4]
    ['float* __restrict__ d', 'const float* __restrict__ c']
    """
    sched, main, epi = choose(require_spec(spec, "kernel_params"))
    return main.params(spec) + epi.params(spec) + sched.params(spec) + EXTENTS


def barrier_uses(spec) -> dict:
    """The named barriers the collectives of ``spec`` sync on: ``{name: ids used}``."""
    uses = {}
    for cls in choose(spec):
        uses.update(cls.barriers(spec))
    return uses


@dataclass(frozen=True)
class Collectives:
    """The four collectives of one plan's kernel."""

    pipeline: Pipeline
    scheduler: object
    mainloop: object
    epilogue: object

    def __iter__(self):
        return iter((self.pipeline, self.scheduler, self.mainloop, self.epilogue))


def collectives(plan) -> Collectives:
    """The collectives of ``plan`` (a :class:`~cute_py.emit.plan.GemmPlan`), made from its facts; the mainloop and
    the epilogue read where a unit's tile lies from the scheduler.

    >>> from cute_py.emit import gemm_plan
    >>> [c.kind for c in collectives(gemm_plan(GemmSpec()))]
    ['pipeline', 'scheduler', 'mainloop', 'epilogue']
    """
    sched_cls, main_cls, epi_cls = choose(plan.spec)
    sched = sched_cls(plan)
    return Collectives(Pipeline(plan), sched, main_cls(plan, sched), epi_cls(plan, sched))


def smem_rows(plan) -> list:
    """The dynamic shared memory of ``plan``'s kernel, row by row from its collectives: ``[(what, bytes), ...]``.

    Postcondition: the bytes add up to ``plan.smem_bytes`` (the launch's request; :func:`cute_py.emit.emit_gemm`
    checks it).

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> smem_rows(gemm_plan(GemmSpec(tile=(128, 256, 64))))
    [('4 stages x 49152 B (the ring)', 196608), ('1024 B (alignment slack)', 1024), ('4 x 8192 B (epilogue staging buffers)', 32768)]
    """
    return [row for c in collectives(plan) for row in c.smem()]
