"""The ``cute-py`` command's one error type (shared by every subcommand's module)."""

from __future__ import annotations

__all__ = ["CliError"]


class CliError(Exception):
    """A one-line error for the user; ``code`` is the exit status (2: malformed argument, 1: rejected input).

    >>> CliError("unknown operation 'x'").code
    2
    """

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code
