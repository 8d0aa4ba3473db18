"""The core layout algebra: composition and complement (the inverses are in :mod:`.inverse`).

Semantics are CuTe C++'s (``layout.hpp``). Where C++ accepts an input but
returns a layout whose values differ from the mathematical result (its stride
divisibility check in composition is weaker than the math), cute_py raises
instead: every result here satisfies the postconditions stated in the
docstrings, which the test-suite checks by brute force.

Nothing is memoized: like C++ and PyCuTe, each call computes its result (a memo table costs a first
call more than its lookups save; benchmarks/NOTES.md).
"""

from __future__ import annotations

from operator import itemgetter

from . import basis_algebra, f2_algebra, int_tuple as it
from .basis import ScaledBasis
from .f2 import F2
from .errors import DivisibilityError, InjectivityError, LayoutError, RankError, layout_error, _r
from .decide import _and, _not, _or, canon, ceil_div, divides, exact_div, expand, fail, floor_div, le, lt, sign
from .coalescing import _bw_coalesce, _coalesce, _coalesce_x, coalesce_x_flat
from .int_tuple import _, is_int, is_sym
from .layout import ALGEBRA, Layout, coprofile, flat_modes, int_layout, require_nonempty
from .operands import by_owner, tiler_arg, tiler_modes

__all__ = ["composition", "complement"]


# ---------------------------------------------------------------------------
# composition


def composition(a, b):
    """Functional composition ``R = A o B``: ``R(c) == A(B(c))`` for every ``c`` in B's domain.

    ``b`` may be a Layout, a tiler tuple (composed mode by mode; modes of A
    the tiler does not reach are dropped, as in C++), an int ``n`` (``n:1``)
    or ``_`` (identity). ``a`` may be a Swizzle (giving a ComposedLayout), a
    ComposedLayout (B is composed into its inner layout), a Tensor (B is
    composed into its layout) or a shape (its compact column-major layout, as
    C++ and PyCuTe read it).

    One algorithm (``_compose_leaf``): each leaf ``s:d`` of B is divided
    through the modes of the coalesced A. Its stride is an int or a sympy
    expression (decided by :mod:`.decide`), or a basis element ``v@i`` that
    walks mode ``i`` of A with ``v``. Layouts with F2 strides are linear maps
    over GF(2) and compose as bit matrices (:mod:`.f2_algebra`).

    Preconditions (checked): for each B mode, the coalesced A admits it: the
    *stride divisibility condition* (B's stride, divided through A's modes,
    either skips whole modes or starts inside a mode it does not overrun) and
    the *shape divisibility condition* (B's extent splits evenly over the
    modes it crosses); and B's modes together never carry from one mode of A
    into the next (the *no-carry condition*).

    Postconditions: ``compatible(shape(B), shape(R))`` and ``R(c) == A(B(c))``
    for all ``c`` in B's domain.

    >>> print(composition(Layout((4, 3), (3, 1)), Layout(6, 2)))
    (2,3):(6,1)
    >>> print(composition(Layout((12, 8, 5), (1, 12, 96)), (Layout(3, 4), Layout(4, 2))))
    (3,4):(4,24)
    """
    if type(a) is not Layout:
        return by_owner("composition", composition, a, b, name="A")
    if type(b) is not Layout and not (type(b) is int and b > 0):
        b = tiler_arg("composition", b, True)
        if b is _:
            return a
        own = type(b) is not tuple and getattr(type(b), "_composition_from_left", None)
        if own:                                 # B a swizzle or a composed layout
            return own(b, a)
    return Layout._make(*_compose(a.shape, a.stride, b, a._flat))


