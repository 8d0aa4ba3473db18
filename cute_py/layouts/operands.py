"""The operands of the layout algebra: what its operations take, and the one dispatch for what is no Layout.

Every public operation (composition, complement, the inverses, coalesce and filter, the divides and the
products) computes on Layouts and starts the same way::

    def logical_divide(layout, tiler):
        if type(layout) is not Layout:
            return by_owner("logical_divide", logical_divide, layout, tiler)
        ...

:func:`by_owner` asks the operand's type for its answer, as C++ overloads each free function per type and
PyCuTe calls a method the class owns: a type answers the operation ``op`` with its method ``_<op>(public,
*args)``, so each type lists the operations it takes (a Tensor the ones on its layout's domain, a composed
layout those that act on its inner layout, a Swizzle composition and the inverses, ``_`` the inverses; each
marks itself ``_algebra_operand = True``, so no other type's method of the same name is called). A
shape (an int, a tuple or a list of extents) stands for its compact column-major layout, as C++ and PyCuTe
read one; anything else is refused with a TypeError naming the operation.

>>> from cute_py import Layout, Swizzle, logical_divide, right_inverse, _
>>> print(logical_divide((8, 6), (2, 3)), right_inverse(_), right_inverse(Swizzle(2, 0, 2)))
((2,4),(3,2)):((1,2),(8,24)) _ Sw<2,0,2>
"""

from __future__ import annotations

from . import int_tuple as it
from .errors import LayoutError, RankError, _r, in_operation, layout_error, led_by
from .int_tuple import _, is_int, is_sym
from .layout import Layout

__all__ = ["by_owner", "layout_operand", "tiler_arg"]


def by_owner(op: str, public, x, *args, name: str = "layout"):
    """``public(x, *args)`` for an operand ``x`` that is not a Layout: the answer of ``x``'s type (its method
    ``_<op>(public, *args)``, on the types that mark themselves ``_algebra_operand``), else of the compact
    layout of the shape ``x`` spells (:func:`layout_operand`; ``name`` is the operand's name in its refusal).
    A TypeError or ValueError raised on the way that another operation leads is led by ``op`` too, so the
    message names the function the user called.

    >>> from cute_py import make_identity_tensor, composition
    >>> print(by_owner("composition", composition, make_identity_tensor((4, 8)), (2, 4)))
    ArithTuple(0,0) o (2,4):(1@0,1@1)
    """
    try:
        own = getattr(type(x), "_" + op, None) if getattr(x, "_algebra_operand", False) else None
        if own is not None:
            return own(x, public, *args)
        return public(layout_operand(op, x, name), *args)
    except (TypeError, ValueError) as e:
        led = led_by(op, e)
        if led is None:
            raise
        raise led from e


def is_composed(x) -> bool:
    """True for a ComposedLayout (internal: ``swizzle.py`` defines it, above this module)."""
    return getattr(x, "_is_composed_layout", False)


def require_layout(op: str, x, name: str = "layout") -> None:
    """A TypeError naming ``op`` and the operand ``name`` unless ``x`` is a Layout."""
    if not isinstance(x, Layout):
        raise TypeError(f"{op}: expected a Layout for {name}, got {type(x).__name__}: {_r(x)}")


def layout_operand(op: str, x, name: str = "layout") -> Layout:
    """``x`` as the layout that composition, a divide, a product or a tiled atom takes: a Layout as it is, a shape
    (an int or a tuple of extents) as its compact column-major layout, as C++ and PyCuTe read one, and a list as
    the tuple it spells (cute_py's reading: PyCuTe and C++ have no lists); else a TypeError naming ``op`` and the
    operand.

    >>> print(layout_operand("logical_divide", (4, 6)))
    (4,6):(1,4)
    """
    if isinstance(x, Layout):
        return x
    if isinstance(x, (tuple, list)) or is_int(x) or is_sym(x):
        try:
            return Layout(x)
        except LayoutError as e:                    # a shape whose extents are wrong: the algebra's error
            raise in_operation(e, op, **{name: x}) from None
        except TypeError as e:
            raise TypeError(f"{op}: {name} is neither a Layout nor a shape: {e}") from None
    raise TypeError(f"{op}: expected a Layout (or a shape: its compact layout) for {name}, got "
                    f"{type(x).__name__}: {_r(x)}")


_TILER = "a tiler is a Layout, an int, _ or a tuple of those"


def tiler_arg(op: str, x, composed: bool = False, shape: bool = False):
    """The tiler ``x`` of ``op``, checked: lists become tuples (recursively); a bool (which would act as 0 or 1)
    and anything that is no Layout, extent or ``_`` (a dict, a string; a swizzle or composed layout unless
    ``composed``, as composition takes them) are refused with a TypeError naming ``op``. With ``shape`` ``x``
    is a shape (a cotarget, a target shape) whose leaves the caller checks: only lists, depth, hashability and
    the sign of int extents are checked here.

    >>> tiler_arg("logical_divide", [2, [3, 4]])
    (2, (3, 4))
    """
    t = type(x)
    if t is Layout or t is int and x > 0:
        return x
    if t is tuple:                              # the common tuple of layouts and extents: nothing to convert
        for e in x:
            if not (type(e) is Layout or type(e) is int and e > 0 or e is _):
                break
        else:
            return x
    if isinstance(x, bool):
        raise TypeError(f"{op}: {_TILER}; got {x!r}")
    if isinstance(x, list) or isinstance(x, tuple) and any(isinstance(e, list) for e in x):
        x = tuple(tiler_arg(op, e, composed, shape) for e in x)
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"{op}: {_TILER}; got {_r(x)}") from None
    if isinstance(x, tuple):
        it.check_depth(op, x)
        for e in it.flatten_to_tuple(x):
            if not (shape or _tiler_leaf(e, composed)):
                raise TypeError(f"{op}: {_TILER}; got {_r(x)}")
            if is_int(e) and e < 1:
                raise layout_error(LayoutError, op, "tiler extents must be positive", f"found {e}", tiler=x)
    elif not (shape or _tiler_leaf(x, composed)):
        raise TypeError(f"{op}: {_TILER}; got {type(x).__name__}: {_r(x)}")
    elif is_int(x) and x < 1:
        raise layout_error(LayoutError, op, "tiler extents must be positive", f"found {x}")
    return _plain_ints(x)


def tiler_modes(op: str, shape, stride, tiler: tuple):
    """The modes of ``shape:stride`` as two tuples, for the tuple ``tiler`` of ``op`` to apply mode by mode; a
    tiler of more modes than the layout has is refused (RankError naming ``op``)."""
    modes = (shape, stride) if type(shape) is tuple else ((shape,), (stride,))
    if len(tiler) > len(modes[0]):
        raise layout_error(RankError, op, "more tiler modes than layout modes", f"{len(tiler)} > {len(modes[0])}",
                           layout=Layout._make(shape, stride), tiler=tiler)
    return modes


def _tiler_leaf(e, composed: bool) -> bool:
    """A tiler's leaf: a Layout, an extent (int or sympy), ``_``; with ``composed`` a swizzle or a composed
    layout too."""
    if isinstance(e, bool):
        return False
    if isinstance(e, Layout) or is_int(e) or is_sym(e) or e is _:
        return True
    return composed and (is_composed(e) or getattr(e, "_is_swizzle", False))


def _plain_ints(x):
    """``x`` with its numpy integer leaves made Python ints (so none reaches a result's shape)."""
    if type(x) is tuple:
        return tuple(_plain_ints(e) for e in x)
    return int(x) if type(x) is not int and is_int(x) else x
