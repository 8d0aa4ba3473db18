"""The algebra of layouts with F2 strides: linear algebra over GF(2) on bit matrices.

A layout whose extents are powers of two and whose strides are F2 values (or
non-negative ints whose bit images are disjoint, where ``+`` is XOR) is a
linear map from the bits of its 1-D index to the bits of its offset: the
*bit images* ``[L(1), L(2), L(4), ...]`` determine it. On those:

* composition ``A o B``: bit ``i`` of the result is the XOR of A's images of
  the set bits of ``B(2^i)``;
* ``right_inverse(L)``: ``R(2^j)`` is an index ``x`` with ``L(x) = 2^j``, for
  the longest run ``j = 0, 1, ...`` the image of L contains;
* ``left_inverse(L)`` (L injective): ``R(L(x)) = x``, and R sends the bits L
  does not reach to 0;
* ``complement(L, n)``: the unit bits ``2^b < n`` (``n`` a power of two) not
  in the span of L (and of the bits chosen before them), in increasing order.

Composition returns F2 strides (a tiler composes mode by mode, and only the
whole layout knows whether ``+`` would do); the inverses and complement, which
build a whole layout, return int strides where its bit images are disjoint
(XOR is ``+`` there, so it is an ordinary CuTe layout), and ``coalesce`` turns
an F2 layout with disjoint images into that int layout. Each leaf mode of a
result is grouped into shift chains ``v, v<<1, ...`` (one mode each).

>>> from cute_py import Layout, Swizzle, composition, right_inverse
>>> from cute_py.layouts.f2 import F2
>>> sw = f2_layout(Swizzle(2, 0, 2))            # Sw<2,0,2> on 16 offsets
>>> print(sw, composition(sw, sw), right_inverse(sw) == sw)
(4,4):(^1,^5) (4,4):(^1,^4) True
"""

from __future__ import annotations

import builtins

from .errors import LayoutError, RankError, layout_error, _r
from .f2 import F2, bit_images, disjoint, echelon, log2_exact
from .layout import Layout, flat_modes

__all__ = ["f2_layout", "is_f2_layout"]


def is_f2_layout(x) -> bool:
    """True for a Layout with at least one F2 stride."""
    return F2.made and type(x) is Layout and F2 in builtins.map(type, flat_modes(x)[1])


def f2_layout(x, size=None):
    """``x`` as a layout over GF(2): a Swizzle becomes the F2 layout of its function on ``size`` offsets (a
    power of two, default ``2^(M+B+|S|)``; the swizzle keeps the bits above its own); a swizzle composed with
    a layout (offset 0) becomes the swizzle's F2 layout over the whole codomain of the inner layout, composed
    with it (``size`` does not apply); a Layout is returned as it is.

    Postcondition: ``f2_layout(x)(i) == x(i)`` for every ``i`` in the domain of ``x`` (of ``size`` offsets for
    a Swizzle).

    >>> from cute_py import ComposedLayout, Layout, Swizzle
    >>> print(f2_layout(Swizzle(3, 4, 3)), f2_layout(Swizzle(1, 0, -1)))
    (128,8):(^1,^144) (2,2):(^3,^2)
    >>> tile = ComposedLayout(Swizzle(3, 3, 3), 0, Layout(((8, 8), 64), ((64, 512), 1)))   # 8 periods
    >>> print(f2_layout(tile)), f2_layout(tile)((8, 0)) == tile((8, 0)) == 512
    ((8,8),64):((^72,^512),^1)
    (None, True)
    """
    if size is not None:
        if not getattr(x, "_is_swizzle", False):
            raise TypeError(f"f2_layout: size applies to a Swizzle only (a layout gives its own domain), got "
                            f"size={size!r} for {_r(x)}")
        k = log2_exact(size)
        if k is None or k < x.size().bit_length() - 1:
            raise layout_error(LayoutError, "f2_layout", "size must be a power of two covering the swizzle",
                               f"got {size} for {x} (of {x.size()} offsets)")
        return _swizzle_bits(x, k)
    return f2_form("f2_layout", x)


