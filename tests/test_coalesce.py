"""coalesce / filter: exact CuTe values (reference §1.6) and brute-force postconditions.

Postconditions (CuTe ``test/unit/cute/core/coalesce.cpp``):
  coalesce: ``size(R) == size(L)``, ``depth(R) <= 1``, ``R(i) == L(i)`` for all i.
  filter:   the image of R equals the image of L; R has no stride-0 mode unless R is ``1:0``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, coalesce, filter as cute_filter, parse
from oracle import depth, flat, modes_of, prod, ref_eval
from strategies import compact_layouts, injective_layouts, layouts

# ---------------------------------------------------------------------------
# checks


def check_coalesce(L, R):
    """Brute-force the coalesce postconditions of ``R = coalesce(L)``."""
    assert isinstance(R, Layout), R
    n = prod(L.shape)
    assert prod(R.shape) == n, f"size changed: {L} -> {R}"
    assert cute_py.size(R) == n
    assert depth(R.shape) <= 1, f"depth(R) > 1: {L} -> {R}"
    for i in range(n):
        assert ref_eval(R, i) == ref_eval(L, i), f"R({i}) != L({i}): {L} -> {R}"
        assert R(i) == L(i), f"R({i}) != L({i}) (Layout.__call__): {L} -> {R}"
    # coalesce is canonical: no adjacent modes are mergeable and no size-1 modes remain
    fs, fd = flat(R.shape), flat(R.stride)
    if len(fs) > 1:
        assert all(s != 1 for s in fs), f"size-1 mode left in {R}"
        for k in range(len(fs) - 1):
            assert fs[k] * fd[k] != fd[k + 1], f"mergeable modes {k},{k + 1} left in {R}"
    if n == 1:
        assert str(R) == "1:0", f"size-1 layout should coalesce to 1:0: {L} -> {R}"


def check_filter(L, R):
    """Brute-force the filter postconditions of ``R = filter(L)``."""
    assert isinstance(R, Layout), R
    n = prod(L.shape)
    img_l = {ref_eval(L, i) for i in range(n)}
    img_r = {ref_eval(R, i) for i in range(prod(R.shape))}
    assert img_l == img_r, f"image changed: {L} -> {R}"
    assert depth(R.shape) <= 1, f"depth(R) > 1: {L} -> {R}"
    fs, fd = flat(R.shape), flat(R.stride)
    if str(R) != "1:0":
        assert all(d != 0 for d in fd), f"stride-0 mode left in {R} (from {L})"
        assert all(s != 1 for s in fs), f"size-1 mode left in {R} (from {L})"
    # filter_zeros then coalesce: the size is the product of the non-zero-stride extents
    expect = 1
    for s, d in zip(flat(L.shape), flat(L.stride)):
        if d != 0:
            expect *= s
    assert prod(R.shape) == expect, f"size(filter(L)) != product of non-zero-stride extents: {L} -> {R}"
    # filter(L) is coalesced: filtering again changes nothing
    assert cute_filter(R) == R
    assert coalesce(R) == R


def check_coalesce_profile(L, profile, R):
    """``R = coalesce(L, profile)``: mode-wise coalesce for the modes the profile names, rest kept."""
    assert isinstance(R, Layout)
    n = prod(L.shape)
    assert prod(R.shape) == n
    for i in range(n):
        assert ref_eval(R, i) == ref_eval(L, i), f"R({i}) != L({i}): {L} | {profile} -> {R}"
    if not isinstance(profile, tuple):
        assert R == coalesce(L)
        return
    lm, rm = modes_of(L), modes_of(R)
    assert len(rm) == len(lm), f"rank changed under profile {profile}: {L} -> {R}"
    for k, (a, b) in enumerate(zip(lm, rm)):
        assert prod(a.shape) == prod(b.shape), f"mode {k} size changed: {L} -> {R}"
        for j in range(prod(a.shape)):
            assert ref_eval(a, j) == ref_eval(b, j), f"mode {k} changed: {L} -> {R}"
        if k < len(profile):
            check_coalesce_profile(a, profile[k], b)
        else:
            assert a == b, f"trailing mode {k} must be kept as is: {L} -> {R}"


# ---------------------------------------------------------------------------
# exact values (reference §1.6, C++ CuTe == pycute, verified)

COALESCE_CASES = [
    ("(2,1,6):(1,7,2)", "12:1"),
    ("(2,1,6):(4,7,8)", "12:4"),
    ("((2,2),(2,2)):((1,4),(8,32))", "(2,4,2):(1,4,32)"),
    ("(2,1,3):(2,4,4)", "6:2"),
    ("(2,(1,6)):(1,(6,2))", "12:1"),
    ("(4,1):(1,0)", "4:1"),
    # simple extra cases derived from the definition (back-to-front merge)
    ("1:0", "1:0"),
    ("1:5", "1:0"),
    ("(1,1,1):(3,4,5)", "1:0"),
    ("(4,8):(1,4)", "32:1"),
    ("(4,8):(8,1)", "(4,8):(8,1)"),
    ("(2,2,2):(0,0,0)", "8:0"),
    ("(4,(2,2)):(2,(8,16))", "16:2"),
]


@pytest.mark.parametrize("src,expect", COALESCE_CASES)
def test_coalesce_exact(src, expect):
    L = parse(src)
    R = coalesce(L)
    assert str(R) == expect
    check_coalesce(L, R)


FILTER_CASES = [
    ("(4,2,3):(0,1,8)", "(2,3):(1,8)"),
    ("(4,1):(0,0)", "1:0"),
    ("(2,(3,4)):(0,(1,3))", "12:1"),
    ("(2,2):(0,0)", "1:0"),
    ("(3,1,4):(2,9,0)", "3:2"),
]


@pytest.mark.parametrize("src,expect", FILTER_CASES)
def test_filter_exact(src, expect):
    L = parse(src)
    R = cute_filter(L)
    assert str(R) == expect
    check_filter(L, R)


def test_coalesce_profile_doc_example():
    L = parse("(2,(1,6)):(1,(6,2))")
    R = coalesce(L, (1, 1))
    assert str(R) == "(2,6):(1,2)"
    check_coalesce_profile(L, (1, 1), R)


PROFILE_CASES = [
    ("((2,2),(2,2)):((1,2),(8,32))", (1, 1), "(4,(2,2)):(1,(8,32))"),
    ("((2,2),(2,4)):((1,2),(8,16))", (1,), "(4,(2,4)):(1,(8,16))"),
    ("((2,2),(2,4),(3,1)):((1,2),(8,16),(1,0))", (1, 1), "(4,8,(3,1)):(1,8,(1,0))"),
    ("((2,2),((2,2),(3,1))):((1,2),((8,16),(1,5)))", (1, (1, 1)), "(4,(4,3)):(1,(8,1))"),
    ("(2,(1,6)):(1,(6,2))", 1, "12:1"),
]


@pytest.mark.parametrize("src,profile,expect", PROFILE_CASES)
def test_coalesce_profile_exact(src, profile, expect):
    L = parse(src)
    R = coalesce(L, profile)
    assert str(R) == expect
    check_coalesce_profile(L, profile, R)


def test_coalesce_reads_a_shape_and_rejects_the_rest():
    assert coalesce((4, 8)) == coalesce(Layout((4, 8))) == Layout(32)       # a shape: its compact layout
    for bad in ("x", {4: 8}, 2.5, None):
        with pytest.raises(TypeError, match="^coalesce: "):
            coalesce(bad)


# ---------------------------------------------------------------------------
# properties


@settings(max_examples=150, deadline=None)
@given(layouts(allow_negative=True))
def test_coalesce_property(L):
    check_coalesce(L, coalesce(L))


@settings(max_examples=75, deadline=None)
@given(st.one_of(compact_layouts(), injective_layouts()))
def test_coalesce_property_structured(L):
    R = coalesce(L)
    check_coalesce(L, R)
    # coalesce is idempotent
    assert coalesce(R) == R


@settings(max_examples=150, deadline=None)
@given(layouts(allow_negative=True))
def test_filter_property(L):
    check_filter(L, cute_filter(L))


@st.composite
def _layout_and_profile(draw):
    L = draw(layouts(max_leaves=5))
    modes = modes_of(L)
    k = draw(st.integers(0, len(modes)))

    def prof(m):
        if isinstance(m.shape, tuple) and draw(st.booleans()):
            return tuple(prof(x) for x in modes_of(m))
        return 1

    return L, tuple(prof(m) for m in modes[:k]) if (k or draw(st.booleans())) else 1


@settings(max_examples=100, deadline=None)
@given(_layout_and_profile())
def test_coalesce_profile_property(lp):
    L, profile = lp
    check_coalesce_profile(L, profile, coalesce(L, profile))


def test_checks_catch_wrong_results():
    with pytest.raises(AssertionError):
        check_coalesce(parse("(2,3):(1,3)"), parse("6:1"))          # L(2) = 3 but R(2) = 2
    with pytest.raises(AssertionError):
        check_coalesce(parse("((2,2),2):((1,2),4)"), parse("(4,2):(1,4)"))  # not fully merged
    with pytest.raises(AssertionError):
        check_filter(parse("(4,2,3):(0,1,8)"), parse("(4,2,3):(0,1,8)"))   # stride-0 mode left
    with pytest.raises(AssertionError):
        check_filter(parse("(4,2,3):(0,1,8)"), parse("(2,3):(1,4)"))       # image changed
