"""The ``cute-py`` command.

``cute-py tour`` (also what plain ``cute-py`` runs) prints a short, live tour of
the layout algebra: every result below is computed when the command runs.

``cute-py show LAYOUT [--swizzle B,M,S] [--format text|svg|latex|html] [--banks] [--access PATTERN]
[--dtype bf16] [-o FILE]`` draws a layout (CuTe notation); ``cute-py mma ATOM [--tiled 2,1,1] [--format ...]``
prints an MMA atom or TiledMMA and its TV layouts; ``cute-py copy OP [--dtype bf16] [--format ...]`` a copy
atom; ``cute-py explain OP ARG...`` prints the derivation of an algebra operation (see :mod:`cute_py.cli_draw`);
``cute-py gemm --m M --n N --k K [--dtype bf16] [--layout tn|nn|nt|tt] [--spec FILE|example:NAME] [--check]
[--bench] [--arrays auto|torch|driver] [--emit-only] [-o kernel.cu]`` generates a GEMM from a layout spec,
compiles it and, on a GPU, runs, checks and times it (without a GPU it stops after the compile step and says
so); ``cute-py autotune --m M --n N --k K [--layout tn] [--dtype bf16]`` lists the candidate kernels for a
shape and, on a GPU, times them and records the fastest (see cute_py.autotune); ``cute-py swizzle --tile 64x64
--dtype bf16 --write tma --read ldmatrix`` synthesizes the cheapest conflict-free shared-memory layout for those
accesses and prints it with its bank grid and certificate (see cute_py.cli_swizzle).

Every option either changes what the command does or is refused with a message naming it (and the option
it conflicts with): ``cute-py show --dtype f32`` without ``--banks``/``--access`` is an error, not a no-op.

Exit statuses (:mod:`cute_py.cli_errors`): 0 success; 1 ``gemm --check`` found wrong
elements; 2 an error in the input, printed as one line (a malformed argument, a layout
that does not parse, with the position of the bad character, an unknown atom or
operation, an input the algebra rejects, a malformed spec file, a size out of range,
options that conflict); 3 the ``cuda`` extra is not installed (the line says what is missing
and the pip command); 4 ``gemm --check`` / ``--bench`` without a usable GPU (compiled, nothing
checked or timed); 141 the reader of the output went away before the command finished
(``cute-py show "(512,512)" --full | head``; a short output such as the tour's may reach the
pipe whole before the reader leaves, and then the command succeeded: 0).
"""

from __future__ import annotations

import argparse
import sys

from . import cli_draw
from ._version import __version__
from .cli_errors import EXIT_ERROR, EXIT_NO_CUDA, EXIT_OK, CliError, one_line
from .layouts.errors import LayoutError


EXIT_BROKEN_PIPE = 141
"""Exit status when stdout's reader goes away (128 + SIGPIPE, what a C tool killed by the broken pipe gives)."""

EXIT_STATUSES = """exit statuses:
  0  done
  1  gemm --check ran and found wrong elements
  2  an error in the input (one line on stderr): a malformed argument, layout or spec file, an input the
     algebra or the spec rules reject, a size out of range (--m/--n/--k: 1 to 2147483647)
  3  the cuda extra is not installed: pip install "cute-py[cuda]"
  4  gemm --check/--bench without a usable sm_90 GPU: compiled, nothing checked or timed
  141  the reader of the output went away before the command finished (cute-py show "(512,512)" --full | head)"""


def _version() -> str:
    return __version__


def _fmt(arg) -> str:
    """CuTe-style text for a tour argument: a layout, an int, a shape or a tiler."""
    if isinstance(arg, tuple):
        if any(not isinstance(x, (int, tuple)) for x in arg):
            return "<" + ", ".join(_fmt(x) for x in arg) + ">"  # by-mode tiler
        return "(" + ",".join(_fmt(x) for x in arg) + ")"
    return str(arg)


def format_grid(layout, rows: int, cols: int) -> str:
    """Table of ``layout(m, n)`` for 0 <= m < rows, 0 <= n < cols."""
    cells = [[str(layout(m, n)) for n in range(cols)] for m in range(rows)]
    width = max(len(c) for row in cells for c in row)
    width = max(width, len(str(cols - 1)))
    label = len(str(rows - 1))
    head = " " * (label + 2) + " ".join(str(n).rjust(width) for n in range(cols))
    rule = " " * (label + 1) + "+" + "-" * ((width + 1) * cols)
    body = [str(m).rjust(label) + " | " + " ".join(c.rjust(width) for c in row)
            for m, row in enumerate(cells)]
    return "\n".join([head, rule, *body])


