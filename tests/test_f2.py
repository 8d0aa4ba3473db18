"""F2 strides (issue 16): swizzles as layouts over GF(2), their algebra, and the bridge to Triton's LinearLayout.

Every property is checked by brute force against evaluation: an F2 layout's value is the XOR, over its
modes, of the carry-less product of the mode's coordinate and stride (``cute_py.layouts.f2.clmul``), which
these tests also pin by hand.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import settings

import cute_py
from cute_py import (
    F2, Layout, LayoutError, LinearLayout, Swizzle, coalesce, complement, composition, f2_layout,
    from_linear_layout, left_inverse, logical_divide, parse, right_inverse, size, to_linear_layout,
)
from cute_py.layouts.f2 import clmul

SWIZZLES = [Swizzle(b, m, s) for b in range(4) for m in range(4) for s in range(-4, 5) if abs(s) >= b or b == 0]


def rand_f2_layout(rng: random.Random, max_bits=7, out_bits=8, f2=True) -> Layout:
    """Random power-of-two modes; F2 strides (or, with ``f2=False``, int strides of disjoint single bits)."""
    n = rng.randint(1, max_bits)
    ks, left = [], n
    while left:
        k = rng.randint(1, left)
        ks.append(k)
        left -= k
    if f2:
        strides = [F2(rng.randrange(1 << out_bits)) for _ in ks]
    else:                                                # consecutive bit runs, in a random order: disjoint
        strides, b = [0] * len(ks), rng.randrange(3)
        order = list(range(len(ks)))
        rng.shuffle(order)
        for j in order:
            strides[j] = 1 << b
            b += ks[j] + rng.randrange(2)
    return Layout(tuple(1 << k for k in ks), tuple(strides))


def values(L) -> list:
    return [L(i) for i in range(size(L))]


# ---------------------------------------------------------------------------
# the F2 value and evaluation


def test_clmul_and_f2_arithmetic_by_hand():
    assert clmul(0b11, 0b101) == 0b1111            # 101 ^ 1010
    assert clmul(0b101, 0b11) == 0b1111
    assert F2(6) + F2(3) == F2(5) and F2(5) + 0 == F2(5) and 0 + F2(5) == F2(5)
    assert 3 * F2(5) == F2(15) and F2(5) * 2 == F2(10)
    with pytest.raises(TypeError):
        F2(5) + 3                                   # an int offset does not XOR with an F2 one
    with pytest.raises(TypeError):
        F2(-1)


def test_f2_layout_evaluates_by_xor_of_carry_less_products():
    L = Layout((4, 2), (F2(3), F2(4)))
    # coordinate (c0, c1): clmul(c0, 3) ^ clmul(c1, 4); c0 = 3 gives 3 ^ 6 = 5
    assert [L(c0, c1) for c1 in range(2) for c0 in range(4)] == [0, 3, 6, 5, 4, 7, 2, 1]
    assert L.cosize() == 8 and str(L) == "(4,2):(^3,^4)"


def test_layout_refuses_mixed_or_non_power_of_two_f2_modes():
    with pytest.raises(LayoutError, match="every other stride of the layout must be F2"):
        Layout((4, 2), (F2(1), 4))
    with pytest.raises(LayoutError, match="power-of-two extent"):
        Layout(3, F2(1))
    assert Layout((4, 2), (F2(1), 0))(3, 1) == 3     # a stride-0 mode is fine


def test_parse_round_trip():
    L = Layout((128, 8), (F2(1), F2(0x90)))
    assert parse(str(L)) == L
    with pytest.raises(cute_py.ParseError):
        parse("4:^-1")


# ---------------------------------------------------------------------------
# swizzles are F2 layouts


@pytest.mark.parametrize("sw", SWIZZLES, ids=str)
def test_f2_layout_of_every_swizzle_is_the_swizzle(sw):
    L = f2_layout(sw)
    assert size(L) == sw.size()
    assert values(L) == [sw(i) for i in range(sw.size())]


def test_sw343_is_two_modes():
    assert str(f2_layout(Swizzle(3, 4, 3))) == "(128,8):(^1,^144)"


def test_swizzle_composed_with_a_layout():
    inner = Layout((8, 64), (64, 1))
    composed = composition(Swizzle(3, 3, 3), inner)
    L = f2_layout(composed)
    assert values(L) == [composed(i) for i in range(size(inner))]


@pytest.mark.parametrize("a, b", [(Swizzle(3, 4, 3), Swizzle(3, 4, 3)), (Swizzle(2, 0, 2), Swizzle(1, 1, 2)),
                                  (Swizzle(3, 3, 3), Swizzle(2, 4, -2)), (Swizzle(1, 0, 1), Swizzle(3, 4, 3))])
def test_swizzle_o_swizzle(a, b):
    """Swizzle o Swizzle (unimplemented before F2 strides): the composition of the two XOR maps."""
    L = composition(a, b)
    n = max(a.size(), b.size())
    assert size(L) == n
    assert values(L) == [a(b(i)) for i in range(n)]


def test_swizzle_squared_is_identity():
    L = composition(Swizzle(3, 4, 3), Swizzle(3, 4, 3))
    assert coalesce(L) == Layout(1024, 1)           # int strides: the images are disjoint bits again


# ---------------------------------------------------------------------------
# the algebra, by brute force


@pytest.mark.parametrize("seed", range(60))
def test_composition_is_function_composition(seed):
    rng = random.Random(seed)
    a = rand_f2_layout(rng, max_bits=7)
    b = rand_f2_layout(rng, max_bits=5, out_bits=(size(a).bit_length() - 1), f2=rng.random() < 0.5)
    if max(values(b)) >= size(a):
        b = Layout(size(b) if size(b) <= size(a) else size(a), 1)
    r = composition(a, b)
    assert cute_py.int_tuple.compatible(b.shape, r.shape)
    assert values(r) == [a(b(i)) for i in range(size(b))]


def test_composition_past_the_domain_continues_the_last_mode():
    a = Layout((4, 2), (F2(1), F2(6)))
    r = composition(a, Layout(4, 4))                 # index bits 2, 3: the last mode's 6, then 12
    assert values(r) == [0, 6, 12, 10]


@pytest.mark.parametrize("seed", range(60))
def test_right_inverse(seed):
    L = rand_f2_layout(random.Random(seed))
    R = right_inverse(L)
    assert all(L(R(i)) == i for i in range(size(R)))
    images = {L(i) for i in range(size(L))}
    assert size(R) * 2 > max(size(L), 1) or not set(range(size(R) * 2)) <= images  # the longest run


@pytest.mark.parametrize("seed", range(60))
def test_left_inverse_of_injective(seed):
    rng = random.Random(seed)
    L = rand_f2_layout(rng)
    if len(set(values(L))) != size(L):
        with pytest.raises(LayoutError, match="not injective"):
            left_inverse(L)
        return
    R = left_inverse(L)
    assert all(R(L(i)) == i for i in range(size(L)))


@pytest.mark.parametrize("seed", range(60))
def test_complement_completes_the_span(seed):
    rng = random.Random(seed)
    L = rand_f2_layout(rng)
    cot = 1 << rng.randint(1, 10)
    C = complement(L, cot)
    cv = values(C)
    assert cv == sorted(cv)                          # increasing
    span_l = set(values(L))
    # disjoint: no non-zero offset of C is reached by L, and together they reach every offset < cot
    reach = {x ^ y for x in span_l for y in cv}
    assert not (set(cv[1:]) & span_l)
    assert set(range(cot)) <= reach


def test_coalesce_and_divide_keep_the_function():
    L = Layout((2, 2, 4, 8), (F2(1), F2(2), F2(4), F2(0x90)))
    # on 128 indices the bit images 1,2,4,8,0x90,0x120,0x240 share no bit: XOR is +, so coalesce gives ints
    assert coalesce(L) == Layout((16, 8), (1, 0x90))
    assert values(coalesce(L)) == values(L)
    S = Layout((128, 8), (F2(1), F2(0x90)))               # Sw<3,4,3>: 0x90 overlaps bit 4 of the first mode
    assert coalesce(Layout((2, 64, 8), (F2(1), F2(2), F2(0x90)))) == S
    D = logical_divide(L, 16)
    assert values(D) == values(L)


def test_int_operand_that_carries_is_refused():
    with pytest.raises(LayoutError, match="linear over GF"):
        composition(Layout(4, F2(1)), Layout((2, 2), (1, 1)))


# ---------------------------------------------------------------------------
# Triton's LinearLayout


def _brute(L, names, out_shape):
    """{inputs: outputs} by evaluating the layout and splitting offsets colexicographically."""
    modes = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    sizes = [size(m) for m in modes]
    out = {}
    for i in range(size(L)):
        coord = cute_py.int_tuple.idx2crd(i, tuple(sizes))
        coord = coord if isinstance(coord, tuple) else (coord,)
        off = L(*coord) if len(coord) > 1 else L(coord[0])
        out[tuple(coord)] = tuple(cute_py.int_tuple.idx2crd(off, out_shape)) if len(out_shape) > 1 else (off,)
    return out


@pytest.mark.parametrize("seed", range(80))
def test_to_linear_layout_agrees_with_evaluation_and_from_inverts_it(seed):
    rng = random.Random(seed)
    L = rand_f2_layout(rng, f2=rng.random() < 0.6)
    modes = L.shape if isinstance(L.shape, tuple) else (L.shape,)
    names = tuple(f"d{i}" for i in range(len(modes)))
    top = max(L.cosize() - 1, 1).bit_length()
    split = rng.randint(0, top)
    out_shape = (1 << split, 1 << (top - split)) if rng.random() < 0.5 else (1 << top,)
    ll = to_linear_layout(L, in_dims=names, out_shape=out_shape)
    for coord, expect in _brute(L, names, out_shape).items():
        assert ll(**dict(zip(names, coord))) == expect
    back = from_linear_layout(ll)
    assert values(back) == values(L)                 # the same function
    assert to_linear_layout(back, in_dims=names, out_shape=out_shape) == ll


def test_from_linear_layout_of_bases_and_its_int_form():
    ll = {"bases": {"register": [[0, 1], [0, 2]], "lane": [[1, 0], [2, 0], [0, 4]]}, "out_dims": {"m": 4, "n": 8}}
    L = from_linear_layout(ll)
    assert L == Layout((4, (4, 2)), (4, (1, 16)))     # int strides: the images are disjoint bits
    assert LinearLayout(((("register"), ((0, 1), (0, 2))),), (("m", 4), ("n", 8)))(register=3) == (0, 3)


def test_from_linear_layout_gives_f2_strides_where_images_overlap():
    L = from_linear_layout({"bases": {"offset": [[1], [3]]}, "out_dims": {"offset": 4}})
    assert L == Layout((2, 2), (F2(1), F2(3)))
    assert values(L) == [Swizzle(1, 0, 1)(i) for i in range(4)]


def test_linear_layout_refusals():
    with pytest.raises(LayoutError, match="power of two"):
        to_linear_layout(Layout((3, 4)))
    with pytest.raises(LayoutError, match="not linear over GF"):
        to_linear_layout(Layout((2, 2), (1, 1)))
    with pytest.raises(LayoutError, match="power of two"):
        from_linear_layout({"bases": {"x": [[1]]}, "out_dims": {"o": 3}})
    with pytest.raises(LayoutError, match="outside its out dim"):
        from_linear_layout({"bases": {"x": [[4]]}, "out_dims": {"o": 4}})
    with pytest.raises(LayoutError, match="in_dims must be distinct names"):
        to_linear_layout(Layout((4, 4)), in_dims=("a", "a"))


def test_basis_strides_map_to_coordinates():
    L = cute_py.make_identity_layout((4, 8))
    ll = to_linear_layout(L, in_dims=("m", "n"))
    assert ll.out_dims == (("dim0", 4), ("dim1", 8))
    assert all(ll(m=i, n=j) == (i, j) for i in range(4) for j in range(8))


# ---------------------------------------------------------------------------
# review findings (each failed before its fix)


def test_composition_by_mode_stays_f2():
    """Each mode's result alone has disjoint images; together they overlap, so they must stay F2."""
    A = Layout((4, 4), (F2(1), F2(5)))
    R = composition(A, (2, 2))
    assert R((1, 1)) == A((1, 1)) == 4
    L = Layout((8, 8), (F2(1), F2(9)))
    D = logical_divide(L, (2, 4))
    assert all(D(i) == L(i) for i in range(size(L)))


