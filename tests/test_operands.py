"""The one dispatch of the algebra (operands.by_owner): who answers an operation for an operand that is no Layout,
and the refusals that name the operation the user called."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from cute_py import (
    ComposedLayout, E, F2, Layout, LayoutError, RankError, Swizzle, _, blocked_product, coalesce, complement,
    composition, filter_zeros, flat_divide, layout_ceil_div, left_inverse, logical_divide, logical_product,
    make_identity_layout, make_tensor, raked_product, right_inverse, tile_to_shape, tiled_divide, zipped_divide,
    zipped_product,
)
from cute_py.layouts.f2_algebra import f2_layout

SW = ComposedLayout(Swizzle(2, 0, 2), 0, Layout((4, 8)))


@pytest.mark.parametrize("op, tiler", [(composition, (2, 4)), (logical_divide, (2, 4)), (zipped_divide, (2, 4)),
                                       (tiled_divide, (2, 4)), (flat_divide, Layout(4, 2))])
def test_a_tensor_answers_on_its_layout(op, tiler):
    t = make_tensor(np.arange(32), Layout((4, 8)))
    r = op(t, tiler)
    assert r.layout == op(t.layout, tiler)
    assert [r(i) for i in range(8)] == [t(r.layout(i)) for i in range(8)]       # the same engine, read through it


@pytest.mark.parametrize("op, args", [(composition, ((2, 4),)), (logical_divide, ((2, 4),)),
                                      (logical_product, (Layout(2),)), (zipped_product, (Layout(2),)),
                                      (coalesce, ()), (tile_to_shape, ((8, 16),))])
def test_a_composed_layout_answers_on_its_inner_layout(op, args):
    r = op(SW, *args)
    assert r == ComposedLayout(SW.outer, SW.offset, op(SW.inner, *args))


def test_complement_and_inverses_of_composed_layouts_swizzles_and_underscore():
    assert complement(SW, 64) == complement(SW.inner, 64)
    assert right_inverse(Swizzle(2, 0, 2)) == left_inverse(Swizzle(2, 0, 2)) == Swizzle(2, 0, 2)
    assert right_inverse(_) is _ and left_inverse(_) is _
    assert composition(Swizzle(2, 0, 2), Layout(16)) == ComposedLayout(Swizzle(2, 0, 2), 0, Layout(16))


def test_a_shape_reads_as_its_compact_layout_in_every_operation():
    for op, args in [(complement, (24,)), (right_inverse, ()), (left_inverse, ()), (coalesce, ()),
                     (filter_zeros, ()), (logical_divide, ((2, 3),)), (composition, (Layout(3, 2),))]:
        assert op((4, 6), *args) == op(Layout((4, 6)), *args), op.__name__


def test_only_the_algebras_operand_types_are_asked():
    # a sympy set has a method _complement of its own: it is no operand of the algebra, and is refused as one
    with pytest.raises(TypeError, match=r"^complement: expected a Layout \(or a shape"):
        complement(sympy.FiniteSet(1, 2))
    for op in (composition, logical_divide, tiled_divide, right_inverse, coalesce):
        with pytest.raises(TypeError, match=f"^{op.__name__}: "):
            op({1: 2}, 2) if op not in (right_inverse, coalesce) else op({1: 2})


def test_refusals_name_the_operation_called():
    with pytest.raises(TypeError, match=r"^flat_divide: a tiler is"):
        flat_divide(Layout(8), Swizzle(1, 0, 1))
    with pytest.raises(TypeError, match=r"^complement: cotarget must be a positive int or a shape, got 'x'"):
        complement(Layout(4, 2), "x")
    with pytest.raises(TypeError, match=r"^tile_to_shape: target shape must be an IntTuple"):
        tile_to_shape(Layout(2), 2.5)
    with pytest.raises(RankError, match=r"^composition: more tiler modes than layout modes: 2 > 1; layout = 8:1"):
        composition(Layout(8), (2, 3))
    with pytest.raises(TypeError, match=r"^composition: a composed layout or swizzle inside a tiler"):
        composition(Layout(8), [Swizzle(1, 0, 1)])                   # a list tiler as its tuple
    f2 = f2_layout(Swizzle(2, 0, 2))
    with pytest.raises(TypeError, match=r"^tiled_divide: logical_divide: complement: the cotarget of an F2"):
        tiled_divide(f2, Layout(4, F2(1)))


def test_refusals_kept_through_the_restructuring():
    f2 = f2_layout(Swizzle(2, 0, 2))
    for tiler in (_, (_,), 4, (2, 2)):                               # whatever the tiler, the block is refused
        with pytest.raises(LayoutError, match="products of layouts with F2 strides are not implemented"):
            logical_product(f2, tiler)
    with pytest.raises(TypeError, match=r"^layout_ceil_div: the tiler must be a Layout"):
        layout_ceil_div((8, 8), (4, 2))                              # C++'s ceil_div of two IntTuples is per mode
    with pytest.raises(LayoutError, match=r"^composition: B mixes basis and int strides"):
        composition(make_identity_layout((4, 8, 2)), Layout((8, 4, 8), (0, 3 * E(1), 1)))


def by_modes(*modes):
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def test_a_tuple_tiler_recurses_mode_by_mode():
    A = Layout(((4, 2), 8, 3), ((1, 32), 4, 64))
    t0 = (2, Layout(2))                                              # a nested tiler for the nested mode 0
    assert composition(A, (t0, _)) == by_modes(composition(A[0], t0), A[1])              # mode 2 dropped
    assert logical_divide(A, (t0, 4)) == by_modes(logical_divide(A[0], t0), logical_divide(A[1], 4), A[2])
    assert logical_product(A, (Layout(2), _)) == by_modes(logical_product(A[0], Layout(2)), A[1], A[2])


@pytest.mark.parametrize("op", [blocked_product, raked_product])
def test_blocked_and_raked_products_take_a_layout_tiler(op):
    assert op(Layout(2), 3) == op(Layout(2), Layout(3))
    for tiler in (_, (2, 3)):
        with pytest.raises(TypeError, match=f"^{op.__name__}: the tiler is a Layout or an int"):
            op(Layout((2, 2)), tiler)
