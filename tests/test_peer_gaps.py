"""Gaps the peer suites (NVlabs PyCuTe, tensor-layouts) found, issue 33 item 4."""

import pytest

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
