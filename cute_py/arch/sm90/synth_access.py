"""The accesses of a shared-memory tile, for :func:`~cute_py.arch.sm90.synth.synthesize_smem_layout`.

An access is what the bank analysis (:func:`~cute_py.arch.sm90.banks.bank_conflicts`) already takes: a TV
layout ``(thread, value) -> domain index`` of the tile with a vector width, TMA's ``"row128"``, or a copy
atom / tiled copy. The named accesses below are TV layouts built for the tile; they are written
``NAME[:mn|:k][:BITS]``. The tile is ``(rows, cols)``, its domain index ``m + rows * n`` (CuTe's
column-major order). ``k`` (the default) means the access runs along mode 1 (a K-major operand tile, a
row-major C tile); ``mn`` means along mode 0.

==============  ===========================================================================================
``tma``          TMA moving the box: 128-byte rows of the unswizzled tile, 16 bytes per lane (``"row128"``);
                 the tile's contiguous mode is the box's inner one (``k``: mode 1)
``vecN``         ``N``-bit vectors (8..128), lanes on consecutive vectors along the contiguous mode
``cp.async``     ``vec128``: 16-byte ``cp.async`` (or ``ld.shared.v4``) vectors
``ldmatrix``     ``ldmatrix.x4``: lane ``i`` addresses the 16-byte row ``i % 16`` of chunk ``i // 16`` of a
                 16-row block; each 8x16-byte matrix is one phase; ``stmatrix`` is the same for stores
``wgmma``        wgmma reading core matrices of 8 rows x 16 bytes, one phase each
``epilogue``     the wgmma accumulator fragment (``CLayout_64xN`` per 64 rows): each thread stores pairs of
                 adjacent columns; ``epilogue:BITS`` stores ``BITS`` per access (one element: a transpose)
==============  ===========================================================================================

>>> a = named_access("ldmatrix", (64, 64), dtype("bf16"), "read")
>>> print(a.access, a.vector_bits)
((16,2,4,4),8):((1,512,16,1024),64) 128
"""

from __future__ import annotations

from dataclasses import dataclass

from ...atoms import CopyAtom, CopyOp, TiledCopy
from ...layouts import Layout, parse
from ...layouts.dtypes import DType, dtype
from ...layouts.errors import LayoutError, layout_error
from ...layouts.f2 import echelon
from .requests import element_bits, lanes_per_phase, requests_of

__all__ = ["SmemAccess", "AccessForm", "NAMES", "named_access", "as_access", "linear_form"]

NAMES = ("tma", "vec8", "vec16", "vec32", "vec64", "vec128", "cp.async", "ldmatrix", "stmatrix", "wgmma",
         "epilogue")
"""The named accesses (see the module docstring)."""

_OP = "synthesize_smem_layout"


@dataclass(frozen=True)
class SmemAccess:
    """One access of the tile: ``name`` (as shown), ``role`` (``"write"`` or ``"read"``), ``access`` (what
    :func:`~cute_py.arch.sm90.banks.bank_conflicts` takes), ``vector_bits`` (None: the widest that is whole)
    and ``major``: the mode TMA's box must have contiguous (``"K"``: mode 1, ``"MN"``: mode 0), None for
    accesses that do not fix the tile's order."""

    name: str
    role: str
    access: object
    vector_bits: int | None = None
    major: str | None = None

    def __str__(self):
        return f"{self.role} {self.name}"


def _fail(rule: str, detail: str, **operands):
    return layout_error(LayoutError, _OP, rule, detail, **operands)


def _parts(text: str, role: str):
    """``(head, major, bits)`` of ``NAME[:mn|:k][:BITS]``."""
    head, *opts = [p.strip() for p in text.strip().lower().split(":")]
    major, bits = None, None
    for o in opts:
        if o in ("k", "mn") and major is None:
            major = o.upper()
        elif o.isdigit() and bits is None:
            bits = int(o)
        else:
            raise _fail("unknown option of a named access", f"{o!r} in {role} {text!r}; options are "
                        f"':k' or ':mn' (the mode the access runs along) and ':BITS' (bits per lane access)")
    return head, major or "K", bits


