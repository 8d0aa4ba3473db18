"""IntTuple helpers: the integer toolbox under the layout algebra.

An *IntTuple* is a Python ``int`` or a (possibly nested) ``tuple`` of IntTuples,
e.g. ``8``, ``(4, 2)``, ``((2, 3), 4)``. Shapes, strides and coordinates are
IntTuples. The functions follow CuTe's ``int_tuple.hpp`` and ``stride.hpp``:
the same names, the same argument order and the same results.

A coordinate may also be *1-D* (an int used against a tuple shape); such an
index is split colexicographically, with the last mode taking the remainder.
"""

from __future__ import annotations

import builtins

from . import decide
from .decide import is_int, is_sym
from .errors import CoordinateError, DivisibilityError, RankError, layout_error
from .errors import MAX_DEPTH, check_depth, to_str  # noqa: F401 - IntTuple helpers, re-exported (it.check_depth)
from .underscore import _, Underscore, has_underscore, is_underscore  # noqa: F401 - re-exported
from .orders import (  # noqa: F401 - re-exported: the orders are IntTuple helpers too
    colex_geq, colex_gtr, colex_leq, colex_less, elem_geq, elem_gtr, elem_leq, elem_less, lex_geq, lex_gtr, lex_leq,
    lex_less,
)

__all__ = [
    "Underscore", "_", "is_int", "is_tuple", "is_underscore", "has_underscore",
    "to_str",
    "product", "product_each", "product_like", "sum", "inner_product", "flatten", "unflatten",
    "flatten_to_tuple", "rank", "depth", "shape_div", "ceil_div", "round_up", "elem_scale", "prefix_product",
    "crd2idx", "idx2crd", "crd2crd", "congruent", "weakly_congruent", "compatible",
    "compact_col_major", "compact_row_major", "compact_order",
    "lex_less", "lex_leq", "lex_gtr", "lex_geq", "colex_less", "colex_leq", "colex_gtr",
    "colex_geq", "elem_less", "elem_leq", "elem_gtr", "elem_geq", "filter_zeros",
    "repeat_like", "signum", "shape_min", "tuple_max", "safe_div",
]


def is_tuple(x) -> bool:
    """True for a (nested) tuple. Lists are not IntTuples.

    >>> is_tuple((1, 2)), is_tuple(1)
    (True, False)
    """
    return isinstance(x, tuple)


def _check_rank(op, x, y, **ops):
    if len(x) != len(y):
        raise layout_error(RankError, op, "mismatched ranks",
                           f"rank {len(x)} vs rank {len(y)}", **ops)


def signum(a: int) -> int:
    """-1, 0 or +1.

    >>> signum(-3), signum(0), signum(5)
    (-1, 0, 1)
    """
    if type(a) is not int and is_sym(a):
        return decide.sign(a, "signum", value=a)
    return (a > 0) - (a < 0)


def flatten(t):
    """All leaves of a tuple ``t`` as a flat tuple; an int stays an int (as in CuTe).

    Postcondition: ``depth(flatten(t)) <= 1``.

    >>> flatten(((2, 3), (4, (5,))))
    (2, 3, 4, 5)
    >>> flatten(7)
    7
    """
    if not isinstance(t, tuple):
        return t
    return flatten_to_tuple(t)


def flatten_to_tuple(t) -> tuple:
    """All leaves of ``t`` as a flat tuple; an int gives a 1-tuple.

    >>> flatten_to_tuple(7), flatten_to_tuple(((1, 2), 3))
    ((7,), (1, 2, 3))
    """
    if not isinstance(t, tuple):
        return (t,)
    out = []
    nested = False
    for e in t:
        if isinstance(e, tuple):
            nested = True
            for x in e:
                if isinstance(x, tuple):
                    out.extend(flatten_to_tuple(x))
                else:
                    out.append(x)
        else:
            out.append(e)
    return tuple(out) if nested else t


