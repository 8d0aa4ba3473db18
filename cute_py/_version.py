"""The package version (one definition: cute_py.__version__, pyproject and the tuned table read it)."""

__version__ = "0.1.0"
