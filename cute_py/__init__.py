"""cute_py: the CuTe layout algebra in Python, and a Hopper GEMM emitter built on it.

The algebra lives in :mod:`cute_py.layouts` and is re-exported here, so
``cute_py.composition``, ``cute_py.Layout``, ``cute_py._`` ... work as in CuTe.

>>> import cute_py as cute
>>> print(cute.composition(cute.parse("(4,3):(3,1)"), cute.parse("6:2")))
(2,3):(6,1)
"""

from .layouts import *  # noqa: F401,F403
from .layouts import __all__ as _layout_all
from . import atoms  # noqa: E402
from .atoms import (  # noqa: E402
    CopyAtom, MMAAtom, TiledCopy, TiledMMA, make_copy_atom, make_tiled_copy, make_tiled_copy_A,
    make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma,
)

from ._version import __version__  # noqa: E402
__all__ = list(_layout_all) + [
    "atoms", "MMAAtom", "CopyAtom", "TiledMMA", "TiledCopy", "make_copy_atom", "make_tiled_mma",
    "make_tiled_copy", "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C", "__version__",
]

# Last, the renderers: importing cute_py.viz sets _repr_svg_/_repr_html_ on the layout, atom and
# tiling classes, so notebooks draw them with no extra call (layouts/ and atoms/ never import viz).
from . import viz  # noqa: E402,F401
from .viz.explain import explain  # noqa: E402

__all__ += ["explain"]

# The GEMM product: cute_py.gemm(a, b, ...) (the function; its module is cute_py.gemm's __module__).
from .problem import GemmInputError  # noqa: E402
from .gemm import gemm  # noqa: E402
from .autotune import AutotuneError, autotune  # noqa: E402

__all__ += ["gemm", "autotune", "GemmInputError", "AutotuneError"]
