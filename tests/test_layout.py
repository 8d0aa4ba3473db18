"""``Layout``: construction, value semantics, printing, evaluation, slicing and mode manipulation.

Semantics are CuTe C++'s ``layout.hpp`` (CUTE_REFERENCE §2.4): LayoutLeft
default strides with stride 0 for size-1 modes, C++ ``slice`` (nested kept
modes flattened one level, ``L(_) == L``), ``cosize`` correct for negative
strides, identity layouts with ``E<i>`` strides.
"""

from __future__ import annotations

import itertools
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import (
    E, Layout, LayoutLeft, LayoutRight, _, append, coprofile, coshape, cosize, dice, domain_offset,
    flatten, get, group, make_fragment_like, make_identity_layout, make_layout, make_layout_like,
    make_ordered_layout, prepend, rank, replace, select, shape, size, slice_, slice_and_offset,
    stride, take, unflatten,
)
from cute_py import zip as zip_layout
from cute_py import int_tuple as it
from oracle import all_coords, called_values

from strategies import compact_layouts, layouts, shapes

PROPS = settings(max_examples=100, deadline=None)
any_layouts = layouts(allow_negative=True)


# ---------------------------------------------------------------------------
# construction


@pytest.mark.parametrize("shp, expected_stride", [
    ((4, 1, 2), (1, 0, 4)),
    (1, 0),
    (8, 1),
    ((4, 8), (1, 4)),
    ((4, (2, 1), 3), (1, (4, 0), 8)),
    ((1, 1), (0, 0)),
    ((4,), (1,)),
])
def test_default_strides_are_layout_left_with_size1_zero(shp, expected_stride):
    assert Layout(shp).stride == expected_stride
    assert Layout(shp).shape == shp
    assert make_layout(shp) == Layout(shp, expected_stride)
    assert make_layout(shp, LayoutLeft) == Layout(shp, expected_stride)


def test_layout_one_is_1_0():
    assert Layout(1) == Layout(1, 0)
    assert str(Layout(1)) == "1:0"


@pytest.mark.parametrize("shp, expected_stride", [
    ((4, 8), (8, 1)),
    ((4, 8, 1, 2), (16, 2, 0, 1)),
    ((4, (8, 2)), (16, (2, 1))),
    (6, 1),
])
def test_make_layout_layout_right(shp, expected_stride):
    assert make_layout(shp, LayoutRight) == Layout(shp, expected_stride)


def test_make_layout_forms():
    assert make_layout((4, 8), (8, 1)) == Layout((4, 8), (8, 1))
    a, b = Layout(4, 2), Layout((2, 2), (1, 8))
    cat = make_layout(a, b)
    assert str(cat) == "(4,(2,2)):(2,(1,8))"
    assert rank(cat) == 2 and cat[0] == a and cat[1] == b
    three = make_layout(Layout(4, 2), Layout(3, 1), Layout((2, 2), (8, 16)))
    assert str(three) == "(4,3,(2,2)):(2,1,(8,16))"
    assert [three[i] for i in range(3)] == [Layout(4, 2), Layout(3, 1), Layout((2, 2), (8, 16))]
    # one layout: a rank-1 layout whose mode is it, as CuTe C++ (make_shape(layout.shape()), ...)
    assert str(make_layout(Layout((4, 8)))) == "((4,8)):((1,4))"
    assert rank(make_layout(a)) == 1 and make_layout(a)[0] == a and str(make_layout(a)) == "(4):(2)"
    # lists are accepted as tuples
    assert make_layout([4, [2, 2]], [2, [1, 8]]) == Layout((4, (2, 2)), (2, (1, 8)))


@given(st.lists(any_layouts, min_size=2, max_size=4))
@PROPS
def test_make_layout_concatenation_postcondition(ls):
    cat = make_layout(*ls)
    assert rank(cat) == len(ls)
    for i, L in enumerate(ls):
        assert cat[i] == L
    assert size(cat) == it.product(tuple(size(L) for L in ls))


def test_make_layout_bad_arguments():
    with pytest.raises(TypeError):
        make_layout()
    with pytest.raises(TypeError):
        make_layout(Layout(4), (4,))
    with pytest.raises(TypeError):
        make_layout(4, 1, 2)
    with pytest.raises(cute_py.LayoutError):
        make_layout((4, 2), (1,))


