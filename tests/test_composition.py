"""composition: exact CuTe values (reference §1.6/§1.7) and brute-force postconditions.

Postconditions (CuTe ``test/unit/cute/core/composition.cpp``, stricter than pycute):
``compatible(shape(B), shape(R))`` and ``R(c) == A(B(c))`` for every coordinate ``c``
of B (1-D, top-level and fully hierarchical). ``A`` is evaluated as CuTe does for
an int argument: colexicographic split, the last mode takes the remainder (so A
is extended linearly past its domain when B reaches beyond ``size(A)``).

The key fuzz property: composition either raises a :class:`cute_py.LayoutError`
or returns a layout satisfying the postconditions; it never returns a wrong layout.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import (
    DivisibilityError, Layout, LayoutError, _, composition, logical_product, make_layout, parse,
)
from oracle import compatible, flat, idx2crd, modes_of, prod, ref_eval, top_crd
from strategies import compact_layouts, injective_layouts, layouts, shapes

# ---------------------------------------------------------------------------
# check


def check_composition(A, B, R):
    """Brute-force ``R == A o B``. ``B`` may be a Layout, an int, ``_`` or a by-mode tiler tuple."""
    assert isinstance(R, Layout), f"composition returned {type(R).__name__}: {R!r}"
    if B is _:
        assert R == A, f"A o _ must be A: {A} -> {R}"
        return
    if isinstance(B, int):
        B = Layout(B, 1)
    if isinstance(B, tuple):
        am, rm = modes_of(A), modes_of(R)
        # C++ drops the modes of A the tiler does not reach
        assert len(rm) == len(B), f"by-mode composition must have rank {len(B)}: {A} o {B} -> {R}"
        assert len(B) <= len(am)
        for a, b, r in zip(am, B, rm):
            check_composition(a, b, r)
        return
    assert compatible(B.shape, R.shape), f"shape(B)={B.shape} not compatible with shape(R)={R.shape}"
    n = prod(B.shape)
    for i in range(n):
        assert ref_eval(R, i) == ref_eval(A, ref_eval(B, i)), f"R({i}) != A(B({i})): {A} o {B} -> {R}"
        assert R(i) == A(B(i)), f"R({i}) != A(B({i})) (Layout.__call__): {A} o {B} -> {R}"
        hc = idx2crd(i, B.shape)
        assert ref_eval(R, hc) == ref_eval(A, ref_eval(B, hc)), f"R{hc} != A(B{hc}): {A} o {B} -> {R}"
        assert R(hc) == A(B(hc)), f"R{hc} != A(B{hc}): {A} o {B} -> {R}"
        tc = top_crd(i, B.shape)
        assert R(tc) == ref_eval(A, ref_eval(B, tc)), f"R{tc} != A(B{tc}): {A} o {B} -> {R}"


def compose_or_reject(A, B):
    """Either a LayoutError or a correct result; anything else fails the test."""
    try:
        R = composition(A, B)
    except LayoutError:
        return None
    check_composition(A, B, R)
    return R


# ---------------------------------------------------------------------------
# exact values (reference §1.6: C++ CuTe == pycute, verified)

L = parse

COMPOSITION_CASES = [
    ("4:2", "2:2", "2:4"),
    ("12:2", "(4,3):(3,1)", "(4,3):(6,2)"),
    ("(4,3):(3,1)", "6:2", "(2,3):(6,1)"),
    ("(4,3):(3,1)", "(6,2):(2,1)", "((2,3),2):((6,1),3)"),
    ("(8,8):(8,1)", "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))", "((2,2,2),(2,2,2)):((8,2,32),(1,16,4))"),
    ("((2,2,2),(2,2,2)):((1,16,4),(8,2,32))", "8:4", "(4,2):(4,2)"),
    ("(4,2):(1,16)", "(4,2):(2,1)", "((2,2),2):((2,16),1)"),
    ("(2,2):(2,1)", "(2,2):(2,1)", "(2,2):(1,2)"),
    ("(4,8,2):(2,8,1)", "(2,2,2):(1,8,2)", "(2,2,2):(2,16,4)"),
    ("(4,8,2):(2,8,1)", "(4,2,2):(2,8,1)", "(4,2,2):(4,16,2)"),
    ("(4,6,8):(1,4,7)", "6:1", "6:1"),
    ("(4,6,8,10):(2,3,5,7)", "6:12", "(2,3):(9,5)"),
    ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
    ("20:2", "(4,5):(5,1)", "(4,5):(10,2)"),
    # C++ docs (02_layout_algebra.md)
    ("20:2", "5:4", "5:8"),
    ("(10,2):(16,4)", "4:5", "(2,2):(80,4)"),
    # §1.7 item 7: where B stays inside one mode, C++ is correct
    ("(6,4):(1,10)", "2:4", "2:4"),
]


@pytest.mark.parametrize("a,b,expect", COMPOSITION_CASES)
def test_composition_exact(a, b, expect):
    A, B = L(a), L(b)
    R = composition(A, B)
    assert str(R) == expect
    check_composition(A, B, R)


def test_composition_old_doc_row_is_functionally_correct():
    # The doc row (10,2):(16,4) o 5:1 = (5,1):(16,4) is from old docs; modern C++ prints 5:16.
    A, B = L("(10,2):(16,4)"), L("5:1")
    R = composition(A, B)
    check_composition(A, B, R)
    assert [R(i) for i in range(5)] == [0, 16, 32, 48, 64]
    assert [R(i) for i in range(5)] == [L("(5,1):(16,4)")(i) for i in range(5)]


BY_MODE_CASES = [
    ("(12,8):(1,12)", (L("3:4"), L("4:2")), "(3,4):(4,24)"),
    ("(12,8):(1,12)", (4, 2), "(4,2):(1,12)"),
    ("(12,(4,8)):(59,(13,1))", (L("3:4"), L("8:2")), "(3,(2,4)):(236,(26,1))"),
    ("(12,(4,8)):(59,(13,1))", (3, 8), "(3,(4,2)):(59,(13,1))"),
    # §1.7 item 1: C++ drops the modes of A the tiler does not reach (pycute keeps them)
    ("(12,8,5):(1,12,96)", (L("3:4"), L("4:2")), "(3,4):(4,24)"),
    ("(12,8,5):(1,12,96)", (L("3:4"),), "(3):(4)"),
    # _ in a tiler is the identity on that mode
    ("(12,8):(1,12)", (_, L("4:2")), "(12,4):(1,24)"),
    ("(12,8):(1,12)", (L("3:4"), _), "(3,8):(4,12)"),
]


@pytest.mark.parametrize("a,tiler,expect", BY_MODE_CASES)
def test_composition_by_mode_exact(a, tiler, expect):
    A = L(a)
    R = composition(A, tiler)
    assert str(R) == expect
    check_composition(A, tiler, R)


def test_composition_by_mode_drops_unreached_modes():
    A = L("(12,8,5):(1,12,96)")
    R = composition(A, (L("3:4"), L("4:2")))
    assert R == Layout((3, 4), (4, 24))
    assert cute_py.rank(R) == 2


def test_composition_int_tiler():
    A = L("(4,3):(3,1)")
    for n in (1, 2, 4):
        R = composition(A, n)
        assert R == composition(A, Layout(n, 1))
        check_composition(A, n, R)
    assert str(composition(L("12:2"), 6)) == "6:2"
    assert str(composition(L("(4,6):(6,1)"), 8)) == "(4,2):(6,1)"


def test_composition_underscore_is_identity():
    for s in ["(4,3):(3,1)", "(12,(4,8)):(59,(13,1))", "1:0", "7:3"]:
        A = L(s)
        assert composition(A, _) == A


def test_composition_more_tiler_modes_than_a_raises():
    with pytest.raises(LayoutError):
        composition(L("(4,3):(3,1)"), (2, 3, 1))


def test_composition_rejects_bad_types():
    with pytest.raises(TypeError):
        composition(L("4:1"), "4:1")
    with pytest.raises(TypeError, match="composition: expected a Layout .* for A, got str"):
        composition("(4,1)", L("4:1"))
    with pytest.raises(LayoutError, match="composition: shape extents must be non-negative"):
        composition((4, -1), L("4:1"))                    # a shape, but a wrong one: the algebra's error


def test_a_shape_as_the_first_operand_is_its_compact_layout():
    """As C++ and PyCuTe read it: composition, the divides and the products take a shape for A."""
    from cute_py import blocked_product, logical_divide, logical_product, tile_to_shape, zipped_divide
    for shape in (4, (4, 6), (2, (3, 4))):
        A = Layout(shape)
        assert composition(shape, L("2:2")) == composition(A, L("2:2"))
        assert logical_divide(shape, 2) == logical_divide(A, 2) and zipped_divide(shape, 2) == zipped_divide(A, 2)
        assert logical_product(shape, L("3:1")) == logical_product(A, L("3:1"))
    assert blocked_product((2, 2), L("(3,4):(1,3)")) == blocked_product(Layout((2, 2)), L("(3,4):(1,3)"))
    assert tile_to_shape((2, 2), (4, 6)) == tile_to_shape(Layout((2, 2)), (4, 6))
    assert str(composition(3, 2)) == "2:1"


def test_composition_cxx_stride_divisibility_bug_case_raises():
    # §1.7 item 7: C++ compiles this and returns (2,2):(4,10), which is wrong: R(2)=10, A(B(2))=12.
    A, B = L("(6,4):(1,10)"), L("4:4")
    with pytest.raises(DivisibilityError) as ei:
        composition(A, B)
    assert "stride divisibility condition" in str(ei.value)
    assert isinstance(ei.value, LayoutError) and isinstance(ei.value, ValueError)
    # the C++ result really is wrong
    wrong = L("(2,2):(4,10)")
    assert wrong(2) == 10 and A(B(2)) == 12


def test_composition_shape_divisibility_raises():
    # §1.7 item 6: pycute returns (4,2):(2,1) (size 8, should be 12); C++ static_asserts
    with pytest.raises(LayoutError):
        logical_product(L("4:2"), L("3:1"))
    with pytest.raises(LayoutError) as ei:
        composition(L("(2,2):(1,8)"), L("3:1"))
    assert "shape divisibility condition" in str(ei.value)


def test_composition_size1_a_is_extended_linearly():
    # §1.7 item 4: C++ keeps 1:d via coalesce_x, so A is linear beyond its domain
    A, B = L("1:1"), L("(2,2,4):(0,1,2)")
    R = composition(A, B)
    assert str(R) == "(2,2,4):(0,1,2)"
    check_composition(A, B, R)
    R = composition(L("1:1"), L("6:1"))
    assert str(R) == "6:1"


MULTIMODE_CASES = [
    # each mode of B alone composes correctly, so the per-mode checks pass; but B's
    # modes together cross a mode boundary of A, where A is not linear. C++ returns
    # the same wrong layouts (its composition is by-mode on B); cute_py promises to
    # raise instead of returning a wrong result.
    ("(4,4):(1,10)", "(2,2):(1,3)"),   # injective A and B, cosize(B)=5 <= 16: C++/cute_py give (2,2):(1,3), R(3)=4 but A(B(3))=A(4)=10
    ("(4,4):(1,10)", "(2,2):(3,1)"),
    ("(2,2):(1,4)", "(2,2):(1,1)"),    # R=(2,2):(1,1): R(3)=2 but A(B(3))=A(2)=4
    ("(2,2):(0,1)", "(2,2):(1,1)"),    # R=(2,2):(0,0): R(3)=0 but A(B(3))=A(2)=1
    ("(8,8):(1,2)", "(8,8):(1,2)"),
]


@pytest.mark.parametrize("a,b", MULTIMODE_CASES)
def test_composition_multimode_b_crossing_a_mode_boundary(a, b):
    A, B = L(a), L(b)
    # each mode of B on its own is fine
    for s, d in zip(B.shape, B.stride):
        compose_or_reject(A, Layout(s, d))
    # the whole B must be rejected or composed correctly
    compose_or_reject(A, B)


@pytest.mark.parametrize("a,b,expect", [
    ("(4,4):(1,10)", "(2,2):(1,4)", "(2,2):(1,10)"),   # B's modes line up with A's modes
    ("(4,4):(1,10)", "(2,2):(2,4)", "(2,2):(2,10)"),
    ("(4,4):(1,10)", "(2,2):(1,2)", "4:1"),
])
def test_composition_multimode_b_within_a_modes(a, b, expect):
    A, B = L(a), L(b)
    R = composition(A, B)
    check_composition(A, B, R)
    assert str(cute_py.coalesce(R)) == expect


def test_composition_stride0_b():
    A = L("(4,3):(3,1)")
    R = composition(A, L("(2,3):(0,1)"))
    check_composition(A, L("(2,3):(0,1)"), R)
    assert cute_py.stride(R, 0) == 0


def test_check_composition_catches_wrong_results():
    # the oracle itself must reject the C++ bug result and a wrong-shape result
    A, B = L("(6,4):(1,10)"), L("4:4")
    with pytest.raises(AssertionError):
        check_composition(A, B, L("(2,2):(4,10)"))
    with pytest.raises(AssertionError):
        check_composition(L("4:2"), L("3:1"), L("(4,2):(2,1)"))


# ---------------------------------------------------------------------------
# strategies


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def layouts_within(draw, n, max_leaves=3):
    """Layouts with non-negative strides and cosize <= n (B stays inside A's domain)."""
    shape = draw(shapes(max_leaves=max_leaves, max_size=max(n, 1)))
    leaves = flat(shape)
    order = draw(st.permutations(range(len(leaves))))
    budget = n - 1
    strides = [0] * len(leaves)
    divs = _divisors(n)
    for k in order:
        s = leaves[k]
        if s == 1:
            strides[k] = draw(st.integers(0, 8))
            continue
        hi = budget // (s - 1)
        if hi == 0:
            strides[k] = 0
            continue
        opts = [d for d in divs if d <= hi]
        if opts and draw(st.booleans()):
            d = draw(st.sampled_from(opts + [0]))
        else:
            d = draw(st.integers(0, hi))
        strides[k] = d
        budget -= (s - 1) * d
    it = iter(strides)

    def build(x):
        if isinstance(x, tuple):
            return tuple(build(y) for y in x)
        return next(it)

    return Layout(shape, build(shape))


@st.composite
def a_and_b_within(draw):
    A = draw(st.one_of(layouts(), compact_layouts(), injective_layouts()))
    B = draw(layouts_within(prod(A.shape)))
    return A, B


# ---------------------------------------------------------------------------
# properties


@settings(max_examples=150, deadline=None)
@given(a_and_b_within())
def test_composition_fuzz_b_within_a(ab):
    """The key property: a LayoutError or a correct result, never a wrong layout."""
    A, B = ab
    compose_or_reject(A, B)


@settings(max_examples=150, deadline=None)
@given(layouts(), layouts(max_leaves=3, max_stride=16, max_size=64))
def test_composition_fuzz_arbitrary(A, B):
    compose_or_reject(A, B)


@settings(max_examples=100, deadline=None)
@given(layouts(allow_negative=True, max_stride=16), layouts(max_leaves=3, max_stride=16, max_size=64))
def test_composition_fuzz_negative_strides_in_a(A, B):
    compose_or_reject(A, B)


@settings(max_examples=100, deadline=None)
@given(compact_layouts(), st.data())
def test_composition_compact_a_with_compact_b_of_same_size(A, data):
    """B a permutation of A's domain built from a factorisation of size(A) into divisors."""
    n = prod(A.shape)
    # factor n randomly into a shape and take a permuted compact layout of it
    factors, rest = [], n
    while rest > 1 and len(factors) < 4:
        d = data.draw(st.sampled_from([x for x in _divisors(rest) if x > 1]))
        factors.append(d)
        rest //= d
    if rest > 1:
        factors.append(rest)
    if not factors:
        factors = [1]
    perm = data.draw(st.permutations(range(len(factors))))
    strides, acc = [0] * len(factors), 1
    for k in perm:
        strides[k] = acc
        acc *= factors[k]
    B = Layout(tuple(factors), tuple(strides))
    R = compose_or_reject(A, B)
    if R is not None:
        # a composition of two bijections of [0, n) is a bijection of [0, n)
        assert sorted(R(i) for i in range(n)) == list(range(n))


@settings(max_examples=100, deadline=None)
@given(st.one_of(layouts(), compact_layouts(), injective_layouts(), layouts(allow_negative=True)))
def test_composition_with_own_col_major_is_a(A):
    """A o make_layout(shape(A)) is A as a function (and never rejected)."""
    B = make_layout(A.shape)
    R = composition(A, B)
    check_composition(A, B, R)
    for i in range(prod(A.shape)):
        assert R(i) == A(i)
        assert R(idx2crd(i, A.shape)) == A(idx2crd(i, A.shape))


@st.composite
def _by_mode(draw):
    A = draw(layouts(max_leaves=4))
    am = modes_of(A)
    k = draw(st.integers(1, len(am)))
    tiler = []
    for m in am[:k]:
        kind = draw(st.integers(0, 2))
        n = prod(m.shape)
        if kind == 0:
            tiler.append(_)
        elif kind == 1:
            tiler.append(draw(st.sampled_from(_divisors(n))))
        else:
            tiler.append(draw(layouts_within(n, max_leaves=2)))
    return A, tuple(tiler)


@settings(max_examples=100, deadline=None)
@given(_by_mode())
def test_composition_by_mode_fuzz(at):
    A, tiler = at
    compose_or_reject(A, tiler)


@st.composite
def _triple(draw):
    A = draw(st.one_of(layouts(), compact_layouts(), injective_layouts()))
    B = draw(layouts_within(prod(A.shape)))
    C = draw(layouts_within(prod(B.shape), max_leaves=2))
    return A, B, C


@settings(max_examples=100, deadline=None)
@given(_triple())
def test_composition_associative_where_defined(abc):
    A, B, C = abc
    AB = compose_or_reject(A, B)
    BC = compose_or_reject(B, C)
    assume(AB is not None and BC is not None)
    left = compose_or_reject(AB, C)
    right = compose_or_reject(A, BC)
    assume(left is not None and right is not None)
    for i in range(prod(C.shape)):
        expect = A(B(C(i)))
        assert left(i) == expect, f"((A o B) o C)({i}): {A}, {B}, {C}"
        assert right(i) == expect, f"(A o (B o C))({i}): {A}, {B}, {C}"
