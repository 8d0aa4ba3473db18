"""cute_py.problem without a GPU: the one reader of a GEMM's arrays (majors, types, epilogue, D, alignment), its
errors, and whether a spec fits the arrays. Arrays are fakes exposing ``__cuda_array_interface__``."""

from __future__ import annotations

import importlib

import pytest

from cute_py.emit import GemmSpec
from cute_py.problem import GemmInputError, Problem
from cute_py.selection import heuristic, pick_spec

from fakes import FakeArray, operands

at = importlib.import_module("cute_py.autotune")        # the module (cute_py.autotune is the function)


# ---------------------------------------------------------------------------------------------------------------
# The problem, read from arrays

@pytest.mark.parametrize("layout, majors", [("tn", ("K", "K")), ("tt", ("K", "MN")), ("nn", ("MN", "K")),
                                            ("nt", ("MN", "MN"))])
def test_problem_majors_follow_the_strides(layout, majors):
    a, b = operands(256, 128, 64, layout)
    p = Problem.from_arrays(a, b)
    assert (p.M, p.N, p.K, p.a_major, p.b_major) == (256, 128, 64, *majors)
    assert pick_spec(256, 128, 64, *majors, "bf16", "bf16").blas_layout == layout     # the naming agrees


def test_problem_reads_the_epilogue_and_the_output():
    a, b = operands(256, 128, 64, dtype="f16")
    out = FakeArray((256, 128), (1, 256), "f32", ptr=1 << 42)            # column-major f32 D
    c = FakeArray((256, 128), (1, 256), "f32", ptr=1 << 43)
    p = Problem.from_arrays(a, b, c, beta=1.0, bias=FakeArray((256,), dtype="f32"), activation="gelu", out=out)
    assert (p.dtype, p.out_dtype, p.beta, p.bias, p.activation, p.c_row_major) == ("f16", "f32", True, "row", "gelu",
                                                                                   False)
    assert Problem.from_arrays(a, b, c, beta=0.0).beta is False       # beta = 0 does not read C
    assert Problem.from_arrays(a, b, bias=FakeArray((128,), dtype="f16")).bias == "col"


@pytest.mark.parametrize("make, message", [
    (lambda: (FakeArray((64, 32)), FakeArray((64, 32))), "inner dimensions differ"),
    (lambda: (FakeArray((64, 32), dtype="f16"), FakeArray((32, 64))), "a is f16 but b is bf16; both must have one type"),
    (lambda: (FakeArray((64, 32), (64, 2)), FakeArray((32, 64))), "not contiguous along either dimension"),
    (lambda: (FakeArray((64,)), FakeArray((64, 64))), "must be 2-D"),
])
def test_problem_rejects_bad_arrays(make, message):
    with pytest.raises(GemmInputError, match=message):
        Problem.from_arrays(*make())


def test_problem_knows_when_d_can_be_stored_by_tma():
    a, b = operands(256, 128, 64)
    assert Problem.from_arrays(a, b).d_tma                                    # gemm allocates D: ld 128
    assert not Problem.from_arrays(*operands(256, 100, 64)).d_tma             # ld 100 x 2 B: not 16 B
    padded = FakeArray((256, 128), (136, 1), ptr=1 << 42)
    assert Problem.from_arrays(a, b, out=padded).d_tma
    odd_ld = FakeArray((256, 128), (130, 1), ptr=1 << 42)
    odd_base = FakeArray((256, 128), (128, 1), ptr=(1 << 42) + 8)
    col = FakeArray((256, 128), (1, 256), ptr=1 << 42)
    for out in (odd_ld, odd_base, col):
        p = Problem.from_arrays(a, b, out=out)
        assert not p.d_tma
        assert heuristic(p).epilogue == "direct"
    p = Problem.from_arrays(a, b, out=odd_ld)
    tma = pick_spec(256, 128, 64, "K", "K", "bf16", "bf16")
    assert tma.epilogue == "tma" and p.mismatches(tma)[0].startswith("epilogue: spec 'tma' stores D with TMA")
    assert p.mismatches(tma.replace(epilogue="direct")) == []
    with pytest.raises(at.AutotuneError, match="epilogue: spec 'tma'"):
        at.autotune(a, b, out=odd_ld, candidates=[tma], check=False)


def test_problem_mismatches_name_each_field():
    p = Problem(64, 64, 64, "K", "MN", "bf16", "bf16")
    assert p.mismatches(pick_spec(64, 64, 64, "K", "MN", "bf16", "bf16")) == []
    bad = p.mismatches(GemmSpec(a="(M,K):(1,M)", c="(M,N):(1,M)", epilogue="direct", bias="col"))
    assert [m.split(":")[0] for m in bad] == ["a_major", "b_major", "bias", "c_row_major"]


def test_shared_features_are_fields_of_both_records():
    """Every feature a spec must share with the problem is a field (or a layout-derived property) of both, and
    nothing else is compared by name."""
    from dataclasses import fields
    from cute_py.problem_fields import SHARED_FEATURES
    spec = GemmSpec()
    assert set(SHARED_FEATURES) == {f.name for f in fields(Problem) if hasattr(spec, f.name)}


@pytest.mark.parametrize("a_shape, a_strides, b_shape, b_strides", [
    ((0, 64), (64, 1), (64, 128), (128, 1)),         # M = 0
    ((128, 64), (64, 1), (64, 0), (0, 1)),            # N = 0 with the strides torch gives an empty (64, 0)
    ((0, 64), (1, 1), (64, 0), (1, 1)),               # both
])
def test_empty_problems_are_read_whatever_their_strides(a_shape, a_strides, b_shape, b_strides):
    p = Problem.from_arrays(FakeArray(a_shape, a_strides), FakeArray(b_shape, b_strides, ptr=1 << 41))
    assert p.empty and (p.M, p.N, p.K) == (a_shape[0], b_shape[1], 64)
    out = FakeArray((a_shape[0], b_shape[1]), (1, 1), ptr=1 << 42)
    assert Problem.from_arrays(FakeArray(a_shape, a_strides), FakeArray(b_shape, b_strides), out=out).empty


def test_stream_rule_asks_the_driver_only_off_the_legacy_stream(monkeypatch):
    """``gemm``'s capture rule (the GPU tests capture for real): no driver call for the legacy default stream;
    a foreign stream is refused while the arrays' stream captures, unless it joined the capture."""
    import cute_py.gemm as g
    from cute_py.runtime import DriverError

    g._refuse_outside_capture("gemm", 5, 0)                   # arrays on the legacy stream: never captured, and
    g._refuse_outside_capture("gemm", 5, 1)                   # no driver is asked (there is none here)

    state = {0: False, 1: False}

    def capturing(stream):
        value = state[stream]
        if isinstance(value, Exception):
            raise value
        return value
    monkeypatch.setattr(g, "stream_capturing", capturing)
    state.update({7: True, 5: False})
    with pytest.raises(GemmInputError, match="not part of that capture"):
        g._refuse_outside_capture("gemm", 5, 7)
    state[5] = True                                   # the side stream joined the capture
    g._refuse_outside_capture("gemm", 5, 7)
    state[5] = DriverError("cuStreamIsCapturing", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "")
    with pytest.raises(GemmInputError, match="not part of that capture"):
        g._refuse_outside_capture("gemm", 5, 7)
    with pytest.raises(GemmInputError, match="not part of that capture"):
        g._refuse_outside_capture("gemm", 0, 7)               # the legacy stream is never part of a capture
    state[7] = False
    g._refuse_outside_capture("gemm", 5, 7)
