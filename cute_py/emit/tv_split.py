"""A TV layout whose codomain is ``m + rows * n``, split mode by mode into its row part ``m`` and column part
``n``: how the kernel prints where a thread's accumulators lie (``acc_m_thread``, ``acc_n_value``, ...) as
integer C expressions. :func:`cute_py.emit.plan.gemm_plan` checks the split against the layout for every
(thread, value).
"""

from __future__ import annotations

__all__ = ["split_tv", "split_part"]


def split_tv(layout: Layout, rows: int):
    """Split a TV layout whose codomain is ``m + rows * n`` into its (m, n) parts, mode by mode.

    Returns ``[(extent, divisor, m_stride, n_stride), ...]`` for the thread mode
    and for the value mode: coordinate ``x`` contributes
    ``((x / divisor) % extent) * m_stride`` to m and ``... * n_stride`` to n.
    Valid only when no sum of m parts carries into n; :func:`~cute_py.emit.plan.gemm_plan`
    checks that against the layout for every (thread, value).
    """
    def flat(shape, stride):
        if isinstance(shape, tuple):
            out = []
            for s, d in zip(shape, stride):
                out += flat(s, d)
            return out
        return [(shape, stride)]

    parts = []
    for mode in (0, 1):
        terms, div = [], 1
        for s, d in flat(layout.shape[mode], layout.stride[mode]):
            if s > 1 and d != 0:
                if d % rows and d >= rows:
                    raise ValueError(f"split_tv: stride {d} mixes m and n for rows={rows}")
                terms.append((s, div, d % rows, d // rows))
            div *= s
        parts.append(terms)
    return parts


def split_part(terms, x, part: int):
    """The m (part 2) or n (part 3) contribution of ``terms`` (from :func:`split_tv`) for the index ``x``: an int,
    a numpy array (the checks) or a sympy symbol (the printed expression).

    >>> split_part([(4, 1, 0, 2), (8, 4, 1, 0)], 13, 2), split_part([(4, 1, 0, 2), (8, 4, 1, 0)], 13, 3)
    (3, 2)
    """
    return sum(((x // dv) % e) * (dm, dn)[part - 2] for e, dv, dm, dn in terms)
