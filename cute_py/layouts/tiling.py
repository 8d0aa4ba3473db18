"""Divides and products: tiling one layout by another.

``logical_divide(A, T)`` splits A's domain into (tile, rest): mode 0 is the
tile ``T``'s part of A, mode 1 the repetitions of it. ``logical_product(A, B)``
repeats A as laid out by B. The zipped/tiled/flat forms only regroup the
modes of the logical result; blocked and raked products interleave the tile and
the repetitions per mode. A tiler is a Layout, an int ``n`` (``n:1``), ``_``,
or a tuple of those, applied mode by mode (modes of A beyond the tiler are kept).
"""

from __future__ import annotations

import builtins
import math

from . import decide, int_tuple as it
from . import basis_algebra, f2_algebra
from .algebra import _complement, _compose, complement, composition
from .basis import ScaledBasis
from .f2 import F2
from .coalescing import coalesce_flat, coalesced_flat, filter as _filter
from .errors import DivisibilityError, LayoutError, RankError, in_operation, layout_error, led_by, _r, names_caller
from .int_tuple import _, is_int, is_sym
from .layout import (
    ALGEBRA, Layout, LayoutLeft, LayoutRight, _modes, cosize, cosize_flat, flat_modes, int_layout,
    require_nonempty,
)
from .make import make_ordered_layout
from .modes import append, zip
from .operands import by_owner, tiler_arg, tiler_modes
from .queries import rank

__all__ = [
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product",
    "blocked_product", "raked_product", "tile_to_shape", "tile_unzip", "layout_ceil_div",
    "evenly_divides",
]


def _tiler_layout(op, t):
    if isinstance(t, Layout):
        return t
    if type(t) is int:
        return int_layout(t)
    if is_int(t) or is_sym(t):
        return Layout(t)
    raise TypeError(f"{op}: a tiler is a Layout, an int, _ or a tuple of those; got {type(t).__name__}: {_r(t)}")


def logical_divide(layout, tiler):
    """``composition(A, make_layout(T, complement(T, shape(coalesce(A)))))``: ((tile), (rest)).

    Precondition: the composition is admissible (see :func:`~cute_py.layouts.algebra.composition`).
    Postconditions: ``rank(result) == 2`` for a layout tiler; ``result(i)``
    enumerates A's offsets tile by tile; ``size(result) >= size(A)``;
    ``compatible(shape(T), shape(result[0]))``.

    >>> print(logical_divide(Layout(24), Layout(4, 2)))
    (4,(2,3)):(2,(1,8))
    >>> print(logical_divide(Layout((12, 32), (32, 1)), (4, 8)))
    ((4,3),(8,4)):((32,128),(1,8))

    A symbolic extent divided by a static tile gives a static tile mode and a
    rest mode of ``ceiling`` extent (CuTe's ``ceil_div`` for dynamic ints):

    >>> from cute_py.symbolic import symbols
    >>> M, K = symbols("M K")
    >>> print(logical_divide(Layout((M, K), (K, 1)), (128, 64)))
    ((128,ceiling(M/128)),(64,ceiling(K/64))):((K,128*K),(1,64))
    """
    if type(layout) is not Layout:
        return by_owner("logical_divide", logical_divide, layout, tiler)
    if type(tiler) is not Layout and not (type(tiler) is int and tiler > 0):
        tiler = tiler_arg("logical_divide", tiler)
    return Layout._make(*_divide(layout.shape, layout.stride, tiler, layout._flat))