@pytest.mark.parametrize("bad", [4.0, "4", True, False, None, (4, 2.0), (True,), (4, "2"), ((4, None), 2), 3 + 0j,
                                 object()])
def test_bad_shape_type_raises_type_error(bad):
    with pytest.raises(TypeError):
        Layout(bad)
    with pytest.raises(TypeError):
        make_layout(bad)


@pytest.mark.parametrize("bad", [(1.0, 2), "ab", (True, 2), (1, None), (1, "x"), 1.5])
def test_bad_stride_type_raises_type_error(bad):
    with pytest.raises(TypeError):
        Layout((4, 2), bad)


@pytest.mark.parametrize("bad", [-1, (4, -1), (4, (2, -3)), ((-2,), 1)])
def test_negative_extent_raises_layout_error(bad):
    with pytest.raises(cute_py.LayoutError):
        Layout(bad)
    with pytest.raises(cute_py.LayoutError):
        make_layout(bad, LayoutRight)


def test_non_congruent_stride_raises():
    with pytest.raises(cute_py.RankError):
        Layout((4, 2), (1,))
    with pytest.raises(cute_py.RankError):
        Layout((4, 2), ((1, 2), 4))
    with pytest.raises(cute_py.RankError):
        Layout(4, (1,))


def test_numpy_ints_normalised():
    np = pytest.importorskip("numpy")
    L = Layout((np.int64(4), np.int32(2)), (np.int64(1), np.int16(4)))
    assert L == Layout((4, 2), (1, 4))
    assert all(type(x) is int for x in it.flatten_to_tuple(L.shape) + it.flatten_to_tuple(L.stride))


def test_numpy_ints_in_tilers_and_cotargets_give_int_results():
    # they reached result shapes once: complement(Layout(2), np.int64(16)) was Layout(np.int64(8), 2)
    np = pytest.importorskip("numpy")
    from cute_py import complement, composition, logical_divide, logical_product, tile_to_shape
    results = [complement(Layout(2), np.int64(16)), complement(Layout(2), (np.int64(4), np.int32(4))),
               composition(Layout(16), np.int64(4)), composition(Layout((16, 8)), (np.int64(4), Layout(2, 2))),
               logical_divide(Layout((16, 8)), (np.int64(4), [2])), logical_product(Layout(4), (np.int64(4),)),
               tile_to_shape(Layout(4), (np.int64(16),))]
    assert results[0] == Layout(8, 2) and results[2] == Layout(4, 1)
    for r in results:
        assert all(type(x) is int for x in it.flatten_to_tuple(r.shape) + it.flatten_to_tuple(r.stride)), repr(r)


# ---------------------------------------------------------------------------
# immutability, hash, eq, str, repr


def test_immutable():
    L = Layout((4, 2))
    for name, value in (("shape", 3), ("stride", 1), ("foo", 1)):
        with pytest.raises(AttributeError):
            setattr(L, name, value)
    with pytest.raises(AttributeError):
        del L.shape
    assert L == Layout((4, 2), (1, 4))


def test_hash_eq():
    a = Layout((4, (2, 3)), (2, (1, 8)))
    b = Layout((4, (2, 3)), (2, (1, 8)))
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert a != Layout((4, (2, 3)), (2, (1, 9)))
    assert Layout(4) != Layout((4,))          # a rank-1 tuple is a different profile
    assert Layout(4) != 4 and a != "x" and a != (a.shape, a.stride)
    assert len({a, b, Layout(4)}) == 2


@given(any_layouts)
@PROPS
def test_hash_eq_property(L):
    M = Layout(L.shape, L.stride)
    assert M == L and hash(M) == hash(L)
    assert pickle.loads(pickle.dumps(L)) == L


@pytest.mark.parametrize("L, text", [
    (Layout((4, (2, 2)), (2, (1, 8))), "(4,(2,2)):(2,(1,8))"),
    (Layout(8, 1), "8:1"),
    (Layout((4,), (1,)), "(4):(1)"),
    (Layout(((4,),), ((1,),)), "((4)):((1))"),
    (Layout((4, 2), (-1, -4)), "(4,2):(-1,-4)"),
    (Layout(1), "1:0"),
    (Layout((), ()), "():()"),
])
def test_str(L, text):
    assert str(L) == text


