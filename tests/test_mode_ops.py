"""Mode-addressed forms (issue 16): ``op[i](A, ...)`` and ``op(A, ..., mode=i)`` apply ``op`` at mode ``i`` of A
and leave every other mode unchanged (NVIDIA PyCuTe's ModeOpDecorator). Expected values: PyCuTe's documented
examples, and for random layouts the definition (the other modes untouched, mode i equal to op of mode i) plus
a brute-force evaluation of the composed mode."""

from __future__ import annotations

import inspect
import pickle
import random

import numpy as np
import pytest

import cute_py
import cute_py.layouts.algebra as algebra_mod
import cute_py.layouts.tiling as tiling_mod
from cute_py import (
    ComposedLayout, Layout, ModeOp, RankError, Swizzle, _, coalesce, coalesce_z, composition, cosize, coshape,
    depth, get, logical_divide, logical_product, make_tensor, rank, shape, size, stride, zipped_divide,
)
from cute_py.int_tuple import flatten_to_tuple

REPLACING = [coalesce, coalesce_z, composition, logical_divide, zipped_divide, logical_product]
ACCESSORS = [get, shape, stride, size, rank, depth, coshape, cosize]


# ---------------------------------------------------------------------------
# PyCuTe's documented examples


@pytest.mark.parametrize("got, want", [
    (lambda: composition[1](Layout((4, 6), (1, 4)), Layout(3, 2)), Layout((4, 3), (1, 8))),
    (lambda: logical_divide[1](Layout((3, 8)), Layout(4, 2)), Layout((3, (4, 2)), (1, (6, 3)))),
    (lambda: coalesce[1](Layout((3, (2, 6)), (1, (3, 6)))), Layout((3, 12), (1, 3))),
    (lambda: coalesce_z[1](Layout((3, (2, 6)), (1, (3, 6)))), Layout((3, 12), (1, 3))),
    (lambda: logical_product[0](Layout((3, 5), (1, 20)), Layout(4, 1)), Layout(((3, 4), 5), ((1, 3), 20))),
    (lambda: zipped_divide[1](Layout((5, 24)), Layout(4, 2)), Layout((5, (4, (2, 3))), (1, (10, (5, 40))))),
])
def test_pycute_examples(got, want):
    assert got() == want


def test_every_spelling_of_a_mode_is_the_same():
    A, B = Layout((3, (8, 4)), (1, (3, 24))), Layout(4, 2)
    want = logical_divide[1, 0](A, B)
    assert want == Layout((3, ((4, 2), 4)), (1, ((6, 3), 24)))
    assert logical_divide[1][0](A, B) == want
    assert logical_divide(A, B, mode=(1, 0)) == want
    assert logical_divide(A, B, mode=[1, 0]) == want
    assert logical_divide[1](A, B, mode=0) == want
    assert logical_divide[-1, 0](A, B) == want
    assert logical_divide(A, B, mode=()) == logical_divide(A, B) == logical_divide[()](A, B)
    assert logical_divide[1](A, tiler=B) == logical_divide(A, tiler=B, mode=1)
    assert logical_divide[1](layout=A, tiler=B) == logical_divide[1](A, B)
    assert logical_divide[np.int64(1)](A, B) == logical_divide[1](A, B)


# ---------------------------------------------------------------------------
# The definition, on random layouts


def rand_layout(rng, leaves=4):
    r = rng.randint(1, leaves)
    shp = tuple(rng.choice((1, 2, 3, 4, 6)) for _ in range(r))
    std = tuple(rng.choice((0, 1, 2, 3, 8, 24)) for _ in range(r))
    if r > 2 and rng.random() < 0.6:
        return Layout((shp[0], shp[1:]), (std[0], std[1:]))
    return Layout(shp, std)


def modes_of(A):
    """Every mode path of A down to its leaves (the int-shaped layout's one mode is (0,))."""
    out = []

    def walk(s, path):
        if isinstance(s, tuple):
            for i, e in enumerate(s):
                out.append(path + (i,))
                walk(e, path + (i,))

    walk(A.shape, ())
    return out or [(0,)]


def check_replaced(A, path, R, sub_result):
    """R is A with mode ``path`` replaced by ``sub_result``; every other leaf of A is where it was."""
    assert get(R, *path) == sub_result
    for other in modes_of(A):
        n = min(len(other), len(path))
        if other[:n] != path[:n]:  # a mode beside the path, not above or below it
            assert get(R, *other) == get(A, *other), (A, path, other, R)


@pytest.mark.parametrize("seed", range(40))
def test_composition_at_a_mode_is_composition_of_that_mode(seed):
    rng = random.Random(seed)
    A = rand_layout(rng)
    path = rng.choice(modes_of(A))
    sub = get(A, *path)
    n = size(sub)
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    B = Layout(rng.choice(divisors), rng.choice([1] + [d for d in divisors if d > 1][:1]))
    try:
        want = composition(sub, B)
    except cute_py.LayoutError as e:
        with pytest.raises(type(e)):
            composition[path](A, B)
        return
    R = composition[path](A, B)
    check_replaced(A, path, R, want)
    M = get(R, *path)
    assert [M(i) for i in range(size(B))] == [sub(B(i)) for i in range(size(B))]  # brute force


