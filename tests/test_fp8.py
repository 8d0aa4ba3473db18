"""FP8 GEMM without a GPU: the spec's rules, the problem read from fp8 arrays and their scales, the heuristic,
the plan's promotion facts, the kernel parameters and their binding, the emitted source (compiled by NVRTC where
it is installed) and the CLI. tests/gpu/test_gpu_fp8.py runs the kernels.
"""

from __future__ import annotations

import re

import pytest

from cute_py import cli
from cute_py.emit import GemmSpec, emit_gemm, gemm_plan
from cute_py.emit import kernel_params
from cute_py.emit.scaling import PROMOTE_CHUNK_REGS, promote_regs
from cute_py.emit.spec import PROMOTE_REGS, SpecError, example_specs
from cute_py.problem import GemmInputError, Problem
from cute_py.runtime import as_device_array
from cute_py.selection import pick_spec, select
from cute_py.tuned import problem_key
from test_runtime_compile import needs_nvrtc

E4M3 = dict(dtype="e4m3", tile=(128, 128, 128))


def rec(shape, strides, dtype, ptr=1 << 40):
    """A device-array description (no memory behind it: Problem only reads descriptions)."""
    return as_device_array(ptr, shape=shape, strides=strides, dtype=dtype)


# ---------------------------------------------------------------------------------------------------------------
# GemmSpec


def test_fp8_specs_validate_and_name_their_scales():
    for mode in ("tensor", "row", "block"):
        s = GemmSpec(scale=mode, **E4M3).validate()
        assert s.out_dtype == "bf16" and s.name.endswith(f"scale{mode}")
    assert GemmSpec(scale="row", fast_accum=True, **dict(E4M3, tile=(128, 256, 128))).validate().name.endswith(
        "scalerow_fastaccum")
    for name, path in example_specs().items():
        GemmSpec.from_file(path).validate()


@pytest.mark.parametrize("fields, problem", [
    (dict(dtype="e4m3"), "needs a scale mode"),
    (dict(scale="tensor"), "applies to fp8 inputs"),
    (dict(fast_accum=True), "fast_accum = True applies to fp8 inputs only"),
    (dict(scale="per-row", **E4M3), "scale = 'per-row' not in"),
    (dict(scale="tensor", b="(N,K):(1,N)", **E4M3), "B is MN-major"),
    (dict(scale="tensor", a="(M,K):(1,M)", **E4M3), "A is MN-major"),
    (dict(scale="block", fast_accum=True, **E4M3), "always promotes"),
    (dict(scale="block", dtype="e4m3", tile=(128, 128, 64)), "BK must be 128"),
    (dict(scale="tensor", dtype="e4m3", tile=(128, 256, 128)), "or set fast_accum = True"),
    (dict(scale="block", dtype="e4m3", tile=(128, 176, 128)), "touches 3 scale blocks"),
])
def test_spec_rules(fields, problem):
    with pytest.raises(SpecError, match="constraint") as e:
        GemmSpec(**fields).validate()
    assert any(problem in p for p in e.value.problems), e.value.problems


def test_promote_chunk_fits_the_registers():
    """Accumulators plus one chunk of sums within PROMOTE_REGS (the whole tile) or PROMOTE_CHUNK_REGS, widest chunk
    first; blockwise chunks in one scale block, or the whole tile over two; None without promotion."""
    cases = {((128, 128, 128), 2, "block"): 128, ((128, 192, 128), 2, "block"): 64, ((64, 256, 128), 1, "block"): 128,
             ((128, 64, 128), 2, "tensor"): 64, ((128, 256, 128), 2, "block"): None,
             ((128, 160, 128), 2, "block"): 32, ((128, 144, 128), 2, "block"): 144, ((128, 80, 128), 2, "block"): 80,
             ((128, 160, 128), 2, "tensor"): 160, ((128, 176, 128), 2, "block"): None,   # 3 scale blocks
             ((128, 176, 128), 2, "tensor"): None,                                       # 88 + 88 > 160
             ((64, 192, 128), 1, "tensor"): 192, ((64, 192, 128), 1, "block"): 64}      # + 8: 200 > 192
    for (tile, consumers, mode), want in cases.items():
        if want is None:                                  # no chunk fits: no such spec
            with pytest.raises(SpecError, match="no chunk of .* fits in"):
                GemmSpec(dtype="e4m3", scale=mode, tile=tile, consumers=consumers)
            continue
        s = GemmSpec(dtype="e4m3", scale=mode, tile=tile, consumers=consumers)
        assert s.promote_chunk() == want, (tile, mode)
        assert promote_regs(s, want) <= (PROMOTE_REGS if want == tile[1] else PROMOTE_CHUNK_REGS)[consumers]
    assert GemmSpec(dtype="e4m3", scale="tensor", fast_accum=True, tile=(128, 256, 128)).promote_chunk() is None


