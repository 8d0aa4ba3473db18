"""Multi-term basis strides (an ArithmeticTuple such as ``(1,1)``, ``1@0 + 1@1``, as one stride): construction,
the text form, evaluation, coshape, coalesce, composition with an int B, slicing, identity tensors, and the
refusals of complement and the inverses. Values are checked against a brute-force evaluation written here
(the sum over modes of coordinate times stride, as plain int vectors)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cute_py import (
    ArithmeticTuple, DivisibilityError, E, IdentityEngine, Layout, LayoutError, RankError, ScaledBasis, Tensor, _,
    coalesce, complement, composition, coshape, cosize, crd2idx, left_inverse, logical_divide, logical_product,
    make_identity_layout, make_layout, make_tensor, parse, right_inverse, size, slice_and_offset, zipped_divide,
)
from cute_py.symbolic import subs, symbols
from oracle import flat, idx2crd, unflatten
from strategies import divisor_tilers, layouts, shapes

AT = ArithmeticTuple
WIDTH = 4                                   # codomain modes of the generated strides
PHI = 10 ** 6                               # (a0, a1, ...) -> a0 + a1*PHI + ...: injective on the values here


def vec(x, n=WIDTH):
    """A stride or a layout's value as a plain list of ``n`` ints (brute force: no cute_py arithmetic)."""
    if isinstance(x, ScaledBasis):
        if not x.mode:
            return vec(tuple(x.value), n)
        assert len(x.mode) == 1
        return [x.value if k == x.mode[0] else 0 for k in range(n)]
    if isinstance(x, tuple):
        assert len(x) <= n and all(type(e) is int for e in x)
        return [int(e) for e in x] + [0] * (n - len(x))
    assert x == 0
    return [0] * n


def brute(layout, i):
    """``layout(i)`` as the sum over flat modes of coordinate times stride (int vectors)."""
    crd = flat(idx2crd(i, layout.shape))
    out = [0] * WIDTH
    for c, d in zip(crd, flat(layout.stride)):
        out = [o + c * e for o, e in zip(out, vec(d))]
    return out


def phi(layout):
    """The int layout ``phi o layout``: each stride's vector read as digits in base PHI."""
    return Layout(layout.shape, unflatten([sum(e * PHI ** k for k, e in enumerate(vec(d))) for d in
                                           flat(layout.stride)], layout.shape))


@st.composite
def strides(draw, nonneg=False):
    """A stride leaf: 0, a single term v@i, or a tuple of several terms."""
    lo = 0 if nonneg else -3
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return 0
    if kind == 1:
        return ScaledBasis(draw(st.integers(1, 4)), (draw(st.integers(0, WIDTH - 1)),))
    return AT(draw(st.lists(st.integers(lo, 4), min_size=2, max_size=WIDTH)))


@st.composite
def multi_term_layouts(draw, nonneg=False, max_size=96):
    shape = draw(shapes(max_leaves=4, max_size=max_size))
    return Layout(shape, unflatten([draw(strides(nonneg)) for _ in flat(shape)], shape))


# ---------------------------------------------------------------------------
# construction and text


def test_the_issue_examples_construct_and_evaluate():
    L = Layout((4, 4), (AT((1, 1)), AT((3, 1))))
    assert str(L) == "(4,4):((1,1),(3,1))"
    assert L(1, 2) == AT((7, 3)) and L(9) == AT((7, 3))       # 1*(1,1) + 2*(3,1)
    M = Layout(3, 4 * E(2) + 2 * E(3))
    assert str(M) == "3:(0,0,4,2)" and M(2) == AT((0, 0, 8, 4))


def test_a_tuple_of_one_term_is_that_basis_element_and_of_none_is_0():
    assert Layout(4, AT((0, 4))) == Layout(4, ScaledBasis(4, (1,)))
    assert Layout(4, AT((0, (0, 3)))).stride == ScaledBasis(3, (1, 1))
    assert Layout((4, 2), (AT((0, 0)), AT((2,)))).stride == (0, ScaledBasis(2, (0,)))
    assert Layout(4, 2 * E()).stride == 2                      # E<> is 1


def test_an_arithmetic_tuple_at_a_mode_of_the_shape_holds_the_modes_strides():
    assert Layout((4, 8), AT((1, 4))) == Layout((4, 8), (1, 4))           # as C++: an ArithmeticTuple is a tuple
    assert Layout((2, 2), AT(((1, 1), 2))).stride == (ScaledBasis(AT((1, 1)), ()), 2)


def test_a_plain_tuple_at_a_leaf_is_still_not_congruent():
    with pytest.raises(RankError):
        Layout((4, 4), ((1, 1), (3, 1)))


