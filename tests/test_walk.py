"""The small helpers issue 16 names: leaves, coordinates, values, tiler_to_layout, coalesce_z, squeeze and the
filter/squeeze methods, each against its definition by brute force."""

from __future__ import annotations

import random

import pytest

import cute_py
from cute_py import (
    E, Layout, coalesce, coalesce_z, coordinates, filter, leaves, size, squeeze, tiler_to_layout, values,
)
from cute_py.int_tuple import flatten_to_tuple, idx2crd


def rand_layout(rng):
    r = rng.randint(1, 4)
    shape = tuple(rng.choice((1, 2, 3, 4)) for _ in range(r))
    stride = tuple(rng.choice((0, 1, 2, 5, 8)) for _ in range(r))
    if rng.random() < 0.5 and r > 1:
        shape, stride = (shape[0], shape[1:]), (stride[0], stride[1:])
    return Layout(shape, stride)


@pytest.mark.parametrize("seed", range(30))
def test_walkers_match_their_definitions(seed):
    L = rand_layout(random.Random(seed))
    assert leaves(L) == tuple(Layout(s, d) for s, d in zip(flatten_to_tuple(L.shape), flatten_to_tuple(L.stride)))
    assert list(coordinates(L)) == [idx2crd(i, L.shape) for i in range(size(L))]
    assert list(values(L)) == [L(i) for i in range(size(L))] == [L(c) for c in coordinates(L)]


@pytest.mark.parametrize("seed", range(30))
def test_squeeze_and_filter_methods(seed):
    L = rand_layout(random.Random(seed))
    S = squeeze(L)
    assert list(values(S)) == list(values(L))
    assert 1 not in flatten_to_tuple(S.shape) or S == Layout(1, 0)
    assert L.squeeze() == S and L.filter() == filter(L)


@pytest.mark.parametrize("seed", range(30))
def test_coalesce_z_keeps_the_extended_domain(seed):
    L = rand_layout(random.Random(seed))
    Z = coalesce_z(L)
    assert [Z(i) for i in range(size(L))] == list(values(L))
    # past the domain, the last mode of extent > 1 (or the last mode) keeps its stride
    if size(L) == size(coalesce(L)) and flatten_to_tuple(L.shape)[-1] != 1:
        assert size(Z) == size(L)


def test_coalesce_z_example():
    assert str(coalesce_z(Layout((2, 1), (1, 8)))) == "(2,2):(1,8)"
    assert str(coalesce(Layout((2, 1), (1, 8)))) == "2:1"


def test_tiler_to_layout():
    assert tiler_to_layout((4, 5)) == Layout((4, 5), (E(0), E(1)))
    T = tiler_to_layout((Layout(2, 3), 8))
    assert [T(i, j) for j in range(2) for i in range(2)] == [
        cute_py.ArithmeticTuple((0, 0)), cute_py.ArithmeticTuple((3, 0)),
        cute_py.ArithmeticTuple((0, 1)), cute_py.ArithmeticTuple((3, 1))]
    with pytest.raises(TypeError, match="tiler_to_layout"):
        tiler_to_layout((4, "x"))


def test_walker_refusals():
    with pytest.raises(TypeError, match="coordinates"):
        list(coordinates((None,)))
    with pytest.raises(TypeError, match="values"):
        values(3)
    with pytest.raises(TypeError, match="leaves"):
        leaves("x")
