"""Divides and products by basis tilers (issue 33): each result, as a function, equals the one by its int twin
(``tests/basis_tilers.py``), and complement with basis strides meets CuTe's postconditions per codomain mode.

Before issue 33, over the 1,848 two-mode tilers of ``basis_tilers.tilers()`` whose twins divide
``(8,8):(9,1)``, ``logical_divide`` gave 666 right, 48 silently wrong, 256 internal errors (every ``(1,1)``
tiler), 56 false "non-injective" errors and 822 refusals; ``logical_product`` gave 64 right and 331 wrong of
1,942. Now every one is right.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import settings

from basis_tilers import A_LAYOUTS, classify, tilers
from cute_py import (
    E, Layout, LayoutError, ScaledBasis, blocked_product, complement, flat_divide, flat_product,
    logical_divide, logical_product, raked_product, size, tiled_divide, tiled_product, zipped_divide,
    zipped_product,
)
from oracle import flat, prod

TILERS = list(tilers())
SAMPLE = TILERS[::37]
"""Every 37th tiler (about 95): every run; the whole enumeration runs under the deep profile."""
OPS = (logical_divide, zipped_divide, tiled_divide, flat_divide,
       logical_product, zipped_product, tiled_product, flat_product)


def counts(op, a, tilers_):
    out = {}
    for t in tilers_:
        r = classify(op, a, t)
        if r is not None:
            out[r] = out.get(r, 0) + 1
    return out


@pytest.mark.parametrize("a", A_LAYOUTS, ids=str)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.__name__)
def test_a_sample_of_basis_tilers_agrees_with_the_int_twins(op, a):
    got = counts(op, a, SAMPLE)
    assert set(got) == {"right"}, got


@pytest.mark.slow
@pytest.mark.skipif(settings.get_current_profile_name() != "deep",
                    reason="the whole enumeration (about 40 s) runs under the deep profile (HYPOTHESIS_PROFILE=deep)")
@pytest.mark.parametrize("a", A_LAYOUTS, ids=str)
@pytest.mark.parametrize("op", (logical_divide, logical_product), ids=lambda op: op.__name__)
def test_every_basis_tiler_agrees_with_its_int_twin(op, a):
    got = counts(op, a, TILERS)
    assert set(got) == {"right"}, got
    assert sum(got.values()) == (1848 if op is logical_divide else 1942)


def test_pycute_zipped_divide_coord():
    """NVlabs PyCuTe's test_zipped_divide_coord: the rest keeps all of A's 64 offsets."""
    r = zipped_divide(Layout((8, 8), (9, 1)), Layout((5, 7), (ScaledBasis(3, (1,)), ScaledBasis(2, (0,)))))
    want = Layout(((5, 7), (2, 3)), ((3, 18), (9, 1)))
    assert [r(i) for i in range(size(want))] == [want(i) for i in range(size(want))]
    a = Layout((8, 8), (9, 1))
    assert {r(i) for i in range(size(r))} >= {a(i) for i in range(64)}


def points(layout, i, n=2):
    v = layout(i)
    if isinstance(v, ScaledBasis):
        v = v.to_tuple()
    v = tuple(v) if isinstance(v, tuple) else (v,)
    return v + (0,) * (n - len(v))


def sums(layout, rest):
    return [tuple(x + y for x, y in zip(points(layout, i), points(rest, j)))
            for i in range(size(layout)) for j in range(size(rest))]


def meets_postconditions(layout, rest, codomain):
    """CuTe's complement postconditions read per codomain mode: ``rest`` is injective and meets ``layout`` only
    at 0 (every sum distinct), and ``cosize(layout ++ rest) >= cotarget`` in each mode."""
    seen = sums(layout, rest)
    return len(set(seen)) == len(seen) and all(max(p[i] for p in seen) + 1 >= n for i, n in enumerate(codomain))


def test_complement_per_codomain_mode():
    L = Layout((2, 2), (ScaledBasis(3, (0,)), E(1)))
    R = complement(L, (8, 8))
    assert str(R) == "((3,2),4):((1@0,6@0),2@1)"
    seen = sums(L, R)
    assert len(set(seen)) == len(seen) and set(seen) >= set(itertools.product(range(8), range(8)))  # all 64
    assert meets_postconditions(L, R, (8, 8))
    assert size(R) >= 64 // size(L)


@pytest.mark.parametrize("t", TILERS[::41], ids=str)
def test_complement_of_a_tiler_meets_the_postconditions(t):
    shapes, strides = flat(t.shape), flat(t.stride)
    offsets = [sum(c * d.value for c, d in zip(crd, strides) if d.mode == (i,))
               for crd in itertools.product(*map(range, shapes)) for i in range(2)]
    if len(set(zip(offsets[::2], offsets[1::2]))) != prod(t.shape):
        pytest.skip("not injective: no complement")
    assert meets_postconditions(t, complement(t, (8, 8)), (8, 8))


@pytest.mark.parametrize("v", [(E(0), E(1)), (E(1), E(0)), (E(0), E(0)), (ScaledBasis(5, (1,)), E(1))], ids=str)
def test_unit_tilers_keep_all_of_a(v):
    """The (1,1) tilers raised a TypeError; they tile by single elements, the rest being all of A."""
    a = Layout((8, 8), (9, 1))
    r = logical_divide(a, Layout((1, 1), v))
    assert sorted(r(i) for i in range(size(r))) == sorted(a(i) for i in range(64))


def test_a_tiler_mode_past_a_is_refused_naming_the_rule():
    with pytest.raises(LayoutError, match=r"logical_divide.*(?s:.*)selects a mode the codomain does not have"):
        logical_divide(Layout((8, 8)), Layout(2, ScaledBasis(1, (2,))))
    with pytest.raises(LayoutError, match="logical_product: a basis stride of B selects a mode A does not have"):
        logical_product(Layout((8, 8)), Layout(2, ScaledBasis(1, (2,))))


@pytest.mark.parametrize("op", (blocked_product, raked_product), ids=lambda op: op.__name__)
def test_blocked_and_raked_products_refuse_basis_tilers(op):
    with pytest.raises(LayoutError, match=f"{op.__name__}: the tiler's strides must be ints"):
        op(Layout((2, 2)), Layout((2, 3), (E(1), E(0))))
