"""The GEMM kernel's parameter table: the one definition of what the kernel takes, in order.

Each collective owns its rows (:meth:`Collective.params <cute_py.emit.collectives.base.Collective.params>`);
:func:`~cute_py.emit.collectives.compose.kernel_params` puts them together. The emitted signature
(:func:`cute_py.emit.kernel.entry_point`) prints each parameter's C declaration from that table, and the host
packs its arguments by the same table (:meth:`cute_py.emit.bind.Binding.arguments`), so the two cannot
disagree on order, type or presence.

>>> KernelParam("tma_a", "tensormap").decl
'const __grid_constant__ TmaDesc tma_a'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KernelParam", "PARAM_KINDS", "C_SCALARS", "SCALE_STRIDES"]

PARAM_KINDS = ("tensormap", "pointer", "s32", "s64", "f32")
"""How the host packs a parameter (a 128-byte TMA descriptor by value, a device address, or a scalar)."""
C_SCALARS = {"s32": "int", "s64": "long long", "f32": "float"}
"""The C type of each scalar kind; the host packs the same widths (:data:`cute_py.emit.bind.PACK`)."""
SCALE_STRIDES = ("sa_m", "sa_k", "sb_k", "sb_n")
"""The element strides of the scales: scale_a ``(M, KB):(sa_m, sa_k)`` and scale_b ``(KB, NB):(sb_k, sb_n)``
(KB = ceil(K / 128) blocks along K; per-tensor and row-wise scales have extent 1 in the modes they lack and
stride 0 there)."""


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: its ``name``, its ``kind`` (one of :data:`PARAM_KINDS`) and, for a pointer, the
    C type it points at (``pointee``). The C declaration :attr:`decl` is derived from these, as the host's
    packing is, so the two agree by construction.

    >>> KernelParam("ld_d", "s64").decl, KernelParam("c", "pointer", "const u16").decl
    ('long long ld_d', 'const u16* __restrict__ c')
    """

    name: str
    kind: str
    pointee: str = ""

    def __post_init__(self):
        if self.kind not in PARAM_KINDS or (self.kind == "pointer") != bool(self.pointee):
            raise ValueError(f"KernelParam: {self.name}: kind {self.kind!r} (one of {PARAM_KINDS}) with pointee "
                             f"{self.pointee!r} (exactly the pointers have one)")

    @property
    def decl(self) -> str:
        """The parameter's C declaration in the kernel's signature."""
        if self.kind == "tensormap":
            return f"const __grid_constant__ TmaDesc {self.name}"
        if self.kind == "pointer":
            return f"{self.pointee}* __restrict__ {self.name}"
        return f"{C_SCALARS[self.kind]} {self.name}"
