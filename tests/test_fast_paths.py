"""The shortcuts of the int algebra answer exactly what the general path answers.

Each public operation answers some inputs without the general machinery (one int mode, a B of zero
strides, a by-mode tiler over modes of int extent and stride, the complement chain built coalesced).
Here each shortcut is compared with the general path on the same inputs, errors included, and the
results are checked as functions by brute force.
"""

from __future__ import annotations

import random

import pytest

from cute_py import Layout, LayoutError, coalesce, complement, composition, left_inverse, logical_divide, right_inverse
from cute_py.layouts import algebra, coalescing, inverse, tiling


def outcome(f, *args):
    """``f(*args)``, or the error's class and message."""
    try:
        return f(*args)
    except LayoutError as e:
        return type(e), str(e)


ONE_MODES = [(s, d) for s in range(0, 10) for d in range(-5, 10)]


@pytest.mark.parametrize("public, core", [(right_inverse, inverse._right_inverse),
                                          (left_inverse, inverse._left_inverse),
                                          (coalesce, coalescing._coalesce)])
def test_one_int_mode_matches_the_general_path(public, core):
    for s, d in ONE_MODES:
        L = Layout(s, d)
        assert outcome(public, L) == outcome(core, L), (public.__name__, L)


def random_layout(rng, strides=(0, 1, 2, 3, 4, 8, 16, -2)):
    n = rng.randint(1, 3)
    fs = tuple(rng.choice((1, 2, 3, 4, 8)) for _ in range(n))
    fd = tuple(rng.choice(strides) for _ in range(n))
    return Layout(fs, fd) if n > 1 else Layout(fs[0], fd[0])


def test_a_zero_stride_b_is_the_result():
    rng = random.Random(3)
    for _ in range(300):
        A = random_layout(rng)
        shape = tuple(rng.choice((1, 2, 5)) for _ in range(rng.randint(1, 3)))
        B = Layout(shape, (0,) * len(shape))
        R = composition(A, B)
        assert R == B
        assert all(R(i) == A(B(i)) == 0 for i in range(R.size()))


@pytest.mark.parametrize("seed", range(3))
def test_by_mode_composition_of_int_modes_matches_each_mode(seed):
    rng = random.Random(seed)
    for _ in range(400):
        s, d = rng.choice((1, 2, 3, 4, 8)), rng.choice((0, 1, 2, -3, 16))
        A = Layout((s, 4), (d, 64))
        t = rng.choice((random_layout(rng), rng.randint(1, 6)))
        got = outcome(composition, A, (t, 2))
        mode = outcome(algebra._compose_tiler, Layout(s, d), t)
        if isinstance(mode, tuple):                       # an error: the same one
            assert got == mode
            continue
        assert got == Layout((mode.shape, 2), (mode.stride, 64))
        assert all(got(i, 0) == A(t(i) if isinstance(t, Layout) else i, 0) for i in range(mode.size()))


@pytest.mark.parametrize("seed", range(3))
def test_by_mode_divide_of_int_modes_matches_each_mode(seed):
    rng = random.Random(10 + seed)
    for _ in range(400):
        s, d = rng.choice((1, 2, 3, 4, 6, 8, 12, 16, 32)), rng.choice((0, 1, 2, -3, 16))
        t = rng.choice((random_layout(rng, (0, 1, 2, 3, 4, 8, 16)), rng.randint(1, 8)))
        A = Layout((s, 3), (d, 512))
        got = outcome(logical_divide, A, (t,))
        mode = outcome(tiling._divide, Layout(s, d), t)
        if isinstance(mode, tuple):
            assert got == mode
            continue
        assert got == Layout((mode.shape, 3), (mode.stride, 512))


@pytest.mark.parametrize("seed", range(3))
def test_complement_chain_is_coalesced_and_correct(seed):
    rng = random.Random(20 + seed)
    checked = 0
    for _ in range(400):
        L = random_layout(rng, (1, 2, 3, 4, 6, 8, 16, 32, 64))
        cotarget = rng.choice((None, 64, 100, 256, 1000))
        R = outcome(complement, L, cotarget)
        if isinstance(R, tuple):
            continue
        checked += 1
        assert coalesce(R) == R                           # built coalesced: no mode of extent 1, nothing merges
        image = {L(i) for i in range(L.size())}
        for i in range(1, R.size()):                      # the complement never reaches L's offsets ...
            assert R(i) not in image
        values = [R(i) for i in range(R.size())]          # ... and is increasing
        assert values == sorted(set(values))
    assert checked > 100


def test_empty_tuple_modes_compose():
    assert composition(Layout((4, 8)), Layout(((), 4), ((), 2))) == Layout(((), 4), ((), 2))
    assert composition(Layout((4, 8)), Layout((), ())) == Layout((), ())
