"""The GEMM front ends' options, without a GPU (issue 34): flags take bools only, options that conflict are refused
naming both, an ``out`` never shares memory with what the kernel reads, messages name the operation that was
called, and a dimension of extent 1 takes any stride. Arrays are raw-pointer records; every refusal comes before
anything needs a device."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest

import cute_py
from cute_py.arraylib import ArrayLibraryError
from cute_py.options import flag
from cute_py.problem import GemmInputError, Problem, overlaps
from cute_py.problem_groups import bmm_problem, grouped_problem
from cute_py.runtime import as_device_array

at = importlib.import_module("cute_py.autotune")        # the module (cute_py.autotune is the function)


def rec(shape, strides=None, dtype="bf16", ptr=1 << 40):
    return as_device_array(ptr, shape=shape, strides=strides, dtype=dtype)


def fp8_operands(M=64, N=64, K=64):
    """fp8 a (M, K) and b (K, N), both K-major, with per-tensor scales, each in its own memory."""
    return (rec((M, K), dtype="e4m3"), rec((K, N), (1, K), "e4m3", 2 << 40), rec((1,), dtype="f32", ptr=3 << 40),
            rec((1,), dtype="f32", ptr=4 << 40))


def moe(G=2, M=64, K=64, N=64):
    """Groups along M: a (M, K), b (G, K, N), offs (G,), out (M, N), each in its own memory."""
    return (rec((M, K)), rec((G, K, N), ptr=2 << 40), rec((G,), dtype="s32", ptr=3 << 40),
            rec((M, N), ptr=4 << 40))


# ---------------------------------------------------------------------------------------------------------------
# Flags: bools only

NOT_BOOLS = ["no", "yes", 0, 1, 1.0, None, np.int64(1), [True]]


@pytest.mark.parametrize("value", NOT_BOOLS, ids=repr)
def test_flag_refuses_everything_but_bools(value):
    with pytest.raises(ValueError, match=r"^op: opt must be True or False, got .* \(\w+\)$"):
        flag("op", "opt", value, ValueError)


@pytest.mark.parametrize("value", [True, False, np.bool_(True), np.bool_(False)])
def test_flag_takes_python_and_numpy_bools(value):
    got = flag("op", "opt", value, ValueError)
    assert type(got) is bool and got == bool(value)


def test_scaled_gemm_use_fast_accum_takes_only_bools():
    a, b, sa, sb = fp8_operands()
    with pytest.raises(GemmInputError, match="scaled_gemm: use_fast_accum must be True or False, got 'no'"):
        cute_py.scaled_gemm(a, b, sa, sb, use_fast_accum="no", out=rec((64, 64), ptr=5 << 40))
    with pytest.raises(GemmInputError, match="gemm: use_fast_accum must be True or False, got 1"):
        Problem.from_arrays(a, b, scale_a=sa, scale_b=sb, fast_accum=1)
    assert Problem.from_arrays(a, b, scale_a=sa, scale_b=sb, fast_accum=np.bool_(True)).fast_accum is True


@pytest.mark.parametrize("option", ["check_offs", "use_fast_accum"])
def test_grouped_gemm_flags_take_only_bools(option):
    a, b, offs, out = moe()
    with pytest.raises(GemmInputError, match=f"grouped_gemm: {option} must be True or False, got 'no'"):
        cute_py.grouped_gemm(a, b, offs, out=out, **{option: "no"})
    with pytest.raises(GemmInputError, match=f"grouped_gemm: {option} must be True or False, got 0"):
        grouped_problem(a, b, offs, **{"fast_accum" if option == "use_fast_accum" else option: 0})


@pytest.mark.parametrize("option", ["progress", "cache", "check", "use_fast_accum"])
def test_autotune_flags_take_only_bools(option):
    a, b = rec((64, 64)), rec((64, 64), ptr=2 << 40)
    with pytest.raises(at.AutotuneError, match=f"autotune: {option} must be True or False, got 'no'"):
        cute_py.autotune(a, b, **{option: "no"})


# ---------------------------------------------------------------------------------------------------------------
# Options that conflict

@pytest.mark.parametrize("call", ["scaled_gemm", "grouped_gemm", "bmm"])
def test_out_dtype_must_name_outs_type(call):
    out = rec((64, 64), ptr=5 << 40)                                   # bf16
    if call == "scaled_gemm":
        a, b, sa, sb = fp8_operands()
        run = lambda **kw: cute_py.scaled_gemm(a, b, sa, sb, out=out, **kw)            # noqa: E731
    elif call == "grouped_gemm":
        a, b, offs, _ = moe()
        run = lambda **kw: cute_py.grouped_gemm(a, b, offs, out=out, check_offs=False, **kw)  # noqa: E731
    else:
        out = rec((2, 64, 64), ptr=5 << 40)
        run = lambda **kw: cute_py.bmm(rec((2, 64, 64)), rec((2, 64, 64), ptr=2 << 40), out=out, **kw)  # noqa: E731
    with pytest.raises(GemmInputError, match=f"{call}: out is bf16 but out_dtype is 'f32'"):
        run(out_dtype="f32")
    try:                                                                 # agreeing: read, then the GPU is asked for
        run(out_dtype="bf16")
    except GemmInputError as e:
        pytest.fail(f"out_dtype naming out's type was refused: {e}")
    except Exception:  # noqa: BLE001 - no GPU here: whatever the runtime says after the arrays were accepted
        pass


def test_out_dtype_is_checked_by_the_reader_for_every_form():
    a, b = rec((64, 32)), rec((32, 16), ptr=2 << 40)
    with pytest.raises(GemmInputError, match="gemm: out is bf16 but out_dtype is 'f16'"):
        Problem.from_arrays(a, b, out=rec((64, 16), ptr=3 << 40), out_dtype="f16")
    raw = rec((64, 16), dtype="u16", ptr=3 << 40)                        # cupy's bf16: raw words, read as out_dtype
    assert Problem.from_arrays(a, b, out=raw, out_dtype="f16").out_dtype == "f16"
    with pytest.raises(GemmInputError, match="bmm: out is f32 but out_dtype is 'bf16'"):
        bmm_problem(rec((2, 8, 8)), rec((2, 8, 8), ptr=2 << 40), out=rec((2, 8, 8), dtype="f32", ptr=3 << 40),
                    out_dtype="bf16")


def test_beta_without_c_is_refused():
    a, b = rec((64, 32)), rec((32, 16), ptr=2 << 40)
    with pytest.raises(GemmInputError, match=r"gemm: beta=1.0 scales c, but no c was given; pass c \(M, N\) = "
                                             r"\(64, 16\), or leave beta at 0"):
        cute_py.gemm(a, b, beta=1.0, out=rec((64, 16), ptr=3 << 40))
    with pytest.raises(GemmInputError, match="beta=-0.5 scales c"):
        Problem.from_arrays(a, b, beta=-0.5)
    assert Problem.from_arrays(a, b, rec((64, 16), ptr=3 << 40), beta=1.0).beta is True


# ---------------------------------------------------------------------------------------------------------------
# out shares no memory with what the kernel reads

def test_out_aliasing_an_operand_is_refused_naming_it():
    a, b = rec((64, 64)), rec((64, 64), ptr=2 << 40)
    with pytest.raises(GemmInputError, match="gemm: out shares memory with a: the kernel would overwrite"):
        cute_py.gemm(a, b, out=rec((64, 64)))
    with pytest.raises(GemmInputError, match="out shares memory with a and b"):
        Problem.from_arrays(a, a, out=a)
    bias = rec((64,), ptr=3 << 40)
    with pytest.raises(GemmInputError, match="out shares memory with bias"):   # D's first row is the bias
        Problem.from_arrays(a, b, bias=bias, out=rec((64, 64), ptr=3 << 40))
    with pytest.raises(GemmInputError, match="bmm: out shares memory with a"):
        cute_py.bmm(rec((2, 64, 64)), rec((2, 64, 64), ptr=2 << 40), out=rec((2, 64, 64)))
    a2, b2, offs, _ = moe()
    with pytest.raises(GemmInputError, match="grouped_gemm: out shares memory with a"):
        cute_py.grouped_gemm(a2, b2, offs, out=a2)


def test_out_may_be_c_itself_but_not_overlap_it_otherwise():
    a, b, c = rec((64, 32)), rec((32, 16), ptr=2 << 40), rec((64, 16), ptr=3 << 40)
    assert Problem.from_arrays(a, b, c, beta=1.0, out=c).beta                          # D = a @ b + D
    shifted = rec((64, 16), ptr=(3 << 40) + 32)                                         # c one row further on
    with pytest.raises(GemmInputError, match="out shares memory with c"):
        Problem.from_arrays(a, b, c, beta=1.0, out=shifted)


def test_out_beside_an_operand_in_one_buffer_is_accepted():
    """Two column blocks of one row-major buffer interleave without sharing an element: accepted, as torch does."""
    buf = 1 << 40
    a = rec((64, 32), (64, 1), ptr=buf)                                    # columns 0..31 of a (64, 64) buffer
    out = rec((64, 32), (64, 1), ptr=buf + 64)                             # columns 32..63
    assert not overlaps(a, out)
    assert Problem.from_arrays(a, rec((32, 32), ptr=2 << 40), out=out).shape == "64x32x32"
    below = rec((64, 64), ptr=buf + 64 * 64 * 2)                            # the next (64, 64) block: disjoint spans
    assert not overlaps(rec((64, 64), ptr=buf), below)


# ---------------------------------------------------------------------------------------------------------------
# Messages name the operation that was called, and what was passed

@pytest.mark.parametrize("call", ["scaled_gemm", "bmm", "grouped_gemm"])
def test_allocating_d_for_raw_pointers_names_the_operation(call):
    if call == "scaled_gemm":
        a, b, sa, sb = fp8_operands()
        run = lambda: cute_py.scaled_gemm(a, b, sa, sb)                                  # noqa: E731
    elif call == "bmm":
        run = lambda: cute_py.bmm(rec((2, 64, 64)), rec((2, 64, 64), ptr=2 << 40))        # noqa: E731
    else:
        a, b, offs, _ = moe()
        run = lambda: cute_py.grouped_gemm(a, b, offs, check_offs=False)                # noqa: E731
    with pytest.raises(ArrayLibraryError, match=f"^{call}: cannot make the output like a DeviceArray .*pass out="):
        run()


def test_grouped_gemm_with_out_on_raw_pointers_names_check_offs_not_out():
    a, b, offs, out = moe()
    with pytest.raises(ArrayLibraryError, match="^grouped_gemm: cannot read the values of a DeviceArray") as e:
        cute_py.grouped_gemm(a, b, offs, out=out)
    assert "check_offs=False" in str(e.value) and "out=" not in str(e.value)


# ---------------------------------------------------------------------------------------------------------------
# A dimension of extent 1 takes any stride

def addresses(x, major: str, ld: int, inner: str) -> dict:
    """Element (i, j) -> its offset as the reader's ``(major, ld)`` says: ``inner``-major means the columns are
    contiguous (rows ``ld`` apart), else the rows (columns ``ld`` apart)."""
    r, c = x.shape
    return {(i, j): (i * ld + j if major == inner else i + j * ld) for i in range(r) for j in range(c)}


@pytest.mark.parametrize("shape, strides", [((1, 2696), (1, 5)), ((1, 40), (40, 3)), ((152, 1), (2, 1)),
                                            ((152, 1), (1, 1)), ((7, 1), (0, 9)), ((1, 1), (3, 5)),
                                            ((1, 9), (1, 1)), ((6, 1), (1, 6))])
def test_a_dimension_of_extent_1_takes_any_stride(shape, strides):
    """What the reader makes of the operand addresses each element where the array has it (the stride of an
    extent-1 dimension multiplies only index 0)."""
    for x in (rec(shape, strides), rec(shape, strides, ptr=2 << 40)):
        for which, (inner, outer) in (("a", ("K", "MN")), ("b", ("MN", "K"))):
            a, b = (x, rec((shape[1], 8), ptr=3 << 40)) if which == "a" else (rec((8, shape[0]), ptr=3 << 40), x)
            p = Problem.from_arrays(a, b)
            major, staged = (p.a_major, p.lda) if which == "a" else (p.b_major, p.ldb)
            ld = next((s.src_ld // 2 for s in p.staging if s.which == which), staged)   # the array's own ld
            want = {(i, j): i * strides[0] + j * strides[1]
                    for i, j in itertools.product(range(shape[0]), range(shape[1]))}
            assert addresses(x, major, ld, inner) == want, (which, major, ld)


def test_the_rank_1_update_of_the_issue_is_read_with_its_leading_dimensions():
    """Issue 34: b (1, 2696) with strides (1, 5) and a (152, 1) with strides (2, 1) were "not contiguous along
    either dimension"; they are K-major operands whose rows are 5 and 2 elements apart (staged: not 16 bytes)."""
    p = Problem.from_arrays(rec((152, 1), (2, 1)), rec((1, 2696), (1, 5), ptr=2 << 40))
    assert (p.shape, p.a_major, p.b_major) == ("152x2696x1", "K", "K")
    assert [(s.which, s.rows, s.row_bytes, s.src_ld) for s in p.staging] == [("a", 152, 2, 4), ("b", 2696, 2, 10)]


