"""The two-mode basis tilers of issue 33 and their int twins, for tests/test_basis_tilers.py.

A basis tiler ``(s0,s1):(v0@i0,v1@i1)`` over a rank-2 layout A selects A's modes by its strides; its
*int twin* is the tuple tiler whose mode ``i`` is the layout of the tiler's leaves in codomain mode ``i``
(in order; ``1`` where none): ``(5,7):(3@1,2@0)`` has the twin ``<7:2, 5:3>``. A divide by the basis tiler
is, as a function, the divide by its twin with the tile coordinates regrouped: tile coordinate ``c`` of the
tiler is the twin's leaf coordinates, and the rest is the twin's rests, mode 0's first (colexicographic).

The results are compared by calling them on every coordinate; nothing else of cute_py's algebra is used.
"""

from __future__ import annotations

import itertools

from cute_py import Layout, LayoutError, ScaledBasis, logical_divide, logical_product
from oracle import flat, prod

EXTENT = 8
"""A's modes are 8 x 8."""

A_LAYOUTS = (Layout((8, 8), (1, 8)), Layout((8, 8), (9, 1)))
"""Column-major (which coalesces to 64:1) and PyCuTe's ``(8,8):(9,1)`` (which does not coalesce)."""


def leaves():
    """``(s, v)`` with ``s`` in 1..8, ``v`` in 1..8 whose ``s:v`` stays inside one mode of extent 8."""
    return [(s, v) for s in range(1, EXTENT + 1) for v in range(1, EXTENT + 1) if (s - 1) * v < EXTENT]


def twin_modes(tiler):
    """The int twin of a basis tiler: per codomain mode, ``(shapes, strides)`` of its leaves in order."""
    shapes, strides = flat(tiler.shape), flat(tiler.stride)
    out = []
    for i in range(2):
        mine = [(s, d.value) for s, d in zip(shapes, strides) if isinstance(d, ScaledBasis) and d.mode == (i,)]
        out.append(mine)
    return out


def twin_of(tiler):
    """The int twin as a tuple tiler."""
    out = []
    for mine in twin_modes(tiler):
        if not mine:
            out.append(1)
        elif len(mine) == 1:
            out.append(Layout(*mine[0]))
        else:
            out.append(Layout(tuple(s for s, _ in mine), tuple(v for _, v in mine)))
    return tuple(out)


def stays_inside(tiler) -> bool:
    """Each codomain mode's leaves reach at most offset 7."""
    return all(sum((s - 1) * v for s, v in mine) < EXTENT for mine in twin_modes(tiler))


def tilers():
    """Every two-mode basis tiler ``(s0,s1):(v0@i0,v1@i1)`` over the leaves of :func:`leaves` that stays inside."""
    ls = leaves()
    for (s0, v0), (s1, v1) in itertools.product(ls, ls):
        for i0, i1 in itertools.product(range(2), range(2)):
            t = Layout((s0, s1), (ScaledBasis(v0, (i0,)), ScaledBasis(v1, (i1,))))
            if stays_inside(t):
                yield t


def _leaf_coords(tiler, t):
    """Tile index ``t`` of the basis tiler as per-codomain-mode twin indices."""
    shapes, strides = flat(tiler.shape), flat(tiler.stride)
    digits = []
    for s in shapes:
        digits.append(t % s)
        t //= s
    out = []
    for i in range(2):
        mine = [(c, s) for c, s, d in zip(digits, shapes, strides) if d.mode == (i,)]
        k, m = 0, 1
        for c, s in mine:
            k += c * m
            m *= s
        out.append(k)
    return out


def _split(j, sizes):
    """Index ``j`` as colexicographic coordinates of ``sizes``."""
    out = []
    for n in sizes:
        out.append(j % n)
        j //= n
    return out


def same_function(result, twin_result, tiler, product=False) -> bool:
    """``result`` (rank 2) equals ``twin_result`` (per A mode ``i``: ``(x_i, y_i)``) as a function.

    A divide's modes are (tile, rest): tile index ``t`` of the basis tiler is the twin's leaf coordinates
    (``x_i``), its rest index the twin's rests ``y_i``, colexicographically. A product's are (A, B's copies):
    A's index is A's modes ``x_i``, colexicographically, B's index the twin's leaf coordinates (``y_i``).
    """
    x = [prod(twin_result.shape[i][0]) for i in range(2)]
    y = [prod(twin_result.shape[i][1]) for i in range(2)]
    first = x[0] * x[1] if product else prod(tiler.shape)
    second, rem = divmod(prod(result.shape), first)
    if rem:
        return False
    if product:
        if second != prod(tiler.shape):
            return False
        coords = ((_split(a, x), _leaf_coords(tiler, b)) for a in range(first) for b in range(second))
    else:
        if first != prod(tiler.shape) or second != y[0] * y[1]:
            return False
        coords = ((_leaf_coords(tiler, t), _split(j, y)) for t in range(first) for j in range(second))
    for (p, q), (u, v) in zip(((a, b) for a in range(first) for b in range(second)), coords):
        if result(p + first * q) != twin_result(((u[0], v[0]), (u[1], v[1]))):
            return False
    return True


def classify(op, a, tiler) -> str | None:
    """``op(a, tiler)`` (a divide or product; the zipped, tiled and flat forms only regroup the logical one's
    modes, so they are the same function of the index) against the logical op by the twin: None where the twin is refused, else one of "right", "wrong",
    "internal" (an error that is no LayoutError), "false non-injective", "refused" (a LayoutError naming the op)."""
    logical = logical_product if "product" in op.__name__ else logical_divide
    try:
        want = logical(a, twin_of(tiler))
    except LayoutError:
        return None
    try:
        got = op(a, tiler)
    except LayoutError as e:
        if "injective" in str(e).lower():
            return "false non-injective"
        return "refused" if op.__name__ in str(e) else "internal"
    except Exception:                       # noqa: BLE001 - counted: an internal error
        return "internal"
    return "right" if same_function(got, want, tiler, "product" in op.__name__) else "wrong"
