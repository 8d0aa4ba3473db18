"""Symbolic extents: sympy integer expressions as leaves of shapes, strides and coordinates.

CuTe distinguishes static integers (``Int<8>``, known at compile time) from
dynamic ones (``int``, known at run time). cute_py's plain ``int`` leaves play
the static role; a sympy integer expression (``M``, ``K*ld``,
``ceiling(M/128)``) plays the dynamic one. The algebra accepts such leaves
wherever CuTe accepts dynamic integers and carries them through:

* evaluation ``L(c)`` gives a sympy expression (coordinates may be symbols
  too; 1-D coordinates are split with ``floor`` and ``Mod``, which assumes
  non-negative indices, as layouts do);
* ``size``, ``cosize``, ``coalesce`` (modes merge only when the merge
  condition is provably true, CuTe's static rule), ``composition``,
  ``complement`` (dynamic strides only for a rank-1 layout, as in C++),
  ``logical_divide`` and its zipped/tiled/flat forms (the rest mode of a
  symbolic extent gets ``ceiling`` extents, CuTe's ``ceil_div``),
  ``logical_product`` and the inverses where the facts they need are decided.

Where an operation needs a static fact (a divisibility, a comparison) that
sympy cannot decide for every value of the symbols, it raises
:class:`~cute_py.layouts.errors.SymbolicError` naming the operation, the fact
and the values. Symbols should be created with ``integer=True,
positive=True`` (extents, strides, leading dimensions; :func:`symbols` does
it) or ``integer=True, nonnegative=True`` (indices; :func:`indices`).

>>> from cute_py import Layout, logical_divide, size, cosize
>>> M, K = symbols("M K")
>>> A = Layout((M, K), (K, 1))
>>> print(A, size(A), cosize(A))
(M,K):(K,1) K*M K*M
>>> print(logical_divide(A, (128, 64)))
((128,ceiling(M/128)),(64,ceiling(K/64))):((K,128*K),(1,64))

The implementation keeps the integer paths of the algebra as they were: the
functions here run only when a leaf is not an ``int`` (sympy is imported by
this module, which the algebra imports lazily).
"""

from __future__ import annotations

import sympy as sp

from . import int_tuple as it
from .basis import ScaledBasis
from .errors import DivisibilityError, InjectivityError, LayoutError, RankError, SymbolicError, layout_error
from .int_tuple import _

__all__ = [
    "symbols", "indices", "is_symbolic", "free_symbols", "subs", "local_tile", "SymbolicError",
]


# ---------------------------------------------------------------------------
# Creating symbols


def symbols(names: str):
    """Positive integer sympy symbols for extents, strides and leading dimensions.

    Like ``sympy.symbols(names, integer=True, positive=True)``: one name gives
    a symbol, several (space or comma separated) give a tuple. ``parse``
    creates the same symbols for identifiers, so they compare equal.

    >>> M, N = symbols("M N")
    >>> M.is_integer, M.is_positive, symbols("K")
    (True, True, K)
    """
    return sp.symbols(names, integer=True, positive=True)


def indices(names: str):
    """Non-negative integer sympy symbols for coordinates (a thread or block index).

    >>> from cute_py import Layout
    >>> i = indices("i")
    >>> M = symbols("M")
    >>> Layout((4, M), (M, 1))(i)
    M*(Mod(i, 4)) + floor(i/4)
    """
    return sp.symbols(names, integer=True, nonnegative=True)


# ---------------------------------------------------------------------------
# Queries and substitution


def _leaves(x):
    if getattr(x, "_is_composed_layout", False):
        return _leaves(x.inner)
    if hasattr(x, "shape") and hasattr(x, "stride") and not isinstance(x, sp.Basic):
        return it.flatten_to_tuple(x.shape) + it.flatten_to_tuple(x.stride)
    if isinstance(x, tuple):
        return it.flatten_to_tuple(x)
    return (x,)


def free_symbols(x) -> set:
    """The sympy symbols in a layout, IntTuple or expression.

    >>> from cute_py import parse
    >>> sorted(free_symbols(parse("(M,N):(1,ld)")), key=str)
    [M, N, ld]
    """
    out = set()
    for e in _leaves(x):
        if isinstance(e, ScaledBasis):
            e = e.value
        if isinstance(e, sp.Basic):
            out |= e.free_symbols
    return out


