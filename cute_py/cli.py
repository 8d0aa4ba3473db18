"""The ``cute-py`` command.

``cute-py tour`` (also what plain ``cute-py`` runs) prints a short, live tour of
the layout algebra: every result below is computed when the command runs.

``cute-py show LAYOUT [--swizzle B,M,S] [--format text|svg|latex|html] [--banks --dtype bf16]
[--access PATTERN] [-o FILE]`` draws a layout (CuTe notation); ``cute-py mma ATOM
[--tiled 2,1,1] [--format ...]`` prints an MMA atom or TiledMMA and its TV layouts;
``cute-py explain OP ARG...`` prints the derivation of an algebra operation;
``cute-py gemm --m M --n N --k K [--dtype bf16] [--layout tn|nn|nt|tt] [--spec FILE|example:NAME] [--check]
[--bench] [--arrays auto|torch|driver] [--emit-only -o kernel.cu]`` generates a GEMM from a layout spec, compiles
it and, on a GPU, runs, checks and times it (without a GPU it stops after the compile step and says so);
``cute-py autotune --m M --n N --k K [--layout tn] [--dtype bf16]`` lists the candidate kernels for a shape and,
on a GPU, times them and records the fastest (see cute_py.autotune).

Exit statuses (:mod:`cute_py.cli_errors`): 0 success; 1 ``gemm --check`` found wrong
elements; 2 an error in the input, printed as one line (a malformed argument, a layout
that does not parse, with the position of the bad character, an unknown atom or
operation, an input the algebra rejects, a malformed spec file, a size out of range);
3 the ``cuda`` extra is not installed (the line says what is missing and the pip
command); 4 ``gemm --check`` / ``--bench`` without a usable GPU (compiled, nothing
checked or timed); 141 the reader of the output went away (``cute-py tour | head``).
"""

from __future__ import annotations

