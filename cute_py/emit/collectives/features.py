"""The main features of a spec, and which pairs of them compose: the table of the pipeline guide, computed.

Each feature is a set of :class:`~cute_py.emit.GemmSpec` fields over the default spec (fp8 features bring their
own tile, BK = 128). A pair *composes* when the merged spec is made (a GemmSpec is checked when made): its kernel is emitted (and the tests
compile it, and run it exactly on the GPU: ``tests/gpu/test_gpu_feature_pairs.py``); else it is *refused* and
the cell quotes the rule, from the collective that owns it. Two features that set the same field differently
(two groupings, two scale modes) are one problem's alternatives, not a pair (``n/a``).

>>> outcome("split-K", "ping-pong")
'composes'
>>> outcome("groups along K", "fp8 blockwise")[:60]
'refused: A is MN-major: Hopper fp8 wgmma reads both operands'
"""

from __future__ import annotations

import itertools

from ..spec import GemmSpec, SpecError

__all__ = ["FEATURES", "spec_of", "outcome", "feature_pairs", "feature_table"]

FEATURES = {
    "groups along M": dict(b="(N,K,L):(K,1,ldb_l)"),
    "groups along K": dict(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)"),
    "batch": dict(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldd_l)"),
    "split-K": dict(split_k=2),
    "stream-K": dict(scheduler="stream_k"),
    "ping-pong": dict(schedule="pingpong"),
    "cluster 2x1": dict(cluster=(2, 1)),
    "one tile per CTA": dict(persistent=False),
    "fp8 tensor": dict(dtype="e4m3", scale="tensor", tile=(128, 128, 128)),
    "fp8 row, fast accum": dict(dtype="e4m3", scale="row", fast_accum=True, tile=(128, 128, 128)),
    "fp8 blockwise": dict(dtype="e4m3", scale="block", tile=(128, 128, 128)),
    "loads without TMA": dict(load_a=8),
    "direct epilogue": dict(epilogue="direct"),
    "beta, bias, gelu": dict(beta=True, bias="col", activation="gelu"),
}
"""The features, by name: their spec fields."""


def spec_of(*names):
    """The spec of features ``names`` together, or None when two of them set a field differently; raises
    :class:`~cute_py.emit.SpecError` when they do not compose.

    >>> spec_of("split-K", "ping-pong").name, spec_of("fp8 tensor", "fp8 blockwise")
    ('cute_gemm_sm90_bf16_tn_128x128x64_s6_c2_obf16_dr_g8_sk2_pingpong', None)
    """
    fields = {}
    for name in names:
        for k, v in FEATURES[name].items():
            if k in fields and fields[k] != v:
                return None
            fields[k] = v
    return GemmSpec(**fields)


def outcome(x: str, y: str) -> str:
    """``"composes"``, ``"n/a"`` or ``"refused: <the rules broken>"`` for features ``x`` and ``y``."""
    try:
        spec = spec_of(x, y)
    except SpecError as e:
        return "refused: " + "; ".join(e.problems)
    return "n/a" if spec is None else "composes"


def feature_pairs() -> dict:
    """``{(x, y): outcome(x, y)}`` for every pair of :data:`FEATURES`, in table order."""
    return {(x, y): outcome(x, y) for x, y in itertools.combinations(FEATURES, 2)}


def feature_table() -> str:
    """The Markdown table of the pipeline guide: one row per refused or n/a pair (every other pair composes),
    then the counts."""
    pairs = feature_pairs()
    rows = ["| feature | with | outcome |", "|---|---|---|"]
    rows += [f"| {x} | {y} | {out} |" for (x, y), out in pairs.items() if out != "composes"]
    n = {k: sum(v.split(":")[0] == k for v in pairs.values()) for k in ("composes", "n/a", "refused")}
    rows.append("")
    rows.append(f"{len(pairs)} pairs of {len(FEATURES)} features: {n['composes']} compose, {n['refused']} are "
                f"refused, {n['n/a']} are one problem's alternatives.")
    return "\n".join(rows)
