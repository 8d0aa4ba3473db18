"""MixedBits (CuTe's ``MixedBits<S, F>``) and the slice of a swizzled layout by a dynamic coordinate."""

from __future__ import annotations

import itertools

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cute_py import ComposedLayout, Layout, LayoutError, MixedBits, Swizzle, _, make_mixed_bits, slice_and_offset
from cute_py import size, to_mixed_bits
from cute_py.layouts.int_tuple import idx2crd
from cute_py.emit import to_c
from cute_py.symbolic import indices, subs
from strategies import swizzles

d0, d1 = indices("d0 d1")


def _val(x, env):
    """The int a MixedBits / expression / int takes at ``env`` (which gives every symbol of it a value: then
    ``xreplace`` is exact and several times faster than ``subs``)."""
    if isinstance(x, MixedBits):
        x = x.value
    return int(sp.sympify(x).xreplace(env)) if not isinstance(x, int) else x


# -- the value type -----------------------------------------------------------

def test_make_mixed_bits_static_precedence_and_decay_to_int():
    # static bits win over flags (C++: new_f = f & ~s); a static d or no flag left gives an int
    assert make_mixed_bits(0b100, 13, 0b111) == 0b101
    assert make_mixed_bits(0b111, d0, 0b111) == 0b111
    x = make_mixed_bits(0b100, d0, 0b110)
    assert (x.static_int, x.flags) == (0b100, 0b010)
    assert x.subs({d0: 3}) == 0b110 and x.subs({d0: 5}) == 0b100


def test_print_as_cute():
    # C++ prints "M_S|(d&F)=value"
    x = to_mixed_bits(Layout(8, 64), d0)
    assert str(x) == "M_0|(64*(Mod(d0,8))&448)=64*(Mod(d0,8))"
    assert str(ComposedLayout(Swizzle(3, 3, 3), x, Layout(4))) == f"Sw<3,3,3> o {x} o 4:1"


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 63), st.integers(0, 63), st.integers(0, 63), st.integers(0, 63), st.integers(0, 3))
def test_bitwise_ops_agree_with_ints(s0, f0, s1, f1, sh):
    # every operator of two MixedBits (or a MixedBits and an int) equals the int operator on their values, for
    # every value of the dynamic parts (C++'s mixedbits exhaustive test, over 6 bits)
    a, b = make_mixed_bits(s0, d0, f0), make_mixed_bits(s1, d1, f1)
    results = {"&": a & b, "|": a | b, "^": a ^ b, "&c": a & s1, "|c": s1 | a, "^c": a ^ s1,
               "<<": (a << sh) if not isinstance(a, int) else a << sh, ">>": a >> sh}
    for v0, v1 in itertools.product(range(64), [0, 5, 42, 63]):
        env = {d0: v0, d1: v1}
        x, y = _val(a, env), _val(b, env)
        want = {"&": x & y, "|": x | y, "^": x ^ y, "&c": x & s1, "|c": x | s1, "^c": x ^ s1,
                "<<": x << sh, ">>": x >> sh}
        for k, r in results.items():
            assert _val(r, env) == want[k], (k, a, b, env)
        for r in results.values():       # the static bits of a result are the same for every value
            if isinstance(r, MixedBits):
                assert _val(r, env) & ~r.flags == r.static_int


def test_bits_stay_static_where_cute_keeps_them():
    x = make_mixed_bits(0, d0, 0b1111)
    assert x & 0b0011 ^ x & 0b0011 == 0          # the same dynamic bits XOR to a static 0
    assert (x | 0b1111) == 0b1111 and (x & 0b10000) == 0
    assert (x ^ 0b110000).static_int == 0b110000


def test_to_mixed_bits_requires_power_of_two_modes():
    assert to_mixed_bits(Layout((2, 4), (1, 8)), 7) == 25     # 1-D coordinate: idx2crd first
    with pytest.raises(LayoutError, match="to_mixed_bits.*power-of-two"):
        to_mixed_bits(Layout(3, 1), d0)


def test_constructor_invariants():
    with pytest.raises(LayoutError, match="MixedBits"):
        MixedBits(1, d0, 1)
    with pytest.raises(TypeError, match="sympy"):
        MixedBits(0, 3, 1)


def test_value_prints_as_c():
    x = to_mixed_bits(Layout((4, 2), (8, 64)), (d0, d1))
    assert to_c(x.value) == "8 * (d0 % 4) + 64 * (d1 % 2)"


def test_swizzle_of_a_dynamic_offset():
    sw = Swizzle(3, 4, 3)
    e = sw(16 * d0)
    assert all(_val(e, {d0: v}) == sw(16 * v) for v in range(300))


# -- slicing a swizzled layout by a dynamic coordinate --------------------------

def _check_slice(L, coord):
    """Brute force: for every value of the symbols in ``coord`` (each < the extent of its mode), the slice
    plus the offset equals L at the full coordinate, the kept modes at the slice's 1-D index."""
    sub, off = slice_and_offset(coord, L)
    modes = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    syms = [c for c in coord if isinstance(c, sp.Basic)]
    ranges = [range(size(modes[coord.index(c)])) for c in syms]
    kept = tuple(size(s) for c, s in zip(coord, modes) if c is _)
    for vals in itertools.product(*ranges):
        env = dict(zip(syms, vals))
        s, o = subs(sub, env), _val(off, env)
        for j in range(size(sub)):
            ks = iter(idx2crd(j, kept) if len(kept) > 1 else (j,))
            full = tuple(next(ks) if c is _ else env.get(c, c) for c in coord)
            assert _val(s(j), env) + o == L(full), (str(L), coord, env, j, str(sub), str(off))
    return sub, off


