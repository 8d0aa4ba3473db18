"""Synthesis of a shared-memory layout for a set of accesses, with a certificate.

:func:`synthesize_smem_layout` answers "this tile is written by these accesses and read by those: which
layout makes all of them conflict-free, keeps their vectors whole, and is the cheapest; and if none does,
why not". The formulation over GF(2) and the family searched are in :mod:`cute_py.arch.sm90.synth_search`;
the accesses in :mod:`cute_py.arch.sm90.synth_access`. The certificate's counts come from the bank
analysis (:func:`~cute_py.arch.sm90.banks.bank_conflicts`) run on the result, not from the search's model.

>>> r = synthesize_smem_layout((64, 64), "bf16", writers=["tma"], readers=["wgmma"])
>>> print(r.layout, r.xor_terms, r.certificate.conflict_free)
Sw<3,3,3> o 0 o (64,64):(64,1) 3 True
"""

from __future__ import annotations

from dataclasses import dataclass

from ...layouts import ComposedLayout, Layout, Swizzle, composition, int_tuple as it
from ...layouts.errors import LayoutError, layout_error, names_caller
from ...layouts.dtypes import DType
from ...layouts.f2_algebra import from_bits, is_f2_layout
from .banks import BankConflictReport, bank_conflicts
from .gmma_desc import make_gmma_desc
from .requests import element_bits, requests_of
from .smem import smem_atom, tile_smem
from .synth_access import SmemAccess, as_access, element_type
from .synth_search import (apply_images, base_models, canonical_swizzle, covering_bound, f2_candidate, f2_search,
                           swizzle_candidates)
from .tma import validate_tma

__all__ = ["synthesize_smem_layout", "SmemSynthesis", "SynthesisCertificate", "AccessCertificate",
           "checked_element_type"]

_OP = "synthesize_smem_layout"
FAMILIES = ("swizzle", "f2")


@dataclass(frozen=True)
class AccessCertificate:
    """One access on the result: its bank-conflict ``report`` (the bank analysis), ``lower_bound`` (the
    fewest wavefronts its worst phase can take alone under any layout of the family, a proven bound:
    :func:`~cute_py.arch.sm90.synth_search.covering_bound`) and whether its vectors stay whole
    (``vectors_whole``)."""

    access: SmemAccess
    report: BankConflictReport
    lower_bound: int
    vectors_whole: bool

    @property
    def max_ways(self) -> int:
        return self.report.max_ways

    @property
    def meets_bound(self) -> bool:
        return self.report.max_ways <= self.lower_bound

    def line(self) -> str:
        """One line: the access, its width, its worst conflict, wavefronts, lower bound alone and vectors."""
        r = self.report
        got = "conflict-free" if r.conflict_free else f"{r.max_ways}-way"
        return (f"{str(self.access):28} {r.vector_bits:3}-bit, {got:13} {r.total_wavefronts} wavefronts (ideal "
                f"{r.total_ideal}); alone at least {self.lower_bound}-way, "
                f"{'met' if self.meets_bound else 'not met'}; vectors {'whole' if self.vectors_whole else 'BROKEN'}")