@given(any_layouts)
@PROPS
def test_repr_is_evaluable(L):
    assert eval(repr(L), vars(cute_py)) == L


@pytest.mark.parametrize("shp", [(4, 8), (4, (2, 3)), 4, ((2, 2), 3)])
def test_repr_of_identity_layout_is_evaluable(shp):
    L = make_identity_layout(shp)
    assert eval(repr(L), vars(cute_py)) == L


# ---------------------------------------------------------------------------
# evaluation


def test_evaluation_exact():
    L = Layout((4, (2, 2)), (2, (1, 8)))
    assert L(5) == 3
    assert L(1, (1, 0)) == 3
    assert L((1, (1, 0))) == 3
    assert L(1, 2) == 2 + 8        # 1-D coordinate inside mode 1
    assert L(15) == 6 + 1 + 8
    assert Layout((4, 8), (8, 1))(1, 2) == 10


@given(any_layouts)
@PROPS
def test_evaluation_agrees_with_crd2idx(L):
    for c in all_coords(L.shape):
        v = it.crd2idx(c, L.shape, L.stride)
        assert v == it.inner_product(c, L.stride)
        assert L(c) == v
        assert L(it.crd2idx(c, L.shape)) == v     # the colexicographic 1-D index of c
        assert cute_py.crd2idx(c, L) == v
        if isinstance(c, tuple) and len(c) > 1:
            assert L(*c) == v
        # per top-level mode 1-D coordinates give the same offset
        if isinstance(L.shape, tuple):
            flat_c = tuple(it.crd2idx(ci, si) for ci, si in zip(c, L.shape))
            assert L(flat_c) == v


def test_evaluation_bad_coordinates():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    with pytest.raises(cute_py.LayoutError):
        L((1, 2, 3))
    with pytest.raises(cute_py.LayoutError):
        L(1, 2, 3)
    with pytest.raises(cute_py.LayoutError):
        L(1, (1, 1, 1))
    for bad in (1.0, "a", None, [1, 2]):
        with pytest.raises(TypeError):
            L(bad)
    with pytest.raises(TypeError):
        L()


# ---------------------------------------------------------------------------
# slicing (C++ slice: nested kept modes flattened one level)


def test_slice_exact():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    assert L(_) == L
    assert slice_(_, L) == L
    assert L(_, _) == L
    assert str(L(_, (_, 1))) == "(4,2):(2,1)"
    assert str(L(2, (_, 1))) == "(2):(1)"
    assert str(L((_, (1, _)))) == "(4,3):(2,8)"
    assert str(slice_((_, (_, _)), L)) == "(4,2,3):(2,1,8)"
    assert str(slice_((_, 2), Layout((4, 8)))) == "(4):(1)"
    assert str(Layout((4, 8), (8, 1))(_, 3)) == "(4):(8)"
    assert slice_((1, (0, 2)), L) == Layout((), ())
    assert slice_(5, L) == Layout((), ())


def test_slice_and_offset_exact():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    S, off = slice_and_offset((2, (_, 1)), L)
    assert S == Layout((2,), (1,)) and off == 12
    S, off = slice_and_offset((_, 2), Layout((4, 8)))
    assert str(S) == "(4):(1)" and off == 8
    S, off = slice_and_offset(_, L)
    assert S == L and off == 0


def test_dice_exact():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    assert str(dice((2, (_, 1)), L)) == "(4,3):(2,8)"
    assert str(dice((_, 2), Layout((4, 8)))) == "(8):(4)"
    assert dice(_, L) == Layout((), ())
    assert dice(3, L) == L


def test_domain_offset_exact():
    L = Layout((4, 8))
    assert domain_offset((1, 2), L) == (L, 9)
    assert domain_offset(5, L) == (L, 5)


