"""``cute-py show``, ``mma``, ``copy`` and ``explain``: layouts, atoms and derivations, printed or drawn.

The pictures come from :mod:`cute_py.viz`. The format is ``--format`` or, with ``-o FILE``, the one FILE's
extension names, as :func:`cute_py.viz.save` reads it (``.txt``, ``.svg``, ``.html``/``.htm``, ``.tex``): an
extension that names another format than ``--format``, or one that names none without ``--format``
(``-o out.png``), is refused. ``explain`` prints text only.
"""

from __future__ import annotations

import pathlib
import sys

from .cli_errors import CliError, integers
from .layouts.errors import LayoutError

__all__ = ["add_parsers", "output_format", "parse_value", "run_copy", "run_explain", "run_mma", "run_show"]

FORMATS = ("text", "svg", "latex", "html")
SUFFIX_FORMATS = {".txt": "text", ".svg": "svg", ".html": "html", ".htm": "html", ".tex": "latex"}
"""The format an ``-o`` file's extension names (those :func:`cute_py.viz.save` knows)."""


def add_parsers(sub) -> None:
    """The ``show``, ``mma``, ``copy`` and ``explain`` subcommands."""
    fmt_help = "text (default), svg, latex or html; default: what -o FILE's extension names, else text"
    show = sub.add_parser("show", help="draw a layout given in CuTe notation")
    show.add_argument("layout", metavar="LAYOUT", help='e.g. "(4,8):(8,1)" or "Sw<3,3,3> o 0 o (8,64):(64,1)"')
    show.add_argument("--swizzle", metavar="B,M,S", help="compose Sw<B,M,S> on the left of LAYOUT")
    show.add_argument("--full", action="store_true",
                      help="text: print every cell (up to 1048576); by default axes longer than 64 are elided")
    show.add_argument("--format", choices=FORMATS, help=fmt_help)
    show.add_argument("--banks", action="store_true", help="show the 4-byte shared-memory bank of every element")
    show.add_argument("--dtype", help="element type for --banks/--access (default bf16)")
    show.add_argument("--access", metavar="PATTERN",
                      help="bank-conflict report for an access: vec32, vec64, vec128, row128 or a TV layout")
    show.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    mma = sub.add_parser("mma", help="print an MMA atom (or TiledMMA) and its TV layouts")
    mma.add_argument("atom", metavar="ATOM", help="CuTe name, e.g. SM80_16x8x16_F32BF16BF16F32_TN")
    mma.add_argument("--tiled", metavar="M,N,K", help="tile the atom over M x N x K atoms, e.g. 2,1,1")
    mma.add_argument("--format", choices=FORMATS, help=fmt_help)
    mma.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    copy = sub.add_parser("copy", help="print or draw a copy atom (a copy op for one element type)")
    copy.add_argument("op", metavar="OP", help="CuTe name, e.g. SM75_U32x4_LDSM_N or UniversalCopy<uint128_t>")
    copy.add_argument("--dtype", default="bf16", help="element type the atom copies (default bf16)")
    copy.add_argument("--format", choices=FORMATS, help=fmt_help)
    copy.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")

    exp = sub.add_parser("explain", help="step-by-step derivation of an algebra operation")
    exp.add_argument("op", metavar="OP", help="composition, complement, logical_divide, ..., right_inverse")
    exp.add_argument("args", metavar="ARG", nargs="+", help='layouts in CuTe notation, ints, or tilers "<4:1,8:1>"')
    exp.add_argument("-o", "--output", metavar="FILE", help="write the text to FILE instead of stdout")


