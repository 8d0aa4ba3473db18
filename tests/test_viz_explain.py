"""explain(op, *args): the derivation ends in the library's result, and every named
intermediate equals what the library computes for that step on its own."""

import pytest
from hypothesis import assume, given, settings, strategies as st
from strategies import compact_layouts, divisor_tilers, injective_layouts, layouts

import cute_py as cp
from cute_py import Layout, LayoutError, parse
from cute_py.viz.explain import OPS, Explanation, explain


def steps(e, name):
    return [v for n, v in e.steps if n == name]


def check_common(e, result):
    assert isinstance(e, Explanation) and isinstance(e, str)
    assert e.result == result
    assert str(result) in e.splitlines()[-1]
    assert e.steps[-1] == ("result", result)
    html = e._repr_html_()
    assert html.startswith("<pre") and "&lt;" not in str(e) and "(" in html


# ---------------------------------------------------------------------------
# composition


def test_composition_example_text():
    e = explain("composition", "(4,3):(3,1)", "6:2")
    check_common(e, Layout((2, 3), (6, 1)))
    text = str(e)
    assert "coalesce A: (4,3):(3,1)" in text
    assert "shape division ceil(4 / 2) = 2" in text and "stride division ceil(2 / 4) = 1" in text
    assert "=> 6:2 becomes (2,3):(6,1)" in text
    assert steps(e, "B mode 0") == [Layout((2, 3), (6, 1))]


def test_composition_skips_modes_by_stride_division():
    e = explain("composition", parse("(4,6,8):(1,8,64)"), parse("(3,4):(4,24)"))
    assert e.result == cp.composition(parse("(4,6,8):(1,8,64)"), parse("(3,4):(4,24)"))
    assert "skips it" in e
    assert steps(e, "B mode 0") == [cp.composition(parse("(4,6,8):(1,8,64)"), Layout(3, 4))]


@settings(max_examples=75, deadline=None)
@given(compact_layouts(max_leaves=3), st.data())
def test_composition_steps_match_library(a, data):
    n = cp.size(a)
    b = data.draw(divisor_tilers(Layout(n)))
    try:
        expected = cp.composition(a, b)
    except LayoutError as err:
        with pytest.raises(type(err)) as info:
            explain("composition", a, b)
        assert str(info.value) == str(err)
        return
    e = explain("composition", a, b)
    check_common(e, expected)
    leaves = list(zip(cp.flatten(b).shape if isinstance(cp.flatten(b).shape, tuple) else (b.shape,),
                      cp.flatten(b).stride if isinstance(cp.flatten(b).stride, tuple) else (b.stride,)))
    got = [v for name, v in e.steps if name.startswith("B mode")]
    assert got == [cp.composition(a, Layout(s, d)) for s, d in leaves]
    assert steps(e, "coalesce(A)")[0](0) == 0
    for i in range(cp.size(expected)):  # each B-mode result, assembled, is the composition
        assert expected(i) == a(b(i))


def test_composition_with_tilers_and_composed():
    e = explain("composition", "(12,8,5):(1,12,96)", "<3:4,4:2>")
    check_common(e, cp.composition(Layout((12, 8, 5), (1, 12, 96)), (Layout(3, 4), Layout(4, 2))))
    assert "mode by mode" in e
    sw = parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    e = explain("composition", sw, "(8,8):(1,8)")
    check_common(e, cp.composition(sw, parse("(8,8):(1,8)")))
    assert steps(e, "composition(inner, B)") == [cp.composition(sw.inner, parse("(8,8):(1,8)"))]
    e = explain(cp.composition, "24:1", 6)  # the function itself, and an int tiler
    check_common(e, Layout(6, 1))


# ---------------------------------------------------------------------------
# complement


def test_complement_example_text():
    e = explain("complement", "4:2", 24)
    check_common(e, Layout((2, 3), (1, 8)))
    assert steps(e, "gap below 4:2") == [Layout(2, 1)]
    assert steps(e, "rest mode") == [Layout(3, 8)]
    assert "filter" in e and "sorted by stride: 4:2" in e and "coalesced" in e


