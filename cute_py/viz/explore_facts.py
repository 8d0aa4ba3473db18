"""The explorer's side panels: the Hopper facts of a shared-memory tile, and the Python that rebuilds a view.

:func:`smem_facts` asks :mod:`cute_py.arch.sm90` what it makes of a rank-2
``(MN, K)`` tile: the wgmma descriptor of each major order
(:func:`~cute_py.arch.sm90.make_gmma_desc`, its fields with the strides they
come from) and the TMA box of a copy from a symbolic gmem matrix of the same
major order (:func:`~cute_py.arch.sm90.make_tma_params`), or the reason each
refuses the tile. Nothing here derives a field itself.

>>> import cute_py as cp
>>> [f["title"] for f in smem_facts(cp.parse("Sw<3,3,3> o 0 o (64,64):(64,1)"), "bf16") if f["ok"]]
['wgmma descriptor, K-major', 'TMA box, gmem (M,K):(K,1)']
"""

from __future__ import annotations

from ..arch.sm90 import make_gmma_desc, make_tma_params
from ..arch.sm90.requests import as_dtype
from ..atoms import CopyAtom, MMAAtom
from ..layouts import ComposedLayout, Layout, Swizzle, parse
from ..layouts import int_tuple as it
from ..layouts.errors import LayoutError

__all__ = ["smem_facts", "python_code", "GMEM"]

GMEM = {"K": "(M,K):(K,1)", "MN": "(M,K):(1,M)"}
"""The symbolic gmem matrix the TMA box is derived from, by the major order of the smem tile."""


_REFUSALS = (LayoutError, TypeError, ValueError)


def _first_line(e) -> str:
    return str(e).splitlines()[0]


def smem_facts(layout, dtype) -> list:
    """``[{"title", "ok", "text"}]``: the wgmma descriptors and TMA boxes of a rank-2 smem tile (empty for others).

    ``text`` is the fact's ``describe()`` when ``ok``, else why :mod:`cute_py.arch.sm90` refuses the tile. The
    descriptor's slice is ``(64, instruction K)`` (the tile's MN extent when that is smaller). A major order whose
    descriptor and TMA box are both refused is listed once, with both reasons. A composed layout whose outer
    function is not a swizzle is no shared-memory tile of the hardware's: it has no facts.

    >>> smem_facts(parse("(4,8):(8,1) o 0 o (4,4):(1,4)"), "bf16")
    []
    """
    t = as_dtype("explore", dtype)
    if isinstance(layout, ComposedLayout) and not isinstance(layout.outer, Swizzle):
        return []
    inner = layout.inner if isinstance(layout, ComposedLayout) else layout
    if not isinstance(inner, Layout) or it.rank(inner.shape) != 2 or t.bits not in (8, 16, 32):
        return []
    if not all(it.is_int(x) for x in it.flatten_to_tuple((inner.shape, inner.stride))):
        return []
    mn = it.product(inner.shape[0])
    facts, refused = [], []
    for major in ("K", "MN"):
        try:
            desc = make_gmma_desc(layout, t, major, mma_mn=64 if mn % 64 == 0 else mn)
            facts.append({"title": f"wgmma descriptor, {major}-major", "ok": True, "text": desc.describe()})
        except _REFUSALS as e:                          # one refused fact is a line, never the whole scene
            refused.append(f"wgmma descriptor, {major}-major: {_first_line(e)}")
    for major, gmem in GMEM.items():
        try:
            p = make_tma_params(parse(gmem), layout, t)
            facts.append({"title": f"TMA box, gmem {gmem}", "ok": True, "text": p.describe()})
        except _REFUSALS as e:
            refused.append(f"TMA box, gmem {gmem}: {_first_line(e)}")
    if refused:
        facts.append({"title": "refused", "ok": False, "text": "\n".join(refused)})
    return facts


def _obj_code(obj, kind) -> list:
    """Lines that bind ``obj`` to the explored object."""
    if kind == "mma":
        atom = obj if isinstance(obj, MMAAtom) else obj.atom
        if isinstance(obj, MMAAtom):
            return [f"obj = cp.atoms.get({atom.name!r})"]
        line = f"obj = cp.make_tiled_mma(cp.atoms.get({atom.name!r}), cp.parse({str(obj.atom_layout)!r})"
        if any(p is not None and str(p) != "_" for p in obj.permutation):
            return [line + ", permutation)  # permutation: " + ", ".join(map(str, obj.permutation))]
        return [line + ")"]
    if kind == "copy":
        atom = obj if isinstance(obj, CopyAtom) else obj.atom
        line = f"atom = cp.make_copy_atom({atom.op.name!r}, {atom.value_type.name!r})"
        if isinstance(obj, CopyAtom):
            return [line, "obj = atom"]
        return [line, f"obj = cp.TiledCopy(atom, cp.parse({str(obj.layout_tv)!r}), "
                      f"{tuple(str(x) if not it.is_int(x) else x for x in obj.tiler_mn)!r})"]
    if kind == "tensor":
        args = ["engine", f"cp.parse({str(obj.layout)!r})"]
        if not obj.is_identity and obj.offset != 0:
            args.append(repr(obj.offset))
        if not obj.is_identity and obj.dtype is not None:
            args.append(f"dtype={obj.dtype.name!r}")
        return [f"obj = cp.Tensor({', '.join(args)})  # engine: the tensor's 1-D array"]
    return [f"obj = cp.parse({str(obj)!r})"]              # the object shown: the swizzle picker's included


def python_code(obj, kind, scene) -> str:
    """The Python that rebuilds the scene's object and view: the object, the explorer call and the analysis.

    >>> import cute_py as cp
    >>> from cute_py.viz.explore_scene import scene
    >>> print(scene(cp.parse("(8,8):(8,1)"), view="banks", access="vec32", dtype="f32")["python"])
    import cute_py as cp
    obj = cp.parse('(8,8):(8,1)')
    cp.viz.explore(obj, dtype='f32', view='banks', access='vec32')
    print(cp.viz.bank_conflicts(obj, 'vec32', 'f32'))
    """
    lines = ["import cute_py as cp", *_obj_code(obj, kind)]
    view, access, dtype = scene["view"], scene["access"], scene["dtype"]
    if kind == "tv":
        lines.append(f"cp.viz.explore(obj, tile={tuple(scene['tile'])!r})")
        return "\n".join(lines)
    if kind in ("mma", "copy"):
        lines.append("cp.viz.explore(obj)")
        return "\n".join(lines)
    lines.append(f"cp.viz.explore(obj, dtype={dtype!r}, view={view!r}, access={access!r})")
    layout = "obj.layout" if kind == "tensor" else "obj"
    acc = repr(access)
    if access.strip().lower() == "ldmatrix" and view != "offsets":
        lines.insert(-1, "mma = cp.make_tiled_mma(cp.atoms.get('SM80_16x8x16_F32BF16BF16F32_TN'))")
        lines.insert(-1, f"ldmatrix = cp.make_tiled_copy_A(cp.make_copy_atom('SM75_U32x4_LDSM_N', {dtype!r}), mma)")
        acc = "ldmatrix"
    if view in ("banks", "threads"):
        lines.append(f"print(cp.viz.bank_conflicts({layout}, {acc}, {dtype!r}))")
    elif view == "coalescing":
        lines.append(f"print(cp.viz.coalescing({acc}, {layout}, {dtype!r}))")
    else:
        lines.append(f"cp.viz.print_layout({layout})")
    return "\n".join(lines)

