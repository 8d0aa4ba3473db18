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


@pytest.mark.parametrize("majors", [("K", "K"), ("MN", "MN"), ("K", "MN")])
def test_k_zero_picks_a_split_k_kernel_whose_mainloop_zero_fills(majors):
    """The kernels that load at least one k-block stay as they are (a zero-fill there cost 0.5-1%); K = 0 runs a
    split-K kernel, which zero-fills empty K ranges, and a spec without split-K is refused for it."""
    p = Problem(300, 200, 0, *majors, "bf16", "bf16", beta=True, bias="col")
    spec = select(p, 132)
    assert spec.split_k == 2 and p.mismatches(spec) == []
    src = emit_gemm(spec)
    head = src.index("__device__ __forceinline__ void mainloop(")
    assert "if (kb0 == kb1) {" in src[head:src.index("\n}\n", head)]
    assert "if (kb0 == kb1) {" not in emit_gemm(spec.replace(split_k=1))
    assert p.mismatches(spec.replace(split_k=1)) == ["split_k: spec 1; K = 0 needs a split-K kernel (split_k >= 2: "
                                                     "it zero-fills empty K ranges)"]


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


def _rec(shape, strides, dtype="bf16", ptr=BASE):
    from cute_py.runtime import as_device_array
    return as_device_array(ptr, shape=shape, strides=strides, dtype=dtype)


@pytest.mark.parametrize("b_strides, want, ldb_l", [
    ((0, 1, 512), ("b", 256, 1024, 1024, 1024, 8, 8, 0), 256 * 512),            # one expert broadcast
    ((131076, 1, 512), ("b", 256, 1024, 1024, 1024, 8, 8, 262152), 256 * 512),  # experts 4 bytes off 16
    ((131072, 1, 512), None, 131072),                                          # TMA reads it in place
])
def test_grouped_operands_with_any_group_stride_are_staged(b_strides, want, ldb_l):
    from cute_py.problem_groups import grouped_problem
    a, offs = _rec((1000, 512), (512, 1)), _rec((8,), (1,), "s32", 1 << 41)
    p = grouped_problem(a, _rec((8, 512, 256), b_strides, ptr=1 << 42), offs, check_offs=False)
    got = [(s.which, s.rows, s.row_bytes, s.src_ld, s.ld, s.vec, s.groups, s.src_group) for s in p.staging]
    assert got == ([want] if want else []) and p.batch_strides[1] == ldb_l and p.ldb == 512


def test_an_odd_batch_is_staged_operand_by_operand():
    from cute_py.problem_groups import bmm_problem
    a = _rec((3, 101, 77), (101 * 77, 77, 1))                   # odd K: rows of 154 bytes
    b = _rec((3, 77, 64), (77 * 64, 64, 1), ptr=1 << 42)         # N-major, rows of 128 bytes: read in place
    p = bmm_problem(a, b)
    (s,) = p.staging
    assert (s.which, s.rows, s.row_bytes, s.ld, s.groups, s.src_group) == ("a", 101, 154, 160, 3, 101 * 77 * 2)
    assert (p.lda, p.batch_strides[:2]) == (80, (101 * 80, 77 * 64)) and s.nbytes == 3 * 101 * 160
    bound = gemm_plan(select(p, 132)).bind(p)
    assert bound.tma["tma_a"].global_strides == (160, 101 * 160)


def test_k_zero_grouped_and_batched_problems_are_read():
    from cute_py.problem_groups import bmm_problem, grouped_problem
    assert bmm_problem(_rec((2, 64, 0), (0, 0, 1)), _rec((2, 0, 32), (0, 32, 1))).K == 0
    offs = _rec((4,), (1,), "s32", 1 << 41)
    assert grouped_problem(_rec((64, 0), (0, 1)), _rec((4, 0, 32), (0, 32, 1)), offs, check_offs=False).K == 0


