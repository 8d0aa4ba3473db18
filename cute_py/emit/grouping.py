"""Groups and batches in a GemmSpec: which gmem layouts carry the group mode ``L``, and the rules a spec keeps.

As CuTe's ``(M, K, L)``, a batched or grouped GEMM names a third gmem mode ``L`` (its stride a symbol) in the
layouts it indexes by group. Which layouts carry it says the problem:

- ``a``, ``b`` and ``c`` (``(M,K,L)``, ``(N,K,L)``, ``(M,N,L)``): a batch of equal GEMMs (``torch.bmm``,
  and ``grouped_mm`` of 3-D operands without offsets): :data:`BATCH`;
- ``b`` alone (``(N,K,L)``): groups stacked along M (the mixture-of-experts layout: the tokens of expert ``g``
  are rows ``[offs[g-1], offs[g])`` of ``a`` and of D, multiplied by expert ``g``'s weights): :data:`GROUPS_M`.

>>> from cute_py.emit import GemmSpec
>>> grouping(GemmSpec(b="(N,K,L):(K,1,ldl)", epilogue="direct")), grouping(GemmSpec())
('m', None)
"""

from __future__ import annotations

__all__ = ["GROUP_MODE", "BATCH", "GROUPS_M", "GROUPINGS", "grouping", "group_problems", "grouped_layouts"]

GROUP_MODE = "L"
"""The name of the group (or batch) mode of a gmem layout: its third mode."""
BATCH = "batch"
GROUPS_M = "m"
GROUPINGS = (None, BATCH, GROUPS_M)
_CARRIERS = {(): None, ("a", "b", "c"): BATCH, ("b",): GROUPS_M}


def grouped_layouts(spec) -> tuple:
    """The names of ``spec``'s gmem layouts that carry the group mode, in ``("a", "b", "c")`` order."""
    return tuple(n for n in ("a", "b", "c") if _rank(getattr(spec, n)) == 3)


def _rank(layout) -> int:
    shape = getattr(layout, "shape", None)
    return len(shape) if isinstance(shape, tuple) else 0


def grouping(spec) -> str | None:
    """``spec``'s grouping: :data:`BATCH`, :data:`GROUPS_M`, or None (one GEMM); ``"invalid"`` for a combination
    of grouped layouts that names none (reported by :func:`group_problems`)."""
    return _CARRIERS.get(grouped_layouts(spec), "invalid")


def group_problems(spec) -> list:
    """Why ``spec`` breaks the rules of grouped and batched kernels ([]: it keeps them): the group mode in a
    combination of layouts that names a grouping; no split-K, C or bias (``torch.bmm`` and ``grouped_mm`` have
    neither). (Groups along M with the TMA-store epilogue store a group's full tiles by TMA and its last, partial
    tile directly: a TMA box there would write rows of the next group.)"""
    g = grouping(spec)
    if g is None:
        return []
    if g == "invalid":
        return [f"the group mode {GROUP_MODE} is in layouts {grouped_layouts(spec)}: a batch puts it in a, b and c; "
                f"groups along M (mixture of experts) in b alone"]
    what = "a batched" if g == BATCH else "a grouped"
    out = []
    if spec.split_k != 1:
        out.append(f"split_k = {spec.split_k}: {what} kernel does not split K")
    if g == BATCH and spec.scale:
        out.append(f"scale = {spec.scale!r}: fp8 scales are emitted for groups along M, not for a batch")
    if spec.beta or spec.bias:
        out.append(f"{what} kernel reads no C and no bias (beta = {spec.beta}, bias = {spec.bias!r})")
    return out