@settings(max_examples=75, deadline=None)
@given(injective_layouts(max_leaves=3), st.integers(1, 600))
def test_complement_steps_match_library(a, cotarget):
    expected = cp.complement(a, cotarget)
    e = explain("complement", a, cotarget)
    check_common(e, expected)
    gaps = [(name, v) for name, v in e.steps if name.startswith("gap below")]
    kept = sorted((d, s) for s, d in zip(*(x if isinstance(x, tuple) else (x,) for x in
                                              (cp.flatten(a).shape, cp.flatten(a).stride))) if s != 1 and d != 0)
    assert len(gaps) == len(kept)
    for (name, gap), (d, s) in zip(gaps, kept):
        assert gap.shape * gap.stride == d  # each gap mode fills up exactly to the next mode's stride
    rest = steps(e, "rest mode")[0]
    assert rest.shape * max(1, rest.stride) >= cotarget or rest.shape == 1
    # rebuilding the modes and coalescing gives the library's complement
    raw = Layout(tuple(g.shape for _n, g in gaps) + (rest.shape,),
                 tuple(g.stride for _n, g in gaps) + (rest.stride,))
    assert cp.coalesce(raw) == expected


def test_complement_default_cotarget():
    e = explain("complement", "(2,4):(1,6)")
    check_common(e, cp.complement(parse("(2,4):(1,6)")))
    assert "cotarget = cosize(filter(A)) = 20" in e


# ---------------------------------------------------------------------------
# divides and products


@settings(max_examples=50, deadline=None)
@given(compact_layouts(max_leaves=3), st.data())
def test_logical_divide_steps_match_library(a, data):
    t = data.draw(divisor_tilers(a))
    try:
        expected = cp.logical_divide(a, t)
    except LayoutError as err:
        with pytest.raises(type(err)):
            explain("logical_divide", a, t)
        return
    e = explain("logical_divide", a, t)
    check_common(e, expected)
    ca = cp.coalesce(a)
    c = cp.complement(t, ca.shape)
    assert steps(e, "complement") == [c]
    tiler = Layout((t.shape, c.shape), (t.stride, c.stride))
    assert steps(e, "tiler") == [tiler]
    assert steps(e, "composition") == [cp.composition(a, tiler)] == [expected]


