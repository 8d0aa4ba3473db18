"""``parse``: reading CuTe's printed forms back.

Every form cute_py prints round-trips (``parse(str(x)) == x``); C++ static-int
spellings (``_4``, ``_-1``, ``_1@0``) and the DSL's ``S<B,M,S>`` are accepted;
malformed input raises :class:`cute_py.ParseError` (a ``LayoutError``) whose
``pos`` points at the offending character.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import ComposedLayout, E, Layout, ParseError, ScaledBasis, Swizzle, _, make_identity_layout, parse
from cute_py import int_tuple as it

from strategies import compact_layouts, injective_layouts, layouts, shapes, swizzles

PROPS = settings(max_examples=100, deadline=None)


# ---------------------------------------------------------------------------
# round trips


@given(layouts(allow_negative=True))
@PROPS
def test_round_trip_layouts(L):
    assert parse(str(L)) == L


@given(st.one_of(compact_layouts(), injective_layouts()))
@PROPS
def test_round_trip_compact_and_injective_layouts(L):
    assert parse(str(L)) == L


@given(swizzles())
@PROPS
def test_round_trip_swizzles(sw):
    assert parse(str(sw)) == sw
    assert parse(str(sw).replace("Sw<", "S<")) == sw


@given(swizzles(), st.integers(-64, 512), layouts(allow_negative=True))
@PROPS
def test_round_trip_composed_with_swizzle(sw, offset, inner):
    C = ComposedLayout(sw, offset, inner)
    assert parse(str(C)) == C


@given(layouts(), st.integers(0, 64), layouts())
@PROPS
def test_round_trip_composed_with_layout_outer(outer, offset, inner):
    C = ComposedLayout(outer, offset, inner)
    assert parse(str(C)) == C


@given(shapes())
@PROPS
def test_round_trip_identity_layouts(shp):
    I = make_identity_layout(shp)
    assert parse(str(I)) == I


int_tuples = st.recursive(
    st.integers(-1000, 1000),
    lambda kids: st.lists(kids, max_size=4).map(tuple),
    max_leaves=12,
)


@given(int_tuples)
@PROPS
def test_round_trip_int_tuples(t):
    assert parse(it.to_str(t)) == t


@pytest.mark.parametrize("text, value", [
    ("(4)", (4,)),
    ("()", ()),
    ("((4))", ((4,),)),
    ("(())", ((),)),
    ("4", 4),
    ("-3", -3),
    ("((2,3),4)", ((2, 3), 4)),
    ("_", _),
    ("(_,1)", (_, 1)),
    ("(1@0,1@1)", (E(0), E(1))),
    ("(1@0,2@1@1)", (E(0), ScaledBasis(2, (1, 1)))),
])
def test_parse_int_tuples_exact(text, value):
    assert parse(text) == value


@pytest.mark.parametrize("L", [
    Layout((4,), (1,)),
    Layout(((4,),), ((1,),)),
    Layout((), ()),
    Layout(1, 0),
    Layout((4, (2, 2)), (2, (1, 8))),
    Layout((4, 2), (-1, -4)),
    make_identity_layout((4, 8)),
    make_identity_layout((4, (2, 3))),
])
def test_round_trip_special_layouts(L):
    assert parse(str(L)) == L


def test_identity_layout_text():
    assert parse("(4,8):(1@0,1@1)") == make_identity_layout((4, 8))
    assert parse("(4,(2,3)):(1@0,(1@0@1,1@1@1))") == make_identity_layout((4, (2, 3)))


# ---------------------------------------------------------------------------
# C++ / DSL spellings


@pytest.mark.parametrize("text, value", [
    ("(_4,_2):(_1,_4)", Layout((4, 2), (1, 4))),
    ("_8:_1", Layout(8, 1)),
    ("(_4):(_1)", Layout((4,), (1,))),
    ("(_4,_8):(_1@0,_1@1)", make_identity_layout((4, 8))),
    ("((_2,_2),_4):((_1@0@0,_1@1@0),_1@1)", make_identity_layout(((2, 2), 4))),
    ("(_4,8):(_1,4)", Layout((4, 8), (1, 4))),           # mixed static / dynamic
    ("_4:_-1", Layout(4, -1)),                            # C++ prints Int<-1> as _-1
    ("(_4,_2):(_-1,_4)", Layout((4, 2), (-1, 4))),
    ("S<3,4,3>", Swizzle(3, 4, 3)),
    ("Sw<3,4,3>", Swizzle(3, 4, 3)),
    ("S<3,4,3> o _0 o (_8,_64):(_64,_1)", ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))),
    ("Sw<3,4,3> o 0 o (8,64):(64,1)", ComposedLayout(Swizzle(3, 4, 3), 0, Layout((8, 64), (64, 1)))),
    ("Sw<2,1,-3>", Swizzle(2, 1, -3)),
    ("  ( 4 , 2 ) : ( 1 , 4 )  ", Layout((4, 2), (1, 4))),
    ("(4,2):(1,4) o 3 o 8:1", ComposedLayout(Layout((4, 2), (1, 4)), 3, Layout(8, 1))),
])
def test_parse_cpp_and_dsl_spellings(text, value):
    assert parse(text) == value


def test_parse_result_types():
    assert type(parse("(4,2):(1,4)")) is Layout
    assert type(parse("Sw<3,4,3>")) is Swizzle
    assert type(parse("Sw<3,4,3> o 0 o 8:1")) is ComposedLayout
    assert type(parse("(4,2)")) is tuple
    assert type(parse("4")) is int


# ---------------------------------------------------------------------------
# errors


# (text, accepted positions of the offending character)
BAD = [
    ("(4,2]:(1,4)", {4}),                 # ']' where ')' or ',' is expected
    ("(4,2):(1)", {0, 6, 8}),             # not congruent: the layout, its stride, or where the ranks part
    ("Sw<1,2>", {6}),                     # '>' where ',' is expected
    ("S<1,2>", {5}),
    ("4:", {2}),                          # end of input where a stride is expected
    ("((4,2):(1,2)", {6}),                # ':' inside an open tuple
    ("(4,2):(1,4) xyz", {12}),            # trailing garbage
    ("(4,2):(1,4))", {11}),
    ("4 4", {2}),
    ("4:1:2", {3}),
    ("", {0}),                            # empty string
    ("   ", {0, 1, 2, 3}),
    (":", {0}),
    ("(4,,2)", {3}),
    ("(4,)", {3}),
    ("Sw<a,b,c>", {3}),
    ("S<3,4,3", {7}),
    ("4@", {2}),
    ("(4,2):(1,4) o", {13}),
    ("(4,-2):(1,2)", {0, 3}),             # negative extent
    ("(4,2):((1,2@0),4)", {0, 6, 7}),     # a multi-term stride ((1,2) is one) with a basis leaf
    ("Sw<3,4,1>", set(range(0, 9))),      # |S| < B: somewhere inside the swizzle, not past it
    ("1@0:1", {0}),                       # basis element as a shape
    ("\u00b9", {0}),                       # '¹' is str.isdigit() but not an int literal
    ("4:\u00b2", {2}),
    ("(" * 100, None),                    # deep nesting: a ParseError, not a RecursionError
    ("Sw<3,4,3> o 0", None),              # two parts of a composed layout
    ("1 o 2 o 3 o 4", None),
    ("(4,8) o 0 o (8)", None),            # an IntTuple cannot be the outer function
]


@pytest.mark.parametrize("text, positions", BAD)
def test_malformed_input_raises_parse_error(text, positions):
    with pytest.raises(ParseError) as info:
        parse(text)
    err = info.value
    assert isinstance(err, cute_py.LayoutError) and isinstance(err, ValueError)
    assert err.text == text
    assert isinstance(err.pos, int) and 0 <= err.pos <= len(text)
    if positions is not None:
        assert err.pos in positions, f"pos {err.pos} for {text!r}; message:\n{err}"
    assert str(err).startswith("parse:")


def test_parse_error_message_has_caret():
    with pytest.raises(ParseError) as info:
        parse("(4,2]:(1,4)")
    lines = str(info.value).splitlines()
    assert "(4,2]:(1,4)" in lines[1]
    caret_line = lines[2]
    assert caret_line.index("^") - lines[1].index("(") == 4


@pytest.mark.parametrize("bad", [None, 4, b"(4,2):(1,4)", ["4"], Layout(4)])
def test_parse_non_string_raises_type_error(bad):
    with pytest.raises(TypeError):
        parse(bad)


def test_very_deep_nesting_is_a_parse_error():
    with pytest.raises(ParseError):
        parse("(" * 5000 + "1" + ")" * 5000)


_ALPHABET = "()_,:@oSw<>-+0123456789 "


@given(st.one_of(st.text(alphabet=_ALPHABET, max_size=30), st.text(max_size=20)))
@settings(max_examples=150, deadline=None)
def test_parse_random_text(text):
    """Random text either parses, and then re-parses to the same value, or raises ParseError."""
    try:
        x = parse(text)
    except ParseError as e:
        assert 0 <= e.pos <= len(text)
        return
    if isinstance(x, (Layout, Swizzle, ComposedLayout)):
        assert parse(str(x)) == x
    else:
        assert parse(it.to_str(x)) == x
