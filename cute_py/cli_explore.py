"""``cute-py explore LAYOUT -o page.html``: the layout explorer as one offline HTML page.

The page is :func:`cute_py.viz.explore_html`'s: the explorer's front end and the scene of LAYOUT (CuTe
notation, or an MMA atom or copy op by its CuTe name), opened in any browser without a network or Python.
Every option reaches the page or is refused: ``--tile`` makes LAYOUT a TV layout over that tile, where
``--view``, ``--access``, ``--swizzle`` and ``--dtype`` would change nothing; an MMA atom's name fixes its
element types (no ``--dtype``), and an atom's threads are its own (no ``--access``).
"""

from __future__ import annotations

import pathlib

from .cli_draw import parse_value, write
from .cli_errors import CliError, integers
from .layouts.errors import LayoutError

__all__ = ["add_parser", "run"]

VIEWS = ("offsets", "threads", "banks", "coalescing")


def add_parser(sub) -> None:
    """The ``explore`` subcommand."""
    p = sub.add_parser("explore", help="write the interactive layout explorer as one offline HTML page")
    p.add_argument("layout", metavar="LAYOUT",
                   help='CuTe notation ("Sw<3,3,3> o 0 o (8,64):(64,1)") or an MMA atom / copy op name')
    p.add_argument("-o", "--output", metavar="PAGE.html", required=True, help="the page to write (.html)")
    p.add_argument("--dtype", help="element type of the banks and coalescing views and of a copy op (default bf16)")
    p.add_argument("--view", choices=VIEWS, help="the view the page opens in (default offsets)")
    p.add_argument("--access", metavar="PATTERN",
                   help="access of the threads, banks and coalescing views: row128 (default), vec32, vec64, vec128, "
                        "ldmatrix, a copy op or a TV layout")
    p.add_argument("--swizzle", metavar="B,M,S", help="put Sw<B,M,S> over LAYOUT (replacing its outer swizzle)")
    p.add_argument("--tile", metavar="M,N", help="LAYOUT is a TV layout (thread, value) -> m + M*n over an M x N tile")


def _object(text: str, dtype: str):
    """LAYOUT: CuTe text, or the name of an MMA atom or copy op (a copy atom of ``dtype``)."""
    from . import atoms
    from .layouts import ComposedLayout, Layout, ParseError, parse
    from .layouts import int_tuple as it

    name = text.strip()
    if name[:1].isalpha() and not name.startswith(("Sw<", "S<")):
        try:
            op = atoms.get(name)
        except LayoutError as e:
            try:
                parse(name)
            except ParseError:
                raise CliError(f"LAYOUT {text!r} is neither CuTe notation nor an atom name "
                               f"({str(e).splitlines()[0]})") from None
        else:
            return op if isinstance(op, atoms.MMAAtom) else atoms.make_copy_atom(op, dtype)
    obj = parse_value(text, "LAYOUT")
    if it.is_int(obj) or (isinstance(obj, tuple) and all(it.is_int(x) for x in it.flatten_to_tuple(obj))):
        obj = Layout(obj)
    if not isinstance(obj, (Layout, ComposedLayout)):
        raise CliError(f"LAYOUT must be a layout or an atom name, got {text!r}" +
                       ("; a bare swizzle has no tile: compose it, e.g. 'Sw<3,3,3> o 0 o (8,64):(64,1)'"
                        if type(obj).__name__ == "Swizzle" else ""))
    return obj


def _refuse_atom_options(obj, args) -> None:
    """An atom's picture takes neither an access nor, for an MMA atom, a dtype: refuse them rather than ignore."""
    from .atoms import CopyAtom, MMAAtom

    if isinstance(obj, MMAAtom) and args.dtype:
        raise CliError(f"--dtype {args.dtype}: the MMA atom {obj.name} names its own element types; "
                       f"--dtype would change nothing")
    if isinstance(obj, (MMAAtom, CopyAtom)) and args.access:
        raise CliError(f"--access {args.access}: an atom's picture shows its own threads; "
                       f"--access would change nothing")


def run(args) -> int:
    from .dtypes import dtype as to_dtype
    from .viz.explorer import ExplorerState, page

    out = pathlib.Path(args.output)
    if out.suffix.lower() != ".html":
        raise CliError(f"-o {args.output}: the explorer page is HTML; name the file .html")
    if args.tile and (args.view or args.access or args.swizzle or args.dtype):
        given = [f"--{k}" for k in ("view", "access", "swizzle", "dtype") if getattr(args, k)]
        raise CliError(f"--tile draws LAYOUT as a TV layout, whose only view is its threads; "
                       f"{', '.join(given)} would change nothing")
    dtype = args.dtype or "bf16"
    try:
        to_dtype(dtype)
    except (KeyError, ValueError, TypeError):
        raise CliError(f"unknown --dtype {dtype!r} (e.g. bf16, f16, f32, e4m3, s8)") from None
    obj = _object(args.layout, dtype)
    _refuse_atom_options(obj, args)
    swizzle = None
    if args.swizzle:
        b, m, s = integers(args.swizzle, 3, "--swizzle")
        swizzle = f"Sw<{b},{m},{s}>"
    tile = integers(args.tile, 2, "--tile", positive=True) if args.tile else None
    try:
        state = ExplorerState(obj, dtype=args.dtype, view=args.view, access=args.access or "row128", swizzle=swizzle,
                              tile=tile)
    except (TypeError, ValueError) as e:                  # with --tile, LAYOUT is read as a TV layout over it
        message = str(e).splitlines()[0]
        raise CliError(f"--tile {args.tile}: {message}" if tile else message) from None
    if args.access and (args.view or "offsets") == "offsets":
        raise CliError(f"--access {args.access} sets the access of the threads, banks and coalescing views; "
                       f"with the offsets view it would change nothing (add --view)")
    if state.scene["report_error"]:
        raise CliError(f"--access {args.access or 'row128'}: {state.scene['report_error']}")
    write(page(state), out)
    return 0
