"""tensor-layouts' tuple helpers: ``shape_mod`` (the shape of a shape's first n elements) and ``slice_modes`` /
``dice_modes`` (CuTe's ``slice`` / ``dice`` on IntTuples), checked against brute force and the layout forms."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import (DivisibilityError, Layout, _, dice, dice_modes, shape_mod, slice_, slice_modes)
from cute_py.layouts import int_tuple as it

shapes = st.recursive(st.integers(1, 6), lambda ch: st.tuples(ch, ch) | st.tuples(ch, ch, ch), max_leaves=5)


def test_shape_mod_examples():
    # (4,5,6) by 40: 4 whole, 5 whole (10 left), 2 of the 6 -- the rest is shape_div's (1,1,3)
    assert shape_mod((4, 5, 6), 40) == (4, 5, 2) and it.shape_div((4, 5, 6), 40) == (1, 1, 3)
    assert shape_mod((3, 4), 6) == (3, 2)
    assert shape_mod(12, (2, 3)) == 6                       # int/tuple: the product of the tuple
    assert shape_mod((6, 4), (2, 4)) == (2, 4)              # tuple/tuple: mode-wise
    assert shape_mod((4, (2, 4)), 16) == (4, (2, 2))        # nested: the fold descends
    assert shape_mod(4, 12) == 4 and shape_mod(12, 4) == 4


def test_shape_mod_refuses_what_is_no_shape():
    # the first 4 elements of (2,3) are no box: 4 over 2 leaves 2 of the 3
    with pytest.raises(DivisibilityError, match="shape_mod"):
        shape_mod((2, 3), 4)
    with pytest.raises(DivisibilityError, match="shape_mod"):
        shape_mod(6, 4)
    with pytest.raises(TypeError, match="^shape_mod: "):
        shape_mod("x", 2)
    with pytest.raises(TypeError, match="^shape_mod: expected IntTuples"):   # found by test_fuzz_api
        shape_mod(4, (2, None))


@settings(max_examples=75, deadline=None)
@given(shapes, st.integers(1, 64))
def test_shape_mod_is_the_box_of_the_first_n_elements(s, n):
    try:
        m = shape_mod(s, n)
    except DivisibilityError:
        return
    size = it.product(s)
    first = min(n, size)
    assert it.product(m) == first                            # the box holds exactly the first n elements...
    fm = it.flatten_to_tuple(m)
    for i in range(first):                                    # ...and each of them lies in it
        assert all(c < b for c, b in zip(it.flatten_to_tuple(it.idx2crd(i, s)), fm))
    if size % first == 0:
        assert it.product(m) * it.product(it.shape_div(s, first)) == size


def _coords(shape):
    """Every slicing coordinate of a shape: each leaf or mode either ``_`` or an int."""
    if isinstance(shape, tuple):
        return [tuple(c) for c in itertools.product(*(_coords(x) for x in shape))]
    return [_, 0]


@settings(max_examples=60, deadline=None)
@given(shapes.filter(lambda s: isinstance(s, tuple)))
def test_slice_and_dice_modes_agree_with_the_layout_forms(s):
    L = Layout(s)
    for c in _coords(s):
        assert slice_modes(c, s) == slice_(c, L).shape
        assert dice_modes(c, s) == dice(c, L).shape
        # None is read as _ (tensor-layouts and the CuTe DSL write None)
        assert slice_modes(_to_none(c), s) == slice_(c, L).shape


def _to_none(c):
    return tuple(_to_none(x) for x in c) if isinstance(c, tuple) else (None if c is _ else c)


def test_slice_modes_examples():
    assert slice_modes((_, 0), (3, 4)) == (3,) and dice_modes((_, 0), (3, 4)) == (4,)
    assert slice_modes((None, (0, _)), (3, (4, 5))) == (3, 5)      # a kept nested mode is spliced in
    assert slice_modes(_, (3, 4)) == (3, 4) and slice_modes(2, (3, 4)) == ()
    assert dice_modes(_, (3, 4)) == () and dice_modes(2, (3, 4)) == (3, 4)
    with pytest.raises(TypeError, match="^slice_modes: "):
        slice_modes((_, 0), (3, "a"))


def test_shape_mod_of_zero_extents():
    # no elements (n = 0) or an empty shape: the first n elements are none (review: these divided by zero)
    assert shape_mod(0, 4) == 0 and shape_mod(4, 0) == 0 and shape_mod((2, 3), 0) == (0, 0)
