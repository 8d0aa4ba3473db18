"""``cute-py swizzle``: the synthesized layout, its bank grid and its certificate; bad input is one line, exit 2."""

import pytest

import cute_py as cp
from test_cli_commands import fails, ok


def test_swizzle_prints_the_layout_the_grid_and_the_certificate():
    out = ok("swizzle", "--tile", "64x64", "--dtype", "bf16", "--write", "tma", "--read", "ldmatrix")
    r = cp.synthesize_smem_layout((64, 64), "bf16", ["tma"], ["ldmatrix"])
    grid = cp.viz.bank_map(r.layout, "bf16").to_text("bank")
    assert out == f"{r.head()}\n\n{grid}\n\n{r.certificate}\n"
    assert "  layout Sw<3,3,3> o 0 o (64,64):(64,1)" in out
    assert " 1 |  4  4  5  5  6  6  7  7  0  0" in out                  # row 1: chunks 0 and 1 swapped
    assert "read ldmatrix" in out and "TMA: yes (a row-major box)" in out and "wgmma:" not in out
    out = ok("swizzle", "--tile", "64x64", "--write", "tma", "--read", "wgmma")
    assert "wgmma: yes (K-major operand, descriptor 0x4000004000010000)" in out


def test_swizzle_repeats_accesses_and_takes_the_family(tmp_path):
    tv = "((2,2,2,2,2,2,8),8):((1,4,16,2,8,32,512),64)"
    args = ["swizzle", "--tile", "64x64", "--write", "cp.async", "--read", tv, "--read", "ldmatrix"]
    assert "2-way" in ok(*args) and "family='f2'" in ok(*args)
    target = tmp_path / "f2.txt"
    assert ok(*args, "--family", "f2", "-o", str(target)) == ""
    text = target.read_text()
    assert "an F2 layout: bank bits XOR line bits" in text and "every access conflict-free" in text


@pytest.mark.parametrize("args,expected", [
    (["--tile", "64x48", "--read", "tma"], "cute-py swizzle: error: --tile 64x48: the extents must be powers of two"),
    (["--tile", "6y4", "--read", "tma"], "cute-py swizzle: error: --tile must be ROWSxCOLS"),
    (["--tile", "64x64", "--dtype", "bf17", "--read", "tma"], "cute-py swizzle: error: unknown --dtype 'bf17'"),
    (["--tile", "64x64"], "cute-py swizzle: error: give at least one --write or --read"),
    (["--tile", "64x64", "--dtype", "b1", "--read", "tma"], "cute-py swizzle: error: --dtype b1: "
                                                            "synthesize_smem_layout: the element width must be"),
    (["--tile", "64x64", "--read", "ldsm"], "cute-py swizzle: error: --read ldsm: synthesize_smem_layout: unknown "
                                            "access"),
    (["--tile", "64x64", "--write", "vec128:mn", "--read", "tma"],
     "cute-py swizzle: error: --write/--read: synthesize_smem_layout: no layout keeps every vector whole"),
    (["--tile", "64x8", "--write", "ldmatrix"], "cute-py swizzle: error: --write ldmatrix: synthesize_smem_layout: "
                                                "the tile does not fit"),
    (["--tile", "64x64", "--read", "tma", "--family", "x"], "argument --family: invalid choice: 'x'"),
    (["--read", "tma"], "the following arguments are required: --tile"),
])
def test_swizzle_bad_input_is_one_line_naming_the_option(args, expected):
    assert expected in fails(2, "swizzle", *args)