def test_slice_bad_coordinate():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    with pytest.raises(cute_py.LayoutError):
        L(_, _, _)
    with pytest.raises(cute_py.LayoutError):
        slice_((_, (_, _, _)), L)
    with pytest.raises(cute_py.LayoutError):
        dice((_, _, _), L)


@st.composite
def layouts_with_slice_coords(draw):
    L = draw(any_layouts)

    def coord(shp, top):
        choice = draw(st.integers(0, 2 if isinstance(shp, tuple) else 1))
        if choice == 0:
            return _
        if choice == 1:
            return draw(st.integers(0, it.product(shp) - 1))
        return tuple(coord(s, False) for s in shp)

    return L, coord(L.shape, True)


def _substitute(c, kept):
    """Replace the ``_`` leaves of ``c`` in order by the entries of ``kept``."""
    it_kept = iter(kept)

    def go(x):
        if x is _:
            return next(it_kept)
        if isinstance(x, tuple):
            return tuple(go(e) for e in x)
        return x

    return go(c)


def _count_underscores(c):
    if c is _:
        return 1
    if isinstance(c, tuple):
        return sum(_count_underscores(e) for e in c)
    return 0


def _int_leaves(c):
    if c is _:
        return []
    if isinstance(c, tuple):
        return [x for e in c for x in _int_leaves(e)]
    return [c]


@given(layouts_with_slice_coords())
@PROPS
def test_slice_and_offset_property(Lc):
    """L(c with the kept modes set to k) == offset + S(k) for every coordinate k of the slice."""
    L, c = Lc
    S, off = slice_and_offset(c, L)
    assert slice_(c, L) == S
    assert off == it.crd2idx(c, L.shape, L.stride)
    if it.has_underscore(c):
        assert L(c) == S
    if c is _:
        assert S == L and off == 0
        return
    n_kept = _count_underscores(c)
    assert rank(S) == n_kept
    for j in range(size(S)):
        k = it.idx2crd(j, S.shape)
        full = _substitute(c, k)
        assert L(full) == off + S(k) == off + S(j)


@given(layouts_with_slice_coords())
@PROPS
def test_dice_property(Lc):
    """dice keeps one mode per integer of the coordinate; evaluating it at those integers gives the offset."""
    L, c = Lc
    D = dice(c, L)
    ints = _int_leaves(c)
    if c is _:
        assert D == Layout((), ())
        return
    if not isinstance(c, tuple):
        assert D == L
        return
    assert rank(D) == len(ints)
    if ints:
        assert D(tuple(ints)) == it.crd2idx(c, L.shape, L.stride)
    # slice and dice split the modes: sizes multiply up to size(L)
    assert size(D) * size(slice_(c, L)) == size(L)


# ---------------------------------------------------------------------------
# coordinates of compact layouts


def test_get_coords_exact():
    L = Layout((4, 8), (8, 1))
    assert L.get_hier_coord(9) == (1, 1)
    assert L.get_1d_coord(9) == 5
    assert Layout(((2, 2), 8), ((1, 2), 4)).get_flat_coord(7) == (3, 1)


@given(compact_layouts())
@PROPS
def test_get_coord_postconditions(L):
    n = size(L)
    seen = set()
    for i in range(n):
        h = L.get_hier_coord(i)
        assert it.congruent(h, L.shape)
        assert it.elem_less(h, L.shape)
        assert it.crd2idx(h, L.shape, L.stride) == i
        assert L(h) == i
        f = L.get_flat_coord(i)
        if isinstance(L.shape, tuple):
            assert isinstance(f, tuple) and len(f) == len(L.shape)
            assert all(0 <= fk < size(L, k) for k, fk in enumerate(f))
        assert L(f) == i
        d = L.get_1d_coord(i)
        assert 0 <= d < n
        assert L(d) == i
        seen.add(d)
    assert seen == set(range(n))


# ---------------------------------------------------------------------------
# modes: get / [] / take / select / group / flatten / unflatten / append / prepend / replace / zip


def test_get_exact():
    L = Layout((4, (2, 3)), (1, (4, 8)))
    assert L[0] == Layout(4, 1) == get(L, 0)
    assert L[1] == Layout((2, 3), (4, 8))
    assert L[1, 0] == Layout(2, 4) == get(L, 1, 0)
    assert L[-1] == L[1]
    assert get(Layout(4, 2), 0) == Layout(4, 2)
    assert list(L) == [L[0], L[1]]
    assert len(L) == 2 and len(Layout(4)) == 1