# ---------------------------------------------------------------------------------------------------------------
# Arguments


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
    >>> for bad in ("(4,2]:(1,4)", "<4:1,8:1"):
    ...     try:
    ...         parse_value(bad)
    ...     except CliError as e:
    ...         print(e)
    malformed LAYOUT '(4,2]:(1,4)' at position 4: expected ')', found ']'; here: '(4,2' >>> ']:(1,4)'
    malformed LAYOUT '<4:1,8:1': a by-mode tiler '<a,b,...>' needs its closing '>'
    """
    from .layouts import ParseError, parse
    from .layouts.int_tuple import _

    s = text.strip()
    lead = len(text) - len(text.lstrip())
    if s == "_":
        return _
    tiler = s.startswith("<") and not s.startswith(("S<", "Sw<"))
    if tiler and not s.endswith(">"):
        raise CliError(f"malformed {what} {text!r}: a by-mode tiler '<a,b,...>' needs its closing '>'")
    if tiler:
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


def _element_type(text: str):
    from .dtypes import dtype

    try:
        return dtype(text)
    except (KeyError, ValueError, TypeError):
        raise CliError(f"unknown --dtype {text!r} (e.g. bf16, f16, f32, e4m3, s8)") from None


def output_format(args, formats=FORMATS) -> str:
    """The format to write: ``--format``, or the one ``-o FILE``'s extension names (checked to agree), or text.

    >>> from types import SimpleNamespace as A
    >>> output_format(A(format=None, output="l.svg")), output_format(A(format="svg", output=None))
    ('svg', 'svg')
    >>> try:
    ...     output_format(A(format=None, output="out.png"))
    ... except CliError as e:
    ...     print(e)
    -o out.png: cannot tell the format from the extension '.png'; name the file .txt, .svg, .html, .htm or .tex, \
