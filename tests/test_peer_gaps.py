"""Gaps the peer suites (NVlabs PyCuTe, tensor-layouts) found, issue 33 item 4."""

import pytest

from cute_py import int_tuple as it
from cute_py.layouts import ComposedLayout, Layout, Swizzle
from cute_py.layouts.basis import ArithmeticTuple, E, ScaledBasis


def test_scaled_basis_equals_its_arithmetic_tuple():
    a, b = ScaledBasis(4, (2,)), ArithmeticTuple((0, 0, 4, 0))
    assert a == b and b == a and not (a != b) and not (b != a)
    assert hash(a) == hash(b) and len({a, b}) == 1
    assert ScaledBasis(1, (1, 0)) == ArithmeticTuple((0, (1,)))
    assert E(1) != ArithmeticTuple((1, 0)) and ArithmeticTuple((0, 2)) != ScaledBasis(2, (0,))
    assert E(1) != E(0) and E(1) != (0, 1)                    # a plain tuple is not an arithmetic tuple


def test_composed_layout_peer_attribute_names():
    inner = Layout((8, 8), (8, 1))
    c = ComposedLayout(Swizzle(3, 0, 3), 5, inner)
    assert c.swizzle == Swizzle(3, 0, 3) and c.preoffset == 5 == c.offset and c.layout == inner
    by_layout = ComposedLayout(Layout(64, 2), 0, inner)
    assert not hasattr(by_layout, "swizzle") and by_layout.layout == inner
    with pytest.raises(AttributeError, match="not a Swizzle"):
        by_layout.swizzle


def test_make_layout_like_orders_basis_and_f2_strides():
    """Basis strides order by codomain mode, then value; F2 strides by the int their bits spell. The result is
    the compact layout whose modes step in that order: without a stride-0 mode its offsets are 0 .. size - 1
    (checked by brute force)."""
    from cute_py import F2, LayoutError, make_identity_layout, make_layout_like, size
    for L, want in ((Layout((2, 3), (E(1), E(0))), Layout((2, 3), (3, 1))),
                    (make_identity_layout((4, (2, 3))), Layout((4, (2, 3)), (1, (4, 8)))),
                    (Layout((2, 3, 2), (E(1), 0, E(0))), Layout((2, 3, 2), (2, 0, 1))),
                    (Layout((2, 2), (2 * E(0), E(0))), Layout((2, 2), (2, 1))),
                    (Layout((2, 4), (F2(8), F2(1))), Layout((2, 4), (4, 1)))):
        got = make_layout_like(L)
        assert got == want, (str(L), str(got))
        if 0 not in it.flatten_to_tuple(got.stride):
            assert sorted(got(i) for i in range(size(got))) == list(range(size(got)))
    with pytest.raises(LayoutError, match="make_layout_like: strides of one kind to order"):
        make_layout_like(Layout((2, 3), (E(1), 1)))
    with pytest.raises(LayoutError, match="basis strides of one term with an int value"):
        make_layout_like(Layout((2, 3), (E(1) + E(0), E(0))))


def test_f2_scalar_conversion_and_order():
    from cute_py import F2
    assert int(F2(5)) == 5 and F2(3) < F2(5) <= F2(5) and F2(8) > F2(7) >= F2(7)
    assert sorted([F2(4), F2(1), F2(2)]) == [F2(1), F2(2), F2(4)]
    with pytest.raises(TypeError):
        F2(1) < 2                                          # noqa: B015 - an F2 and an int have no order
