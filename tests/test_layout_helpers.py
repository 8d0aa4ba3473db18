"""The tensor-layouts library's helpers (issue 33, item 4): ``is_empty``, ``is_affine``, ``is_stride_scalar``,
``crd2flat``, ``crd2offset``, ``concat``, ``sort`` and ``iter_layout``, each checked as a function against the
definitions it stands for (idx2crd, evaluation, flattening) over random layouts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

import cute_py as c
from cute_py.layouts import int_tuple as it
from strategies import compact_layouts, layouts

SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(layouts())
def test_iter_layout_is_evaluation_in_index_order(L):
    pairs = list(c.iter_layout(L))
    assert len(pairs) == c.size(L)
    assert pairs == [(it.idx2crd(i, L.shape), L(i)) for i in range(c.size(L))]


@SETTINGS
@given(layouts())
def test_crd2flat_inverts_idx2crd_and_crd2offset_evaluates(L):
    for i in range(0, c.size(L), max(1, c.size(L) // 17)):
        crd = it.idx2crd(i, L.shape)
        assert c.crd2flat(crd, L.shape) == i == c.crd2flat(crd, L)
        assert c.crd2offset(crd, L.shape, L.stride) == L(crd) == c.crd2offset(i, L)


@SETTINGS
@given(layouts())
def test_sort_orders_the_flat_modes_by_stride(L):
    S = c.sort(L)
    flat = c.flatten(L)
    pairs = list(zip(it.flatten_to_tuple(S.shape), it.flatten_to_tuple(S.stride)))
    assert sorted(pairs) == sorted(zip(it.flatten_to_tuple(flat.shape), it.flatten_to_tuple(flat.stride)))
    strides = [d for _, d in pairs]
    assert strides == sorted(strides)                      # non-negative int strides: plain order
    assert sorted(S(i) for i in range(c.size(S))) == sorted(L(i) for i in range(c.size(L)))   # same image


@SETTINGS
@given(compact_layouts())
def test_sort_of_a_compact_layout_is_column_major(L):
    S = c.sort(L)
    assert all(S(i) == i for i in range(c.size(S)))


def test_sort_keeps_ties_in_order_and_orders_negative_and_symbolic_strides():
    from cute_py.symbolic import symbols
    m, n = symbols("m n")
    assert str(c.sort(c.Layout((2, 3, 5), (4, 1, 4)))) == "(3,2,5):(1,4,4)"        # the two 4s keep their order
    assert str(c.sort(c.Layout((2, 3), (0, -1)))) == "(3,2):(-1,0)"
    assert str(c.sort(c.Layout((2, 3), (m, 1)))) == "(3,2):(1,m)"
    with pytest.raises(c.SymbolicError, match="^sort: "):
        c.sort(c.Layout((2, 3), (m, n)))


def test_iter_layout_of_composed_and_basis_layouts_and_its_refusals():
    sw = c.composition(c.Swizzle(1, 0, 1), c.Layout(4))
    assert [o for _, o in c.iter_layout(sw)] == [sw(i) for i in range(4)]
    ident = c.make_identity_layout((2, 3))
    assert [o for _, o in c.iter_layout(ident)] == [ident(i) for i in range(6)]
    from cute_py.symbolic import symbols
    with pytest.raises(c.LayoutError, match="^iter_layout: static extents"):
        c.iter_layout(c.Layout(symbols("m")))                     # refused at the call, not at the first pair


def test_crd2offset_takes_a_layout_or_a_shape_and_strides():
    assert c.crd2offset((1, 1), c.Layout((4, 4), (1, 100))) == 101 == c.crd2offset(5, (4, 4), (1, 100))
    with pytest.raises(TypeError, match="^crd2offset: a layout carries its strides"):
        c.crd2offset((1, 1), c.Layout((4, 4)), (1, 4))


def test_sort_orders_basis_and_f2_strides_and_refuses_a_mix():
    assert str(c.sort(c.Layout((2, 3), (c.E(1), c.E(0))))) == "(3,2):(1@0,1@1)"
    assert str(c.sort(c.Layout((2, 4), (c.F2(8), c.F2(1))))) == "(4,2):(^1,^8)"
    with pytest.raises(c.LayoutError, match="^sort: strides of one kind to order"):
        c.sort(c.Layout((2, 3), (c.E(1), 1)))


@SETTINGS
@given(layouts(max_leaves=3), layouts(max_leaves=3))
def test_concat_appends_the_modes(A, B):
    C = c.concat(A, B)
    assert c.rank(C) == c.rank(A) + c.rank(B)
    assert [c.get(C, i) for i in range(c.rank(C))] == [c.get(A, i) for i in range(c.rank(A))] + \
        [c.get(B, i) for i in range(c.rank(B))]


def test_predicates():
    assert c.is_empty(c.Layout((4, 0))) and not c.is_empty(c.Layout((4, 1))) and c.is_empty((0,))
    assert c.is_empty([2, [0, 3]]) and not c.is_empty([2, 3])
    for bad in ("x", None, 2.5):
        with pytest.raises(TypeError, match="^is_empty: expected a Layout or an IntTuple"):
            c.is_empty(bad)
    assert c.is_affine(c.Layout(4)) and not c.is_affine(c.composition(c.Swizzle(1, 0, 1), c.Layout(4)))
    assert [c.is_stride_scalar(x) for x in (3, c.E(0), c.F2(3), 2 * c.E(0) + c.E(1), (1, 2), None)] == \
        [True, True, True, True, False, False]
    with pytest.raises(TypeError, match="^concat: expected a Layout"):
        c.concat(c.Layout(2), (3,))
    with pytest.raises(TypeError, match="^iter_layout: expected a Layout"):
        list(c.iter_layout((4, 8)))