or pass --format
    """
    given = getattr(args, "format", None)
    if not args.output:
        return given or "text"
    suffix = pathlib.Path(args.output).suffix.lower()
    named = SUFFIX_FORMATS.get(suffix)
    if named is None and given is None:
        if formats == ("text",):                       # explain: text only, into a file of any other name
            return "text"
        *most, last = SUFFIX_FORMATS
        raise CliError(f"-o {args.output}: cannot tell the format from the extension {suffix!r}; name the file "
                       f"{', '.join(most)} or {last}, or pass --format")
    if named is not None and named not in formats:
        raise CliError(f"-o {args.output}: the extension {suffix!r} names {named}, but this command writes "
                       f"{' or '.join(formats)}")
    if named is not None and given is not None and named != given:
        raise CliError(f"-o {args.output} names the {named} format but --format is {given}; pass one that agrees")
    return given or named


# ---------------------------------------------------------------------------------------------------------------
# Output


def _render(obj, fmt: str, **options) -> str:
    """The picture of ``obj`` in ``fmt`` from cute_py.viz (text, svg, latex or html)."""
    from . import viz

    fn = getattr(viz, {"text": "to_text", "svg": "to_svg", "latex": "to_latex", "html": "to_html"}[fmt])
    full = options.pop("full", False)          # text only: print every cell instead of eliding
    if fmt in ("text", "latex"):                 # text takes only full=; latex takes no options
        options = {"full": full} if fmt == "text" else {}
    return fn(obj, **options)


def write(text: str, out=None) -> None:
    """``text`` (ending in one newline) to the file ``out``, or to stdout."""
    text = text if text.endswith("\n") else text + "\n"
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


# ---------------------------------------------------------------------------------------------------------------
# The commands


def run_show(args) -> int:
    from .layouts import ComposedLayout, Layout, Swizzle, composition
    from .layouts import int_tuple as it

    fmt = output_format(args)
    if args.dtype is not None and not (args.banks or args.access):
        raise CliError(f"--dtype {args.dtype} sets the element type of --banks and --access; without either "
                       f"it would change nothing")
    if args.full and fmt != "text":
        raise CliError(f"--full prints every cell of the text view; the {fmt} picture has every cell already")
    dtype = args.dtype or "bf16"
    obj = parse_value(args.layout, "LAYOUT")
    if args.banks or args.access:
        _element_type(dtype)
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
        b, m, s = integers(args.swizzle, 3, "--swizzle")
        try:
            sw = Swizzle(b, m, s)
        except LayoutError as e:
            raise CliError(f"--swizzle {args.swizzle}: {e}") from None
        if b == 0:
            raise CliError(f"--swizzle {args.swizzle}: Sw<0,{m},{s}> moves no bit (B = 0 is the identity), so it "
                           f"would change nothing; give B >= 1")
        if not isinstance(obj, Layout):
            raise CliError(f"--swizzle applies to a plain layout; {obj} already is a swizzle or composed layout")
        obj = composition(sw, obj)
    if (args.banks or args.access) and isinstance(obj, Swizzle):
        raise CliError("--banks/--access need a layout, not a bare swizzle")
    parts = []
    if args.banks and fmt != "text":
        if fmt == "latex":
            raise CliError("--banks has no LaTeX view; use --format text, svg or html")
        parts.append(_render(obj, fmt, color="bank", dtype=dtype))
    elif args.banks:
        from .viz.banks import bank_map

        parts.append(_render(obj, "text", full=args.full).rstrip("\n"))
        parts.append(bank_map(obj, dtype).to_text("bank", full=args.full))
    else:
        parts.append(_render(obj, fmt, full=args.full).rstrip("\n"))
    if args.access:
        from .viz.banks import bank_conflicts

        access = parse_value(args.access, "--access") if ":" in args.access else args.access
        try:
            report = str(bank_conflicts(obj, access, dtype))
        except LayoutError as e:                     # the access does not fit the layout: say which option
            raise CliError(f"--access {args.access}: {e}") from None
        if fmt == "text":
            parts.append(report)
        else:
            sys.stderr.write(report + "\n")
    write("\n\n".join(parts), args.output)
    return 0


def run_mma(args) -> int:
    from . import atoms

    fmt = output_format(args)
    try:
        atom = atoms.get(args.atom)
    except LayoutError as e:                             # AtomError: an unknown name
        import difflib

        names = [a.name for a in atoms.all_mma_atoms()]
        close = difflib.get_close_matches(args.atom, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise CliError(f"unknown MMA atom {args.atom!r}{hint} ({str(e).splitlines()[0]})") from None
    if not isinstance(atom, atoms.MMAAtom):
        raise CliError(f"{args.atom!r} is a copy op, not an MMA atom: draw it with cute-py copy {args.atom!r}")
    obj = atom
    if args.tiled:
        obj = atoms.make_tiled_mma(atom, integers(args.tiled, 3, "--tiled", positive=True))
    if fmt == "text":
        text = str(obj).rstrip("\n")
        if args.tiled:
            text += (f"\n  TiledMMA tile MNK: {obj.tile_size}, {obj.num_threads} threads"
                     f"\n  LayoutA_TV: {obj.get_layoutA_TV()}\n  LayoutB_TV: {obj.get_layoutB_TV()}"
                     f"\n  LayoutC_TV: {obj.get_layoutC_TV()}")
    else:
        text = _render(obj, fmt)
    write(text, args.output)
    return 0


def run_copy(args) -> int:
    from . import atoms

    fmt = output_format(args)
    try:
        op = atoms.get(args.op)                          # a copy op, or an MMA atom, by its CuTe name
    except LayoutError as e:                             # AtomError: no such name (the message lists the families)
        raise CliError(f"unknown copy op {args.op!r} ({str(e).splitlines()[0]})") from None
    if isinstance(op, atoms.MMAAtom):
        raise CliError(f"{args.op!r} is an MMA atom, not a copy op: print it with cute-py mma {args.op!r}")
    atom = atoms.make_copy_atom(op, _element_type(args.dtype))
    write(_render(atom, fmt), args.output)
    return 0


def run_explain(args) -> int:
    from .viz.explain import OPS, explain

    output_format(args, ("text",))
    if args.op not in OPS:
        raise CliError(f"unknown operation {args.op!r}; one of {', '.join(OPS)}")
    values = [parse_value(a, f"ARG {i + 1}") for i, a in enumerate(args.args)]
    try:
        text = str(explain(args.op, *values))
    except LayoutError as e:
        if e.op == "explain":  # wrong number of arguments: a usage error
            raise CliError(str(e)) from None
        raise
    write(text, args.output)
    return 0