def test_tuple_stride_leaves_must_be_ints_or_symbols():
    with pytest.raises(TypeError, match=r"leaves must be ints or symbolic"):
        Layout(4, AT((E(0), 2)))
    with pytest.raises(TypeError, match=r"leaves must be ints or symbolic"):
        Layout(4, AT((1.5, 2)))


def test_equal_sums_make_equal_hashable_picklable_layouts():
    a, b = Layout(4, AT((1, 1))), Layout(4, AT((1, 1, 0)))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert pickle.loads(pickle.dumps(a)) == a
    assert Layout(4, E(0) + E(1)) == a


@pytest.mark.parametrize("text", ["(4,4):((1,1),(3,1))", "3:(0,0,4,2)", "(4):((1,1))", "(2,(2,3)):((1,1),(2@1,(-1,3)))",
                                  "4:(1,(0,1))", "4:(M,1)"])
def test_text_reads_back_exactly(text):
    L = parse(text)
    assert str(L) == text and parse(str(L)) == L


def test_text_of_one_term_reads_as_the_basis_element():
    assert str(parse("4:(0,3)")) == "4:3@1" and str(parse("4:(3)")) == "4:3@0"


@settings(max_examples=100, deadline=None)
@given(multi_term_layouts())
def test_text_round_trip(L):
    assert parse(str(L)) == L


# ---------------------------------------------------------------------------
# evaluation, coshape, slicing


@settings(max_examples=100, deadline=None)
@given(multi_term_layouts())
def test_values_are_the_sum_of_coordinate_times_stride(L):
    for i in range(size(L)):
        assert vec(L(i)) == brute(L, i)
        assert vec(crd2idx(idx2crd(i, L.shape), L)) == brute(L, i)


@settings(max_examples=100, deadline=None)
@given(multi_term_layouts(nonneg=True))
def test_coshape_is_one_past_the_largest_value_in_each_codomain_mode(L):
    c = coshape(L)
    vals = [brute(L, i) for i in range(size(L))]
    top = [max(v[k] for v in vals) + 1 for k in range(WIDTH)]
    if isinstance(c, tuple):
        assert list(c) == top[:len(c)] and all(t == 1 for t in top[len(c):])
        assert cosize(L) == int(np.prod(c))
    else:                                       # every stride 0
        assert c == 1 and top == [1] * WIDTH


def test_coshape_and_cosize_of_the_example():
    L = Layout((4, 4), (AT((1, 1)), AT((3, 1))))
    assert coshape(L) == (13, 7) and cosize(L) == 91               # (3*1 + 3*3 + 1, 3*1 + 3*1 + 1)


@settings(max_examples=75, deadline=None)
@given(multi_term_layouts(), st.data())
def test_slice_and_offset_split_the_values(L, data):
    shape = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    L = L if isinstance(L.shape, tuple) else Layout(shape, (L.stride,))
    k = data.draw(st.integers(0, len(shape) - 1))
    crd = tuple(_ if m == k else data.draw(st.integers(0, size(shape[m]) - 1)) for m in range(len(shape)))
    sub, off = slice_and_offset(crd, L)
    for j in range(size(sub)):
        full = tuple(j if c is _ else c for c in crd)
        assert [a + b for a, b in zip(vec(sub(j)), vec(off))] == vec(L(full))


def test_make_layout_keeps_multi_term_strides():
    A, B = Layout(4, AT((1, 1))), Layout(2, E(2))
    assert str(make_layout(A, B)) == "(4,2):((1,1),1@2)"
    assert make_layout((4, 4), (AT((1, 1)), AT((3, 1)))) == Layout((4, 4), (AT((1, 1)), AT((3, 1))))


def test_symbolic_entries_substitute():
    M = symbols("M")
    L = Layout((4, 2), (AT((1, M)), AT((2, M - 1))))
    assert L(1, 1) == AT((3, 2 * M - 1)) and parse(str(L)) == L
    assert str(subs(L, {"M": 2})) == "(4,2):((1,2),(2,1))"
    assert str(subs(L, {"M": 1})) == "(4,2):((1,1),2@0)"        # (2,0) is one term


# ---------------------------------------------------------------------------
# coalesce and composition


def test_coalesce_merges_when_the_next_stride_is_the_reach_of_the_mode():
    assert str(coalesce(Layout((2, 2), (AT((1, 1)), AT((2, 2)))))) == "4:(1,1)"
    assert str(coalesce(Layout((2, 2), (AT((1, 1)), AT((2, 3)))))) == "(2,2):((1,1),(2,3))"
    assert str(coalesce(Layout((2, 1, 3), (AT((1, -1)), E(3), AT((2, -2)))))) == "6:(1,-1)"


