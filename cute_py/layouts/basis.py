"""Scaled basis elements ``E<i>`` and arithmetic tuples (coordinate-valued strides).

A layout whose strides are basis elements maps a coordinate to a *coordinate*
instead of an offset: ``make_identity_layout((4, 8))`` is
``(4,8):(1@0,1@1)`` and maps ``(1, 2)`` to ``(1, 2)``. ``v@i`` is ``v * E<i>``,
the vector with ``v`` in mode ``i`` and 0 elsewhere; ``E<i,j>`` (mode ``j`` of
mode ``i``) prints as ``1@j@i``, CuTe's format.

A stride may also be a sum of several terms, an ArithmeticTuple such as
``(1,1)`` (``1@0 + 1@1``). A tuple inside a stride reads as modes, so a layout
keeps such a stride as one leaf, ``ScaledBasis(t, ())``: C++'s ``E<>`` (which
is 1) scaled by the tuple ``t``; it prints as ``t`` does (``stride_leaf``).
"""

from __future__ import annotations

from .int_tuple import is_int, is_sym

__all__ = ["ScaledBasis", "ArithmeticTuple", "E", "make_basis_like", "is_scaled_basis"]


class ArithmeticTuple(tuple):
    """A tuple that adds element-wise (missing trailing elements count as 0).

    Two ArithmeticTuples are equal when they are equal once the shorter is
    extended with zeros (``(1,0) == (1,0,0)``), and they hash alike.

    >>> ArithmeticTuple((1, 2)) + ArithmeticTuple((3,))
    (4,2)
    >>> ArithmeticTuple((1, (2, 3))) + (1, (1, 1))
    (2,(3,4))
    >>> ArithmeticTuple((1, 0)) == ArithmeticTuple((1, 0, 0)), ArithmeticTuple((1, 0)) == ArithmeticTuple((1, 1))
    (True, False)
    """

    __slots__ = ()

    def __new__(cls, items=()):
        if isinstance(items, (str, bytes)):
            raise TypeError(f"ArithmeticTuple: items must be a tuple, got {type(items).__name__} {items!r:.40}")
        try:
            items = iter(items)
        except TypeError:
            raise TypeError(f"ArithmeticTuple: items must be a tuple, got {type(items).__name__}") from None
        return super().__new__(cls, (ArithmeticTuple(x) if isinstance(x, tuple) and not isinstance(x, cls) else x
                                     for x in items))

    def __add__(self, other):
        if isinstance(other, ScaledBasis):
            other = other.to_tuple()
        if is_int(other) and other == 0:
            return self
        if not isinstance(other, tuple):
            return NotImplemented
        other = other if isinstance(other, ArithmeticTuple) else ArithmeticTuple(other)
        n = max(len(self), len(other))
        a = tuple(self) + (0,) * (n - len(self))
        b = tuple(other) + (0,) * (n - len(other))
        return ArithmeticTuple(x + y for x, y in zip(a, b))

    __radd__ = __add__

    def _trimmed(self) -> tuple:
        n = len(self)
        while n and type(self[n - 1]) is int and self[n - 1] == 0:
            n -= 1
        return tuple(self[:n])

    def __eq__(self, other):
        if isinstance(other, ArithmeticTuple):
            return self._trimmed() == other._trimmed()
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self._trimmed())

    def __mul__(self, k):
        if is_int(k) or is_sym(k):
            return ArithmeticTuple(x * k for x in self)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return ArithmeticTuple(-x for x in self)

    def __abs__(self):
        return ArithmeticTuple(abs(x) for x in self)

    def __repr__(self) -> str:
        return "(" + ",".join(str(x) for x in self) + ")"

    __str__ = __repr__


class ScaledBasis:
    """``value * E<mode...>``: a basis element of a coordinate space, scaled.

    ``mode`` is the path of the mode, outermost first: ``E(1, 0)`` is mode 0
    of mode 1.

    >>> print(3 * E(1))
    3@1
    >>> print(E(0) * 2 + E(1) * 5)
    (2,5)
    """

    __slots__ = ("value", "mode")

    def __init__(self, value, mode):
        if not isinstance(mode, (tuple, list)) or not all(is_int(m) and m >= 0 for m in mode):
            raise TypeError(f"ScaledBasis: mode must be a tuple of non-negative ints, got {mode!r:.60}")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "mode", tuple(mode))

    def __setattr__(self, name, v):
        raise AttributeError("ScaledBasis is immutable")

    def __reduce__(self):
        return (ScaledBasis, (self.value, self.mode))

    def to_tuple(self) -> ArithmeticTuple:
        """The element as a (nested) arithmetic tuple: ``E(1)`` is ``(0,1)``."""
        v = self.value
        for m in reversed(self.mode):
            v = ArithmeticTuple((0,) * m + (v,))
        return v

    def as_coordinate(self, shape):
        """The coordinate of ``shape``'s profile with ``value`` in the selected mode and 0 elsewhere
        (``E(1)`` on ``(4, 8)`` is ``(0, 1)``); unchanged where it does not fit ``shape``.

        >>> E(1).as_coordinate((4, (2, 8)))
        (0, 1)
        """
        def extend(c, s):
            if not isinstance(s, tuple) and isinstance(c, tuple) and len(c) == 1:
                return c[0]                                # a rank-1 layout: E(0) is its coordinate 1
            if not isinstance(s, tuple) or not isinstance(c, tuple) or len(c) > len(s):
                return c
            return tuple(extend(c[k], e) if k < len(c) else 0 for k, e in enumerate(s))

        return extend(self.to_tuple(), shape)

    def __mul__(self, k):
        if is_int(k) or is_sym(k):
            return ScaledBasis(self.value * k, self.mode)
        return NotImplemented

    __rmul__ = __mul__

    def __floordiv__(self, k):
        if is_int(k):
            return ScaledBasis(self.value // k, self.mode)
        return NotImplemented

    def __neg__(self):
        return ScaledBasis(-self.value, self.mode)

    def __abs__(self):
        return ScaledBasis(abs(self.value), self.mode)

    def __add__(self, other):
        if is_int(other) and other == 0:
            return self
        if isinstance(other, ScaledBasis):
            if other.mode == self.mode:
                return ScaledBasis(self.value + other.value, self.mode)
            return self.to_tuple() + other.to_tuple()
        if isinstance(other, tuple):
            return self.to_tuple() + other
        return NotImplemented

    __radd__ = __add__

    def __eq__(self, other):
        """Equal to the same element, or to an ArithmeticTuple that is its ``to_tuple()``, as in CuTe,
        where a scaled basis is an arithmetic tuple with one non-zero entry.

        >>> ScaledBasis(4, (2,)) == ArithmeticTuple((0, 0, 4, 0)), E(1) == E(0)
        (True, False)
        """
        if isinstance(other, ScaledBasis):
            return self.value == other.value and self.mode == other.mode
        if isinstance(other, ArithmeticTuple):
            return self.to_tuple() == other
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.to_tuple())                # equal ArithmeticTuples hash alike

    def __str__(self) -> str:
        return f"{self.value}" + "".join(f"@{m}" for m in reversed(self.mode))

    def __repr__(self) -> str:
        if isinstance(self.value, ArithmeticTuple):
            return f"ScaledBasis(ArithmeticTuple({tuple(self.value)!r}), {self.mode!r})"
        if self.value == 1:
            return "E(" + ", ".join(str(m) for m in self.mode) + ")"
        return f"ScaledBasis({self.value!r}, {self.mode!r})"


