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

>>> extent("4096"), extent("1e4")
(4096, 10000)
"""

from __future__ import annotations

import argparse

__all__ = ["CliError", "extent", "one_line", "EXIT_OK", "EXIT_CHECK_FAILED", "EXIT_ERROR", "EXIT_NO_CUDA",
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


def extent(text: str) -> int:
    """An argparse type for ``--m`` / ``--n`` / ``--k``: an int from 1 to ``cute_py.problem.MAX_EXTENT``.

    Integral numbers in float notation (``1e4``) are read as ints. 0 is refused (an empty GEMM launches
    nothing; :func:`cute_py.gemm.gemm` returns an empty D for it), and so is anything beyond the kernel's
    32-bit extents.

    >>> extent("2147483647")
    2147483647
    >>> for bad in ("0", "-5", "1e11", "12.5", "x"):
    ...     try:
    ...         extent(bad)
    ...     except argparse.ArgumentTypeError as e:
    ...         print(e)
    0 is not a size: give 1 to 2147483647 (an empty GEMM computes nothing)
    -5 is not a size: give 1 to 2147483647 (an empty GEMM computes nothing)
    100000000000 is larger than 2147483647, the kernel's largest extent (32-bit)
    '12.5' is not an integer
    'x' is not an integer
    """
    from .problem import MAX_EXTENT

    try:
        value = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = None
        if f is None or not f.is_integer():
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        value = int(f)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a size: give 1 to {MAX_EXTENT} (an empty GEMM computes "
                                         f"nothing)")
    if value > MAX_EXTENT:
        raise argparse.ArgumentTypeError(f"{value} is larger than {MAX_EXTENT}, the kernel's largest extent (32-bit)")
    return value


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