def test_take_select_group_exact():
    L = Layout((2, 3, 4, 5))
    assert str(take(L, 1, 3)) == "(3,4):(2,6)"
    assert str(take(L, 2, 3)) == "(4):(6)"
    assert str(select(L, 2, 0)) == "(4,2):(6,1)"
    assert str(select(L, 3)) == "(5):(24)"
    assert str(group(L, 1, 3)) == "(2,(3,4),5):(1,(2,6),24)"
    assert str(group(L, 0, 4)) == "((2,3,4,5)):((1,2,6,24))"


@given(any_layouts)
@PROPS
def test_group_flatten_preserve_function(L):
    r = rank(L)
    v = called_values(L)
    F = flatten(L)
    assert it.depth(F.shape) <= 1
    assert called_values(F) == v
    assert unflatten(F, L.shape) == L
    for b in range(r + 1):
        for e in range(b, r + 1):
            G = group(L, b, e)
            assert rank(G) == r - (e - b) + 1
            assert called_values(G) == v
            T = take(L, b, e)
            assert T == select(L, *range(b, e))
            assert rank(T) == e - b


def test_flatten_unflatten_exact():
    L = Layout((4, (2, 3)))
    assert str(flatten(L)) == "(4,2,3):(1,4,8)"
    assert str(unflatten(Layout((4, 2, 3)), (0, (0, 0)))) == "(4,(2,3)):(1,(4,8))"
    assert flatten(Layout(4, 2)) == Layout(4, 2)
    with pytest.raises(cute_py.LayoutError):
        unflatten(Layout((4, 2, 3)), (0, 0))


def test_append_prepend_replace_exact():
    assert str(append(Layout(4), Layout(3, 4))) == "(4,3):(1,4)"
    assert str(append(Layout((4, 2)))) == "(4,2,1):(1,4,0)"
    assert str(append(Layout((4, 2)), n=4)) == "(4,2,1,1):(1,4,0,0)"
    assert append(Layout((4, 2)), n=2) == Layout((4, 2))
    assert str(prepend(Layout(4), Layout(3, 4))) == "(3,4):(4,1)"
    assert str(prepend(Layout((4, 2)))) == "(1,4,2):(0,1,4)"
    assert str(prepend(Layout(4), n=3)) == "(1,1,4):(0,0,1)"
    assert str(replace(Layout((4, 8)), 1, Layout(2, 32))) == "(4,2):(1,32)"
    assert str(replace(Layout((4, 8)), -2, Layout(2, 32))) == "(2,8):(32,4)"


def test_zip_exact():
    assert str(zip_layout(Layout(((2, 3), (4, 5))))) == "((2,4),(3,5)):((1,6),(2,24))"
    assert str(zip_layout(Layout((2, 3)), Layout((4, 5)))) == "((2,4),(3,5)):((1,1),(2,4))"
    with pytest.raises(cute_py.LayoutError):
        zip_layout(Layout(((2, 3), (4, 5, 6))))


@pytest.mark.parametrize("call", [
    lambda L: L[5],
    lambda L: L[-3],
    lambda L: L[1, 5],
    lambda L: L[0, 1],
    lambda L: get(L, 2),
    lambda L: get(L, 1, 0, 1),
    lambda L: select(L, 5),
    lambda L: select(L, 0, -3),
    lambda L: take(L, 0, 5),
    lambda L: take(L, 2, 1),
    lambda L: take(L, -1, 1),
    lambda L: group(L, 1, 7),
    lambda L: group(L, 2, 1),
    lambda L: replace(L, 4, Layout(2)),
    lambda L: replace(L, -3, Layout(2)),
    lambda L: size(L, 3),
    lambda L: shape(L, 3),
    lambda L: stride(L, 3),
    lambda L: rank(L, 3),
    lambda L: cute_py.depth(L, 3),
    lambda L: cosize(L, 2),
    lambda L: coshape(L, 2),
    lambda L: size(L, 1, 2),
])
def test_bad_mode_index_raises_rank_error(call):
    L = Layout((4, (2, 2)), (2, (1, 8)))
    with pytest.raises(cute_py.RankError):
        call(L)