def unflatten(flat, profile):
    """Inverse of :func:`flatten`: re-nest the flat tuple ``flat`` like ``profile``.

    Precondition: ``len(flatten(profile)) == len(flat)``.
    Postcondition: ``flatten(result) == flat`` and ``congruent(result, profile)``.

    >>> unflatten((1, 2, 3, 4), ((0, 0), (0, 0)))
    ((1, 2), (3, 4))
    """
    flat = flat if isinstance(flat, tuple) else (flat,)
    n = len(flatten_to_tuple(profile))
    if n != len(flat):
        raise layout_error(RankError, "unflatten", "flat size does not match the profile",
                           f"{len(flat)} leaves vs {n}", flat=flat, profile=profile)
    it = iter(flat)

    def build(p):
        if isinstance(p, tuple):
            return tuple(build(e) for e in p)
        return next(it)

    return build(profile)


def product(a) -> int:
    """Product of all leaves (1 for the empty tuple).

    >>> product(((2, 3), 4))
    24
    """
    if isinstance(a, tuple):
        r = 1
        for e in flatten_to_tuple(a):
            r *= e
        return r
    return a


def product_each(a):
    """Product of each top-level mode.

    >>> product_each(((2, 3), 4, (5, 1)))
    (6, 4, 5)
    """
    if isinstance(a, tuple):
        return tuple(product(e) for e in a)
    return a


def product_like(a, guide):
    """Products of ``a`` at the leaves of ``guide`` (``a`` is at least as deep).

    >>> product_like(((2, 3), (4, 5)), (0, 0))
    (6, 20)
    """
    if isinstance(guide, tuple):
        if not isinstance(a, tuple) or len(a) != len(guide):
            raise layout_error(RankError, "product_like", "a is not weakly congruent to guide",
                               a=a, guide=guide)
        return tuple(product_like(x, g) for x, g in zip(a, guide))
    return product(a)


def sum(a) -> int:  # noqa: A001 - CuTe's name
    """Sum of all leaves.

    >>> sum(((2, 3), 4))
    9
    """
    return builtins.sum(flatten_to_tuple(a))


def tuple_max(a):
    """Largest leaf.

    >>> tuple_max((3, (7, 2)))
    7
    """
    return builtins.max(flatten_to_tuple(a))


def inner_product(a, b):
    """Sum of leaf-wise products of two congruent IntTuples.

    Precondition: ``congruent(a, b)``.

    >>> inner_product(((2, 3), 4), ((2, 1), 2))
    15
    """
    if isinstance(a, tuple):
        if not isinstance(b, tuple):
            raise layout_error(RankError, "inner_product", "operands are not congruent", a=a, b=b)
        _check_rank("inner_product", a, b, a=a, b=b)
        r = 0
        for x, y in zip(a, b):
            r = r + inner_product(x, y)
        return r
    if isinstance(b, tuple):
        raise layout_error(RankError, "inner_product", "operands are not congruent", a=a, b=b)
    return a * b


def rank(a) -> int:
    """Number of top-level modes (1 for an int).

    >>> rank(((2, 3), 4)), rank(8)
    (2, 1)
    """
    return len(a) if isinstance(a, tuple) else 1


def depth(a) -> int:
    """Nesting depth: 0 for an int, 1 + the deepest mode for a tuple.

    >>> depth(8), depth((8,)), depth(((2, 3), 4))
    (0, 1, 2)
    """
    if isinstance(a, tuple):
        return 1 + builtins.max((depth(e) for e in a), default=0)
    return 0


def repeat_like(a, x):
    """A tuple congruent to ``a`` with every leaf replaced by ``x``.

    >>> repeat_like(((2, 3), 4), 0)
    ((0, 0), 0)
    """
    if isinstance(a, tuple):
        return tuple(repeat_like(e, x) for e in a)
    return x