def _divide(s, d, t, flat=None):
    """``(shape, stride)`` of ``logical_divide(s:d, t)`` for a checked tiler ``t``: a tuple divides mode by
    mode and keeps the modes past it (C++'s ``transform_layout``); ``flat`` is ``s:d``'s flat modes where the
    caller has them."""
    if type(t) is tuple:
        s, d = tiler_modes("logical_divide", s, d, t)
        shapes, strides = list(s), list(d)
        for i, ti in enumerate(t):
            shapes[i], strides[i] = _divide(s[i], d[i], ti)
        return tuple(shapes), tuple(strides)
    if t is _:
        return s, d
    if type(t) is not Layout:
        t = _tiler_layout("logical_divide", t)
    ts, td = t._flat or flat_modes(t)
    if type(s) is tuple:
        flat = flat or (it.flatten_to_tuple(s), it.flatten_to_tuple(d))
        empty = 0 in flat[0]
    else:
        empty = s == 0
    if empty:
        require_nonempty("logical_divide", A=Layout._make(s, d), tiler=t)
    coalesced = None
    if ScaledBasis in map(type, td):            # v@i divides mode i of A: the rest per codomain mode
        cotarget = _mode_shapes(Layout._make(s, d))
    elif type(s) is not tuple:                  # one mode: its own coalesced shape
        cotarget = s
    else:
        coalesced = coalesce_flat(flat)
        shape = coalesced[0]
        cotarget = shape[0] if len(shape) == 1 else shape
        if not flat[0] or flat[0][-1] == 1:     # there composition's coalesce_x keeps a last mode coalesce drops
            coalesced = None
    try:
        rest = _complement(t, cotarget)
        rs, rd = rest._flat or flat_modes(rest)
        return _compose(s, d, Layout._make((t.shape, rest.shape), (t.stride, rest.stride), (ts + rs, td + rd)),
                        flat, coalesced)
    except LayoutError as e:
        raise in_operation(e, "logical_divide", A=Layout._make(s, d), tiler=t) from None
    except TypeError as e:                      # complement's refusal of its cotarget, as this operation's
        raise (led_by("logical_divide", e) or e) from None


def _mode_shapes(layout) -> tuple:
    """The codomain of a basis tiler of ``layout``: its strides ``v@i`` select mode ``i`` of ``layout``, so mode
    ``i`` is ``shape(coalesce(layout[i]))`` (C++'s ``shape(coalesce(A))`` for an int tiler, mode by mode)."""
    out = []
    for s, d in builtins.zip(*_modes(layout)):
        c = coalesced_flat(Layout._make(s, d))[0]
        out.append(c[0] if len(c) == 1 else c)
    return tuple(out)


def _zip2_by(s, d, guide, op, layout):
    """CuTe's ``zip2_by`` of the shape ``s`` and the stride ``d`` together: ``((s0, s1), (d0, d1))``, the rank-2
    modes at the terminals of ``guide`` split into their first and second parts."""
    if type(guide) is tuple:
        n = len(guide)
        if type(s) is not tuple or len(s) < n:
            raise layout_error(RankError, op, "mismatched ranks while unzipping", layout=layout, tiler=guide)
        s0, s1, d0, d1 = [], [], [], []
        for i in range(n):
            si, di, gi = s[i], d[i], guide[i]
            if type(gi) is tuple or type(si) is not tuple or len(si) != 2:
                si, di = _zip2_by(si, di, gi, op, layout)
            (a0, a1), (b0, b1) = si, di
            s0.append(a0)
            s1.append(a1)
            d0.append(b0)
            d1.append(b1)
        return (tuple(s0), tuple(s1) + s[n:]), (tuple(d0), tuple(d1) + d[n:])
    if type(s) is not tuple or len(s) != 2:
        raise layout_error(RankError, op, "expected a rank-2 mode to unzip", layout=layout, tiler=guide)
    return s, d


def tile_unzip(layout, tiler):
    """Gather the tile modes and the rest modes of a divide/product into ``((tiles), (rests))``.

    >>> print(tile_unzip(Layout(((4, 3), (8, 4))), (4, 8)))
    ((4,8),(3,4)):((1,12),(4,96))
    """
    if type(layout) is not Layout:
        return by_owner("tile_unzip", tile_unzip, layout, tiler)
    return Layout._make(*_zip2_by(layout.shape, layout.stride, tiler, "tile_unzip", layout))


def _splice(s, d):
    """Modes to splice for CuTe's ``repeat<R>(_)`` slice: a rank-1 mode stays whole (``repeat<1>(_)`` is ``_``)."""
    if isinstance(s, tuple) and len(s) != 1:
        return s, d
    return (s,), (d,)


def _tiled(result):
    """``result(_, repeat<R1>(_))``: keep mode 0 whole, splice mode 1's modes in."""
    s1, d1 = _splice(result.shape[1], result.stride[1])
    return Layout._make((result.shape[0],) + s1, (result.stride[0],) + d1)


def _flat(result):
    """``result(repeat<R0>(_), repeat<R1>(_))``: splice both modes."""
    s0, d0 = _splice(result.shape[0], result.stride[0])
    s1, d1 = _splice(result.shape[1], result.stride[1])
    return Layout._make(s0 + s1, d0 + d1)


