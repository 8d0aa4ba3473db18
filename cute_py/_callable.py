"""Modules that can be called: ``cute_py.gemm`` is both the module and, called, its function.

``cute_py.gemm(a, b)`` runs the GEMM, and ``cute_py.gemm.GemmInputError``,
``cute_py.gemm.pick_spec`` or ``import cute_py.gemm as g`` reach the module:
the module's class is switched to :class:`CallableModule`, whose ``__call__``
delegates to the module's function of the same name (``gemm.gemm``,
``autotune.autotune``). So every dotted name the docs give resolves, and
``from cute_py import gemm; gemm(a, b)`` keeps working.

>>> import sys, types
>>> m = types.ModuleType("demo.twice")
>>> m.twice = lambda x: 2 * x
>>> make_callable(m)
>>> m(21), m.twice(1), callable(m)
(42, 2, True)
"""

from __future__ import annotations

import inspect
import types

__all__ = ["CallableModule", "make_callable"]


class CallableModule(types.ModuleType):
    """A module whose call runs its function named like the module's last component.

    >>> import cute_py
    >>> isinstance(cute_py.gemm, CallableModule), cute_py.gemm.gemm.__name__, cute_py.autotune.TOLERANCE
    (True, 'gemm', 0.01)
    """

    def __call__(self, *args, **kwargs):
        """Run this module's function of the same name (``cute_py.gemm(...)`` is ``cute_py.gemm.gemm(...)``)."""
        return getattr(self, self._call_name)(*args, **kwargs)


def make_callable(module: types.ModuleType) -> None:
    """Make ``module`` callable in place (its ``__class__`` becomes :class:`CallableModule`).

    Precondition: ``module`` defines a function named like its last dotted component.

    >>> import types
    >>> m = types.ModuleType("pkg.double")
    >>> m.double = lambda x: x + x
    >>> make_callable(m); m("ab")
    'abab'
    >>> inspect.signature(m)
    <Signature (x)>
    """
    name = module.__name__.rpartition(".")[2]
    if not callable(getattr(module, name, None)):
        raise TypeError(f"make_callable: module {module.__name__} has no function {name}")
    module._call_name = name                                           # looked up per call (monkeypatching works)
    module.__class__ = CallableModule
    module.__signature__ = inspect.signature(getattr(module, name))    # help / Jupyter show the call's arguments
