"""Swizzle(B, M, S): CuTe's XOR swizzle functor ``x ^ shiftr(x & yyy_msk, S)``."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cute_py
from cute_py import Swizzle, make_swizzle, parse
from strategies import swizzles


def _shiftr(a, s):
    return a >> s if s >= 0 else a << -s


def _popcount(x):
    return bin(x).count("1")


def _lowbit(x):
    return (x & -x).bit_length() - 1


def reference_swizzle(b, m, s, x):
    """Sw<B,M,S>(x) computed from the definition, bit by bit."""
    out = x
    for k in range(b):
        src = m + max(0, s) + k          # a bit of the yyy mask
        dst = m - min(0, s) + k          # the zzz bit it is XORed into
        if x >> src & 1:
            out ^= 1 << dst
    return out


def check_swizzle(sw):
    """Postconditions of a swizzle: masks, bijection and involution on [0, size)."""
    b, m, s = sw.bits, sw.base, sw.shift
    assert b >= 0 and m >= 0 and abs(s) >= b
    n = sw.size()
    assert n == 1 << (b + m + abs(s))
    # masks: B contiguous bits each, the yyy mask shifted by S lands on the zzz mask
    assert _popcount(sw.yyy_msk) == b and _popcount(sw.zzz_msk) == b
    assert _shiftr(sw.yyy_msk, s) == sw.zzz_msk
    assert sw.yyy_msk & sw.zzz_msk == 0
    assert sw.swizzle_code == sw.yyy_msk | sw.zzz_msk
    assert sw.swizzle_code < n
    if b:
        assert sw.yyy_msk == ((1 << b) - 1) << (m + max(0, s))
        assert sw.zzz_msk == ((1 << b) - 1) << (m - min(0, s))
        assert _lowbit(sw.swizzle_code) == m
    else:
        assert sw.yyy_msk == sw.zzz_msk == 0
    image = [sw(x) for x in range(n)]
    assert sorted(image) == list(range(n)), f"{sw} is not a bijection on [0, {n})"
    for x in range(n):
        assert sw(image[x]) == x, f"{sw} is not an involution at {x}"
        assert image[x] == reference_swizzle(b, m, s, x)
        # only the zzz bits can change
        assert (image[x] ^ x) & ~sw.zzz_msk == 0
        # the low M bits never change
        assert image[x] & ((1 << m) - 1) == x & ((1 << m) - 1)
    # bits above the span are untouched: sw(x + k*size) == sw(x) + k*size
    for x in range(0, n, max(1, n // 16)):
        for k in (1, 3):
            assert sw(x + k * n) == image[x] + k * n
    return sw


# ---------------------------------------------------------------------------
# examples


def test_masks_sw343():
    sw = Swizzle(3, 4, 3)
    assert sw.yyy_msk == 0b1110000000 == 896
    assert sw.zzz_msk == 0b0001110000 == 112
    assert sw.swizzle_code == 0b1111110000 == 1008
    assert (sw.bits, sw.base, sw.shift) == (3, 4, 3)
    assert sw.size() == 1024
    check_swizzle(sw)


def test_sw343_values():
    sw = Swizzle(3, 4, 3)
    assert sw(0x80) == 0x90
    assert sw(0x90) == 0x80
    assert sw(0x380) == 0x3F0
    assert [sw(16 * k) for k in range(8)] == [16 * k for k in range(8)]
    # row r of 128 bytes: chunk c -> chunk c ^ r
    for r in range(8):
        for c in range(8):
            assert sw(128 * r + 16 * c) == 128 * r + 16 * (c ^ r)


def test_small_swizzle_values():
    assert [Swizzle(2, 0, 2)(i) for i in range(4, 8)] == [5, 4, 7, 6]
    assert [Swizzle(1, 0, 1)(i) for i in range(4)] == [0, 1, 3, 2]


def test_negative_shift_masks():
    sw = Swizzle(3, 0, -6)
    assert sw.yyy_msk == 0b111
    assert sw.zzz_msk == 0b111000000
    assert sw(0b101) == 0b101000101
    assert sw(0b101000101) == 0b101
    check_swizzle(sw)


@pytest.mark.parametrize("b, m, s", [(0, 4, 3), (0, 0, 0), (3, 3, 3), (3, 4, 3), (2, 4, 3), (1, 4, 3), (2, 1, 5),
                                     (1, 2, 1), (3, 0, -6), (2, 3, -2), (3, 0, 3), (0, 2, -1)])
def test_examples_are_valid(b, m, s):
    check_swizzle(Swizzle(b, m, s))


def test_identity_swizzles():
    for sw in (Swizzle(0, 4, 3), Swizzle(0, 0, 0), Swizzle(0, 2, -5)):
        assert all(sw(x) == x for x in range(1 << 12))


def test_make_swizzle_examples():
    assert make_swizzle(0b1000, 0b0100) == Swizzle(1, 2, 1)
    assert make_swizzle(0b11000000, 0b00000110) == Swizzle(2, 1, 5)


def test_make_swizzle_negative_shift():
    sw = make_swizzle(0b111, 0b111000000)
    assert sw == Swizzle(3, 0, -6)


def test_make_swizzle_empty_masks_is_identity():
    sw = make_swizzle(0, 0)
    assert sw.bits == 0
    assert all(sw(x) == x for x in range(256))


def test_make_swizzle_rejects_bad_masks():
    with pytest.raises(cute_py.LayoutError):
        make_swizzle(0b1100, 0b0001)          # different bit counts
    with pytest.raises(cute_py.LayoutError):
        make_swizzle(0b1010000, 0b101)        # not contiguous runs
    with pytest.raises(cute_py.LayoutError):
        make_swizzle(0b110, 0b011)            # overlapping: |S| < B


@settings(max_examples=100, deadline=None)
@given(swizzles())
def test_property_make_swizzle_roundtrip(sw):
    if sw.bits:
        assert make_swizzle(sw.yyy_msk, sw.zzz_msk) == sw
    else:
        assert make_swizzle(0, 0).bits == 0


@pytest.mark.parametrize("b, m, s", [(1, 0, 0), (3, 4, 2), (2, 0, -1), (4, 0, 3)])
def test_invalid_shift_raises_layout_error(b, m, s):
    with pytest.raises(cute_py.LayoutError):
        Swizzle(b, m, s)


@pytest.mark.parametrize("b, m, s", [(-1, 2, 3), (0, -1, 3), (2, -3, 3), (-2, 0, -3)])
def test_negative_params_raise_layout_error(b, m, s):
    with pytest.raises(cute_py.LayoutError):
        Swizzle(b, m, s)


@pytest.mark.parametrize("args", [(1.0, 2, 3), ("3", 4, 3), (3, 4, None), (3, 4.0, 3), (True, 2, 3), (3, [4], 3)])
def test_non_int_params_raise_type_error(args):
    with pytest.raises(TypeError):
        Swizzle(*args)


def test_str_repr():
    sw = Swizzle(3, 4, 3)
    assert str(sw) == "Sw<3,4,3>"
    assert repr(sw) == "Swizzle(3, 4, 3)"
    assert str(Swizzle(3, 0, -6)) == "Sw<3,0,-6>"
    assert repr(Swizzle(3, 0, -6)) == "Swizzle(3, 0, -6)"
    assert eval(repr(sw), {"Swizzle": Swizzle}) == sw
    assert parse(str(sw)) == sw
    assert parse("Sw<3,0,-6>") == Swizzle(3, 0, -6)


def test_eq_hash_immutable_pickle():
    a, b = Swizzle(3, 4, 3), Swizzle(3, 4, 3)
    assert a == b and hash(a) == hash(b)
    assert a != Swizzle(3, 3, 3) and a != Swizzle(2, 4, 3) and a != Swizzle(3, 4, -3)
    assert a != (3, 4, 3)
    assert len({a, b, Swizzle(3, 3, 3)}) == 2
    with pytest.raises(AttributeError):
        a.bits = 2
    assert pickle.loads(pickle.dumps(a)) == a


# upcast / downcast


def test_upcast_examples():
    sw = Swizzle(3, 4, 3)
    assert sw.upcast(2) == Swizzle(3, 3, 3)
    assert cute_py.upcast(sw, 2) == Swizzle(3, 3, 3)
    assert sw.upcast(16) == Swizzle(3, 0, 3)
    # M would go negative: Swizzle<max(B+M',0), 0, S>
    assert sw.upcast(32) == Swizzle(2, 0, 3)
    assert sw.upcast(128) == Swizzle(0, 0, 3)
    assert sw.upcast(1) == sw


def test_downcast_examples():
    assert Swizzle(3, 3, 3).downcast(2) == Swizzle(3, 4, 3)
    assert cute_py.downcast(Swizzle(3, 3, 3), 2) == Swizzle(3, 4, 3)
    assert Swizzle(2, 0, -2).downcast(4) == Swizzle(2, 2, -2)


def test_recast_swizzle():
    # bytes -> 16-bit elements: the 128B swizzle becomes Sw<3,3,3>
    assert cute_py.recast_layout(Swizzle(3, 4, 3), 8, 16) == Swizzle(3, 3, 3)
    assert cute_py.recast_layout(Swizzle(3, 3, 3), "f16", "u8") == Swizzle(3, 4, 3)
    assert cute_py.recast_layout(Swizzle(3, 4, 3), 8, 8) == Swizzle(3, 4, 3)


@pytest.mark.parametrize("n", [3, 6, 0, -2])
def test_swizzle_recast_non_power_of_two_raises(n):
    with pytest.raises(cute_py.LayoutError):
        Swizzle(3, 4, 3).upcast(n)
    with pytest.raises(cute_py.LayoutError):
        Swizzle(3, 4, 3).downcast(n)


@settings(max_examples=100, deadline=None)
@given(swizzles(), st.sampled_from([1, 2, 4, 8]))
def test_property_upcast_downcast_function(sw, n):
    """Counting in units of n: up(x) == sw(x*n)/n when M >= log2 n; down(x) == sw(x/n)*n + x%n."""
    k = n.bit_length() - 1
    down = sw.downcast(n)
    check_swizzle(down)
    for x in range(down.size()):
        assert down(x) == sw(x // n) * n + x % n
    assert down.upcast(n) == sw
    if sw.base >= k:
        up = sw.upcast(n)
        check_swizzle(up)
        assert up == Swizzle(sw.bits, sw.base - k, sw.shift)
        for x in range(up.size()):
            assert up(x) * n == sw(x * n)
        assert up.downcast(n) == sw
    else:
        up = sw.upcast(n)
        check_swizzle(up)
        assert up.base == 0 and up.bits == max(sw.bits + sw.base - k, 0) and up.shift == sw.shift


def test_max_alignment():
    assert cute_py.max_alignment(Swizzle(3, 4, 3)) == 16
    assert cute_py.max_alignment(Swizzle(3, 3, 3)) == 8
    assert cute_py.max_alignment(Swizzle(2, 0, 3)) == 1


@settings(max_examples=100, deadline=None)
@given(swizzles())
def test_property_max_alignment_keeps_vectors(sw):
    """2^M consecutive aligned offsets stay consecutive (and aligned) under the swizzle."""
    v = cute_py.max_alignment(sw)
    assert v == 1 << sw.base
    for x in range(0, sw.size(), v):
        y = sw(x)
        assert y % v == 0
        assert [sw(x + i) for i in range(v)] == [y + i for i in range(v)]


# ---------------------------------------------------------------------------
# properties


@settings(max_examples=150, deadline=None)
@given(swizzles())
def test_property_swizzle_bijective_involution(sw):
    check_swizzle(sw)


@settings(max_examples=100, deadline=None)
@given(swizzles(), st.integers(0, 1 << 16))
def test_property_matches_definition_on_large_offsets(sw, x):
    assert sw(x) == x ^ _shiftr(x & sw.yyy_msk, sw.shift)
    assert sw(x) == reference_swizzle(sw.bits, sw.base, sw.shift, x)
    assert sw(sw(x)) == x
    assert sw.apply(x) == sw(x)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 3), st.integers(0, 4), st.integers(-5, 5))
def test_property_constructor_accepts_exactly_valid_params(b, m, s):
    if abs(s) >= b:
        check_swizzle(Swizzle(b, m, s))
    else:
        with pytest.raises(cute_py.LayoutError):
            Swizzle(b, m, s)