# ---- operands read without TMA (cute_py.emit.loads) ------------------------------------------------------------

def test_load_fields_are_validated():
    from cute_py.emit import SpecError
    assert GemmSpec(load_a=2, load_b=8).validate().name.endswith("_ld2x8")
    for bad, message in ((dict(load_a=3), "load_a = 3 not in"), (dict(load_b=4, cluster=(2, 1)), None),
                         (dict(dtype="e4m3", scale="tensor", tile=(128, 128, 128), load_a=1, load_b=0), None),
                         (dict(load_a=16, tile=(64, 64, 64), consumers=1), None),
                         (dict(load_a=2, stages=2), None),             # synchronous loads announce at once
                         (dict(load_a=4, stages=2), "stages = 2: cp.async loads keep a stage in flight"),
                         (dict(tile=(256, 128, 128), consumers=2, load_a=16), "stages = 2")):   # 2 stages fit
        if message is None:
            GemmSpec(**bad).validate()
        else:
            with pytest.raises(SpecError, match=message):
                GemmSpec(**bad).validate()


def test_an_operand_read_without_tma_is_loaded_whole_by_every_cta_of_a_cluster():
    """cp.async and ld have no multicast form: the operand a cluster would share is loaded by each CTA, the other
    one is still multicast by TMA (and the ring's tx bytes count the whole TMA tile in every CTA)."""
    from cute_py.emit import emit_gemm, gemm_plan
    p = gemm_plan(GemmSpec(load_a=8, cluster=(2, 1)))         # B is shared along M: still a TMA multicast
    assert (p.a.tma.multicast, p.b.tma.multicast, p.mcast_mask) == (1, 2, 0x3) and p.tx_bytes == p.b.tile_bytes
    src = emit_gemm(p.spec)
    assert "tma_load_2d_mc(stage + kOffB" in src and "load_tile_A(stage + kOffA" in src
    q = gemm_plan(GemmSpec(load_b=8, cluster=(2, 1)))         # B would be shared: each CTA loads all of it
    assert (q.b.tma.multicast, q.mcast_mask, q.tx_bytes) == (1, 0, q.a.tile_bytes)
    assert "_mc(" not in emit_gemm(q.spec).split("__global__")[1]


@pytest.mark.parametrize("kw", [dict(load_a=2), dict(load_a=4, load_b=4), dict(load_b=8, b="(N,K):(1,N)"),
                                dict(load_a=2, a="(M,K):(1,M)", tile=(128, 256, 64)),
                                dict(load_a=2, load_b=2, tile=(64, 128, 64), consumers=1), dict(load_a=4, split_k=2),
                                dict(dtype="e4m3", scale="tensor", tile=(128, 128, 128), load_a=1, load_b=1)])
def test_direct_load_kernels_compile_without_spills(kw):
    s = GemmSpec(**kw).validate()
    prog = nvrtc_compile(emit_gemm(s), name=f"{s.name}.cu")
    assert prog.spills[s.name] == 0


def test_direct_loads_replace_the_tensor_map_by_a_pointer_and_the_source_ld():
    a = FakeArray((300, 999), (999, 1))                        # 1998-byte rows: 2-byte loads
    b = FakeArray((999, 200), (1, 999), ptr=1 << 41)
    p = Problem.from_arrays(a, b)
    assert p.align == (2, 2) and p.lda == 1000                 # lda: the staging buffer's; the kernel walks 999
    spec = select(p, 132).replace(load_a=2)
    plan = gemm_plan(spec)
    bound = plan.bind(p)
    assert "tma_a" not in bound.tma and bound.scalars["ld_a"] == 999 and "tma_b" in bound.tma
    assert [x.name for x in bound.params][:4] == ["a", "ld_a", "tma_b", "tma_d"]
    assert plan.tx_bytes == plan.b.tile_bytes                  # TMA brings B only
    src = emit_gemm(spec)
    assert "constexpr u32 kFullArrivals = 1 + kWarpGroupThreads;" in src
    assert "copy_2(dst0 + (lin ^ ((lin & 448u) >> 3)) * 2u" in src      # Sw<3,3,3> over the element offset
    assert p.mismatches(spec.replace(load_a=4)) == ["load_a: spec 4-byte loads, a's address and rows allow 2"]