@pytest.mark.parametrize("seed", range(40))
def test_the_other_replacing_ops_at_a_mode(seed):
    rng = random.Random(1000 + seed)
    A = rand_layout(rng)
    path = rng.choice(modes_of(A))
    sub = get(A, *path)
    T = Layout(rng.choice((1, 2, 3)), rng.choice((1, 2)))
    for op, args in ((coalesce, ()), (coalesce, ((1, 1),)), (coalesce_z, ()), (logical_divide, (T,)),
                     (zipped_divide, (T,)), (logical_product, (T,))):
        try:
            want = op.__wrapped__(sub, *args)
        except cute_py.LayoutError as e:
            with pytest.raises(type(e)):
                op[path](A, *args)
            continue
        check_replaced(A, path, op[path](A, *args), want)


@pytest.mark.parametrize("seed", range(20))
def test_divide_and_product_at_a_top_mode_are_the_by_mode_tiler(seed):
    """At a top-level mode i, a divide/product is CuTe's by-mode tiler with ``_`` everywhere else."""
    rng = random.Random(2000 + seed)
    A = Layout(tuple(rng.choice((2, 4, 6, 8)) for _ in range(rng.randint(2, 3))))
    i = rng.randrange(rank(A))
    T = Layout(2, rng.choice((1, 2)))
    tiler = tuple(T if j == i else _ for j in range(rank(A)))
    assert logical_divide[i](A, T) == logical_divide(A, tiler)
    assert logical_product[i](A, T) == logical_product(A, tiler)
    assert composition[i](A, T) == composition(A, tiler)


def test_the_mode_of_an_int_shaped_layout_is_the_layout():
    A = Layout(24, 1)
    assert logical_divide[0](A, Layout(4, 2)) == logical_divide(A, Layout(4, 2)) == Layout((4, (2, 3)), (2, (1, 8)))
    assert logical_divide[0, 0](A, Layout(4, 2)) == logical_divide(A, Layout(4, 2))
    assert coalesce[-1](Layout(12, 2)) == Layout(12, 2)
    assert composition[1, 0](Layout((4, 6), (1, 4)), 3) == Layout((4, 3), (1, 4))


def test_accessors_read_the_mode():
    A = Layout(((2, 3), 4), ((4, 8), 1))
    assert shape[0](A) == (2, 3) and shape[0, 1](A) == 3 and shape(A, mode=(0, 1)) == 3
    assert size[0](A) == 6 and size[1](A) == 4 and size[0, 0](A) == 2 and size[0](A, 1) == 3
    assert stride[0](A) == (4, 8) and rank[0](A) == 2 and depth[0](A) == 1 and depth[1](A) == 0
    assert get[0, 1](A) == Layout(3, 8) and get(A, mode=1) == Layout(4, 1)
    assert coshape[0](A) == 21 and cosize[0](A) == 21  # 1*4 + 2*8 + 1
    for op in ACCESSORS:
        assert op[0](A) == op.__wrapped__(A, 0)
    with pytest.raises(RankError, match="mode 2 of a rank-2 layout"):
        size[2](A)


def test_tensors_and_composed_layouts_are_addressed_through_their_layout():
    A = Layout((3, (2, 6)), (1, (3, 6)))
    t = make_tensor(np.arange(36), A)
    c = coalesce[1](t)
    assert c.layout == Layout((3, 12), (1, 3))
    assert all(c[i, j] == t[i, j] for i in range(3) for j in range(12))
    sw = ComposedLayout(Swizzle(1, 0, 1), 0, A)
    assert coalesce[1](sw) == ComposedLayout(Swizzle(1, 0, 1), 0, Layout((3, 12), (1, 3)))
    got = logical_divide[1](sw, Layout(4, 3))
    assert got.inner == logical_divide[1](A, Layout(4, 3))
    assert [got(i) for i in range(size(got))] == [sw(got.inner(i)) for i in range(size(got))]


# ---------------------------------------------------------------------------
# Errors


def test_a_mode_that_does_not_exist_names_the_op_the_layout_and_the_mode():
    A = Layout((4, 6), (1, 4))
    with pytest.raises(RankError, match=r"composition: no such mode: mode 2 of a rank-2 layout; layout = \(4,6\)"):
        composition[2](A, 3)
    with pytest.raises(RankError, match=r"logical_divide: .*mode \(1,1\): mode 1 has rank 1, no mode 1"):
        logical_divide(A, 2, mode=(1, 1))
    with pytest.raises(RankError, match=r"coalesce: .*mode \(0,3\): mode 0 has rank 2"):
        coalesce[0, 3](Layout(((2, 2), 6), ((1, 2), 4)))
    with pytest.raises(RankError, match=r"no such mode: mode 1 of a rank-1 layout; layout = 8:1"):
        coalesce_z[1](Layout(8))
    with pytest.raises(RankError, match="mode -3"):
        logical_product[-3](A, 2)