def _compose(s, d, b, flat=None, coalesced=None):
    """``(shape, stride)`` of ``s:d o b`` for a checked tiler ``b``: a Layout, an extent ``n`` (``n:1``), ``_``,
    or a tuple of those composed mode by mode (C++'s ``composition_impl``; the modes of ``s:d`` past a tuple
    are dropped). ``flat`` is ``s:d``'s flat modes and ``coalesced`` their ``coalesce_x_flat`` where the caller
    has them."""
    if type(b) is tuple:
        s, d = tiler_modes("composition", s, d, b)
        shapes, strides = [], []
        for i, t in enumerate(b):
            r = _compose(s[i], d[i], t)
            shapes.append(r[0])
            strides.append(r[1])
        return tuple(shapes), tuple(strides)
    if type(b) is not Layout:
        if b is _:
            return s, d
        if type(b) is int or is_int(b):
            b = Layout._make(b, 1, ((b,), (1,)))
        elif is_sym(b):
            b = Layout(b, 1)
        else:
            raise TypeError(f"composition: a composed layout or swizzle inside a tiler is not supported: {b}")
    fbs, fbd = b._flat or flat_modes(b)
    if type(s) is not tuple and s != 0 and 0 not in fbs and ScaledBasis not in map(type, fbd) and not (
            F2.made and (type(d) is F2 or F2 in map(type, fbd))):
        return b.shape, _scaled(b.stride, d)    # the one fast path (C++'s too): A is one mode, R is B scaled by it
    fas, fad = flat or ((it.flatten_to_tuple(s), it.flatten_to_tuple(d)) if type(s) is tuple else ((s,), (d,)))
    if 0 in fas or 0 in fbs:
        require_nonempty("composition", A=Layout._make(s, d), B=b)
    if F2.made and (F2 in map(type, fad) or F2 in map(type, fbd)):
        r = f2_algebra.compose(Layout._make(s, d, (fas, fad)), b)
        return r.shape, r.stride
    if ScaledBasis in map(type, fbd):           # B's v@i walk mode i of A: A coalesced mode by mode
        basis_algebra.refuse_multi_term("composition", b, A=Layout._make(s, d), B=b)
        if any(type(x) is not ScaledBasis and x != 0 for x in fbd):
            raise layout_error(LayoutError, "composition", "B mixes basis and int strides",
                               "a basis stride v@i walks mode i of A, an int stride A's whole domain, and their "
                               "sum is neither", A=Layout._make(s, d), B=b)
        c = _coalesce_x(Layout._make(s, d, (fas, fad)), coprofile(b))
        ls, ld = (c.shape, c.stride) if type(c.shape) is tuple else ((c.shape,), (c.stride,))
    else:
        ls, ld = coalesced or coalesce_x_flat(fas, fad)
    usage = {} if len(fbs) > 1 else None
    shape, stride = _compose_leaf(ls, ld, b.shape, b.stride, (s, d), b, (), usage)
    for (path, i), (reach, n) in (usage or {}).items():
        ok = reach < n if type(reach) is int and type(n) is int else lt(reach, n)
        if not ok:
            detail = (f"B's modes together reach digit {reach} of mode {i} of the coalesced A (extent {n}), so "
                      f"their sum carries into the next mode, where A is not linear")
            if ok is None:
                raise fail("composition", f"{reach} < {n}", f"no-carry condition: {detail}", **_operands((s, d), b))
            raise layout_error(DivisibilityError, "composition", "no-carry condition", detail,
                               **_operands((s, d), b))
    return shape, stride


def _operands(a, b) -> dict:
    """The operands an error of composition names: A (given as its ``(shape, stride)``) and B."""
    return {"A": Layout._make(*a), "B": b}


def _scaled(stride, d):
    """Each leaf of ``stride`` times ``d`` (an int 0 stays the int 0)."""
    if type(stride) is tuple:
        return tuple([(x * d if x else 0) if type(x) is int else _scaled(x, d) for x in stride])
    return stride * d if type(stride) is not int or stride else 0


def _compose_leaf(ls, ld, rs, rd, a, b, path, usage):
    """The coalesced A ``ls:ld`` (flat tuples; nested per mode where B has basis strides) composed with B's
    mode ``rs:rd``: the result's ``(shape, stride)`` (``a``, A's ``(shape, stride)``, and ``b`` name the
    operands in an error).

    B's stride is divided through A's modes: at each mode it either skips
    whole copies of it (``|stride| % s == 0``) or starts inside it without
    overrunning it, and B's extent splits over the modes it crosses
    (:func:`_step`). ``usage[(path, i)]`` (None
    for a B of one leaf) accumulates, over B's leaves, the largest digit each
    leaf reaches in mode ``i`` of A: a sum reaching the mode's extent means
    B's modes carry into the next mode, and the by-mode result would be wrong.
    """
    if type(rs) is tuple:
        if not rs:
            return (), ()
        shapes, strides = zip(*[_compose_leaf(ls, ld, s, d, a, b, path, usage) for s, d in zip(rs, rd)])
        return shapes, strides
    if type(rd) is ScaledBasis:                 # v@i: the walk of v through mode i of A
        for m in rd.mode:
            if type(ls) is not tuple or m >= len(ls):
                raise layout_error(RankError, "composition", "basis stride selects a mode A does not have",
                                   f"stride {rd}", **_operands(a, b))
            ls, ld = ls[m], ld[m]
        sub_s, sub_d = coalesce_x_flat(it.flatten_to_tuple(ls), it.flatten_to_tuple(ld))
        return _compose_leaf(sub_s, sub_d, rs, rd.value, a, b, rd.mode, usage)
    if type(rd) is int and rd == 0:
        return rs, 0
    if len(ls) == 1:
        return rs, rd * ld[0]
    sg = (1 if rd > 0 else -1) if type(rd) is int else sign(rd, "composition", **_operands(a, b))
    res_s, res_d = [], []
    rest, ar = rs, rd * sg                      # B's remaining extent and |stride|
    for i in range(len(ls) - 1):
        s, d = ls[i], ld[i]
        k, next_rest, next_ar, broken = _step(s, ar, rest)
        if broken is not None:
            _refuse(broken, k, i, s, d, rd, ar, rest, a, b)
        if k != 1:
            res_s.append(k)
            res_d.append(sg * ar * d)
            if usage is not None:
                u = usage.setdefault((path, i), [0, s])
                u[0] += (k - 1) * ar
        rest, ar = next_rest, next_ar
    if not res_s:
        return rest, sg * ar * ld[-1]
    if rest != 1:
        res_s.append(rest)
        res_d.append(sg * ar * ld[-1])
    if len(res_s) == 1:
        return res_s[0], res_d[0]
    return tuple(res_s), tuple(res_d)


