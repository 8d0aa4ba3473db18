"""NVRTC compiles a matrix of generated GEMMs to sm_90a: no spills, no wgmma serialization (compile is strict)."""

from __future__ import annotations

import itertools

import pytest

from cute_py.emit import GemmSpec, emit_gemm


def _nvrtc_reason():
    try:
        from cute_py.runtime import nvrtc_version
        nvrtc_version()
    except Exception as e:  # noqa: BLE001
        return f"NVRTC unavailable: {e}"
    return None


pytestmark = pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))

A = {"K": "(M,K):(K,1)", "MN": "(M,K):(1,M)"}
B = {"K": "(N,K):(K,1)", "MN": "(N,K):(1,N)"}
TILES = (((128, 128, 64), 2), ((128, 256, 64), 2), ((128, 128, 64), 1))
MATRIX = [GemmSpec(a=A[am], b=B[bm], tile=t, consumers=c)
          for (am, bm), (t, c) in itertools.product(itertools.product(("K", "MN"), repeat=2), TILES)]
MATRIX += [GemmSpec(a=A[am], b=B[am], dtype="f16", tile=t, consumers=c)     # f16 differs from bf16 in the wgmma
           for am, (t, c) in zip(("K", "MN", "K"), TILES)]                     # type only: a tile per major
EPILOGUES = [GemmSpec(beta=True, bias="col", activation="relu"), GemmSpec(out_dtype="f32", bias="row",
             activation="gelu"), GemmSpec(c="(M,N):(1,M)", dtype="f16", beta=True), GemmSpec(swizzle=64)]
SCHEDULES = [GemmSpec(tile=(128, 256, 64), cluster=(2, 1)), GemmSpec(a=A["MN"], tile=(128, 256, 64), cluster=(1, 2)),
             GemmSpec(tile=(128, 64, 64), split_k=2), GemmSpec(tile=(256, 128, 64), split_k=3, epilogue="direct"),
             GemmSpec(tile=(128, 128, 64), persistent=False), GemmSpec(tile=(128, 128, 64), schedule="pingpong"),
             GemmSpec(a=A["MN"], tile=(128, 64, 64), schedule="pingpong", cluster=(1, 2), epilogue="direct"),
             GemmSpec(tile=(64, 64, 64), consumers=1, cluster=(2, 1))]


def _heuristic_choices():
    """pick_spec's choice for the issue 8 shapes in all four majors, and with epilogue extras (the spill guard)."""
    from cute_py.gemm import pick_spec
    shapes = [(n, n, n) for n in (2048, 4096, 8192)] + [(m, n, k) for m in (128, 512, 4096)
                                                         for n, k in ((4096, 4096), (14336, 4096), (4096, 14336),
                                                                      (8192, 1024))]
    out = {}
    for (M, N, K), am, bm in itertools.product(shapes, ("K", "MN"), ("K", "MN")):
        for kw in ({}, {"beta": True, "bias": "col", "activation": "gelu"}):
            s = pick_spec(M, N, K, am, bm, "bf16", "bf16", **kw)
            out.setdefault(s, s)
    return list(out)


@pytest.mark.parametrize("spec", MATRIX + EPILOGUES + SCHEDULES + _heuristic_choices(), ids=lambda s: s.name)
def test_compiles_without_spills(spec, kernel_cache, monkeypatch):
    from cute_py import runtime as rt
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(kernel_cache))
    prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")      # strict: serialization warnings raise
    assert prog.cubin[:4] == b"\x7fELF"
    assert prog.spills[spec.name] == 0, prog.log
    assert prog.stack_bytes.get(spec.name, 0) == 0, prog.log
    assert prog.registers[spec.name] <= (168 if spec.consumers == 2 else 255)
    assert not prog.warnings, prog.warnings


def _whole_tile_promotions():
    """Every promoting spec whose tile is summed whole (PROMOTE_REGS bounds it), over tiles of 80-192 columns,
    both consumer counts, the schedules that keep whole-tile promotion (split-K, groups along M, the direct
    epilogue) and every scale mode and type."""
    from cute_py.emit import SpecError
    variants = ({}, dict(split_k=2), dict(b="(N,K,L):(K,1,ldb_l)"), dict(epilogue="direct"))
    tiles = (((128, 160, 128), 2), ((128, 144, 128), 2), ((128, 80, 128), 2), ((64, 160, 128), 1),
             ((64, 192, 128), 1))
    modes = (("tensor", "f32"), ("row", "f32"), ("block", "f32"), ("block", "ue8m0"))
    out = []
    for ((t, c), v, (m, st)) in itertools.product(tiles, variants, modes):
        try:
            s = GemmSpec(dtype="e4m3", scale=m, scale_type=st, tile=t, consumers=c, **v)
        except SpecError:
            continue
        if s.promote_chunk() == t[1]:
            out.append(s)
    return out


@pytest.mark.parametrize("spec", _whole_tile_promotions(), ids=lambda s: s.name)
def test_whole_tile_promotion_compiles_without_spills(spec, kernel_cache, monkeypatch):
    """scaling.PROMOTE_REGS is a measured bound: every spec it lets promote a tile whole compiles without a spill
    (ping-pong, stream-K and clusters, which spilled, promote in chunks: scaling.whole_tile_promotes)."""
    from cute_py import runtime as rt
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(kernel_cache))
    prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")
    assert prog.spills[spec.name] == 0, prog.log
