"""The GEMM kernel's parameter table: the one definition of what the kernel takes, in order.

The emitted signature (:func:`cute_py.emit.gemm_sm90.entry_point`) prints each
parameter's C declaration from this table, and the host packs its arguments by
the same table (:meth:`cute_py.emit.bind.Binding.arguments`), so the two cannot
disagree on order, type or presence.

>>> from cute_py.emit import GemmSpec
>>> [p.name for p in kernel_params(GemmSpec(split_k=2))][:8]
['tma_a', 'tma_b', 'tma_d', 'd', 'c', 'bias', 'ws', 'counters']
>>> kernel_params(GemmSpec())[0]
KernelParam(name='tma_a', decl='const __grid_constant__ TmaDesc tma_a', kind='tensormap')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KernelParam", "kernel_params", "PARAM_KINDS"]

PARAM_KINDS = ("tensormap", "pointer", "s32", "s64", "f32")
"""How the host packs a parameter: a 128-byte TMA descriptor by value, a device address, or a scalar."""


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: its ``name``, its C declaration ``decl`` and how it is packed (``kind``)."""

    name: str
    decl: str
    kind: str


def _tensormap(name: str) -> KernelParam:
    return KernelParam(name, f"const __grid_constant__ TmaDesc {name}", "tensormap")


def kernel_params(spec) -> tuple:
    """The parameters of ``spec``'s kernel, in order: A's and B's tensor maps, D's for the TMA-store epilogue,
    the D, C and bias pointers (in D's element type), the split-K workspace and counters when K is split,
    then the problem extents, D's and C's leading dimensions and the epilogue scalars."""
    store_t = "float" if spec.out_dtype == "f32" else "u16"
    params = [_tensormap("tma_a"), _tensormap("tma_b")]
    if spec.epilogue == "tma":
        params.append(_tensormap("tma_d"))
    params += [KernelParam("d", f"{store_t}* __restrict__ d", "pointer"),
               KernelParam("c", f"const {store_t}* __restrict__ c", "pointer"),
               KernelParam("bias", f"const {store_t}* __restrict__ bias", "pointer")]
    if spec.split_k > 1:
        params += [KernelParam("ws", "float* __restrict__ ws", "pointer"),
                   KernelParam("counters", "int* __restrict__ counters", "pointer")]
    params += [KernelParam(n, f"int {n}", "s32") for n in ("M", "N", "K")]
    params += [KernelParam(n, f"long long {n}", "s64") for n in ("ld_d", "ld_c")]
    params += [KernelParam(n, f"float {n}", "f32") for n in ("alpha", "beta")]
    return tuple(params)