@settings(max_examples=100, deadline=None)
@given(multi_term_layouts())
def test_coalesce_keeps_the_values(L):
    C = coalesce(L)
    assert size(C) == size(L)
    assert all(vec(C(i)) == brute(L, i) for i in range(size(L)))


def test_composition_scales_the_multi_term_strides():
    # B(i,j) = 2i + 4j; A(2) = 2*(1,1) = (2,2), A(4) = (3,1)
    A = Layout((4, 4), (AT((1, 1)), AT((3, 1))))
    assert str(composition(A, Layout((2, 2), (2, 4)))) == "(2,2):((2,2),(3,1))"
    assert str(composition(Layout(4, AT((1, 1))), Layout(2, 2))) == "2:(2,2)"


@settings(max_examples=150, deadline=None)
@given(multi_term_layouts(), layouts(max_leaves=3, max_stride=12, max_size=64))
def test_composition_with_an_int_b_is_the_int_algebra_through_phi(A, B):
    # phi (tuple -> int, injective here) is linear, and composition only scales A's strides by ints and
    # compares them (coalesce): phi(A o B) == phi(A) o B, and one is refused exactly when the other is.
    try:
        expected = composition(phi(A), B)
    except LayoutError as e:
        with pytest.raises(type(e)):
            composition(A, B)
        return
    R = composition(A, B)
    assert phi(R) == expected
    assert all(vec(R(i)) == brute(A, sum(c * d for c, d in zip(flat(idx2crd(i, B.shape)), flat(B.stride))))
               for i in range(size(B)))


@settings(max_examples=75, deadline=None)
@given(multi_term_layouts(), st.data())
def test_logical_divide_keeps_the_values(A, data):
    T = data.draw(divisor_tilers(A))
    try:
        D = logical_divide(A, T)
    except DivisibilityError:
        with pytest.raises(DivisibilityError):
            logical_divide(phi(A), T)
        return
    assert phi(D) == logical_divide(phi(A), T)
    assert sorted(map(tuple, (vec(D(i)) for i in range(size(D))))) == \
        sorted(tuple(brute(A, i)) for i in range(size(A)))


def test_zipped_divide_of_the_example():
    A = Layout((4, 4), (AT((1, 1)), AT((3, 1))))
    assert str(zipped_divide(A, (2, 2))) == "((2,2),(2,2)):(((1,1),(3,1)),((2,2),(6,2)))"


# ---------------------------------------------------------------------------
# refusals: no independent codomain axes


@pytest.mark.parametrize("op", [complement, left_inverse, right_inverse])
def test_complement_and_inverses_refuse_a_multi_term_stride(op):
    L = Layout((4, 4), (E(0), AT((1, 1))))
    with pytest.raises(LayoutError, match=rf"^{op.__name__}: strides must be single basis terms.*\(1,1\)"):
        op(L)


def test_products_refuse_through_complement():
    with pytest.raises(LayoutError, match=r"(?s)logical_product: .*complement: .*multi-term stride \(1,1\)"):
        logical_product(Layout(4, AT((1, 1))), Layout(2))


def test_composition_refuses_a_multi_term_b():
    with pytest.raises(LayoutError, match=r"^composition: strides must be single basis terms.*\(1,1\)"):
        composition(make_identity_layout((8, 8)), Layout(4, AT((1, 1))))


def test_complement_of_a_one_term_tuple_is_the_basis_complement():
    assert complement(Layout(4, AT((0, 2))), (1, 8)) == complement(Layout(4, ScaledBasis(2, (1,))), (1, 8))


# ---------------------------------------------------------------------------
# coordinate (identity) tensors


def test_a_coordinate_tensor_with_a_multi_term_stride_walks_a_diagonal():
    diag = Tensor(IdentityEngine(), Layout(4, AT((1, 1))))
    assert diag.values() == [(0, 0), (1, 1), (2, 2), (3, 3)]
    T = make_tensor(np.arange(16), Layout((4, 4)))
    assert [int(T[c]) for c in diag.values()] == [0, 5, 10, 15]


def test_coordinate_tensor_offset_slice_and_tile():
    t = Tensor(IdentityEngine(), Layout((4, 2), (AT((1, 1)), 4 * E(1))), offset=(1, 0))
    assert t(1, 1) == (2, 5)                                   # (1,0) + (1,1) + (0,4)
    s = t(_, 1)
    assert s.offset == AT((1, 4)) and s.values() == [(1, 4), (2, 5), (3, 6), (4, 7)]
    assert logical_divide(t, (2, _)).values() == t.values()