@given(any_layouts, st.integers(-10, 10), st.integers(-10, 10))
@PROPS
def test_mode_indices_never_index_error(L, i, j):
    """Any integer index either works or raises RankError (never IndexError)."""
    r = rank(L)
    calls = [lambda: L[i], lambda: get(L, i, j), lambda: select(L, i, j), lambda: take(L, i, j),
             lambda: group(L, i, j), lambda: replace(L, i, Layout(2)), lambda: size(L, i),
             lambda: shape(L, i, j), lambda: stride(L, i), lambda: rank(L, i), lambda: cosize(L, i)]
    for call in calls:
        try:
            call()
        except cute_py.RankError:
            pass
    if -r <= i < r:
        assert L[i] == list(L)[i]
    else:
        with pytest.raises(cute_py.RankError):
            L[i]


def test_negative_mode_index_is_consistent_for_int_shaped_layouts():
    """An int-shaped layout has one mode, itself: L[-1] works as for a rank-1 tuple layout, and as
    select / replace already allow."""
    L = Layout(4, 2)
    assert select(L, -1) == Layout((4,), (2,))
    assert replace(L, -1, Layout(3, 1)) == Layout((3,), (1,))
    assert Layout((4,), (2,))[-1] == L
    assert L[-1] == L
    assert get(L, -1) == L
    assert size(L, -1) == 4
    with pytest.raises(cute_py.RankError):
        L[-2]


def test_bad_mode_index_type():
    L = Layout((4, 2))
    for bad in (1.0, "1", None):
        with pytest.raises((TypeError, cute_py.RankError)):
            get(L, bad)
        with pytest.raises((TypeError, cute_py.RankError)):
            select(L, bad)


# ---------------------------------------------------------------------------
# size / cosize / rank / depth / shape / stride / coshape / coprofile


def test_queries_exact():
    L = Layout((4, (2, 3)), (2, (1, 8)))
    assert size(L) == 24 and size(L, 1) == 6 and size((2, 5)) == 10
    assert rank(L) == 2 and rank(Layout(8)) == 1 and rank(L, 1) == 2 and rank(L, 0) == 1
    assert cute_py.depth(L) == 2 and cute_py.depth(Layout(8)) == 0 and cute_py.depth(Layout((8,))) == 1
    assert shape(L) == (4, (2, 3)) and shape(L, 1) == (2, 3) and shape(L, 1, 0) == 2
    assert stride(L) == (2, (1, 8)) and stride(L, 1) == (1, 8)
    assert cosize(L) == 3 * 2 + 1 + 2 * 8 + 1
    assert L.size() == 24 and L.cosize() == cosize(L) and L.rank() == 2 and L.depth() == 2


@pytest.mark.parametrize("L, expected", [
    (Layout((4, 2), (-1, 4)), 8),
    (Layout((4, 2), (-1, -4)), 8),
    (Layout((4, 2), (2, -1)), 8),
    (Layout((4, 2), (1, 16)), 20),
    (Layout((4, 2), (0, 0)), 1),
    (Layout(1, 0), 1),
    (Layout(1, 5), 1),
])
def test_cosize_exact(L, expected):
    assert cosize(L) == expected
    assert coshape(L) == expected


@given(any_layouts)
@PROPS
def test_cosize_is_value_span(L):
    v = called_values(L)
    assert cosize(L) == max(v) - min(v) + 1
    assert coshape(L) == cosize(L)
    assert coprofile(L) == 0
    if all(d >= 0 for d in it.flatten_to_tuple(L.stride)):
        assert cosize(L) == max(v) + 1


def test_identity_coshape_coprofile():
    I = make_identity_layout((4, (2, 3)))
    assert coshape(I) == (4, (2, 3))
    assert coprofile(I) == (0, (0, 0))
    assert coprofile(make_identity_layout((4, 8))) == (0, 0)
    assert cosize(make_identity_layout((4, 8))) == 32


# ---------------------------------------------------------------------------
# make_ordered_layout / make_layout_like / make_fragment_like


