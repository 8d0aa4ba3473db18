"""What two shapes or layouts have in common, and what part of a shape a count of elements covers.

Shapes are ordered by *compatibility*: ``a`` coarsens ``b`` (``compatible(a, b)``) when
``size(a) == size(b)`` and every coordinate of ``a`` is one of ``b``. ``common_refinement`` is the least
shape both coarsen (their join), ``common_coarsening`` the greatest shape coarsening both (their meet).

``greatest_common_domain`` looks at two shapes as splittings of one index range into digits and returns
the digits they split the same way; ``layout_add`` uses it to add two layouts as functions.
``shape_mod(a, n)`` is the shape of the first ``n`` elements of ``a``, the part ``shape_div`` divides out.

>>> common_refinement((2, 15), (2, (3, 5))), common_coarsening((4, (3, 5)), ((2, 2), 15))
((2, (3, 5)), (4, 15))
>>> print(greatest_common_domain((5, 3, 4), (10, 6)), layout_add(Layout(12, 1), Layout(12, 1)))
(5,2):(1,30) 12:2
"""

from __future__ import annotations

import math

from . import decide, int_tuple as it
from .coalescing import coalesce
from .errors import LayoutError, RankError, _r, layout_error
from .f2 import F2
from .basis import ScaledBasis
from .layout import Layout, flat_modes, require_nonempty
from .leaves import _norm

__all__ = ["common_refinement", "common_coarsening", "greatest_common_domain", "layout_add", "shape_mod"]


def _shape_of(x, op: str):
    """The shape of ``x``: an IntTuple itself (lists become tuples), else its ``.shape``."""
    return _norm(getattr(x, "shape", x), "shape", op)


def _path(p) -> str:
    return "mode " + ",".join(map(str, p)) if p else "the top level"


def _equal(x, y, op: str, a, b) -> bool:
    """``x == y`` decided for every value of the symbols; undecided raises a SymbolicError."""
    same = decide.eq(x, y)
    if same is None:
        raise decide.fail(op, f"{x} == {y}", "sizes of corresponding modes", a=a, b=b)
    return same


def common_refinement(a, b):
    """The least shape refining both ``a`` and ``b`` (their join in the compatibility order).

    Mode by mode: two tuples of one rank refine mode by mode, an int and a tuple of its size give the
    tuple, two equal ints give that int. Raises a ``LayoutError`` (``RankError`` for ranks) when no shape
    refines both. Accepts shapes, layouts and tensors.

    Postconditions: ``compatible(a, result)`` and ``compatible(b, result)``;
    ``common_refinement(a, b) == common_refinement(b, a)``.

    >>> common_refinement(30, (2, 15)), common_refinement(((2, 3), 20), (6, (4, 5)))
    ((2, 15), ((2, 3), (4, 5)))
    """
    op = "common_refinement"
    a, b = _shape_of(a, op), _shape_of(b, op)

    def join(x, y, p):
        if isinstance(x, tuple) and isinstance(y, tuple):
            if len(x) != len(y):
                raise layout_error(RankError, op, "no common refinement: ranks differ",
                                   f"{len(x)} and {len(y)} at {_path(p)}", a=a, b=b)
            return tuple(join(u, v, p + (k,)) for k, (u, v) in enumerate(zip(x, y)))
        coarse, fine = (y, x) if isinstance(x, tuple) else (x, y)
        if not _equal(coarse, it.product(fine), op, a, b):
            raise layout_error(LayoutError, op, "no common refinement: sizes differ",
                               f"{it.to_str(x)} and {it.to_str(y)} at {_path(p)}", a=a, b=b)
        return fine

    return join(a, b, ())


def common_coarsening(a, b):
    """The greatest shape coarsening both ``a`` and ``b`` (their meet in the compatibility order).

    Two tuples of one rank whose modes all have a common coarsening give the tuple of those; otherwise
    the result is the int ``size(a)``. It exists iff ``size(a) == size(b)`` (a ``LayoutError`` otherwise).
    Accepts shapes, layouts and tensors.

    Postconditions: ``compatible(result, a)`` and ``compatible(result, b)``;
    ``common_coarsening(a, b) == common_coarsening(b, a)``.

    >>> common_coarsening((2, (3, 5)), ((3, 2), 5)), common_coarsening((2, 3), (2, 3, 1))
    (30, 6)
    """
    op = "common_coarsening"
    a, b = _shape_of(a, op), _shape_of(b, op)

    def meet(x, y):
        """The meet of x and y, or None where their sizes differ."""
        if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
            modes = tuple(meet(u, v) for u, v in zip(x, y))
            if None not in modes:
                return modes
        n = it.product(x)
        return n if _equal(n, it.product(y), op, a, b) else None

    result = meet(a, b)
    if result is None:
        raise layout_error(LayoutError, op, "no common coarsening: sizes differ",
                           f"{it.product(a)} and {it.product(b)}", a=a, b=b)
    return result


