"""Looking atoms up: by CuTe name, or by architecture, element types and shape.

>>> get("SM80_16x8x16_F32BF16BF16F32_TN").ptx
'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32'
>>> [a.name for a in find(arch=90, d="f32", a="bf16", shape_mnk=(64, 256, 16))]
['SM90_64x256x16_F32BF16BF16_RS', 'SM90_64x256x16_F32BF16BF16_SS']
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..layouts import int_tuple as it, upcast
from ..layouts.dtypes import dtype
from ..layouts.errors import LayoutError, layout_error, names_caller
from .copy import CopyAtom, CopyOp, cp_async, ldmatrix, stmatrix, tma, universal_copy
from .mma import (
    GMMA_N_VALUES, AtomError, _GMMA_INT_N, gmma, sm70_mma, sm75_mma, sm80_mma, sm89_mma,
)

__all__ = ["get", "get_copy_op", "make_copy_atom", "find", "all_mma_atoms", "all_copy_ops", "AtomError"]

_TOKENS = re.compile(r"BF16|TF32|F16|F32|F64|E4M3|E5M2|S8|U8|S32")


def _split_types(op, name, s, count):
    toks = _TOKENS.findall(s)
    if "".join(toks) != s:
        raise layout_error(AtomError, op, "unknown element types in atom name", f"{s!r} in {name!r}")
    if len(toks) != count:
        raise layout_error(AtomError, op, f"expected {count} element types in the atom name",
                           f"{s!r} in {name!r} has {len(toks)}")
    return [t.lower() for t in toks]


def get(name: str, *, a_major: str = "K", b_major: str = "K"):
    """The MMA atom (or copy op) with CuTe's name; GMMA majors are keyword arguments (default K, K).

    Raises :class:`AtomError` for an unknown name, with the families that exist.

    >>> get("SM90_64x128x16_F32BF16BF16_SS", b_major="MN").b_major
    'MN'
    >>> get("SM75_U32x4_LDSM_N").ptx
    'ldmatrix.sync.aligned.x4.m8n8.shared.b16'
    """
    if not isinstance(name, str):
        raise TypeError(f"atoms.get: expected a name, got {type(name).__name__}")
    m = re.fullmatch(r"SM90_64x(\d+)x(\d+)_([A-Z0-9]+?)_(SS|RS)(_TN)?(_SATURATE)?", name)
    if m:
        n, k, types, ss, tn, sat = m.groups()
        d, a, b = _split_types("atoms.get", name, types, 3)
        atom = gmma(int(n), d, a, b, "smem" if ss == "SS" else "reg", a_major, b_major, bool(sat))
        if atom.name != name:
            raise layout_error(AtomError, "atoms.get", "no such GMMA atom", f"{name!r}; did you mean {atom.name!r}?")
        return atom
    if (a_major, b_major) != ("K", "K"):
        raise layout_error(AtomError, "atoms.get", "majors are parameters of GMMA atoms only",
                           f"{name!r} fixes its majors in its name")
    m = re.fullmatch(r"SM70_8x8x4_([A-Z0-9]+)_(TN|NT|NN|TT)", name)
    if m:
        d, a, b, c = _split_types("atoms.get", name, m.group(1), 4)
        atom = sm70_mma(d, a, b, m.group(2))
        if atom.name == name:
            return atom
    m = re.fullmatch(r"SM(75|80|89)_(\d+)x(\d+)x(\d+)_([A-Z0-9]+?)_TN(_SATURATE)?", name)
    if m:
        arch, mm, nn, kk, types, sat = m.groups()
        toks = _split_types("atoms.get", name, types, 4)
        if toks[0] == toks[3]:
            d, a, b = toks[:3]
            shape = (int(mm), int(nn), int(kk))
            if arch == "80":
                atom = sm80_mma(*shape, d, a, b, saturate=bool(sat))
            elif arch == "75" and not sat:
                atom = sm75_mma(*shape, d, a, b)
            elif arch == "89" and not sat and shape == (16, 8, 32):
                atom = sm89_mma(d, a, b)
            else:
                atom = None
            if atom is not None and atom.name == name:
                return atom
    try:
        return get_copy_op(name)
    except AtomError:
        pass
    raise layout_error(AtomError, "atoms.get", "unknown atom name",
                       f"{name!r}; MMA families: SM70_8x8x4_*_{{TN,NT,NN,TT}}, SM75/SM80/SM89_MxNxK_DABC_TN, "
                       f"SM90_64xNxK_DAB_{{SS,RS}}[_TN]; copy: UniversalCopy<uintN_t>, SM75_U32x{{1,2,4}}_LDSM_N, "
                       f"SM75_U16x{{2,4,8}}_LDSM_T, SM90_..._STSM_..., SM80_CP_ASYNC_CACHE{{ALWAYS,GLOBAL}}<uintN_t>, "
                       f"SM90_TMA_{{LOAD,LOAD_MULTICAST,STORE}}<bits>")


def get_copy_op(name: str) -> CopyOp:
    """The copy op with CuTe's name (``UniversalCopy<uint128_t>``, ``SM75_U32x4_LDSM_N``, ``SM90_TMA_LOAD<bits>``...).

    >>> get_copy_op("SM90_U16x8_STSM_T").ptx
    'stmatrix.sync.aligned.x4.trans.m8n8.shared.b16'
    """
    m = re.fullmatch(r"UniversalCopy<uint(\d+)_t>", name)
    if m:
        return universal_copy(int(m.group(1)))
    m = re.fullmatch(r"SM(75|90)_U(32|16)x(\d)_(LDSM|STSM)_(N|T)", name)
    if m:
        arch, bits, cnt, kind, nt = m.groups()
        trans = nt == "T"
        num = int(cnt) // 2 if trans else int(cnt)
        fn = ldmatrix if kind == "LDSM" else stmatrix
        if num in (1, 2, 4) and (bits == "16") == trans:
            op = fn(num, trans)
            if op.name == name:
                return op
    m = re.fullmatch(r"SM80_CP_ASYNC_CACHE(ALWAYS|GLOBAL)<uint(\d+)_t>", name)
    if m:
        return cp_async(int(m.group(2)), m.group(1).lower())
    m = re.fullmatch(r"SM90_TMA_(LOAD|LOAD_MULTICAST|STORE)<(\d+)>", name)
    if m:
        return tma(m.group(1).lower(), int(m.group(2)))
    raise layout_error(AtomError, "atoms.get_copy_op", "unknown copy op name", f"{name!r}")


@lru_cache(maxsize=1)
def all_mma_atoms() -> tuple:
    """Every MMA atom cute_py knows (GMMA with K-major operands), sorted by name."""
    atoms = []
    for d in ("f16", "f32"):
        for majors in ("TN", "NT", "NN", "TT"):
            atoms.append(sm70_mma(d, "f16", "f16", majors))
    atoms += [sm75_mma(16, 8, 8, d, "f16", "f16") for d in ("f16", "f32")] + [sm75_mma(8, 8, 16, "s32", "s8", "s8")]
    for shape in ((16, 8, 8), (16, 8, 16)):
        atoms += [sm80_mma(*shape, d, a, a) for d, a in (("f16", "f16"), ("f32", "f16"), ("f32", "bf16"))]
    atoms += [sm80_mma(16, 8, k, "f32", "tf32", "tf32") for k in (4, 8)] + [sm80_mma(8, 8, 4, "f64", "f64", "f64")]
    ints = [(x, y) for x in ("s8", "u8") for y in ("s8", "u8")]
    for shape in ((8, 8, 16), (16, 8, 16), (16, 8, 32)):
        for sat in (False, True):
            atoms += [sm80_mma(*shape, "s32", x, y, saturate=sat) for x, y in ints]
    fp8 = [(x, y) for x in ("e4m3", "e5m2") for y in ("e4m3", "e5m2")]
    atoms += [sm89_mma(d, x, y) for d in ("f32", "f16") for x, y in fp8]
    for src in ("smem", "reg"):
        for n in GMMA_N_VALUES:
            atoms += [gmma(n, d, a, a, src) for d, a in (("f16", "f16"), ("f32", "f16"), ("f32", "bf16"))]
            atoms.append(gmma(n, "f32", "tf32", "tf32", src))
            atoms += [gmma(n, d, x, y, src) for d in ("f16", "f32") for x, y in fp8]
            if n in _GMMA_INT_N:
                atoms += [gmma(n, "s32", x, y, src, saturate=sat) for x, y in ints for sat in (False, True)]
    return tuple(sorted(atoms, key=lambda a: a.name))


def all_copy_ops() -> tuple:
    """Every copy op family member (TMA ops with a 16 KiB example box)."""
    ops = [universal_copy(b) for b in (8, 16, 32, 64, 128)]
    ops += [ldmatrix(n, t) for n in (1, 2, 4) for t in (False, True)]
    ops += [stmatrix(n, t) for n in (1, 2, 4) for t in (False, True)]
    ops += [cp_async(b) for b in (32, 64, 128)] + [cp_async(128, "global")]
    ops += [tma(k, 128 * 64 * 16) for k in ("load", "load_multicast", "store")]
    return tuple(ops)


def find(arch=None, d=None, a=None, b=None, shape_mnk=None, a_source=None) -> list:
    """MMA atoms matching every given criterion (element types by name or DType), sorted by name.

    >>> [x.name for x in find(arch=80, a="tf32")]
    ['SM80_16x8x4_F32TF32TF32F32_TN', 'SM80_16x8x8_F32TF32TF32F32_TN']
    """
    want = {k: dtype(v) for k, v in (("c_type", d), ("a_type", a), ("b_type", b)) if v is not None}
    out = []
    for atom in all_mma_atoms():
        if arch is not None and atom.arch != arch:
            continue
        if shape_mnk is not None and atom.shape_mnk != tuple(shape_mnk):
            continue
        if a_source is not None and atom.a_source != a_source:
            continue
        if any(getattr(atom, k) != v for k, v in want.items()):
            continue
        out.append(atom)
    return out


@names_caller
def make_copy_atom(op, value_type) -> CopyAtom:
    """``Copy_Atom<Op, T>``: an op (or its name) for elements of ``value_type``.

    Precondition: every bit layout's value extents divide by the element width.

    >>> print(make_copy_atom("SM75_U16x8_LDSM_T", "f16").dst_layout)
    ((4,8),(1,2,4)):((16,1),(1,8,64))
    """
    if isinstance(op, str):
        op = get_copy_op(op)
    if not isinstance(op, CopyOp):
        raise TypeError(f"make_copy_atom: expected a CopyOp or its name, got {type(op).__name__}")
    t = dtype(value_type)
    for lay in (op.src_bits, op.dst_bits, op.ref_bits):
        vals = it.product(lay.shape[1])
        if vals % t.bits:
            raise layout_error(LayoutError, "make_copy_atom", "the op moves a fractional number of elements",
                               f"{vals} bits per thread for {t.bits}-bit {t.name}", copy_op=op.name)
        elems = upcast(lay, t.bits)
        # An element must sit in contiguous bits of one thread (C++: size<0>(ValLayout) == size(ThrID)).
        if it.product(elems.shape[0]) != it.product(lay.shape[0]) or \
                it.product(elems.shape[1]) * t.bits != vals:
            raise layout_error(LayoutError, "make_copy_atom", "elements would straddle non-adjacent bits",
                               f"{t.bits}-bit {t.name} over {lay}", copy_op=op.name)
    return CopyAtom(op, t)
