"""The ``cute-py`` command's error type, exit statuses and argument checks (shared by every subcommand's module).

Exit statuses (``cute-py --help`` and the README list them too):

- ``0`` (:data:`EXIT_OK`): done;
- ``1`` (:data:`EXIT_CHECK_FAILED`): ``cute-py gemm --check`` ran and found wrong elements;
- ``2`` (:data:`EXIT_ERROR`): an error in the input, one line on stderr (a malformed argument, layout or spec
  file, an input the algebra or the spec rules reject, a size out of range, a file that cannot be read);
- ``3`` (:data:`EXIT_NO_CUDA`): the ``cuda`` extra is not installed (cuda-python's bindings or the NVRTC
  library); the line names what is missing and the pip command;
- ``4`` (:data:`EXIT_NO_GPU`): ``--check`` / ``--bench`` were asked for but no usable sm_90 GPU is here: the
  kernel was generated and compiled, nothing was checked or timed.

Every count the command reads (``--m``, ``--groups``, ``--reps``, ``--tiled 2,1,1``, ``--swizzle 3,4,3`` ...)
goes through :func:`integer`: decimal digits with an optional sign, nothing else.

>>> extent("4096"), integers("3,4,-3", 3, "--swizzle B,M,S")
(4096, (3, 4, -3))
"""

from __future__ import annotations

import argparse
import re

__all__ = ["CliError", "count", "extent", "integer", "integers", "one_line", "EXIT_OK", "EXIT_CHECK_FAILED", "EXIT_ERROR", "EXIT_NO_CUDA",
           "EXIT_NO_GPU"]

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_ERROR = 2
EXIT_NO_CUDA = 3
EXIT_NO_GPU = 4


class CliError(Exception):
    """A one-line error for the user; ``code`` is the exit status (:data:`EXIT_ERROR`, 2, unless told).

    >>> CliError("unknown operation 'x'").code
    2
    """

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.code = code


_INTEGER = re.compile(r"[+-]?[0-9]+")


def integer(text: str) -> int:
    """The int written in decimal in ``text`` (an optional sign, then digits); ArgumentTypeError otherwise.

    One reader for every count of the command: ``1e3``, ``1.5``, ``0x100`` and ``1_000`` are all refused.

    >>> integer("-12")
    -12
    >>> for bad in ("1e3", "1.5", "0x100", "1_000", ""):
    ...     try:
    ...         integer(bad)
    ...     except argparse.ArgumentTypeError as e:
    ...         print(e)
    '1e3' is not an integer (write it in decimal digits)
    '1.5' is not an integer (write it in decimal digits)
    '0x100' is not an integer (write it in decimal digits)
    '1_000' is not an integer (write it in decimal digits)
    '' is not an integer (write it in decimal digits)
    """
    if not _INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (write it in decimal digits)")
    return int(text)


def count(text: str) -> int:
    """An argparse type for a count that must be positive (``--reps``, ``--batch`` of autotune): :func:`integer`, >= 1.

    >>> try:
    ...     count("0")
    ... except argparse.ArgumentTypeError as e:
    ...     print(e)
    0 is not positive: give 1 or more
    """
    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive: give 1 or more")
    return value


def extent(text: str) -> int:
    """An argparse type for ``--m`` / ``--n`` / ``--k``: an int from 1 to ``cute_py.problem.MAX_EXTENT``.

    Read by :func:`integer`. 0 is refused (an empty GEMM launches nothing; :func:`cute_py.gemm.gemm` returns an
    empty D for it), and so is anything beyond the kernel's 32-bit extents.

    >>> extent("2147483647")
    2147483647
    >>> for bad in ("0", "-5", "100000000000", "12.5", "1e4", "x"):
    ...     try:
    ...         extent(bad)
    ...     except argparse.ArgumentTypeError as e:
    ...         print(e)
    0 is not a size: give 1 to 2147483647 (an empty GEMM computes nothing)
    -5 is not a size: give 1 to 2147483647 (an empty GEMM computes nothing)
    100000000000 is larger than 2147483647, the kernel's largest extent (32-bit)
    '12.5' is not an integer (write it in decimal digits)
    '1e4' is not an integer (write it in decimal digits)
    'x' is not an integer (write it in decimal digits)
    """
    from .problem import MAX_EXTENT

    value = integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a size: give 1 to {MAX_EXTENT} (an empty GEMM computes "
                                         f"nothing)")
    if value > MAX_EXTENT:
        raise argparse.ArgumentTypeError(f"{value} is larger than {MAX_EXTENT}, the kernel's largest extent (32-bit)")
    return value


def integers(text: str, n: int, what: str, positive: bool = False) -> tuple:
    """``n`` comma-separated :func:`integer` values (``"2,1,1"``, parentheses allowed); CliError naming ``what``.

    >>> try:
    ...     integers("0,1,1", 3, "--tiled", positive=True)
    ... except CliError as e:
    ...     print(e)
    --tiled must be 3 comma-separated positive integers, got '0,1,1'
    """
    parts = text.strip().strip("()").split(",")
    try:
        values = tuple(integer(p) for p in parts)
    except argparse.ArgumentTypeError:
        values = ()
    if len(values) != n or (positive and min(values) < 1):
        raise CliError(f"{what} must be {n} comma-separated {'positive ' if positive else ''}integers, got {text!r}")
    return values


def one_line(message: str) -> str:
    """An error message on one line: its first line, then its other lines (list bullets dropped) after ``;`` and a space.

    >>> one_line("GemmSpec.validate: 2 constraint(s) violated:\\n  - tile = 128 ...\\n  - consumers = 3 ...")
    'GemmSpec.validate: 2 constraint(s) violated: tile = 128 ...; consumers = 3 ...'
    """
    lines = [s.strip() for s in str(message).splitlines() if s.strip()]
    if not lines:
        return ""
    rest = [s[2:] if s.startswith("- ") else s for s in lines[1:]]
    return lines[0] + (" " + "; ".join(rest) if rest else "")
