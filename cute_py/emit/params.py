"""The GEMM kernel's parameter table: the one definition of what the kernel takes, in order.

The emitted signature (:func:`cute_py.emit.gemm_sm90.entry_point`) prints each
parameter's C declaration from this table, and the host packs its arguments by
the same table (:meth:`cute_py.emit.bind.Binding.arguments`), so the two cannot
disagree on order, type or presence.

>>> from cute_py.emit import GemmSpec
>>> [p.name for p in kernel_params(GemmSpec(split_k=2))][:8]
['tma_a', 'tma_b', 'tma_d', 'd', 'c', 'bias', 'ws', 'counters']
>>> kernel_params(GemmSpec())[0].decl, kernel_params(GemmSpec())[3].decl
('const __grid_constant__ TmaDesc tma_a', 'u16* __restrict__ d')
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import require_spec

__all__ = ["KernelParam", "kernel_params", "PARAM_KINDS", "C_SCALARS", "SCALE_STRIDES"]

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


def kernel_params(spec) -> tuple:
    """The parameters of ``spec``'s kernel, in order: A's and B's tensor maps, D's for the TMA-store epilogue,
    the D, C and bias pointers (in D's element type), the fp8 scales (f32) and their element strides along
    (M, K) for A's and (K, N) for B's when the spec scales, the split-K workspace and counters when K is split,
    then the problem extents, D's and C's leading dimensions and the epilogue scalars; a grouped kernel's
    offsets (groups along M: ``offs[g]`` is group g's end row), its group count ``L``, a batched one's D
    batch stride ``ld_dl``, and a grouped fp8 one's scale_b group stride ``sb_l``.

    >>> from cute_py.emit import GemmSpec
    >>> [p.decl for p in kernel_params(GemmSpec(out_dtype="f32", epilogue="direct"))][2:4]
    ['float* __restrict__ d', 'const float* __restrict__ c']
    """
    require_spec(spec, "kernel_params")
    store_t = "float" if spec.out_dtype == "f32" else "u16"
    params = []
    for x, load in (("a", spec.load_a), ("b", spec.load_b)):     # an operand read without TMA: pointer and ld
        params += ([KernelParam(x, "pointer", "const u8"), KernelParam(f"ld_{x}", "s64")] if load else
                   [KernelParam(f"tma_{x}", "tensormap")])
    if spec.epilogue == "tma":
        params.append(KernelParam("tma_d", "tensormap"))
    params += [KernelParam("d", "pointer", store_t), KernelParam("c", "pointer", f"const {store_t}"),
               KernelParam("bias", "pointer", f"const {store_t}")]
    if spec.scale:
        params += [KernelParam("scale_a", "pointer", "const float"), KernelParam("scale_b", "pointer", "const float")]
        params += [KernelParam(n, "s64") for n in SCALE_STRIDES]
    if spec.split_k > 1:
        params += [KernelParam("ws", "pointer", "float"), KernelParam("counters", "pointer", "int")]
    params += [KernelParam(n, "s32") for n in ("M", "N", "K")]
    params += [KernelParam(n, "s64") for n in ("ld_d", "ld_c")]
    params += [KernelParam(n, "f32") for n in ("alpha", "beta")]
    if spec.grouping in ("m", "k"):
        params += [KernelParam("offs", "pointer", "const int")]
    if spec.grouping:
        params += [KernelParam("L", "s32")]
    if spec.grouping in ("batch", "k"):
        params += [KernelParam("ld_dl", "s64")]
    if spec.grouping and spec.scale:
        params += [KernelParam("sb_l", "s64")]
    return tuple(params)