def is_symbolic(x) -> bool:
    """True if a layout, IntTuple or value holds a sympy expression with symbols.

    >>> from cute_py import Layout
    >>> M = symbols("M")
    >>> is_symbolic(Layout((M, 4))), is_symbolic(Layout((8, 4))), is_symbolic(M + 1)
    (True, False, True)
    """
    return bool(free_symbols(x))


def canon(x):
    """sympy numbers (``Integer``) become Python ints, recursively in tuples (internal)."""
    if type(x) is int:
        return x
    if isinstance(x, tuple):
        return tuple(canon(e) for e in x)
    if isinstance(x, sp.Basic):
        if x.is_Integer:
            return int(x)
        return x
    if isinstance(x, ScaledBasis) and isinstance(x.value, sp.Basic) and x.value.is_Integer:
        return ScaledBasis(int(x.value), x.mode)
    return x


def _subs_leaf(x, m):
    if isinstance(x, sp.Basic):
        return canon(x.subs(m))
    if isinstance(x, ScaledBasis) and isinstance(x.value, sp.Basic):
        return ScaledBasis(canon(x.value.subs(m)), x.mode)
    return x


def _subs_tuple(x, m):
    if isinstance(x, tuple):
        return tuple(_subs_tuple(e, m) for e in x)
    return _subs_leaf(x, m)


def subs(x, values):
    """Substitute values for symbols in a layout, IntTuple or expression.

    ``values`` maps symbols (or their names) to ints or expressions; numbers
    that result become ints, so a fully substituted layout is a static one.

    >>> from cute_py import Layout, logical_divide
    >>> M, K = symbols("M K")
    >>> D = logical_divide(Layout((M, K), (K, 1)), (128, 64))
    >>> print(subs(D, {M: 300, "K": 64}))
    ((128,3),(64,1)):((64,8192),(1,64))
    """
    m = {}
    syms = {s.name: s for s in free_symbols(x)}
    for k, v in dict(values).items():
        if isinstance(k, str):
            if k not in syms:
                continue
            k = syms[k]
        m[k] = v
    from .layout import Layout

    if isinstance(x, Layout):
        return Layout(_subs_tuple(x.shape, m), _subs_tuple(x.stride, m))
    if getattr(x, "_is_composed_layout", False):
        return x._with_inner(subs(x.inner, values))
    return _subs_tuple(x, m)


# ---------------------------------------------------------------------------
# Leaves


def is_expr(x) -> bool:
    """True for a sympy expression leaf (internal)."""
    return isinstance(x, sp.Expr)


def check_leaf(x, what: str, op: str):
    """Validate a sympy leaf of a shape, stride or coordinate; return it in canonical form (internal).

    Integer expressions only (``is_integer`` must be True); a shape extent must
    not be provably smaller than 1.
    """
    if not isinstance(x, sp.Expr):
        raise TypeError(f"{op}: {what} leaves must be integers, got {x!r} of type {type(x).__name__}")
    if x.is_Integer:
        x = int(x)
        if what == "shape" and x < 1:
            raise layout_error(LayoutError, op, "shape extents must be positive", f"found {x}")
        return x
    if x.is_integer is not True:
        raise TypeError(f"{op}: {what} leaves must be integers; the sympy expression {x} is not known to be one "
                        f"(make symbols with integer=True, e.g. cute_py.symbolic.symbols(\"M N K\"))")
    if what == "shape" and (x.is_positive is False):
        raise layout_error(LayoutError, op, "shape extents must be positive", f"found {x}, which is not")
    return x


# ---------------------------------------------------------------------------
# Deciding static facts


def _values(*xs) -> str:
    return ", ".join(sorted({str(s) for x in xs for s in free_symbols(x)}))


def fail(op: str, fact: str, detail: str = "", **operands) -> SymbolicError:
    """Build the SymbolicError of ``op`` for the undecidable ``fact`` (internal)."""
    vals = _values(*operands.values()) if operands else ""
    msg = f"needs {fact}"
    if vals:
        msg += f" (symbols {vals})"
    if detail:
        msg += f": {detail}"
    err = layout_error(SymbolicError, op, "a static fact is unknown for symbolic values", msg, **operands)
    err.fact, err.values = fact, vals
    return err