def tour() -> None:
    from . import layouts as cp

    P = cp.parse

    def show(name, *args):
        # Layout arguments are given as CuTe text and parsed; ints and shapes as is.
        values = [P(a) if isinstance(a, str) else a for a in args]
        text = ", ".join(_fmt(a) for a in args)
        print(f"  {name}({text}) = {getattr(cp, name)(*values)}")

    print(f"cute-py {_version()}: a tour of the CuTe layout algebra\n")

    print("A layout maps coordinates to offsets; Layout((4,8)) is column-major:")
    grid = cp.Layout((4, 8))
    print(f"  {grid}   size {cp.size(grid)}, cosize {cp.cosize(grid)}\n")
    print(format_grid(grid, 4, 8))

    print("\nThe algebra (each line computed now):")
    show("coalesce", "(2,(1,6)):(1,(6,2))")
    show("composition", "(4,3):(3,1)", "6:2")
    show("composition", "12:2", "(4,3):(3,1)")
    show("complement", "4:2", 24)
    show("right_inverse", "(8,4):(4,1)")
    show("left_inverse", "(8,2):(2,1)")
    show("logical_divide", "24:1", "4:2")
    show("zipped_divide", "(12,32):(32,1)", (P("4:1"), P("8:1")))
    show("logical_product", "(2,2):(1,2)", "(3,4):(1,3)")
    show("blocked_product", "(2,5):(5,1)", "(3,4):(1,3)")
    show("raked_product", "(2,5):(5,1)", "(3,4):(1,3)")
    show("tile_to_shape", "(2,2):(2,1)", (4, 6))

    print("\nA swizzled shared-memory layout (outer function first):")
    swizzled = cp.composition(cp.Swizzle(3, 3, 3), P("(8,64):(64,1)"))
    print(f"  composition(Swizzle(3,3,3), (8,64):(64,1)) = {swizzled}")
    row = " ".join(str(swizzled(1, 8 * j)) for j in range(8))
    print(f"  row 1, columns 0,8,...,56 -> {row}")


def _cmd_gemm(args) -> int:
    from . import cli_gemm

    return cli_gemm.run(args)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``cute-py gemm: error: argument --m: ... (see cute-py gemm --help)``."""

    def error(self, message):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cute-py", description="The CuTe layout algebra in pure Python.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXIT_STATUSES)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("tour", help="print a short live tour of the layout algebra (default)")
    cli_draw.add_parsers(sub)
    from . import cli_autotune, cli_explore, cli_gemm, cli_swizzle
    cli_swizzle.add_parser(sub)
    cli_explore.add_parser(sub)
    cli_gemm.add_parser(sub)
    cli_autotune.add_parser(sub)
    return parser


def _fail(command: str, error, code: int) -> int:
    sys.stderr.write(f"cute-py {command}: error: {one_line(str(error))}\n")
    return code


def _run(args) -> int:
    """Run the parsed command; every error the user can cause becomes one line on stderr and its exit status."""
    if args.command in (None, "tour"):
        tour()
        return EXIT_OK
    from . import cli_autotune, cli_explore, cli_swizzle
    from .autotune import AutotuneError
    from .problem import GemmInputError
    from .runtime.errors import CudaNotInstalledError, NvrtcNotFoundError

    handler = {"show": cli_draw.run_show, "mma": cli_draw.run_mma, "copy": cli_draw.run_copy,
               "explain": cli_draw.run_explain, "swizzle": cli_swizzle.run, "explore": cli_explore.run,
               "gemm": _cmd_gemm, "autotune": cli_autotune.run}[args.command]
    try:
        return handler(args)
    except BrokenPipeError:                                      # stdout's reader went away: main's to handle
        raise
    except CliError as e:
        return _fail(args.command, e, e.code)
    except (CudaNotInstalledError, NvrtcNotFoundError) as e:     # the cuda extra is missing: what, and the pip line
        return _fail(args.command, e, EXIT_NO_CUDA)
    except (LayoutError, GemmInputError, AutotuneError, OSError) as e:
        return _fail(args.command, e, EXIT_ERROR)


_LIST_OPTIONS = ("--swizzle", "--tiled")


def _glue_negative_lists(argv: list[str]) -> list[str]:
    """``--swizzle -1,3,3`` read as ``--swizzle=-1,3,3``.

    argparse takes a value that starts with ``-`` for an option unless it is a plain number, and would only say
    ``expected one argument``; glued, the value reaches the command, which says what is wrong with it.

    >>> _glue_negative_lists(["show", "8:1", "--swizzle", "-1,3,3", "--full"])
    ['show', '8:1', '--swizzle=-1,3,3', '--full']
    """
    out: list[str] = []
    for tok in argv:
        if out and out[-1] in _LIST_OPTIONS and tok[:1] == "-" and tok[1:2].isdigit():
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


def _reader_gone() -> bool:
    """True when stdout is a pipe whose reader has closed it.

    A write that the reader's leaving cuts short returns a short count, which Python's text layer drops without
    a word, so a long output (``show ... --full | head``) would otherwise end with status 0; poll reports the
    closed pipe (POLLERR on the write end) whatever was written.
    """
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):             # a stdout without a file descriptor (captured)
        return False
    if not hasattr(select, "poll"):                           # Windows: no poll; a broken pipe raises there
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _fd, events in poller.poll(0))


def main(argv: list[str] | None = None) -> int:
    """Run ``cute-py`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status (see the module docstring).

    A reader that stops early (``cute-py show "(512,512)" --full | head``) ends every command quietly with
    status 141 (128 + SIGPIPE, as a C tool killed by the broken pipe), not with a BrokenPipeError traceback.

    >>> main(["explain", "complement", "4:2", "24"])  # doctest: +ELLIPSIS
    complement(4:2, 24): the offsets that 4:2 does not reach, in increasing order
    ...
    result = (2,3):(1,8)
    0
    """
    args = _parser().parse_args(_glue_negative_lists(sys.argv[1:] if argv is None else list(argv)))
    try:
        status = _run(args)
        sys.stdout.flush()                       # a closed pipe shows here, not at interpreter exit
        if _reader_gone():
            raise BrokenPipeError
    except BrokenPipeError:
        import os

        try:                                     # the interpreter flushes stdout again on the way out
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):    # a stdout without a file descriptor
            pass
        return EXIT_BROKEN_PIPE
    return status
