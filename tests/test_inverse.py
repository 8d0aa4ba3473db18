"""right_inverse / left_inverse: exact CuTe values (reference §1.6/§1.7) and postconditions.

Postconditions (``test/unit/cute/core/inverse_right.cpp`` / ``inverse_left.cpp``):
  right_inverse: ``L(R(i)) == i`` for ``i < size(R)``;
  left_inverse:  ``R(L(i)) == i`` for injective L; with stride-0 modes ``L(R(L(i))) == L(i)``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import (
    DivisibilityError, InjectivityError, Layout, LayoutError, _, coalesce, left_inverse, parse,
    right_inverse,
)
from oracle import eval_cxx, flat, is_compact, is_injective, prod, ref_eval, values
from strategies import compact_layouts, injective_layouts, layouts

# ---------------------------------------------------------------------------
# independent reference helpers


def _has_zero_stride(layout):
    return any(d == 0 and s > 1 for s, d in zip(flat(layout.shape), flat(layout.stride)))


# ---------------------------------------------------------------------------
# checks


def check_right_inverse(L, R):
    """``L(R(i)) == i`` for all ``i < size(R)``; R maps into L's domain; compact L: a full inverse."""
    assert isinstance(R, Layout), R
    n, m = prod(L.shape), prod(R.shape)
    # with negative strides C++ (and cute_py) return signed strides (right_inverse(2:-1) = 2:-1),
    # so R reaches L only through L's linear extension past its domain
    nonneg = all(d >= 0 for d in flat(L.stride))
    for i in range(m):
        x = ref_eval(R, i)
        if nonneg:
            assert 0 <= x < n, f"R({i})={x} is outside the domain of L={L}: R={R}"
        assert eval_cxx(L, x) == i, f"L(R({i})) != {i}: L={L}, R={R}"
        if nonneg:
            assert L(R(i)) == i
    if m == 1:
        assert str(R) == "1:0" or ref_eval(R, 0) == 0
    if is_compact(L):
        assert m == n, f"right_inverse of compact {L} should be a full inverse, got {R}"
        for i in range(n):
            assert ref_eval(R, ref_eval(L, i)) == i, f"R(L({i})) != {i}: L={L}, R={R}"
    # size(R) is a prefix of the image: every 0 <= i < size(R) is reached by L
    if nonneg:
        assert set(range(m)) <= set(values(L))


def check_left_inverse(L, R):
    """``R(L(i)) == i`` for injective L; ``L(R(L(i))) == L(i)`` when L has stride-0 modes."""
    assert isinstance(R, Layout), R
    n = prod(L.shape)
    injective = is_injective(L)
    for i in range(n):
        y = ref_eval(L, i)
        x = ref_eval(R, y)
        assert R(L(i)) == x
        if injective:
            assert x == i, f"R(L({i})) = {x} != {i}: L={L}, R={R}"
        assert ref_eval(L, x) == y, f"L(R(L({i}))) != L({i}): L={L}, R={R}"


# ---------------------------------------------------------------------------
# exact values

RIGHT_CASES = [
    ("(8,4):(4,1)", "(4,8):(8,1)"),
    ("(2,4,6):(4,1,8)", "(4,2,6):(2,1,8)"),
    ("(4,2):(1,16)", "4:1"),
    ("(4,2):(2,1)", "(2,4):(4,1)"),
    ("((2,2),(2,2)):((1,4),(8,32))", "2:1"),
    ("4:2", "1:0"),
    # §1.7 item 3: C++ skips stride-0 modes (pycute gives 1:0)
    ("(2,6):(1,0)", "2:1"),
    ("(4,2,3):(2,1,0)", "(2,4):(4,1)"),
    # trivial cases
    ("1:0", "1:0"),
    ("8:1", "8:1"),
    ("(4,8):(1,4)", "32:1"),
]


@pytest.mark.parametrize("src,expect", RIGHT_CASES)
def test_right_inverse_exact(src, expect):
    L = parse(src)
    R = right_inverse(L)
    assert str(R) == expect
    check_right_inverse(L, R)


LEFT_CASES = [
    ("(8,4):(4,1)", "(4,8):(8,1)"),
    ("(2,4,6):(1,2,8)", "48:1"),
    ("(8,2):(2,1)", "(2,8):(8,1)"),
    # §1.7 item 2: C++ (and the DSL) values; pycute is wrong on (4,8):(1,5) and differs textually
    ("(4,8):(1,5)", "(5,8):(1,4)"),
    ("4:2", "(2,4):(0,1)"),
    ("(4,2):(1,16)", "(16,2):(1,4)"),
    ("8:1", "8:1"),
    # all strides 0: CuTe C++ (host-compiled) gives size(L):0, not 1:0
    ("4:0", "4:0"),
    ("(4,12):(0,0)", "48:0"),
]


@pytest.mark.parametrize("src,expect", LEFT_CASES)
def test_left_inverse_exact(src, expect):
    L = parse(src)
    R = left_inverse(L)
    assert str(R) == expect
    check_left_inverse(L, R)


def test_pycute_left_inverse_bug_value_is_wrong():
    # pycute returns 4:1 for (4,8):(1,5), failing 28 of 32 points; the oracle must reject it
    L = parse("(4,8):(1,5)")
    with pytest.raises(AssertionError):
        check_left_inverse(L, parse("4:1"))
    bad = sum(parse("4:1")(L(i)) != i for i in range(32))
    assert bad == 28