def named_access(text: str, tile_shape, t: DType, role: str) -> SmemAccess:
    """The :class:`SmemAccess` named ``text`` (``NAME[:mn|:k][:BITS]``, module docstring) over ``tile_shape``.

    >>> print(named_access("epilogue:16", (64, 32), dtype("bf16"), "write").access)
    ((4,8,4,1),(2,2,4)):((128,1,16,64),(64,8,512))
    """
    head, major, bits = _parts(text, role)
    rows, cols = tile_shape
    along, across = (rows, 1) if major == "K" else (1, rows)      # domain steps along / across the access
    x, y = (cols, rows) if major == "K" else (rows, cols)          # extents along / across
    chunk = max(1, 128 // t.bits)                                  # elements of a 16-byte chunk
    name = text.strip()

    def need(cond, what):
        if not cond:
            raise _fail(f"the tile does not fit the {head} access", f"{role} {name!r} needs {what}; "
                        f"tile {rows}x{cols} of {t.name}")

    def fixed_width():
        if bits is not None:
            what = (f"the width is in the name ({head}: {head[3:]} bits per lane; vec8..vec128)"
                    if head.startswith("vec") else f"{head} moves 16-byte rows")
            raise _fail("a width does not apply", f"{role} {name!r}: {what}")

    if head == "cp.async":
        head = "vec128"
    if head.startswith("vec") and head[3:].isdigit():
        fixed_width()
        width = int(head[3:])
        if width not in (8, 16, 32, 64, 128) or width < t.bits:
            raise _fail("vector width must be 8..128 bits and at least one element", f"{role} {name!r} "
                        f"for {t.name}")
        w = width // t.bits
        need(x % w == 0, f"{x} elements along its mode to be whole {width}-bit vectors")
        tv = Layout(((x // w, y), w), ((w * along, across), along))
        return SmemAccess(name, role, tv, width)
    if head == "tma":
        fixed_width()
        return SmemAccess(name, role, "row128", 128, major)
    if head in ("ldmatrix", "stmatrix"):
        fixed_width()
        if t.bits != 16:
            raise _fail(f"{head} moves 16-bit elements", f"{role} {name!r} for {t.name} ({t.bits} bits); its "
                        f"8x8 matrices are of b16 (use vecN or a TV layout for other types)")
        need(y % 16 == 0 and x % (2 * chunk) == 0, f"blocks of 16 rows x 2 chunks of {chunk} elements")
        tv = Layout(((16, 2, y // 16, x // (2 * chunk)), chunk),
                    ((across, chunk * along, 16 * across, 2 * chunk * along), along))
        return SmemAccess(name, role, tv, 128)
    if head == "wgmma":
        fixed_width()
        need(y % 8 == 0 and x % chunk == 0, f"core matrices of 8 rows x {chunk} elements")
        tv = Layout(((8, x // chunk, y // 8), chunk), ((across, chunk * along, 8 * across), along))
        return SmemAccess(name, role, tv, 128)
    if head == "epilogue":
        if major != "K":
            raise _fail("the accumulator's columns are mode 1", f"{role} {name!r}: an epilogue stores the "
                        f"(M, N) accumulator as it lies; give the width instead (epilogue:{t.bits})")
        width = bits or 2 * t.bits
        if width not in (t.bits, 2 * t.bits):
            raise _fail("an epilogue stores one or two adjacent elements", f"{role} {name!r}: {width} bits "
                        f"for {t.name}; use {t.bits} or {2 * t.bits}")
        need(rows % 64 == 0 and cols % 8 == 0, "64-row blocks (one warpgroup each) and 8-column groups")
        tv = Layout(((4, 8, 4, rows // 64), (2, 2, cols // 8)),
                    ((2 * rows, 1, 16, 64), (rows, 8, 8 * rows)))
        return SmemAccess(name, role, tv, width)
    raise _fail("unknown access", f"{role} {name!r}; use one of {', '.join(NAMES)} (with ':mn' or ':BITS'), "
                f"a TV layout or a copy atom")


def as_access(x, tile_shape, t: DType, role: str) -> SmemAccess:
    """An access from a name, a TV layout (or its CuTe text), a copy op / atom / tiled copy, or an SmemAccess."""
    if isinstance(x, SmemAccess):
        return x
    if isinstance(x, str):
        s = x.strip()
        if s[:1] in "(0123456789":
            try:
                return SmemAccess(s, role, parse(s))
            except LayoutError as e:
                raise _fail("malformed TV layout", f"{role} {s!r}: {str(e).splitlines()[0]}") from None
        return named_access(s, tile_shape, t, role)
    if isinstance(x, Layout):
        return SmemAccess(f"TV layout {x}", role, x)
    if isinstance(x, (CopyAtom, CopyOp, TiledCopy)):
        label = x.atom.name if isinstance(x, TiledCopy) else x.name
        return SmemAccess(str(label), role, x)
    raise TypeError(f"{_OP}: a {role}r must be an access name, a TV layout or a copy atom, got {type(x).__name__}")


# ---------------------------------------------------------------------------------------------------------------
# the GF(2) form of an access over one base layout


@dataclass(frozen=True)
class AccessForm:
    """An access over a base layout, as linear algebra: ``vector`` is the coordinate bit (a domain index) of
    each of its vector's bits, low first; ``phases`` are the distinct subspaces (echelon bases of domain
    indices) that one phase of one request spans, each phase being a coset of one; ``vector_bits`` the width."""

    vector: tuple
    phases: tuple
    vector_bits: int


def linear_form(acc: SmemAccess, base: Layout, t: DType) -> AccessForm:
    """The :class:`AccessForm` of ``acc`` over ``base``, from the requests the bank analysis makes of it.

    Raises LayoutError where a vector is not whole in ``base`` (rule ``"not a vector access"``) or where a
    phase or a vector is not a coset of a subspace of the tile's index bits (rule ``"not linear over GF(2)"``).
    """
    import numpy as np

    reqs = requests_of(_OP, base, acc.access, t, element_bits(_OP, base, t.bits), vector_bits=acc.vector_bits)
    lpp = lanes_per_phase(reqs.vector_bits)
    lane_access = reqs.access
    phase = reqs.req[lane_access] * (32 // lpp) + reqs.lane[lane_access] // lpp
    order = np.argsort(phase, kind="stable")
    idx, phase = reqs.index[order], phase[order]
    cuts = np.flatnonzero(np.diff(phase)) + 1
    spaces = set()
    for group in np.split(idx, cuts):
        first = int(group[0])
        basis = echelon(int(i) ^ first for i in set(group.tolist()))
        if len(set(group.tolist())) != 1 << len(basis):
            raise _fail("not linear over GF(2)", f"{acc}: a phase reads {len(set(group.tolist()))} elements, "
                        f"not the 2^{len(basis)} of the subspace they span")
        spaces.add(tuple(sorted(basis.values())))
    per = np.bincount(lane_access)
    vec = int(per[0]) if len(per) else 1
    vector = ()
    if vec > 1 and np.all(per == vec):
        rows = reqs.index.reshape(-1, vec)
        diffs = rows ^ rows[:, :1]
        if np.any(diffs != diffs[:1]):
            raise _fail("not linear over GF(2)", f"{acc}: its vectors do not all step through the tile alike")
        vector = tuple(int(diffs[0, 1 << b]) for b in range(vec.bit_length() - 1))
        span = [0]
        for c in vector:
            span = span + [s ^ c for s in span]
        if vec & (vec - 1) or span != diffs[0].tolist():
            raise _fail("not linear over GF(2)", f"{acc}: a vector's elements are not the span of its bits")
    return AccessForm(vector, tuple(sorted(spaces)), reqs.vector_bits)


def element_type(t) -> DType:
    """The element type ``t`` (a LayoutError naming the operation and the argument if it is unknown)."""
    try:
        return dtype(t)
    except (KeyError, ValueError, TypeError):
        raise _fail("unknown element type", f"dtype={t!r}") from None