def zipped_divide(layout, tiler):
    """``logical_divide`` with the tile modes gathered: ``((tile modes), (rest modes))``.

    >>> print(zipped_divide(Layout((12, 32), (32, 1)), (4, 8)))
    ((4,8),(3,4)):((32,1),(128,8))
    """
    if type(layout) is not Layout:
        return by_owner("zipped_divide", zipped_divide, layout, tiler)
    if type(tiler) is not Layout:
        tiler = tiler_arg("zipped_divide", tiler)
    return _zipped_divide(layout, tiler)


def _zipped_divide(layout, tiler):
    """``zipped_divide`` of a Layout by a checked tiler."""
    s, d = _divide(layout.shape, layout.stride, tiler, layout._flat)
    return Layout._make(*_zip2_by(s, d, tiler, "tile_unzip", layout))


@names_caller
def tiled_divide(layout, tiler):
    """``zipped_divide`` with the rest modes spliced in: ``((tile modes), rest0, rest1, ...)``.

    >>> print(tiled_divide(Layout((12, 32), (32, 1)), (4, 8)))
    ((4,8),3,4):((32,1),128,8)
    """
    if type(layout) is not Layout:
        return by_owner("tiled_divide", tiled_divide, layout, tiler)
    return _tiled(_zipped_divide(layout, tiler_arg("tiled_divide", tiler)))


@names_caller
def flat_divide(layout, tiler):
    """``zipped_divide`` with every tile and rest mode at the top level.

    >>> print(flat_divide(Layout((8, 8)), (4, 2)))
    (4,2,2,4):(1,8,4,16)
    """
    if type(layout) is not Layout:
        return by_owner("flat_divide", flat_divide, layout, tiler)
    return _flat(_zipped_divide(layout, tiler_arg("flat_divide", tiler)))


def logical_product(block, tiler):
    """``make_layout(A, composition(complement(A, size(A)*cosize(B)), B))``: A repeated as B lays it out.

    Postconditions: ``rank(result) == 2`` for a layout tiler, ``result[0] == A``,
    ``compatible(shape(B), shape(result[1]))``.

    >>> print(logical_product(Layout((2, 2), (1, 2)), Layout((3, 3), (3, 1))))
    ((2,2),(3,3)):((1,2),(12,4))
    >>> print(logical_product(Layout(4), 3))
    (4,3):(1,4)
    """
    if type(block) is not Layout:
        return by_owner("logical_product", logical_product, block, tiler, name="block")
    if type(tiler) is not Layout:
        tiler = tiler_arg("logical_product", tiler)
    return Layout._make(*_product(block, tiler))


def _refuse_f2(block, tiler):
    raise layout_error(LayoutError, "logical_product", "products of layouts with F2 strides are not implemented",
                       "the copies would combine by + with the XOR of the block", block=block, tiler=tiler)


def _product(block: Layout, t):
    """``(shape, stride)`` of ``logical_product(block, t)`` for a checked tiler ``t``: a tuple repeats mode by
    mode and keeps the modes past it (C++'s ``transform_layout``). A block with F2 strides is refused whatever
    the tiler (checked here, before any mode: the error names the whole block)."""
    if F2.made and f2_algebra.is_f2_layout(block):
        _refuse_f2(block, t)
    if type(t) is tuple:
        s, d = tiler_modes("logical_product", block.shape, block.stride, t)
        shapes, strides = list(s), list(d)
        for i, ti in enumerate(t):
            si = s[i]
            shapes[i], strides[i] = _product(Layout._make(si, d[i], None if type(si) is tuple else ((si,), (d[i],))),
                                             ti)
        return tuple(shapes), tuple(strides)
    if t is _:
        return block.shape, block.stride
    if type(t) is not Layout:
        t = _tiler_layout("logical_product", t)
    if F2.made and f2_algebra.is_f2_layout(t):     # an F2 tiler
        _refuse_f2(block, t)
    tfs, tfd = t._flat or flat_modes(t)
    if ScaledBasis in map(type, tfd):           # v@i repeat mode i of A
        tiled = _basis_product(block, t)
    elif tfd.count(0) == len(tfd) and all(type(d) is int for d in tfd):
        # B sends every coordinate to 0: composition(complement(A), B) is B whatever the complement, so A needs
        # none (C++ computes it for any A, negative strides included)
        tiled = t
    else:
        tiled = _copies(block, t)[1]
    return (block.shape, tiled.shape), (block.stride, tiled.stride)


