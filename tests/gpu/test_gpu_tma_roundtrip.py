"""TMA round trip on the GPU: cute_py's smem layouts, swizzles and TMA parameters agree with the hardware.

For each swizzle mode (none/32/64/128 B), 8/16/32-bit types and both majors:
a tensor map built from ``make_tma_params`` loads one tile into shared memory,
the kernel copies shared memory out verbatim, and every element of the tile
must sit at the element offset ``smem_layout(c)`` that cute_py says.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import cases
from cute_py import Layout
from cute_py.arch.sm90 import make_tma_params
from cute_py.interop import layout_of
from cute_py import runtime as rt

pytestmark = pytest.mark.gpu


def describe_mismatch(case, values, got, want, tile_coord=None):
    """Human-readable account of the first misplaced elements (tile coordinate, smem offset, where it went)."""
    bad = np.flatnonzero(got != want)
    mn, k = case.tile
    offs = cases.smem_offsets(case.smem, mn, k)
    where = {int(o): (i, j) for (i, j), o in np.ndenumerate(offs)}
    lines = [f"{case.id}: {bad.size} of {want.size} smem elements differ from cute_py's layout {case.smem}"]
    for o in bad[:6]:
        c = where[int(o)]
        found = np.flatnonzero(got == want[o])
        lines.append(f"  tile coord {c} -> smem offset {o}: expected {want[o]!r}, got {got[o]!r}; the expected "
                     f"value is at smem offset(s) {found[:4].tolist()}")
    return "\n".join(lines)


@pytest.mark.parametrize("major", cases.MAJORS)
@pytest.mark.parametrize("t", cases.TMA_DTYPES)
@pytest.mark.parametrize("swizzle", cases.SWIZZLES)
def test_tma_roundtrip(major, t, swizzle, mem):
    case = cases.tma_case(major, t, swizzle)
    values = case.gmem_values(seed=zlib.crc32(case.id.encode()))
    arr = rt.as_device_array(mem.to_device(values), dtype=case.dtype)
    # the array's own layout is the gmem layout the params were derived from (modes (MN, K))
    lay = layout_of(arr)
    assert (lay if major == "K" else Layout(lay.shape[::-1], lay.stride[::-1])) == case.gmem
    if major == "K":
        assert make_tma_params(lay, case.smem, case.dtype) == case.params
    tmap = rt.tensor_map(arr, case.params)
    assert tmap.args["boxDim"] == case.params.box_dim
    kernel = rt.compile(case.source).kernel(case.kernel)
    coords = mem.to_device(np.array([c for _, cs in case.copies for c in cs], dtype=np.int32))
    out = mem.zeros(case.tile_bytes // 4)
    status = mem.zeros(1)
    rt.launch(kernel, grid=1, block=128, smem=case.dyn_smem, args=(tmap, coords, out, status))
    rt.synchronize()
    assert mem.to_host(status, np.uint32)[0] == 1, f"{case.id}: the mbarrier never completed (TMA did not land)"
    got = mem.to_host(out, np.uint32).view(values.dtype)
    want = case.expected_image(values)
    assert np.array_equal(got, want), describe_mismatch(case, values, got, want)


def test_roundtrip_detects_a_wrong_swizzle(mem):
    """Negative control: a descriptor whose swizzle disagrees with the smem layout must be caught."""
    import dataclasses

    case = cases.tma_case("K", "bf16", 128)
    values = case.gmem_values(seed=1)
    arr = rt.as_device_array(mem.to_device(values), dtype=case.dtype)
    tmap = rt.tensor_map(arr, dataclasses.replace(case.params, swizzle="NONE"))   # layout says 128B
    kernel = rt.compile(case.source).kernel(case.kernel)
    coords = mem.to_device(np.array([c for _, cs in case.copies for c in cs], dtype=np.int32))
    out, status = mem.zeros(case.tile_bytes // 4), mem.zeros(1)
    rt.launch(kernel, grid=1, block=128, smem=case.dyn_smem, args=(tmap, coords, out, status))
    rt.synchronize()
    got = mem.to_host(out, np.uint32).view(values.dtype)
    assert mem.to_host(status, np.uint32)[0] == 1
    assert not np.array_equal(got, case.expected_image(values))
    assert np.array_equal(np.sort(got), np.sort(case.expected_image(values)))   # same elements, other places
