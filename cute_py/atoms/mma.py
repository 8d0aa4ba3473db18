"""MMA atoms: one tensor-core instruction as data (shape, thread layout, A/B/C TV layouts, PTX).

A TV layout maps ``(thread, value)`` to the column-major index of the operand
tile: A is ``(M, K)``, B is ``(N, K)``, C is ``(M, N)`` (CuTe's convention), so
``c_layout(t, v) = m + M*n``. ``thr_id`` maps the atom's logical thread to the
lane (or warpgroup thread) that executes it.

Families are functions of their parameters (``sm80_mma``, ``gmma``, ...), and
every atom has CuTe's name (``SM80_16x8x16_F32BF16BF16F32_TN``,
``SM90_64x128x16_F32BF16BF16_SS``); :func:`cute_py.atoms.get` builds an atom
from its name.

>>> atom = gmma(128, "f32", "bf16", "bf16")
>>> atom.name, atom.shape_mnk
('SM90_64x128x16_F32BF16BF16_SS', (64, 128, 16))
>>> print(atom.c_layout)
((4,8,4),(2,2,16)):((128,1,16),(64,8,512))
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layouts import Layout, int_tuple as it, parse
from ..layouts.dtypes import DType, dtype
from ..layouts.errors import LayoutError, layout_error

__all__ = ["MMAAtom", "sm70_mma", "sm75_mma", "sm80_mma", "sm89_mma", "gmma", "MAJORS", "GMMA_N_VALUES"]

MAJORS = ("K", "MN")


class AtomError(LayoutError):
    """An atom was asked for with parameters that no instruction has (unknown name, bad N, dtype combo).

    >>> from cute_py import LayoutError
    >>> issubclass(AtomError, LayoutError)
    True
    """


@dataclass(frozen=True)
class MMAAtom:
    """One MMA instruction as data; immutable and hashable.

    Attributes: ``name`` (CuTe's), ``arch`` (70, 75, 80, 89, 90), ``shape_mnk``,
    ``thr_id`` (logical thread -> lane), ``a_layout``/``b_layout``/``c_layout``
    (TV layouts into the column-major (M,K)/(N,K)/(M,N) tiles), ``a_type``,
    ``b_type``, ``c_type`` (= D's type), ``ptx`` (the instruction),
    ``a_source``/``b_source`` (``"reg"`` or ``"smem"``: GMMA SS operands are
    shared-memory descriptors), ``a_major``/``b_major`` (``"K"`` or ``"MN"``),
    ``saturate``.

    Postcondition (tested for every atom): each TV layout is a bijection from
    (threads x values) onto its tile, except smem operands whose thread mode
    has stride 0 (every thread sees the whole tile).

    >>> atom = sm80_mma(16, 8, 16, "f32", "bf16", "bf16")
    >>> atom.name
    'SM80_16x8x16_F32BF16BF16F32_TN'
    >>> atom.c_layout(5, 2)  # thread 5, value 2: row g+8 = 9, col 2t = 2
    41
    """

    name: str
    arch: int
    shape_mnk: tuple
    thr_id: Layout
    a_layout: Layout
    b_layout: Layout
    c_layout: Layout
    a_type: DType
    b_type: DType
    c_type: DType
    ptx: str
    a_source: str = "reg"
    b_source: str = "reg"
    a_major: str = "K"
    b_major: str = "K"
    saturate: bool = False

    @property
    def num_threads(self) -> int:
        """Threads that execute the instruction together (``size(thr_id)``)."""
        return it.product(self.thr_id.shape)

    def _values(self, layout: Layout) -> int:
        return it.product(layout.shape[1])

    @property
    def regs(self) -> dict:
        """32-bit registers per thread for A, B, C (0 for a shared-memory descriptor operand).

        >>> sm80_mma(16, 8, 16, "f32", "bf16", "bf16").regs
        {'a': 4, 'b': 2, 'c': 4}
        """
        def count(layout, t, source):
            return 0 if source == "smem" else -(-self._values(layout) * t.bits // 32)

        return {"a": count(self.a_layout, self.a_type, self.a_source),
                "b": count(self.b_layout, self.b_type, self.b_source),
                "c": count(self.c_layout, self.c_type, "reg")}

    def __str__(self) -> str:
        s = self.shape_mnk
        return (f"MMA_Atom {self.name}\n"
                f"  ThrID:      {self.thr_id}\n"
                f"  Shape_MNK:  ({s[0]},{s[1]},{s[2]})\n"
                f"  LayoutA_TV: {self.a_layout}\n"
                f"  LayoutB_TV: {self.b_layout}\n"
                f"  LayoutC_TV: {self.c_layout}\n")


# ---------------------------------------------------------------------------
# Naming

_TYPE_TOKEN = {"f16": "F16", "bf16": "BF16", "tf32": "TF32", "f32": "F32", "f64": "F64",
               "e4m3": "E4M3", "e5m2": "E5M2", "s8": "S8", "u8": "U8", "s32": "S32"}


def _tok(t: DType) -> str:
    return _TYPE_TOKEN[t.name]


def _types(op, d, a, b, allowed):
    d, a, b = dtype(d), dtype(a), dtype(b)
    if (d.name, a.name, b.name) not in allowed:
        raise layout_error(AtomError, op, "no instruction for these element types",
                           f"D={d.name}, A={a.name}, B={b.name}; available: "
                           + ", ".join("/".join(x) for x in sorted(allowed)))
    return d, a, b


def _check_major(op, major):
    if major not in MAJORS:
        raise layout_error(AtomError, op, "major must be 'K' or 'MN'", f"got {major!r}")


# ---------------------------------------------------------------------------
# SM70: mma.m8n8k4 on quad pairs (8 threads: lanes t%4 + 16*(t/4))

_SM70_QP = parse("(4,2):(1,16)")
_SM70_ROW = parse("(8,4):(1,8)")            # (T8,V4) -> (M8,K4)
_SM70_COL = parse("((4,2),4):((8,4),1)")
_SM70_C16 = parse("(8,8):(1,8)")            # (T8,V8) -> (M8,N8)
_SM70_C32 = parse("((2,2,2),(2,2,2)):((1,16,4),(8,2,32))")


def sm70_mma(d, a="f16", b="f16", majors="TN") -> MMAAtom:
    """Volta ``mma.sync.m8n8k4`` (a quad pair of 8 threads); ``majors`` is CuTe's TN/NT/NN/TT.

    ``T`` for A means K-major (PTX ``.row``); for B, ``N`` means K-major (``.col``).

    >>> print(sm70_mma("f32", majors="NT").a_layout)
    ((4,2),4):((8,4),1)
    """
    op = "sm70_mma"
    d, a, b = _types(op, d, a, b, {("f16", "f16", "f16"), ("f32", "f16", "f16")})
    if majors not in ("TN", "NT", "NN", "TT"):
        raise layout_error(AtomError, op, "majors must be TN, NT, NN or TT", f"got {majors!r}")
    a_row, b_col = majors[0] == "T", majors[1] == "N"
    a_l = _SM70_ROW if a_row else _SM70_COL
    b_l = _SM70_ROW if b_col else _SM70_COL
    ptx = (f"mma.sync.aligned.m8n8k4.{'row' if a_row else 'col'}.{'col' if b_col else 'row'}"
           f".{d.ptx}.f16.f16.{d.ptx}")
    name = f"SM70_8x8x4_{_tok(d)}F16F16{_tok(d)}_{majors}"
    return MMAAtom(name, 70, (8, 8, 4), _SM70_QP, a_l, b_l, _SM70_C32 if d.name == "f32" else _SM70_C16,
                   a, b, d, ptx, a_major="K" if a_row else "MN", b_major="K" if b_col else "MN")


# ---------------------------------------------------------------------------
# SM75 / SM80 / SM89: warp-wide mma.sync (32 threads, g = lane/4, t = lane%4)

_WARP = Layout(32)
_C_8x8 = parse("((4,8),2):((16,1),8)")
_C_16x8 = parse("((4,8),(2,2)):((32,1),(16,8))")

# (shape, A kind) -> (A layout, B layout, C layout)
_SM80_LAYOUTS = {
    ((16, 8, 8), "16b"): (_C_16x8, parse("((4,8),2):((16,1),8)"), _C_16x8),
    ((16, 8, 16), "16b"): (parse("((4,8),(2,2,2)):((32,1),(16,8,128))"), parse("((4,8),(2,2)):((16,1),(8,64))"), _C_16x8),
    ((16, 8, 4), "32b"): (parse("((4,8),2):((16,1),8)"), parse("((4,8),1):((8,1),0)"), _C_16x8),
    ((16, 8, 8), "32b"): (parse("((4,8),(2,2)):((16,1),(8,64))"), parse("((4,8),2):((8,1),32)"), _C_16x8),
    ((8, 8, 4), "64b"): (parse("((4,8),1):((8,1),0)"), parse("((4,8),1):((8,1),0)"), _C_8x8),
    ((8, 8, 16), "8b"): (parse("((4,8),4):((32,1),8)"), parse("((4,8),4):((32,1),8)"), _C_8x8),
    ((16, 8, 16), "8b"): (parse("((4,8),(4,2)):((64,1),(16,8))"), parse("((4,8),4):((32,1),8)"), _C_16x8),
    ((16, 8, 32), "8b"): (parse("((4,8),(4,2,2)):((64,1),(16,8,256))"), parse("((4,8),(4,2)):((32,1),(8,128))"), _C_16x8),
}

_SM80_TYPES = {
    "16b": {("f16", "f16", "f16"), ("f32", "f16", "f16"), ("f32", "bf16", "bf16")},
    "32b": {("f32", "tf32", "tf32")},
    "64b": {("f64", "f64", "f64")},
    "8b": {("s32", x, y) for x in ("s8", "u8") for y in ("s8", "u8")},
}
_FP8 = {(dd, x, y) for dd in ("f32", "f16") for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2")}


def _warp_mma(op, arch, m, n, k, d, a, b, saturate, allowed_shapes, type_sets):
    a0 = dtype(a)
    kind = {16: "16b", 32: "32b", 64: "64b", 8: "8b"}.get(a0.bits)
    if kind is None or (m, n, k) not in allowed_shapes.get(kind, ()):
        raise layout_error(AtomError, op, "no warp MMA of this shape for this element type",
                           f"{m}x{n}x{k} with A={a0.name}; shapes for {a0.name}: "
                           f"{sorted(allowed_shapes.get(kind, ()))}")
    d, a, b = _types(op, d, a, b, type_sets[kind])
    if saturate and d.name != "s32":
        raise layout_error(AtomError, op, "saturation exists only for integer MMAs", f"D={d.name}")
    layouts = _SM80_LAYOUTS[((m, n, k), "8b" if kind == "8b" else kind)]
    ptx = f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{d.ptx}.{a.ptx}.{b.ptx}.{d.ptx}" + (".satfinite" if saturate else "")
    name = f"SM{arch}_{m}x{n}x{k}_{_tok(d)}{_tok(a)}{_tok(b)}{_tok(d)}_TN" + ("_SATURATE" if saturate else "")
    return MMAAtom(name, arch, (m, n, k), _WARP, *layouts, a, b, d, ptx, saturate=saturate)


_SM80_SHAPES = {"16b": {(16, 8, 8), (16, 8, 16)}, "32b": {(16, 8, 4), (16, 8, 8)}, "64b": {(8, 8, 4)},
                "8b": {(8, 8, 16), (16, 8, 16), (16, 8, 32)}}


def sm80_mma(m, n, k, d, a, b, saturate=False) -> MMAAtom:
    """Ampere ``mma.sync`` (f16/bf16 16x8x{8,16}, tf32 16x8x{4,8}, f64 8x8x4, s8/u8 {8x8x16,16x8x{16,32}}).

    >>> print(sm80_mma(16, 8, 8, "f32", "tf32", "tf32").a_layout)
    ((4,8),(2,2)):((16,1),(8,64))
    """
    return _warp_mma("sm80_mma", 80, m, n, k, d, a, b, saturate, _SM80_SHAPES, _SM80_TYPES)


def sm75_mma(m, n, k, d, a, b) -> MMAAtom:
    """Turing ``mma.sync``: 16x8x8 f16 (f16 or f32 accumulate) and 8x8x16 s8.

    >>> sm75_mma(16, 8, 8, "f32", "f16", "f16").name
    'SM75_16x8x8_F32F16F16F32_TN'
    """
    types = {"16b": {("f16", "f16", "f16"), ("f32", "f16", "f16")}, "8b": {("s32", "s8", "s8")}}
    return _warp_mma("sm75_mma", 75, m, n, k, d, a, b, False, {"16b": {(16, 8, 8)}, "8b": {(8, 8, 16)}}, types)


def sm89_mma(d, a, b) -> MMAAtom:
    """Ada fp8 ``mma.sync.m16n8k32`` (e4m3/e5m2 inputs, f32 or f16 accumulate).

    >>> sm89_mma("f32", "e4m3", "e5m2").ptx
    'mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32'
    """
    return _warp_mma("sm89_mma", 89, 16, 8, 32, d, a, b, False, {"8b": {(16, 8, 32)}}, {"8b": _FP8})


# ---------------------------------------------------------------------------
# SM90 GMMA: wgmma.mma_async, one warpgroup (128 threads), M = 64

_WARPGROUP = Layout(128)
GMMA_N_VALUES = tuple(range(8, 257, 8))
_GMMA_INT_N = (8, 16, 24) + tuple(range(32, 257, 16))

_GMMA_TYPES = {
    16: {("f16", "f16", "f16"), ("f32", "f16", "f16"), ("f32", "bf16", "bf16")},
    8: {("f32", "tf32", "tf32")},
    32: _FP8 | {("s32", x, y) for x in ("s8", "u8") for y in ("s8", "u8")},
}
_GMMA_A_REG = {16: parse("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"),
               8: parse("((4,8,4),(2,2)):((64,1,16),(8,256))"),
               32: parse("((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))")}


def gmma_c_layout(n: int) -> Layout:
    """CuTe's ``CLayout_64xN``: row = 16*warp + lane/4 + 8*v1, col = 2*(lane%4) + v0 + 8*v2.

    >>> print(gmma_c_layout(16))
    ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))
    """
    return Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def _smem_ab(mn: int, k: int) -> Layout:
    """CuTe's ``ABLayout<MN,K>``: every thread of the warpgroup sees the whole (MN,K) tile."""
    return Layout((128, (mn, k)), (0, (1, mn)))


