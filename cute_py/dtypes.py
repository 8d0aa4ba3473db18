"""``cute_py.dtypes``: element types (an alias of :mod:`cute_py.layouts.dtypes`)."""

from .layouts.dtypes import *  # noqa: F401,F403
from .layouts.dtypes import __all__  # noqa: F401