def _step(s, ar, n):
    """B's remaining ``|stride|`` ``ar`` and extent ``n`` against a mode of extent ``s`` of the coalesced A:
    ``(k, n / k, |stride| left after the mode, broken)``, where B takes ``k`` digits of the mode (1: none).

    The *stride divisibility condition*: the stride skips whole copies of the mode (``ar % s == 0``) or
    starts inside it (``ar < s``) without overrunning it (``s % ar == 0`` or ``n <= ceil(s / ar)``); past
    the mode only a B of one element may start. The *shape divisibility condition*: ``k = min(ceil(s / ar),
    n)`` divides ``n``. ``broken`` is None where both hold, else ``(condition, decided)``: ``"stride"`` or
    ``"shape"``, and False where sympy cannot decide it. Each fact goes through :mod:`.decide` (three ints
    are decided in place, by the same formulas).
    """
    if type(s) is int and type(ar) is int and type(n) is int:
        if ar % s == 0:
            return 1, n, ar // s, None
        digits = -(-s // ar)
        if ar < s:
            if n != 1 and s % ar and n > digits:
                return 1, n, 1, ("stride", True)
            next_ar = 1
        elif n != 1:
            return 1, n, 1, ("stride", True)
        else:
            next_ar = -(-ar // s)
        if digits == 1 or n == 1:
            return 1, n, next_ar, None
        k = digits if digits < n else n
        if n % k:
            return k, n, next_ar, ("shape", True)
        return k, n // k, next_ar, None
    skips = divides(s, ar)
    if skips:
        return 1, n, exact_div(ar, s), None
    inside = lt(ar, s)
    ok = True if n == 1 else _or(skips, inside)
    if n != 1 and inside is not False:          # inside, it must not overrun the mode
        overrun = _and(_not(divides(ar, s)), lt(ceil_div(s, ar), n))
        ok = _and(ok, _not(_and(inside, overrun)))
    if not ok:
        return 1, n, 1, ("stride", ok is False)
    digits, next_ar = ceil_div(s, ar), 1 if inside else ceil_div(ar, s)
    if digits == 1 or n == 1:
        return 1, n, next_ar, None
    smaller = le(digits, n)
    if smaller is None:
        return digits, n, next_ar, ("shape", False)
    k = digits if smaller else n
    divided = divides(k, n)
    if not divided:
        return k, n, next_ar, ("shape", divided is False)
    return k, exact_div(n, k), next_ar, None


def _refuse(broken, k, i, s, d, rd, ar, n, a, b):
    """Raise the error of a broken step (:func:`_step`: ``k`` digits of mode ``i``, ``s:d``, of the coalesced A
    against B's remaining stride ``ar`` and extent ``n``; ``rd`` is B's stride)."""
    condition, decided = broken
    where = f"mode {i} of the coalesced A (shape {s}, stride {d})"
    if condition == "stride":
        detail = f"B's stride {rd} reaches {where} with remaining stride {ar} and extent {n}"
        if not decided:
            raise fail("composition", f"{ar} % {s} == 0, or {ar} < {s} without overrunning the mode",
                       f"stride divisibility condition: {detail}", **_operands(a, b))
        raise layout_error(DivisibilityError, "composition", "stride divisibility condition",
                           f"{detail}, which neither skips the mode ({ar} % {s} != 0) nor stays inside it",
                           **_operands(a, b))
    if not decided:
        raise fail("composition", f"{n} % {k} == 0 (with {k} the smaller extent)",
                   f"shape divisibility condition at {where}", **_operands(a, b))
    raise layout_error(DivisibilityError, "composition", "shape divisibility condition",
                       f"B's extent {n} does not split over {where}: {n} % {k} != 0", **_operands(a, b))


# ---------------------------------------------------------------------------
# complement


def complement(layout, cotarget=None):
    """The layout of the offsets ``layout`` does not reach, ordered, up to ``cotarget``.

    ``cotarget`` is an int or a shape (default: ``cosize(filter(layout))``).
    Strides must be non-negative integers. A symbolic stride is accepted only
    when the filtered layout has rank 1 (CuTe: "Dynamic-stride complement
    only for rank-1 layouts"); symbolic extents and cotargets are carried
    (the rest extent is a ``ceiling``), and a fact that cannot be decided
    raises :class:`~cute_py.layouts.errors.SymbolicError`.

    Postconditions (CuTe's): ``R(i) != layout(j)`` for ``i >= 1`` and every
    ``j``; ``R`` is strictly increasing; ``cosize(make_layout(layout, R)) >=
    size(cotarget)``; ``cosize(R) <= round_up(size(cotarget), cosize(layout))``.

    >>> print(complement(Layout(4, 2), 24))
    (2,3):(1,8)
    >>> print(complement(Layout((2, 4), (1, 6))))
    3:2
    >>> from cute_py.symbolic import symbols
    >>> K = symbols("K")
    >>> print(complement(Layout(4, K), 1024))
    (K,ceiling(256/K)):(1,4*K)
    """
    if type(layout) is not Layout:
        return by_owner("complement", complement, layout, cotarget)
    if cotarget is None or type(cotarget) is int and cotarget > 0:
        return _complement(layout, cotarget)
    if is_int(cotarget):
        if cotarget < 1:
            raise layout_error(LayoutError, "complement", "cotarget must be positive", f"got {cotarget}",
                               layout=layout)
        cotarget = int(cotarget)
    elif not isinstance(cotarget, tuple) and is_sym(cotarget):  # a symbolic extent
        if cotarget.is_integer is not True or cotarget.is_positive is False:
            raise TypeError(f"complement: cotarget must be a positive int or a shape, got {_r(cotarget)}")
    else:
        cotarget = tiler_arg("complement", getattr(cotarget, "shape", cotarget), shape=True)
        if not (isinstance(cotarget, tuple) and all((is_int(c) and c > 0) or (is_sym(c) and c.is_positive is not False)
                                                    for c in it.flatten_to_tuple(cotarget))):
            raise TypeError(f"complement: cotarget must be a positive int or a shape, got {_r(cotarget)}")
    return _complement(layout, cotarget)


def _complement(layout: Layout, cotarget):
    fs, fd = layout._flat or flat_modes(layout)
    if 0 in fs:
        require_nonempty("complement", layout=layout)
    # filter: drop size-1 and stride-0 modes; sorting by stride replaces CuTe's coalesce+min search.
    modes, last, static = _complement_modes(fs, fd, layout)
    if not static and basis_algebra.is_basis_layout(layout):
        return basis_algebra.complement_by_mode(layout, cotarget, _complement)
    if not static and f2_algebra.is_f2_layout(layout):
        if cotarget is not None and not is_int(cotarget):
            raise TypeError(f"complement: the cotarget of an F2 layout must be an int, got {_r(cotarget)}")
        return f2_algebra.complement(layout, cotarget)
    if not static:                            # a dynamic stride: CuTe allows only a rank-1 layout
        f = _coalesce(Layout._make(it.filter_zeros(layout.stride, layout.shape), layout.stride))
        modes, last, _static = _complement_modes(*flat_modes(f), layout)
        if len(modes) > 1:
            raise fail("complement", "static strides",
                       f"dynamic-stride complement only for rank-1 layouts (CuTe's rule): the filtered layout "
                       f"{f} has {len(modes)} modes", layout=layout)
    if cotarget is None:
        cotarget = last + 1 if type(last) is int else expand(last + 1)
    if not modes:                             # nothing to skip: the whole cotarget
        n = it.product(cotarget)
        return int_layout(n) if type(n) is int else Layout(canon(n))
    if len(modes) > 1:
        modes.sort(key=itemgetter(0))         # static strides here (or a single mode)
    # The chain: each gap below a mode gets a mode of extent q = floor(d / prev), prev being what the modes
    # below reach. A gap of 1 is no mode; and the modes left never merge (q * prev <= d < d * s), so for ints
    # the chain is the coalesced result as it stands.
    res_s, res_d, prev = [], [], 1
    inexact = symbolic = False
    for d, s in modes:
        if type(d) is int and type(prev) is int:
            q = d // prev
            if d % prev:
                inexact = True
        else:
            symbolic = True
            q, exact = _chain_step(d, prev)
            if not exact:
                inexact = True
        if not q:
            if q is None:
                raise fail("complement", f"{prev} <= {d}",
                           f"injectivity: stride {d} must reach past the modes below it (which reach {prev})",
                           layout=layout)
            raise layout_error(InjectivityError, "complement", "non-injective layout in complement",
                               f"stride {d} overlaps the modes below it (which reach {prev})", layout=layout)
        if q != 1:
            res_s.append(q)
            res_d.append(prev)
        prev = d * s
    # A mode of extent 1 is filtered out before the chain; a symbolic extent that may be 1 keeps its mode, which
    # changes the result where a step is inexact (floor(d / prev)): then the answer depends on the extent.
    if inexact:
        maybe_unit = [s for _d, s in modes if type(s) is not int and lt(1, s) is not True]
        if maybe_unit:
            raise fail("complement", f"{maybe_unit[0]} > 1",
                       f"the mode of extent {maybe_unit[0]} is dropped when it is 1, and the complement then "
                       f"differs (a stride is not a multiple of the modes below it)", layout=layout)
    n = -(-cotarget // prev) if type(cotarget) is int and type(prev) is int else _rest_extent(cotarget, prev)
    if symbolic or type(n) is not int or type(prev) is not int:
        res_s.append(n)
        res_d.append(0 if n == 1 else prev)
        return _bw_coalesce(res_s, res_d, n, res_d[-1])
    if n != 1:
        res_s.append(n)
        res_d.append(prev)
    if len(res_s) > 1:
        shape, stride = tuple(res_s), tuple(res_d)
        return Layout._make(shape, stride, (shape, stride))
    if res_s:
        return Layout._make(res_s[0], res_d[0], (tuple(res_s), tuple(res_d)))
    return int_layout(1)


def _rest_extent(cotarget, d):
    """C++'s ``size(coalesce(ceil_div(cotarget, d)))``: ``ceil_div`` folds ``d`` across the modes of a
    shape (mode ``i`` takes ``ceil(c_i / d_i)``, and ``d_{i+1} = ceil(d_i / c_i)``), which is not
    ``ceil(size(cotarget) / d)`` where ``d`` does not divide."""
    if type(d) is int:
        n, q = 1, d
        for c in it.flatten_to_tuple(cotarget):
            if type(c) is not int:
                break
            n *= -(-c // q)
            q = -(-q // c)
        else:
            return n
    n = it.product(it.ceil_div(cotarget, d))
    return n if type(n) is int else canon(n)


def _chain_step(d, prev):
    """The next stride ``d`` over the span ``prev`` the modes below it reach, one of them symbolic:
    ``(floor(d / prev), whether prev divides d)``; the quotient is 0 where ``d < prev`` (overlap) and None
    where that is undecidable. (Two ints are answered in place: ``d // prev, d % prev == 0``.)"""
    reach = le(prev, d)
    if not reach:
        return (0 if reach is False else None), False
    return floor_div(d, prev), divides(prev, d)


def _complement_modes(fs, fd, layout):
    """The ``(stride, extent)`` modes complement chains (size-1 and stride-0 modes dropped), the layout's
    largest offset, and whether every stride is an int; strides must be non-negative."""
    modes, last, static = [], 0, True
    for s, d in zip(fs, fd):
        if type(d) is not int or d < 0:
            if type(d) is ScaledBasis:                 # its own algebra (basis_algebra), size 1 or not
                static = False
                continue
            if type(d) is not int and s == 1:          # filtered out: its stride is never used
                continue
            static = False
            if type(d) is F2:                          # its own algebra (f2_algebra)
                continue
            nonneg = False if type(d) is int else le(0, d)
            if not nonneg:
                if nonneg is None:
                    raise fail("complement", f"{d} >= 0", "strides must be non-negative", layout=layout)
                raise layout_error(LayoutError, "complement", "strides must be non-negative integers",
                                   f"found stride {d}", layout=layout)
        if s != 1 and d != 0:
            modes.append((d, s))
            last = last + (s - 1) * d
    return modes, last, static


ALGEBRA.composition = composition  # Layout.compose / with_shape / tile call it
