"""``explain(op, *args)``: the step-by-step derivation of an algebra operation, every intermediate in CuTe notation.

Supported: ``coalesce``, ``composition``, ``complement``, ``logical_divide``,
``zipped_divide``, ``tiled_divide``, ``flat_divide``, ``logical_product``,
``zipped_product``, ``tiled_product``, ``flat_product``, ``blocked_product``,
``raked_product``, ``right_inverse``, ``left_inverse``. Arguments are layouts,
ints, tilers (tuples) or CuTe text (``"(4,3):(3,1)"``; a by-mode tiler may be
written ``"<4:1,8:1>"``). The operation itself runs first: a rejected input
raises the library's :class:`~cute_py.LayoutError` unchanged. The derivation
replays CuTe's algorithm (``layout.hpp``) and ends with the library's result.

>>> e = explain("complement", "4:2", 24)
>>> e.result
Layout((2, 3), (1, 8))
>>> print(e.splitlines()[0])
complement(4:2, 24): the offsets that 4:2 does not reach, in increasing order
"""

from __future__ import annotations

import html

from .. import layouts as L
from ..layouts import ComposedLayout, Layout, Swizzle, int_tuple as it, parse
from ..layouts.coalescing import _coalesce_x
from ..layouts.errors import LayoutError, layout_error
from ..layouts.int_tuple import _
from ..layouts.layout import flat_modes

__all__ = ["explain", "Explanation", "OPS"]


class Explanation(str):
    """The derivation text (a ``str``); ``result`` is the library's result, ``steps`` the ``(name, value)`` intermediates.

    In a notebook it renders as preformatted HTML (``_repr_html_``).

    >>> e = explain("coalesce", "(2,(1,6)):(1,(6,2))")
    >>> e.result, e.steps[-1]
    (Layout(12, 1), ('result', Layout(12, 1)))
    """

    def __new__(cls, text, op="", result=None, steps=()):
        obj = super().__new__(cls, text)
        obj.op = op
        obj.result = result
        try:
            obj.steps = tuple(steps)
        except TypeError:
            raise TypeError(f"Explanation: steps must be an iterable of steps, got {type(steps).__name__}") from None
        return obj

    def __repr__(self):
        return str(self)

    def _repr_html_(self):
        return f'<pre class="cute-explain">{html.escape(str(self))}</pre>'


class _W:
    """Collects indented lines and the named intermediate values."""

    def __init__(self):
        self.lines, self.steps = [], []

    def add(self, text, ind=0):
        self.lines.append("  " * ind + text)

    def step(self, name, value, ind=0, text=None):
        self.steps.append((name, value))
        self.add(text if text is not None else f"{name} = {_f(value)}", ind)
        return value


def _f(x) -> str:
    """CuTe notation for a layout, int, shape or by-mode tiler."""
    if x is _:
        return "_"
    if isinstance(x, tuple):
        if any(not isinstance(e, (int, tuple)) for e in it.flatten_to_tuple(x)) or any(
                isinstance(e, Layout) for e in x):
            return "<" + ",".join(_f(e) for e in x) + ">"
        return it.to_str(x)
    return str(x)


def _modes_str(s, d):
    return ", ".join(f"{a}:{b}" for a, b in zip(s, d))


def _flat(layout):
    s, d = flat_modes(layout)
    return list(s), list(d)


def _int_layout(layout) -> bool:
    s, d = flat_modes(layout)
    return all(type(x) is int for x in s) and all(type(x) is int for x in d)


# ---------------------------------------------------------------------------
# coalesce


