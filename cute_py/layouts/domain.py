"""Questions about a layout's domain: which coordinates map to 0 (``nullspace``), the largest contiguous
vector two layouts agree on (``max_common_layout``, ``max_common_vector``), and how ``n`` elements spread over
the modes of a shape (``domain_distribute``).

>>> from cute_py import Layout
>>> print(nullspace(Layout((2, 3, 4), (0, 1, 0))), max_common_vector(Layout((4, 8), (1, 4)), Layout(32, 1)))
(2,4):(1,6) 32
"""

from __future__ import annotations

import math

from . import int_tuple as it
from .algebra import composition
from .inverse import right_inverse
from .coalescing import _coalesce, _unwrap, coalesce
from .operands import is_composed, require_layout
from .decide import fail
from .errors import _r, names_caller
from .int_tuple import is_int, is_sym
from .layout import Layout, _is_tensor, require_nonempty

__all__ = ["nullspace", "max_common_layout", "max_common_vector", "domain_distribute"]


def nullspace(layout):
    """The layout of the coordinates mapped to 0: the stride-0 modes, with compact strides.

    Postconditions: ``size(result) == size(layout) // size(filter(layout))``
    and ``layout(result(i)) == 0`` for all ``i``.

    >>> print(nullspace(Layout((2, 3, 4), (0, 1, 0))))
    (2,4):(1,6)
    """
    if is_composed(layout):
        return Layout._make(1, 0)
    require_layout("nullspace", layout)
    fs, fd = it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)
    rstride = it.compact_col_major(fs)
    seq = [i for i, d in enumerate(fd) if d == 0]
    if not seq:
        return Layout._make(1, 0)
    return _unwrap([fs[i] for i in seq], [rstride[i] for i in seq])


def max_common_layout(a, b):
    """The largest contiguous vector on which ``a`` and ``b`` agree, as a layout into their domain.

    Postcondition: for all ``i < size(R)``, ``a(R(i)) == i`` and ``b(R(i)) == i``.

    >>> print(max_common_layout(Layout((8, 64), (64, 1)), Layout((8, 64), (64, 1))))
    (64,8):(8,1)
    >>> print(max_common_layout(Layout((4, 8), (8, 1)), Layout((4, 8), (1, 4))))
    1:0
    """
    owner = _max_common_owner(a, b)
    if owner is not None:
        return owner._max_common(max_common_layout, a, b)
    require_layout("max_common_layout", a, "a")
    require_layout("max_common_layout", b, "b")
    require_nonempty("max_common_layout", a=a, b=b)
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = (common.shape[0], common.stride[0]) if isinstance(common.shape, tuple) else (common.shape, common.stride)
    if d0 == 1 and type(s0) is int:  # CuTe keeps only a static stride-1 mode
        return composition(inv_b, Layout._make(s0, d0))
    return Layout._make(1, 0)


def _max_common_owner(a, b):
    """The operand whose type answers max_common_layout/vector (a tensor first, then a composed layout)."""
    for test in (_is_tensor, is_composed):
        for x in (a, b):
            if test(x):
                return x
    return None


@names_caller
def max_common_vector(a, b) -> int:
    """Number of contiguous elements on which ``a`` and ``b`` agree (at least 1).

    Postcondition: ``a(b.get_1d_coord(n)) == n`` for all ``n < N``.

    >>> max_common_vector(Layout((8, 64), (64, 1)), Layout((8, 64), (64, 1)))
    512
    """
    owner = _max_common_owner(a, b)
    if owner is not None:
        return owner._max_common(max_common_vector, a, b)
    require_layout("max_common_vector", a, "a")
    require_layout("max_common_vector", b, "b")
    require_nonempty("max_common_vector", a=a, b=b)
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = (common.shape[0], common.stride[0]) if isinstance(common.shape, tuple) else (common.shape, common.stride)
    return s0 if d0 == 1 and type(s0) is int else 1


def domain_distribute(a, n: int) -> Layout:
    """Distribute ``n`` elements over the modes of shape ``a`` (gcd per mode, left to right).

    Postconditions: ``evenly_divides(n, size(result))``, ``result`` is strictly
    increasing, and each factor divides its mode of ``a``.

    >>> print(domain_distribute((15, 14), 6))
    (3,2):(1,15)
    """
    a = getattr(a, "shape", a)
    if not is_int(n):
        raise TypeError(f"domain_distribute: n must be an int, got {_r(n)}")
    flat = it.flatten_to_tuple(a)
    if not all(is_int(s) and s >= 1 or is_sym(s) for s in flat):
        raise TypeError(f"domain_distribute: a must be a shape (positive int leaves) or a layout, got {_r(a)}")
    if any(is_sym(s) for s in flat):
        raise fail("domain_distribute", "static extents", "gcd of each extent with n", a=a, n=n)
    res = []
    rest = n
    for s in flat:
        g = math.gcd(s, rest)
        res.append(g)
        rest //= g
    return _coalesce(Layout._make(tuple(res), it.compact_col_major(flat)))
