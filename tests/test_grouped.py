"""Grouped and batched GEMM without a GPU: the group mode in the spec's layouts and its rules, the problems read
from grouped arrays (and their refusals), binding (3-D and ragged tensor maps, work units), the heuristic, the
emitted source (compiled by NVRTC where it is installed), the tile walk and the CLI.
tests/gpu/test_gpu_grouped.py runs the kernels.
"""

from __future__ import annotations

import pytest

from cute_py import cli
from cute_py.emit import GemmSpec, SpecError, emit_gemm, gemm_plan, kernel_params
from cute_py.emit.grouping import ragged_gmem
from cute_py.problem import GemmInputError
from cute_py.problem_groups import Epilogue, bmm_problem, check_offsets, grouped_problem
from cute_py.runtime import as_device_array
from cute_py.selection import pick_spec
from cute_py.tuned import problem_key
from cute_py.viz import tile_walk, tile_walk_svg
from test_runtime_compile import needs_nvrtc

MOE = dict(b="(N,K,L):(K,1,ldb_l)")
BATCH = dict(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(K,1,ldb_l)", c="(M,N,L):(N,1,ldd_l)")
KGROUPS = dict(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)")


def rec(shape, strides, dtype="bf16", ptr=1 << 40):
    """A device-array description (no memory behind it: the readers only read descriptions)."""
    return as_device_array(ptr, shape=shape, strides=strides, dtype=dtype)


def moe_arrays(M=1000, K=512, N=256, G=8, dtype="bf16"):
    return rec((M, K), (K, 1), dtype), rec((G, K, N), (N * K, 1, K), dtype), rec((G,), (1,), "s32", 1 << 41)


# ---- the spec -----------------------------------------------------------------------------------------------------

def test_layouts_name_the_grouping():
    assert [GemmSpec(**kw).grouping for kw in ({}, MOE, BATCH, KGROUPS)] == [None, "m", "batch", "k"]
    with pytest.raises(SpecError) as e:
        GemmSpec(a="(M,K,L):(K,1,lda_l)")
    assert "the group mode L is in layouts ('a',)" in e.value.problems[0]
    names = [GemmSpec(**kw).name.rsplit("_", 1)[1] for kw in (MOE, BATCH, KGROUPS)]
    assert names == ["grouped", "batched", "kgrouped"]


@pytest.mark.parametrize("kw", [
    dict(MOE, split_k=2), dict(BATCH, split_k=3), dict(MOE, split_k=2, schedule="pingpong"),
    dict(BATCH, beta=True, bias="col"), dict(MOE, beta=True, bias="row"), dict(KGROUPS, bias="col"),
    dict(BATCH, dtype="e4m3", scale="row", tile=(128, 128, 128)),
    dict(BATCH, dtype="e4m3", scale="block", tile=(128, 128, 128)),
])
def test_groups_compose_with_split_k_c_bias_and_fp8_scales(kw):
    assert GemmSpec(**kw).name                                # the constructor checks every rule


def test_the_group_strides_of_c_bias_and_scales_are_parameters():
    """A C with the group mode has its own group stride, a grouped bias one (0: one bias for every group), a
    batch's scale_a one beside scale_b's; each unit's Epi points at its group's C and bias."""
    names = lambda **kw: [p.name for p in kernel_params(GemmSpec(**kw))]  # noqa: E731
    assert {"ld_cl", "bias_l"} <= set(names(**BATCH, beta=True, bias="col"))
    assert "ld_cl" not in names(**MOE, beta=True) and "bias_l" in names(**MOE, bias="col")
    assert {"sa_l", "sb_l"} <= set(names(**BATCH, dtype="e4m3", scale="row", tile=(128, 128, 128)))
    assert "sa_l" not in names(**MOE, dtype="e4m3", scale="row", tile=(128, 128, 128))
    src = emit_gemm(GemmSpec(**BATCH, beta=True, bias="col"))
    assert "gep.c = ep.c + (long long)wk.l * ld_cl;" in src and "gep.bias = ep.bias + (long long)wk.l * bias_l;" in src


@pytest.mark.parametrize("kw,message", [
    (dict(KGROUPS, a="(M,K):(K,1)"), "groups along K read a MN-major"),
    (dict(epi_buffers=9), "epi_buffers = 9 not in [1, 8]"),
])
def test_group_rules(kw, message):
    with pytest.raises(SpecError) as e:
        GemmSpec(**kw)
    assert any(message in p for p in e.value.problems), e.value.problems


def test_kernel_parameters_of_each_grouping():
    """The scheduler's rows (offsets and group count) close the table before the extents; D's group stride comes
    with the epilogue's rows, scale_b's with the mainloop's."""
    names = lambda kw: [p.name for p in kernel_params(GemmSpec(**kw))]  # noqa: E731
    assert names(MOE)[-5:] == ["offs", "L", "M", "N", "K"] and "ld_dl" not in names(MOE)
    assert names(BATCH)[-4:] == ["L", "M", "N", "K"] and names(BATCH)[-7:-4] == ["ld_dl", "alpha", "beta"]
    assert names(KGROUPS)[-5:] == ["offs", "L", "M", "N", "K"] and "ld_dl" in names(KGROUPS)
    fp8 = dict(MOE, dtype="e4m3", scale="row", tile=(128, 128, 128))
    assert names(fp8)[2:9] == ["scale_a", "scale_b", "sa_m", "sa_k", "sb_k", "sb_n", "sb_l"]


def test_groups_along_m_refuse_direct_stores_of_128_accumulators_per_thread():
    """A known defect (wrong values on the H200, cause not found: see GroupsAlongM.problems) is refused, not run;
    the heuristic picks a 128x128 tile for groups along M with direct stores."""
    for tile, consumers, schedule in (((128, 256, 64), 2, "cooperative"), ((256, 128, 64), 2, "cooperative"),
                                      ((64, 256, 64), 1, "cooperative"), ((64, 256, 64), 2, "pingpong")):
        with pytest.raises(SpecError, match="groups along M with epilogue = 'direct' and 128 accumulators"):
            GemmSpec(**MOE, tile=tile, consumers=consumers, schedule=schedule, epilogue="direct").validate()
    GemmSpec(**MOE, tile=(128, 192, 64), epilogue="direct").validate()
    GemmSpec(**MOE, tile=(128, 256, 64)).validate()
    s = pick_spec(16384, 4096, 7168, "K", "K", "bf16", "bf16", grouping="m", groups=8, d_tma=False)
    assert s.tile[:2] == (128, 128) and s.epilogue == "direct"


def test_ragged_tensor_maps_of_k_groups():
    p = gemm_plan(GemmSpec(**KGROUPS))
    assert str(ragged_gmem(GemmSpec(**KGROUPS).a, 64)) == "(M,64,K):(1,M,M)"
    for op in (p.a, p.b):
        assert op.tma.box_dim == (64, 64, 1) and op.tma.gmem_modes == (0, 1, 2)
    src = emit_gemm(GemmSpec(**KGROUPS))
    assert "const int ks = w.k0 + kb * kBK, kc1 = min(kBK, w.k1 - ks) - kBK, kc2 = ks;" in src
    assert "tma_load_3d(stage + kOffA + 0u, &tma_a, full, w.m_tile * kBM, kc1, kc2);" in src
    assert "a unit with no k-block contributes zeros" in src


@pytest.mark.parametrize("bk", [64, 128])
def test_ragged_k_loads_read_their_group_and_nothing_before_the_operand(bk):
    """The emitted coordinates (kc1, kc2) on the ragged map (MN, bk, K):(1, ld, ld), modelled as TMA reads them
    (an element is read when every coordinate is inside its dimension, negative ones outside): each K tile of
    each group reads exactly its rows [ks, min(ks + bk, k1)), into the box's last rows, and the map's base is the
    operand (the earlier form, based bk rows before it, faulted where that memory was unmapped)."""
    ends = [0, 1, 127, 128, 129, 129, 389, 400, 463, 600]
    K = ends[-1]
    for k0, k1 in zip([0] + ends[:-1], ends):
        for kb in range(-(-(k1 - k0) // bk)):
            ks = k0 + kb * bk
            kc1, kc2 = min(bk, k1 - ks) - bk, ks                      # the emitted prologue
            rows = {i: kc1 + i + kc2 for i in range(bk) if 0 <= kc1 + i < bk and 0 <= kc2 < K}
            v = min(bk, k1 - ks)
            assert sorted(rows.values()) == list(range(ks, ks + v)), (k0, k1, kb)
            assert sorted(rows) == list(range(bk - v, bk))            # the last v rows of the box
            assert min(rows.values()) >= 0


def test_emitted_group_walks():
    moe = emit_gemm(GemmSpec(**MOE))
    assert "g.row1 = min(max(__ldg(offs + g.l), g.row0), M);" in moe
    assert "tma_load_3d(stage + kOffB + 0u, &tma_b, full, kb * kBK, w.n_tile * kBN, w.l);" in moe
    assert "tma_load_2d(stage + kOffA + 0u, &tma_a, full, kb * kBK, w.row0 + w.m_tile * kBM);" in moe
    assert "tma_store_3d_evict_first(tma_d, buf, n0 + j * kEpiCols, kSlabRows - live, row0 + live);" in moe
    assert "const int live = min(kSlabRows, ep.M - row0);" in moe and "gep.M = wk.row1;" in moe
    assert "store_tile(" not in moe                      # every tile through TMA
    assert gemm_plan(GemmSpec(**MOE)).epi.tma.gmem_modes == (1, 0, 2)
    bat = emit_gemm(GemmSpec(**BATCH))
    assert "g.l = unit / per;" in bat and "tma_store_3d_evict_first(tma_d, buf, n0 + j * kEpiCols, row0, l)" in bat
    direct = emit_gemm(GemmSpec(**BATCH, epilogue="direct"))
    assert "d + (long long)wk.l * ld_dl" in direct
    pp = emit_gemm(GemmSpec(**MOE, schedule="pingpong"))
    assert "mainloop(acc, w, ring, ps, wk.kb0, wk.kb1, sched.more());" in pp


@needs_nvrtc
@pytest.mark.parametrize("kw", [MOE, dict(MOE, tile=(64, 256, 64), schedule="pingpong"), BATCH,
                                dict(BATCH, tile=(128, 256, 64), epi_buffers=4), KGROUPS,
                                dict(MOE, dtype="e4m3", scale="block", tile=(128, 128, 128)),
                                dict(MOE, dtype="e4m3", scale="tensor", fast_accum=True, tile=(128, 256, 128)),
                                dict(MOE, dtype="e4m3", scale="row", fast_accum=True, tile=(128, 256, 128)),
                                dict(MOE, dtype="e4m3", scale="row", fast_accum=True, tile=(64, 256, 128),
                                     schedule="pingpong")])
def test_grouped_kernels_compile_without_spills(kw):
    from cute_py.runtime import compile as nvrtc_compile
    s = GemmSpec(**kw)
    prog = nvrtc_compile(emit_gemm(s), name=f"{s.name}.cu")
    assert prog.spills[s.name] == 0 and prog.registers[s.name] <= 168


# ---- problems, binding, selection ----------------------------------------------------------------------------------

def test_moe_problem_and_binding():
    a, b, offs = moe_arrays()
    p = grouped_problem(a, b, offs, check_offs=False)
    assert (p.grouping, p.groups, p.shape, p.b_major, p.batch_strides) == ("m", 8, "8:1000x256x512", "K",
                                                                            (0, 131072, 0, 0, 0, 0, 0))
    bind = gemm_plan(GemmSpec(**MOE)).bind(p)
    assert bind.tma["tma_b"].global_dim == (512, 256, 8) and bind.tma["tma_b"].global_strides == (1024, 262144)
    assert bind.tma["tma_d"].global_dim == (256, 64, 1064) and bind.ptr_offsets == {"tma_d": -64 * 256 * 2}
    assert bind.units == (8 + 8) * 2 and bind.scalars["L"] == 8 and p.out_shape == (1000, 256)
    assert "groups:m" in problem_key(p, device="H100") and "|8:1000x256x512|" in problem_key(p, device="H100")


def test_batch_and_k_group_problems_and_binding():
    p = bmm_problem(rec((32, 512, 64), (512 * 64, 64, 1)), rec((32, 64, 512), (64 * 512, 1, 64)))
    assert (p.grouping, p.groups, p.out_shape, p.flops) == ("batch", 32, (32, 512, 512), 2 * 32 * 512 ** 2 * 64)
    bind = gemm_plan(GemmSpec(**BATCH)).bind(p)
    assert bind.units == 32 * 16 and bind.tma["tma_d"].global_dim == (512, 512, 32)
    k = grouped_problem(rec((512, 4096), (1, 512)), rec((4096, 1024), (1024, 1)), rec((8,), (1,), "s32"),
                        check_offs=False)
    assert (k.grouping, k.out_shape, k.a_major, k.b_major) == ("k", (8, 512, 1024), "MN", "MN")
    bk = gemm_plan(GemmSpec(**KGROUPS)).bind(k)
    assert bk.tma["tma_a"].global_dim == (512, 64, 4096) and bk.ptr_offsets == {}   # based at a and b


@pytest.mark.parametrize("args,message", [
    (lambda a, b, o: (a, b, None), "groups along M need offs"),
    (lambda a, b, o: (a, b, rec((8,), (1,), "s64")), "offs must be a contiguous 1-D int32 array"),
    (lambda a, b, o: (a, b, rec((7,), (1,), "s32")), "offs has 7 entries but b has 8 groups"),
    (lambda a, b, o: (a, rec((8, 500, 256), (500 * 256, 1, 500)), o), "inner dimensions differ"),
    (lambda a, b, o: (rec((8, 10, 512), (5120, 512, 1)), b, o), "offs applies to a 2-D a"),
    (lambda a, b, o: (rec((1000, 512), (512, 1), "e4m3"), rec((8, 512, 256), (131072, 1, 512), "e4m3"), o),
     "fp8 operands need scale_a and scale_b"),
    # an M-major a: a group's first row would start A's TMA box off a 16-byte boundary (an illegal instruction)
    (lambda a, b, o: (rec((1000, 512), (1, 1000)), b, o), r"read a K-major a: a \(1000, 512\) with strides"),
])
def test_grouped_problem_refusals(args, message):
    a, b, offs = moe_arrays()
    with pytest.raises(GemmInputError, match="grouped_gemm: .*" + message):
        grouped_problem(*args(a, b, offs), check_offs=False)


def test_fp8_group_scales():
    a, b, offs = moe_arrays(dtype="e4m3")
    sa, sb = rec((1000,), (1,), "f32"), rec((8, 256), (256, 1), "f32")
    p = grouped_problem(a, b, offs, scale_a=sa, scale_b=sb, fast_accum=True, check_offs=False)
    assert (p.scale, p.scale_strides, p.batch_strides[3], p.out_dtype) == ("row", (1, 0, 0, 1), 256, "bf16")
    blk = grouped_problem(a, b, offs, scale_a=rec((1000, 4), (4, 1), "f32"), scale_b=rec((8, 4, 2), (8, 2, 1), "f32"),
                          check_offs=False)
    assert (blk.scale, blk.scale_strides, blk.batch_strides[3]) == ("block", (4, 1, 2, 1), 8)
    with pytest.raises(GemmInputError, match="blockwise scales always promote"):
        grouped_problem(a, b, offs, scale_a=rec((1000, 4), (4, 1), "f32"), scale_b=rec((8, 4, 2), (8, 2, 1), "f32"),
                        fast_accum=True, check_offs=False)


def test_grouped_and_batched_epilogues_bind_each_group_its_c_and_bias():
    """bmm and grouped_gemm take C (D's shape) and a bias for every group or one per group; the binding gives the
    kernel their group strides (0: one for all)."""
    a, b = rec((4, 256, 64), (256 * 64, 64, 1)), rec((4, 64, 128), (64 * 128, 1, 64))
    c, per = rec((4, 256, 128), (256 * 128, 128, 1)), rec((4, 128), (128, 1))
    p = bmm_problem(a, b, epilogue=Epilogue(c, 1.0, 0.5, per, "relu"))
    assert (p.beta, p.bias, p.activation, p.ldc) == (True, "col", "relu", 128)
    spec = GemmSpec(**BATCH, beta=True, bias="col", activation="relu")
    assert gemm_plan(spec).bind(p).scalars["ld_cl"] == 256 * 128 and gemm_plan(spec).bind(p).scalars["bias_l"] == 128
    shared = bmm_problem(a, b, epilogue=Epilogue(bias=rec((256,), (1,))))
    assert shared.bias == "row" and shared.batch_strides[5] == 0
    ma, mb, offs = moe_arrays()
    moe = grouped_problem(ma, mb, offs, check_offs=False, epilogue=Epilogue(rec((1000, 256), (256, 1)), 1.0, 1.0,
                                                                            rec((8, 256), (256, 1))))
    assert (moe.beta, moe.bias, moe.batch_strides[4:6]) == (True, "col", (0, 256))
    for epi, message in ((Epilogue(rec((4, 256, 127), (256 * 127, 127, 1)), beta=1.0), "c must have D's shape"),
                         (Epilogue(bias=rec((3, 128), (128, 1))), r"bias must be .* one per group \(4, 128\)"),
                         (Epilogue(activation="tanh"), "activation 'tanh' not in")):
        with pytest.raises(GemmInputError, match="bmm: " + message):
            bmm_problem(a, b, epilogue=epi)


def test_fp8_batch_scales():
    a, b = rec((3, 64, 128), (64 * 128, 128, 1), "e4m3"), rec((3, 128, 96), (96 * 128, 1, 128), "e4m3")
    row = grouped_problem(a, b, scale_a=rec((3, 64), (64, 1), "f32"), scale_b=rec((3, 96), (96, 1), "f32"))
    assert (row.scale, row.scale_strides, row.batch_strides[3], row.batch_strides[6]) == ("row", (1, 0, 0, 1), 96, 64)
    blk = grouped_problem(a, b, scale_a=rec((3, 64, 1), (64, 1, 1), "f32"), scale_b=rec((3, 1, 1), (1, 1, 1), "f32"))
    assert (blk.scale, blk.batch_strides[3], blk.batch_strides[6]) == ("block", 1, 64)
    with pytest.raises(GemmInputError, match=r"name no scale mode for a batch of 3 GEMMs"):
        grouped_problem(a, b, scale_a=rec((64,), (1,), "f32"), scale_b=rec((3, 96), (96, 1), "f32"))
    one = grouped_problem(a, b, scale_a=rec((), (), "f32"), scale_b=rec((), (), "f32"))   # per tensor (an
    assert (one.scale, one.batch_strides[3], one.batch_strides[6]) == ("tensor", 0, 0)      # IndexError on the GPU)


def test_check_offsets_names_the_offending_index():
    check_offsets([0, 5, 5, 9], 9, "op")
    for offs, message in (([-1, 4], r"offs\[0\] = -1 < 0"), ([3, 2], r"offs\[1\] = 2 < offs\[0\] = 3"),
                          ([3, 8], r"offs\[1\] = 8 must be the row count of a, 9")):
        with pytest.raises(GemmInputError, match=message):
            check_offsets(offs, 9, "op")


def test_heuristic_for_groups_and_batches():
    small = pick_spec(32768, 1536, 2048, "K", "K", "bf16", "bf16", grouping="m", groups=128)
    assert (small.tile, small.schedule, small.b) == ((64, 256, 64), "pingpong", GemmSpec(**MOE).b)
    big = pick_spec(32768, 28672, 4096, "K", "K", "bf16", "bf16", grouping="m", groups=8)
    assert (big.tile, big.schedule) == ((128, 256, 64), "cooperative")
    bat = pick_spec(512, 512, 512, "K", "K", "bf16", "bf16", grouping="batch", groups=8)
    assert bat.grouping == "batch" and bat.tile == (128, 128, 64)       # 8 x 16 tiles of 128 x 128 fill the SMs
    assert pick_spec(2048, 1536, 32768, "MN", "MN", "bf16", "bf16", grouping="k", groups=8).grouping == "k"


# ---- the tile walk, the CLI ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("sizes,bm,n,bn,group", [([300, 0, 64, 129, 500, 10], 128, 1024, 256, 8),
                                                  ([1, 2, 3000], 64, 300, 128, 2), ([0, 0], 128, 256, 256, 8)])
def test_tile_walk_covers_every_tile_once(sizes, bm, n, bn, group):
    w = tile_walk(sizes, bm, n, bn, group=group)
    units = sorted(u for row in w.unit for u in row)
    assert units == list(range(w.units)) == list(range(sum(-(-s // bm) for s in sizes) * -(-n // bn)))
    for i, (g, r0, r1) in enumerate(w.rows):                        # a group's units are consecutive
        assert 0 < r1 - r0 <= bm
        same = [u for j, (h, _, _) in enumerate(w.rows) if h == g for u in w.unit[j]]
        assert max(same) - min(same) + 1 == len(same)
    assert tile_walk_svg(w).count('class="cell"') == len(units)


def test_cli_groups_and_batch(capsys):
    assert cli.main(["gemm", "--groups", "8", "--m", "4096", "--n", "1024", "--k", "512", "--emit-only"]) == 0
    assert "_grouped(" in capsys.readouterr().out
    assert cli.main(["gemm", "--batch", "4", "--m", "256", "--n", "256", "--k", "64", "--emit-only"]) == 0
    assert "_batched(" in capsys.readouterr().out
    assert cli.main(["gemm", "--groups", "8", "--batch", "2"]) == 2
    assert "exclude each other" in capsys.readouterr().err
    assert cli.main(["gemm", "--batch", "8", "--dtype", "e4m3"]) == 2         # fp8 runs groups along M, no batch
    assert "--batch runs bf16 and f16" in capsys.readouterr().err