def _copies(block, t):
    """``(complement(A, size(A)*cosize(B)), its composition with B)`` for an int-strided ``t``, checked: the
    copies of A that B lays out must not overlap."""
    tfs, tfd = t._flat or flat_modes(t)
    cosize_t = cosize_flat(tfs, tfd)
    if cosize_t is None:
        cosize_t = cosize(t)
    try:
        rest = _complement(block, math.prod((block._flat or flat_modes(block))[0]) * cosize_t)
        tiled = composition(rest, t)
    except LayoutError as e:
        raise in_operation(e, "logical_product", A=block, B=t) from None
    n_rest = math.prod((rest._flat or flat_modes(rest))[0])
    if (type(n_rest) is not int or type(cosize_t) is not int) and (is_sym(n_rest) or is_sym(cosize_t)):
        # symbolic: the brute-force overlap check below is impossible, so B must provably fit
        if decide.le(cosize_t, n_rest) is not True:
            raise decide.fail("logical_product", f"{cosize_t} <= {n_rest}",
                              f"cosize(B) must fit in complement(A) = {rest} (copies of A must not overlap)",
                              A=block, B=t)
    elif n_rest < cosize_t and not _injective(Layout._make((block.shape, tiled.shape),
                                                            (block.stride, tiled.stride))):
        # C++'s complement floors the gaps of a block whose strides don't divide; B then
        # reaches past the complement's domain and the copies of A overlap.
        raise layout_error(DivisibilityError, "logical_product", "complement of A cannot hold B",
                           f"complement(A) = {rest} has size {it.product(rest.shape)} < cosize(B) = "
                           f"{cosize_t} and extending it makes copies of A overlap", A=block, B=t)
    return rest, tiled


def _basis_product(block, t):
    """The copies of A in ``logical_product(A, B)`` (its mode 1) for a tiler ``B`` with basis strides, whose
    ``v@i`` select mode ``i`` of A: the copies of mode ``i`` are laid out by B's leaves in mode ``i`` (the int
    layout ``B_i``), in
    ``complement(A_i, size(A_i)*cosize(B_i))``, as the tuple tiler ``<B_0, B_1, ...>`` lays them out; B keeps
    its shape. (C++ complements A as a whole, whose one mode B's strides cannot select.)"""
    basis_algebra.codomain_of("logical_product", t)              # the strides are v@i (or 0)
    fs, fd = t._flat or flat_modes(t)
    sa, da = _modes(block)
    if any(type(d) is not int and d.mode[0] >= len(sa) for d in fd):
        raise layout_error(RankError, "logical_product", "a basis stride of B selects a mode A does not have",
                           f"A has {len(sa)} modes", A=block, B=t)
    rests = []
    for i, (s, d) in enumerate(builtins.zip(sa, da)):
        leaves = [(n, v.value) for n, v in builtins.zip(fs, fd) if type(v) is not int and v.mode == (i,)]
        t_i = Layout._make(tuple(n for n, _ in leaves), tuple(v for _, v in leaves)) if leaves else int_layout(1)
        rests.append(_copies(Layout._make(s, d), t_i)[0])
    rest = Layout._make(tuple(r.shape for r in rests), tuple(r.stride for r in rests))
    try:
        return composition(rest, t)
    except LayoutError as e:
        raise in_operation(e, "logical_product", A=block, B=t) from None


def _injective(layout) -> bool:
    """Brute force: distinct offsets for distinct coordinates (stride-0 modes excepted)."""

    f = _filter(layout)
    n = it.product(f.shape)
    return len({f(i) for i in range(n)}) == n


def zipped_product(block, tiler):
    """``logical_product`` with the modes gathered: ``((block modes), (tiler modes))``.

    >>> print(zipped_product(Layout((2, 2), (1, 2)), Layout((3, 4), (1, 3))))
    ((2,2),(3,4)):((1,2),(4,12))
    """
    if type(block) is not Layout:
        return by_owner("zipped_product", zipped_product, block, tiler, name="block")
    if type(tiler) is not Layout:
        tiler = tiler_arg("zipped_product", tiler)
    return _zipped_product(block, tiler)


def _zipped_product(block, tiler):
    """``zipped_product`` of a Layout by a checked tiler."""
    return Layout._make(*_zip2_by(*_product(block, tiler), tiler, "tile_unzip", block))