@pytest.mark.parametrize("shp, order, text", [
    ((2, 2, 2, 2), (0, 2, 3, 1), "(2,2,2,2):(1,4,8,2)"),
    ((2, 3, 4), (2, 1, 0), "(2,3,4):(12,4,1)"),
    (((2, 2), 3), (1, 0), "((2,2),3):((3,6),1)"),
    ((2, 3), LayoutRight, "(2,3):(3,1)"),
    ((2, 3), LayoutLeft, "(2,3):(1,2)"),
    ((2, 1, 4), (2, 0, 1), "(2,1,4):(4,0,1)"),
])
def test_make_ordered_layout_exact(shp, order, text):
    assert str(make_ordered_layout(shp, order)) == text


@given(st.data())
@PROPS
def test_make_ordered_layout_is_compact_and_ordered(data):
    shp = data.draw(shapes())
    flat = it.flatten_to_tuple(shp)
    order_flat = data.draw(st.permutations(range(len(flat))))
    order = it.unflatten(tuple(order_flat), shp) if isinstance(shp, tuple) else order_flat[0]
    L = make_ordered_layout(shp, order)
    assert L.shape == shp
    assert sorted(called_values(L)) == list(range(size(L)))
    fd = it.flatten_to_tuple(L.stride)
    live = [k for k in range(len(flat)) if flat[k] != 1]
    for a, b in itertools.combinations(live, 2):
        assert (fd[a] < fd[b]) == (order_flat[a] < order_flat[b])


@pytest.mark.parametrize("L, text", [
    (Layout((4, 3, 2), (6, 0, 1)), "(4,3,2):(2,0,1)"),
    # C++ layout.hpp examples
    (Layout((2, 2, 2, 2), (0, 2, 4, 1)), "(2,2,2,2):(0,2,4,1)"),
    (Layout((2, 3, 4, 5), (0, 42, 1, 0)), "(2,3,4,5):(0,4,1,0)"),
    (Layout((4, 8), (8, 1)), "(4,8):(8,1)"),
])
def test_make_layout_like_exact(L, text):
    assert str(make_layout_like(L)) == text


@given(layouts(max_stride=16))
@PROPS
def test_make_layout_like_property(L):
    R = make_layout_like(L)
    assert R.shape == L.shape
    fs, fd, rd = it.flatten_to_tuple(L.shape), it.flatten_to_tuple(L.stride), it.flatten_to_tuple(R.stride)
    for s, d, r in zip(fs, fd, rd):
        if d == 0:
            assert r == 0            # stride-0 modes stay 0
    # compact over the non-zero-stride modes
    nz = Layout(tuple(s for s, d in zip(fs, fd) if d != 0 and s != 1) or (1,),
                tuple(r for s, d, r in zip(fs, fd, rd) if d != 0 and s != 1) or (0,))
    assert sorted(called_values(nz)) == list(range(size(nz)))


@pytest.mark.parametrize("src, text", [
    (Layout((2, 4, 3), (12, 1, 4)), "(2,4,3):(1,2,8)"),
    (Layout(4, 3), "4:1"),
    ((2, 3), "(2,3):(1,2)"),
    (Layout(((2, 2), 3), ((6, 3), 1)), "((2,2),(3)):((1,2),(4))"),  # C++ keeps take<1,2> a rank-1 tuple
])
def test_make_fragment_like_exact(src, text):
    assert str(make_fragment_like(src)) == text


def test_make_fragment_like_keeps_mode0_stride_zeros():
    """C++ builds mode 0 as compact_major<LayoutLeft>(filter_zeros(stride<0>, shape<0>)): static-0
    strides of mode 0 are preserved (broadcast fragments)."""
    R = make_fragment_like(Layout((4, 2), (0, 1)))
    assert flatten(R) == Layout((4, 2), (0, 1))
    R = make_fragment_like(Layout(((2, 2), 3), ((0, 1), 2)))
    assert flatten(R) == Layout((2, 2, 3), (0, 1, 2))


