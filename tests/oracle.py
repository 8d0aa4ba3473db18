"""The test suite's reference: brute-force layout evaluation written independently of cute_py.

Nothing here uses cute_py's algebra (``int_tuple``, ``crd2idx``, ``Layout.__call__``
...): shapes and strides are plain (nested) int tuples, and a layout is
evaluated the way CuTe C++ defines it. The one cute_py name used is
:class:`cute_py.Layout`, to build the modes of a layout. The postcondition
checks of the test modules compare cute_py's results against these functions.

* int tuples: :func:`flat`, :func:`prod`, :func:`depth`, :func:`unflatten`,
  :func:`compatible`; layouts: :func:`rank`, :func:`modes_of`;
* evaluation: :func:`ref_eval` (CuTe's ``crd2idx``, Python's floor division),
  :func:`eval_cxx` (C++'s truncating division), :func:`ref_cosize`;
* the whole domain: :func:`values`, :func:`image`, :func:`is_injective`,
  :func:`is_compact`; :func:`called_values` lists what the object under test
  itself returns;
* coordinates: :func:`idx2crd`, :func:`top_crd`, :func:`all_coords`, :func:`mode_coords`;
* thread-value layouts, vectorized: :func:`eval_mode`, :func:`tv_table`; C++
  prints: :func:`cpp`.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from cute_py import Layout

# ---------------------------------------------------------------------------
# int tuples


def flat(t):
    """The leaves of a (nested) int tuple, in order, as a list (an int: ``[t]``)."""
    if isinstance(t, tuple):
        out = []
        for x in t:
            out.extend(flat(x))
        return out
    return [t]


def prod(t):
    """The product of the leaves (1 for ``()``)."""
    p = 1
    for x in flat(t):
        p *= x
    return p


def depth(t):
    """0 for an int, 1 + the deepest element for a tuple."""
    if isinstance(t, tuple):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def unflatten(leaves, profile):
    """The leaves (in order) regrouped with the nesting of ``profile``."""
    it = iter(leaves)

    def build(s):
        if isinstance(s, tuple):
            return tuple(build(x) for x in s)
        return next(it)

    return build(profile)


def compatible(a, b):
    """CuTe's ``compatible(a, b)``: sizes agree and ``b`` refines ``a`` mode by mode."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == prod(b)


def rank(layout):
    """The number of top-level modes (1 for an int shape)."""
    return len(layout.shape) if isinstance(layout.shape, tuple) else 1


def modes_of(layout):
    """The top-level modes as layouts (an int-shaped layout is its own single mode)."""
    if isinstance(layout.shape, tuple):
        return [Layout(s, d) for s, d in zip(layout.shape, layout.stride)]
    return [layout]


# ---------------------------------------------------------------------------
# evaluation


def ref_eval(layout, c):
    """CuTe's ``crd2idx(c, shape, stride)`` for an int or a (hierarchical) coordinate ``c``.

    An int is split colexicographically and the last mode takes the rest, so a
    layout is extended linearly past its domain.
    """
    return _crd2idx(c, layout.shape, layout.stride)


def _crd2idx(c, s, d):
    if isinstance(c, tuple):
        assert isinstance(s, tuple) and len(c) == len(s)
        return sum(_crd2idx(ci, si, di) for ci, si, di in zip(c, s, d))
    if isinstance(s, tuple):
        r = 0
        for k, (si, di) in enumerate(zip(s, d)):
            if k == len(s) - 1:
                r += _crd2idx(c, si, di)
            else:
                p = prod(si)
                r += _crd2idx(c % p, si, di)
                c //= p
        return r
    return c * d


def eval_cxx(layout, i):
    """L(i) with C++ integer semantics: ``%`` and ``/`` truncate toward zero (matters for i < 0)."""
    fs, fd = flat(layout.shape), flat(layout.stride)
    r = 0
    for k, (s, d) in enumerate(zip(fs, fd)):
        if k == len(fs) - 1:
            r += i * d
        else:
            q = abs(i) // s * (1 if i >= 0 else -1)
            r += (i - q * s) * d
            i = q
    return r