# ---------------------------------------------------------------------------------------------------------------
# Plan, parameters, binding, source


def test_plan_promotion_chunks_map_onto_the_accumulators():
    """Chunk h of a 192-column tile is the tile atom's values [32 h, 32 h + 32), 64 h columns on; its B slices
    start 64 rows apart (8 rows of 128 B per 1024 B: 512 16-byte units per 64 rows)."""
    p = gemm_plan(GemmSpec(scale="block", dtype="e4m3", tile=(128, 192, 128)))
    pp = p.promotion
    assert (pp.n, pp.chunks, pp.values) == (64, 3, 32)
    assert [pp.b_offset(h, 0) for h in range(3)] == [0, 512, 1024]
    assert [pp.b_offset(0, j) for j in range(4)] == [p.b.desc_offset(0, j) for j in range(4)]
    assert p.scale_rows == (0, 8)
    assert gemm_plan(GemmSpec(scale="tensor", fast_accum=True, **E4M3)).promotion is None


def test_plan_fp8_atom_and_descriptor():
    """e4m3: the wgmma K is 32 elements (32 bytes), so a 128-wide K tile is 4 k-slices of one 128 B swizzle row;
    the descriptor's K increments are 2 (32 B in 16 B units), as for bf16's 16-element slices."""
    p = gemm_plan(GemmSpec(scale="tensor", **E4M3))
    assert p.atom.shape_mnk == (64, 128, 32) and p.k_slices == 4
    assert p.atom.ptx == "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"
    assert [p.a.desc_offset(0, j) for j in range(4)] == [0, 2, 4, 6]
    bf16 = gemm_plan(GemmSpec(tile=(128, 128, 64)))
    assert p.a.desc.value == bf16.a.desc.value          # same 128 B swizzle atom rows, in bytes


def test_kernel_params_and_binding_carry_the_scales():
    """Row-wise scales pass pointers and strides; blockwise scale_a goes through a tensor map (scale_b stays a
    pointer), bound to the problem's M-major scale_a, or to the copy it is gathered into."""
    names = [x.name for x in kernel_params(GemmSpec(scale="row", **E4M3))]
    assert names[names.index("tma_b") + 1:names.index("tma_b") + 7] == ["scale_a", "scale_b", "sa_m", "sa_k", "sb_k",
                                                                         "sb_n"]
    spec = GemmSpec(scale="block", **E4M3)
    names = [x.name for x in kernel_params(spec)]
    assert names[names.index("tma_b") + 1:names.index("tma_b") + 5] == ["tma_sa", "scale_b", "sb_k", "sb_n"]
    assert "scale_a" not in names and "scale_a" not in [x.name for x in kernel_params(GemmSpec())]
    problem = Problem(1000, 512, 4096, "K", "K", "e4m3", "bf16", scale="block", scale_strides=(1, 1000, 4, 1))
    b = gemm_plan(spec).bind(problem)
    assert problem.scale_a_tma and [b.scalars[n] for n in ("sb_k", "sb_n")] == [4, 1]
    sa = b.tma["tma_sa"]
    assert (sa.global_dim, sa.global_strides, sa.box_dim) == ((1000, 32), (4000,), (128, 1))


