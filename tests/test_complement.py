"""complement: exact CuTe values (reference §1.6) and the C++ postconditions (reference §5).

Postconditions of ``R = complement(L, cotarget)`` (``test/unit/cute/core/complement.cpp``):
  (1) ``cosize(make_layout(L, R)) >= size(cotarget)``;
  (2) ``cosize(R) <= round_up(size(cotarget), cosize(L))``;
  (3) R is strictly increasing: ``R(i-1) < R(i)``;
  (4) ``R(i) != L(j)`` for ``i >= 1`` and every ``j``;
  and ``size(R) >= size(cotarget) / size(filter(L))``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import (
    InjectivityError, Layout, LayoutError, coalesce, complement, cosize, filter as cute_filter,
    make_layout, parse,
)
from oracle import flat, image, prod, ref_cosize, ref_eval
from strategies import compact_layouts, injective_layouts, layouts

# ---------------------------------------------------------------------------
# independent reference helpers


def _round_up(a, b):
    return -(-a // b) * b


# ---------------------------------------------------------------------------
# check


def _tileable(L):
    """The non-zero strides of L, sorted, each a multiple of the reach below (CuTe's exact case)."""
    f = cute_filter(L)
    fs, fd = flat(f.shape), flat(f.stride)
    reach = 1
    for k in sorted(range(len(fs)), key=lambda k: fd[k]):
        if fd[k] == 0:
            continue
        if fd[k] % reach != 0:
            return False
        reach = fd[k] * fs[k]
    return True


def _reach(L):
    """``max(s * d)`` over the modes of filter(L): the new_stride of CuTe's complement (0 for 1:0)."""
    f = cute_filter(L)
    return max(s * d for s, d in zip(flat(f.shape), flat(f.stride)))


def check_complement(L, cotarget, R, strict_cover=True):
    """Brute-force the CuTe postconditions of ``R = complement(L, cotarget)``.

    ``cotarget`` None means the default (``cosize(L)``).

    (3), (4) and the ordering observations hold for every input CuTe accepts. The
    covering/size conditions (1), (2) and the size lower bounds are guarded, because
    C++'s own algorithm (which cute_py follows) does not meet them everywhere:

    * ``strict_cover=False`` for shape cotargets whose C++ ceil_div fold is not exact
      (``ceil_div((3,5), 4)`` folds to 3, not ceil(15/4) = 4; ``ceil_div((3,2), 2)`` to 4);
    * (1) and the size bounds need the strides of L to tile (each sorted stride a
      multiple of the reach below it): C++ truncates ``stride / reach``, so
      ``complement((2,2):(1,13), 26)`` is ``6:2`` and covers only 25;
    * (2) needs a cotarget that is a multiple of the reach, the default cotarget, or
      an L without gaps below its reach: ``complement(2:2, 9)`` is ``(2,3):(1,4)``,
      cosize 10 > round_up(9, 3).
    """
    assert isinstance(R, Layout), R
    size_ct = ref_cosize(L) if cotarget is None else prod(cotarget)
    n_r = prod(R.shape)
    for d in flat(R.stride):
        assert d >= 0, f"negative stride in complement {R}"
    tileable = _tileable(L)
    reach = _reach(L)
    LR = make_layout(L, R)
    # (1) L ++ R covers the cotarget
    if strict_cover and tileable:
        assert ref_cosize(LR) >= size_ct, f"(1) cosize(L++R) < size(cotarget): {L}, {cotarget} -> {R}"
    assert cosize(LR) == ref_cosize(LR)
    # (2) R does not overshoot
    compact_below_reach = reach == 0 or image(cute_filter(L)) == set(range(reach))
    if strict_cover and tileable and (cotarget is None or reach == 0 or size_ct % reach == 0
                                      or compact_below_reach):
        assert ref_cosize(R) <= _round_up(size_ct, ref_cosize(L)), (
            f"(2) cosize(R) > round_up(size(cotarget), cosize(L)): {L}, {cotarget} -> {R}")
    # (3) strictly increasing
    vals = [ref_eval(R, i) for i in range(n_r)]
    assert vals[0] == 0
    for i in range(1, n_r):
        assert vals[i - 1] < vals[i], f"(3) R not strictly increasing at {i}: {L}, {cotarget} -> {R}"
    # (4) disjoint from the image of L (except R(0) == 0)
    img = image(L)
    for i in range(1, n_r):
        assert vals[i] not in img, f"(4) R({i})={vals[i]} is in the image of L: {L}, {cotarget} -> {R}"
    # other observations of the C++ test
    assert n_r <= ref_cosize(R)
    assert ref_cosize(LR) <= ref_cosize(R) + ref_cosize(L)
    assert prod(complement(LR).shape) == 1, f"complement(L ++ R) is not trivial: {L}, {cotarget} -> {R}"
    if strict_cover and tileable:
        n_f = prod(cute_filter(L).shape)
        assert n_r >= size_ct // n_f, f"size(R) too small: {L}, {cotarget} -> {R}"
        assert ref_cosize(R) >= size_ct // n_f, f"cosize(R) too small: {L}, {cotarget} -> {R}"
    # R is returned coalesced
    assert coalesce(R) == R, f"complement not coalesced: {R}"


# ---------------------------------------------------------------------------
# exact values (reference §1.6, C++ CuTe == pycute)

COMPLEMENT_CASES = [
    ("4:0", 4, "4:1"),
    ("(2,4):(1,4)", None, "2:2"),
    ("(2,4,8):(8,1,64)", None, "(2,4):(4,16)"),
    ("((2,2),(2,2)):((1,4),(8,32))", None, "(2,2):(2,16)"),
    ("(4,10):(1,10)", None, "2:4"),
    ("4:1", 24, "6:4"),
    ("4:2", 24, "(2,3):(1,8)"),
    ("(2,4):(1,6)", 24, "3:2"),
    ("(2,4):(1,6)", 50, "(3,3):(2,24)"),
    ("4:3", 7, "3:1"),
    ("(2,2):(1,4)", 32, "(2,4):(2,8)"),
    ("3:2", 20, "(2,4):(1,6)"),
    ("4:2", None, "2:1"),
    ("4:2", 7, "2:1"),
    # all 1:0
    ("(2,4):(1,2)", None, "1:0"),
    ("(2,3):(1,2)", None, "1:0"),
    ("(2,(3,4)):(3,(1,6))", None, "1:0"),
    ("(4,6):(1,6)", None, "1:0"),
    # from the C++ docs
    ("6:4", 24, "4:1"),
    ("(4,6):(1,4)", 24, "1:0"),
    ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
]


@pytest.mark.parametrize("src,cotarget,expect", COMPLEMENT_CASES)
def test_complement_exact(src, cotarget, expect):
    L = parse(src)
    R = complement(L) if cotarget is None else complement(L, cotarget)
    assert str(R) == expect
    check_complement(L, cotarget, R)


SHAPE_COTARGET_CASES = [
    # static shape cotargets: rest = coalesce(ceil_div(cotarget, new_stride)) is one mode
    ("4:2", (4, 6), "(2,3):(1,8)"),
    ("4:1", (4, 6), "6:4"),
    ("(2,2):(1,4)", (4, 8), "(2,4):(2,8)"),
    ("(2,2):(1,6)", (4, 6), "(3,2):(2,12)"),
    ("2:1", (2, 2), "2:2"),
    ("2:1", (2, 8), "8:2"),
    ("(2,4):(1,6)", ((2, 3), 4), "3:2"),
    ("(2,4):(1,6)", ((2, 3), 8), "(3,2):(2,24)"),
]


@pytest.mark.parametrize("src,cotarget,expect", SHAPE_COTARGET_CASES)
def test_complement_shape_cotarget_exact(src, cotarget, expect):
    L = parse(src)
    R = complement(L, cotarget)
    assert str(R) == expect
    check_complement(L, cotarget, R)
    assert R == complement(L, prod(cotarget))


def test_complement_shape_cotarget_uses_ceil_div_fold():
    # C++: rest_shape = coalesce(ceil_div((3,5), 4)) = (ceil(3/4), ceil(5/ceil(4/3))) -> 1*3 = 3,
    # whereas the int cotarget 15 gives ceil(15/4) = 4.
    L = parse("4:1")
    assert str(complement(L, (3, 5))) == "3:4"
    assert str(complement(L, 15)) == "4:4"
    check_complement(L, (3, 5), complement(L, (3, 5)), strict_cover=False)
    # over-covering: ceil_div((3,2), 2) = (2, 2) -> 4, where ceil(6/2) = 3
    assert str(complement(parse("2:1"), (3, 2))) == "4:2"
    assert str(complement(parse("2:1"), 6)) == "3:2"
    # nested cotarget ((2,5),5) with new_stride 24: (1,1,ceil(5/ceil(24/10))) -> rest 2 (int 50 gives 3)
    L = parse("(2,4):(1,6)")
    assert str(complement(L, ((2, 5), 5))) == "(3,2):(2,24)"
    assert str(complement(L, 50)) == "(3,3):(2,24)"
    check_complement(L, ((2, 5), 5), complement(L, ((2, 5), 5)), strict_cover=False)


def test_complement_cotarget_layout_uses_its_shape():
    L = parse("4:2")
    assert complement(L, Layout((4, 6))) == complement(L, (4, 6))


def test_complement_default_cotarget_is_cosize():
    for s in ["(2,4):(1,4)", "4:2", "(2,4,8):(8,1,64)", "(4,3):(0,4)"]:
        L = parse(s)
        assert complement(L) == complement(L, cosize(L))


@pytest.mark.parametrize("src", ["(2,2):(1,1)", "(4,2):(1,2)", "(3,2):(1,2)", "(2,2,2):(1,4,4)"])
def test_complement_non_injective_raises(src):
    with pytest.raises(InjectivityError) as ei:
        complement(parse(src), 64)
    assert isinstance(ei.value, LayoutError)
    assert "injective" in str(ei.value)


@pytest.mark.parametrize("src", ["4:-1", "(2,2):(1,-4)", "(4,(2,2)):(2,(-1,8))"])
def test_complement_negative_strides_raise(src):
    with pytest.raises(LayoutError):
        complement(parse(src), 64)


def test_complement_bad_cotarget_type():
    with pytest.raises(TypeError):
        complement(parse("4:1"), "24")


def test_check_complement_catches_wrong_results():
    L = parse("4:2")
    with pytest.raises(AssertionError):
        check_complement(L, 24, parse("(2,3):(1,4)"))   # overlaps L
    with pytest.raises(AssertionError):
        check_complement(L, 24, parse("2:1"))           # does not cover 24
    with pytest.raises(AssertionError):
        check_complement(L, 24, parse("(3,2):(8,1)"))   # not increasing


# ---------------------------------------------------------------------------
# properties

COTARGETS = st.integers(1, 300)


@settings(max_examples=150, deadline=None)
@given(st.one_of(injective_layouts(), compact_layouts()), st.one_of(st.none(), COTARGETS))
def test_complement_property_injective(L, cotarget):
    R = complement(L) if cotarget is None else complement(L, cotarget)
    check_complement(L, cotarget, R)


@settings(max_examples=150, deadline=None)
@given(layouts(max_stride=32), st.one_of(st.none(), COTARGETS))
def test_complement_property_arbitrary(L, cotarget):
    """Arbitrary non-negative layouts: an InjectivityError, or a result meeting the postconditions."""
    try:
        R = complement(L) if cotarget is None else complement(L, cotarget)
    except InjectivityError:
        # only a layout that is non-injective after removing its stride-0 modes may be rejected
        # as non-injective in the CuTe sense (sorted strides overlap the reach below them)
        f = cute_filter(L)
        fs, fd = flat(f.shape), flat(f.stride)
        order = sorted(range(len(fs)), key=lambda k: fd[k])
        reach, overlap = 1, False
        for k in order:
            if fd[k] < reach:
                overlap = True
            reach = fd[k] * fs[k]
        assert overlap, f"InjectivityError for {L} whose sorted strides do not overlap"
        return
    check_complement(L, cotarget, R)


def _ceil_div_fold(shape, k):
    """C++ ceil_div(tuple, int): fold with ceil over the flattened modes."""
    out = []
    for s in flat(shape):
        out.append(-(-s // k))
        k = -(-k // s)
    return out


@settings(max_examples=100, deadline=None)
@given(st.one_of(injective_layouts(max_leaves=3), compact_layouts(max_leaves=3)),
       st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 8]), min_size=1, max_size=3).map(tuple))
def test_complement_property_shape_cotarget(L, cotarget):
    R = complement(L, cotarget)
    f = cute_filter(L)
    reach = max(s * d for s, d in zip(flat(f.shape), flat(f.stride)))
    exact = reach == 0 or (
        prod(tuple(_ceil_div_fold(cotarget, reach))) == -(-prod(cotarget) // reach))
    check_complement(L, cotarget, R, strict_cover=exact)
    if exact:
        # static shape cotargets coalesce to one mode: the same as the int cotarget
        assert R == complement(L, prod(cotarget))


@settings(max_examples=75, deadline=None)
@given(injective_layouts(max_leaves=3), COTARGETS)
def test_complement_of_concatenation_is_trivial(L, cotarget):
    """L ++ complement(L, n) leaves no gap below its cosize: its own complement is 1:0."""
    R = complement(L, cotarget)
    LR = make_layout(L, R)
    assert prod(complement(LR).shape) == 1
    assert str(complement(LR)) == "1:0"


@pytest.mark.parametrize("src,cotarget,expect", [
    # C++'s algorithm (stride / reach truncated; rest = ceil_div(cotarget, reach)); cute_py follows it.
    # These are the inputs where the §5 "postconditions" (1)/(2)/size bound do not hold in C++ either.
    ("(2,2):(1,13)", 26, "6:2"),        # (1): cosize(L++R) = 25 < 26
    ("2:2", 9, "(2,3):(1,4)"),           # (2): cosize(R) = 10 > round_up(9, 3) = 9
    ("(2,2):(5,18)", None, "5:1"),       # size(R) = 5 < 24 // 4
])
def test_complement_cxx_values_outside_the_guarded_postconditions(src, cotarget, expect):
    L = parse(src)
    R = complement(L) if cotarget is None else complement(L, cotarget)
    assert str(R) == expect
    check_complement(L, cotarget, R)   # the unconditional postconditions (3), (4) still hold
