"""``bind(plan, problem)``: a GemmPlan's symbolic facts made concrete for one problem.

The plan is derived once per spec from symbolic gmem layouts (extents M, N, K;
the stride that is not 1 is the operand's leading dimension). Binding
substitutes the problem's extents and leading dimensions: the TMA parameters of A, B (and D for the
TMA-store epilogue; a blockwise GEMM's scale_a, or the copy it is gathered into: :func:`~cute_py.emit.scaling.scale_a_map`) by :meth:`~cute_py.arch.sm90.TmaParams.bind` (the box and
mode map stay those the kernel was emitted for; the scheduler's ``gmem_maps`` adds a group mode or makes a
map ragged for the problems it walks), the scheduler's work units
and workspace (the scheduler's bind step), and the scalar kernel arguments. The argument list the
launch passes is ordered by the kernel's parameter table
(:func:`~cute_py.emit.collectives.compose.kernel_params`), the same table the kernel's
signature is printed from.

>>> from cute_py.emit import GemmSpec, gemm_plan
>>> from cute_py.problem import Problem
>>> b = gemm_plan(GemmSpec()).bind(Problem(1000, 512, 4096, "K", "K", "bf16", "bf16"))
>>> b.tma["tma_a"].global_dim, b.tma["tma_d"].global_strides, b.units
((4096, 1000), (1024,), 32)
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from .collectives.compose import choose, kernel_params
from .params import SCALE_STRIDES
from .scaling import scale_a_map

__all__ = ["Binding", "bind", "PACK"]

PACK = {"s32": ctypes.c_int32, "s64": ctypes.c_int64, "f32": ctypes.c_float, "pointer": ctypes.c_void_p}
"""How each parameter kind is packed (fixed-width ctypes values of :data:`cute_py.emit.params.C_SCALARS`' widths;
a tensor map goes by value as it is)."""


@dataclass(frozen=True)
class Binding:
    """One plan bound to one problem: everything a launch needs besides device addresses.

    ``tma``: the concrete TmaParams by kernel parameter name; ``units``: the scheduler's work units (one per
    cluster tile per K split, or per group's tile); ``scheduler``: the scheduler class, whose bind step gives
    the grid (:meth:`ctas`) and the workspace (:meth:`workspace`); ``scalars``: the extents and leading dimensions
    by parameter name; ``params``: the kernel's parameter table.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> from cute_py.problem import Problem
    >>> b = gemm_plan(GemmSpec(split_k=2)).bind(Problem(256, 256, 4096, "K", "K", "bf16", "bf16"))
    >>> b.units, b.workspace(8), b.index("ws")
    (8, (131072, 4), 10)
    """

    plan: object
    M: int
    N: int
    K: int
    tma: dict
    units: int
    scheduler: type
    scalars: dict
    params: tuple
    ptr_offsets: dict = field(default_factory=dict)   # bytes added to an operand's address for its tensor map
                                                      # (ragged maps start before it)

    def arguments(self, values: dict) -> tuple:
        """The kernel arguments in parameter order: ``values`` gives the tensor maps (by name), the device
        addresses (ints; 0 for an absent C or bias) and ``alpha``/``beta``; the extents and leading dimensions
        come from the binding. Addresses and scalars are packed in the parameter's C type.

        Raises ``KeyError`` naming a parameter nobody supplied.
        """
        out = []
        for p in self.params:
            v = self.scalars[p.name] if p.name in self.scalars else values[p.name]
            out.append(PACK[p.kind](v) if p.kind in PACK else v)
        return tuple(out)

    def ctas(self, wave: int) -> int:
        """Clusters a persistent launch runs, given ``wave`` resident clusters (the scheduler's rule)."""
        return self.scheduler.ctas(self.units, wave)

    def workspace(self, ctas: int) -> tuple:
        """``(f32 floats, int counters)`` of the workspace a launch of ``ctas`` clusters needs; (0, 0): none."""
        return self.scheduler.workspace(self.plan, self.units, ctas)

    def index(self, name: str) -> int | None:
        """Position of parameter ``name`` in the argument list (None if the kernel has no such parameter)."""
        names = [p.name for p in self.params]
        return names.index(name) if name in names else None


def bind(plan, problem) -> Binding:
    """``plan`` (a :class:`~cute_py.emit.plan.GemmPlan`) bound to ``problem`` (a
    :class:`~cute_py.problem.Problem`: M, N, K, the majors, and the leading dimensions lda, ldb, ldc, ldd).

    Preconditions (checked by :meth:`~cute_py.problem.Problem.mismatches`): the problem's majors, types and
    epilogue are the spec's. Raises :class:`~cute_py.arch.sm90.TmaError` when a concrete extent or stride
    breaks a TMA rule.

    >>> from cute_py.emit import GemmSpec, gemm_plan
    >>> from cute_py.problem import Problem
    >>> b = bind(gemm_plan(GemmSpec()), Problem(100, 200, 64, "K", "K", "bf16", "bf16", lda=72))
    >>> b.tma["tma_a"].global_strides, b.scalars["ld_d"], b.units
    ((144,), 200, 2)
    """
    M, N, K = problem.M, problem.N, problem.K
    L, e_ab = problem.groups, plan.a.tma.dtype.bits // 8
    _, _, ld, sl, lc, lv, sal = problem.batch_strides
    k_map = max(K, 1)                            # K = 0 loads nothing, but a tensor map's extents are positive
    maps = {"a": ((M, k_map), _strides(plan.a.major, problem.lda)),
            "b": ((N, k_map), _strides(plan.b.major, problem.ldb)), "d": ((M, N), (problem.ldd, 1))}
    scheduler = choose(plan.spec)[0]
    maps, offsets = scheduler.gmem_maps(plan, problem, maps)      # a group mode, ragged maps: the scheduler's
    tma = {f"tma_{x}": op.tma.bind(*maps[x]) for x, op in (("a", plan.a), ("b", plan.b)) if not op.load}
    if plan.epi is not None:
        tma["tma_d"] = plan.epi.tma.bind(*maps["d"])
    if plan.promotion is not None and plan.promotion.sa_tma is not None:       # blockwise scale_a, or its copy
        tma["tma_sa"] = plan.promotion.sa_tma.bind(*scale_a_map(
            M, K, problem.scale_strides[:2], sal, L, problem.grouping == "batch", problem.scale_type,
            problem.scale_a_tma))
    scalars = {"M": M, "N": N, "K": K, "ld_d": problem.ldd, "ld_c": problem.ldc, "L": L, "ld_dl": ld, "sb_l": sl,
               "ld_cl": lc, "bias_l": lv, "sa_l": sal,
               **_source_strides(problem, "a", e_ab), **_source_strides(problem, "b", e_ab),
               **dict(zip(SCALE_STRIDES, problem.scale_strides))}
    return Binding(plan, M, N, K, tma, scheduler.units(plan, M, N, L), scheduler, scalars, kernel_params(plan.spec),
                   offsets)


def _source_strides(problem, which: str, itemsize: int) -> dict:
    """``{ld_x: ..., ld_xl: ...}``: the operand's own leading dimension and group stride (elements), what a
    kernel reading it without TMA walks (a staged operand's ``lda``/``ldb`` and group strides are its staging
    buffer's)."""
    staged = [s for s in problem.staging if s.which == which]
    i = "ab".index(which)
    if staged:
        return {f"ld_{which}": staged[0].src_ld // itemsize, f"ld_{which}l": staged[0].src_group // itemsize}
    return {f"ld_{which}": (problem.lda, problem.ldb)[i], f"ld_{which}l": problem.batch_strides[i]}


def _strides(major: str, ld: int) -> tuple:
    """Element strides of an ``(MN, K)`` operand: K-major ``(ld, 1)``, MN-major ``(1, ld)``."""
    return (ld, 1) if major == "K" else (1, ld)
