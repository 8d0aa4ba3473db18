"""``cute_py.layouts.dtypes``: the element types, re-exported from :mod:`cute_py.dtypes`.

The table itself lives at the package's base (:mod:`cute_py.dtypes`, importing nothing of cute_py) so the
algebra and the runtime share one ``DType`` without the runtime importing the algebra.
"""

from ..dtypes import *  # noqa: F401,F403
from ..dtypes import __all__  # noqa: F401