@pytest.mark.parametrize("M,K,strides,batch,tma,dims,byte_strides", [
    (1000, 4096, (1, 1000), None, True, (1000, 32), (4000,)),          # M-major, 16-byte rows: read as it is
    (1001, 4096, (1, 1001), None, False, (1001, 32), (4016,)),         # odd M: gathered, rows padded to 16 B
    (1000, 4096, (32, 1), None, False, (1000, 32), (4000,)),           # K-major (M, KB): gathered
    (1, 4096, (32, 1), None, False, (1, 32), (16,)),                  # one row, K blocks 4 B apart: gathered
    (1, 4096, (3, 4), None, True, (1, 32), (16,)),                    # one row: its own stride is never followed
    (256, 112, (1, 3), None, True, (256, 1), (1024,)),                 # one K block: the same
    (256, 1024, (1, 256), (4, 2048), True, (256, 8, 4), (1024, 8192)),  # a batch, 16-byte matrix stride
    (256, 1024, (1, 256), (4, 2049), False, (256, 8, 4), (1024, 8192)),  # a batch whose matrices are not
    (1000, 4096, (1, 0), None, False, (1000, 32), (4000,)),            # one column broadcast over K: gathered
    (256, 1024, (1, 256), (4, 0), False, (256, 8, 4), (1024, 8192)),   # one matrix broadcast over the batch
])
def test_blockwise_scale_a_is_read_by_tma_or_gathered(M, K, strides, batch, tma, dims, byte_strides):
    """The rule of cute_py.emit.scaling.reads_scale_a, and the tensor map bound for each case: over scale_a itself,
    or over the M-major copy with rows padded to 16 bytes (a batch's matrices stacked)."""
    fields = dict(scale="block", scale_strides=strides + (1, 1))
    spec = GemmSpec(scale="block", **E4M3)
    if batch:
        L, sa_l = batch
        fields.update(grouping="batch", groups=L, batch_strides=(0, 0, 0, 0, 0, 0, sa_l))
        spec = GemmSpec(scale="block", a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)",
                        c="(M,N,L):(N,1,ldc_l)", **E4M3)
    problem = Problem(M, 256, K, "K", "K", "e4m3", "bf16", **fields)
    assert problem.scale_a_tma is tma
    sa = gemm_plan(spec).bind(problem).tma["tma_sa"]
    assert (sa.global_dim, sa.global_strides) == (dims, byte_strides)


@pytest.mark.parametrize("fields", [
    dict(tile=(128, 128, 128)), dict(tile=(64, 64, 128), consumers=1, scale_type="ue8m0", split_k=2, epilogue="direct"),
    dict(tile=(64, 64, 128), consumers=1, scheduler="stream_k", epilogue="direct"),
    dict(tile=(64, 128, 128), consumers=2, schedule="pingpong", b="(N,K,L):(K,1,ldb_l)"),
    dict(tile=(128, 144, 128), a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldc_l)"),
])
def test_blockwise_kernels_fit_shared_memory(fields):
    """The budget counts the static shared memory the compiled kernel has (the barriers, the scale slots and the
    padding that aligns them, the scheduler's flags, in whole kilobytes): the launch's dynamic bytes plus ptxas's
    static bytes fit the 227 KB a block may have."""
    pytest.importorskip("cuda.bindings")
    from cute_py.arch.sm90 import SMEM_PER_BLOCK
    from cute_py.runtime import compile
    spec = GemmSpec(dtype="e4m3", scale="block", **fields)
    k = compile(emit_gemm(spec), name=f"{spec.name}.cu").kernels[spec.name]
    assert gemm_plan(spec).smem_bytes + k.smem_bytes <= SMEM_PER_BLOCK, (spec.name, k.smem_bytes)


@pytest.mark.parametrize("M,K,L,sa_m,sa_k,sa_l", [(7, 300, 1, 3, 1, 0), (301, 1024, 1, 1, 301, 0),
                                                 (5, 512, 3, 4, 1, 20), (6, 256, 2, 1, 0, 0), (1, 128, 4, 2, 1, 0)])
def test_scale_gather_writes_what_the_tensor_map_reads(M, K, L, sa_m, sa_k, sa_l):
    """The gather kernel's index formula (pinned in its source), run in numpy over a scale_a of the given element
    strides, writes a buffer that the tensor map bound for a gathered scale_a (scaling.scale_a_map) reads back as
    scale_a: every (row, K block, matrix)."""
    import numpy as np
    from cute_py.emit.scaling import gathered_ld, scale_a_map, scale_blocks
    from cute_py.emit.stage_copy import emit_scale_gather
    src_text = emit_scale_gather(4)
    assert "const long long m = i % M, r = i / M, k = r % KB, l = r / KB;" in src_text
    assert "dst[r * ld + m] = src[l * sl + m * sm + k * sk];" in src_text
    kb, ld = scale_blocks(K), gathered_ld(M, "f32")
    rng = np.random.default_rng(M + K + L)
    src = rng.random(1 + (M - 1) * sa_m + (kb - 1) * sa_k + (L - 1) * sa_l)   # a (broadcast) strided scale_a
    dst = np.full(L * kb * ld, np.nan)
    for i in range(M * kb * L):                              # the kernel, thread i
        m, r = i % M, i // M
        k, l = r % kb, r // kb
        dst[r * ld + m] = src[l * sa_l + m * sa_m + k * sa_k]
    shape, stride = scale_a_map(M, K, (sa_m, sa_k), sa_l, L, L > 1, "f32", direct=False)
    assert shape[:2] == (M, kb) and (len(shape) == 3) == (L > 1)
    for m in range(M):
        for k in range(kb):
            for l in range(L):
                at = m * stride[0] + k * stride[1] + (l * stride[2] if L > 1 else 0)
                assert dst[at] == src[l * sa_l + m * sa_m + k * sa_k], (m, k, l)


