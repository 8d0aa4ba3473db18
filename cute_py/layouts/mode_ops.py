"""Mode-addressed forms of the algebra, as in NVIDIA's PyCuTe: ``op[i](A, ...)`` and ``op(A, ..., mode=i)``.

``composition``, ``coalesce``, ``coalesce_z``, ``logical_divide``, ``zipped_divide`` and
``logical_product``, as exported by :mod:`cute_py.layouts` (and :mod:`cute_py`), accept a mode: the
operation is applied to mode ``i`` of ``A`` and every other mode of ``A`` is left as it is. A nested
mode is a path, ``op[i, j]`` or ``mode=(i, j)``; subscripts accumulate (``op[i][j]`` is ``op[i, j]``)
and come before the ``mode=`` given at the call (``op[i](A, mode=j)`` is ``op[i, j](A)``).

>>> from cute_py import Layout, coalesce, composition, logical_divide
>>> print(composition[1](Layout((4, 6), (1, 4)), Layout(3, 2)))
(4,3):(1,8)
>>> print(logical_divide(Layout((3, 8)), Layout(4, 2), mode=1))
(3,(4,2)):(1,(6,3))
>>> print(coalesce[1](Layout((3, (2, 6)), (1, (3, 6)))))
(3,12):(1,3)

The accessors ``get``, ``shape``, ``stride``, ``size``, ``rank``, ``depth``, ``coshape`` and
``cosize`` read a mode the same way: ``size[1](A)`` is ``size(A, 1)``.

The mode of an int-shaped (rank-1) layout is the layout itself, as in CuTe's ``replace<0>``.
A mode that does not exist raises :class:`~cute_py.layouts.errors.RankError`. Tensors and
composed layouts are addressed through their layout (the inner layout of a composed one).

Without a mode the wrapped function is called directly: ``op(A, B)`` costs one call more than the
plain function (about 0.2 µs on CPython 3.11; the modules of :mod:`cute_py.layouts` call the plain
functions).
"""

from __future__ import annotations

import functools
import inspect
import operator

from .algebra import composition as _composition
from .coalescing import coalesce as _coalesce, coalesce_z as _coalesce_z
from .operands import is_composed
from .errors import LayoutError, RankError, in_operation, layout_error, names_caller, _r
from .layout import Layout, _is_tensor, coshape as _coshape, cosize as _cosize, get as _get
from .queries import depth as _depth, rank as _rank, shape as _shape, size as _size, stride as _stride
from .tiling import logical_divide as _logical_divide, logical_product as _logical_product
from .tiling import zipped_divide as _zipped_divide

__all__ = [
    "ModeOp", "coalesce", "coalesce_z", "composition", "logical_divide", "zipped_divide", "logical_product",
    "get", "shape", "stride", "size", "rank", "depth", "coshape", "cosize",
]

_NAMES_CALLER_CODE = names_caller(len).__code__
"""The code of every :func:`~cute_py.layouts.errors.names_caller` wrapper (to call the function it wraps)."""


_MODE_NOTE = """

    Mode-addressed (:mod:`cute_py.layouts.mode_ops`): ``{name}[i](A, ...)``, or ``mode=i``, applies
    ``{name}`` at mode ``i`` of the first argument (``[i, j]``: a nested mode)."""


def _path(op: str, mode) -> tuple:
    """``mode`` (an int, a tuple of ints, ``()`` or None) as a tuple of ints."""
    if mode is None:
        return ()
    items = mode if isinstance(mode, (tuple, list)) else (mode,)
    try:
        if any(isinstance(i, bool) for i in items):
            raise TypeError
        return tuple(operator.index(i) for i in items)
    except TypeError:
        raise TypeError(f"{op}: a mode is an int or a tuple of ints, got {_r(mode)}") from None


def _mode_str(path: tuple) -> str:
    """``2`` for one index, ``(1,0)`` for a path."""
    return str(path[0]) if len(path) == 1 else "(" + ",".join(map(str, path)) + ")"