@dataclass(frozen=True)
class SynthesisCertificate:
    """What :func:`synthesize_smem_layout` proves about its result.

    ``accesses``: an :class:`AccessCertificate` per access; ``min_max_ways``: the smallest worst conflict any
    layout of the family achieves (1: conflict-free; the result achieves it; among the layouts searched when
    ``exhaustive`` is False); ``lower_bound``: the fewest wavefronts the worst phase of all the accesses
    together can take under any layout of the family (a proven bound, from the covering argument of
    :func:`~cute_py.arch.sm90.synth_search.covering_bound`); ``exhaustive``: the search saw the whole family;
    ``incompatible``: the accesses that cannot all be conflict-free together (empty when they can) and
    ``reason`` in words; ``tma`` / ``wgmma``: whether TMA and wgmma can address the result (None when no
    access is TMA's, or wgmma's; ``tma_reason`` / ``wgmma_reason`` say why); ``canonical``: a conflict-free
    canonical GMMA tile when TMA or wgmma is asked for and cannot address the result (else None)."""

    accesses: tuple
    min_max_ways: int
    lower_bound: int
    exhaustive: bool
    incompatible: tuple
    reason: str
    tma: bool
    tma_reason: str
    wgmma: bool
    wgmma_reason: str
    canonical: object

    @property
    def conflict_free(self) -> bool:
        return all(a.report.conflict_free for a in self.accesses)

    @property
    def max_ways(self) -> int:
        return max((a.max_ways for a in self.accesses), default=1)

    @property
    def meets_bound(self) -> bool:
        """The result's worst conflict is the proven lower bound: no layout of the family does better."""
        return self.max_ways <= self.lower_bound

    def to_text(self) -> str:
        """Each access's line, the verdict (or the least conflict and the reason), TMA and wgmma (``str()``)."""
        lines = ["certificate (bank analysis of the result):"]
        lines += ["  " + a.line() for a in self.accesses]
        if self.conflict_free:
            lines.append("  every access conflict-free: each meets its lower bound")
        else:
            head = ("no layout of the family is conflict-free: the smallest worst conflict is" if self.exhaustive
                    else "no conflict-free layout among those searched (the F2 search was not exhaustive): the "
                         "least worst conflict found is")
            lines.append(f"  {head} {self.min_max_ways}-way; all the accesses together take at least "
                         f"{self.lower_bound}-way in the family ({'met' if self.meets_bound else 'not met'})")
            lines.append(f"  incompatible: {', '.join(self.incompatible)}: {self.reason}")
        if self.tma is not None:
            lines.append(f"  TMA: {'yes' if self.tma else 'no'} ({self.tma_reason})")
        if self.wgmma is not None:
            lines.append(f"  wgmma: {'yes' if self.wgmma else 'no'} ({self.wgmma_reason})")
        if self.canonical is not None:
            lines.append(f"  the cheapest conflict-free canonical GMMA tile: {self.canonical}")
        elif self.tma is False or self.wgmma is False:
            lines.append("  no canonical GMMA tile serves these accesses conflict-free with whole vectors")
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()


@dataclass(frozen=True)
class SmemSynthesis:
    """The result of :func:`synthesize_smem_layout`: ``layout`` (a swizzled ``Sw<B,M,S> o 0 o base`` or an
    F2-strided Layout), ``swizzle`` (None for an F2 layout), ``base`` (the compact tile order under it),
    ``xor_terms`` (its cost), ``family``, ``dtype``, ``tile_shape`` and the ``certificate``."""

    layout: object
    swizzle: Swizzle | None
    base: Layout
    xor_terms: int
    family: str
    dtype: object
    tile_shape: tuple
    certificate: SynthesisCertificate

    def head(self) -> str:
        """The first lines of :meth:`to_text`: the tile, the layout and its cost."""
        what = (f"{self.swizzle} over {self.base}" if self.swizzle is not None else
                f"no swizzle: the plain {self.base}" if self.xor_terms == 0 else
                f"an F2 layout: bank bits XOR line bits over {self.base}")
        return "\n".join([f"synthesize_smem_layout {self.tile_shape[0]}x{self.tile_shape[1]} {self.dtype.name}, "
                          f"family {self.family}:",
                          f"  layout {self.layout}",
                          f"  {what}; {self.xor_terms} XOR term{'s' if self.xor_terms != 1 else ''}"])

    def to_text(self) -> str:
        """The tile, the layout, its cost and the certificate (``str()``)."""
        return self.head() + "\n" + self.certificate.to_text()

    def __str__(self):
        return self.to_text()

    def _repr_html_(self):
        import html

        return f"<pre>{html.escape(self.to_text())}</pre>"


# ---------------------------------------------------------------------------------------------------------------


def _tile(tile_shape) -> tuple:
    if not (isinstance(tile_shape, tuple) and len(tile_shape) == 2
            and all(it.is_int(x) and not isinstance(x, bool) for x in tile_shape)):
        raise layout_error(LayoutError, _OP, "tile_shape must be (rows, cols) of ints", f"got {tile_shape!r}")
    if any(x < 1 or x & (x - 1) for x in tile_shape):
        raise layout_error(LayoutError, _OP, "tile_shape must be powers of two", f"got {tile_shape!r}; the layout "
                           f"is a linear map over GF(2) of the tile's coordinate bits")
    return tuple(int(x) for x in tile_shape)


