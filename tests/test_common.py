"""common_refinement / common_coarsening / greatest_common_domain / layout_add: documented values and
postconditions checked by brute force.

* ``common_refinement(a, b)`` is the join of the compatibility order: it refines both, and no coarsening
  of it other than itself refines both (minimal).
* ``common_coarsening(a, b)`` is the meet: it coarsens both, and every shape coarsening both coarsens it.
  The coarsenings of a shape are enumerated exhaustively (each subtree may collapse to its size).
* ``G = greatest_common_domain(a, b)``: depth 1, symmetric, ``size(G) | gcd(size(a), size(b))``, every
  layout of shape ``a`` or ``b`` is linear on G's digits, and dividing both shapes by G leaves nothing in
  common.
* ``R = layout_add(A, B)``: ``R(i) == A(i) + B(i)``; when it raises, no flat layout computes ``A + B``
  (every ordered factorization of the size is tried).
"""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import (
    E, Layout, LayoutError, RankError, SymbolicError, common_coarsening, common_refinement,
    greatest_common_domain, layout_add,
)
from cute_py.symbolic import symbols
from oracle import compatible, flat, prod, ref_eval, unflatten
from strategies import layouts, shapes

SETTINGS = settings(max_examples=150, deadline=None)

# ---------------------------------------------------------------------------
# documented examples (PyCuTe 2026 docstrings)


@pytest.mark.parametrize("a, b, expected", [
    (30, (2, 15), (2, 15)),
    ((2, 15), (2, (3, 5)), (2, (3, 5))),
    (10, (10,), (10,)),
    (((2, 3), 20), (6, (4, 5)), ((2, 3), (4, 5))),
])
def test_common_refinement_examples(a, b, expected):
    assert common_refinement(a, b) == expected
    assert common_refinement(b, a) == expected


@pytest.mark.parametrize("a, b, err", [
    ((6, 5), (2, 15), LayoutError),           # 6 != 2 at mode 0
    ((2, (3, 5)), ((3, 2), 5), LayoutError),  # same size, but incompatible
    ((2, 3), (2, 3, 1), RankError),
])
def test_common_refinement_refused(a, b, err):
    with pytest.raises(err, match="common_refinement: no common refinement"):
        common_refinement(a, b)


@pytest.mark.parametrize("a, b, expected", [
    ((2, 15), (2, (3, 5)), (2, 15)),
    ((4, (3, 5)), ((2, 2), 15), (4, 15)),
    (30, (2, 15), 30),
    ((2, (3, 5)), ((3, 2), 5), 30),
    ((6, 5), (2, 15), 30),
    ((2, 3), (2, 3, 1), 6),
])
def test_common_coarsening_examples(a, b, expected):
    assert common_coarsening(a, b) == expected
    assert common_coarsening(b, a) == expected


@pytest.mark.parametrize("a, b", [(3, 4), (7, (2, 3))])
def test_common_coarsening_refused(a, b):
    with pytest.raises(LayoutError, match="common_coarsening: no common coarsening: sizes differ"):
        common_coarsening(a, b)


@pytest.mark.parametrize("a, b, expected", [
    ((10,), (10,), Layout((10,), (1,))),
    ((16, 3), (16, 3), Layout((16, 3), (1, 16))),
    ((5, 3, 4), (10, 6), Layout((5, 2), (1, 30))),
    ((6, 35), (15, 14), Layout((3, 7), (1, 30))),
    ((5, 3), (3, 5), Layout((1,), (0,))),
])
def test_greatest_common_domain_examples(a, b, expected):
    assert greatest_common_domain(a, b) == expected
    assert greatest_common_domain(Layout(b), Layout(a)) == expected


@pytest.mark.parametrize("a, b, expected", [
    (Layout(12, 1), Layout(12, 1), Layout(12, 2)),
    (Layout(5, 0), Layout(5, 1), Layout(5, 1)),
    (Layout((4, 3), (1, 4)), Layout((4, 3), (3, 1)), Layout((4, 3), (4, 5))),
    (Layout((5, 3, 4), (1, 5, 15)), Layout((10, 6), (1, 10)), Layout(60, 2)),
])
def test_layout_add_examples(a, b, expected):
    assert layout_add(a, b) == expected
    assert layout_add(b, a) == expected


# ---------------------------------------------------------------------------
# the compatibility order, brute force


