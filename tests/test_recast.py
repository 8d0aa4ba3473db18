"""upcast / downcast / recast_layout / max_alignment / sizeof_bits on layouts.

CuTe C++ (``layout.hpp``):

* ``upcast<N>``: a stride-±1 mode has its shape ceil-divided by N; every other
  non-zero stride ``d`` becomes ``signum(d)*ceil_div(|d|, N)`` (and its shape
  ``ceil_div(s, ceil_div(N, |d|))``); static strides need ``d % N == 0 || N % d == 0``.
* ``downcast<N>``: a stride-±1 mode's shape is multiplied by N, other strides by N.
* ``max_alignment(L)``: ``gcd(size<0>(P), stride<1>(P))`` with
  ``P = logical_divide(coalesce(L), right_inverse(coalesce(L)))``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Layout, LayoutRight, parse
from cute_py.int_tuple import product
from oracle import called_values, flat, mode_coords
from strategies import compact_layouts, layouts, shapes

P = parse


def _size(x):
    return cute_py.size(x)


def _leaves(L):
    return flat(L.shape), flat(L.stride)


def _ceil_div(a, b):
    return -(-a // b)


def check_upcast(L, n, U):
    """Leaf-by-leaf postconditions of ``U == upcast(L, n)`` (CuTe's formula), plus the function."""
    ls, ld = _leaves(L)
    us, ud = _leaves(U)
    assert len(us) == len(ls)
    for s, d, s2, d2 in zip(ls, ld, us, ud):
        if d == 0:
            assert (s2, d2) == (s, 0)
        else:
            # a size-1 mode's stride is never used, so cute_py does not require it to divide
            assert s == 1 or d % n == 0 or n % abs(d) == 0
            assert d2 == (1 if d > 0 else -1) * _ceil_div(abs(d), n)
            assert s2 == _ceil_div(s, _ceil_div(n, abs(d)))
    return U


def check_downcast(L, n, D):
    ls, ld = _leaves(L)
    ds, dd = _leaves(D)
    assert any(d in (1, -1) for d in ld)
    assert len(ds) == len(ls)
    for s, d, s2, d2 in zip(ls, ld, ds, dd):
        if d in (1, -1):
            assert (s2, d2) == (s * n, d)
        else:
            assert (s2, d2) == (s, d * n)
    return D


def cxx_max_alignment(L):
    """CuTe C++'s ``max_alignment`` (layout.hpp), spelled with cute_py's own algebra.

    Returns None when the rest mode of the permuted layout is nested (the C++
    ``gcd`` of an int and a tuple is not defined there).
    """
    f = cute_py.coalesce(L)
    p = cute_py.logical_divide(f, cute_py.right_inverse(f))
    d1 = cute_py.stride(p, 1)
    if isinstance(d1, tuple):
        return None
    return math.gcd(cute_py.size(p, 0), d1)


# ---------------------------------------------------------------------------
# examples


def test_upcast_downcast_reference_examples():
    L = P("(8,64):(64,1)")
    U = cute_py.upcast(L, 2)
    assert str(U) == "(8,32):(32,1)"
    check_upcast(L, 2, U)
    D = cute_py.downcast(L, 2)
    assert str(D) == "(8,128):(128,1)"
    check_downcast(L, 2, D)


@pytest.mark.parametrize("layout, n, expected", [
    ("(64,8):(1,64)", 4, "(16,8):(1,16)"),
    ("(4,8):(0,1)", 2, "(4,4):(0,1)"),
    ("8:-1", 2, "4:-1"),
    ("(4,8):(2,8)", 4, "(2,8):(1,2)"),       # stride 2 < 4: shape ceil_div(4, 4/2), stride 1
    ("((2,4),8):((1,2),8)", 2, "((1,4),8):((1,1),4)"),
    ("(8,64):(64,1)", 1, "(8,64):(64,1)"),
    ("(8,64):(64,1)", 64, "(8,1):(1,1)"),
])
def test_upcast_examples(layout, n, expected):
    L = P(layout)
    U = cute_py.upcast(L, n)
    assert str(U) == expected
    check_upcast(L, n, U)


@pytest.mark.parametrize("layout, n, expected", [
    ("(64,8):(1,64)", 4, "(256,8):(1,256)"),
    ("(4,8):(-4,1)", 2, "(4,16):(-8,1)"),
    ("(4,8):(0,1)", 2, "(4,16):(0,1)"),
    ("(8,64):(64,1)", 1, "(8,64):(64,1)"),
])
def test_downcast_examples(layout, n, expected):
    L = P(layout)
    D = cute_py.downcast(L, n)
    assert str(D) == expected
    check_downcast(L, n, D)


def test_recast_layout_examples():
    L = P("(8,64):(64,1)")
    assert str(cute_py.recast_layout(L, "f16", "f32")) == "(8,32):(32,1)"
    assert str(cute_py.recast_layout(L, 16, 8)) == "(8,128):(128,1)"
    assert cute_py.recast_layout(L, "bf16", "f16") == L
    assert cute_py.recast_layout(L, 8, 32) == cute_py.upcast(L, 4)
    # a non-integral ratio: upcast by the numerator, then downcast by the denominator
    M = P("(8,48):(48,1)")
    assert str(cute_py.recast_layout(M, 32, 48)) == "(8,32):(32,1)"
    assert cute_py.recast_layout(M, 32, 48) == cute_py.downcast(cute_py.upcast(M, 3), 2)


def test_upcast_divisibility_violations():
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.upcast(P("(4,3):(3,1)"), 2)
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.upcast(P("(4,8):(1,6)"), 4)
    with pytest.raises(cute_py.DivisibilityError):
        cute_py.recast_layout(P("(8,64):(64,1)"), 32, 48)


@pytest.mark.parametrize("n", [0, -2])
def test_bad_factor(n):
    with pytest.raises(cute_py.LayoutError):
        cute_py.upcast(Layout(8), n)
    with pytest.raises(cute_py.LayoutError):
        cute_py.downcast(Layout(8), n)


def test_downcast_needs_stride_one_mode():
    with pytest.raises(cute_py.LayoutError):
        cute_py.downcast(P("(4,4):(2,8)"), 2)
    with pytest.raises(cute_py.LayoutError):
        cute_py.downcast(P("(4,4):(0,4)"), 2)


def test_non_layout_type_errors():
    with pytest.raises(TypeError):
        cute_py.upcast((8, 64), 2)
    with pytest.raises(TypeError):
        cute_py.downcast((8, 64), 2)
    with pytest.raises(TypeError):
        cute_py.max_alignment((8, 64))


def test_sizeof_bits():
    assert cute_py.sizeof_bits(16) == 16
    assert cute_py.sizeof_bits("bf16") == 16
    assert cute_py.sizeof_bits("f16") == 16
    assert cute_py.sizeof_bits("F32") == 32
    assert cute_py.sizeof_bits("e4m3") == 8
    assert cute_py.sizeof_bits("e5m2") == 8
    assert cute_py.sizeof_bits("i4") == 4
    assert cute_py.sizeof_bits("f64") == 64
    assert cute_py.sizeof_bits("u128") == 128
    with pytest.raises(cute_py.LayoutError):
        cute_py.sizeof_bits(0)
    with pytest.raises(TypeError):
        cute_py.sizeof_bits("foo")
    with pytest.raises(TypeError):
        cute_py.sizeof_bits(2.5)


# max_alignment


@pytest.mark.parametrize("layout, expected", [
    ("(4,8):(1,4)", 32),      # coalesces to 32:1
    ("(4,2):(1,16)", 4),
    ("(8,6):(1,16)", 8),
    ("(16,4):(1,32)", 16),
    ("(6,4):(1,6)", 24),
    ("4:2", 1),               # no stride-1 mode
    ("(4,8):(2,8)", 1),
    ("(32,16):(32,1)", 16),   # columns 32 elements apart
])
def test_max_alignment_examples(layout, expected):
    L = P(layout)
    assert cute_py.max_alignment(L) == expected
    assert cxx_max_alignment(L) == expected
    cute_py.upcast(L, expected)


@pytest.mark.parametrize("layout, expected", [
    ("(8,64):(64,1)", 512),   # compact row-major: all 512 elements are one contiguous vector
    ("(8,4):(4,1)", 32),
    ("(2,3):(3,1)", 6),
    ("(4,6):(6,1)", 24),
    ("(8,2,4):(2,1,16)", 64),
])
def test_max_alignment_follows_memory_order(layout, expected):
    """C++ ``max_alignment`` follows the right inverse (memory order), not the domain order:
    ``logical_divide(L, right_inverse(L))`` for a compact row-major layout is one vector."""
    L = P(layout)
    assert cxx_max_alignment(L) == expected
    assert cute_py.max_alignment(L) == expected
    cute_py.upcast(L, expected)


def test_max_alignment_size1_mode_upcast_succeeds():
    """max_alignment is documented as the largest N for which upcast<N> is accepted.
    A size-1 mode keeps a stride (2) that does not divide N; it is never used, so upcast accepts it."""
    L = P("(1,3,1):(0,1,2)")
    a = cute_py.max_alignment(L)
    check_upcast(L, a, cute_py.upcast(L, a))


def test_max_alignment_swizzle_and_composed():
    assert cute_py.max_alignment(cute_py.Swizzle(3, 4, 3)) == 16
    C = P("Sw<3,3,3> o 0 o (8,64):(64,1)")
    assert cute_py.max_alignment(C) == 8


# ---------------------------------------------------------------------------
# properties


@st.composite
def _major_case(draw):
    """A compact row- or col-major layout and a factor n dividing its contiguous extent."""
    shape = draw(shapes(max_leaves=3, max_size=128).filter(lambda s: isinstance(s, tuple) and len(s) >= 2))
    row = draw(st.booleans())
    L = cute_py.make_layout(shape, LayoutRight) if row else Layout(shape)
    k = len(shape) - 1 if row else 0
    ext = product(shape[k])
    assume(ext > 1)  # a size-1 mode has stride 0: no contiguous mode
    n = draw(st.sampled_from([d for d in (1, 2, 3, 4, 6, 8) if ext % d == 0]))
    assume(not isinstance(shape[k], tuple))
    return L, n, k


def _with_mode(coord, k, v):
    c = list(coord)
    c[k] = v
    return tuple(c)


@settings(max_examples=100, deadline=None)
@given(_major_case())
def test_property_upcast_compact_major(case):
    L, n, k = case
    U = cute_py.upcast(L, n)
    check_upcast(L, n, U)
    ext = L.shape[k]
    assert U.shape[k] == ext // n
    # U is compact too: a bijection onto [0, size(L)/n)
    assert sorted(called_values(U)) == list(range(_size(L) // n))
    # U(c) * n == L(c with the contiguous coordinate scaled by n)
    for c in mode_coords(U.shape):
        assert U(c) * n == L(_with_mode(c, k, c[k] * n))
    D = cute_py.downcast(U, n)
    check_downcast(U, n, D)
    if ext > n:
        assert D == L
    # either way, D covers the same offsets as L
    assert sorted(called_values(D)) == list(range(_size(L))) or ext == n


@settings(max_examples=100, deadline=None)
@given(_major_case())
def test_property_downcast_compact_major(case):
    L, n, k = case
    D = cute_py.downcast(L, n)
    check_downcast(L, n, D)
    assert sorted(called_values(D)) == list(range(_size(L) * n))
    for c in mode_coords(D.shape):
        assert D(c) == L(_with_mode(c, k, c[k] // n)) * n + c[k] % n
    assert cute_py.upcast(D, n) == L


@settings(max_examples=150, deadline=None)
@given(layouts(allow_negative=True), st.sampled_from([1, 2, 3, 4, 8]))
def test_property_upcast_accepts_exactly_divisible_strides(L, n):
    ss, ds = _leaves(L)
    ok = all(d == 0 or s == 1 or d % n == 0 or n % abs(d) == 0 for s, d in zip(ss, ds))
    if ok:
        check_upcast(L, n, cute_py.upcast(L, n))
    else:
        with pytest.raises(cute_py.DivisibilityError):
            cute_py.upcast(L, n)


@settings(max_examples=100, deadline=None)
@given(layouts(allow_negative=True), st.sampled_from([1, 2, 3, 4]))
def test_property_downcast_any_layout(L, n):
    _s, ds = _leaves(L)
    if 1 in ds:
        D = cute_py.downcast(L, n)
        check_downcast(L, n, D)
        # offsets scale by n; each old element becomes n adjacent new ones
        dvals = set(called_values(D))
        for i in range(_size(L)):
            assert D(0) + n * (L(i) - L(0)) in dvals
    elif -1 not in ds:
        # C++: static_assert "Downcast requires adjacent elements"
        with pytest.raises(cute_py.LayoutError):
            cute_py.downcast(L, n)


@settings(max_examples=150, deadline=None)
@given(st.one_of(layouts(), compact_layouts()))
def test_property_max_alignment_upcast_succeeds(L):
    a = cute_py.max_alignment(L)
    assert a >= 1
    U = cute_py.upcast(L, a)
    check_upcast(L, a, U)


@settings(max_examples=150, deadline=None)
@given(st.one_of(compact_layouts(), layouts(max_stride=32)))
def test_property_max_alignment_matches_cxx(L):
    try:
        expected = cxx_max_alignment(L)
    except cute_py.LayoutError:
        return
    if expected is None:
        return
    got = cute_py.max_alignment(L)
    # cute_py keeps C++'s value unless some leaf stride would make upcast(L, value) fail
    # (C++ would then not compile the upcast); it then takes the largest divisor upcast admits.
    ss, ds = _leaves(L)
    admits = all(d == 0 or s == 1 or d % expected == 0 or expected % abs(d) == 0 for s, d in zip(ss, ds))
    if admits:
        assert got == expected
    else:
        assert expected % got == 0 and got < expected