def f2_form(op: str, x):
    """:func:`f2_layout` of ``x`` (without ``size``), its errors naming the public operation ``op``."""
    if type(x) is Layout:
        return x
    if getattr(x, "_is_swizzle", False):
        return _swizzle_bits(x, x.size().bit_length() - 1)
    if not getattr(x, "_is_composed_layout", False):
        raise TypeError(f"{op}: expected a Layout, a Swizzle or a swizzle composed with a layout, got {_r(x)}")
    if not getattr(x.outer, "_is_swizzle", False):
        raise layout_error(LayoutError, op, "the outer function of a composed layout must be a Swizzle to be "
                           "linear over GF(2)", f"got {x.outer}", layout=x)
    if x.offset != 0:
        raise layout_error(LayoutError, op, "a composed layout with a nonzero offset is affine, not linear over "
                           "GF(2) (a linear map sends 0 to 0)",
                           f"offset {x.offset}; take the layout without its offset and add it after", layout=x)
    inner_bits = bits_of(op, x.inner, layout=x)
    # the swizzle's F2 layout must span every offset the inner layout reaches: composition continues a layout's
    # last mode past its domain, which would XOR the bits above the swizzle's own as well
    reach = max(max(inner_bits, default=0).bit_length(), x.outer.size().bit_length() - 1)
    return compose(_swizzle_bits(x.outer, reach), x.inner)


def _swizzle_bits(sw, n: int) -> Layout:
    """The F2 layout of swizzle ``sw`` on ``2^n`` offsets."""
    return from_bits(1 << n, [sw(1 << b) for b in range(n)])


# ---------------------------------------------------------------------------
# bit images <-> layouts


def bits_of(op: str, layout: Layout, /, **operands) -> list:
    """The bit images of ``layout``; a LayoutError names ``op`` where it has none or is not linear."""
    fs, fd = flat_modes(layout)
    images = bit_images(fs, fd)
    if images is None:
        raise layout_error(LayoutError, op, "a layout over GF(2) needs power-of-two extents and F2 or "
                           "non-negative int strides", **(operands or {"layout": layout}))
    if F2 not in builtins.map(type, fd) and not disjoint(images):
        raise layout_error(LayoutError, op, "an int-strided operand of F2 algebra must be linear over GF(2)",
                           "two of its bit images share a bit, so + carries where XOR does not",
                           **(operands or {"layout": layout}))
    return images


def _chains(images):
    """Split a leaf's bit images into shift chains ``v, v<<1, ...``: [(extent, v), ...]."""
    out = []
    for v in images:
        if out:
            s, first = out[-1]
            if first << (s.bit_length() - 1) == v:
                out[-1] = (s * 2, first)
                continue
        out.append((2, v))
    return out


def from_bits(shape, images, f2=None) -> Layout:
    """The layout of (power-of-two) ``shape`` whose 1-D index bits map to ``images``: each leaf mode becomes
    one mode per shift chain of its images; F2 strides with ``f2=True``, else int strides where the images
    are disjoint (XOR is + there) and F2 otherwise. A result that may become one mode among others
    (composition by mode) must be F2: only the whole layout knows whether + would do."""
    it_images = iter(images)
    as_f2 = f2 if f2 is not None else not disjoint(images)

    def build(s):
        if isinstance(s, tuple):
            parts = [build(e) for e in s]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        k = log2_exact(s)
        chains = _chains([next(it_images) for _ in range(k)])
        if not chains:
            return 1, 0
        strides = [F2(v) if as_f2 and v else v for _s, v in chains]
        if len(chains) == 1:
            return chains[0][0], strides[0]
        return tuple(c[0] for c in chains), tuple(strides)

    shp, std = build(shape)
    return Layout._make(shp, std)


def _image_bit(op, a_bits, a_last, k, **operands):
    """A's image of index bit ``k``, continuing its last mode past its domain (as composition does; only an
    F2 mode continues linearly over GF(2))."""
    if k < len(a_bits):
        return a_bits[k]
    s, d = a_last
    if type(d) is not F2 and d != 0:
        raise layout_error(LayoutError, op, "B reaches past the domain of A, whose last mode has an int "
                           "stride: past its domain A carries, which XOR does not", **operands)
    if d == 0 or s == 0:
        raise layout_error(RankError, op, "B reaches past A's domain and A's last mode has stride 0",
                           **operands)
    v = d.value if type(d) is F2 else d
    return v << (log2_exact(s) + k - len(a_bits))


