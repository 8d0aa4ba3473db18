"""Copy operations and copy atoms: which thread moves which bits.

A :class:`CopyOp` is CuTe's ``Copy_Traits``: its source, destination and
reference TV layouts map ``(thread, value)`` to a *bit* of an abstract
numbering shared by source and destination. A :class:`CopyAtom` pairs an op
with an element type: CuTe's ``Copy_Atom<Op, T>``, whose layouts are the bit
layouts upcast by ``sizeof_bits(T)``.

>>> from cute_py.atoms import make_copy_atom
>>> atom = make_copy_atom("SM75_U32x4_LDSM_N", "f16")
>>> print(atom.src_layout, atom.dst_layout)
(32,8):(8,1) (32,(2,4)):(2,(1,64))
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layouts import Layout, int_tuple as it, parse, upcast
from ..layouts.dtypes import DType
from ..layouts.errors import LayoutError, layout_error

__all__ = ["CopyOp", "CopyAtom", "universal_copy", "ldmatrix", "stmatrix", "cp_async",
           "tma", "COPY_BITS"]

COPY_BITS = (8, 16, 32, 64, 128)


@dataclass(frozen=True)
class CopyOp:
    """A copy instruction as data (CuTe's ``Copy_Traits``); layouts are in bits.

    Attributes: ``name``, ``arch``, ``thr_id``, ``src_bits``/``dst_bits``/``ref_bits``
    (``(thread, value) -> bit``), ``ptx``, ``src_space``/``dst_space``
    (``"gmem"``, ``"smem"``, ``"reg"``).

    >>> op = ldmatrix(4)
    >>> op.name, str(op.dst_bits)
    ('SM75_U32x4_LDSM_N', '(32,(32,4)):(32,(1,1024))')
    """

    name: str
    arch: int
    thr_id: Layout
    src_bits: Layout
    dst_bits: Layout
    ref_bits: Layout
    ptx: str
    src_space: str = "reg"
    dst_space: str = "reg"

    @property
    def num_threads(self) -> int:
        """Threads that execute the copy together."""
        return it.product(self.thr_id.shape)


@dataclass(frozen=True)
class CopyAtom:
    """A copy op applied to elements of one type (CuTe's ``Copy_Atom<Op, T>``).

    ``src_layout``/``dst_layout``/``ref_layout`` are the op's bit layouts
    upcast by the element width: ``(thread, value) -> element``.
    Precondition: the op moves a whole number of elements per thread.

    >>> from cute_py.atoms import make_copy_atom
    >>> atom = make_copy_atom("UniversalCopy<uint128_t>", "bf16")
    >>> print(atom.src_layout), atom.num_values
    (1,8):(0,1)
    (None, 8)
    """

    op: CopyOp
    value_type: DType

    def __post_init__(self):
        if not isinstance(self.op, CopyOp):
            raise TypeError(f"CopyAtom: op must be a CopyOp (make_copy_atom takes its name), got "
                            f"{type(self.op).__name__} {self.op!r:.60}")
        if not isinstance(self.value_type, DType):
            raise TypeError(f"CopyAtom: value_type must be a DType (make_copy_atom takes its name), got "
                            f"{type(self.value_type).__name__} {self.value_type!r:.60}")

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def thr_id(self) -> Layout:
        return self.op.thr_id

    @property
    def src_layout(self) -> Layout:
        return upcast(self.op.src_bits, self.value_type.bits)

    @property
    def dst_layout(self) -> Layout:
        return upcast(self.op.dst_bits, self.value_type.bits)

    @property
    def ref_layout(self) -> Layout:
        return upcast(self.op.ref_bits, self.value_type.bits)

    @property
    def num_threads(self) -> int:
        return self.op.num_threads

    @property
    def num_values(self) -> int:
        """Values per thread (of the reference layout)."""
        return it.product(self.ref_layout.shape[1])

    def __str__(self) -> str:
        return (f"Copy_Atom {self.name}\n"
                f"  ThrID:        {self.thr_id}\n"
                f"  ValLayoutSrc: {self.src_layout}\n"
                f"  ValLayoutDst: {self.dst_layout}\n"
                f"  ValLayoutRef: {self.ref_layout}\n"
                f"  ValueType:    {self.value_type.bits}b\n")


def _check_bits(op, bits, allowed=COPY_BITS):
    if bits not in allowed:
        raise layout_error(LayoutError, op, "unsupported copy width", f"{bits} bits; use one of {allowed}")


def universal_copy(bits: int) -> CopyOp:
    """One thread copies ``bits`` bits with an ordinary load/store (CuTe's ``UniversalCopy<uint{bits}_t>``).

    >>> print(universal_copy(128).src_bits)
    (1,128):(0,1)
    """
    _check_bits("universal_copy", bits)
    lay = Layout((1, bits), (0, 1))
    return CopyOp(f"UniversalCopy<uint{bits}_t>", 0, Layout(1), lay, lay, lay,
                  f"ld/st.b{bits}" if bits <= 64 else "ld/st.v4.b32")


_LDSM_SRC = {1: parse("((8,4),128):((128,0),1)"), 2: parse("((16,2),128):((128,0),1)"), 4: parse("(32,128):(128,1)")}
_LDSM_DST_N = {1: parse("(32,32):(32,1)"), 2: parse("(32,(32,2)):(32,(1,1024))"), 4: parse("(32,(32,4)):(32,(1,1024))")}
_LDSM_DST_T = {1: parse("((4,8),(16,2)):((256,16),(1,128))"),
               2: parse("((4,8),(16,2,2)):((256,16),(1,128,1024))"),
               4: parse("((4,8),(16,2,4)):((256,16),(1,128,1024))")}


def _ldsm_name(kind, num, trans):
    return f"SM{75 if kind == 'LDSM' else 90}_" + (f"U16x{2 * num}_{kind}_T" if trans else f"U32x{num}_{kind}_N")


def ldmatrix(num: int, trans: bool = False) -> CopyOp:
    """``ldmatrix.sync.aligned.x{num}[.trans].m8n8.shared.b16``: a warp loads ``num`` 8x8 16-bit matrices.

    Lane ``8j + r`` supplies the address of row ``r`` of matrix ``j``; each lane
    receives 32 bits per matrix.

    >>> ldmatrix(2, trans=True).name
    'SM75_U16x4_LDSM_T'
    """
    if num not in (1, 2, 4):
        raise layout_error(LayoutError, "ldmatrix", "num must be 1, 2 or 4", f"got {num!r}")
    dst = (_LDSM_DST_T if trans else _LDSM_DST_N)[num]
    ptx = f"ldmatrix.sync.aligned.x{num}{'.trans' if trans else ''}.m8n8.shared.b16"
    return CopyOp(_ldsm_name("LDSM", num, trans), 75, Layout(32), _LDSM_SRC[num], dst, dst, ptx, "smem", "reg")


def stmatrix(num: int, trans: bool = False) -> CopyOp:
    """``stmatrix.sync.aligned.x{num}[.trans].m8n8.shared.b16``: the inverse of :func:`ldmatrix`.

    >>> print(stmatrix(1).dst_bits)
    ((8,4),128):((128,0),1)
    """
    if num not in (1, 2, 4):
        raise layout_error(LayoutError, "stmatrix", "num must be 1, 2 or 4", f"got {num!r}")
    src = (_LDSM_DST_T if trans else _LDSM_DST_N)[num]
    ptx = f"stmatrix.sync.aligned.x{num}{'.trans' if trans else ''}.m8n8.shared.b16"
    return CopyOp(_ldsm_name("STSM", num, trans), 90, Layout(32), src, _LDSM_SRC[num], src, ptx, "reg", "smem")


def cp_async(bits: int = 128, cache: str = "always") -> CopyOp:
    """``cp.async.{ca|cg}.shared.global``: one thread copies 4, 8 or 16 bytes gmem -> smem asynchronously.

    ``cache="global"`` (``.cg``) exists only for 16 bytes.

    >>> cp_async(128, "global").ptx
    'cp.async.cg.shared.global.L2::128B'
    """
    _check_bits("cp_async", bits, (32, 64, 128))
    if cache not in ("always", "global"):
        raise layout_error(LayoutError, "cp_async", "cache must be 'always' or 'global'", f"got {cache!r}")
    if cache == "global" and bits != 128:
        raise layout_error(LayoutError, "cp_async", "cp.async.cg copies 16 bytes only", f"got {bits} bits")
    lay = Layout((1, bits), (0, 1))
    name = f"SM80_CP_ASYNC_CACHE{cache.upper()}<uint{bits}_t>"
    return CopyOp(name, 80, Layout(1), lay, lay, lay,
                  f"cp.async.{'ca' if cache == 'always' else 'cg'}.shared.global.L2::128B", "gmem", "smem")


_TMA_KINDS = {
    "load": ("SM90_TMA_LOAD", "cp.async.bulk.tensor.{r}d.shared::cluster.global.mbarrier::complete_tx::bytes",
             "gmem", "smem"),
    "load_multicast": ("SM90_TMA_LOAD_MULTICAST",
                       "cp.async.bulk.tensor.{r}d.shared::cluster.global.mbarrier::complete_tx::bytes"
                       ".multicast::cluster", "gmem", "smem"),
    "store": ("SM90_TMA_STORE", "cp.async.bulk.tensor.{r}d.global.shared::cta.bulk_group", "smem", "gmem"),
}


def tma(kind: str, num_bits: int, rank: int = 2) -> CopyOp:
    """A TMA copy issued by one thread moving ``num_bits`` bits (the whole box): load, load_multicast or store.

    >>> op = tma("load", 64 * 128 * 16)
    >>> op.name, str(op.src_bits)
    ('SM90_TMA_LOAD<131072>', '(1,131072):(0,1)')
    """
    if kind not in _TMA_KINDS:
        raise layout_error(LayoutError, "tma", "kind must be load, load_multicast or store", f"got {kind!r}")
    if not it.is_int(num_bits) or num_bits < 8 or num_bits % 8:
        raise layout_error(LayoutError, "tma", "num_bits must be a positive multiple of 8", f"got {num_bits!r}")
    if rank not in (1, 2, 3, 4, 5):
        raise layout_error(LayoutError, "tma", "tensor rank must be 1..5", f"got {rank!r}")
    base, ptx, src, dst = _TMA_KINDS[kind]
    lay = Layout((1, num_bits), (0, 1))
    return CopyOp(f"{base}<{num_bits}>", 90, Layout(1), lay, lay, lay, ptx.format(r=rank), src, dst)