import argparse
import sys

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
  141  the reader of the output went away (cute-py tour | head)"""


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


def _parse_error_line(what: str, text: str, err, offset: int = 0) -> str:
    """One line naming the bad character of ``text`` by its position (ParseError.pos)."""
    pos = err.pos + offset
    reason = str(err).splitlines()[0]
    if reason.startswith("parse: "):
        reason = reason[len("parse: "):]
    reason = reason.rsplit(" at position ", 1)[0]
    return (f"malformed {what} {text!r} at position {pos}: {reason}; "
            f"here: {text[:pos]!r} >>> {text[pos:]!r}")


def parse_value(text: str, what: str = "LAYOUT"):
    """Parse a CLI argument: CuTe text, ``_``, or a by-mode tiler ``<a,b,...>``; CliError (code 2) if malformed.

    The error message is one line and names the position of the bad character
    (``ParseError.pos``, shifted to the whole argument for a tiler part).

    >>> parse_value("<4:1,_>")
    (Layout(4, 1), _)
    >>> try:
    ...     parse_value("(4,2]:(1,4)")
    ... except CliError as e:
    ...     print(e)
    malformed LAYOUT '(4,2]:(1,4)' at position 4: expected ')', found ']'; here: '(4,2' >>> ']:(1,4)'
    """
    from .layouts import ParseError, parse
    from .layouts.int_tuple import _

    s = text.strip()
    lead = len(text) - len(text.lstrip())
    if s == "_":
        return _
    if s.startswith("<") and s.endswith(">") and not s.startswith(("S<", "Sw<")):
        parts, depth, start = [], 0, 1
        for i, ch in enumerate(s[1:-1], start=1):
            if ch in "(<":
                depth += 1
            elif ch in ")>":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append((start, s[start:i]))
                start = i + 1
        parts.append((start, s[start:-1]))
        out = []
        for off, part in parts:
            try:
                out.append(_ if part.strip() == "_" else parse(part))
            except ParseError as e:
                raise CliError(_parse_error_line(what, text, e, lead + off)) from None
        return tuple(out)
    try:
        return parse(text)
    except ParseError as e:
        raise CliError(_parse_error_line(what, text, e)) from None


def _ints(text: str, n: int, what: str) -> tuple:
    parts = [p.strip() for p in text.strip("()").split(",")]
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        vals = ()
    if len(vals) != n:
        raise CliError(f"{what} must be {n} comma-separated integers, got {text!r}")
    return vals


def _render(obj, fmt: str, **options) -> str:
    """The picture of ``obj`` in ``fmt`` from cute_py.viz (text, svg, latex or html)."""
    try:
        from . import viz
    except ImportError as e:  # pragma: no cover - viz ships with the package
        raise CliError(f"--format {fmt} needs cute_py.viz, which failed to import: {e}", 1) from None
    fn = getattr(viz, {"text": "to_text", "svg": "to_svg", "latex": "to_latex", "html": "to_html"}[fmt], None)
    if fn is None:
        raise CliError(f"--format {fmt} needs cute_py.viz.to_{fmt}, which this installation does not have", 1)
    full = options.pop("full", False)          # text only: print every cell instead of eliding
    if fmt in ("text", "latex"):                 # text takes only full=; latex takes no options
        options = {"full": full} if fmt == "text" else {}
    return fn(obj, **options)


def _emit(text: str, out) -> None:
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _cmd_show(args) -> int:
    from .layouts import ComposedLayout, Layout, Swizzle, composition
    from .layouts import int_tuple as it

    obj = parse_value(args.layout, "LAYOUT")
    if args.banks or args.access:
        from .layouts.dtypes import dtype

        try:
            dtype(args.dtype)
        except (KeyError, ValueError, TypeError):
            raise CliError(f"unknown --dtype {args.dtype!r} (e.g. bf16, f16, f32, e4m3, s8)") from None
    if it.is_int(obj) or isinstance(obj, tuple):
        try:
            obj = Layout(obj)
        except TypeError:                            # a by-mode tiler <4:1,_>: not one layout
            raise CliError(f"LAYOUT must be a layout, a swizzle or a shape, got {args.layout!r}") from None
    if not isinstance(obj, (Layout, ComposedLayout, Swizzle)):
        raise CliError(f"LAYOUT must be a layout, a swizzle or a shape, got {args.layout!r}")
    symbolic = [] if isinstance(obj, Swizzle) else [x for x in it.flatten_to_tuple(obj.shape) if not it.is_int(x)]
    if symbolic:
        raise CliError(f"cannot draw {args.layout!r}: its extents {', '.join(map(str, symbolic))} are symbolic; "
                       f"drawing needs integer extents, e.g. '(8,4):(4,1)'")
    if args.swizzle:
        sw = Swizzle(*_ints(args.swizzle, 3, "--swizzle"))
        if not isinstance(obj, Layout):
            raise CliError(f"--swizzle applies to a plain layout; {obj} already is a swizzle or composed layout")
        obj = composition(sw, obj)
    if (args.banks or args.access) and isinstance(obj, Swizzle):
        raise CliError("--banks/--access need a layout, not a bare swizzle")
    parts = []
    if args.banks and args.format != "text":
        if args.format == "latex":
            raise CliError("--banks has no LaTeX view; use --format text, svg or html")
        parts.append(_render(obj, args.format, color="bank", dtype=args.dtype))
    elif args.banks:
        from .viz.banks import bank_map

        parts.append(_render(obj, "text", full=args.full).rstrip("\n"))
        parts.append(bank_map(obj, args.dtype).to_text("bank", full=args.full))
    else:
        parts.append(_render(obj, args.format, full=args.full).rstrip("\n"))
    if args.access:
        from .viz.banks import bank_conflicts

        access = parse_value(args.access, "--access") if ":" in args.access else args.access
        report = str(bank_conflicts(obj, access, args.dtype))
        if args.format == "text":
            parts.append(report)
        else:
            sys.stderr.write(report + "\n")
    _emit("\n\n".join(parts), args.output)
    return 0


def _cmd_mma(args) -> int:
    from . import atoms

    try:
        atom = atoms.get(args.atom)
    except Exception as e:  # AtomError (a LayoutError), or a copy op name
        import difflib

        names = [a.name for a in atoms.all_mma_atoms()]
        close = difflib.get_close_matches(args.atom, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CliError(f"unknown MMA atom {args.atom!r}{hint} ({str(e).splitlines()[0]})") from None
    if not isinstance(atom, atoms.MMAAtom):
        raise CliError(f"{args.atom!r} is a copy op, not an MMA atom")
    obj = atom
    if args.tiled:
        obj = atoms.make_tiled_mma(atom, _ints(args.tiled, 3, "--tiled"))
    if args.format == "text":
        text = str(obj).rstrip("\n")
        if args.tiled:
            text += (f"\n  TiledMMA tile MNK: {obj.tile_size}, {obj.num_threads} threads"
                     f"\n  LayoutA_TV: {obj.get_layoutA_TV()}\n  LayoutB_TV: {obj.get_layoutB_TV()}"
                     f"\n  LayoutC_TV: {obj.get_layoutC_TV()}")
    else:
        text = _render(obj, args.format)
    _emit(text, args.output)
    return 0


def _cmd_explain(args) -> int:
    from .viz.explain import OPS, explain

    if args.op not in OPS:
        raise CliError(f"unknown operation {args.op!r}; one of {', '.join(OPS)}")
    values = [parse_value(a, f"ARG {i + 1}") for i, a in enumerate(args.args)]
    try:
        text = str(explain(args.op, *values))
    except LayoutError as e:
        if e.op == "explain":  # wrong number of arguments: a usage error
            raise CliError(str(e)) from None
        raise
    _emit(text, args.output)
    return 0


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
    formats = ("text", "svg", "latex", "html")

    show = sub.add_parser("show", help="draw a layout given in CuTe notation")
    show.add_argument("layout", metavar="LAYOUT", help='e.g. "(4,8):(8,1)" or "Sw<3,3,3> o 0 o (8,64):(64,1)"')
    show.add_argument("--swizzle", metavar="B,M,S", help="compose Sw<B,M,S> on the left of LAYOUT")
    show.add_argument("--full", action="store_true",
                      help="text: print every cell (up to 1048576); by default axes longer than 64 are elided")
    show.add_argument("--format", choices=formats, default="text")
    show.add_argument("--banks", action="store_true", help="show the 4-byte shared-memory bank of every element")
    show.add_argument("--dtype", default="bf16", help="element type for --banks/--access (default bf16)")
    show.add_argument("--access", metavar="PATTERN",
                      help="bank-conflict report for an access: vec32, vec64, vec128, row128 or a TV layout")
    show.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    mma = sub.add_parser("mma", help="print an MMA atom (or TiledMMA) and its TV layouts")
    mma.add_argument("atom", metavar="ATOM", help="CuTe name, e.g. SM80_16x8x16_F32BF16BF16F32_TN")
    mma.add_argument("--tiled", metavar="M,N,K", help="tile the atom over M x N x K atoms, e.g. 2,1,1")
    mma.add_argument("--format", choices=formats, default="text")
    mma.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    exp = sub.add_parser("explain", help="step-by-step derivation of an algebra operation")
    exp.add_argument("op", metavar="OP", help="composition, complement, logical_divide, ..., right_inverse")
    exp.add_argument("args", metavar="ARG", nargs="+", help='layouts in CuTe notation, ints, or tilers "<4:1,8:1>"')
    exp.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    from . import cli_autotune, cli_gemm
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
    from . import cli_autotune
    from .autotune import AutotuneError
    from .problem import GemmInputError
    from .runtime.errors import CudaNotInstalledError, NvrtcNotFoundError

    handler = {"show": _cmd_show, "mma": _cmd_mma, "explain": _cmd_explain, "gemm": _cmd_gemm,
               "autotune": cli_autotune.run}[args.command]
    try:
        return handler(args)
    except CliError as e:
        return _fail(args.command, e, e.code)
    except (CudaNotInstalledError, NvrtcNotFoundError) as e:     # the cuda extra is missing: what, and the pip line
        return _fail(args.command, e, EXIT_NO_CUDA)
    except (LayoutError, GemmInputError, AutotuneError, OSError) as e:
        return _fail(args.command, e, EXIT_ERROR)


def main(argv: list[str] | None = None) -> int:
    """Run ``cute-py`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status (see the module docstring).

    A reader that stops early (``cute-py tour | head``) ends the command quietly with status 141 (128 + SIGPIPE,
    as a C tool killed by the broken pipe), not with a BrokenPipeError traceback.

    >>> main(["explain", "complement", "4:2", "24"])  # doctest: +ELLIPSIS
    complement(4:2, 24): the offsets that 4:2 does not reach, in increasing order
    ...
    result = (2,3):(1,8)
    0
    """
    args = _parser().parse_args(argv)
    try:
        status = _run(args)
        sys.stdout.flush()                       # a closed pipe shows here, not at interpreter exit
    except BrokenPipeError:
        import os

        try:                                     # the interpreter flushes stdout again on the way out
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):    # a stdout without a file descriptor
            pass
        return EXIT_BROKEN_PIPE
    return status