def coarsenings(s):
    """Every shape that coarsens ``s``: each subtree either stays or collapses to its size."""
    out = {prod(s)}
    if isinstance(s, tuple):
        out |= set(itertools.product(*(coarsenings(x) for x in s)))
    return out


@st.composite
def refinement_of(draw, s):
    """A random refinement of shape ``s``: some leaves split into a tuple of factors."""
    if isinstance(s, tuple):
        return tuple(draw(refinement_of(x)) for x in s)
    factors = [f for f in range(2, s + 1) if s % f == 0]
    if s == 1 or not draw(st.booleans()):
        return draw(st.sampled_from([s, (s,)]))
    f = draw(st.sampled_from(factors))
    return (f, draw(refinement_of(s // f)))


@st.composite
def related_shapes(draw):
    """Two shapes with a common refinement half the time, else any two shapes of small size."""
    base = draw(shapes(max_leaves=4, max_size=64))
    if draw(st.booleans()):
        c = draw(coarsenings_of(base))
        return c, draw(refinement_of(base))
    return base, draw(shapes(max_leaves=4, max_size=64))


@st.composite
def coarsenings_of(draw, s):
    return draw(st.sampled_from(sorted(coarsenings(s), key=repr)))


@SETTINGS
@given(related_shapes())
def test_common_refinement_is_the_join(ab):
    a, b = ab
    try:
        r = common_refinement(a, b)
    except LayoutError:
        # no shape refines both: then none of the shapes generated as refinements of a does
        assert not (compatible(a, b) or compatible(b, a)), (a, b)
        return
    assert compatible(a, r) and compatible(b, r), (a, b, r)
    assert common_refinement(b, a) == r
    for c in coarsenings(r):
        if c != r:
            assert not (compatible(a, c) and compatible(b, c)), f"{c} below {r} refines {a} and {b}"


@SETTINGS
@given(related_shapes())
def test_common_coarsening_is_the_meet(ab):
    a, b = ab
    if prod(a) != prod(b):
        with pytest.raises(LayoutError):
            common_coarsening(a, b)
        return
    m = common_coarsening(a, b)
    assert common_coarsening(b, a) == m
    common = coarsenings(a) & coarsenings(b)
    assert m in common, (a, b, m)
    for c in common:
        assert compatible(c, m), f"common coarsening {c} of {a}, {b} does not coarsen {m}"


def test_symbolic_shapes():
    M, K = symbols("M K")
    assert common_refinement((M, 4), (M, (2, 2))) == (M, (2, 2))
    assert common_coarsening((M, 4), (M, (2, 2))) == (M, 4)
    assert common_coarsening((M, 2 * M), (2 * M, M)) == 2 * M ** 2
    with pytest.raises(SymbolicError, match="M == K"):
        common_refinement((M, 4), (K, (2, 2)))


# ---------------------------------------------------------------------------
# greatest_common_domain


def digits(g):
    """(extent, place value) of each leaf of a greatest_common_domain result."""
    return list(zip(flat(g.shape), flat(g.stride)))


def check_linear_on(layout, g):
    """``layout`` is linear on g's digits: layout(g(i)) == sum_k c_k * layout(d_k)."""
    ds = digits(g)
    for i in range(prod(g.shape)):
        expect, rest = 0, i
        for s, d in ds:
            expect += (rest % s) * ref_eval(layout, d)
            rest //= s
        assert ref_eval(layout, ref_eval(g, i)) == expect, f"{layout} not linear on {g} at {i}"


def rest(shape, g):
    """The leaves of ``shape`` with g's digits cut out (each digit lies inside one leaf, aligned): the
    shape of ``shape`` divided by g, uncoalesced."""
    pieces, place = [], 1
    for s in flat(shape):
        cur, end = place, place * s
        for f, d in digits(g):
            if f > 1 and cur <= d < end:
                assert d % cur == 0 and d * f <= end, f"digit {f}:{d} of {g} is not inside a leaf of {shape}"
                pieces.append(d // cur)
                cur = d * f
        pieces.append(end // cur)
        place = end
    return tuple(p for p in pieces if p > 1) or (1,)


@st.composite
def shape_pairs(draw):
    a = draw(shapes(max_leaves=4, max_size=96))
    if draw(st.booleans()):                     # same size, leaves split differently
        b = draw(refinement_of(prod(a))) if prod(a) > 1 else 1
        return a, b
    return a, draw(shapes(max_leaves=4, max_size=96))


@SETTINGS
@given(shape_pairs(), st.data())
def test_greatest_common_domain_postconditions(ab, data):
    a, b = ab
    g = greatest_common_domain(a, b)
    assert g == greatest_common_domain(b, a)
    assert isinstance(g.shape, tuple) and all(isinstance(s, int) for s in g.shape)
    n = prod(g.shape)
    assert math.gcd(prod(a), prod(b)) % n == 0
    assert g.shape == (1,) and g.stride == (0,) or all(s > 1 for s in g.shape)
    for s in (a, b):
        strides = [data.draw(st.integers(-9, 9)) for _ in flat(s)]
        check_linear_on(Layout(s, unflatten(strides, s)), g)
    # maximal: what is left of the two shapes after g's digits has no digit in common
    assert greatest_common_domain(rest(a, g), rest(b, g)) == Layout((1,), (0,)), (a, b, g)


def test_greatest_common_domain_refuses():
    M = symbols("M")
    with pytest.raises(SymbolicError, match="greatest_common_domain: .*static extents"):
        greatest_common_domain((M, 4), (M, 4))
    with pytest.raises(TypeError, match="greatest_common_domain"):
        greatest_common_domain((2.5, 4), (10,))


# ---------------------------------------------------------------------------
# layout_add


def factorizations(n):
    """Every ordered factorization of n into factors > 1 (``()`` for 1)."""
    if n == 1:
        yield ()
        return
    for f in range(2, n + 1):
        if n % f == 0:
            for rest in factorizations(n // f):
                yield (f,) + rest


def some_layout_computes(values):
    """Whether a flat layout of size len(values) has these values (its strides are read at the digits)."""
    n = len(values)
    for fs in factorizations(n):
        place, strides = 1, []
        for f in fs:
            strides.append(values[place] if place < n else 0)
            place *= f
        L = Layout(fs, tuple(strides)) if fs else Layout(1, 0)
        if all(ref_eval(L, i) == v for i, v in enumerate(values)):
            return True
    return False


@st.composite
def same_size_layouts(draw):
    a = draw(layouts(max_leaves=4, max_stride=12, allow_negative=True, max_size=64))
    if draw(st.booleans()):
        shape = a.shape                             # same shape: always a sum
    else:
        shape = draw(refinement_of(prod(a.shape))) if prod(a.shape) > 1 else 1
    strides = [draw(st.integers(-12, 12)) for _ in flat(shape)]
    return a, Layout(shape, unflatten(strides, shape))


@SETTINGS
@given(same_size_layouts())
def test_layout_add_postconditions(ab):
    a, b = ab
    n = prod(a.shape)
    want = [ref_eval(a, i) + ref_eval(b, i) for i in range(n)]
    try:
        r = layout_add(a, b)
    except LayoutError:
        assert a.shape != b.shape
        assert not some_layout_computes(want), f"layout_add({a}, {b}) refused, but a layout computes it"
        return
    assert prod(r.shape) == n
    assert [ref_eval(r, i) for i in range(n)] == want, (a, b, r)
    assert layout_add(b, a) == r


def test_layout_add_symbolic_and_basis_strides():
    M = symbols("M")
    r = layout_add(Layout((4, 3), (M, 4 * M)), Layout(12, 1))
    assert r == Layout(12, M + 1)
    assert r.stride.subs(M, 5) == layout_add(Layout((4, 3), (5, 20)), Layout(12, 1)).stride
    assert layout_add(Layout((4, 5), (E(0), E(1))), Layout((4, 5), (E(0), 0))) == Layout((4, 5), (2 * E(0), E(1)))


@pytest.mark.parametrize("a, b, err, match", [
    (Layout(4), Layout(5), LayoutError, "sizes differ: 4 and 5"),
    (Layout((2, 3), (1, 0)), Layout((3, 2), (1, 0)), LayoutError, "no layout is the sum"),
    (Layout((4, 5), (E(0), E(1))), Layout((4, 5), (E(1), 0)), LayoutError, "a stride of the sum has several basis terms"),
    (Layout(4), (4,), TypeError, "expected a Layout for b"),
])
def test_layout_add_refuses(a, b, err, match):
    with pytest.raises(err, match="layout_add: " + match):
        layout_add(a, b)


def test_layout_add_symbolic_extent_refused():
    M = symbols("M")
    with pytest.raises(SymbolicError, match="layout_add: .*static extents"):
        layout_add(Layout((M, 2)), Layout((M, 2)))