def ref_cosize(layout):
    """One past the largest offset, for non-negative strides."""
    return sum((s - 1) * abs(d) for s, d in zip(flat(layout.shape), flat(layout.stride))) + 1


# ---------------------------------------------------------------------------
# the whole domain


def values(layout):
    """``[L(0), L(1), ..., L(size-1)]`` by :func:`ref_eval`."""
    return [ref_eval(layout, i) for i in range(prod(layout.shape))]


def image(layout):
    """The set of offsets the layout reaches."""
    return set(values(layout))


def is_injective(layout):
    v = values(layout)
    return len(set(v)) == len(v)


def is_compact(layout):
    """A bijection onto ``[0, size)``."""
    return sorted(values(layout)) == list(range(prod(layout.shape)))


def called_values(f):
    """``[f(0), ..., f(size-1)]`` by calling ``f`` itself (a layout, composed layout, ... under test)."""
    return [f(i) for i in range(prod(f.shape))]


# ---------------------------------------------------------------------------
# coordinates


def idx2crd(i, s):
    """Colexicographic hierarchical coordinate of index ``i`` in shape ``s``."""
    if isinstance(s, tuple):
        out = []
        for k, si in enumerate(s):
            if k == len(s) - 1:
                out.append(idx2crd(i, si))
            else:
                p = prod(si)
                out.append(idx2crd(i % p, si))
                i //= p
        return tuple(out)
    return i


def top_crd(i, s):
    """Coordinate with one 1-D int per top-level mode."""
    if isinstance(s, tuple):
        out = []
        for k, si in enumerate(s):
            p = prod(si)
            out.append(i if k == len(s) - 1 else i % p)
            i //= p
        return tuple(out)
    return i


def all_coords(shape):
    """Every natural (hierarchical) coordinate of ``shape``, congruent to it (the first leaf slowest)."""
    for leaves in itertools.product(*(range(s) for s in flat(shape))):
        yield unflatten(leaves, shape) if isinstance(shape, tuple) else leaves[0]


def mode_coords(shape):
    """Every coordinate with one 1-D int per top-level mode, as tuples, colexicographic (mode 0 fastest).

    An int shape is one mode: ``mode_coords(3) == [(0,), (1,), (2,)]``.
    """
    sizes = [prod(m) for m in shape] if isinstance(shape, tuple) else [shape]
    out = []
    for i in range(prod(tuple(sizes))):
        c, x = [], i
        for s in sizes:
            c.append(x % s)
            x //= s
        out.append(tuple(c))
    return out


# ---------------------------------------------------------------------------
# thread-value layouts and C++ prints


def cpp(s: str) -> str:
    """A C++ CuTe print with the static-integer underscores removed (cute_py prints plain ints)."""
    return re.sub(r"_(?=\d)", "", s)


def eval_mode(shape, stride) -> np.ndarray:
    """Values of a (possibly nested) mode at its 1-D colexicographic indices 0..size-1, vectorized."""
    ss, ds = flat(shape), flat(stride)
    n = prod(shape)
    idx = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    div = 1
    for s, d in zip(ss, ds):
        out += ((idx // div) % s) * d
        div *= s
    return out


def tv_table(layout, spot_checks: int = 31) -> np.ndarray:
    """``table[t, v] = layout(t + T*v)`` for a rank-2 (thread, value) layout, vectorized.

    About ``spot_checks`` points, spread over the table, are checked against
    ``Layout.__call__``.
    """
    assert rank(layout) == 2, f"not a TV layout: {layout}"
    thr = eval_mode(layout.shape[0], layout.stride[0])
    val = eval_mode(layout.shape[1], layout.stride[1])
    table = thr[:, None] + val[None, :]
    T, V = table.shape
    for k in range(0, T * V, max(1, (T * V) // spot_checks)):
        assert layout(k) == table[k % T, k // T], (str(layout), k)
    return table