def test_scale_gather_copies_any_layout():
    """The gather kernel of scale_a compiles with NVRTC (no GPU needed) for f32 and UE8M0 scales; what it writes
    is checked on the GPU (tests/gpu/test_gpu_fp8.py) and its index formula against the tensor map above."""
    pytest.importorskip("cuda.bindings")
    from cute_py.emit.stage_copy import emit_scale_gather, scale_gather_name
    from cute_py.runtime import compile
    for nbytes in (1, 4):
        prog = compile(emit_scale_gather(nbytes), name=f"{scale_gather_name(nbytes)}.cu")
        assert prog.kernels[scale_gather_name(nbytes)].spill_bytes == 0
    with pytest.raises(ValueError, match="nbytes must be 1 or 4"):
        emit_scale_gather(2)


def test_emitted_source():
    """fp8 wgmma take no transpose operands; per-tensor scales fold into alpha; row-wise scales scale the
    accumulators; blockwise scales promote each K tile."""
    t = emit_gemm(GemmSpec(scale="tensor", fast_accum=True, **E4M3))
    assert "m64n128k32.f32.e4m3.e4m3 {" in t and "p, 1, 1;" in t and "p, 1, 1, 0, 0" not in t
    assert "alpha * scale_a[0] * scale_b[0]" in t and "acc[mb][v] += part" not in t
    r = emit_gemm(GemmSpec(scale="row", **E4M3))
    assert "scale_acc(acc, mt" in r and "acc[mb][0 + v] += part[mb][v];" in r
    b = emit_gemm(GemmSpec(scale="block", **E4M3))
    assert "load_scale_b(sc, n0, kb + 1, sb);" in b and "fmaf(part[mb][v], ab[0][mb][scale_slot(v)]" in b
    # scale_a: one more TMA box per stage into the stage's slot, counted in its bytes; read before the wgmma issue
    assert "tma_load_2d(sa_slots + s * kScaleSlotBytes, &tma_sa, full, w.m_tile * kBM, kb);" in b
    assert "constexpr u32 kTxBytes = 33280u;" in b and "ss[row + mb * kTvRows + r * kScaleRowStep] * sb[c]" in b
    assert b.index("ab[c][mb][r] =") < b.index("wgmma_m64n128k32(part[0]") and "sc.a[" not in b
    # groups along M: the box starts at the tile's row rounded down to 16 bytes, the consumers read that many on
    g = emit_gemm(GemmSpec(scale="block", b="(N,K,L):(K,1,ldb_l)", **E4M3))
    assert "&tma_sa, full, (w.row0 + w.m_tile * kBM) / kScaleAPad * kScaleAPad, kb);" in g
    assert "acc_m_thread(mt) + (wk.row0 + wk.m_tile * kBM) % kScaleAPad" in g and "constexpr int kScaleAPad = 4;" in g
    assert "scale_a 528 (box (132, 1))" in g and "kScaleAPad" not in b


@pytest.mark.parametrize("fields", [dict(scale="tensor", fast_accum=True, tile=(128, 256, 128)),
                                    dict(scale="row", tile=(128, 128, 128), split_k=2),
                                    dict(scale="block", tile=(128, 128, 128), cluster=(1, 2)),
                                    dict(scale="block", tile=(128, 192, 128), dtype="e5m2"),
                                    dict(scale="tensor", tile=(64, 256, 128), consumers=1)])
def test_fp8_kernels_compile_without_spills(fields, tmp_path, monkeypatch):
    from cute_py import runtime as rt
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path))
    spec = GemmSpec(**{"dtype": "e4m3", **fields}).validate()
    prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")       # strict: a serialized wgmma is an error
    assert prog.spills[spec.name] == 0


# ---------------------------------------------------------------------------------------------------------------
# Problem: arrays and scales


M, N, K = 1000, 512, 4096
A = rec((M, K), (K, 1), "e4m3")
B = rec((K, N), (1, K), "e4m3")                        # w.t() of a row-major (N, K)