def shape_div(a, b):
    """Inclusive "shape division": ``a / b`` that folds ``b`` across the modes of ``a``.

    tuple/tuple divides mode-wise; tuple/int divides the modes left to right,
    carrying what is left of ``b``; int/tuple divides by ``product(b)``; int/int
    requires ``a % b == 0 or b % a == 0`` and returns ``ceil(a / b)``.

    >>> shape_div((3, 4), 6)
    (1, 2)
    >>> shape_div((6, (3, 4)), 36)
    (1, (1, 2))
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            _check_rank("shape_div", a, b, a=a, b=b)
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for ai in a:
            out.append(shape_div(ai, b))
            b = shape_div(b, product(ai))
        return tuple(out)
    if isinstance(b, tuple):
        return shape_div(a, product(b))
    return decide.shape_div(a, b, "shape_div")


def safe_div(a, b):
    """``a / b`` where ``b`` divides ``a`` (CuTe's ``safe_div``: a static division that does not divide is a
    compile error there, a DivisibilityError here); element-wise for congruent tuples, and symbolic leaves
    where the divisibility is decided (else SymbolicError).

    >>> safe_div(12, 4), safe_div((8, 6), (2, 3))
    (3, (4, 2))
    """
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)):
            raise layout_error(RankError, "safe_div", "operands are not congruent", a=a, b=b)
        _check_rank("safe_div", a, b, a=a, b=b)
        return tuple(safe_div(x, y) for x, y in zip(a, b))
    if not ((is_int(a) or is_sym(a)) and (is_int(b) or is_sym(b))) or b == 0:
        raise TypeError(f"safe_div: expected integers (the divisor non-zero), got {a!r:.40} and {b!r:.40}")
    decide.require_divides("safe_div", b, a, "the divisor must divide the dividend", dividend=a, divisor=b)
    return decide.exact_div(a, b)


def shape_min(a: int, b: int) -> int:
    """``min(a, b)`` for two extents where one divides the other (CuTe's shape_min)."""
    if a % b != 0 and b % a != 0:
        raise layout_error(DivisibilityError, "shape_min", "shape divisibility condition", a=a, b=b)
    return a if a < b else b


def ceil_div(a, b):
    """Ceiling division, folded over tuples like :func:`shape_div`.

    tuple/tuple works mode-wise (missing trailing modes of ``b`` count as 1);
    tuple/int folds ``b`` across the modes; int/tuple divides by ``product(b)``.

    >>> ceil_div(10, 4), ceil_div((8, 6), 4), ceil_div((3, 5), (2,))
    (3, (2, 6), (2, 5))
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(b) > len(a):
                raise layout_error(RankError, "ceil_div", "divisor has more modes than dividend", a=a, b=b)
            b = b + (1,) * (len(a) - len(b))
            return tuple(ceil_div(x, y) for x, y in zip(a, b))
        out = []
        for ai in a:
            out.append(ceil_div(ai, b))
            b = ceil_div(b, product(ai))
        return tuple(out)
    if isinstance(b, tuple):
        b = product(b)
    if b == 0:
        raise layout_error(DivisibilityError, "ceil_div", "division by zero", a=a, b=b)
    r = -((-a) // b)
    if type(r) is int or not is_sym(r):
        return r
    return decide.ceil_div(a, b)  # symbolic: ceiling(a/b), simplified where sympy decides


def round_up(a, b):
    """Round ``a`` up to a multiple of ``b``, element-wise.

    >>> round_up(10, 4), round_up((10, 3), (4, 2))
    (12, (12, 4))
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(b) > len(a):
                raise layout_error(RankError, "round_up", "more modes in b than in a", a=a, b=b)
            b = b + (1,) * (len(a) - len(b))
            return tuple(round_up(x, y) for x, y in zip(a, b))
        return tuple(round_up(x, b) for x in a)
    if isinstance(b, tuple):
        raise layout_error(RankError, "round_up", "int a with tuple b", a=a, b=b)
    return ceil_div(a, b) * b


def elem_scale(a, b):
    """``a`` scaled leaf-wise by ``product`` of the matching mode of ``b``.

    >>> elem_scale((2, 3), (4, (2, 2)))
    (8, 12)
    >>> elem_scale(2, (3, 4))
    24
    """
    if isinstance(a, tuple):
        if not isinstance(b, tuple):
            raise layout_error(RankError, "elem_scale", "tuple a needs a tuple b", a=a, b=b)
        _check_rank("elem_scale", a, b, a=a, b=b)
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def prefix_product(a, init=1):
    """Exclusive prefix product, congruent to ``a``.

    >>> prefix_product((3, 2, 4))
    (1, 3, 6)
    >>> prefix_product(((2, 3), 4))
    ((1, 2), 6)
    """
    if isinstance(a, tuple):
        if isinstance(init, tuple):
            _check_rank("prefix_product", a, init, a=a, init=init)
            return tuple(prefix_product(x, i) for x, i in zip(a, init))
        out = []
        for ai in a:
            out.append(prefix_product(ai, init))
            init = init * product(ai)
        return tuple(out)
    if isinstance(init, tuple):
        raise layout_error(RankError, "prefix_product", "int a with tuple init", a=a, init=init)
    return init


def compact_col_major(shape, current=1):
    """Compact column-major (LayoutLeft) strides; a size-1 mode gets stride 0.

    >>> compact_col_major((4, 8, 1, 2))
    (1, 4, 0, 32)
    >>> compact_col_major(((2, 2), 3))
    ((1, 2), 4)
    """
    if isinstance(current, tuple):
        if not isinstance(shape, tuple) or len(shape) != len(current):
            raise layout_error(RankError, "compact_col_major", "mismatched ranks", shape=shape, current=current)
        return tuple(compact_col_major(s, c) for s, c in zip(shape, current))
    if isinstance(shape, tuple):
        out = []
        for s in shape:
            out.append(compact_col_major(s, current))
            current = current * product(s)
        return tuple(out)
    return 0 if shape == 1 else current


def compact_row_major(shape, current=1):
    """Compact row-major (LayoutRight) strides; a size-1 mode gets stride 0.

    >>> compact_row_major((4, 8, 2))
    (16, 2, 1)
    """
    if isinstance(current, tuple):
        if not isinstance(shape, tuple) or len(shape) != len(current):
            raise layout_error(RankError, "compact_row_major", "mismatched ranks", shape=shape, current=current)
        return tuple(compact_row_major(s, c) for s, c in zip(shape, current))
    if isinstance(shape, tuple):
        out = []
        for s in reversed(shape):
            out.append(compact_row_major(s, current))
            current = current * product(s)
        return tuple(reversed(out))
    return 0 if shape == 1 else current


def compact_order(shape, order, op: str = "compact_order"):
    """Compact strides visiting the modes of ``shape`` in increasing ``order``.

    ``order`` is weakly congruent to ``shape``; a mode with a smaller order value
    gets the smaller stride; ties go left to right. Size-1 modes get stride 0.
    Symbolic order values (strides, for ``make_layout_like``) are compared where
    sympy decides the comparison; else a SymbolicError names ``op``.

    >>> compact_order((2, 2, 2, 2), (0, 2, 3, 1))
    (1, 4, 8, 2)
    """
    if not weakly_congruent(order, shape):
        raise layout_error(RankError, "compact_order", "order is not weakly congruent to shape",
                           shape=shape, order=order)
    ref_shape = flatten_to_tuple(product_like(shape, order)) if isinstance(order, tuple) else (product(shape),)
    flat_order = flatten_to_tuple(order)
    # Stable rank of each order leaf: ties ordered left to right.
    if all(type(o) is int for o in flat_order):
        ranked = sorted(range(len(flat_order)), key=lambda i: (flat_order[i], i))
    else:
        ranked = decide.decided_ranks(flat_order, op, shape=shape, order=order)
    pos = {i: r for r, i in enumerate(ranked)}
    it = iter(range(len(flat_order)))

    def build(s, o):
        if isinstance(o, tuple):
            return tuple(build(x, y) for x, y in zip(s, o))
        i = next(it)
        d = 1
        for j in range(len(flat_order)):
            if pos[j] < pos[i]:
                d *= ref_shape[j]
        return compact_col_major(s, d)

    return build(shape, order)


def filter_zeros(a, b=None):
    """Replace the elements of ``b`` paired with a 0 in ``a`` by 1 (``b`` defaults to ``a``).

    >>> filter_zeros((0, 1, 0), (4, 8, 2))
    (1, 8, 1)
    """
    if b is None:
        b = a
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            raise layout_error(RankError, "filter_zeros", "operands are not congruent", a=a, b=b)
        return tuple(filter_zeros(x, y) for x, y in zip(a, b))
    return 1 if a == 0 else b


def congruent(a, b) -> bool:
    """True if ``a`` and ``b`` have the same profile (nesting and ranks).

    >>> congruent((1, (2, 3)), (4, (5, 6))), congruent((1, 2), (1, (2, 3)))
    (True, False)
    """
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not isinstance(b, tuple)


def weakly_congruent(a, b) -> bool:
    """Partial order on profiles: an int in ``a`` matches any subtree of ``b``.

    >>> weakly_congruent((1, 2), ((1, 2), 3)), weakly_congruent(((1, 2), 3), (1, 2))
    (True, False)
    """
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            weakly_congruent(x, y) for x, y in zip(a, b))
    return True