def greatest_common_domain(a, b) -> Layout:
    """The digits on which shapes ``a`` and ``b`` split the index range the same way, as a layout.

    Each leaf of a shape is a digit of the index (colexicographic order, place value the product of the
    leaves before it). The result's leaf ``(s, d)`` is a factor ``s`` at place value ``d`` that lies inside
    one leaf of ``a`` and one leaf of ``b``, so every layout of shape ``a`` or ``b`` is linear on it. Walking
    both leaf lists left to right, the factor taken at each step is the largest one aligned in both; the
    result is ``(1):(0)`` when there is none. Depends only on the shapes (layouts and tensors accepted);
    static extents only.

    Postconditions: ``depth(result) == 1``; ``size(result)`` divides ``gcd(size(a), size(b))``;
    symmetric in ``a`` and ``b``; for a layout ``A`` of shape ``a``,
    ``A(result(i)) == sum_k c_k * A(d_k)`` with ``c`` the coordinate of ``i`` in ``result``.

    >>> print(greatest_common_domain((6, 35), (15, 14)), greatest_common_domain((5, 3), (3, 5)))
    (3,7):(1,30) (1):(0)
    """
    op = "greatest_common_domain"
    sa, sb = _shape_of(a, op), _shape_of(b, op)
    fa, fb = list(it.flatten_to_tuple(sa)), list(it.flatten_to_tuple(sb))
    if not all(type(s) is int for s in fa + fb):
        raise decide.fail(op, "static extents", "the gcd and lcm of each pair of leaves", a=sa, b=sb)
    if 0 in fa or 0 in fb:
        raise layout_error(LayoutError, op, "shapes must not have a zero extent", a=sa, b=sb)
    shape, place = [], []
    i = j = 0
    pa = pb = 1                                  # place values of leaves fa[i] and fb[j]
    while i < len(fa) and j < len(fb):
        if fa[i] == 1 or fb[j] == 1:
            i, j = i + (fa[i] == 1), j + (fb[j] == 1)
            continue
        start = math.lcm(pa, pb)                 # the first place value both leaves have
        ra, rb = start // pa, start // pb
        g = math.gcd(fa[i] // ra, fb[j] // rb) if fa[i] % ra == 0 and fb[j] % rb == 0 else 1
        if g > 1:
            shape.append(g)
            place.append(start)
            fa[i] //= ra * g
            fb[j] //= rb * g
            pa = pb = start * g
            continue
        ea, eb = pa * fa[i], pb * fb[j]          # where each leaf ends
        a_ends_first, b_ends_first = eb % ea == 0, ea % eb == 0
        if a_ends_first or not b_ends_first:     # neither end divides the other: step past both
            pa, i = ea, i + 1
        if b_ends_first or not a_ends_first:
            pb, j = eb, j + 1
    if not shape:
        return Layout._make((1,), (0,))
    return Layout._make(tuple(shape), tuple(place))


def _term(layout: Layout, d: int):
    """The stride ``layout`` takes at index ``d``, a multiple of one leaf's place value inside that leaf:
    ``(d // place) * stride`` of that leaf (a single term, also for basis strides)."""
    place = 1
    for s, st in zip(*flat_modes(layout)):
        if d < place * s:
            break
        place *= s
    return st * (d // place) if d else 0


def layout_add(a: Layout, b: Layout) -> Layout:
    """The layout ``R`` with ``R(i) == a(i) + b(i)``: two layouts added as functions of the index.

    ``R`` has the shape of ``greatest_common_domain(coalesce(a), coalesce(b))``, coalesced; it exists iff
    that domain covers the whole of ``[0, size(a))`` (a ``LayoutError`` otherwise). Strides may be ints,
    symbolic or basis elements (``E(i)``) whose sums keep one basis term; static extents only.

    Precondition: ``size(a) == size(b)``.
    Postconditions: ``size(result) == size(a)``, ``result(i) == a(i) + b(i)`` for ``i < size(a)``,
    ``layout_add(a, b) == layout_add(b, a)``.

    >>> print(layout_add(Layout((4, 3), (1, 4)), Layout((4, 3), (3, 1))), layout_add(Layout(5, 0), Layout(5, 1)))
    (4,3):(4,5) 5:1
    """
    op = "layout_add"
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, Layout):
            raise TypeError(f"{op}: expected a Layout for {name}, got {type(x).__name__}: {_r(x)}")
    if not all(type(s) is int for x in (a, b) for s in it.flatten_to_tuple(x.shape)):
        raise decide.fail(op, "static extents", "the common domain of the two shapes", a=a, b=b)
    require_nonempty(op, a=a, b=b)
    if it.product(a.shape) != it.product(b.shape):
        raise layout_error(LayoutError, op, "sizes differ", f"{it.product(a.shape)} and {it.product(b.shape)}",
                           a=a, b=b)
    ca, cb = coalesce(a), coalesce(b)
    if any(isinstance(d, F2) for x in (ca, cb) for d in it.flatten_to_tuple(x.stride)):
        raise layout_error(LayoutError, op, "F2 strides that do not coalesce to int strides",
                           "a mode with an F2 stride combines by XOR, and its sum with another layout is "
                           "not a layout", a=a, b=b)
    g = greatest_common_domain(ca, cb)
    if g.size() != ca.size():
        raise layout_error(LayoutError, op, "no layout is the sum",
                           f"the common domain of coalesce(a) = {ca} and coalesce(b) = {cb} is {g}, "
                           f"of size {g.size()} < {ca.size()}", a=a, b=b)
    strides = []
    for d in it.flatten_to_tuple(g.stride):
        ta, tb = _term(ca, d), _term(cb, d)
        try:
            t = ta + tb
        except TypeError:
            t = None
        if not (it.is_int(t) or it.is_sym(t) or isinstance(t, ScaledBasis)):
            raise layout_error(LayoutError, op, "a stride of the sum has several basis terms",
                               f"{ta} + {tb} at index {d} (strides with several basis terms are not "
                               f"supported)", a=a, b=b)
        strides.append(decide.canon(t))
    return coalesce(Layout._make(g.shape, tuple(strides)))


def shape_mod(a, b):
    """The first ``b`` elements of the shape ``a``: the tile of ``shape_div`` (tensor-layouts' ``shape_mod``;
    C++ has none). tuple/tuple works mode-wise; tuple/int folds ``b`` across the modes left to right as
    :func:`~cute_py.layouts.int_tuple.shape_div` does; int/tuple takes ``product(b)``; int/int is ``min(a, b)`` where one divides the
    other (else a DivisibilityError: the first ``b`` elements are no shape). Postcondition: ``product(shape_mod(a,
    b)) * product(shape_div(a, b)) == product(a)`` where ``b`` divides ``product(a)``.

    >>> shape_mod((4, 5, 6), 40), shape_mod((3, 4), 6), shape_mod(12, (2, 3)), shape_mod((6, 4), (2, 4))
    ((4, 5, 2), (3, 2), 6, (2, 4))
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            it._check_rank("shape_mod", a, b, a=a, b=b)
            return tuple(shape_mod(x, y) for x, y in zip(a, b))
        out = []
        for ai in a:
            out.append(shape_mod(ai, b))
            b = it.shape_div(b, it.product(ai))
        return tuple(out)
    if isinstance(b, tuple):
        if not all(it.is_int(x) or it.is_sym(x) for x in it.flatten_to_tuple(b)):   # product would multiply them
            raise TypeError(f"shape_mod: expected IntTuples, got {a!r:.40} and {b!r:.40}")
        return shape_mod(a, it.product(b))
    if not ((it.is_int(a) or it.is_sym(a)) and (it.is_int(b) or it.is_sym(b))) or isinstance(a, bool) or isinstance(b, bool):
        raise TypeError(f"shape_mod: expected IntTuples, got {a!r:.40} and {b!r:.40}")
    smaller = decide.le(a, b)
    if smaller is None:
        raise decide.fail("shape_mod", f"{a} <= {b}", "the smaller of the two extents", shape=a, n=b)
    lo, hi = (a, b) if smaller else (b, a)
    if type(lo) is int and lo == 0:             # no elements, or an empty shape: the first n are none
        return 0
    decide.require_divides("shape_mod", lo, hi, "shape divisibility condition", shape=a, n=b)
    return lo