def test_direct_load_offsets_are_the_smem_layout():
    """The printed offset expression, evaluated for every (mn, k) of the tile, is the smem layout's offset."""
    from cute_py.emit.plan import operand_plan
    for kw in (dict(load_a=2), dict(load_a=2, a="(M,K):(1,M)"), dict(load_b=4, b="(N,K):(1,N)", tile=(128, 256, 64))):
        spec = GemmSpec(**kw).validate()
        for op in (operand_plan(spec, "A"), operand_plan(spec, "B")):
            if not op.load:
                continue
            text = emit_gemm(spec)
            lin = text.split(f"load_tile_{op.which}(")[1].split("const u32 lin = ")[1].split(";")[0]
            sw = op.smem.outer
            mask = ((1 << sw.bits) - 1) << (sw.base + sw.shift)
            for mn in range(0, op.block[0], 7):
                for k in range(0, op.block[1], 5):
                    x = eval(lin.replace("/", "//"), {"mn": mn, "k": k})
                    assert x ^ ((x & mask) >> sw.shift) == op.smem((mn, k)), (kw, op.which, mn, k)


def test_k_zero_runs_on_zero_stand_ins_of_k_8():
    torch = pytest.importorskip("torch")
    from cute_py.gemm import K_STAND_IN, _k_stand_ins
    a, b = _k_stand_ins(torch.empty(5, 0, dtype=torch.bfloat16), torch.empty(0, 7, dtype=torch.bfloat16))
    assert (a.shape, a.stride(), b.shape, b.stride()) == ((5, K_STAND_IN), (8, 1), (K_STAND_IN, 7), (1, 8))
    assert not a.any() and not b.any()
    a, b = _k_stand_ins(torch.empty(3, 5, 0), torch.empty(3, 0, 7))                 # a batch: K-major b
    assert (tuple(a.shape), tuple(b.shape), b.stride()[1:]) == ((3, 5, 8), (3, 8, 7), (1, 8))
    a, b = _k_stand_ins(torch.empty(0, 40).t(), torch.empty(0, 24), grouped=True)  # groups along K: MN-major
    assert (a.shape, a.stride(), b.shape, b.stride()) == ((40, 8), (1, 40), (8, 24), (24, 1))
    x = torch.empty(5, 0)
    assert _k_stand_ins(x, torch.empty(3, 7))[0] is x                               # a mismatch stays visible


def test_a_batched_out_whose_matrices_overlap_is_refused():
    from cute_py.problem import GemmInputError
    from cute_py.problem_groups import bmm_problem
    a, b = _rec((4, 64, 32), (64 * 32, 32, 1)), _rec((4, 32, 16), (32 * 16, 16, 1), ptr=1 << 41)
    with pytest.raises(GemmInputError, match="out's matrices overlap: batch stride 0 elements"):
        bmm_problem(a, b, out=_rec((4, 64, 16), (0, 16, 1), ptr=1 << 42))


def test_torch_operands_without_a_usable_contiguous_dimension_are_copied():
    torch = pytest.importorskip("torch")
    from cute_py.torch.ops import usable
    every_other = torch.ones(10, 6, dtype=torch.bfloat16)[::2, ::2]                  # (5, 3), strides (12, 2)
    assert usable(every_other).stride() == (3, 1) and usable(every_other.t()).is_contiguous()
    col = torch.ones(10, 3, dtype=torch.bfloat16)[:, :1]                            # (10, 1), strides (3, 1)
    assert usable(col) is col and usable(col.t()).stride() == (1, 3)                # extent 1: any stride, in place