@pytest.mark.parametrize("coord", [(d0, _), (_, d0)])
def test_slice_128b_swizzle_decays(coord):
    # the kept modes reach only Z (rows) or only Y (columns) bits of Sw<3,3,3>: a plain layout, strides +-Z
    # (or Y+-Z) by the sliced bits of the offset
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 64), (64, 1)))
    sub, _off = _check_slice(L, coord)
    assert isinstance(sub, Layout)


def test_slice_keeps_swizzle_with_mixed_bits_offset():
    # the kept modes (8 rows of 8 chunks) reach Y and Z bits together: Sw o MixedBits o slice
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, 8, 8), (64, 8, 512)))
    sub, off = _check_slice(L, (_, _, d0))
    assert isinstance(sub, ComposedLayout) and sub.offset == 0 and str(off) == "512*d0"
    # Z0 and Y0 kept, Z1-2 and Y1-2 sliced by d0 and d1: their bits are the dynamic bits of the offset
    L = ComposedLayout(Swizzle(3, 3, 3), 0, Layout((2, 2, 4, 4), (8, 64, 16, 128)))
    sub, off = _check_slice(L, (_, _, d0, d1))
    assert isinstance(sub.offset, MixedBits) and (sub.offset.static_int, sub.offset.flags) == (0, 0b110110000)
    assert off == 0 and sub.inner == Layout((2, 2), (8, 64))


@st.composite
def _swizzled(draw):
    sw = draw(swizzles(max_span_bits=8))
    n = draw(st.integers(max(1, sw.bits + sw.base + abs(sw.shift) - 2), 9))
    bits = draw(st.permutations(range(n)))
    cuts = sorted(draw(st.lists(st.integers(1, n - 1), max_size=2, unique=True))) if n > 1 else []
    groups = [bits[a:b] for a, b in zip([0] + cuts, cuts + [n])]
    shape, stride = [], []
    for g in groups:                              # a mode per group of bits: leaves of one bit or runs
        shape.append(tuple(2 for _b in g) if len(g) > 1 else 2)
        stride.append(tuple(1 << b for b in g) if len(g) > 1 else 1 << g[0])
    L = ComposedLayout(sw, draw(st.sampled_from([0, 1 << n])), Layout(tuple(shape), tuple(stride)))
    coord = tuple(draw(st.sampled_from([_, "sym", "int"])) for _g in groups)
    if "sym" not in coord:
        coord = ("sym",) + coord[1:]
    syms = iter(indices("c0 c1 c2"))
    coord = tuple(next(syms) if c == "sym" else draw(st.integers(0, size(s) - 1)) if c == "int" else _
                  for c, s in zip(coord, shape))
    return L, coord


@settings(max_examples=25, deadline=None)  # each is exhaustive over the symbols' values; deep: x10
@given(_swizzled())
def test_slice_by_dynamic_coordinate_agrees_with_brute_force(case):
    L, coord = case
    _check_slice(L, coord)


def test_swizzle_of_an_offset_holding_a_mod_is_exact():
    # sympy 1.14 rewrites Mod(2*Mod(m,64),16) as 2*Mod(Mod(m,64)**2,8); bits_of must not build such a Mod
    # (review of issue 16: Swizzle(1,0,1)(16*Mod(m,8)) at m=2 gave 64, Swizzle(1,0,1)(32) is 32)
    m = sp.Symbol("m", integer=True, nonnegative=True)
    for sw in (Swizzle(1, 0, 1), Swizzle(3, 4, 3), Swizzle(2, 1, 3)):
        for e in (16 * sp.Mod(m, 8), 4 * sp.Mod(m, 4) + 16 * sp.floor(m / 4), 2 * sp.Mod(m, 64) + 1):
            for v in range(40):
                assert int(sp.sympify(sw(e)).subs(m, v)) == sw(int(e.subs(m, v))), (sw, e, v)


def test_dynamic_slice_with_a_nonzero_offset_keeps_the_sum():
    # C++ joins the offset to the sliced-out part by XOR; with bits in common that is not the sum, so an offset
    # other than 0 keeps Sw o (O + L(c)) o slice(L)
    m = sp.Symbol("m", integer=True, nonnegative=True)
    for CL, coord in ((ComposedLayout(Swizzle(1, 0, 1), 3, Layout((4, 4), (1, 4))), (m, _)),
                      (ComposedLayout(Swizzle(2, 0, 2), 64, Layout((8, 8), (1, 8))), (_, m))):
        S, off = slice_and_offset(coord, CL)
        for v in range(CL.inner.shape[0 if coord[0] is m else 1]):
            for i in range(size(S)):
                full = tuple(v if c is m else i for c in coord)
                assert int(sp.sympify(S(i) + off).subs(m, v)) == CL(full)