@names_caller
def tiled_product(block, tiler):
    """``zipped_product`` with the tiler modes spliced in: ``((block modes), t0, t1, ...)``.

    >>> print(tiled_product(Layout((2, 2), (1, 2)), Layout((3, 4), (1, 3))))
    ((2,2),3,4):((1,2),4,12)
    """
    if type(block) is not Layout:
        return by_owner("tiled_product", tiled_product, block, tiler, name="block")
    return _tiled(_zipped_product(block, tiler_arg("tiled_product", tiler)))


@names_caller
def flat_product(block, tiler):
    """``zipped_product`` with every mode at the top level.

    >>> print(flat_product(Layout((2, 2), (1, 2)), Layout((3, 4), (1, 3))))
    (2,2,3,4):(1,2,4,12)
    """
    if type(block) is not Layout:
        return by_owner("flat_product", flat_product, block, tiler, name="block")
    return _flat(_zipped_product(block, tiler_arg("flat_product", tiler)))


@names_caller
def blocked_product(block, tiler):
    """Per mode: the block first, then its repetitions (``zip(A, B')`` of the logical product).

    Both are padded with ``1:0`` to the same rank. Postcondition: mode ``i``
    of the result is ``(A_i, B'_i)`` where ``B'`` is B laid out over copies of A.

    >>> print(blocked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    ((2,3),(5,4)):((5,10),(1,30))
    """
    if type(block) is not Layout:
        return by_owner("blocked_product", blocked_product, block, tiler, name="block")
    return _blocked_raked(block, tiler_arg("blocked_product", tiler), True)


@names_caller
def raked_product(block, tiler):
    """Per mode: the repetitions first, then the block (interleaved, "raked").

    >>> print(raked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    ((3,2),(4,5)):((10,5),(30,1))
    """
    if type(block) is not Layout:
        return by_owner("raked_product", raked_product, block, tiler, name="block")
    return _blocked_raked(block, tiler_arg("raked_product", tiler), False)


def _blocked_raked(block, tiler, blocked):
    op = "blocked_product" if blocked else "raked_product"
    if type(tiler) is tuple or tiler is _:         # C++ takes a Layout: mode i of the result pairs mode i of each
        raise TypeError(f"{op}: the tiler is a Layout or an int (its mode i is paired with the block's mode i), "
                        f"got {_r(tiler)}")
    tiler = _tiler_layout(op, tiler)
    if basis_algebra.is_basis_layout(tiler):
        raise layout_error(LayoutError, op, "the tiler's strides must be ints",
                           "mode i of the result pairs A's mode i with the tiler's mode i, and a tiler with basis "
                           "strides lays out copies by A's modes instead (logical_product takes it)",
                           block=block, tiler=tiler)
    r = max(rank(block), rank(tiler))
    lp = logical_product(append(block, n=r), append(tiler, n=r))
    first, second = (lp[0], lp[1]) if blocked else (lp[1], lp[0])
    return zip(first, second)


@names_caller
def tile_to_shape(block, target_shape, order=LayoutLeft):
    """Repeat ``block`` to fill ``target_shape`` (blocked), the repetitions ordered by ``order``.

    Preconditions: ``rank(block) <= rank(target_shape)`` and each mode of the
    block divides the matching mode of the target.
    Postcondition: ``shape`` of each result mode has the product of the target's mode.

    >>> print(tile_to_shape(Layout((2, 2), (2, 1)), (4, 6)))
    ((2,2),(2,3)):((2,4),(1,8))
    >>> print(tile_to_shape(Layout((2, 2), (2, 1)), (4, 6), (1, 0)))
    ((2,2),(2,3)):((2,12),(1,4))
    """
    if type(block) is not Layout:
        return by_owner("tile_to_shape", tile_to_shape, block, target_shape, order, name="block")
    target_shape = tiler_arg("tile_to_shape", getattr(target_shape, "shape", target_shape), shape=True)
    if not (is_int(target_shape) or isinstance(target_shape, tuple)) or not all(
            is_int(t) or is_sym(t) for t in it.flatten_to_tuple(target_shape)):
        raise TypeError(f"tile_to_shape: target shape must be an IntTuple, got {_r(target_shape)}")
    if 0 in flat_modes(block)[0] or 0 in it.flatten_to_tuple(target_shape):
        raise layout_error(LayoutError, "tile_to_shape", "needs a block and a target of positive size",
                           "an extent is 0", block=block, target_shape=target_shape)
    if order is not LayoutLeft and order is not LayoutRight:
        if isinstance(order, list):
            order = tuple(order)
        it.check_depth("tile_to_shape", order)
        if not all(is_int(o) for o in it.flatten_to_tuple(order)) or not it.weakly_congruent(order, it.product_each(target_shape)) or (
                isinstance(target_shape, tuple) and not isinstance(order, tuple)):
            raise layout_error(RankError, "tile_to_shape", "order must have one entry per target mode",
                               order=order, target_shape=target_shape)
    return _tile_to_shape(block, target_shape, order)


