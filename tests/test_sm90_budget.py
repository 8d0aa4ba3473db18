"""cute_py.arch.sm90.budget: shared-memory and register budgets of a Hopper GEMM config.

The expected values are computed here from the documented formula, not read
back from the module:

* a stage holds the A tile (M x K) and the B tile (N x K), each rounded up to
  1024 bytes (the SW128 swizzle repeat, so descriptors need no base offset);
* each stage has a full and an empty mbarrier, 8 bytes each (16 bytes a stage);
* stages, barriers and the epilogue buffer together, rounded up to 1024 bytes,
  must fit in 232448 bytes (227 KB, sm_90's largest dynamic smem per block).
"""

from __future__ import annotations

import pytest

from cute_py.arch.sm90 import (
    REGS_PER_SM,
    SMEM_PER_BLOCK,
    accumulator_registers,
    check_config,
    smem_budget,
    valid_wgmma_n,
    wgmma_k,
)

LIMIT = 232448
ALIGN = 1024
BARRIERS = 16
BYTES = {"bf16": 2, "f16": 2, "tf32": 4, "f32": 4, "e4m3": 1, "e5m2": 1, "s8": 1}


def up(x, a=ALIGN):
    return -(-x // a) * a


def expected(bm, bn, bk, ta, tb, epi):
    stage = up(bm * bk * BYTES[ta]) + up(bn * bk * BYTES[tb])
    n = 0
    while up((n + 1) * (stage + BARRIERS) + epi) <= LIMIT:
        n += 1
    return stage, n


def test_constants():
    assert SMEM_PER_BLOCK == LIMIT == 227 * 1024
    assert REGS_PER_SM == 65536


# (M, N, K, A type, B type, epilogue bytes, stage bytes, max stages), worked by hand:
TABLE = [
    # 128x64x2 + 128x64x2 = 32768; 7 * 32784 = 229488 -> 230400 <= 232448; 8 * 32784 = 262272 > limit
    (128, 128, 64, "bf16", "bf16", 0, 32768, 7),
    # 16384 + 32768 = 49152; epilogue 128x256x2 = 65536: 3 * 49168 + 65536 = 213040 -> 214016 fits,
    # 4 * 49168 + 65536 = 262208 does not
    (128, 256, 64, "bf16", "bf16", 128 * 256 * 2, 49152, 3),
    # same without an epilogue buffer: 4 * 49168 = 196672 -> 197632 fits; 5 * 49168 = 245840 -> 246784 does not
    (128, 256, 64, "bf16", "bf16", 0, 49152, 4),
    # 64x32x2 + 256x32x2 = 4096 + 16384 = 20480; 11 * 20496 = 225456 -> 226304 fits; 12 * 20496 = 245952
    (64, 256, 32, "f16", "f16", 0, 20480, 11),
    # 8-bit: 128x128 + 128x128 bytes = 32768
    (128, 128, 128, "e4m3", "e4m3", 0, 32768, 7),
    # tf32: 128x32x4 + 128x32x4 = 32768
    (128, 128, 32, "tf32", "tf32", 0, 32768, 7),
    # tiles that are not multiples of 1024 bytes: 8x8x2 = 128 -> 1024 each, stage 2048;
    # 112 * 2064 = 231168 -> 231424 fits; 113 * 2064 = 233232 does not
    (8, 8, 8, "bf16", "bf16", 0, 2048, 112),
    # 72x64x2 = 9216 (9 * 1024), 24x64x2 = 3072: 12288 a stage; 18 * 12304 = 221472 -> 222208 fits,
    # 19 * 12304 = 233776 does not
    (72, 24, 64, "bf16", "bf16", 0, 12288, 18),
    # the epilogue alone leaves room for no stage
    (128, 128, 64, "bf16", "bf16", 230000, 32768, 0),
]


@pytest.mark.parametrize("row", TABLE, ids=lambda r: f"{r[0]}x{r[1]}x{r[2]}-{r[3]}-epi{r[5]}")
def test_smem_budget_table(row):
    bm, bn, bk, ta, tb, epi, stage, stages = row
    # the hand-worked numbers agree with the documented formula ...
    assert expected(bm, bn, bk, ta, tb, epi) == (stage, stages)
    # ... and with the module
    b = smem_budget(bm, bn, bk, ta, tb, epilogue_bytes=epi)
    assert (b.stage_bytes, b.max_stages) == (stage, stages)
    assert b.barrier_bytes_per_stage == BARRIERS and b.epilogue_bytes == epi
    assert b.total(stages) <= LIMIT < b.total(stages + 1)
    assert b.total(stages) == up(stages * (stage + BARRIERS) + epi)
    assert b.total(stages) % ALIGN == 0


def test_smem_budget_custom_limit():
    b = smem_budget(128, 128, 64, "bf16", "bf16", limit=100 * 1024)
    # 3 * 32784 = 98352 -> 99328 <= 102400; 4 * 32784 = 131136 > 102400
    assert b.max_stages == 3


def test_accumulator_registers():
    # M*N accumulators over 128 threads per consumer warpgroup; f32 = one register each, f16 half
    assert accumulator_registers(64, 128) == 64
    assert accumulator_registers(128, 128) == 128
    assert accumulator_registers(128, 128, consumers=2) == 64
    assert accumulator_registers(128, 256, consumers=2) == 128
    assert accumulator_registers(128, 256) == 256
    assert accumulator_registers(128, 256, consumers=2, acc_type="f16") == 64
    assert accumulator_registers(256, 128, consumers=2, acc_type="s32") == 128


def test_wgmma_k():
    # 32 bytes of K per instruction
    assert [wgmma_k(t) for t in ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8")] == [16, 16, 8, 32, 32, 32]


def test_valid_wgmma_n():
    f32 = valid_wgmma_n("f32")
    assert f32 == tuple(range(8, 257, 8)) and len(f32) == 32
    assert valid_wgmma_n("f16") == f32
    s32 = valid_wgmma_n("s32")
    assert s32 == (8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256)
    assert 40 in f32 and 40 not in s32 and 264 not in f32 and 0 not in f32


# --------------------------------------------------------------------------- check_config

@pytest.mark.parametrize("kwargs", [
    {"block_m": 128, "block_n": 128, "block_k": 64, "consumers": 1},
    {"block_m": 128, "block_n": 256, "block_k": 64, "consumers": 2, "stages": 4},
    {"block_m": 128, "block_n": 128, "block_k": 64, "consumers": 1, "stages": 7},
    {"block_m": 64, "block_n": 8, "block_k": 16, "consumers": 1, "stages": 2},
    {"block_m": 256, "block_n": 128, "block_k": 64, "consumers": 2, "stages": 4, "cluster": (2, 1, 1)},
    {"block_m": 128, "block_n": 128, "block_k": 128, "a_type": "e4m3", "b_type": "e4m3", "cluster": (2, 4, 1)},
    {"block_m": 128, "block_n": 48, "block_k": 64, "a_type": "s8", "b_type": "s8", "acc_type": "s32"},
])
def test_check_config_good(kwargs):
    assert check_config(**kwargs) == []


def _one(problems, *needles):
    hits = [p for p in problems if all(n in p for n in needles)]
    assert len(hits) == 1, (needles, problems)
    return hits[0]


def test_check_config_bad_consumers():
    problems = check_config(192, 128, 64, consumers=3)
    _one(problems, "consumers 3")
    assert len(problems) == 1


def test_check_config_block_m_per_consumer():
    _one(check_config(64, 128, 64, consumers=2), "block_m 64", "64 x 2")
    _one(check_config(96, 128, 64, consumers=1), "block_m 96")
    assert len(check_config(96, 128, 64, consumers=1)) == 1


@pytest.mark.parametrize("n, acc", [(264, "f32"), (12, "f32"), (0, "f32"), (40, "s32")])
def test_check_config_invalid_n(n, acc):
    kw = {"a_type": "s8", "b_type": "s8"} if acc == "s32" else {}
    problems = check_config(128, n, 64, acc_type=acc, consumers=2, **kw)
    _one(problems, f"block_n {n}", "wgmma N")
    assert len(problems) == 1, problems


def test_check_config_block_k():
    _one(check_config(128, 128, 24, a_type="bf16"), "block_k 24", "16")
    _one(check_config(128, 128, 48, a_type="e4m3", b_type="e4m3"), "block_k 48", "32")
    assert check_config(128, 128, 24, a_type="tf32", b_type="tf32") == []    # tf32 K = 8


def test_check_config_registers():
    problems = check_config(128, 256, 64, consumers=1)      # 256 accumulators a thread
    _one(problems, "256 registers")
    assert len(problems) == 1
    assert check_config(128, 256, 64, consumers=1, max_regs_per_consumer=255)[0].startswith("accumulators")
    # 224 = 240 - 16 is the last count that fits: 128 x 224 / 128 threads
    assert check_config(128, 224, 64, consumers=1, stages=2) == []
    _one(check_config(128, 232, 64, consumers=1, stages=2), "232 registers")


def test_check_config_smem_overflow():
    problems = check_config(128, 256, 64, consumers=2, stages=5)
    # 5 * 49168 = 245840 -> 246784 > 232448
    assert problems == ["smem: 5 stages need 246784 bytes > 232448"]
    problems = check_config(128, 256, 64, consumers=2, epilogue_bytes=200 * 1024)
    _one(problems, "smem: 2 stages")


@pytest.mark.parametrize("cluster, needle", [
    ((4, 4, 1), "16 CTAs > 8"),
    ((2, 2, 4), "16 CTAs > 8"),
    ((3, 1, 1), "powers of two"),
    ((1, 6, 1), "powers of two"),
    ((0, 1, 1), "powers of two"),
])
def test_check_config_cluster(cluster, needle):
    problems = check_config(128, 128, 64, cluster=cluster)
    _one(problems, needle)
    assert len(problems) == 1
    assert check_config(128, 128, 64, cluster=(8, 1, 1)) == []
    assert check_config(128, 128, 64, cluster=(2, 2)) == []


def test_check_config_returns_every_violation():
    # block_m 320 = 2.5 x 128; 320 x 264 / 256 = 330 registers; 9 x (15360 + 13312 + 16) bytes of smem
    problems = check_config(320, 264, 24, consumers=2, stages=9, cluster=(3, 4, 1))
    for needles in (("block_m 320",), ("block_n 264",), ("block_k 24",), ("registers",), ("smem: 9 stages",),
                    ("12 CTAs > 8",), ("powers of two",)):
        _one(problems, *needles)
    assert len(problems) == 7
    problems = check_config(128, 128, 64, consumers=4, cluster=(16, 1, 1))
    _one(problems, "consumers 4")
    _one(problems, "16 CTAs")
    assert len(problems) == 2