def _coalesce(w, a, ind):
    w.add(f"coalesce({a}): merge adjacent modes without changing the function", ind)
    if not isinstance(a, Layout) or not _int_layout(a):
        return w.step("result", L.coalesce(a), ind)
    fs, fd = _flat(a)
    w.add(f"flatten: {_modes_str(fs, fd)}", ind + 1)
    w.add("walk from the last mode to the first:", ind + 1)
    ns, nd = [fs[-1]], [fd[-1]]
    for i in range(len(fs) - 2, -1, -1):
        s, d = fs[i], fd[i]
        if s == 1:
            w.add(f"{s}:{d} has size 1: dropped", ind + 2)
        elif len(ns) == 1 and ns[0] == 1:
            w.add(f"{s}:{d} replaces the size-1 mode {ns[0]}:{nd[0]}", ind + 2)
            ns[0], nd[0] = s, d
        elif s * d == nd[0]:
            w.add(f"{s}:{d} then {ns[0]}:{nd[0]}: {s}*{d} == {nd[0]}, merge into {s * ns[0]}:{d}", ind + 2)
            ns[0] *= s
            nd[0] = d
        else:
            w.add(f"{s}:{d} then {ns[0]}:{nd[0]}: {s}*{d} != {nd[0]}, keep both", ind + 2)
            ns.insert(0, s)
            nd.insert(0, d)
    return w.step("result", L.coalesce(a), ind, f"result = {L.coalesce(a)}   (modes {_modes_str(ns, nd)})")


# ---------------------------------------------------------------------------
# composition