def compatible(a, b) -> bool:
    """True if ``size(a) == size(b)`` and every coordinate of ``a`` is one of ``b``.

    >>> compatible(24, (4, 6)), compatible((4, 6), ((2, 2), 6)), compatible((4, 6), 24)
    (True, True, False)
    """
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return a == product(b)


# ---------------------------------------------------------------------------
# Coordinates and indices


def _tdivmod(a: int, b: int):
    """``divmod`` rounding toward zero, as C++ integer division does (matters for negative indices).

    A symbolic index is taken to be non-negative (``floor`` and ``Mod``).
    """
    try:
        if a >= 0:
            return divmod(a, b)
        q = -((-a) // b)
    except TypeError:  # a symbolic index whose sign sympy cannot decide
        if not is_sym(a):
            raise
        return decide.divmod_(a, b)
    except ZeroDivisionError:
        raise layout_error(CoordinateError, "crd2idx", "an index cannot be split over a mode of extent 0",
                           f"index {a}") from None
    return q, a - q * b


def crd2idx(coord, shape, stride=None):
    """Coordinate to index: ``inner_product(coord, stride)`` with 1-D splitting.

    With no ``stride`` it is the colexicographic (column-major) index of
    ``coord`` in ``shape``. A tuple coordinate must be congruent with the shape
    down to where it stops (an int coordinate for a tuple mode is split by
    divmod, the last mode taking the remainder). ``_`` counts as 0.

    >>> crd2idx((1, 2), (4, 8), (1, 4))
    9
    >>> crd2idx(9, (4, 8), (2, 16))
    34
    >>> crd2idx((1, 2), (4, 8))
    9
    """
    if stride is None:
        return _crd2idx_colex(coord, shape)
    if coord is _:
        return 0
    if isinstance(coord, tuple):
        if not isinstance(shape, tuple) or len(coord) != len(shape):
            raise layout_error(CoordinateError, "crd2idx", "coordinate is not congruent with the shape",
                               coord=coord, shape=shape)
        r = 0
        for c, s, d in zip(coord, shape, stride):
            r = r + crd2idx(c, s, d)
        return r
    if isinstance(shape, tuple):
        r = 0
        n = len(shape)
        for i, (s, d) in enumerate(zip(shape, stride)):
            if i == n - 1:
                r = r + crd2idx(coord, s, d)
            else:
                q, m = _tdivmod(coord, product(s))
                r = r + crd2idx(m, s, d)
                coord = q
        return r
    return coord * stride


def _crd2idx_colex(coord, shape):
    if not isinstance(coord, tuple):
        return coord
    if not isinstance(shape, tuple) or len(coord) != len(shape):
        raise layout_error(CoordinateError, "crd2idx", "coordinate is not congruent with the shape",
                           coord=coord, shape=shape)
    r = 0
    for c, s in zip(reversed(coord), reversed(shape)):
        r = r * product(s) + _crd2idx_colex(c, s)
    return r


def idx2crd(idx, shape, stride=None):
    """Index to coordinate, the inverse of :func:`crd2idx`.

    With no ``stride``: the colexicographic coordinate of ``idx`` in ``shape``
    (the last mode takes the remainder). With a stride: per leaf
    ``(idx // stride) % shape`` (a size-1 mode gives 0), valid for compact layouts.

    Postcondition (no stride): ``crd2idx(idx2crd(i, s), s) == i``.

    >>> idx2crd(9, (4, 8))
    (1, 2)
    >>> idx2crd(9, ((2, 2), 8))
    ((1, 0), 2)
    >>> idx2crd(9, (4, 8), (8, 1))
    (1, 1)
    """
    if stride is None:
        if isinstance(idx, tuple):
            if not isinstance(shape, tuple) or len(idx) != len(shape):
                raise layout_error(CoordinateError, "idx2crd", "index is not congruent with the shape",
                                   idx=idx, shape=shape)
            return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
        if isinstance(shape, tuple):
            out = []
            n = len(shape)
            for k, s in enumerate(shape):
                if k == n - 1:
                    out.append(idx2crd(idx, s))
                else:
                    idx, m = _tdivmod(idx, product(s))
                    out.append(idx2crd(m, s))
            return tuple(out)
        return idx
    if isinstance(idx, tuple):
        if not isinstance(shape, tuple) or len(idx) != len(shape):
            raise layout_error(CoordinateError, "idx2crd", "index is not congruent with the shape",
                               idx=idx, shape=shape)
        return tuple(idx2crd(i, s, d) for i, s, d in zip(idx, shape, stride))
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple):
            stride = compact_col_major(shape, stride)
        return tuple(idx2crd(idx, s, d) for s, d in zip(shape, stride))
    if shape == 1:
        return 0
    if stride == 0:
        raise layout_error(CoordinateError, "idx2crd", "stride-0 mode of size > 1 has no inverse",
                           idx=idx, shape=shape, stride=stride)
    up = stride > 0 if type(stride) is int else decide.sign(stride, "idx2crd", idx=idx, shape=shape, stride=stride) > 0
    q = _tdivmod(idx, stride)[0] if up else -_tdivmod(idx, -stride)[0]
    return _tdivmod(q, shape)[1]


def crd2crd(coord, src_shape, dst_shape):
    """Convert ``coord`` of ``src_shape`` into the coordinate of the same index in ``dst_shape``.

    C++ argument order (pycute's differs). Mode-wise when all three are tuples.

    >>> crd2crd((1, 2), (4, 8), 32)
    9
    >>> crd2crd(9, 32, (4, 8))
    (1, 2)
    """
    if isinstance(coord, tuple) and isinstance(src_shape, tuple) and isinstance(dst_shape, tuple):
        if not (len(coord) == len(src_shape) == len(dst_shape)):
            raise layout_error(RankError, "crd2crd", "mismatched ranks", coord=coord,
                               src_shape=src_shape, dst_shape=dst_shape)
        return tuple(crd2crd(c, s, d) for c, s, d in zip(coord, src_shape, dst_shape))
    return idx2crd(crd2idx(coord, src_shape), dst_shape)