def _diff(a, b):
    return sp.expand(sp.sympify(a) - sp.sympify(b))


def eq(a, b):
    """``a == b`` for every value of the symbols: True, False (provably different) or None."""
    if type(a) is int and type(b) is int:
        return a == b
    d = _diff(a, b)
    if d == 0:
        return True
    if d.is_zero is False:
        return False
    return None


def lt(a, b):
    """``a < b`` decided for every value of the symbols: True, False or None."""
    if type(a) is int and type(b) is int:
        return a < b
    d = _diff(b, a)
    if d.is_positive:
        return True
    if d.is_nonpositive:
        return False
    return None


def le(a, b):
    """``a <= b`` decided for every value of the symbols: True, False or None."""
    if type(a) is int and type(b) is int:
        return a <= b
    d = _diff(b, a)
    if d.is_nonnegative:
        return True
    if d.is_negative:
        return False
    return None


def divides(a, b):
    """``b % a == 0`` for every value of the symbols: True, False (never) or None (``a != 0``)."""
    if type(a) is int and type(b) is int:
        return b % a == 0
    m = sp.Mod(b, a)
    if m.is_Number:
        return m == 0
    q = sp.cancel(sp.sympify(b) / a)
    if q.is_integer:
        return True
    return None


def exact_div(a, b):
    """``a / b`` where ``b`` divides ``a`` (decided by the caller)."""
    if type(a) is int and type(b) is int:
        return a // b
    q = sp.sympify(a) / b
    if not q.is_integer:
        q = sp.cancel(q)
    return canon(q)


