"""hypothesis strategies for layouts and tilers.

Valid inputs are built the way the algebra needs them (injective layouts,
tilers that divide, power-of-two swizzle spans), not filtered out of noise, so
the property tests spend their examples on interesting cases. Sizes are kept
small so brute-force postcondition checks over whole domains stay fast.
"""

from __future__ import annotations

from hypothesis import strategies as st

from cute_py import Layout, Swizzle
from cute_py.int_tuple import product
from oracle import flat, unflatten

EXTENTS = st.sampled_from([1, 2, 3, 4, 6, 8])
POW2 = st.sampled_from([1, 2, 4, 8])


def _nest(draw, leaves):
    """Group a flat list of leaves into a random nested tuple (depth <= 3)."""
    items = list(leaves)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    for _ in range(draw(st.integers(0, 2))):
        if len(items) < 2:
            break
        i = draw(st.integers(0, len(items) - 2))
        j = draw(st.integers(i + 2, len(items)))
        items[i:j] = [tuple(items[i:j])]
    return tuple(items) if len(items) > 1 or draw(st.booleans()) else items[0]


@st.composite
def shapes(draw, max_leaves=4, extents=EXTENTS, max_size=256):
    """A (possibly nested) shape with a bounded total size."""
    n = draw(st.integers(1, max_leaves))
    leaves = [draw(extents) for _ in range(n)]
    while product(tuple(leaves)) > max_size:
        leaves[leaves.index(max(leaves))] = 1
    return _nest(draw, leaves)


@st.composite
def layouts(draw, max_leaves=4, max_stride=64, allow_negative=False, max_size=256):
    """Arbitrary layouts: any shape, arbitrary strides (zeros allowed)."""
    shape = draw(shapes(max_leaves=max_leaves, max_size=max_size))
    lo = -max_stride if allow_negative else 0
    strides = [draw(st.integers(lo, max_stride)) for _ in flat(shape)]
    return Layout(shape, unflatten(strides, shape))


def _shape_and_order(draw, max_leaves, max_size):
    """A shape, its leaves, and a random order of the leaves (the order the strides grow in)."""
    shape = draw(shapes(max_leaves=max_leaves, max_size=max_size))
    leaves = flat(shape)
    return shape, leaves, draw(st.permutations(range(len(leaves))))


@st.composite
def compact_layouts(draw, max_leaves=4, max_size=256):
    """Compact (bijective onto [0, size)) layouts: a permutation of column-major strides."""
    shape, leaves, perm = _shape_and_order(draw, max_leaves, max_size)
    strides = [0] * len(leaves)
    acc = 1
    for k in perm:
        strides[k] = acc if leaves[k] != 1 else draw(st.sampled_from([0, acc]))
        acc *= leaves[k]
    return Layout(shape, unflatten(strides, shape))


@st.composite
def injective_layouts(draw, max_leaves=4, max_size=256):
    """Injective layouts with gaps: sorted strides, each a multiple of the previous reach."""
    shape, leaves, perm = _shape_and_order(draw, max_leaves, max_size)
    strides = [0] * len(leaves)
    acc = 1
    for k in perm:
        acc *= draw(st.sampled_from([1, 1, 2, 3]))
        strides[k] = acc
        acc *= leaves[k]
    return Layout(shape, unflatten(strides, shape))


@st.composite
def divisor_tilers(draw, layout):
    """A layout tiler T for ``logical_divide(layout, T)`` that CuTe admits.

    T is injective with strides inside the (coalesced) size of ``layout`` and
    built from divisors, so the composition's divisibility conditions hold.
    """
    n = product(layout.shape) if isinstance(layout.shape, tuple) else layout.shape
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    a = draw(st.sampled_from(divisors))
    rest = n // a
    b_choices = [d for d in range(1, rest + 1) if rest % d == 0]
    b = draw(st.sampled_from(b_choices))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return Layout(a, draw(st.sampled_from([d for d in divisors if (n // d) % a == 0] or [1])))
    if kind == 1:
        return Layout((a, b), (1, a * draw(st.sampled_from([d for d in range(1, rest // b + 1) if (rest // b) % d == 0]))))
    return Layout((a, b), (b, 1))


@st.composite
def swizzles(draw, max_span_bits=10):
    """Valid swizzles Sw<B,M,S> with B+M+|S| <= max_span_bits."""
    b = draw(st.integers(0, 3))
    s_abs = draw(st.integers(max(b, 1), 4))
    s = s_abs if draw(st.booleans()) else -s_abs
    m = draw(st.integers(0, max(0, max_span_bits - b - s_abs)))
    return Swizzle(b, m, s)


def pow2_layouts():
    """Compact row-major 2-D layouts with power-of-two extents (swizzle carriers)."""
    return st.tuples(st.sampled_from([4, 8, 16]), st.sampled_from([4, 8, 16, 32, 64])).map(
        lambda mn: Layout(mn, (mn[1], 1)))
