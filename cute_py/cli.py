"""The ``cute-py`` command.

``cute-py tour`` (also what plain ``cute-py`` runs) prints a short, live tour of
the layout algebra: every result below is computed when the command runs.
"""

from __future__ import annotations

import argparse

from . import __version__


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
    import cute_py as cp

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="cute-py", description="The CuTe layout algebra in pure Python.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("tour", help="print a short live tour of the layout algebra (default)")
    args = parser.parse_args(argv)

    if args.command in (None, "tour"):
        tour()
    return 0
