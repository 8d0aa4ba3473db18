"""Orders on IntTuples of the same profile: lexicographic, colexicographic and elementwise (CuTe's
``int_tuple.hpp``). Re-exported by :mod:`cute_py.layouts.int_tuple`.

>>> lex_less((0, 3), (1, 0)), colex_less((0, 3), (1, 0)), elem_less((0, 3), (1, 4))
(True, False, True)
"""

from __future__ import annotations

from .errors import RankError, layout_error

__all__ = [
    "lex_less", "lex_leq", "lex_gtr", "lex_geq", "colex_less", "colex_leq", "colex_gtr",
    "colex_geq", "elem_less", "elem_leq", "elem_gtr", "elem_geq",
]


def _cmp_check(op, a, b):
    if isinstance(a, tuple) != isinstance(b, tuple):
        raise layout_error(RankError, op, "cannot compare an int with a tuple", a=a, b=b)


def lex_less(a, b) -> bool:
    """Lexicographic ``a < b`` (first mode most significant).

    >>> lex_less((0, 5), (1, 0))
    True
    """
    _cmp_check("lex_less", a, b)
    if not isinstance(a, tuple):
        return a < b
    for x, y in zip(a, b):
        if lex_less(x, y):
            return True
        if x != y:
            return False
    return len(a) < len(b)


def colex_less(a, b) -> bool:
    """Colexicographic ``a < b`` (last mode most significant), the order of col-major indices.

    >>> colex_less((5, 0), (0, 1))
    True
    """
    _cmp_check("colex_less", a, b)
    if not isinstance(a, tuple):
        return a < b
    for x, y in zip(reversed(a), reversed(b)):
        if colex_less(x, y):
            return True
        if x != y:
            return False
    return len(a) < len(b)


def elem_less(a, b) -> bool:
    """Element-wise ``a < b`` in every mode (``a`` may have fewer modes).

    >>> elem_less((1, 2), (4, 8)), elem_less((1, 8), (4, 8))
    (True, False)
    """
    _cmp_check("elem_less", a, b)
    if not isinstance(a, tuple):
        return a < b
    if len(a) > len(b):
        return False
    return all(elem_less(x, y) for x, y in zip(a, b))


def lex_leq(a, b) -> bool:
    """Lexicographic ``a <= b``."""
    return not lex_less(b, a)


def lex_gtr(a, b) -> bool:
    """Lexicographic ``a > b``."""
    return lex_less(b, a)


def lex_geq(a, b) -> bool:
    """Lexicographic ``a >= b``."""
    return not lex_less(a, b)


def colex_leq(a, b) -> bool:
    """Colexicographic ``a <= b``."""
    return not colex_less(b, a)


def colex_gtr(a, b) -> bool:
    """Colexicographic ``a > b``."""
    return colex_less(b, a)


def colex_geq(a, b) -> bool:
    """Colexicographic ``a >= b``."""
    return not colex_less(a, b)


def elem_leq(a, b) -> bool:
    """``not elem_less(b, a)`` (CuTe's definition)."""
    return not elem_less(b, a)


def elem_gtr(a, b) -> bool:
    """``elem_less(b, a)``."""
    return elem_less(b, a)


def elem_geq(a, b) -> bool:
    """``not elem_less(a, b)`` (CuTe's definition)."""
    return not elem_less(a, b)