@given(compact_layouts())
@PROPS
def test_make_fragment_like_is_compact(L):
    R = make_fragment_like(L)
    # C++'s tiled_product keeps a rank-1 rest mode wrapped: compare flattened shapes.
    assert flatten(R).shape == flatten(L).shape
    assert sorted(called_values(R)) == list(range(size(R)))
    if isinstance(L.shape, tuple) and len(L.shape) > 1:
        assert R[0] == Layout(L.shape[0])  # mode 0 col-major (no stride-0 in compact layouts unless size 1)


# ---------------------------------------------------------------------------
# identity layouts


def test_identity_layout_exact():
    I = make_identity_layout((4, 8))
    assert str(I) == "(4,8):(1@0,1@1)"
    assert I.stride == (E(0), E(1))
    assert I(9) == (1, 2)
    assert I(1, 2) == (1, 2)
    assert I((3, 7)) == (3, 7)
    assert make_identity_layout(4) == Layout(4, 1)
    assert str(make_identity_layout((4, (2, 3)))) == "(4,(2,3)):(1@0,(1@0@1,1@1@1))"


@pytest.mark.parametrize("shp", [(4, 8), (4, (2, 3)), ((2, 2), (3, 2)), (2, 3, 4), (4, 1, 2), 6])
def test_identity_layout_maps_every_index_to_its_coordinate(shp):
    I = make_identity_layout(shp)
    for i in range(size(I)):
        c = it.idx2crd(i, shp)
        assert I(i) == c, (i, I(i), c)
        assert I(c) == c


@given(shapes())
@PROPS
def test_identity_layout_property(shp):
    if not isinstance(shp, tuple) or len(shp) < 2:
        return  # rank-1 tuples give a bare basis element (CuTe does the same)
    I = make_identity_layout(shp)
    assert I.shape == shp
    for i in range(size(I)):
        assert I(i) == it.idx2crd(i, shp)


def test_constructor_fast_path_matches_the_general_check():
    # Layout(shape, stride) of plain ints skips _norm; over random (also invalid) inputs it must give the same
    # layout, flat modes and errors as the general check
    import random

    from cute_py.layouts import layout as layout_module

    def general(shape, stride):
        saved = layout_module._int_leaves
        layout_module._int_leaves = lambda x: None
        try:
            return Layout(shape, stride)
        finally:
            layout_module._int_leaves = saved

    def outcome(f, shape, stride):
        try:
            r = f(shape, stride)
            return repr(r), r._flat
        except (TypeError, cute_py.LayoutError) as e:
            return type(e).__name__, str(e)

    rng = random.Random(5)
    leaves = [0, 1, 2, 3, -1, 4, True, 2.0, (), None]

    def tree(depth=0):
        if depth > 3 or rng.random() < 0.4:
            return rng.choice(leaves)
        return tuple(tree(depth + 1) for _ in range(rng.randint(0, 3)))

    for _ in range(3000):
        shape = tree()
        stride = rng.choice([None, tree(), shape])
        assert outcome(Layout, shape, stride) == outcome(general, shape, stride), (shape, stride)


@given(any_layouts, st.integers(0, 3))
def test_calling_an_int_layout_agrees_with_crd2idx(L, past):
    """Layout.__call__'s path for int indices and one int per mode (its evaluation plan, kept on the layout)
    gives crd2idx's offsets, indices past the size included (the last leaf takes the rest), and the general
    path's for negative indices."""
    n = size(L)
    for i in list(range(min(n, 64))) + [n + past]:
        assert L(i) == it.crd2idx(i, L.shape, L.stride)
    assert L(-1 - past) == it.crd2idx(-1 - past, L.shape, L.stride)
    if isinstance(L.shape, tuple) and len(L.shape) > 1:
        for c in itertools.islice(itertools.product(*(range(size(m) + 1) for m in L)), 64):
            assert L(*c) == it.crd2idx(c, L.shape, L.stride)


def test_an_empty_tuple_in_the_shape_takes_the_general_path():
    """Past the size, crd2idx splits an index over an empty last leaf otherwise than over the leaves."""
    L = Layout((4, (2, ())), (1, (4, ())))
    assert L(9) == it.crd2idx(9, L.shape, L.stride) and L(3, 5) == it.crd2idx((3, 5), L.shape, L.stride)