# ---------------------------------------------------------------------------
# the algebra


def compose(a: Layout, b: Layout) -> Layout:
    """``a o b`` for layouts over GF(2) (one of them with F2 strides): the result has ``b``'s shape."""
    ops = {"A": a, "B": b}
    a_bits = bits_of("composition", a, **ops)
    b_bits = bits_of("composition", b, **ops)
    fs, fd = flat_modes(a)
    last = (fs[-1], fd[-1])
    out = []
    for x in b_bits:
        r, k = 0, 0
        while x:
            if x & 1:
                r ^= _image_bit("composition", a_bits, last, k, **ops)
            x >>= 1
            k += 1
        out.append(r)
    return from_bits(b.shape, out, f2=True)


def right_inverse(layout: Layout) -> Layout:
    """The longest ``R`` with ``layout(R(i)) == i``: ``R(2^j)`` solves ``layout(x) == 2^j``."""
    images = bits_of("right_inverse", layout)
    solve = _solver(images)
    out = []
    for j in range(max((v.bit_length() for v in images), default=0)):
        x = solve(1 << j)
        if x is None:
            break
        out.append(x)
    return from_bits(1 << len(out), out) if out else Layout._make(1, 0)


def left_inverse(layout: Layout) -> Layout:
    """``R`` with ``R(layout(i)) == i`` for every ``i`` of the domain (layout injective); the bits the layout
    does not reach map to 0."""
    images = bits_of("left_inverse", layout)
    if len(echelon(images)) != len(images):
        raise layout_error(LayoutError, "left_inverse", "layout is not injective",
                           "its bit images are linearly dependent over GF(2)", layout=layout)
    m = max((v.bit_length() for v in images), default=0)
    # each unit bit in the basis images + (unit bits completing it); R keeps the part on the images
    solve = _solver(images + _completion(images, m))
    keep = (1 << len(images)) - 1
    out = [solve(1 << b) & keep for b in range(m)]
    return from_bits(1 << m, out) if m else Layout._make(1, 0)


def complement(layout: Layout, cotarget=None) -> Layout:
    """The unit bits ``2^b < cotarget`` outside the span of the layout's images (and of those chosen before
    them), as an increasing layout; ``cotarget`` defaults to the layout's cosize."""
    images = bits_of("complement", layout)
    if cotarget is None:
        cotarget = 1 << max(images, default=0).bit_length()
    if log2_exact(cotarget) is None:
        raise layout_error(LayoutError, "complement", "the cotarget of an F2 complement must be a power of two",
                           f"got {cotarget}", layout=layout)
    chosen = _completion(images, max(int(cotarget) - 1, 0).bit_length())
    return from_bits(1 << len(chosen), chosen) if chosen else Layout._make(1, 0)


def _completion(images, n):
    """The unit bits ``2^b`` (``b < n``, increasing) that, added one by one where they raise the rank, extend
    the span of ``images`` to every vector of ``n`` bits."""
    basis, chosen = list(echelon(images).values()), []
    for b in range(n):
        if len(echelon(basis + [1 << b])) > len(basis):
            basis.append(1 << b)
            chosen.append(1 << b)
    return chosen


def _solver(images):
    """A function ``y -> x`` with ``XOR of images[k] over the bits k of x == y``, or None if ``y`` is not in
    the span of ``images`` (Gaussian elimination carrying the combination of each pivot)."""
    pivots = {}                                  # top bit -> (vector, combination)
    for k, v in enumerate(images):
        c = 1 << k
        for top in sorted(pivots, reverse=True):
            if v >> top & 1:
                v ^= pivots[top][0]
                c ^= pivots[top][1]
        if v:
            pivots[v.bit_length() - 1] = (v, c)

    def solve(y):
        x = 0
        for top in sorted(pivots, reverse=True):
            if y >> top & 1:
                y ^= pivots[top][0]
                x ^= pivots[top][1]
        return None if y else x

    return solve
