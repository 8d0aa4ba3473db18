"""The emitter's checks are explicit errors (EmitError), not asserts: a broken derivation is caught by name.

Each test breaks one fact the kernel would print (a plan field or the split of the C TV layout) and expects
the check that guards it to name the operation, the broken condition and where it first fails.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from cute_py import Layout, LayoutError, composition, Swizzle
from cute_py.emit import EmitError, GemmSpec, emit_gemm, gemm_plan
from cute_py.emit import gemm_sm90, plan as plan_module


def _with_epi(p, **changes):
    return dataclasses.replace(p, epi=dataclasses.replace(p.epi, **changes))


def test_emit_error_is_a_layout_error():
    assert issubclass(EmitError, LayoutError)


def test_wrong_staging_swizzle_is_caught():
    """The st.shared epilogue (f32 D): the printed thread offset uses EpiloguePlan.swizzle; one bit fewer than
    the staging layout's swizzle (Sw<2,2,3> for Sw<3,2,3>, in elements) gives offsets the layout does not have."""
    p = gemm_plan(GemmSpec(out_dtype="f32"))
    bits, base, shift = p.epi.swizzle
    with pytest.raises(EmitError, match=r"_staging_offsets: the emitted thread offset formula is the staging "
                                        r"layout's byte offset of the thread's value 0: fails at t=\d+"):
        gemm_sm90.epilogue(_with_epi(p, swizzle=(bits - 1, base, shift)))


def test_wrong_stmatrix_rows_are_caught():
    """The stmatrix epilogue (16-bit D): lanes must address the rows EpiloguePlan.stsm says; swapping its
    first two thread modes (row r and matrix m % 2) breaks the lane -> row rule at lane 1."""
    p = gemm_plan(GemmSpec())
    s = p.epi.stsm
    swapped = Layout(((2, 8, 2, 4), s.shape[1]), ((8, 1, 512, 16), s.stride[1]))
    with pytest.raises(EmitError, match=r"_stsm_offsets: lane 8 m \+ r of warp w addresses row .*fails at tw=1 "
                                        r"\(row = 8, column = 0\)"):
        gemm_sm90.epilogue(_with_epi(p, stsm=swapped))


def test_unswizzled_staging_for_the_stmatrix_formula_is_caught():
    p = gemm_plan(GemmSpec(dtype="f16"))
    plain = composition(Swizzle(0, 4, 3), p.epi.smem.inner)
    with pytest.raises(EmitError, match=r"_stsm_offsets: the emitted lane address formula"):
        gemm_sm90.epilogue(_with_epi(p, smem=plain))


def test_wrong_tv_split_is_caught(monkeypatch):
    """gemm_plan prints acc_m/acc_n from split_tv; a split that moves one term from m to n must fail the check
    against the C TV layout, at the first (value, thread) it changes."""
    real = plan_module.split_tv

    def broken(layout, rows):
        thread, value = real(layout, rows)
        e, dv, dm, dn = value[0]
        return thread, [(e, dv, 0, dm)] + value[1:]          # value bit 0 claims to move n instead of m

    monkeypatch.setattr(plan_module, "split_tv", broken)
    spec = GemmSpec(tile=(128, 64, 64), stages=3)            # not in gemm_plan's cache yet
    with pytest.raises(EmitError, match=r"gemm_plan: split_tv reproduces the C TV layout.*fails at v=1, t=0"):
        plan_module.gemm_plan.__wrapped__(spec)


def test_checks_survive_python_O():
    """python -O strips assert statements; the checks must still run (a broken swizzle still raises)."""
    code = ("import dataclasses\n"
            "from cute_py.emit import EmitError, GemmSpec, gemm_plan\n"
            "from cute_py.emit import gemm_sm90\n"
            "p = gemm_plan(GemmSpec(out_dtype='f32'))\n"
            "b, m, s = p.epi.swizzle\n"
            "q = dataclasses.replace(p, epi=dataclasses.replace(p.epi, swizzle=(b - 1, m, s)))\n"
            "try:\n    gemm_sm90.epilogue(q)\nexcept EmitError:\n    print('caught')\n")
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "caught", out.stderr


def test_every_shipped_spec_passes_its_checks():
    from cute_py.emit import example_specs
    for path in example_specs().values():
        assert "wgmma" in emit_gemm(GemmSpec.from_file(path))