@pytest.mark.parametrize("sa, sb, mode, strides", [
    (rec((), (), "f32"), rec((1,), (1,), "f32"), "tensor", (0, 0, 0, 0)),
    (rec((M, 1), (1, 1), "f32"), rec((1, N), (N, 1), "f32"), "row", (1, 0, 0, 1)),
    (rec((M, 32), (1, M), "f32"), rec((32, 4), (1, 32), "f32"), "block", (1, M, 1, 32)),
    (rec((M, 32), (32, 1), "f32"), rec((32, 4), (4, 1), "f32"), "block", (32, 1, 4, 1)),
])
def test_scale_shapes_choose_the_mode(sa, sb, mode, strides):
    p = Problem.from_arrays(A, B, scale_a=sa, scale_b=sb, op="scaled_gemm")
    assert (p.scale, p.scale_strides, p.dtype, p.out_dtype, p.fast_accum) == (mode, strides, "e4m3", "bf16", False)
    assert p.mismatches(pick_spec(M, N, K, "K", "K", "e4m3", "bf16", scale=mode)) == []


ONE = rec((), (), "f32")


@pytest.mark.parametrize("kw, message", [
    (dict(b=rec((K, N), (N, 1), "e4m3")), "must be K-major .* b \\(4096, 512\\) has strides \\(512, 1\\)"),
    (dict(a=rec((M, K), (1, M), "e4m3")), "must be K-major .* a \\(1000, 4096\\)"),
    (dict(scale_a=rec((), (), "f16")), "scale_a has element type f16; scales are f32 or ue8m0"),
    (dict(scale_a=rec((), (), "ue8m0")), "scale_a is ue8m0 but scale_b is f32; both scales have one type"),
    (dict(scale_a=rec((), (), "ue8m0"), scale_b=rec((), (), "ue8m0")),
     "ue8m0 scales apply to row-wise and blockwise scaling, not per-tensor"),
    (dict(scale_b=None), "scale_b is missing"),
    (dict(scale_a=rec((M, 2), (1, M), "f32")), "name no scale mode for M=1000, N=512, K=4096"),
    (dict(b=rec((K, N), (1, K), "e5m2")), "a is e4m3 but b is e5m2"),
    (dict(a=rec((M, K), (K, 1), "bf16"), b=rec((K, N), (1, K), "bf16")), "supported: e4m3, e5m2"),
    (dict(fast_accum=True, scale_a=rec((M, 32), (1, M), "f32"), scale_b=rec((32, 4), (1, 32), "f32")),
     "blockwise scales always promote"),
])
def test_bad_fp8_inputs(kw, message):
    args = dict(a=A, b=B, scale_a=ONE, scale_b=ONE)
    args.update(kw)
    a, b = args.pop("a"), args.pop("b")
    with pytest.raises(GemmInputError, match=f"^scaled_gemm: .*{message}"):
        Problem.from_arrays(a, b, op="scaled_gemm", **args)


@pytest.mark.parametrize("mode, sa, sb", [
    ("row", rec((M, 1), (1, 1), "ue8m0"), rec((1, N), (N, 1), "ue8m0")),
    ("block", rec((M, 32), (1, M), "ue8m0"), rec((32, 4), (4, 1), "ue8m0")),
])
def test_ue8m0_scales(mode, sa, sb):
    """UE8M0 scales (float8_e8m0fnu: one byte, a power of two) are read as their own scale type, picked into the
    spec (its name and the tuned table's key say so), and read in the kernel through ue8m0_to_f32 from byte
    pointers; a spec with f32 scales does not fit the problem."""
    p = Problem.from_arrays(A, B, scale_a=sa, scale_b=sb, op="scaled_gemm")
    assert (p.scale, p.scale_type) == (mode, "ue8m0")
    spec = select(p, sm_count=132)
    assert spec.scale_type == "ue8m0" and spec.name.endswith("_ue8m0") and p.mismatches(spec) == []
    assert p.mismatches(spec.replace(scale_type="f32")) == ["scale_type: spec 'f32', arrays 'ue8m0'"]
    assert problem_key(p, device="H200").endswith(f"scale:{mode} ue8m0")
    src = emit_gemm(spec)
    assert "const u8* __restrict__ scale_b" in src and "ue8m0_to_f32(" in src
    assert ("const u8* __restrict__ scale_a" in src) == (mode == "row")   # blockwise: scale_a's tensor map of bytes
    if mode == "block":
        assert gemm_plan(spec).promotion.sa_tma.data_type == "UINT8" and "u8 scale_smem[" in src
    assert "ue8m0_to_f32" not in emit_gemm(spec.replace(scale_type="f32"))
    with pytest.raises(SpecError, match="scale_type = 'ue8m0' applies to row-wise and blockwise scales"):
        GemmSpec(dtype="e4m3", scale="tensor", scale_type="ue8m0")