class ModeOp:
    """A free function of the algebra with mode-addressed forms (PyCuTe's ``ModeOpDecorator``).

    ``op(*args)`` is the function itself; ``op[i]`` (``op[i, j]`` for a nested mode) is the function
    applied at that mode of the first argument, and so is ``op(*args, mode=i)``. ``__wrapped__`` is
    the plain function, whose name, docstring and signature (with ``mode`` added) the object shows.

    >>> from cute_py import Layout, size, zipped_divide
    >>> size[1](Layout((3, (2, 4)))), size(Layout((3, (2, 4))), mode=(1, 0))
    (8, 2)
    >>> zipped_divide[1]
    <ModeOp zipped_divide[1](layout, tiler, *, mode=())>
    >>> print(zipped_divide[1](Layout((5, 24)), Layout(4, 2)))
    (5,(4,(2,3))):(1,(10,(5,40)))
    """

    def __init__(self, fn, at, mode: tuple = ()):
        if not (inspect.isfunction(fn) and callable(at)):
            raise TypeError(f"ModeOp: fn must be a function and at a callable (how fn applies at a mode), "
                            f"got {_r(fn)} and {_r(at)}")
        functools.update_wrapper(self, fn)
        self._at = at
        self.mode = mode
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        self._first = params[0].name
        kw = inspect.Parameter("mode", inspect.Parameter.KEYWORD_ONLY, default=())
        end = len(params) - (params and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
        self.__signature__ = sig.replace(parameters=params[:end] + [kw] + params[end:])
        self.__doc__ = (fn.__doc__ or "").rstrip() + _MODE_NOTE.format(name=fn.__name__)

    def __call__(self, *args, mode=(), **kwargs):
        return self._call(self.mode + _path(self.__name__, mode), args, kwargs)

    def _call(self, path: tuple, args: tuple, kwargs: dict):
        """The function at mode ``path`` of the first argument (``path == ()``: the function itself)."""
        fn = self.__wrapped__
        if not path:
            return fn(*args, **kwargs)
        if args:
            a, rest = args[0], args[1:]
        elif self._first in kwargs:
            kwargs = dict(kwargs)
            a, rest = kwargs.pop(self._first), ()
        else:
            raise TypeError(f"{self.__name__}: missing the argument {self._first!r} whose mode {path} is addressed")
        return self._at(self.__name__, fn, path, a, rest, kwargs)

    def __getitem__(self, mode):
        return ModeOp(self.__wrapped__, self._at, self.mode + _path(self.__name__, mode))

    def __repr__(self) -> str:
        at = "[" + ", ".join(map(str, self.mode)) + "]" if self.mode else ""
        return f"<ModeOp {self.__name__}{at}{self.__signature__}>"

    def __reduce__(self):
        return _named, (self.__name__, self.mode)


def _project(name, fn, path, a, rest, kwargs):
    """An accessor at a mode: its positional modes follow ``path`` (``size[1](A, 0) == size(A, 1, 0)``)."""
    return fn(a, *path, *rest, **kwargs)


def _replace_at(name, fn, path, a, rest, kwargs):
    """``a`` with mode ``path`` replaced by ``fn(mode, *rest, **kwargs)``."""
    if _is_tensor(a):
        return a._apply(lambda layout: _replace_at(name, fn, path, layout, rest, kwargs))
    if is_composed(a):
        return a._with_inner(_replace_at(name, fn, path, a.inner, rest, kwargs))
    if not isinstance(a, Layout):
        raise TypeError(f"{name}: mode {_mode_str(path)} of {_r(a)} (a {type(a).__name__}): "
                        "a mode is addressed in a Layout, a ComposedLayout or a Tensor")
    s, d = a.shape, a.stride
    for k, i in enumerate(path):
        if isinstance(s, tuple):
            if not -len(s) <= i < len(s):
                raise _no_mode(name, a, path, k, len(s))
            s, d = s[i], d[i]
        elif i not in (0, -1):
            raise _no_mode(name, a, path, k, 1)
    try:
        r = fn(Layout._make(s, d), *rest, **kwargs)
    except LayoutError as e:
        raise in_operation(e, name, mode=path, A=a) from None
    if not isinstance(r, Layout):
        raise TypeError(f"{name}: mode {_mode_str(path)} of {a} would become a {type(r).__name__} ({r}); "
                        "only a Layout can replace a mode")
    return Layout._make(*_replaced(a.shape, a.stride, path, r))


def _no_mode(name, a, path, k, r) -> RankError:
    """The RankError for ``path``, whose index ``k`` is past the end of a rank-``r`` (sub)layout."""
    if k == 0:
        detail = f"mode {path[0]} of a rank-{r} layout"
    else:
        detail = f"mode {_mode_str(path)}: mode {_mode_str(path[:k])} has rank {r}, no mode {path[k]}"
    return layout_error(RankError, name, "no such mode", detail, layout=a)


def _replaced(s, d, path, r):
    """(shape, stride) of ``s:d`` with mode ``path`` replaced by the layout ``r`` (path already checked)."""
    if not path:
        return r.shape, r.stride
    if not isinstance(s, tuple):  # the one mode of an int-shaped layout is the layout
        return _replaced(s, d, path[1:], r)
    i = path[0] % len(s)
    rs, rd = _replaced(s[i], d[i], path[1:], r)
    return s[:i] + (rs,) + s[i + 1:], d[:i] + (rd,) + d[i + 1:]


def _mode_op(fn, at) -> ModeOp:
    """``fn`` as a :class:`ModeOp` of its own subclass, whose ``__call__`` is a function with ``fn``'s
    parameters and ``mode``: without a mode it calls ``fn`` (or, for a ``names_caller`` wrapper, the
    function it wraps, calling the wrapper only to re-raise a plain TypeError/ValueError led by its
    name), so the call costs what ``fn`` costs plus this one call."""
    sig = inspect.signature(fn)
    env = {"_op": None, "_path": _path, "_fn": fn, "_raw": fn, "_no_mode": ()}
    params, args = [], []
    star = False
    for p in sig.parameters.values():
        default = ""
        if p.default is not p.empty:
            env[f"_d_{p.name}"] = p.default
            default = f"=_d_{p.name}"
        if p.kind is p.VAR_POSITIONAL:
            params.append(f"*{p.name}")
            args.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            raise TypeError(f"{fn.__name__}: a function with **{p.name} is not wrapped")
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            params.append(p.name + default)
            args.append(f"{p.name}={p.name}")
        else:
            params.append(p.name + default)
            args.append(p.name)
    params.append("mode=_no_mode" if star else "*, mode=_no_mode")
    call = ", ".join(args)
    pos = ", ".join(a for a in args if "=" not in a)
    kws = ", ".join(f"{a.split('=')[0]!r}: {a.split('=')[0]}" for a in args if "=" in a)
    if getattr(fn, "__code__", None) is _NAMES_CALLER_CODE:
        env["_raw"] = fn.__wrapped__
        direct = (f"        try:\n            return _raw({call})\n"
                  f"        except (TypeError, ValueError) as e:\n"
                  f"            if type(e) is TypeError or type(e) is ValueError:\n"
                  f"                return _fn({call})\n"
                  f"            raise\n")
    else:
        direct = f"        return _fn({call})\n"
    src = (f"def {fn.__name__}({', '.join(params)}):\n"
           f"    if mode is _no_mode:\n{direct}"
           f"    return _op._call(_path({fn.__name__!r}, mode), ({pos}{',' if pos else ''}), {{{kws}}})\n")
    exec(compile(src, f"<ModeOp {fn.__name__}>", "exec"), env)  # noqa: S102 - the source is built above
    cls = type(fn.__name__, (ModeOp,), {"__call__": staticmethod(env[fn.__name__]), "__doc__": ModeOp.__doc__,
                                         "__module__": __name__})
    op = cls(fn, at)
    env["_op"] = op
    _OPS[fn.__name__] = op
    return op


_OPS: dict = {}


def _named(name: str, mode: tuple = ()) -> ModeOp:
    """The op called ``name`` at ``mode`` (how a ModeOp unpickles)."""
    op = _OPS[name]
    return op[mode] if mode else op


coalesce = _mode_op(_coalesce, _replace_at)
coalesce_z = _mode_op(_coalesce_z, _replace_at)
composition = _mode_op(_composition, _replace_at)
logical_divide = _mode_op(_logical_divide, _replace_at)
zipped_divide = _mode_op(_zipped_divide, _replace_at)
logical_product = _mode_op(_logical_product, _replace_at)
get = _mode_op(_get, _project)
shape = _mode_op(_shape, _project)
stride = _mode_op(_stride, _project)
size = _mode_op(_size, _project)
rank = _mode_op(_rank, _project)
depth = _mode_op(_depth, _project)
coshape = _mode_op(_coshape, _project)
cosize = _mode_op(_cosize, _project)
