"""The slicing marker ``_`` (CuTe's ``underscore.hpp``): in a coordinate, "keep this whole mode".

Re-exported by :mod:`cute_py.layouts.int_tuple` and at ``cute_py``.
"""

from __future__ import annotations

__all__ = ["Underscore", "_", "is_underscore", "has_underscore"]


class Underscore:
    """The slicing marker ``_`` (CuTe's ``cute::_``): "keep this mode"; a singleton.

    >>> Underscore() is _, _
    (True, _)
    """

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "_"

    def __reduce__(self):
        return (Underscore, ())

    _algebra_operand = True                  # operands.by_owner asks it

    def _right_inverse(self, public):
        """``right_inverse(_)`` and ``left_inverse(_)`` are ``_`` (the identity is its own inverse)."""
        return self

    _left_inverse = _right_inverse


_ = Underscore()


def is_underscore(x) -> bool:
    """True for the slicing marker ``_``."""
    return x is _


def has_underscore(x) -> bool:
    """True if ``_`` appears anywhere in ``x``.

    >>> has_underscore((1, (_, 2)))
    True
    """
    if x is _:
        return True
    if isinstance(x, tuple):
        return any(has_underscore(e) for e in x)
    return False
