"""cute_py: the CuTe layout algebra in Python, and a Hopper GEMM emitter built on it.

The algebra lives in :mod:`cute_py.layouts` and is re-exported here, so
``cute_py.composition``, ``cute_py.Layout``, ``cute_py._`` ... work as in CuTe.

>>> import cute_py as cute
>>> print(cute.composition(cute.parse("(4,3):(3,1)"), cute.parse("6:2")))
(2,3):(6,1)
"""

from .layouts import *  # noqa: F401,F403
from .layouts import __all__ as _layout_all

__version__ = "0.1.0"
__all__ = list(_layout_all) + ["__version__"]
