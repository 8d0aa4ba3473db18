"""The LinearLayout bridge checked against Triton itself (issue 33), where ``triton`` is installed
(``pip install cute-py[triton]``; skipped cleanly without it).

Triton's C++ conversions run on CPU: ``GluonOpBuilder.to_linear_layout`` gives a Gluon layout's bases, and
``gluon_ir.get_layout_view(layout, shape, True)`` prints Triton's evaluation at every input. Each case

1. proves the convention (docs/guide/f2.md, "Triton's conventions") by brute force: Triton's printed
   evaluation against cute_py's evaluation of the CuTe layout, at every input (about 1024 offsets spread
   over the larger shared tiles: an odd step, so every bit takes both values);
2. compares the bases both ways: ``to_linear_layout`` of the CuTe layout against Triton's bases, and
   ``from_linear_layout`` of Triton's bases, as a function, against the CuTe layout;
3. round-trips: ``to_linear_layout(from_linear_layout(ll)) == ll``.

The shared layouts are the CuTe layouts cute_py's own kernels use (``tile_smem`` of a canonical GMMA atom)
against ``NVMMASharedLayout``, and ``Sw<B,M,S> o`` a row- or column-major tile against
``SwizzledSharedLayout``, from 1 to 64 swizzle periods. The register layouts are CuTe's TV layouts of the
SM80 and SM90 MMA atoms (tiled over warps) and of a blocked thread/value arrangement.
"""

from __future__ import annotations

import re

import pytest

from cute_py import ComposedLayout, Layout, Swizzle, composition, f2_layout, from_linear_layout, right_inverse, \
    size, to_linear_layout
from cute_py.arch.sm90.smem import smem_atom, tile_smem
from cute_py.atoms.registry import get
from cute_py.atoms.tiled import make_tiled_mma
from cute_py.layouts.int_tuple import idx2crd

triton = pytest.importorskip("triton")
libtriton = pytest.importorskip("triton._C.libtriton")
ttgl = pytest.importorskip("triton.experimental.gluon.language")
if not (hasattr(libtriton.gluon_ir, "GluonOpBuilder") and hasattr(libtriton.gluon_ir, "get_layout_view")):
    pytest.skip(f"triton {triton.__version__} has no GluonOpBuilder.to_linear_layout / get_layout_view",
                allow_module_level=True)

gluon_ir, ir = libtriton.gluon_ir, libtriton.ir
DTYPES = (("bf16", 16), ("e4m3", 8), ("f32", 32))
PERIODS = (1, 2, 4, 8, 16, 32, 64)
SAMPLES = 1024                  # offsets of a shared tile checked by evaluation (all of them up to this size)


@pytest.fixture(scope="module")
def builder():
    ctx = ir.context()
    ir.load_dialects(ctx)
    yield gluon_ir.GluonOpBuilder(ctx)


def triton_ll(builder, layout, shape):
    return builder.to_linear_layout(layout._to_ir(builder), list(shape))


def lg(x: int) -> int:
    return x.bit_length() - 1


# ---------------------------------------------------------------------------
# shared layouts: offset -> (dim0, dim1); CuTe mode i of the tile is Triton's dim i


def _shared_view(layout, shape) -> dict:
    """Triton's evaluation: {offset: (dim0, dim1)}."""
    text = gluon_ir.get_layout_view(layout, list(shape), True)
    return {int(o): (int(a), int(b))
            for o, a, b in re.findall(r"Offset: (\d+) -> \(\s*(\d+),\s*(\d+)\)", text)}


