"""``python -m cute_py`` runs the ``cute-py`` command."""

import sys

from cute_py.cli import main

sys.exit(main())
