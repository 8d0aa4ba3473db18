"""Groups and batches in a GemmSpec: which gmem layouts carry the group mode ``L``, and the rules a spec keeps.

As CuTe's ``(M, K, L)``, a batched or grouped GEMM names a third gmem mode ``L`` (its stride a symbol) in the
layouts it indexes by group. Which layouts carry it says the problem:

- ``a``, ``b`` and ``c`` (``(M,K,L)``, ``(N,K,L)``, ``(M,N,L)``): a batch of equal GEMMs (``torch.bmm``,
  and ``grouped_mm`` of 3-D operands without offsets): :data:`BATCH`;
- ``b`` alone (``(N,K,L)``): groups stacked along M (the mixture-of-experts layout: the tokens of expert ``g``
  are rows ``[offs[g-1], offs[g])`` of ``a`` and of D, multiplied by expert ``g``'s weights): :data:`GROUPS_M`;
- ``c`` alone (``(M,N,L)``): groups stacked along K (the weight gradient of a mixture-of-experts layer: D[g] is
  the product of columns ``[offs[g-1], offs[g])`` of ``a`` and rows of ``b``): :data:`GROUPS_K`. A K tile
  that crosses a group's end must read zeros past it: a and b are then MN-major, K their outer TMA dimension,
  and their tensor maps are *ragged* (:func:`ragged_gmem`).

>>> from cute_py.emit import GemmSpec
>>> grouping(GemmSpec(b="(N,K,L):(K,1,ldl)", epilogue="direct")), grouping(GemmSpec())
('m', None)
"""

from __future__ import annotations

from ..layouts import parse

__all__ = ["GROUP_MODE", "BATCH", "GROUPS_M", "GROUPS_K", "carries_group_mode", "grouping", "group_problems",
           "grouped_layouts", "ragged_gmem", "ragged_rows", "with_group_mode"]

GROUP_MODE = "L"
"""The name of the group (or batch) mode of a gmem layout: its third mode."""
BATCH = "batch"
"""The grouping of a batch: a, b and c carry L."""
GROUPS_M = "m"
"""The grouping of groups stacked along M (b carries L; offsets are group end rows)."""
GROUPS_K = "k"
"""The grouping of groups stacked along K (c carries L; offsets are group end columns)."""
_CARRIERS = {(): None, ("a", "b", "c"): BATCH, ("b",): GROUPS_M, ("c",): GROUPS_K}


def grouped_layouts(spec) -> tuple:
    """The names of ``spec``'s gmem layouts that carry the group mode, in ``("a", "b", "c")`` order."""
    return tuple(n for n in ("a", "b", "c") if carries_group_mode(spec, n))


def _rank(layout) -> int:
    shape = getattr(layout, "shape", None)
    return len(shape) if isinstance(shape, tuple) else 0


def carries_group_mode(spec, name: str) -> bool:
    """Whether ``spec``'s gmem layout ``name`` ("a", "b" or "c") has the group mode L.

    >>> from cute_py.emit import GemmSpec
    >>> carries_group_mode(GemmSpec(b="(N,K,L):(K,1,ldb_l)"), "b"), carries_group_mode(GemmSpec(), "b")
    (True, False)
    """
    return _rank(getattr(spec, name)) == 3


def grouping(spec) -> str | None:
    """``spec``'s grouping: :data:`BATCH`, :data:`GROUPS_M`, or None (one GEMM); ``"invalid"`` for a combination
    of grouped layouts that names none (reported by :func:`group_problems`)."""
    return _CARRIERS.get(grouped_layouts(spec), "invalid")


def group_problems(spec) -> list:
    """Why ``spec`` breaks the rules of grouped and batched kernels ([]: it keeps them): the group mode in a
    combination of layouts that names a grouping. (Groups along M with the TMA-store epilogue store
    through a ragged map of D, :func:`ragged_rows`, so a group's last tile writes no row of the next group.)"""
    g = grouping(spec)
    if g is None:
        return []
    if g == "invalid":
        return [f"the group mode {GROUP_MODE} is in layouts {grouped_layouts(spec)}: a batch puts it in a, b and c; "
                f"groups along M (mixture of experts) in b alone"]
    out = []
    if g == GROUPS_K:
        out += [f"groups along K read {w} MN-major ({w} ({'M' if w == 'a' else 'N'}, K) with {'M' if w == 'a' else 'N'}"
                f" contiguous, as x.t() and dy of a weight gradient): K must be an outer TMA dimension to mask the "
                f"K tile that crosses a group's end" for w in ("a", "b") if getattr(spec, f"{w}_major") == "K"]
    return out


def ragged_rows(layout, rows: int):
    """The *ragged* gmem layout of a row-major D ``(M,N):(ld,1)`` of groups along M, for TMA stores of ``rows``-row
    boxes: ``(rows,N,MR):(ld,1,ld)``. A box of a group's last tile with ``v <= rows`` rows inside the group stores
    at rows coordinate ``rows - v`` and outer ``row0 + v`` from a base ``rows`` rows before D (extent
    ``MR = M + rows``): its rows ``i >= v`` fall outside the middle mode, and TMA writes nothing outside a map, so
    the next group's rows stay untouched (:func:`ragged_gmem` masks loads along K with the other side of a mode's
    bounds).

    >>> from cute_py import parse
    >>> str(ragged_rows(parse("(M,N):(ldd,1)"), 64))
    '(64,N,MR):(ldd,1,ldd)'
    """
    n, ld = layout.shape[1], layout.stride[0]
    return parse(f"({rows},{n},MR):({ld},1,{ld})")


def ragged_gmem(layout, bk: int):
    """The *ragged* gmem layout of an MN-major operand ``(MN,K):(1,ld)`` of groups along K: ``(MN,bk,K):(1,ld,ld)``.

    Its TMA box spans ``bk`` along the middle mode, and a K tile starting at ``ks`` with ``v <= bk`` valid rows
    (the rest belong to the next group) loads at coordinates ``(mn, v - bk, ks)``: box row ``i`` reads K row
    ``ks - (bk - v) + i``, and rows ``i < bk - v`` have a negative middle coordinate, so TMA fills them with zeros.
    The tile's valid rows are its last ``v``; both operands load the same way, so their rows still pair up. The
    map starts at the operand: its earlier form started ``bk`` rows before it and stopped kernels with an illegal
    address when that memory was not mapped.

    >>> from cute_py import parse
    >>> str(ragged_gmem(parse("(M,K):(1,lda)"), 64))
    '(M,64,K):(1,lda,lda)'
    """
    mn, k, ld = layout.shape[0], layout.shape[1], layout.stride[1]
    return parse(f"({mn},{bk},{k}):(1,{ld},{ld})")


def with_group_mode(shape: tuple, strides: tuple, groups: int, stride: int) -> tuple:
    """``(shape, strides)`` of a concrete tensor map with the group mode ``L`` appended: extent ``groups``,
    stride ``stride``, or for a single group (whose stride is never used, and may be 0) one matrix's span.

    >>> with_group_mode((100, 64), (64, 1), 1, 0), with_group_mode((100, 64), (64, 1), 3, 8192)
    (((100, 64, 1), (64, 1, 6400)), ((100, 64, 3), (64, 1, 8192)))
    """
    return shape + (groups,), strides + (stride or max(s * d for s, d in zip(shape, strides)),)