def _check_shared(builder, gluon_layout, tile, shape):
    """Steps 1-3 of the module docstring for a shared layout and its CuTe tile."""
    n = size(tile)
    step = max(n // SAMPLES, 1) | 1
    view = _shared_view(gluon_layout, shape)
    assert len(view) == n
    for x in range(0, n, step):                                   # 1. the convention, by brute force
        assert tile(view[x]) == x, (x, view[x])
    bases = triton_ll(builder, gluon_layout, shape).offset_bases
    ll = to_linear_layout(right_inverse(f2_layout(tile)), ("offset",), shape)   # 2. cute_py -> Triton
    assert ll.as_dict()["bases"]["offset"] == bases
    assert to_linear_layout(right_inverse(tile), ("offset",), shape) == ll   # the composed layout's own inverse
    back = from_linear_layout({"bases": {"offset": bases}, "out_dims": {"dim0": shape[0], "dim1": shape[1]}})
    for x in range(0, n, step):                                   # 2. Triton -> cute_py, as a function
        assert tile(idx2crd(back(x), shape)) == x
    assert to_linear_layout(back, ("offset",), shape) == ll       # 3. round trip
    cut = to_linear_layout(tile, ("dim0", "dim1"), (n,))          # the other direction: coordinate -> offset
    assert all(view[cut(**{f"dim{d}": 1 << j})[0]] == tuple((1 << j) * (e == d) for e in range(2))
               for d in range(2) for j in range(lg(shape[d])))


def _nvmma_cases():
    for major in ("K", "MN"):
        for sw in (32, 64, 128):
            for dt, bits in DTYPES:
                w = sw * 8 // bits                             # the swizzle row in elements
                for p in PERIODS:
                    for r, c in {(p, 1), (max(p // 4, 1), min(p, 4))}:   # r * 8 rows, c rows of w along the row
                        mn, k = (8 * r, c * w) if major == "K" else (c * w, 8 * r)
                        yield pytest.param(major, sw, dt, bits, mn, k, id=f"{major}-{sw}B-{dt}-{mn}x{k}")


@pytest.mark.parametrize("major, sw, dt, bits, mn, k", list(_nvmma_cases()))
def test_nvmma_shared(builder, major, sw, dt, bits, mn, k):
    """NVMMASharedLayout(sw, bits, transposed=MN-major) over [MN, K] is tile_smem(smem_atom(major, sw, dt))."""
    tile = tile_smem(smem_atom(major, sw, dt), mn, k, major=major)
    _check_shared(builder, ttgl.NVMMASharedLayout(sw, bits, 2, major == "MN"), tile, (mn, k))


def _swizzled_cases():
    for vec, per_phase, max_phase in ((8, 1, 8), (4, 2, 4), (2, 4, 2), (16, 1, 4), (8, 2, 8), (1, 2, 4)):
        for order in ((1, 0), (0, 1)):
            for contig in (64, 128):
                if vec * max_phase > contig:
                    continue
                period = contig * per_phase * max_phase
                if period > 1024:                              # Triton prints every offset: keep tiles <= 64K
                    continue
                for p in PERIODS:
                    other = period * p // contig
                    shape = (other, contig) if order == (1, 0) else (contig, other)
                    yield pytest.param(vec, per_phase, max_phase, order, shape,
                                       id=f"v{vec}p{per_phase}m{max_phase}-o{order[0]}{order[1]}-{shape[0]}x{shape[1]}")


@pytest.mark.parametrize("vec, per_phase, max_phase, order, shape", list(_swizzled_cases()))
def test_swizzled_shared(builder, vec, per_phase, max_phase, order, shape):
    """SwizzledSharedLayout(vec, per_phase, max_phase, order) is Sw<log2 max_phase, log2 vec, log2(row *
    per_phase / vec)> o the row-major (order [1,0]) or column-major (order [0,1]) tile."""
    rows, cols = shape
    inner = Layout(shape, (cols, 1)) if order == (1, 0) else Layout(shape, (1, rows))
    contig = shape[order[0]]
    tile = ComposedLayout(Swizzle(lg(max_phase), lg(vec), lg(contig * per_phase // vec)), 0, inner)
    _check_shared(builder, ttgl.SwizzledSharedLayout(vec, per_phase, max_phase, list(order)), tile, shape)


# ---------------------------------------------------------------------------
# register layouts: (register, lane, warp) -> (dim0, dim1); register is CuTe's value, lane the thread's low
# 5 bits, warp the rest


def rlw(tv: Layout) -> Layout:
    """A TV layout (thread, value) as (register, lane, warp): ``tv o (V, 32, T/32):(T, 1, 32)``."""
    t, v = size(tv.shape[0]), size(tv.shape[1])
    return composition(tv, Layout((v, 32, t // 32), (t, 1, 32)))


def _register_view(layout, shape) -> dict:
    """Triton's evaluation: {(register, lane, warp): (dim0, dim1)}."""
    out = {}
    for warp, block in enumerate(gluon_ir.get_layout_view(layout, list(shape), True).split("Warp")[1:]):
        for reg, line in enumerate(block.splitlines()[1:]):
            for lane, (a, b) in enumerate(re.findall(r"\(\s*(\d+),\s*(\d+)\)", line)):
                out[reg, lane, warp] = (int(a), int(b))
    return out


def _check_registers(builder, gluon_layout, tv, shape, swap=False):
    """Steps 1-3 for a register layout: ``tv`` maps (thread, value) to a colexicographic index of ``shape``
    (CuTe's order); ``swap``: Triton's tile is CuTe's transposed (the MMA B operand, [K, N] against CuTe's
    (N, K))."""
    names = ("register", "lane", "warp")
    L = rlw(tv)
    tshape = shape[::-1] if swap else shape
    flip = (lambda c: tuple(c)[::-1]) if swap else tuple
    view = _register_view(gluon_layout, tshape)
    assert len(view) == size(L)
    for (reg, lane, warp), crd in view.items():                   # 1. the convention, by brute force
        assert flip(idx2crd(L(reg, lane, warp), shape)) == crd, ((reg, lane, warp), crd)
    tri = triton_ll(builder, gluon_layout, tshape)
    tri_bases = {"register": tri.reg_bases, "lane": tri.lane_bases, "warp": tri.warp_bases}
    ll = to_linear_layout(L, names, shape)                        # 2. cute_py -> Triton
    assert {n: [flip(v) for v in b] for n, b in ll.as_dict()["bases"].items()} == \
        {n: [tuple(v) for v in b] for n, b in tri_bases.items()}
    back = from_linear_layout({"bases": {n: [flip(v) for v in b] for n, b in tri_bases.items()},
                               "out_dims": {"dim0": shape[0], "dim1": shape[1]}})
    assert all(back(c) == L(c) for c in range(size(L)))          # 2. Triton -> cute_py, as a function
    assert to_linear_layout(back, names, shape) == ll             # 3. round trip


@pytest.mark.parametrize("warps", [(1, 1), (4, 1), (2, 2), (1, 4)], ids=str)
@pytest.mark.parametrize("operand", ["C", "A", "B"])
def test_mma_v2(builder, warps, operand):
    """NVMMADistributedLayout v2 [16, 8] (and its dot operands, k_width 2) is the SM80 16x8x16 bf16 atom tiled
    over ``warps`` (CuTe's TiledMMA, warps colexicographic over (M, N)); B is CuTe's (N, K), Triton's [K, N]."""
    mma = make_tiled_mma(get("SM80_16x8x16_F32BF16BF16F32_TN"), Layout((*warps, 1), (warps[1], 1, 1)))
    parent = ttgl.NVMMADistributedLayout([2, 0], list(warps), [16, 8])
    m, n, k = 16 * warps[0], 8 * warps[1], 16
    if operand == "C":
        _check_registers(builder, parent, mma.get_layoutC_TV(), (m, n))
    elif operand == "A":
        _check_registers(builder, ttgl.DotOperandLayout(0, parent, 2), mma.get_layoutA_TV(), (m, k))
    else:
        _check_registers(builder, ttgl.DotOperandLayout(1, parent, 2), mma.get_layoutB_TV(), (n, k), swap=True)


@pytest.mark.parametrize("n", [8, 16, 32, 64, 128, 256])
@pytest.mark.parametrize("operand", ["C", "A"])
def test_wgmma(builder, n, operand):
    """NVMMADistributedLayout v3 [16, N, 16] over 4 warps is the SM90 64xNx16 accumulator; its dot operand A
    (k_width 2) is the RS atom's A in registers."""
    atom = get(f"SM90_64x{n}x16_F32BF16BF16_RS")
    parent = ttgl.NVMMADistributedLayout([3, 0], [4, 1], [16, n, 16])
    if operand == "C":
        _check_registers(builder, parent, atom.c_layout, (64, n))
    else:
        _check_registers(builder, ttgl.DotOperandLayout(0, parent, 2), atom.a_layout, (64, 16))


def blocked_tv(spt, tpw, wpc, order) -> Layout:
    """The TV layout of a blocked arrangement over its tile ``spt * tpw * wpc`` (per dim): each of value,
    lane and warp enumerates its per-dim grid fastest along ``order[0]``, and dim ``d``'s coordinate is
    ``value_d + spt_d * (lane_d + tpw_d * warp_d)``."""
    tile = [s * t * w for s, t, w in zip(spt, tpw, wpc)]
    unit = (1, tile[0])                                          # colexicographic index of the tile

    def grid(extents, scale):
        return Layout(tuple(extents[d] for d in order), tuple(scale[d] * unit[d] for d in order))

    val = grid(spt, (1, 1))
    lane = grid(tpw, spt)
    warp = grid(wpc, [s * t for s, t in zip(spt, tpw)])
    return Layout((tuple(lane.shape) + tuple(warp.shape), val.shape),
                  (tuple(lane.stride) + tuple(warp.stride), val.stride))


@pytest.mark.parametrize("spt, tpw, wpc", [([1, 4], [4, 8], [2, 2]), ([2, 2], [8, 4], [4, 1]), ([4, 1], [1, 32], [1, 4]),
                                           ([1, 1], [32, 1], [1, 2]), ([8, 2], [2, 16], [2, 4])], ids=str)
@pytest.mark.parametrize("order", [(1, 0), (0, 1)], ids=str)
def test_blocked(builder, spt, tpw, wpc, order):
    tv = blocked_tv(spt, tpw, wpc, order)
    shape = tuple(s * t * w for s, t, w in zip(spt, tpw, wpc))
    _check_registers(builder, ttgl.BlockedLayout(spt, tpw, wpc, list(order)), tv, shape)
