"""``cute_py.symbolic``: symbolic extents (sympy integer symbols in shapes, strides and coordinates).

An alias of :mod:`cute_py.layouts.symbolic`; see it for what the algebra does
with symbolic leaves and where it raises :class:`~cute_py.SymbolicError`.

>>> import cute_py
>>> from cute_py.symbolic import symbols
>>> M, K = symbols("M K")
>>> print(cute_py.zipped_divide(cute_py.Layout((M, K), (K, 1)), (128, 64)))
((128,64),(ceiling(M/128),ceiling(K/64))):((K,1),(128*K,64))
"""

from .layouts.symbolic import *  # noqa: F401,F403
from .layouts.symbolic import __all__  # noqa: F401
