"""Zero-size extents: a shape leaf of 0 is an empty domain (CuTe C++ accepts a dynamic 0, an empty tensor).

Accepted: construction (compact strides are C++'s prefix products: ``(0,4)`` gets ``(1,0)``), the text form
and ``parse``, size and cosize (both 0), the (empty) evaluation domain, coalesce, filter, slicing,
make_layout, the walks and the text grid. Refused with a LayoutError naming the operation: composition,
complement and what is built on them, max_common_layout/vector, greatest_common_domain and layout_add
(C++ divides by the extent there). An index cannot be split over a 0 extent that is not the last mode.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import (
    CoordinateError, Layout, LayoutError, LayoutRight, _, coalesce, complement, composition, coordinates,
    coshape, cosize, filter, greatest_common_domain, layout_add, logical_divide, logical_product, make_identity_layout,
    make_layout, max_common_layout, max_common_vector, parse, size, values, zipped_divide,
)
from oracle import flat, unflatten
from strategies import layouts

EMPTY = ["0:1", "(4,0):(1,4)", "(0,4):(1,0)", "(4,0):(2,8)", "((2,0),3):((1,2),0)", "(4,(0,2)):(-1,(3,0))"]


def test_construction_uses_cxx_compact_strides():
    assert Layout(0) == Layout(0, 1)
    assert Layout((4, 0)).stride == (1, 4)
    assert Layout((0, 4)).stride == (1, 0)           # the prefix product past a 0 is 0
    assert make_layout((4, 0), LayoutRight).stride == (0, 1)
    assert make_layout(Layout(0), Layout(2)) == Layout((0, 2), (1, 1))


@pytest.mark.parametrize("bad", [-1, (4, -1), (4, (2, -3))])
def test_negative_extent_refused(bad):
    with pytest.raises(LayoutError, match="shape extents must be non-negative"):
        Layout(bad)


@pytest.mark.parametrize("text", EMPTY)
def test_text_form_sizes_and_walks(text):
    L = parse(text)
    assert str(L) == text and parse(str(L)) == L
    assert size(L) == 0 and cosize(L) == 0 and coshape(L) == 0
    assert list(values(L)) == [] and list(coordinates(L)) == []
    assert size(coalesce(L)) == 0 and size(filter(L)) == 0
    assert cute_py.viz.to_text(L).startswith(text)


def test_cosize_is_zero_where_cxx_formula_is_not():
    # C++'s 1 + sum((s-1)*|d|) is 0 for compact layouts only: here 1 + 3*2 - 8 = -1
    assert cosize(Layout((4, 0), (2, 8))) == 0
    assert coshape(make_identity_layout((4, 0))) == (0, 0)


def test_coalesce_merges_as_with_static_extents():
    assert coalesce(Layout((4, 0), (1, 4))) == Layout(0, 1)      # 4*1 == 4: merged, as C++ with _0
    assert coalesce(Layout((0, 4), (3, 5))) == Layout((0, 4), (3, 5))


def test_evaluation_and_slicing():
    L = Layout((4, 0), (1, 4))
    assert L(1, 0) == 1 and L(5) == 5          # no bounds check; the last mode takes the rest
    assert L(2, _) == Layout((0,), (4,)) and L(_, 0) == Layout((4,), (1,))
    with pytest.raises(CoordinateError, match="cannot be split over a mode of extent 0"):
        Layout((0, 4))(1)


@pytest.mark.parametrize("call, op", [
    (lambda L: composition(Layout(4), L), "composition"),
    (lambda L: composition(L, Layout(4)), "composition"),
    (lambda L: complement(L, 12), "complement"),
    (lambda L: logical_divide(Layout(4), L), "logical_divide"),
    (lambda L: logical_divide(L, 2), "logical_divide"),
    (lambda L: logical_product(L, Layout(2)), "logical_product"),
    (lambda L: zipped_divide(Layout((4, 4)), (L, 2)), "_divide"),  # names the by-mode logical_divide
    (lambda L: max_common_layout(L, L), "max_common_layout"),
    (lambda L: max_common_vector(L, L), "max_common_vector"),
    (lambda L: layout_add(L, L), "layout_add"),
    (lambda L: greatest_common_domain(L, L), "greatest_common_domain"),
])
@pytest.mark.parametrize("text", EMPTY[:3])
def test_algebra_refuses_empty_operands(call, op, text):
    with pytest.raises(LayoutError, match=op):
        call(parse(text))


@settings(max_examples=100, deadline=None)
@given(layouts(max_leaves=4, allow_negative=True), st.data())
def test_any_leaf_zero_is_an_empty_layout(L, data):
    s = flat(L.shape)
    k = data.draw(st.integers(0, len(s) - 1))
    s[k] = 0
    Z = Layout(unflatten(s, L.shape), L.stride)
    assert size(Z) == 0 and cosize(Z) == 0
    assert parse(str(Z)) == Z
    assert size(coalesce(Z)) == 0
    with pytest.raises(LayoutError, match="composition"):
        composition(L, Z)


def test_tile_to_shape_refuses_a_zero_extent():
    # review of issue 16: these raised a bare ZeroDivisionError from the divisibility check
    for block, target in ((Layout(0), 2), (Layout((2, 0)), (4, 4))):
        with pytest.raises(LayoutError, match="^tile_to_shape: needs a block and a target of positive size"):
            cute_py.tile_to_shape(block, target)
    with pytest.raises(LayoutError, match="^tile_to_shape: "):
        cute_py.tile_to_shape(Layout(2), 0)


@pytest.mark.parametrize("op", [logical_divide, zipped_divide, cute_py.tiled_divide, cute_py.flat_divide])
@pytest.mark.parametrize("text", ["(0,2):(4,1)", "(2,0):(1,2)", "((0,8),2):((0,2),12)"])
def test_divides_refuse_an_empty_layout_by_name(op, text):
    # an extent of 0 inside the coalesced shape was a bare ZeroDivisionError for a while (review of session 12)
    with pytest.raises(LayoutError, match=r"logical_divide: needs layouts of positive size: A has an extent of 0"):
        op(parse(text), 2)


def test_right_inverse_gives_a_stride_0_mode_stride_0():
    # C++: signum(stride) * rstride, so a stride-0 mode the chain reaches past an extent of 0 keeps stride 0
    assert cute_py.right_inverse(Layout((3, 0), (0, -1))) == Layout((0, 3), (-3, 0))
    assert cute_py.right_inverse(Layout((0, 0), (0, -1))) == Layout((0, 0), (0, 0))
