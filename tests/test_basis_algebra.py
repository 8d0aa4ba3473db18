"""Basis strides in complement and the inverses, basis coordinates, ArithmeticTuple equality, and symbolic
orders in make_layout_like / make_ordered_layout (issue 16's gaps), each checked by brute force."""

from __future__ import annotations

import itertools
import random

import pytest

import cute_py
from cute_py import (
    ArithmeticTuple, E, Layout, LayoutError, ScaledBasis, SymbolicError, complement, left_inverse,
    make_identity_layout, make_layout_like, make_ordered_layout, right_inverse, size,
)
from cute_py.int_tuple import idx2crd
from cute_py.symbolic import symbols


def basis_layout(rng: random.Random) -> Layout:
    """An injective layout with basis strides: a permutation of the modes of an identity layout, some split."""
    dims = [rng.choice((2, 3, 4, 5)) for _ in range(rng.randint(1, 3))]
    modes = []
    for i, n in enumerate(dims):
        if n == 4 and rng.random() < 0.5:
            modes += [(2, E(i)), (2, ScaledBasis(2, (i,)))]
        else:
            modes.append((n, E(i)))
    rng.shuffle(modes)
    return Layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def as_coord(v, n):
    """A layout's value (an int, a ScaledBasis or an ArithmeticTuple) as a flat coordinate of n modes."""
    if isinstance(v, ScaledBasis):
        v = v.to_tuple()
    v = tuple(v) if isinstance(v, tuple) else (v,)
    return v + (0,) * (n - len(v))


def coord_of(L, i):
    return as_coord(L(i), len(tuple(cute_py.coshape(L))))


@pytest.mark.parametrize("seed", range(40))
def test_left_inverse_takes_a_coordinate_to_its_index(seed):
    L = basis_layout(random.Random(seed))
    R = left_inverse(L)
    for i in range(size(L)):
        c = coord_of(L, i)
        assert R(c if isinstance(R.shape, tuple) else c[0]) == i


@pytest.mark.parametrize("seed", range(40))
def test_right_inverse_from_the_colex_number_of_a_coordinate(seed):
    L = basis_layout(random.Random(seed))
    C = tuple(cute_py.coshape(L))
    R = right_inverse(L)
    assert size(R) == size(L)                           # an injective, onto layout inverts fully
    for k in range(size(R)):
        want = idx2crd(k, C)
        assert coord_of(L, R(k)) == (want if isinstance(want, tuple) else (want,))


def test_issue_examples():
    assert str(complement(Layout(3, E(0)))) == "1:0"
    assert left_inverse(Layout((4, 5), (E(0), E(1)))) == Layout((4, 5))
    assert str(right_inverse(Layout((4, 5), (E(0), E(1))))) == "20:1"


@pytest.mark.parametrize("shape, cot", [((4, E(1)), (3, 8)), ((2, E(0)), (8,)), (((2, 2), (E(0), E(1))), (4, 4))])
def test_complement_with_basis_strides_covers_the_codomain(shape, cot):
    L = Layout(*shape)
    C = complement(L, cot)
    seen = {}
    for i in range(size(L)):
        for j in range(size(C)):
            pt = tuple(ArithmeticTuple(as_coord(L(i), len(cot))) + ArithmeticTuple(as_coord(C(j), len(cot))))
            assert pt not in seen                       # disjoint: every point reached once
            seen[pt] = (i, j)
    assert set(seen) == set(itertools.product(*(range(n) for n in cot)))


def test_basis_strides_that_span_two_modes_are_refused():
    with pytest.raises(LayoutError, match="v@i"):
        left_inverse(Layout((2, 2), (E(0), E(0, 1))))


def test_calling_a_layout_on_a_basis_coordinate():
    assert make_identity_layout((4, 8))(E(1)) == (0, 1)
    assert Layout((4, 8))(ScaledBasis(3, (1,))) == 12
    assert Layout((4, (2, 8)))(E(1, 1)) == 8            # (0, (0, 1)): stride 8
    with pytest.raises(cute_py.CoordinateError):
        Layout((4, 8))(E(2))


def test_arithmetic_tuple_equality_zero_extends():
    assert ArithmeticTuple((1, 0)) == ArithmeticTuple((1, 0, 0))
    assert hash(ArithmeticTuple((1, 0))) == hash(ArithmeticTuple((1,)))
    assert ArithmeticTuple((1, 0)) != ArithmeticTuple((1, 0, 1))
    assert len({ArithmeticTuple((2,)), ArithmeticTuple((2, 0))}) == 1


def test_symbolic_orders():
    M, N = symbols("M N")
    assert make_layout_like(Layout((4, M), (M, 1))) == Layout((4, M), (M, 1))
    assert make_layout_like(Layout((M, N, 4), (4 * N, 1, N))) == Layout((M, N, 4), (4 * N, 1, N))
    assert make_ordered_layout((M, N, 4), (N, N + 1, 1)) == Layout((M, N, 4), (4, 4 * M, 1))
    with pytest.raises(SymbolicError, match="make_layout_like.*the order of the modes"):
        make_layout_like(Layout((4, 4), (M, N)))
    with pytest.raises(SymbolicError, match="make_ordered_layout"):
        make_ordered_layout((M, N), (N, M))


def test_complement_splits_a_mode_at_codomain_boundaries():
    """complement(2:1@0, (4,2)) steps by 2 through mode 0 (extent 4), then on into mode 1."""
    assert str(complement(Layout(2, E(0)), (4, 2))) == "(2,2):(2@0,1@1)"


@pytest.mark.parametrize("L", [Layout((4, 2), (E(0), ScaledBasis(3, (1,)))),
                               Layout((3, 2), (ScaledBasis(2, (0,)), E(1)))], ids=str)
def test_left_inverse_of_coordinates_that_do_not_fill_the_codomain(L):
    R = left_inverse(L)
    for i in range(size(L)):
        assert R(as_coord(L(i), 2)) == i