def test_fp8_reads_an_extent_1_dimension_k_major():
    """fp8 needs K-major operands: a (M, 1) stored as a contiguous column (strides (1, 1)) is K-major too."""
    a, b = rec((64, 1), (1, 1), "e4m3"), rec((1, 32), (32, 1), "e4m3", 2 << 40)
    sa, sb = rec((1,), dtype="f32", ptr=3 << 40), rec((1,), dtype="f32", ptr=4 << 40)
    p = Problem.from_arrays(a, b, scale_a=sa, scale_b=sb)
    assert (p.a_major, p.b_major, p.scale) == ("K", "K", "tensor")
    assert Problem.from_arrays(rec((64, 1), (1, 1)), rec((1, 32), (32, 1), ptr=2 << 40)).a_major == "MN"  # bf16


def test_groups_along_k_read_a_single_row_mn_major():
    """Groups along K need MN-major operands: a (1, total_K) (M = 1) stored row-major is read M-major."""
    a, b = rec((1, 96), (96, 1)), rec((96, 40), (40, 1), ptr=2 << 40)
    p = grouped_problem(a, b, rec((3,), dtype="s32", ptr=3 << 40), check_offs=False)
    assert (p.grouping, p.a_major, p.b_major, p.M) == ("k", "MN", "MN", 1)


def test_an_operand_contiguous_nowhere_is_still_refused():
    with pytest.raises(GemmInputError, match=r"b with shape \(64, 100\) and element strides \(200, 2\) is not "
                                             r"contiguous along either dimension"):
        Problem.from_arrays(rec((256, 64)), rec((64, 100), (200, 2), ptr=2 << 40))