def _tile_to_shape(block, target_shape, order):
    r = it.rank(target_shape)
    if rank(block) > r:
        raise layout_error(RankError, "tile_to_shape", "rank of the block must be <= rank of the target shape",
                           block=block, target_shape=target_shape)
    padded = append(block, n=r)
    block_shape = it.product_each(padded.shape)
    trg = it.product_each(target_shape)
    if not isinstance(trg, tuple):
        trg = (trg,)
    if not isinstance(block_shape, tuple):  # an int-shaped block against a rank-1 (tuple) target, too
        block_shape = (block_shape,)
    for i, (t, b) in enumerate(builtins.zip(trg, block_shape)):
        decide.require_divides("tile_to_shape", b, t, "block shape does not divide the target shape", f"mode {i}: ",
                               block=block, target_shape=target_shape)
    product_shape = tuple(decide.exact_div(t, b) for t, b in builtins.zip(trg, block_shape))
    if not isinstance(target_shape, tuple) and order is not LayoutLeft and order is not LayoutRight \
            and not isinstance(order, tuple):
        order = (order,)
    # an int target keeps its product shape a 1-tuple, as C++ does: tile_to_shape(4:1, 16) is ((4,(4))):((1,(4)))
    return blocked_product(padded, make_ordered_layout(product_shape, order))


@names_caller
def layout_ceil_div(target, tiler: Layout):
    """The "rest" shape of dividing ``target`` by a layout tiler: ``shape(complement(tiler, shape(target)))``.

    CuTe's ``ceil_div(target, Layout)``.

    >>> layout_ceil_div((8, 8), Layout(4))
    16
    """
    if not isinstance(tiler, Layout):
        raise TypeError(f"layout_ceil_div: the tiler must be a Layout (an IntTuple's ceil_div is per mode: "
                        f"int_tuple.ceil_div), got {_r(tiler)}")
    target = getattr(target, "shape", target)
    return complement(tiler, target).shape


def _check_shape(op, x, what):
    ok = (lambda e: isinstance(e, Layout) or (is_int(e) and e >= 1) or is_sym(e)) if what == "tiler" else (
        lambda e: (is_int(e) and e >= 1) or is_sym(e))
    if not all(ok(e) for e in it.flatten_to_tuple(tiler_arg(op, x, shape=True))):
        raise TypeError(f"{op}: {what} must be an IntTuple of positive extents (or a Layout tiler), got {_r(x)}")


@names_caller
def evenly_divides(shape, tiler) -> bool:
    """True if ``tiler`` divides ``shape`` evenly (mode-wise for a tuple tiler).

    ``tiler`` may be an IntTuple or a layout (its size counts, and the rest is
    ``layout_ceil_div(shape, tiler)``, as C++'s ``ceil_div(shape, Layout)``).

    >>> evenly_divides(16, 8), evenly_divides(16, 12), evenly_divides((8, 6), (4, 3))
    (True, False, True)
    """
    shape = tiler_arg("evenly_divides", getattr(shape, "shape", shape), shape=True)
    tiler = tiler_arg("evenly_divides", tiler, shape=True)
    _check_shape("evenly_divides", shape, "shape")
    _check_shape("evenly_divides", tiler, "tiler")
    if isinstance(tiler, tuple):
        if len(tiler) > it.rank(shape):
            return False
        if not isinstance(shape, tuple):
            shape = (shape,)
        return all(evenly_divides(s, t) for s, t in builtins.zip(shape, tiler))
    s = it.product(shape)
    if isinstance(tiler, Layout):  # a layout tiler: the rest is the size of its complement in shape
        return s == it.product(tiler.shape) * it.product(layout_ceil_div(shape, tiler))
    t = it.product(tiler)
    return s == t * it.ceil_div(s, t)


ALGEBRA.tiled_divide = tiled_divide  # Layout.compose / with_shape / tile call it