def test_errors_of_the_op_at_the_mode_name_the_mode():
    with pytest.raises(cute_py.DivisibilityError,
                       match=r"composition: .*mode = \(1\), A = \(5,\(4,3\)\):\(1,\(3,1\)\)\n  because composition: "):
        composition[1](Layout((5, (4, 3)), (1, (3, 1))), Layout(3, 2))


@pytest.mark.parametrize("bad", ["a", 1.5, True, (0, "x"), {0: 1}])
def test_a_mode_is_an_int_or_a_tuple_of_ints(bad):
    with pytest.raises(TypeError, match="composition: a mode is an int or a tuple of ints"):
        composition(Layout(4), 2, mode=bad)
    with pytest.raises(TypeError, match="logical_divide: a mode is an int or a tuple of ints"):
        logical_divide[bad]


def test_what_has_no_modes_is_refused():
    with pytest.raises(TypeError, match="composition: mode 0 of 3 .*int"):
        composition[0](3, 2)
    with pytest.raises(TypeError, match="composition: mode 1 .* would become a ComposedLayout"):
        composition[1](Layout((4, 6), (1, 4)), Swizzle(1, 0, 1))
    with pytest.raises(TypeError, match="composition: missing the argument 'a'"):
        composition[0]()
    with pytest.raises(TypeError, match="composition: expected a Layout .* for A"):  # no mode: the plain error
        composition("3", 2)


# ---------------------------------------------------------------------------
# The wrapper: the plain function underneath, and what introspection sees


@pytest.mark.parametrize("op", REPLACING + ACCESSORS, ids=lambda op: op.__name__)
def test_the_wrapper_shows_the_plain_function(op):
    plain = op.__wrapped__
    assert isinstance(op, ModeOp) and not isinstance(plain, ModeOp)
    assert getattr(cute_py, op.__name__) is op and getattr(cute_py.layouts, op.__name__) is op
    assert op.__name__ == plain.__name__ and op.__module__ == plain.__module__
    assert op.__doc__.startswith(plain.__doc__.rstrip()) and f"{op.__name__}[i]" in op.__doc__
    params = list(inspect.signature(op).parameters.values())
    assert params[:-1] == list(inspect.signature(plain).parameters.values())
    assert params[-1].name == "mode" and params[-1].kind is inspect.Parameter.KEYWORD_ONLY
    assert pickle.loads(pickle.dumps(op)) is op
    at = pickle.loads(pickle.dumps(op[1, 0]))
    assert isinstance(at, ModeOp) and at.mode == (1, 0) and at.__wrapped__ is plain
    assert repr(op).startswith(f"<ModeOp {op.__name__}(") and repr(op[1, 0]).startswith(f"<ModeOp {op.__name__}[1, 0](")


def test_internal_modules_keep_the_plain_functions():
    assert not isinstance(algebra_mod.composition, ModeOp)
    assert not isinstance(tiling_mod.logical_divide, ModeOp)
    assert composition.__wrapped__ is algebra_mod.composition


def test_the_call_without_a_mode_gives_what_the_plain_function_gives():
    rng = random.Random(7)
    for _i in range(30):
        A, B = rand_layout(rng), Layout(rng.choice((1, 2, 3)), rng.choice((1, 2)))
        for op, args in ((composition, (A, B)), (logical_divide, (A, B)), (logical_product, (A, B)),
                         (zipped_divide, (A, B)), (coalesce, (A,)), (coalesce_z, (A,)), (size, (A,))):
            try:
                want = op.__wrapped__(*args)
            except (TypeError, ValueError) as e:
                with pytest.raises(type(e), match=str(e)[:40].replace("(", r"\(").replace(")", r"\)")):
                    op(*args)
                continue
            assert op(*args) == want


def test_a_plain_error_is_led_by_the_function_called():
    """Without a mode the wrapper calls the function under ``names_caller``, and re-raises a plain
    TypeError/ValueError through it, so the message still names the function called."""
    with pytest.raises(TypeError, match=r"^zipped_divide: (logical_divide: )?a tiler is"):
        zipped_divide(Layout(4), ("x",))
    with pytest.raises(TypeError, match=r"^zipped_divide: (logical_divide: )?a tiler is"):
        zipped_divide[0](Layout((4, 2)), ("x",))


def test_flattened_leaves_of_replaced_layouts_are_consistent():
    R = logical_divide[1](Layout((3, 8)), Layout(4, 2))
    assert flatten_to_tuple(R.shape) == (3, 4, 2) and flatten_to_tuple(R.stride) == (1, 6, 3)