def _vectors_whole(layout, acc: SmemAccess, t, vector_bits) -> bool:
    """Every lane's vector of ``acc`` is contiguous and aligned in ``layout`` (TMA's 16-byte chunks too)."""
    import numpy as np

    reqs = requests_of(_OP, layout, acc.access, t, element_bits(_OP, layout, t.bits), vector_bits=vector_bits)
    per = np.bincount(reqs.access)
    if len(per) and np.any(per != per[0]):
        return False                                    # lanes move unequal vectors: not one vector access
    if not len(per) or per[0] == 1:
        return True
    bits = reqs.bits.reshape(-1, int(per[0]))
    return bool(np.all(bits == bits[:, :1] + np.arange(bits.shape[1]) * t.bits)
                and np.all(bits[:, 0] % (bits.shape[1] * t.bits) == 0))


def _build(cand, tile_shape):
    """The layout of a search candidate."""
    if cand.swizzle is not None:
        return composition(cand.swizzle, cand.base.layout) if cand.swizzle.bits else cand.base.layout
    img = cand.offset_images()
    return from_bits(tile_shape, [apply_images(img, x) for x in cand.base.images])


def _tma(layout, major, t):
    if is_f2_layout(layout):
        return False, "an F2 layout: TMA writes a box through one of its swizzle modes, Sw<B,4,3> on bytes"
    gmem = Layout((4096, 4096), (4096, 1) if major == "K" else (1, 4096))
    try:
        problems = validate_tma(gmem, layout, t)
    except LayoutError as e:
        return False, str(e).splitlines()[0]
    if problems:
        return False, "; ".join(problems)
    return True, f"a {'row' if major == 'K' else 'column'}-major box"


def _wgmma(layout, major, t, tile_shape):
    if not isinstance(layout, (ComposedLayout, Layout)) or is_f2_layout(layout):
        return False, "an F2 layout is none of the canonical GMMA layouts"
    mn = tile_shape[0]
    try:
        desc = make_gmma_desc(layout, t, major, mma_mn=64 if mn % 64 == 0 else mn)
    except LayoutError as e:
        return False, str(e).splitlines()[0]
    return True, f"{major}-major operand, descriptor {desc.value:#018x}"


def _canonical_alternative(tile_shape, t, accesses, vbits):
    """The conflict-free canonical GMMA tile with the fewest swizzle bits (both majors; one TMA can address
    when an access is TMA's), or None."""
    best = None
    for major in ("K", "MN"):
        for sw_bytes in (0, 32, 64, 128):
            try:
                lay = tile_smem(smem_atom(major, sw_bytes, t), *tile_shape, major=major)
                needs_tma = any(a.major is not None for a in accesses)
                ok = (not needs_tma or _tma(lay, major, t)[0]) and all((a.major in (None, major)) and _vectors_whole(lay, a, t, vb)
                         and bank_conflicts(lay, a.access, t, vector_bits=vb).conflict_free
                         for a, vb in zip(accesses, vbits))
            except LayoutError:
                continue
            if ok and (best is None or sw_bytes < best[0]):
                best = (sw_bytes, f"{major}-major {'SW' + str(sw_bytes) if sw_bytes else 'INTER'}: {lay}")
    return best[1] if best else None


def _core(feasible, names) -> tuple:
    """A smallest-by-deletion set of access indices that ``feasible`` rejects together."""
    core = list(range(len(names)))
    for i in list(core):
        rest = [j for j in core if j != i]
        if not feasible(rest):
            core = rest
    return tuple(core)


def _bound(models, indices) -> int:
    """The proven lower bound of the accesses ``indices`` together over every base (the least of the bases')."""
    return min(covering_bound(m, indices)[0] for m in models)


def _reason(core, accesses, models, family, f2_cost, exhaustive) -> str:
    """Why the accesses ``core`` cannot all be conflict-free, in words (a proof where the covering argument
    applies on every base: their phases read every nonzero combination of more index bits than a word and a
    bank hold)."""
    names = [str(accesses[i]) for i in core]
    where = f"the {family} family" if exhaustive else f"the layouts of the {family} family searched"
    if len(core) == 1:
        text = f"{names[0]} cannot be conflict-free even alone in {where}"
    else:
        text = (f"each can be conflict-free alone (or with fewer of the others), but no layout of {where} "
                f"serves {', '.join(names[:-1])} and {names[-1]} together")
    if _bound(models, core) > 1:
        span = max(covering_bound(m, core)[1] for m in models)
        text += (f": their phases span {span} index bits and read every nonzero combination of them within one "
                 f"phase, while the word and bank bits of an offset are {models[0].hi}; so any bijective layout "
                 f"that is linear over GF(2) (every layout of both families) sends some combination only to the "
                 f"line bits, and the phase that reads it conflicts")
    if family == "swizzle" and f2_cost is not None:
        text += f"; the F2 family has a conflict-free layout with {f2_cost} XOR terms (family='f2')"
    return text