def _compose_leaf(w, ls, ld, rs, rd, ind):
    """Replay CuTe's composition of the flat A ``ls:ld`` with one B mode ``rs:rd``."""
    if rd == 0:
        w.add(f"stride 0: every coordinate maps to A(0) = 0 -> {rs}:0", ind)
        return Layout(rs, 0)
    if not isinstance(ls, tuple):
        w.add(f"A is the single mode {ls}:{ld}: stride {rd} x {ld} = {rd * ld} -> {rs}:{rd * ld}", ind)
        return Layout(rs, rd * ld)
    res_s, res_d = [], []
    rest_shape, rest_stride = rs, rd
    for i in range(len(ls) - 1):
        s, d = ls[i], ld[i]
        ar = abs(rest_stride)
        next_shape = -(-s // ar)
        next_stride = -(-ar // s) * (1 if rest_stride > 0 else -1)
        if rest_shape == 1:
            w.add(f"A mode {i} = {s}:{d}: nothing left to place (stride {rest_stride} -> {next_stride})", ind)
            rest_stride = next_stride
            continue
        if next_shape == 1:
            w.add(f"A mode {i} = {s}:{d}: stride {ar} skips it; stride division {ar} / {s} = {abs(next_stride)}", ind)
            rest_stride = next_stride
            continue
        new_shape = min(next_shape, rest_shape)
        w.add(f"A mode {i} = {s}:{d}: shape division ceil({s} / {ar}) = {next_shape}, take min({next_shape}, "
              f"{rest_shape}) = {new_shape} -> {new_shape}:{rest_stride * d} (stride {rest_stride} x {d}); "
              f"left: shape {rest_shape} / {new_shape} = {rest_shape // new_shape}, "
              f"stride division ceil({ar} / {s}) = {abs(next_stride)}", ind)
        res_s.append(new_shape)
        res_d.append(rest_stride * d)
        rest_shape //= new_shape
        rest_stride = next_stride
    s, d = ls[-1], ld[-1]
    if not res_s:
        w.add(f"A mode {len(ls) - 1} = {s}:{d} (last): all of it -> {rest_shape}:{rest_stride * d}", ind)
        return Layout(rest_shape, rest_stride * d)
    if rest_shape != 1:
        w.add(f"A mode {len(ls) - 1} = {s}:{d} (last): the rest -> {rest_shape}:{rest_stride * d}", ind)
        res_s.append(rest_shape)
        res_d.append(rest_stride * d)
    return Layout(tuple(res_s), tuple(res_d)) if len(res_s) > 1 else Layout(res_s[0], res_d[0])


def _compose_modes(w, ls, ld, bs, bd, ind, path=()):
    if isinstance(bs, tuple):
        parts = [_compose_modes(w, ls, ld, s, d, ind, path + (i,)) for i, (s, d) in enumerate(zip(bs, bd))]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    name = f"B mode {','.join(map(str, path)) or '0'}"
    w.add(f"{name} = {bs}:{bd}:", ind)
    r = _compose_leaf(w, ls, ld, bs, bd, ind + 1)
    w.step(name, r, ind + 1, f"=> {bs}:{bd} becomes {r}")
    return r


def _by_mode(w, explain_fn, a, tiler, result, ind, text):
    """A by-mode tiler: ``text``, then mode i of A with tiler element i explained by ``explain_fn``; the result."""
    w.add(text, ind + 1)
    for i, ti in enumerate(tiler):
        w.add(f"mode {i}:", ind + 1)
        explain_fn(w, a[i], ti, ind + 2)
    return w.step("result", result, ind)


def _composition(w, a, b, ind):
    result = L.composition(a, b)
    w.add(f"composition({_f(a)}, {_f(b)}):  R(c) = A(B(c)) for every c in B's domain", ind)
    if isinstance(a, ComposedLayout):
        w.add(f"A = {a.outer} o {it.to_str(a.offset)} o {a.inner}: compose B into the inner layout", ind + 1)
        _composition(w, a.inner, b, ind + 1)
        w.steps[-1] = ("composition(inner, B)", w.steps[-1][1])
        return w.step("result", result, ind, f"result = {result}   (the swizzle and offset kept outside)")
    if isinstance(a, Swizzle):
        w.add(f"A is the swizzle {a}: the result applies it after B", ind + 1)
        return w.step("result", result, ind)
    if b is _:
        w.add("B = _ (identity): A is kept", ind + 1)
        return w.step("result", result, ind)
    if it.is_int(b):
        w.add(f"B = {b} means the layout {b}:1", ind + 1)
        b = Layout(b)
    if isinstance(b, tuple):
        return _by_mode(w, _composition, a, b, result, ind, f"B is a tiler with {len(b)} modes: "
                        "compose mode by mode (A's modes past the tiler are dropped)")
    if isinstance(b, (ComposedLayout, Swizzle)) or not _int_layout(a) or not _int_layout(b):
        w.add("(no step-by-step replay for basis strides, swizzles or symbolic extents)", ind + 1)
        return w.step("result", result, ind)
    flat = _coalesce_x(a)
    note = "" if flat == L.coalesce(a) else " (the trailing size-1 mode is kept as size 2 to extend the function)"
    w.step("coalesce(A)", flat, ind + 1, f"coalesce A: {a} -> {flat}{note}")
    ls, ld = flat.shape, flat.stride
    w.add(f"compose each mode of B = {b} with it (B's stride walks A's modes: "
          f"shape division takes what fits, stride division skips whole modes):", ind + 1)
    r = _compose_modes(w, ls, ld, b.shape, b.stride, ind + 2)
    w.add(f"assembled in B's shape: {r}", ind + 1)
    return w.step("result", result, ind)


# ---------------------------------------------------------------------------
# complement


def _complement(w, a, cotarget, ind):
    result = L.complement(a, cotarget)
    ct = "" if cotarget is None else f", {_f(cotarget)}"
    w.add(f"complement({a}{ct}): the offsets that {a} does not reach, in increasing order", ind)
    if isinstance(a, ComposedLayout):
        w.add("a composed layout: complement its inner layout", ind + 1)
        a = a.inner
    if not _int_layout(a):
        return w.step("result", result, ind)
    fs, fd = _flat(a)
    modes = [(d, s) for s, d in zip(fs, fd) if s != 1 and d != 0]
    w.add(f"filter (drop size-1 and stride-0 modes): {_modes_str([s for d, s in modes], [d for d, s in modes]) or 'none'}",
          ind + 1)
    last = sum((s - 1) * d for d, s in modes)
    if cotarget is None:
        cotarget = last + 1
        w.add(f"cotarget = cosize(filter(A)) = {cotarget}", ind + 1)
    if not modes:
        w.step("rest mode", result, ind + 1, f"nothing to avoid: the rest mode is the whole cotarget, {result}")
        return w.step("result", result, ind)
    modes.sort(key=lambda m: m[0])
    w.add(f"sorted by stride: {_modes_str([s for d, s in modes], [d for d, s in modes])}", ind + 1)
    res_s, res_d = [], [1]
    for d, s in modes:
        gap = d // res_d[-1]
        w.step(f"gap below {s}:{d}", Layout(gap, res_d[-1]), ind + 1,
               f"gap below {s}:{d}: {d} / {res_d[-1]} = {gap} -> mode {gap}:{res_d[-1]}; next stride {d} x {s} = {d * s}")
        res_s.append(gap)
        res_d.append(d * s)
    total = it.product(cotarget)
    rest = it.product(it.ceil_div(cotarget, res_d[-1]))
    rest_d = res_d[-1] if rest != 1 else 0
    w.step("rest mode", Layout(rest, rest_d), ind + 1,
           f"rest mode: ceil({total} / {res_d[-1]}) = {rest} -> {rest}:{rest_d}")
    res_s.append(rest)
    if rest == 1:
        res_d[-1] = 0
    raw = Layout(tuple(res_s), tuple(res_d)) if len(res_s) > 1 else Layout(res_s[0], res_d[0])
    w.add(f"modes {raw}, coalesced: {L.coalesce(raw)}", ind + 1)
    return w.step("result", result, ind)


# ---------------------------------------------------------------------------
# inverses


def _coalesced_modes(w, a, ind):
    """The inverses' first step: coalesce A and show its modes; returns the flat shape and stride."""
    flat = L.coalesce(a)
    fs, fd = flat_modes(flat)
    w.step("coalesce(A)", flat, ind, f"coalesce A: {flat}   (modes {_modes_str(fs, fd)})")
    return fs, fd


def _right_inverse(w, a, ind):
    result = L.right_inverse(a)
    w.add(f"right_inverse({_f(a)}): R with A(R(i)) == i, following the strides 1, s0*d0, ...", ind)
    if not isinstance(a, Layout) or not _int_layout(a):
        return w.step("result", result, ind)
    fs, fd = _coalesced_modes(w, a, ind + 1)
    rstride = it.compact_col_major(fs)
    w.add(f"compact (column-major) strides of its shape {it.to_str(fs)}: {it.to_str(rstride)}", ind + 1)
    nxt, seq = 1, []
    while True:
        k = next((i for i, d in enumerate(fd) if abs(d) == nxt), None)
        if k is None:
            w.add(f"no mode has stride {nxt}: stop", ind + 1)
            break
        if seq and (fd[k] > 0) != (fd[seq[0]] > 0):
            w.add(f"mode {k} = {fs[k]}:{fd[k]} changes sign: stop", ind + 1)
            break
        seq.append(k)
        w.add(f"stride {nxt}: mode {k} = {fs[k]}:{fd[k]} -> {fs[k]}:{it.signum(fd[k]) * rstride[k]}; "
              f"next stride {fs[k]} x {abs(fd[k])} = {fs[k] * abs(fd[k])}", ind + 1)
        if fs[k] * abs(fd[k]) == nxt:
            break
        nxt = fs[k] * abs(fd[k])
    return w.step("result", result, ind)


def _left_inverse(w, a, ind):
    result = L.left_inverse(a)
    w.add(f"left_inverse({_f(a)}): R with R(A(i)) == i", ind)
    if not isinstance(a, Layout) or not _int_layout(a):
        return w.step("result", result, ind)
    fs, fd = _coalesced_modes(w, a, ind + 1)
    pre = it.prefix_product(fs)
    pre = pre if isinstance(pre, tuple) else (pre,)
    w.add(f"prefix products of the shape (where each mode's coordinate starts): {it.to_str(pre)}", ind + 1)
    order = sorted((i for i in range(len(fs)) if fd[i] != 0), key=lambda i: fd[i])
    w.add(f"non-zero-stride modes sorted by stride: {_modes_str([fs[i] for i in order], [fd[i] for i in order])}",
          ind + 1)
    res_s, res_d, prev = [], [], None
    for i in order:
        if prev is None:
            w.add(f"offsets below the first stride {fd[i]} are not reached: mode {fd[i]}:0", ind + 1)
            res_s.append(fd[i])
            res_d.append(0)
        else:
            w.add(f"stride {fd[i]} / {fd[prev]} = {fd[i] // fd[prev]} steps of mode {fs[prev]}:{fd[prev]} -> "
                  f"mode {fd[i] // fd[prev]}:{pre[prev]}", ind + 1)
            res_s.append(fd[i] // fd[prev])
            res_d.append(pre[prev])
        prev = i
    if prev is not None:
        w.add(f"last: mode {fs[prev]}:{fd[prev]} itself -> {fs[prev]}:{pre[prev]}", ind + 1)
        res_s.append(fs[prev])
        res_d.append(pre[prev])
        raw = Layout(tuple(res_s), tuple(res_d))
        w.add(f"modes {raw}, coalesced: {L.coalesce(raw)}", ind + 1)
    return w.step("result", result, ind)


# ---------------------------------------------------------------------------
# divides and products


def _tiler(op, t):
    return Layout(t) if it.is_int(t) else t


def _tiler_cases(w, explain_fn, a, t, result, ind, tname, verb, inner):
    """The cases logical_divide and logical_product explain alike; the result where one applies, else None.

    A composed A: ``explain_fn`` on its inner layout (``inner`` says so); a ``_`` tiler keeps A; a by-mode
    tiler goes mode by mode (``verb``), A's modes past it kept. ``tname`` names the tiler (T or B).
    """
    if isinstance(a, ComposedLayout):
        w.add(f"A is composed ({a.outer} o {it.to_str(a.offset)} o ...): {inner}", ind + 1)
        explain_fn(w, a.inner, t, ind + 1)
        return w.step("result", result, ind)
    if t is _:
        w.add(f"{tname} = _: A is kept", ind + 1)
        return w.step("result", result, ind)
    if isinstance(t, tuple):
        return _by_mode(w, explain_fn, a, t, result, ind, f"{tname} is a tiler with {len(t)} modes: "
                        f"{verb} mode by mode (A's modes past the tiler are kept)")
    return None


def _logical_divide(w, a, t, ind):
    result = L.logical_divide(a, t)
    w.add(f"logical_divide({_f(a)}, {_f(t)}) = composition(A, make_layout(T, complement(T, shape(coalesce(A)))))",
          ind)
    done = _tiler_cases(w, _logical_divide, a, t, result, ind, "T", "divide", "divide its inner layout")
    if done is not None:
        return done
    t = _tiler("logical_divide", t)
    ca = L.coalesce(a)
    w.step("coalesce(A)", ca, ind + 1, f"1. coalesce(A) = {ca}; its shape {_f(ca.shape)} is the complement's cotarget")
    w.add("2. the complement of the tile (the rest):", ind + 1)
    c = _complement(w, t, ca.shape, ind + 2)
    w.steps[-1] = ("complement", c)
    tiler = Layout((t.shape, c.shape), (t.stride, c.stride))
    w.step("tiler", tiler, ind + 1, f"3. concatenated tiler make_layout(T, complement) = {tiler}")
    w.add("4. compose A with it:", ind + 1)
    r = _composition(w, a, tiler, ind + 2)
    w.steps[-1] = ("composition", r)
    return w.step("result", result, ind, f"result: ((tile),(rest)) = {result}")


def _regroup(w, op, kind, a, t, ind, logical_fn, logical_name):
    result = getattr(L, op)(a, t)
    w.add(f"{op}({_f(a)}, {_f(t)}): {logical_name}, then regroup the modes", ind)
    lr = logical_fn(w, a, t, ind + 1)
    w.steps[-1] = (logical_name, lr)
    zname = "zipped_" + kind
    z = getattr(L, zname)(a, t)
    if isinstance(t, tuple):
        w.step(zname, z, ind + 1, f"gather the tile modes and the rest modes (tile_unzip): ((tiles),(rests)) = {z}")
    else:
        w.step(zname, z, ind + 1, f"a layout tiler is already ((tile),(rest)): {z}")
    if op.startswith("tiled"):
        w.add("splice the rest modes in at the top level: ((tiles), rest0, rest1, ...)", ind + 1)
    elif op.startswith("flat"):
        w.add("splice the tile modes and the rest modes in at the top level", ind + 1)
    return w.step("result", result, ind)


def _logical_product(w, a, b, ind):
    result = L.logical_product(a, b)
    w.add(f"logical_product({_f(a)}, {_f(b)}) = make_layout(A, composition(complement(A, size(A)*cosize(B)), B))", ind)
    done = _tiler_cases(w, _logical_product, a, b, result, ind, "B", "product", "the product of its inner layout")
    if done is not None:
        return done
    b = _tiler("logical_product", b)
    n, m = it.product(a.shape), L.cosize(b)
    w.add(f"1. size(A) = {n}, cosize(B) = {m}: cotarget {n} x {m} = {n * m}", ind + 1)
    w.add("2. the complement of A within it (where the copies of A go):", ind + 1)
    c = _complement(w, a, n * m, ind + 2)
    w.steps[-1] = ("complement", c)
    w.add("3. lay the copies out by B:", ind + 1)
    cb = _composition(w, c, b, ind + 2)
    w.steps[-1] = ("composition", cb)
    return w.step("result", result, ind, f"4. make_layout(A, {cb}) = {result}")


def _blocked_raked(w, op, a, b, ind):
    result = getattr(L, op)(a, b)
    blocked = op == "blocked_product"
    w.add(f"{op}({_f(a)}, {_f(b)}): logical product of the rank-padded layouts, then zip "
          f"{'(block, repetitions)' if blocked else '(repetitions, block)'} per mode", ind)
    if isinstance(a, ComposedLayout):
        w.add("A is composed: the product of its inner layout", ind + 1)
        _blocked_raked(w, op, a.inner, b, ind + 1)
        return w.step("result", result, ind)
    b = _tiler(op, b)
    r = max(L.rank(a), L.rank(b))
    ap, bp = L.append(a, n=r), L.append(b, n=r)
    w.add(f"1. pad both to rank {r}: A' = {ap}, B' = {bp}", ind + 1)
    w.add("2. the logical product:", ind + 1)
    lp = _logical_product(w, ap, bp, ind + 2)
    w.steps[-1] = ("logical_product", lp)
    first, second = (lp[0], lp[1]) if blocked else (lp[1], lp[0])
    w.add(f"3. zip({first}, {second}): mode i is ({'A_i, B*_i' if blocked else 'B*_i, A_i'})", ind + 1)
    return w.step("result", result, ind)


# ---------------------------------------------------------------------------


def _arg(x):
    if isinstance(x, list):
        return tuple(_arg(e) for e in x)
    if isinstance(x, tuple):
        return tuple(_arg(e) for e in x)
    if isinstance(x, str):
        s = x.strip()
        if s.startswith("<") and s.endswith(">") and not s.startswith("<<"):
            return tuple(_arg(p) for p in _split_top(s[1:-1]))
        if s == "_":
            return _
        return parse(s)
    return x


def _split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def _nargs(op, args, lo, hi=None):
    """Check ``lo <= len(args) <= hi`` (``hi=None``: no upper bound) and say what ``op`` takes when not."""
    if len(args) < lo or (hi is not None and len(args) > hi):
        want = (f"at least {lo}" if hi is None else str(lo) if lo == hi else
                f"{lo} or {hi}" if hi == lo + 1 else f"{lo} to {hi}")
        raise layout_error(LayoutError, "explain", f"{op} takes {want} argument{'s' if hi != 1 else ''}",
                           f"got {len(args)}")


def _tiler_args(args):
    return args[1] if len(args) == 2 else tuple(args[1:])


def _do(op, args, w):
    if op == "coalesce":
        _nargs(op, args, 1, 1)
        return _coalesce(w, args[0], 0)
    if op == "composition":
        _nargs(op, args, 2)
        return _composition(w, args[0], _tiler_args(args), 0)
    if op == "complement":
        _nargs(op, args, 1, 2)
        return _complement(w, args[0], args[1] if len(args) > 1 else None, 0)
    if op in ("right_inverse", "left_inverse"):
        _nargs(op, args, 1, 1)
        return (_right_inverse if op == "right_inverse" else _left_inverse)(w, args[0], 0)
    _nargs(op, args, 2)
    a, t = args[0], _tiler_args(args)
    if op == "logical_divide":
        return _logical_divide(w, a, t, 0)
    if op in ("zipped_divide", "tiled_divide", "flat_divide"):
        return _regroup(w, op, "divide", a, t, 0, _logical_divide, "logical_divide")
    if op == "logical_product":
        return _logical_product(w, a, t, 0)
    if op in ("zipped_product", "tiled_product", "flat_product"):
        return _regroup(w, op, "product", a, t, 0, _logical_product, "logical_product")
    return _blocked_raked(w, op, a, t, 0)


OPS = ("coalesce", "composition", "complement", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
       "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
       "right_inverse", "left_inverse")


def explain(op, *args) -> Explanation:
    """The step-by-step derivation of ``op(*args)`` with every intermediate layout, ending in the library's result.

    ``op`` is one of :data:`OPS` (or the function itself); ``args`` are what the
    operation takes, as objects or CuTe text. More than one tiler argument
    (``explain("logical_divide", A, "4:1", "8:1")``) means a by-mode tiler.
    Raises :class:`~cute_py.LayoutError` where the operation does (same message),
    and for an unknown ``op``.

    Postconditions: ``result.result == op(*args)``; ``str(result)`` ends with a
    line containing ``str(result.result)``; ``result.steps`` lists the named
    intermediates ``(name, value)``.

    >>> print(explain("composition", "(4,3):(3,1)", "6:2"))
    composition((4,3):(3,1), 6:2):  R(c) = A(B(c)) for every c in B's domain
      coalesce A: (4,3):(3,1) -> (4,3):(3,1)
      compose each mode of B = 6:2 with it (B's stride walks A's modes: shape division takes what fits, stride division skips whole modes):
        B mode 0 = 6:2:
          A mode 0 = 4:3: shape division ceil(4 / 2) = 2, take min(2, 6) = 2 -> 2:6 (stride 2 x 3); left: shape 6 / 2 = 3, stride division ceil(2 / 4) = 1
          A mode 1 = 3:1 (last): the rest -> 3:1
          => 6:2 becomes (2,3):(6,1)
      assembled in B's shape: (2,3):(6,1)
    result = (2,3):(6,1)
    """
    name = getattr(op, "__name__", op)
    if not isinstance(name, str) or name not in OPS:
        raise layout_error(LayoutError, "explain", "unknown operation",
                           f"{name!r}; one of {', '.join(OPS)}")
    args = tuple(_arg(x) for x in args)
    w = _W()
    result = _do(name, args, w)
    return Explanation("\n".join(w.lines), name, result, w.steps)
