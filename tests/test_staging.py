"""Every shape cuBLAS takes, without a GPU: operands TMA cannot read get a staging copy (its plan, its kernel),
K = 0 binds and emits a zero-filling mainloop, and nothing of the alignment is refused any more."""

from __future__ import annotations

import pytest

from cute_py.arraylib import ArrayLibraryError
from cute_py.emit import GemmSpec, emit_gemm, gemm_plan
from cute_py.emit.stage_copy import STAGE_VECS, emit_stage_copy, stage_copy_name
from cute_py.launch import Launches
from cute_py.problem import Problem, Staging, TMA_ALIGN
from cute_py.runtime import compile as nvrtc_compile
from cute_py.selection import select

from fakes import FakeArray

BASE = 1 << 40


def _staging(p: Problem) -> list:
    return [(s.which, s.rows, s.row_bytes, s.src_ld, s.ld, s.vec) for s in p.staging]


@pytest.mark.parametrize("ptr, rows, cols, ld, item, want", [
    (BASE, 4096, 4095, 4095, 2, (8190, 8190, 8192, 2)),        # an odd K: every other row starts 2 bytes off
    (BASE, 64, 12, 12, 2, (24, 24, 32, 8)),                    # 24-byte rows: 8-byte loads
    (BASE, 64, 10, 10, 2, (20, 20, 32, 4)),
    (BASE + 2, 64, 64, 64, 2, (128, 128, 128, 2)),             # a slice starting one element in
    (BASE + 4, 1, 64, 64, 2, (128, 0, 128, 4)),                # one row: its pitch is never used
    (BASE, 64, 8, 8, 1, (8, 8, 16, 8)),                        # fp8, K = 8
    (BASE + 1, 64, 33, 33, 1, (33, 33, 48, 1)),
    (BASE, 64, 64, 0, 2, (128, 0, 128, 8)),                    # a broadcast row (stride 0)
])
def test_staging_of_picks_the_widest_aligned_load(ptr, rows, cols, ld, item, want):
    s = Staging.of("a", ptr, rows, cols, ld, item)
    assert (s.row_bytes, s.src_ld, s.ld, s.vec) == want
    assert s.ld % TMA_ALIGN == 0 and s.ld >= s.row_bytes and s.nbytes == rows * s.ld
    for r in range(min(rows, 4)):                              # every load of every row is aligned to vec
        assert (ptr + r * s.src_ld) % s.vec == 0 and s.row_bytes % s.vec == 0


@pytest.mark.parametrize("layout, M, N, K, want", [
    ("tn", 1000, 1000, 999, [("a", 1000, 1998, 1998, 2000, 2), ("b", 1000, 1998, 1998, 2000, 2)]),
    ("nt", 1001, 1003, 64, [("a", 64, 2002, 2002, 2016, 2), ("b", 64, 2006, 2006, 2016, 2)]),
    ("tt", 128, 1003, 64, [("b", 64, 2006, 2006, 2016, 2)]),    # a K-major (64-element rows) is read in place
    ("nn", 1024, 1024, 1024, []),
])
def test_unaligned_operands_are_staged_not_refused(layout, M, N, K, want):
    a = FakeArray((M, K), (K, 1) if layout[0] == "t" else (1, M))
    b = FakeArray((K, N), (N, 1) if layout[1] == "t" else (1, K), ptr=1 << 41)
    p = Problem.from_arrays(a, b)
    assert _staging(p) == want
    for s in p.staging:                                      # TMA reads the staging buffer's rows
        assert (p.lda if s.which == "a" else p.ldb) == s.ld // 2
    plan = gemm_plan(select(p, 132))
    bound = plan.bind(p)                                     # the tensor maps bind: 16-byte strides throughout
    assert all(st % TMA_ALIGN == 0 for name in ("tma_a", "tma_b") for st in bound.tma[name].global_strides)


def test_a_slice_and_wider_leading_dimensions():
    off = FakeArray((256, 64), (72, 1), ptr=BASE + 2)         # starts 2 bytes in, rows 144 bytes apart
    wide = FakeArray((64, 128), (1, 80), ptr=1 << 41)         # b K-major, ld 80 > K: read in place
    p = Problem.from_arrays(off, wide)
    assert _staging(p) == [("a", 256, 128, 144, 128, 2)] and p.ldb == 80


def test_k_zero_and_empty_extents_are_accepted():
    a, b = FakeArray((64, 0), (0, 1)), FakeArray((0, 32), (32, 1), ptr=1 << 41)
    p = Problem.from_arrays(a, b)
    assert (p.M, p.N, p.K, p.empty, p.staging) == (64, 32, 0, False, ())
    bound = gemm_plan(select(p, 132)).bind(p)
    assert bound.tma["tma_a"].global_dim[0] == 1 and bound.scalars["K"] == 0   # a tensor map's extents are >= 1
    assert Problem.from_arrays(FakeArray((0, 64), (64, 1)), FakeArray((64, 32), (32, 1))).empty


@pytest.mark.parametrize("spec", [GemmSpec(), GemmSpec(schedule="pingpong", tile=(128, 128, 64)),
                                  GemmSpec(cluster=(2, 1)), GemmSpec(epilogue="direct")])
def test_every_mainloop_zero_fills_an_empty_k_range(spec):
    src = emit_gemm(spec)
    head = src.index("__device__ __forceinline__ void mainloop(")
    body = src[head:src.index("\n}\n", head)]
    assert "if (kb0 == kb1) {" in body and "acc[mb][v] = 0.0f;" in body


@pytest.mark.parametrize("vec", sorted(STAGE_VECS))
def test_stage_copy_compiles_without_spills(vec):
    prog = nvrtc_compile(emit_stage_copy(vec), name=f"{stage_copy_name(vec)}.cu")
    name = stage_copy_name(vec)
    assert prog.spills[name] == 0 and prog.registers[name] <= 40
    assert f"ld.global.nc.{STAGE_VECS[vec]}" in emit_stage_copy(vec)


def test_staging_needs_an_array_library_to_allocate_and_says_so_before_compiling():
    a = FakeArray((64, 30), (30, 1))                           # 60-byte rows
    b = FakeArray((30, 64), (64, 1), ptr=1 << 41)
    out = FakeArray((64, 64), (64, 1), ptr=1 << 42)
    p = Problem.from_arrays(a, b, out=out)
    launches = Launches()
    with pytest.raises(ArrayLibraryError, match="cannot make a staging copy of a like a FakeArray.*multiples of 16"):
        launches.prepare(p, select(p, 132))
    assert len(launches.kernels) == 0                          # refused before anything was compiled


def test_fp8_k_below_16_bytes_is_staged():
    from cute_py.runtime import as_device_array
    a = as_device_array(BASE, shape=(64, 8), strides=(8, 1), dtype="e4m3")       # 8-byte rows
    b = as_device_array(1 << 41, shape=(8, 32), strides=(1, 8), dtype="e4m3")
    one = as_device_array(1 << 42, shape=(), strides=(), dtype="f32")
    p = Problem.from_arrays(a, b, scale_a=one, scale_b=one)
    assert _staging(p) == [("a", 64, 8, 8, 16, 8), ("b", 32, 8, 8, 16, 8)] and (p.lda, p.ldb) == (16, 16)