def checked_element_type(dtype) -> DType:
    """The element type of a synthesis: a known one, a power of two from 4 to 64 bits (else a LayoutError
    naming ``dtype=``).

    >>> checked_element_type("bf16").bits
    16
    >>> checked_element_type("f16x")
    Traceback (most recent call last):
    ...
    cute_py.layouts.errors.LayoutError: synthesize_smem_layout: unknown element type: dtype='f16x'
    """
    t = element_type(dtype)
    if t.bits & (t.bits - 1) or not 4 <= t.bits <= 64:
        raise layout_error(LayoutError, _OP, "the element width must be a power of two from 4 to 64 bits",
                           f"dtype={t.name} ({t.bits} bits)")
    return t


@names_caller
def synthesize_smem_layout(tile_shape, dtype, writers=(), readers=(), *, family="swizzle") -> SmemSynthesis:
    """The cheapest shared-memory layout of ``tile_shape`` that makes every writer and reader conflict-free and
    keeps their vectors whole, with a certificate.

    ``tile_shape`` is ``(rows, cols)``, powers of two; ``dtype`` the element type. Each access is a name
    (``"tma"``, ``"cp.async"``, ``"vec64"``, ``"ldmatrix"``, ``"stmatrix"``, ``"wgmma"``, ``"epilogue"``, each
    with ``:mn`` to run along mode 0 and some with ``:BITS``; see :mod:`cute_py.arch.sm90.synth_access`), a TV
    layout ``(thread, value) -> m + rows * n`` (or its CuTe text), or a copy atom / tiled copy: what
    :func:`~cute_py.arch.sm90.banks.bank_conflicts` takes. ``family="swizzle"`` searches ``Sw<B,M,S> o base``
    (``base`` the row- or column-major tile or a canonical GMMA atom tiled over it; cost ``B``); ``family="f2"``
    also the F2 layouts whose bank bits XOR any set of line bits (cost: one per term), and returns a swizzle
    when one is as cheap. The ranking: least worst conflict, then fewest XOR terms; when TMA moves the tile
    (a ``tma`` access), layouts TMA can address come first and fewer TMA boxes (contiguous runs of the box's
    inner mode) before fewer XOR terms.

    Postconditions: ``result.layout`` is a bijection onto ``[0, rows*cols)``; each access's vectors are whole;
    ``result.certificate.accesses[i].report == bank_conflicts(result.layout, access_i, dtype, ...)``; when
    ``certificate.conflict_free`` no layout of the family ranked before it is; otherwise
    ``certificate.max_ways == certificate.min_max_ways``, the least any layout of the family achieves (among
    those searched when ``certificate.exhaustive`` is False); ``certificate.lower_bound`` is a proven bound.

    >>> r = synthesize_smem_layout((64, 32), "bf16", writers=["tma"], readers=["ldmatrix", "wgmma"])
    >>> print(r.swizzle, r.certificate.tma, r.certificate.wgmma)
    Sw<2,3,3> True True
    >>> r = synthesize_smem_layout((64, 64), "bf16", writers=["epilogue:16"], readers=["tma:mn"])
    >>> print(r.layout, r.certificate.tma, r.certificate.wgmma)
    Sw<3,3,3> o 0 o (64,64):(1,64) True None
    """
    if family not in FAMILIES:
        raise layout_error(LayoutError, _OP, "family must be 'swizzle' or 'f2'", f"got family={family!r}")
    shape = _tile(tile_shape)
    t = checked_element_type(dtype)
    for role, group in (("writers", writers), ("readers", readers)):
        if isinstance(group, (str, Layout)) or not isinstance(group, (list, tuple)):
            raise TypeError(f"{_OP}: {role} must be a list of accesses, got {type(group).__name__} {group!r:.60}")
    accesses = [as_access(a, shape, t, "write") for a in writers] + [as_access(a, shape, t, "read") for a in readers]
    if not accesses:
        raise layout_error(LayoutError, _OP, "needs at least one access", "writers and readers are both empty")
    import numpy as np

    models = base_models(shape, t, accesses)
    usable = [m for m in models if all(f is not None for f in m.forms)]
    if not usable:
        why = "; ".join(dict.fromkeys(r for m in models for r in m.refused.values()))
        raise layout_error(LayoutError, _OP, "no layout keeps every vector whole", why)
    by_tma = any(a.major is not None for a in accesses)
    tops, f2_cost, per_model = [], None, []
    for m in usable:
        cands = swizzle_candidates(m, t)
        tops.append(min(cands, key=lambda c: c.max_ways))    # stable: the cheapest among the least conflicted
        if by_tma:                                           # and the cheapest of those TMA knows
            tops.append(min((c for c in cands if canonical_swizzle(c.swizzle, t)), key=lambda c: c.max_ways))
        f2 = None
        if family == "f2" or tops[-1].max_ways > 1:
            least = min(c.cost for c in cands if c.max_ways == 1) if any(c.max_ways == 1 for c in cands) else None
            f2 = f2_search(m, least - 1 if family == "f2" and least is not None else None)
            cells, masks, ways, costs, _complete = f2
            if len(masks):
                joint = np.max(np.stack(ways), axis=0)
                j = int(np.lexsort((masks, costs, joint))[0])
                if joint[j] == 1:
                    f2_cost = int(costs[j]) if f2_cost is None else min(f2_cost, int(costs[j]))
                if family == "f2":
                    tops.append(f2_candidate(m, cells, int(masks[j]), [w[j] for w in ways]))
        per_model.append((m, cands, f2))
    ranked = []
    for c in tops:
        layout = _build(c, shape)
        tma_ok = _tma(layout, c.base.major, t) if by_tma else (True, "")
        key = ((not tma_ok[0], c.max_ways, c.base.inner_runs, c.cost) if by_tma else (c.max_ways, c.cost)) + \
              (c.swizzle is None,)                  # a swizzle when one is as cheap
        ranked.append((key, c, layout, tma_ok))
    _key, best, layout, (tma_ok, tma_why) = min(ranked, key=lambda r: r[0])   # stable: compact bases first
    m = best.base
    vbits = [m.forms[i].vector_bits for i in range(len(accesses))]
    certs = tuple(AccessCertificate(a, bank_conflicts(layout, a.access, t, vector_bits=vb), _bound(usable, [i]),
                                    _vectors_whole(layout, a, t, vb))
                  for i, (a, vb) in enumerate(zip(accesses, vbits)))
    exhaustive = family == "swizzle" or all(f is None or f[4] for _m, _c, f in per_model)
    core, reason = (), ""
    if best.max_ways > 1:
        def feasible(idx):
            """Some layout of the family (over any base) makes the accesses ``idx`` conflict-free."""
            for _m, cs, f in per_model:
                if any(max(c.ways[i] for i in idx) == 1 for c in cs):
                    return True
                if family == "f2" and f is not None and len(f[1]):
                    if np.any(np.max(np.stack([f[2][i] for i in idx]), axis=0) == 1):
                        return True
            return False

        core = _core(lambda idx: not idx or feasible(idx), accesses)
        reason = _reason(core, accesses, usable, family, f2_cost, exhaustive)
    joint = max(_bound(usable, range(len(accesses))), _bound(usable, core) if core else 1)
    wg_ok, wg_why = _wgmma(layout, m.major, t, shape)
    by_wgmma = any(a.name.split(":")[0].strip().lower() == "wgmma" for a in accesses)
    canonical = (_canonical_alternative(shape, t, accesses, vbits)
                 if (by_tma and not tma_ok) or (by_wgmma and not wg_ok) else None)
    cert = SynthesisCertificate(certs, best.max_ways, joint, exhaustive, tuple(str(accesses[i]) for i in core),
                                reason, tma_ok if by_tma else None, tma_why if by_tma else "",
                                wg_ok if by_wgmma else None, wg_why if by_wgmma else "", canonical)
    return SmemSynthesis(layout, best.swizzle if best.swizzle is not None and best.swizzle.bits else None,
                         m.layout, best.cost, family, t, shape, cert)