def test_products_of_f2_layouts_are_refused():
    with pytest.raises(LayoutError, match="products of layouts with F2 strides"):
        cute_py.logical_product(Layout((4, 4), (F2(1), F2(5))), Layout(2, 1))
    with pytest.raises(LayoutError, match="products of layouts with F2 strides"):
        cute_py.tile_to_shape(Layout((4, 4), (F2(1), F2(5))), (8, 8))


def test_f2_complement_needs_a_power_of_two_cotarget():
    with pytest.raises(LayoutError, match="power of two"):
        complement(Layout(4, F2(1)), 24)


def test_int_a_past_its_domain_with_f2_b_is_refused():
    with pytest.raises(LayoutError, match="past the domain of A"):
        composition(Layout((2, 1, 4), (32, 8, 1)), Layout((4, 4), (F2(64), F2(1))))


def test_f2_zero_is_stride_zero():
    assert Layout((4, 2), (F2(1), F2(0))) == Layout((4, 2), (F2(1), 0))


# ---------------------------------------------------------------------------
# issue 33: swizzled tiles of more than one period, the in_dims rule, the messages


def _tiles():
    """Sw o (a canonical GMMA atom tiled to 1, 2 and 8 periods; 64 too under the deep profile: about 25 s more),
    K- and MN-major, every swizzle width and dtype."""
    from cute_py.arch.sm90.smem import smem_atom, tile_smem
    deep = settings.get_current_profile_name() == "deep"
    for major in ("K", "MN"):
        for sw in (32, 64, 128):
            for dt, bits in (("bf16", 16), ("e4m3", 8), ("f32", 32)):
                w = sw * 8 // bits
                for periods in (1, 2, 8, 64) if deep else (1, 2, 8):
                    rows = 8 * periods if periods < 8 else 8 * periods // 4
                    cols = w * (periods * 8 // rows)
                    mn, k = (rows, cols) if major == "K" else (cols, rows)
                    yield f"{major}-{sw}B-{dt}-x{periods}", tile_smem(smem_atom(major, sw, dt), mn, k, major=major)


@pytest.mark.parametrize("name, tile", list(_tiles()), ids=lambda x: x if isinstance(x, str) else "")
def test_f2_layout_of_a_swizzled_tile_is_the_tile(name, tile):
    """Failed before the fix on every tile of more than one period (the swizzle's F2 layout covered only its
    own 2^(B+M+S) offsets, and composition continued its last mode, XORing the bits above)."""
    L = f2_layout(tile)
    assert values(L) == [tile(i) for i in range(size(tile))]
    R = right_inverse(L)
    assert size(R) == size(tile) and all(L(R(x)) == x for x in range(size(tile)))
    ll = to_linear_layout(R, ("offset",), tuple(size(m) for m in tile.shape))     # Triton's bases
    assert all(tile(ll(offset=x)) == x for x in range(size(tile)))


def test_the_issue_example_maps_8_0_to_512():
    tile = cute_py.ComposedLayout(Swizzle(3, 3, 3), 0, Layout(((8, 8), (64, 1)), ((64, 512), (1, 0))))
    L = f2_layout(tile)
    assert str(L) == "((8,8),(64,1)):((^72,^512),(^1,0))" and L((8, 0)) == tile((8, 0)) == 512
    ll = to_linear_layout(tile, ("row", "col"), (4096,))
    assert ll(row=8, col=0) == (512,)
    assert sum(L(i) != tile(i) for i in range(4096)) == 0


def test_in_dims_one_name_per_mode_or_one_name_for_the_1d_index():
    tv = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))
    whole = to_linear_layout(tv, in_dims=("offset",), out_shape=(8, 16))
    assert [n for n, _b in whole.bases] == ["offset"]
    assert all(whole(offset=i) == cute_py.int_tuple.idx2crd(tv(i), (8, 16)) for i in range(size(tv)))
    with pytest.raises(LayoutError, match=r"in_dims must be distinct names.*group them into one mode first"):
        to_linear_layout(tv, in_dims=("lane", "lane"))
    with pytest.raises(cute_py.RankError, match=r"in_dims must name each top-level mode.*3 names"):
        to_linear_layout(tv, in_dims=("lane", "register", "warp"))


def test_messages_say_what_is_wrong():
    inner = Layout(((8, 8), (64, 1)), ((64, 512), (1, 0)))
    with pytest.raises(LayoutError, match=r"^to_linear_layout: a composed layout with a nonzero offset is affine"):
        to_linear_layout(cute_py.ComposedLayout(Swizzle(3, 3, 3), 8, inner))
    with pytest.raises(LayoutError, match=r"^f2_layout: a composed layout with a nonzero offset is affine.*offset 8"):
        f2_layout(cute_py.ComposedLayout(Swizzle(3, 3, 3), 8, inner))
    with pytest.raises(LayoutError, match=r"^f2_layout: the outer function of a composed layout must be a Swizzle"):
        f2_layout(cute_py.ComposedLayout(Layout(4, 2), 0, Layout(4)))
    with pytest.raises(TypeError, match=r"^f2_layout: size applies to a Swizzle only"):
        f2_layout(Layout(4), 8)