def gmma(n, d, a, b, a_source="smem", a_major="K", b_major="K", saturate=False) -> MMAAtom:
    """Hopper ``wgmma.mma_async`` 64xNxK; K follows the input type (16 for f16/bf16, 8 tf32, 32 8-bit).

    ``a_source`` is ``"smem"`` (SS: A by descriptor) or ``"reg"`` (RS: A in
    registers, K-major only). Majors other than K exist only for 16-bit inputs.
    Integer accumulators need N in {8, 16, 24, 32, 48, ..., 256} (PTX).

    >>> atom = gmma(64, "f32", "f16", "f16", a_source="reg")
    >>> atom.name, atom.regs
    ('SM90_64x64x16_F32F16F16_RS', {'a': 4, 'b': 0, 'c': 32})
    """
    op = "gmma"
    a0 = dtype(a)
    k = {16: 16, 32: 8, 8: 32}.get(a0.bits)
    if k is None:
        raise layout_error(AtomError, op, "no GMMA for this input type", f"A={a0.name}")
    d, a, b = _types(op, d, a, b, _GMMA_TYPES[k])
    if n not in GMMA_N_VALUES or (d.name == "s32" and n not in _GMMA_INT_N):
        raise layout_error(AtomError, op, "invalid GMMA N",
                           f"N={n}; N must be a multiple of 8 in [8, 256]"
                           + (" and, for s32 accumulators, one of 8, 16, 24 or a multiple of 16" if d.name == "s32" else ""))
    if a_source not in ("smem", "reg"):
        raise layout_error(AtomError, op, "a_source must be 'smem' or 'reg'", f"got {a_source!r}")
    _check_major(op, a_major)
    _check_major(op, b_major)
    if k != 16 and (a_major, b_major) != ("K", "K"):
        raise layout_error(AtomError, op, "only 16-bit GMMA inputs can be MN-major",
                           f"A={a.name}, majors ({a_major}, {b_major})")
    if a_source == "reg" and a_major != "K":
        raise layout_error(AtomError, op, "a register A operand must be K-major", f"a_major={a_major}")
    if saturate and d.name != "s32":
        raise layout_error(AtomError, op, "saturation exists only for integer GMMA", f"D={d.name}")
    ss = "SS" if a_source == "smem" else "RS"
    tn = "_TN" if k != 16 else ""
    name = f"SM90_64x{n}x{k}_{_tok(d)}{_tok(a)}{_tok(b)}_{ss}{tn}" + ("_SATURATE" if saturate else "")
    ptx = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d.ptx}.{a.ptx}.{b.ptx}" + (".satfinite" if saturate else "")
    a_l = _smem_ab(64, k) if a_source == "smem" else _GMMA_A_REG[k]
    return MMAAtom(name, 90, (64, n, k), _WARPGROUP, a_l, _smem_ab(n, k), gmma_c_layout(n), a, b, d, ptx,
                   a_source=a_source, b_source="smem", a_major=a_major, b_major=b_major, saturate=saturate)
