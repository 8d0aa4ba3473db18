"""Which pairs of features compose: the guide's table is the computed one, and every composing pair compiles.

The GPU runs each composing pair exactly (tests/gpu/test_gpu_feature_pairs.py); here NVRTC compiles each to
sm_90a with no spills and no stack frame, and the table of docs/guide/collectives.md matches
:func:`cute_py.emit.collectives.features.feature_table`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cute_py.emit import emit_gemm
from cute_py.emit.collectives.features import FEATURES, feature_pairs, feature_table, outcome, spec_of
from test_runtime_compile import needs_nvrtc

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "collectives.md"
COMPOSING = [pair for pair, out in feature_pairs().items() if out == "composes"]
KNOWN_SPILLS = {("ping-pong", "beta, bias, gelu"): 680, ("stream-K", "ping-pong"): 180}
"""Composing pairs that spill at the ping-pong feature's 128x128 tile (128 accumulators per warpgroup thread, with
the epilogue's operands or stream-K's state beside them), in spill bytes measured with NVRTC 13.5 (the old emitter
spilled 724 bytes for the first); at 128x64 neither spills. The bound keeps them from growing."""


def test_the_guide_quotes_the_computed_table():
    text = PAGE.read_text()
    quoted = text.split("<!-- feature table: begin -->\n")[1].split("\n<!-- feature table: end -->")[0]
    assert quoted == feature_table(), "regenerate the table with cute_py.emit.collectives.features.feature_table()"


def test_outcomes():
    assert outcome("split-K", "ping-pong") == "composes"
    assert outcome("fp8 tensor", "fp8 blockwise") == "n/a"
    assert outcome("stream-K", "one tile per CTA").startswith("refused: scheduler = 'stream_k' needs persistent")
    assert spec_of("groups along M", "groups along K") is None
    assert len(feature_pairs()) == len(FEATURES) * (len(FEATURES) - 1) // 2


@needs_nvrtc
@pytest.mark.parametrize("pair", COMPOSING, ids=lambda p: f"{p[0]} + {p[1]}")
def test_composing_pair_compiles_without_spills(pair, kernel_cache, monkeypatch):
    from cute_py import runtime as rt
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(kernel_cache))
    spec = spec_of(*pair)
    prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")
    k = prog.kernels[spec.name]
    if pair in KNOWN_SPILLS:
        assert 0 < k.spill_bytes <= KNOWN_SPILLS[pair], prog.log
        assert spec.replace(tile=(128, 64, 64)).validate() and not rt.compile(
            emit_gemm(spec.replace(tile=(128, 64, 64))), name="x.cu").spills[spec.replace(tile=(128, 64, 64)).name]
    else:
        assert (k.spill_bytes, k.stack_bytes) == (0, 0), prog.log
