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

The algebra runs one algorithm for int and sympy leaves: it asks the
predicates of ``cute_py.layouts.decide``, which answer two ints at once and
read sympy only for a sympy leaf, so int-only code never loads sympy. This
module holds what a user of symbols reaches for: making them, finding them,
substituting values, and ``local_tile`` of a symbolic layout.
"""

from __future__ import annotations

import sympy as sp

from .basis import ArithmeticTuple, ScaledBasis
from .decide import canon, symbols_in
from .errors import RankError, SymbolicError, layout_error
from .int_tuple import _
from .layout import Layout
from .slicing import _dice_tuple, dice, slice_and_offset
from .mixed_bits import MixedBits
from .partition import _proj, _tup
from .tiling import zipped_divide

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


def free_symbols(x) -> set:
    """The sympy symbols in a layout, IntTuple or expression.

    >>> from cute_py import parse
    >>> sorted(free_symbols(parse("(M,N):(1,ld)")), key=str)
    [M, N, ld]
    """
    return symbols_in(x)


def is_symbolic(x) -> bool:
    """True if a layout, IntTuple or value holds a sympy expression with symbols.

    >>> from cute_py import Layout
    >>> M = symbols("M")
    >>> is_symbolic(Layout((M, 4))), is_symbolic(Layout((8, 4))), is_symbolic(M + 1)
    (True, False, True)
    """
    return bool(free_symbols(x))


def _subs_leaf(x, m):
    if isinstance(x, sp.Basic):
        return canon(x.subs(m))
    if isinstance(x, ScaledBasis) and isinstance(x.value, sp.Basic):
        return ScaledBasis(canon(x.value.subs(m)), x.mode)
    if isinstance(x, ScaledBasis) and isinstance(x.value, tuple):     # a multi-term stride (Layout makes it canonical)
        return ScaledBasis(ArithmeticTuple(_subs_tuple(x.value, m)), ())
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
    found = free_symbols(x.value if isinstance(x, MixedBits) else x)
    if getattr(x, "_is_composed_layout", False):
        found |= free_symbols(x.offset.value if isinstance(x.offset, MixedBits) else x.offset)
    syms = {s.name: s for s in found}
    for k, v in dict(values).items():
        if isinstance(k, str):
            if k not in syms:
                continue
            k = syms[k]
        m[k] = v
    if isinstance(x, Layout):
        return Layout(_subs_tuple(x.shape, m), _subs_tuple(x.stride, m))
    if getattr(x, "_is_composed_layout", False):
        offset = x.offset.subs(m) if isinstance(x.offset, MixedBits) else _subs_tuple(x.offset, m)
        return type(x)(x.outer, offset, subs(x.inner, values))
    if isinstance(x, MixedBits):
        return x.subs(m)
    return _subs_tuple(x, m)


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