def test_inverses_of_underscore():
    assert right_inverse(_) is _
    assert left_inverse(_) is _


@pytest.mark.parametrize("src", ["(4,2):(1,2)", "(2,2):(1,1)", "(3,2):(1,2)"])
def test_left_inverse_non_injective_raises(src):
    with pytest.raises(InjectivityError) as ei:
        left_inverse(parse(src))
    assert isinstance(ei.value, LayoutError)


def test_left_inverse_negative_stride_raises():
    with pytest.raises(LayoutError):
        left_inverse(parse("4:-1"))


def test_left_inverse_stride0_modes_are_ignored():
    for src in ["(2,6):(1,0)", "(4,3):(0,4)", "(4,2,3):(2,0,8)"]:
        L = parse(src)
        check_left_inverse(L, left_inverse(L))


def test_right_inverse_negative_stride_is_signed():
    # C++: rstride = signum(stride) * compact stride; L is then linear past its domain
    L = parse("2:-1")
    R = right_inverse(L)
    assert str(R) == "2:-1"
    check_right_inverse(L, R)
    L = parse("(2,1):(-1,0)")
    R = right_inverse(L)
    assert str(R) == "2:-1"
    check_right_inverse(L, R)   # L(-1) == 1 with C++'s truncating division


@pytest.mark.parametrize("src", ["(2,2):(-1,2)", "(4,2):(-1,4)"])
def test_right_inverse_mixed_sign_strides(src):
    # C++ and cute_py both return L itself here: R = (2,2):(-1,2), but R(3) = 1 and L(1) = -1 != 3.
    L = parse(src)
    check_right_inverse(L, right_inverse(L))


def test_right_inverse_non_injective_still_works():
    for src in ["(4,2):(1,2)", "(2,2):(1,1)", "(2,3,2):(1,0,2)"]:
        L = parse(src)
        check_right_inverse(L, right_inverse(L))


def test_inverses_read_a_shape_and_reject_the_rest():
    for inverse in (right_inverse, left_inverse):
        assert inverse((4, 2)) == inverse(Layout((4, 2))) == Layout(8)    # a shape: its compact layout
        assert inverse(6) == Layout(6)                                     # an int n: n:1, as PyCuTe reads it
        for bad in ("x", [1.5], None):
            with pytest.raises(TypeError, match=f"^{inverse.__name__}: "):
                inverse(bad)


# ---------------------------------------------------------------------------
# properties


@settings(max_examples=150, deadline=None)
@given(compact_layouts())
def test_right_inverse_of_compact_is_full_inverse(L):
    R = right_inverse(L)
    check_right_inverse(L, R)
    assert prod(R.shape) == prod(L.shape)
    # the inverse of the inverse is L as a function
    RR = right_inverse(R)
    for i in range(prod(L.shape)):
        assert ref_eval(RR, i) == ref_eval(L, i)
    # left and right inverses agree on compact layouts
    Li = left_inverse(L)
    for i in range(prod(L.shape)):
        assert ref_eval(Li, i) == ref_eval(R, i)


@settings(max_examples=150, deadline=None)
@given(st.one_of(layouts(), injective_layouts()))
def test_right_inverse_property(L):
    check_right_inverse(L, right_inverse(L))


@settings(max_examples=100, deadline=None)
@given(layouts(allow_negative=True, max_stride=16))
def test_right_inverse_property_signed(L):
    check_right_inverse(L, right_inverse(L))


@settings(max_examples=150, deadline=None)
@given(st.one_of(injective_layouts(), compact_layouts()))
def test_left_inverse_property_injective(L):
    R = left_inverse(L)
    check_left_inverse(L, R)
    # R is coalesced and has non-negative strides
    assert coalesce(R) == R
    assert all(d >= 0 for d in flat(R.stride))


@st.composite
def _with_zero_modes(draw):
    """An injective layout with some stride-0 modes spliced in."""
    L = draw(injective_layouts(max_leaves=3))
    s, d = list(flat(L.shape)), list(flat(L.stride))
    for _i in range(draw(st.integers(1, 2))):
        k = draw(st.integers(0, len(s)))
        s.insert(k, draw(st.sampled_from([1, 2, 3])))
        d.insert(k, 0)
    return Layout(tuple(s), tuple(d))


@settings(max_examples=100, deadline=None)
@given(_with_zero_modes())
def test_left_inverse_property_with_zero_strides(L):
    check_left_inverse(L, left_inverse(L))


@settings(max_examples=150, deadline=None)
@given(layouts(max_stride=32))
def test_left_inverse_property_arbitrary(L):
    """Arbitrary non-negative layouts: a LayoutError, or a result meeting the postcondition."""
    try:
        R = left_inverse(L)
    except (InjectivityError, DivisibilityError):
        return
    check_left_inverse(L, R)


def test_check_right_inverse_catches_wrong_results():
    with pytest.raises(AssertionError):
        check_right_inverse(parse("(8,4):(4,1)"), parse("(8,4):(4,1)"))
    with pytest.raises(AssertionError):
        check_right_inverse(parse("(8,4):(4,1)"), parse("4:8"))     # not a full inverse of a compact L
