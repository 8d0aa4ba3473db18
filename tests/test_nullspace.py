"""nullspace: exact CuTe values (reference §1.6) and brute-force postconditions.

Postconditions (``test/unit/cute/core/nullspace.cpp``): ``size(K) == size(L) / size(filter(L))``
and ``L(K(i)) == 0`` for all ``i < size(K)``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import Layout, filter as cute_filter, nullspace, parse
from oracle import flat, is_injective, prod, ref_eval
from strategies import compact_layouts, injective_layouts, layouts

# ---------------------------------------------------------------------------
# check


def check_nullspace(L, K):
    """Brute-force the nullspace postconditions of ``K = nullspace(L)``."""
    assert isinstance(K, Layout), K
    n, k = prod(L.shape), prod(K.shape)
    # filter removes the stride-0 modes: the kernel has the size of those modes
    assert k == n // prod(cute_filter(L).shape), f"size(K) != size(L)/size(filter(L)): {L} -> {K}"
    zero_size = 1
    for s, d in zip(flat(L.shape), flat(L.stride)):
        if d == 0:
            zero_size *= s
    assert k == zero_size, f"size(K) != product of the stride-0 extents: {L} -> {K}"
    ks = [ref_eval(K, i) for i in range(k)]
    for i, x in enumerate(ks):
        assert 0 <= x < n, f"K({i})={x} outside the domain of L: {L} -> {K}"
        assert ref_eval(L, x) == 0, f"L(K({i})) = L({x}) != 0: {L} -> {K}"
        assert L(K(i)) == 0
    assert len(set(ks)) == k, f"K is not injective: {L} -> {K}"
    # with an injective non-zero-stride part, K enumerates the whole kernel
    if is_injective(cute_filter(L)):
        kernel = {i for i in range(n) if ref_eval(L, i) == 0}
        assert set(ks) == kernel, f"K misses part of the kernel: {L} -> {K}"


# ---------------------------------------------------------------------------
# exact values

NULLSPACE_CASES = [
    ("(2,3,4):(0,1,0)", "(2,4):(1,6)"),      # §1.6, C++ verified
    ("(2,4,6):(1,2,0)", "6:8"),              # §1.6, C++ verified
    # derived from the C++ algorithm (flatten, keep stride-0 modes, compact col-major strides)
    ("(4,8):(1,4)", "1:0"),
    ("1:0", "1:0"),
    ("(2,3):(0,0)", "(2,3):(1,2)"),
    ("((2,3),4):((0,1),0)", "(2,4):(1,6)"),
    ("(1,4):(0,1)", "1:0"),                  # static-1 modes get compact stride 0
    ("(2,1,3):(0,0,1)", "(2,1):(1,0)"),
    ("(2,(2,3)):(0,(-1,0))", "(2,3):(1,4)"),
]


@pytest.mark.parametrize("src,expect", NULLSPACE_CASES)
def test_nullspace_exact(src, expect):
    L = parse(src)
    K = nullspace(L)
    assert str(K) == expect
    check_nullspace(L, K)


def test_nullspace_rejects_non_layout():
    with pytest.raises(TypeError):
        nullspace((2, 3))


def test_check_nullspace_catches_wrong_results():
    L = parse("(2,3,4):(0,1,0)")
    with pytest.raises(AssertionError):
        check_nullspace(L, parse("(2,4):(1,2)"))   # K(1, 1)=3 -> L(3) = 1
    with pytest.raises(AssertionError):
        check_nullspace(L, parse("2:1"))           # too small


# ---------------------------------------------------------------------------
# properties


@st.composite
def _with_zero_modes(draw):
    """A layout with some stride-0 modes spliced into a nested shape."""
    base = draw(st.one_of(injective_layouts(max_leaves=3), compact_layouts(max_leaves=3),
                          layouts(max_leaves=3, allow_negative=True)))
    s, d = list(flat(base.shape)), list(flat(base.stride))
    for _i in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(s)))
        s.insert(k, draw(st.sampled_from([1, 2, 3, 4])))
        d.insert(k, 0)
    if len(s) >= 3 and draw(st.booleans()):
        return Layout((tuple(s[:2]), tuple(s[2:])), (tuple(d[:2]), tuple(d[2:])))
    return Layout(tuple(s), tuple(d))


@settings(max_examples=150, deadline=None)
@given(st.one_of(_with_zero_modes(), layouts(max_leaves=5, max_stride=4)))
def test_nullspace_property(L):
    check_nullspace(L, nullspace(L))