@pytest.mark.parametrize("op", ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide"])
def test_divides_by_mode(op):
    a, tiler = parse("(12,32):(32,1)"), (parse("4:1"), parse("8:1"))
    e = explain(op, "(12,32):(32,1)", "4:1", "8:1")  # two tiler arguments: a by-mode tiler
    check_common(e, getattr(cp, op)(a, tiler))
    assert steps(e, "complement") == [Layout(3, 4), Layout(4, 8)]
    if op != "logical_divide":
        assert steps(e, "logical_divide") == [cp.logical_divide(a, tiler)]
        assert steps(e, "zipped_divide") == [cp.zipped_divide(a, tiler)]
    assert explain(op, a, "<4:1,8:1>") == e


@settings(max_examples=80, deadline=None)
@given(compact_layouts(max_leaves=2, max_size=32), compact_layouts(max_leaves=2, max_size=16))
def test_logical_product_steps_match_library(a, b):
    try:
        expected = cp.logical_product(a, b)
    except LayoutError:
        return
    e = explain("logical_product", a, b)
    check_common(e, expected)
    c = cp.complement(a, cp.size(a) * cp.cosize(b))
    assert steps(e, "complement") == [c]
    cb = cp.composition(c, b)
    assert steps(e, "composition") == [cb]
    assert expected == Layout((a.shape, cb.shape), (a.stride, cb.stride))


@pytest.mark.parametrize("op", ["blocked_product", "raked_product", "zipped_product", "tiled_product",
                                "flat_product"])
def test_products(op):
    a, b = parse("(2,5):(5,1)"), parse("(3,4):(1,3)")
    e = explain(op, "(2,5):(5,1)", "(3,4):(1,3)")
    check_common(e, getattr(cp, op)(a, b))
    assert steps(e, "complement") == [cp.complement(a, 120)]
    assert steps(e, "composition") == [Layout((3, 4), (10, 30))]
    if op in ("blocked_product", "raked_product"):
        assert steps(e, "logical_product") == [cp.logical_product(a, b)]
        assert "zip(" in e


def test_product_rank_padding():
    e = explain("blocked_product", "(2,2):(1,2)", "3:1")
    check_common(e, cp.blocked_product(parse("(2,2):(1,2)"), parse("3:1")))
    assert "pad both to rank 2" in e and "B' = (3,1):(1,0)" in e


# ---------------------------------------------------------------------------
# inverses


@settings(max_examples=75, deadline=None)
@given(layouts(max_leaves=3, allow_negative=True))
def test_right_inverse_matches_library(a):
    expected = cp.right_inverse(a)
    e = explain("right_inverse", a)
    check_common(e, expected)
    assert steps(e, "coalesce(A)") == [cp.coalesce(a)]
    for i in range(cp.size(expected)):
        assert a(expected(i)) == i


@settings(max_examples=75, deadline=None)
@given(injective_layouts(max_leaves=3))
def test_left_inverse_matches_library(a):
    expected = cp.left_inverse(a)
    e = explain("left_inverse", a)
    check_common(e, expected)
    assert steps(e, "coalesce(A)") == [cp.coalesce(a)]
    for i in range(cp.size(a)):
        assert expected(a(i)) == i


def test_inverse_texts():
    e = explain("right_inverse", "(8,4):(4,1)")
    assert "stride 1: mode 1 = 4:1 -> 4:8" in e and "no mode has stride 32: stop" in e
    e = explain("left_inverse", "(4,8):(1,5)")
    assert "stride 5 / 1 = 5 steps of mode 4:1 -> mode 5:1" in e and "last: mode 8:5 itself -> 8:4" in e


def test_coalesce():
    e = explain("coalesce", "(2,(1,6)):(1,(6,2))")
    check_common(e, Layout(12, 1))
    assert "1:6 has size 1: dropped" in e and "merge into 12:1" in e


# ---------------------------------------------------------------------------
# errors and the top-level name


def test_errors_propagate_unchanged():
    a, b = parse("(6,4):(1,10)"), parse("4:4")
    with pytest.raises(cp.DivisibilityError) as lib:
        cp.composition(a, b)
    with pytest.raises(cp.DivisibilityError) as exp:
        explain("composition", "(6,4):(1,10)", "4:4")
    assert str(exp.value) == str(lib.value)
    with pytest.raises(cp.InjectivityError):
        explain("complement", "(2,2):(1,1)")
    with pytest.raises(LayoutError, match="unknown operation"):
        explain("transpose", "4:1")
    with pytest.raises(LayoutError, match="takes 1 argument"):
        explain("right_inverse", "4:1", "4:1")
    with pytest.raises(cp.ParseError) as bad:
        explain("coalesce", "(4,2]:(1,4)")
    assert bad.value.pos == 4


def test_top_level_explain_and_ops():
    assert cp.explain is explain
    assert "explain" in cp.__all__
    for op in OPS:
        assert hasattr(cp, op)
    assert repr(explain("coalesce", "4:1")) == str(explain("coalesce", "4:1"))


def test_docstring_examples():
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("cute_py.viz.explain"), optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_argument_count_errors_say_at_least():
    """Issue 14: explain("composition", one argument) said "takes 2 or 99 arguments"; it takes at least 2."""
    for op in ("composition", "logical_divide", "zipped_divide", "logical_product", "blocked_product"):
        with pytest.raises(LayoutError, match=rf"^explain: {op} takes at least 2 arguments: got 1$"):
            explain(op, "(4,8):(1,4)")
    with pytest.raises(LayoutError, match=r"^explain: complement takes 1 or 2 arguments: got 3$"):
        explain("complement", "4:2", 24, 5)
    with pytest.raises(LayoutError, match=r"^explain: coalesce takes 1 argument: got 0$"):
        explain("coalesce")
    assert explain("composition", "(12,32):(32,1)", "4:1", "8:1").result is not None   # 3 arguments are fine
