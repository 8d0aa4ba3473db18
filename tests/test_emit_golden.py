"""The emitted CUDA of a set of specs covering every branch of the emitter is pinned by its SHA-256.

Refactors of the emitter must keep the text byte-identical. A deliberate change of the kernel text
regenerates the pins::

    python tests/test_emit_golden.py --regenerate

and must be named (which text changed, and why) in the commit message and checked on the GPU (the
tests/gpu suite and the benchmarks), since no CPU test can tell a correct kernel from a wrong one.

The specs (``tests/data/emitted_sha256.json``, ``{name: {"spec": GemmSpec.to_dict(), "sha256": ...}}``)
cover: the shipped examples; 64-row one-consumer tiles; 128x256 and 256x128 tiles; split-K (TMA and direct
epilogues); clusters (2,1) and (1,2); ping-pong; f32/f16/bf16 output; direct (row- and column-major D) and
TMA epilogues; MN-major A and B; beta, row/column bias, relu/gelu; no alpha; swizzle overrides; raster "n";
non-persistent; grouped (groups along M and K, fp8 groups along M) and batched kernels.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from cute_py.emit import GemmSpec, emit_gemm

DATA = Path(__file__).resolve().parent / "data" / "emitted_sha256.json"
HOW = ("the emitted CUDA changed. If the change is deliberate, regenerate the pins with\n"
       "    python tests/test_emit_golden.py --regenerate\n"
       "and name every text change (what and why) in the commit message; each one must be checked on the GPU "
       "(tests/gpu, benchmarks) before it lands.")


def _pins() -> dict:
    return json.loads(DATA.read_text())


def _sha(spec: GemmSpec) -> str:
    return hashlib.sha256(emit_gemm(spec).encode()).hexdigest()


PINS = _pins()


def test_pins_cover_the_branches():
    """The pinned set keeps covering what the module docstring promises (a pin dropped by mistake fails here)."""
    specs = [GemmSpec.from_dict(v["spec"]) for v in PINS.values()]
    assert len(specs) >= 25

    def has(pred):
        return any(pred(s) for s in specs)

    assert has(lambda s: s.tile[0] == 64 and s.consumers == 1)
    assert has(lambda s: s.tile[:2] == (128, 256)) and has(lambda s: s.tile[:2] == (256, 128))
    assert has(lambda s: s.split_k > 1 and s.epilogue == "tma") and has(lambda s: s.split_k > 1 and s.epilogue == "direct")
    assert has(lambda s: s.cluster == (2, 1)) and has(lambda s: s.cluster == (1, 2))
    assert has(lambda s: s.schedule == "pingpong")
    for out in ("f32", "f16", "bf16"):
        for epi in ("tma", "direct"):
            assert has(lambda s: s.out_dtype == out and s.epilogue == epi), (out, epi)
    assert has(lambda s: not s.c_row_major)
    assert has(lambda s: s.a_major == "MN") and has(lambda s: s.b_major == "MN")
    assert has(lambda s: s.a_major == "K" and s.b_major == "MN")
    assert has(lambda s: s.beta) and has(lambda s: s.bias == "row") and has(lambda s: s.bias == "col")
    assert has(lambda s: s.activation == "relu") and has(lambda s: s.activation == "gelu")
    assert has(lambda s: not s.alpha)
    assert {s.swizzle for s in specs} >= {None, 0, 32, 64}
    assert has(lambda s: s.raster == "n") and has(lambda s: not s.persistent)
    for g in ("m", "batch", "k"):                       # grouped and batched kernels, fp8 groups along M
        assert has(lambda s: s.grouping == g), g
    assert has(lambda s: s.grouping == "m" and s.scale == "row") and has(lambda s: s.grouping == "m" and s.scale == "block")


@pytest.mark.parametrize("name", sorted(PINS))
def test_emitted_source_is_pinned(name):
    pin = PINS[name]
    spec = GemmSpec.from_dict(pin["spec"])
    assert spec.name == name, f"pin {name!r} holds the spec of {spec.name!r}"
    got = _sha(spec)
    assert got == pin["sha256"], f"{name}: {HOW}"


def regenerate() -> None:
    """Rewrite the SHA-256 of every pinned spec from the emitter as it is now."""
    pins = _pins()
    out = {}
    for name, pin in pins.items():
        spec = GemmSpec.from_dict(pin["spec"])
        out[spec.name] = {"spec": spec.to_dict(), "sha256": _sha(spec)}
    changed = sorted(n for n in out if pins.get(n, {}).get("sha256") != out[n]["sha256"])
    DATA.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"{len(out)} pins written to {DATA}; changed: {changed or 'none'}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit(__doc__)
    regenerate()
