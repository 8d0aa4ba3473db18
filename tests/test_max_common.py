"""max_common_layout / max_common_vector / domain_distribute: exact values and postconditions.

* ``R = max_common_layout(a, b)``: ``a(R(i)) == i`` and ``b(R(i)) == i`` for ``i < size(R)``;
  ``max_common_vector(a, b) == size(R)``.
* ``R = domain_distribute(shape, n)`` (``test/unit/cute/core/domain_distribute.cpp``):
  ``evenly_divides(n, size(R))``, ``evenly_divides(shape, R)``, R strictly increasing.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import (
    Layout, LayoutError, domain_distribute, make_layout, max_common_layout, max_common_vector,
    parse, LayoutRight,
)
from oracle import flat, is_compact, prod, ref_eval
from strategies import compact_layouts, layouts, shapes

# ---------------------------------------------------------------------------
# checks


def check_max_common(a, b, R, N=None):
    """``a(R(i)) == i == b(R(i))`` for ``i < size(R)``; R maps into the (shared) domain."""
    assert isinstance(R, Layout), R
    m = prod(R.shape)
    # R = right_inverse(b) o ...: it maps into b's domain; a is evaluated as CuTe does, extended
    # linearly past its domain when size(a) < size(b) (e.g. a=(2,1):(0,1), b=(2,2):(0,1) -> R=2:2)
    n = prod(b.shape)
    for i in range(m):
        x = ref_eval(R, i)
        assert 0 <= x < n, f"R({i})={x} outside the domain of b: a={a}, b={b}, R={R}"
        assert ref_eval(a, x) == i, f"a(R({i})) != {i}: a={a}, b={b}, R={R}"
        assert ref_eval(b, x) == i, f"b(R({i})) != {i}: a={a}, b={b}, R={R}"
    if m == 1:
        assert ref_eval(R, 0) == 0
    if N is not None:
        assert N == m, f"max_common_vector {N} != size(max_common_layout) {m}: a={a}, b={b}"
    # maximality for two compact layouts of the same domain: the next element disagrees
    if is_compact(a) and is_compact(b) and prod(a.shape) == prod(b.shape) and m < prod(a.shape):
        j = next(j for j in range(prod(b.shape)) if ref_eval(b, j) == m)
        assert ref_eval(a, j) != m, f"common vector of a={a}, b={b} extends past {m}: R={R}"


def check_domain_distribute(shape, n, R):
    """``n % size(R) == 0``, ``size(shape) % size(R) == 0``, R strictly increasing inside the domain."""
    assert isinstance(R, Layout), R
    m = prod(R.shape)
    size_a = prod(shape)
    assert n % m == 0, f"size(R)={m} does not divide n={n}: {shape} -> {R}"
    assert size_a % m == 0, f"size(R)={m} does not divide size(shape)={size_a}: {shape} -> {R}"
    vals = [ref_eval(R, i) for i in range(m)]
    assert vals[0] == 0
    for i in range(1, m):
        assert vals[i - 1] < vals[i], f"R not strictly increasing at {i}: {shape}, {n} -> {R}"
    assert vals[-1] < size_a, f"R leaves the domain of {shape}: {R}"
    # the greedy per-mode gcd distribution (reference algorithm)
    expect, rest = 1, n
    for s in flat(shape):
        g = math.gcd(s, rest)
        expect *= g
        rest //= g
    assert m == expect, f"size(R)={m}, expected {expect}: {shape}, {n} -> {R}"


# ---------------------------------------------------------------------------
# exact values


def test_max_common_vector_same_layout():
    L = parse("(8,64):(64,1)")
    assert max_common_vector(L, L) == 512
    R = max_common_layout(L, L)
    assert str(R) == "(64,8):(8,1)"
    check_max_common(L, L, R, 512)


def test_max_common_layout_row_vs_col_major():
    a = make_layout((4, 8), LayoutRight)
    b = make_layout((4, 8))
    assert str(a) == "(4,8):(8,1)" and str(b) == "(4,8):(1,4)"
    R = max_common_layout(a, b)
    assert str(R) == "1:0"
    assert max_common_vector(a, b) == 1
    check_max_common(a, b, R, 1)


MC_CASES = [
    ("(4,8):(1,4)", "(4,8):(1,4)", 32),
    ("(4,8):(1,4)", "32:1", 32),
    ("(4,8):(1,4)", "(4,8):(1,8)", 4),      # b reaches only 0..3 contiguously
    ("(4,8):(1,4)", "(2,2,8):(1,8,2)", 2),
    ("((2,4),8):((1,2),8)", "(8,8):(1,8)", 64),
    ("(8,8):(8,1)", "(8,8):(1,8)", 1),
    ("(2,4):(1,2)", "(2,4):(4,1)", 1),
    ("(2,4):(4,1)", "(2,4):(4,1)", 8),
]


@pytest.mark.parametrize("a,b,n", MC_CASES)
def test_max_common_exact(a, b, n):
    A, B = parse(a), parse(b)
    R = max_common_layout(A, B)
    N = max_common_vector(A, B)
    assert N == n
    check_max_common(A, B, R, N)


def test_domain_distribute_exact():
    R = domain_distribute((15, 14), 6)
    assert str(R) == "(3,2):(1,15)"
    check_domain_distribute((15, 14), 6, R)


DD_CASES = [
    ((4, 8), 8, "8:1"),
    ((3, 5), 4, "1:0"),
    (((2, 3), 4), 12, "12:1"),
    ((6, 4), 4, "(2,2):(1,6)"),
    ((6, 4), 24, "24:1"),
    ((6, 4), 48, "24:1"),
]


@pytest.mark.parametrize("shape,n,expect", DD_CASES)
def test_domain_distribute_more(shape, n, expect):
    R = domain_distribute(shape, n)
    assert str(R) == expect
    check_domain_distribute(shape, n, R)


def test_domain_distribute_accepts_layout_and_rejects_bad_n():
    assert domain_distribute(Layout((15, 14)), 6) == domain_distribute((15, 14), 6)
    with pytest.raises(TypeError):
        domain_distribute((15, 14), (2, 3))


def test_check_max_common_catches_wrong_results():
    a = parse("(4,8):(8,1)")
    b = parse("(4,8):(1,4)")
    with pytest.raises(AssertionError):
        check_max_common(a, b, parse("2:1"))


# ---------------------------------------------------------------------------
# properties


@st.composite
def _same_shape_compact_pair(draw):
    """Two compact layouts of the same shape: permutations of the column-major strides."""
    a = draw(compact_layouts())
    leaves = flat(a.shape)
    perm = draw(st.permutations(range(len(leaves))))
    strides, acc = [0] * len(leaves), 1
    for k in perm:
        strides[k] = acc if leaves[k] != 1 else 0
        acc *= leaves[k]
    it = iter(strides)

    def build(x):
        if isinstance(x, tuple):
            return tuple(build(y) for y in x)
        return next(it)

    return a, Layout(a.shape, build(a.shape))


@settings(max_examples=150, deadline=None)
@given(_same_shape_compact_pair())
def test_max_common_compact_pairs(ab):
    a, b = ab
    R = max_common_layout(a, b)
    N = max_common_vector(a, b)
    check_max_common(a, b, R, N)
    # symmetric in size
    assert max_common_vector(b, a) == N
    assert max_common_vector(a, a) == prod(a.shape)


@settings(max_examples=150, deadline=None)
@given(layouts(max_stride=16), layouts(max_stride=16))
def test_max_common_arbitrary(a, b):
    """Arbitrary pairs: never a wrong answer (a LayoutError would be a deviation, see below)."""
    try:
        R = max_common_layout(a, b)
        N = max_common_vector(a, b)
    except LayoutError:
        # composition(a, right_inverse(b)) may be rejected; the result is then undefined
        return
    check_max_common(a, b, R, N)


@settings(max_examples=150, deadline=None)
@given(shapes(max_leaves=4, max_size=256), st.integers(1, 256))
def test_domain_distribute_property(shape, n):
    check_domain_distribute(shape, n, domain_distribute(shape, n))
