"""Put tests/ on sys.path so test modules can ``from strategies import ...``, and make hypothesis deterministic.

The default hypothesis profile here is ``deterministic`` (``derandomize=True``, no example database): every run,
CI included, draws the same examples, so a test that passes once passes every time. To explore with fresh
random examples, run ``HYPOTHESIS_PROFILE=explore pytest ...``; a failure found that way is a bug to fix and
then to pin with an ``@example``.
"""

import os
import sys

from hypothesis import settings

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