def ceil_div(a, b):
    """``ceil(a / b)`` for positive ``a``, ``b`` (CuTe's ``ceil_div``), simplified when decided."""
    if type(a) is int and type(b) is int:
        return -((-a) // b)
    if divides(b, a):
        return exact_div(a, b)
    if le(a, b) and lt(0, a):
        return 1
    return canon(sp.ceiling(sp.sympify(a) / b))


def sign(x, op: str, **operands) -> int:
    """The sign of ``x`` (-1, 0, 1), or SymbolicError when it is unknown."""
    if type(x) is int:
        return (x > 0) - (x < 0)
    x = sp.sympify(x)
    if x.is_positive:
        return 1
    if x.is_negative:
        return -1
    if x.is_zero:
        return 0
    raise fail(op, f"the sign of {x}", **operands)


def sym_abs(x):
    return canon(abs(x)) if type(x) is not int else abs(x)


def expand(x):
    """``sympy.expand`` of a symbolic value, ints as ints (cosize and the like read better expanded)."""
    if type(x) is int:
        return x
    return canon(sp.expand(x))


def _or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _not(a):
    return None if a is None else not a


# ---------------------------------------------------------------------------
# IntTuple helpers with symbolic leaves


def divmod_(a, b):
    """``(a // b, a % b)`` as sympy ``floor`` and ``Mod`` (indices are non-negative)."""
    if type(a) is int and type(b) is int:
        return divmod(a, b)
    return canon(sp.floor(sp.sympify(a) / b)), canon(sp.Mod(a, b))


def shape_div(a, b, op: str):
    """``shape_div`` of two leaves, one symbolic: needs ``a % b == 0`` or ``b % a == 0`` decided."""
    if b == 0:
        raise layout_error(DivisibilityError, op, "division by a zero extent", a=a, b=b)
    if divides(b, a):
        return exact_div(a, b)
    if divides(a, b):
        return sign(a, op, a=a, b=b) * sign(b, op, a=a, b=b)
    if divides(b, a) is False and divides(a, b) is False:
        raise layout_error(DivisibilityError, op, "shape divisibility condition",
                           f"neither {a} % {b} == 0 nor {b} % {a} == 0", a=a, b=b)
    raise fail(op, f"{a} % {b} == 0 or {b} % {a} == 0", "the shape divisibility condition", a=a, b=b)


def idx2crd_leaf(idx, shape, stride):
    """``(idx // stride) % shape`` for one leaf with a symbolic value (stride of known sign)."""
    if shape == 1:
        return 0
    if stride == 0:
        raise layout_error(LayoutError, "idx2crd", "stride-0 mode of size > 1 has no inverse",
                           idx=idx, shape=shape, stride=stride)
    sg = sign(stride, "idx2crd", idx=idx, shape=shape, stride=stride)
    q = divmod_(idx, stride * sg)[0] * sg
    return divmod_(q, shape)[1]


# ---------------------------------------------------------------------------
# The algebra with symbolic leaves (called by algebra.py / tiling.py when a leaf is not an int)


def compose_layouts(a, b):
    """Symbolic counterpart of ``algebra._compose_layouts``: every condition decided or SymbolicError."""
    from .algebra import _coalesce_x
    from .layout import coprofile, flat_modes

    basis = any(type(d) is ScaledBasis for d in flat_modes(b)[1])
    flat = _coalesce_x(a, coprofile(b) if basis else 0)
    usage = {}
    result = _compose_impl(flat.shape, flat.stride, b.shape, b.stride, a, b, (), usage)
    if len(flat_modes(b)[0]) > 1:
        for (path, i), (reach, s) in usage.items():
            ok = lt(reach, s)
            if ok is None:
                raise fail("composition", f"{reach} < {s}",
                           f"no-carry condition: B's modes together reach digit {reach} of mode {i} of the "
                           f"coalesced A (extent {s})", A=a, B=b)
            if not ok:
                raise layout_error(
                    DivisibilityError, "composition", "no-carry condition",
                    f"B's modes together reach digit {reach} of mode {i} of the coalesced A "
                    f"(extent {s}), so their sum carries into the next mode, where A is not linear",
                    A=a, B=b)
    return _canon_layout(result)


def _canon_layout(L):
    from .layout import Layout

    return Layout._make(canon(L.shape), canon(L.stride))


def _compose_impl(ls, ld, rs, rd, a, b, path, usage):
    from .algebra import _coalesce_x, _unwrap
    from .layout import Layout

    if isinstance(rs, tuple):
        parts = [_compose_impl(ls, ld, s, d, a, b, path, usage) for s, d in zip(rs, rd)]
        return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(rd, ScaledBasis):
        for m in rd.mode:
            if not isinstance(ls, tuple) or m >= len(ls):
                raise layout_error(RankError, "composition", "basis stride selects a mode A does not have",
                                   f"stride {rd}", A=a, B=b)
            ls, ld = ls[m], ld[m]
        sub = _coalesce_x(Layout._make(ls, ld))
        return _compose_impl(sub.shape, sub.stride, rs, rd.value, a, b, rd.mode, usage)
    if type(rd) is int and rd == 0:
        return Layout._make(rs, 0)
    if not isinstance(ls, tuple):
        return Layout._make(rs, canon(rd * ld))

    res_s, res_d = [], []
    rest_shape, rest_stride = rs, rd
    n = len(ls)
    for i in range(n - 1):
        s, d = ls[i], ld[i]
        sg = sign(rest_stride, "composition", A=a, B=b)
        ar = sym_abs(rest_stride)
        skips = divides(s, ar)          # ar % s == 0: B's stride skips whole copies of the mode
        inside = False if skips else lt(ar, s)  # ar < s: B's stride starts inside the mode (ar >= 1)
        if not (type(rest_shape) is int and rest_shape == 1):
            ok = _or(skips, inside)
            if inside is not False:
                overrun = _and(_not(divides(ar, s)), lt(ceil_div(s, ar), rest_shape))
                ok = _and(ok, _not(_and(inside, overrun)))
            if ok is None:
                raise fail("composition", f"{ar} % {s} == 0, or {ar} < {s} without overrunning the mode",
                           f"stride divisibility condition: B's stride {rd} reaches mode {i} of the coalesced A "
                           f"(shape {s}, stride {d}) with remaining stride {ar} and extent {rest_shape}",
                           A=a, B=b)
            if not ok:
                raise layout_error(
                    DivisibilityError, "composition", "stride divisibility condition",
                    f"B's stride {rd} reaches mode {i} of the coalesced A "
                    f"(shape {s}, stride {d}) with remaining stride {ar} and extent {rest_shape}, "
                    f"which neither skips the mode ({ar} % {s} != 0) nor stays inside it",
                    A=a, B=b)
        if skips:
            next_shape, next_stride = 1, exact_div(ar, s) * sg
        elif inside:
            next_shape, next_stride = ceil_div(s, ar), sg
        else:
            next_shape, next_stride = ceil_div(s, ar), ceil_div(ar, s) * sg
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        smaller = le(next_shape, rest_shape)
        if smaller is None:
            raise fail("composition", f"{next_shape} <= {rest_shape} or {next_shape} >= {rest_shape}",
                       f"min of the mode's remaining extent {next_shape} and B's extent {rest_shape} "
                       f"at mode {i} of the coalesced A", A=a, B=b)
        new_shape = next_shape if smaller else rest_shape
        dv = divides(new_shape, rest_shape)
        if dv is None:
            raise fail("composition", f"{rest_shape} % {new_shape} == 0",
                       f"shape divisibility condition at mode {i} of the coalesced A (shape {s}, stride {d})",
                       A=a, B=b)
        if not dv:
            raise layout_error(
                DivisibilityError, "composition", "shape divisibility condition",
                f"B's extent {rest_shape} does not split over mode {i} of the coalesced A "
                f"(shape {s}, stride {d}): {rest_shape} % {new_shape} != 0",
                A=a, B=b)
        res_s.append(new_shape)
        res_d.append(canon(rest_stride * d))
        u = usage.setdefault((path, i), [0, s])
        u[0] = expand(u[0] + (new_shape - 1) * ar)
        rest_shape = exact_div(rest_shape, new_shape)
        rest_stride = next_stride
    if not res_s:
        return Layout._make(rest_shape, canon(rest_stride * ld[-1]))
    if not (type(rest_shape) is int and rest_shape == 1):
        res_s.append(rest_shape)
        res_d.append(canon(rest_stride * ld[-1]))
    return _unwrap(res_s, res_d)


def complement(layout, cotarget):
    """Symbolic counterpart of ``algebra._complement`` (CuTe's rules for dynamic strides)."""
    from .algebra import _bw_coalesce, _coalesce
    from .layout import Layout

    f = _coalesce(Layout._make(it.filter_zeros(layout.stride, layout.shape), layout.stride))
    fs, fd = it.flatten_to_tuple(f.shape), it.flatten_to_tuple(f.stride)
    modes = []
    last = 0
    for s, d in zip(fs, fd):
        if isinstance(d, ScaledBasis):
            raise layout_error(LayoutError, "complement", "strides must be non-negative integers",
                               f"found stride {d}", layout=layout)
        if type(d) is int:
            if d < 0:
                raise layout_error(LayoutError, "complement", "strides must be non-negative integers",
                                   f"found stride {d}", layout=layout)
        else:
            nonneg = sp.sympify(d).is_nonnegative
            if nonneg is False:
                raise layout_error(LayoutError, "complement", "strides must be non-negative integers",
                                   f"found stride {d}", layout=layout)
            if nonneg is None:
                raise fail("complement", f"{d} >= 0", "strides must be non-negative", layout=layout)
        if not (type(s) is int and s == 1) and not (type(d) is int and d == 0):
            modes.append((d, s))
            last = last + (s - 1) * d
    dynamic = [d for d, _s in modes if type(d) is not int]
    if dynamic and len(modes) > 1:
        raise fail("complement", "static strides",
                   f"dynamic-stride complement only for rank-1 layouts (CuTe's rule): the filtered layout "
                   f"{f} has {len(modes)} modes and stride(s) {', '.join(str(d) for d in dynamic)}",
                   layout=layout)
    if cotarget is None:
        cotarget = expand(last + 1)
    if not modes:
        return Layout(canon(it.product(cotarget)))
    modes.sort(key=lambda m: m[0])  # static strides here (or a single mode)
    res_s, res_d = [], [1]
    inexact = False
    for d, s in modes:
        prev = res_d[-1]
        if type(d) is int and type(prev) is int:
            new_shape = d // prev
        else:
            reach = le(prev, d)
            if reach is None:
                raise fail("complement", f"{prev} <= {d}",
                           f"injectivity: stride {d} must reach past the modes below it (which reach {prev})",
                           layout=layout)
            new_shape = 0 if not reach else (exact_div(d, prev) if divides(prev, d) else canon(sp.floor(d / prev)))
        if new_shape == 0:
            raise layout_error(InjectivityError, "complement", "non-injective layout in complement",
                               f"stride {d} overlaps the modes below it (which reach {prev})", layout=layout)
        if not divides(prev, d):
            inexact = True
        res_s.append(new_shape)
        res_d.append(canon(d * s))
    # A mode of extent 1 is filtered out before the chain; a symbolic extent that may be 1 keeps its mode, which
    # changes the result where a step is inexact (floor(d / prev)): then the answer depends on the extent.
    maybe_unit = [s for _d, s in modes if type(s) is not int and lt(1, s) is not True]
    if inexact and maybe_unit:
        raise fail("complement", f"{maybe_unit[0]} > 1",
                   f"the mode of extent {maybe_unit[0]} is dropped when it is 1, and the complement then differs "
                   f"(a stride is not a multiple of the modes below it)", layout=layout)
    rest_shape = canon(it.product(it.ceil_div(cotarget, res_d[-1])))  # C++: coalesce(ceil_div(cotarget, stride))
    res_s.append(rest_shape)
    if rest_shape == 1:
        res_d[-1] = 0
    return _canon_layout(_bw_coalesce(res_s, res_d, res_s[-1], res_d[-1]))


def right_inverse(layout):
    """Symbolic counterpart of ``algebra._right_inverse``: as in C++, modes with dynamic strides are skipped."""
    from .algebra import _coalesce, _modes, _unwrap
    from .layout import Layout

    flat = _coalesce(layout)
    fs, fd = _modes(flat)
    for d in fd:
        if isinstance(d, ScaledBasis):
            raise TypeError(f"right_inverse: needs integer strides, got {layout}")
    astride = [abs(d) if type(d) is int else None for d in fd]
    rstride = it.compact_col_major(fs)
    seq = []
    nxt = 1
    while type(nxt) is int and nxt in astride:
        k = astride.index(nxt)
        if seq and (fd[k] > 0) != (fd[seq[0]] > 0):
            break
        seq.append(k)
        nxt2 = fs[k] * astride[k]
        if nxt2 == nxt:
            break
        nxt = nxt2
    if not seq:
        return Layout._make(1, 0)
    return _canon_layout(_unwrap([fs[k] for k in seq], [it.signum(fd[k]) * rstride[k] for k in seq]))


def left_inverse(layout):
    """Symbolic counterpart of ``algebra._left_inverse``: the stride order and divisibility decided."""
    from .algebra import _coalesce, _modes
    from .layout import Layout

    flat = _coalesce(layout)
    fs, fd = _modes(flat)
    for d in fd:
        if isinstance(d, ScaledBasis) or (type(d) is int and d < 0):
            raise layout_error(LayoutError, "left_inverse", "strides must be non-negative integers",
                               f"found stride {d}", layout=layout)
        if type(d) is not int:
            raise fail("left_inverse", "static strides", f"CuTe's left_inverse requires static strides; found {d}",
                       layout=layout)
    pre = it.prefix_product(fs)
    order = []
    for i in (i for i in range(len(fs)) if not (type(fd[i]) is int and fd[i] == 0)):
        pos = len(order)
        for p, j in enumerate(order):  # insertion sort with decided comparisons (ties keep order)
            c = lt(fd[i], fd[j])
            if c is None:
                raise fail("left_inverse", f"{fd[i]} < {fd[j]} or {fd[i]} >= {fd[j]}",
                           "the order of the strides", layout=layout)
            if c:
                pos = p
                break
        order.insert(pos, i)
    if not order:                        # every stride 0: size(layout):0, as C++
        return Layout._make(it.product(fs), 0)
    res_s, res_d = [], []
    prev = None
    for i in order:
        if prev is None:
            res_s.append(fd[i])
            res_d.append(0)
        else:
            reach = canon(fd[prev] * fs[prev])
            inside = lt(fd[i], reach)
            if inside is None:
                raise fail("left_inverse", f"{fd[i]} >= {reach}",
                           f"stride {fd[i]} must lie beyond the span of mode {fs[prev]}:{fd[prev]}", layout=layout)
            if inside:
                raise layout_error(DivisibilityError, "left_inverse", "left inverse divisibility condition",
                                   f"stride {fd[i]} falls inside the span of mode {fs[prev]}:{fd[prev]}: "
                                   f"the modes interleave (or overlap), so no layout inverts it", layout=layout)
            dv = divides(fd[prev], fd[i])
            if dv is None:
                raise fail("left_inverse", f"{fd[i]} % {fd[prev]} == 0", "left inverse divisibility condition",
                           layout=layout)
            if not dv:
                raise layout_error(DivisibilityError, "left_inverse", "left inverse divisibility condition",
                                   f"stride {fd[i]} is not a multiple of stride {fd[prev]}", layout=layout)
            res_s.append(exact_div(fd[i], fd[prev]))
            res_d.append(pre[prev])
        prev = i
    res_s.append(fs[prev])
    res_d.append(pre[prev])
    return _coalesce(_canon_layout(Layout._make(tuple(res_s), tuple(res_d))))


def upcast_leaf(s, d, n, layout):
    """``recast.upcast`` of one leaf with a symbolic extent or stride."""
    if type(d) is int and d == 0:
        return s, d
    sg = sign(d, "upcast", layout=layout, n=n)
    ad = d * sg
    if type(s) is int and s == 1:
        return s, canon(sg * ceil_div(ad, n))
    dv = _or(divides(n, ad), divides(ad, n))
    if dv is None:
        raise fail("upcast", f"{ad} % {n} == 0 or {n} % {ad} == 0", "the divisibility condition of upcast",
                   layout=layout, n=n)
    if not dv:
        raise layout_error(DivisibilityError, "upcast", "divisibility condition",
                           f"stride {d} and factor {n}: neither divides the other", layout=layout, n=n)
    return canon(ceil_div(s, ceil_div(n, ad))), canon(sg * ceil_div(ad, n))


def require_divides(op: str, b, t, detail: str, **operands):
    """Raise unless ``b`` provably divides ``t`` (DivisibilityError when it provably does not)."""
    dv = divides(b, t)
    if dv is None:
        raise fail(op, f"{t} % {b} == 0", detail, **operands)
    if not dv:
        raise layout_error(DivisibilityError, op, detail, f"{t} % {b} != 0", **operands)


# ---------------------------------------------------------------------------
# local_tile for a layout


def _pad(coord, r):
    if isinstance(coord, list):
        coord = tuple(coord)
    if isinstance(coord, tuple):
        if len(coord) > r:
            raise layout_error(RankError, "local_tile", "coordinate has more modes than the divided layout",
                               f"rank {len(coord)} > {r}", coord=coord)
        return coord + (_,) * (r - len(coord))
    return coord


def local_tile(layout, tiler, coord, proj=None):
    """CuTe's ``local_tile`` for a layout: ``(tile layout, offset of the tile)``.

    The layout is ``zipped_divide(layout, tiler)`` sliced at ``coord`` in its
    rest modes, exactly as :func:`cute_py.local_tile` slices a tensor; the
    offset is where the tile starts. ``coord`` may hold symbols (a block
    index); ``proj`` removes tiler modes first (``(1, None, 1)`` for A of an
    (M, N, K) tiler).

    Postcondition: ``layout(tile_coord + tile_start) == offset + tile(tile_coord)``
    for every coordinate of the tile.

    >>> from cute_py import Layout, _
    >>> M, K = symbols("M K")
    >>> m, k = indices("m k")
    >>> tile, off = local_tile(Layout((M, K), (K, 1)), (128, 256, 64), (m, 0, _), proj=(1, None, 1))
    >>> print(tile, off)
    (128,64,ceiling(K/64)):(K,1,64) 128*K*m
    >>> tile, off = local_tile(Layout((M, K), (K, 1)), (128, 64), (m, k))
    >>> print(tile, off)
    (128,64):(K,1) 128*K*m + 64*k
    """
    from .layout import Layout, dice, _dice_tuple, slice_and_offset
    from .partition import _proj, _tup
    from .tiling import zipped_divide

    if proj is not None:
        p = _proj("local_tile", proj)
        tiler = dice(p, tiler) if isinstance(tiler, Layout) else _dice_tuple(p, _tup(tiler), "local_tile")
        coord = _dice_tuple(p, _tup(coord), "local_tile")
    tiled = zipped_divide(layout, tiler)
    s = tiled.shape
    r0 = len(s[0]) if isinstance(s[0], tuple) else 1
    r1 = len(s[1]) if isinstance(s[1], tuple) else 1
    keep = _ if r0 == 1 else (_,) * r0
    tile, off = slice_and_offset((keep, _pad(coord, r1)), tiled)
    return tile, canon(off) if type(off) is not int else off

