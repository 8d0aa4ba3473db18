"""``cute-py swizzle``: synthesize a shared-memory layout for a tile's writers and readers, with its certificate.

``cute-py swizzle --tile 64x64 --dtype bf16 --write tma --read ldmatrix [--family swizzle|f2] [-o FILE]``
prints the layout :func:`cute_py.synthesize_smem_layout` finds, its bank grid (the bank of every element,
:meth:`cute_py.viz.BankMap.to_text`) and the certificate. ``--write`` and ``--read`` repeat; each takes an
access name (``tma``, ``cp.async``, ``vec64``, ``ldmatrix``, ``stmatrix``, ``wgmma``, ``epilogue``, with
``:mn`` or ``:BITS``) or a TV layout in CuTe notation.
"""

from __future__ import annotations

import re

from .cli_errors import CliError
from .layouts.errors import LayoutError

__all__ = ["add_parser", "run"]

_TILE = re.compile(r"\s*([0-9]+)\s*[xX,]\s*([0-9]+)\s*")


def add_parser(sub) -> None:
    """The ``swizzle`` subcommand."""
    p = sub.add_parser("swizzle", help="synthesize a conflict-free shared-memory layout for a tile's accesses")
    p.add_argument("--tile", required=True, metavar="ROWSxCOLS", help="the tile, powers of two, e.g. 64x64")
    p.add_argument("--dtype", default="bf16", help="element type (default bf16)")
    p.add_argument("--write", action="append", default=[], metavar="ACCESS",
                   help="an access that writes the tile: tma, cp.async, vecN, stmatrix, epilogue[:BITS] "
                        "(':mn' along mode 0), or a TV layout; repeat for more")
    p.add_argument("--read", action="append", default=[], metavar="ACCESS",
                   help="an access that reads the tile: tma, ldmatrix, wgmma, vecN (':mn' along mode 0), or a "
                        "TV layout; repeat for more")
    p.add_argument("--family", choices=("swizzle", "f2"), default="swizzle",
                   help="swizzle: Sw<B,M,S> layouts (default); f2: also layouts whose bank bits XOR any line bits")
    p.add_argument("-o", "--output", metavar="FILE", help="write the text to FILE instead of stdout")


def _tile(text: str) -> tuple:
    m = _TILE.fullmatch(text)
    if not m:
        raise CliError(f"--tile must be ROWSxCOLS in decimal digits, e.g. 64x64, got {text!r}")
    shape = int(m.group(1)), int(m.group(2))
    if any(x < 1 or x & (x - 1) for x in shape):
        raise CliError(f"--tile {text}: the extents must be powers of two (the layout is a linear map of the "
                       f"tile's coordinate bits over GF(2))")
    return shape


def _line(e: Exception) -> str:
    return " ".join(str(e).split())


def run(args) -> int:
    from .arch.sm90.synth import checked_element_type, synthesize_smem_layout
    from .arch.sm90.synth_access import as_access
    from .cli_draw import write
    from .viz.banks import bank_map

    shape = _tile(args.tile)
    try:
        t = checked_element_type(args.dtype)
    except LayoutError as e:
        if e.rule == "unknown element type":
            raise CliError(f"unknown --dtype {args.dtype!r} (e.g. bf16, f16, f32, e4m3)") from None
        raise CliError(f"--dtype {args.dtype}: {_line(e)}") from None
    if not args.write and not args.read:
        raise CliError("give at least one --write or --read access, e.g. --write tma --read ldmatrix")
    for option, role, values in (("--write", "write", args.write), ("--read", "read", args.read)):
        for v in values:
            try:
                as_access(v, shape, t, role)
            except LayoutError as e:
                raise CliError(f"{option} {v}: {_line(e)}") from None
    try:
        result = synthesize_smem_layout(shape, t, list(args.write), list(args.read), family=args.family)
    except LayoutError as e:
        raise CliError(f"--write/--read: {_line(e)}") from None
    grid = bank_map(result.layout, t).to_text("bank")
    write("\n\n".join([result.head(), grid, result.certificate.to_text()]), args.output)
    return 0
