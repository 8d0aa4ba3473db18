"""The leaves of the shapes and strides a user passes: checked, and converted to the algebra's own.

Lists become tuples and numpy integers Python ints; a leaf that is no IntTuple leaf (an int, a sympy
integer expression, and for strides a basis element or an F2 value) is refused with a message naming the
operation. :func:`_int_leaves` recognises the common input that needs none of this.
"""

from __future__ import annotations

from numbers import Integral

from . import decide, int_tuple as it
from .basis import ArithmeticTuple, ScaledBasis, stride_leaf
from .errors import LayoutError, layout_error, _r
from .f2 import F2


_MAX_DEPTH = 32


def _norm(x, what: str, op: str, depth: int = 0, kinds=None):
    """Lists to tuples, numpy ints to int; reject anything that is not an IntTuple leaf.

    ``kinds`` (a set) collects the kinds of non-zero stride leaves seen (``F2``, ``int``) for the caller's
    check that F2 strides are not mixed with others.
    """
    if isinstance(x, (tuple, list)):
        if type(x) is ArithmeticTuple and kinds is not None:  # a stride leaf or a mode: the shape says (__init__)
            kinds.add(ArithmeticTuple)
            return x
        if depth >= _MAX_DEPTH:
            raise layout_error(LayoutError, op, f"{what} is nested deeper than {_MAX_DEPTH} levels")
        return tuple(_norm(e, what, op, depth + 1, kinds) for e in x)
    if isinstance(x, bool) or not (isinstance(x, Integral) or isinstance(x, (ScaledBasis, F2))):
        if it.is_sym(x):  # a symbolic extent or stride (cute_py.symbolic)
            return decide.check_leaf(x, what, op)
        raise TypeError(f"{op}: {what} leaves must be integers, got {_r(x)} of type {type(x).__name__}")
    if isinstance(x, (ScaledBasis, F2)):
        if what == "shape":
            raise TypeError(f"{op}: shape leaves must be integers, got {x!r}")
        if type(x) is F2 and x.value == 0:               # F2(0) contributes nothing: the stride 0
            return 0
        if type(x) is ScaledBasis and not x.mode:        # E<> scaled: an int, or a multi-term stride
            x = stride_leaf(x)
            if type(x) is not ScaledBasis:
                return _norm(x, what, op, depth, kinds)
        if kinds is not None:
            kinds.add(type(x))
        return x
    x = int(x)
    if what == "shape" and x < 0:
        raise layout_error(LayoutError, op, "shape extents must be non-negative", f"found {x}")
    return x


def _int_leaves(x):
    """The leaves of ``x`` if it is a Python int or a tuple, nested at most twice, of Python ints (the common
    layout), else None (then :func:`_norm` converts and checks)."""
    if type(x) is int:
        return (x,)
    if type(x) is not tuple:
        return None
    out = []
    for e in x:
        if type(e) is int:
            out.append(e)
        elif type(e) is tuple:
            for f in e:
                if type(f) is not int:
                    return None
                out.append(f)
        else:
            return None
    return tuple(out)
