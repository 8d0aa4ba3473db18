"""The emitter's checks are explicit errors (EmitError), not asserts: a broken derivation is caught by name.

Each test breaks one fact the kernel would print (a formula or a layout the plan derives it from) and expects
the check that guards it to name the operation, the broken condition and where it first fails.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cute_py import Layout, LayoutError
from cute_py.emit import EmitError, GemmSpec, gemm_plan
from cute_py.emit import epilogue_plan as epi_module, plan as plan_module


def _replan_epilogue(spec):
    """The TMA-store epilogue's facts derived again (not from the cache), for the tile's C TV layout."""
    p = gemm_plan(spec)
    return epi_module.epilogue_plan.__wrapped__(spec, p.c_tv, p.tv_rows)


def test_emit_error_is_a_layout_error():
    assert issubclass(EmitError, LayoutError)


def test_the_unbroken_derivations_pass():
    for spec in (GemmSpec(), GemmSpec(out_dtype="f32"), GemmSpec(schedule="pingpong"), GemmSpec(tile=(64, 64, 64),
                                                                                                  consumers=1)):
        assert _replan_epilogue(spec).stage_xor == gemm_plan(spec).epi.stage_xor


def test_wrong_staging_swizzle_is_caught(monkeypatch):
    """The st.shared epilogue (f32 D) prints a thread's offset as staging_swizzle of its element index; a formula
    with one swizzle bit fewer than the staging layout's (Sw<2,2,3> for Sw<3,2,3>, in elements) gives offsets the
    layout does not have."""
    real = epi_module.staging_swizzle

    def one_bit_short(e):
        bits, base, shift = e.swizzle
        return real(type("E", (), {"swizzle": (bits - 1, base, shift), "elem_bytes": e.elem_bytes})())

    monkeypatch.setattr(epi_module, "staging_swizzle", one_bit_short)
    with pytest.raises(EmitError, match=r"epilogue_plan: the emitted thread offset formula is the staging "
                                        r"layout's byte offset of the thread's value 0: fails at t=\d+"):
        _replan_epilogue(GemmSpec(out_dtype="f32"))


def test_wrong_stmatrix_rows_are_caught(monkeypatch):
    """The stmatrix epilogue (16-bit D): lanes must address the rows stmatrix_rows says; swapping its first two
    thread modes (row r and matrix m % 2) breaks the lane -> row rule at lane 1."""
    def swapped(rows, cols):
        return Layout(((2, 8, 2, 4), (8, cols // 16)), ((8, 1, 8 * rows, 16), (rows, 16 * rows)))

    monkeypatch.setattr(epi_module, "stmatrix_rows", swapped)
    with pytest.raises(EmitError, match=r"epilogue_plan: lane 8 m \+ r of warp w addresses row .*fails at tw=1 "
                                        r"\(row = 8, column = 0\)"):
        _replan_epilogue(GemmSpec())


def test_wrong_stmatrix_lane_formula_is_caught(monkeypatch):
    """The printed lane address (stsm_lane_index) must be the staging offset of the row stmatrix_rows gives
    the lane; a formula that forgets the warp's 16-row step fails at lane 32 (warp 1)."""
    def no_warp_step(cols):
        def py(tw):
            lane = tw % 32
            return (lane % 8 + 8 * ((lane // 8) % 2)) * cols + 8 * (lane // 16)
        return py, "(wrong row)", "(wrong column)"

    monkeypatch.setattr(epi_module, "stsm_lane_index", no_warp_step)
    with pytest.raises(EmitError, match=r"epilogue_plan: lane 8 m \+ r of warp w .*fails at tw=32"):
        _replan_epilogue(GemmSpec(dtype="f16"))


def test_wrong_tv_split_is_caught(monkeypatch):
    """gemm_plan prints acc_m/acc_n from split_tv; a split that moves one term from m to n must fail the check
    against the C TV layout, at the first (value, thread) it changes."""
    real = plan_module.split_tv

    def broken(layout, rows):
        thread, value = real(layout, rows)
        e, dv, dm, dn = value[0]
        return thread, [(e, dv, 0, dm)] + value[1:]          # value bit 0 claims to move n instead of m

    monkeypatch.setattr(plan_module, "split_tv", broken)
    spec = GemmSpec(tile=(128, 64, 64), stages=3)
    with pytest.raises(EmitError, match=r"gemm_plan: split_tv reproduces the C TV layout.*fails at v=1, t=0"):
        plan_module._gemm_plan.__wrapped__(spec)


def test_checks_survive_python_O():
    """python -O strips assert statements; the checks must still run (a broken formula still raises)."""
    code = ("from cute_py.emit import EmitError, GemmSpec, gemm_plan\n"
            "from cute_py.emit import epilogue_plan as m\n"
            "spec = GemmSpec(out_dtype='f32')\n"
            "p = gemm_plan(spec)\n"
            "m.thread_index = lambda cols: ((lambda rt, ct: rt * cols + ct + 1), '')\n"
            "try:\n    m.epilogue_plan.__wrapped__(spec, p.c_tv, p.tv_rows)\n"
            "except EmitError:\n    print('caught')\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "caught", out.stderr