def test_single_element_ue8m0_scales_read_as_row_wise_or_blockwise():
    """UE8M0 has no per-tensor mode, so one element each is the row-wise (M = N = 1) or blockwise (M = 1,
    K <= 128, N <= 128) scale it equals; anywhere else it is refused naming per-tensor scaling."""
    one = rec((1, 1), (1, 1), "ue8m0")
    for (m, n, k), mode in (((1, 1, 64), "row"), ((1, 64, 128), "block")):
        p = Problem.from_arrays(rec((m, k), (k, 1), "e4m3"), rec((k, n), (1, k), "e4m3"), scale_a=one, scale_b=one,
                                op="scaled_gemm")
        assert (p.scale, p.scale_type) == (mode, "ue8m0")
    with pytest.raises(GemmInputError, match="ue8m0 scales apply to row-wise and blockwise scaling, not per-tensor"):
        Problem.from_arrays(rec((1, 128), (128, 1), "e4m3"), rec((128, 256), (1, 128), "e4m3"), scale_a=one,
                            scale_b=one, op="scaled_gemm")


def test_scale_ranks_out_dtype_and_empty_problems():
    """Scales are 2-D or one element (a (1, 1, N) scale_b must not pass for (1, N) with its first stride); a D
    type cute_py does not write is refused by name before anything is allocated; N = 0 is an empty problem."""
    for sb, shape in ((rec((1, 1, N), (N, N, 1), "f32"), "(1, 1, 512)"), (rec((N,), (1,), "f32"), "(512,)")):
        with pytest.raises(GemmInputError, match=f"scale_b has shape {re.escape(shape)}: scales are 2-D"):
            Problem.from_arrays(A, B, scale_a=rec((M, 1), (1, 1), "f32"), scale_b=sb, op="scaled_gemm")
    with pytest.raises(GemmInputError, match="out_dtype 'e4m3' is not a type cute_py writes"):
        Problem.from_arrays(A, B, scale_a=ONE, scale_b=ONE, out_dtype="e4m3", op="scaled_gemm")
    empty = Problem.from_arrays(A, rec((K, 0), (1, K), "e4m3"), scale_a=ONE, scale_b=ONE, op="scaled_gemm")
    assert empty.empty and empty.N == 0


def test_out_dtype_spellings():
    from cute_py.gemm import _type_name
    torch = pytest.importorskip("torch")
    assert [_type_name(t) for t in (None, "f32", "float32", torch.float32, torch.bfloat16, "half", "e4m3")] == \
        [None, "f32", "f32", "f32", "bf16", "f16", "e4m3"]


def test_fp8_without_scales_points_at_scaled_gemm():
    with pytest.raises(GemmInputError, match="use cute_py.scaled_gemm"):
        Problem.from_arrays(A, B)


def test_heuristic_and_tuned_key():
    for mode, fast in (("tensor", True), ("row", True), ("tensor", False), ("block", False)):
        s = pick_spec(8192, 8192, 8192, "K", "K", "e4m3", "bf16", scale=mode, fast_accum=fast)
        assert s.tile == ((128, 256, 128) if fast else (128, 128, 128)) and s.validate()
    small = pick_spec(128, 4096, 4096, "K", "K", "e4m3", "bf16", scale="block")
    assert small.tile[2] == 128 and small.validate()
    p = Problem(64, 64, 64, "K", "K", "e4m3", "bf16", scale="row", fast_accum=True)
    assert problem_key(p, device="H100").endswith("scale:row fast")
    assert "scale" not in problem_key(Problem(64, 64, 64, "K", "K", "bf16", "bf16"), device="H100")


# ---------------------------------------------------------------------------------------------------------------
# CLI


def test_cli_fp8_compiles_and_refuses_bad_combinations(capsys):
    assert cli.main(["gemm", "--dtype", "e4m3", "--scale", "block", "--m", "256", "--n", "256", "--k", "512",
                     "--emit-only", "-o", "/dev/null"]) == 0
    for argv, msg in ((["--dtype", "e4m3", "--layout", "nt"], "needs --layout tn"),
                      (["--scale", "row"], "apply to fp8"),
                      (["--dtype", "e5m2", "--scale", "block", "--fast-accum"], "always promote")):
        assert cli.main(["gemm", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and msg in err[0], err