def E(*mode) -> ScaledBasis:
    """The unit basis element ``E<mode...>`` (outermost mode first).

    >>> print(E(0), E(1, 0))
    1@0 1@0@1
    >>> E(1, 0)
    E(1, 0)
    """
    if not all(is_int(m) and m >= 0 for m in mode):
        raise TypeError(f"E: modes must be non-negative ints, got {mode!r:.60}")
    return ScaledBasis(1, mode)


def stride_leaf(x):
    """A sum of basis terms (an ArithmeticTuple, or a ScaledBasis with no mode) as one stride leaf: 0 when
    every term is 0, ``v@i`` for a single term, else ``ScaledBasis(t, ())`` (C++'s ``E<>`` scaled by the
    tuple ``t``; its value is ``t``). Leaves of ``t`` must be ints or symbolic.

    >>> stride_leaf(ArithmeticTuple((0, 4))), stride_leaf(ArithmeticTuple((0, 0)))
    (ScaledBasis(4, (1,)), 0)
    >>> print(stride_leaf(4 * E(2) + 2 * E(3)))
    (0,0,4,2)
    """
    if isinstance(x, ScaledBasis):
        if x.mode:
            return x
        x = x.value
        if not isinstance(x, tuple):
            return x                                   # E<> is 1
    terms = []

    def walk(t, path):
        out = []
        for i, e in enumerate(t):
            if isinstance(e, tuple):
                out.append(walk(e, path + (i,)))
                continue
            if isinstance(e, bool) or not (is_int(e) or is_sym(e)):
                raise TypeError(f"Layout: ArithmeticTuple stride leaves must be ints or symbolic, got {e!r:.60} in {ArithmeticTuple(x)}")
            e = int(e) if is_int(e) or e.is_Integer else e
            if not (type(e) is int and e == 0):
                terms.append((path + (i,), e))
            out.append(e)
        return ArithmeticTuple(out)

    t = walk(x, ())
    if not terms:
        return 0
    if len(terms) == 1:
        return ScaledBasis(terms[0][1], terms[0][0])
    return ScaledBasis(t, ())


def tuple_strides(shape, stride, kind=ArithmeticTuple):
    """``stride`` with each ArithmeticTuple at a leaf of ``shape`` made one leaf (``stride_leaf``); one at
    a mode of ``shape`` holds that mode's strides (an ArithmeticTuple is a tuple, as in C++). With
    ``kind=tuple`` (the parser, which reads ``(1,1)`` as a plain tuple) any non-empty tuple at a leaf is one.

    >>> tuple_strides((4, 4), (ArithmeticTuple((1, 1)), 4))
    (ScaledBasis(ArithmeticTuple((1, 1)), ()), 4)
    >>> tuple_strides((4, 4), ((1, 1), 4), kind=tuple) == tuple_strides((4, 4), (ArithmeticTuple((1, 1)), 4))
    True
    """
    if isinstance(shape, tuple):
        if isinstance(stride, tuple) and len(stride) == len(shape):
            return tuple(tuple_strides(s, d, kind) for s, d in zip(shape, stride))
        return stride
    return stride_leaf(stride) if isinstance(stride, kind) and (stride or kind is ArithmeticTuple) else stride


def is_scaled_basis(x) -> bool:
    """True for a :class:`ScaledBasis`."""
    return isinstance(x, ScaledBasis)


def make_basis_like(shape, _path=()):
    """Basis strides congruent to ``shape``: ``E<i>`` for mode ``i`` (nested paths for nested modes).

    >>> make_basis_like((4, (2, 3)))
    (E(0), (E(1, 0), E(1, 1)))
    """
    if not isinstance(_path, tuple) or not all(is_int(m) and m >= 0 for m in _path):
        raise TypeError(f"make_basis_like: _path must be a tuple of mode indices, got {_path!r:.60}")
    if isinstance(shape, tuple):
        return tuple(make_basis_like(s, _path + (i,)) for i, s in enumerate(shape))
    return ScaledBasis(1, _path) if _path else 1
