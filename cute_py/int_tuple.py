"""``cute_py.int_tuple``: the IntTuple helpers (an alias of :mod:`cute_py.layouts.int_tuple`)."""

from .layouts.int_tuple import *  # noqa: F401,F403
from .layouts.int_tuple import __all__  # noqa: F401
