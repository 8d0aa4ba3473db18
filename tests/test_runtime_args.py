"""Kernel arguments and launch configuration without a GPU: pack_args, launch_dims, stream handles,
TMA encode arguments (encode_args / driver_args), tensor_map's checks, and the TMA hardware model
against cute_py's smem layouts for every tests/gpu case."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import sys

import numpy as np
import pytest
import sympy

from cute_py import Layout
from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
from cute_py import runtime as rt
from cute_py.runtime import tensormap as tmod
from cute_py.runtime.driver import _stream_handle

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gpu"))
import cases as gpu_cases  # noqa: E402


class FakeCAI:
    """A device array as torch/cupy present it, without a GPU."""

    def __init__(self, ptr, shape, typestr, strides=None, dtype=None):
        self.__cuda_array_interface__ = {"version": 3, "data": (ptr, False), "shape": shape, "strides": strides,
                                         "typestr": typestr}
        if dtype is not None:
            self.dtype = dtype


def _bindings():
    return pytest.importorskip("cuda.bindings.driver", reason="cuda-bindings not installed")


def _no_gpu():
    try:
        rt.device()
    except rt.NoDeviceError:
        return True
    except rt.CudaNotInstalledError:
        pytest.skip("cuda-bindings not installed")
    return False


# ---------------------------------------------------------------------------
# pack_args


def test_pack_args_numpy_scalars_keep_width_and_sign():
    args = (np.int8(-1), np.uint8(255), np.int16(-2), np.uint16(65535), np.int32(-3), np.uint32(2 ** 32 - 1),
            np.int64(-(2 ** 40)), np.uint64(2 ** 64 - 1), np.float32(1.5), np.float64(-2.25), np.bool_(True))
    values, types = rt.pack_args(args)
    assert types == (ctypes.c_int8, ctypes.c_uint8, ctypes.c_int16, ctypes.c_uint16, ctypes.c_int32,
                     ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64, ctypes.c_float, ctypes.c_double, ctypes.c_bool)
    assert values == (-1, 255, -2, 65535, -3, 2 ** 32 - 1, -(2 ** 40), 2 ** 64 - 1, 1.5, -2.25, True)
    # the bytes each parameter occupies are exactly the C type's
    image = [bytes(t(v)) for v, t in zip(values, types)]
    assert [len(b) for b in image] == [1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 1]
    assert image[0] == b"\xff" and image[7] == b"\xff" * 8 and image[8] == np.float32(1.5).tobytes()


def test_pack_args_half_travels_as_bits():
    values, types = rt.pack_args((np.float16(-2.0),))
    assert values == (0xC000,) and types == (ctypes.c_uint16,)


def test_pack_args_ctypes_and_pointers():
    values, types = rt.pack_args((ctypes.c_int32(-7), ctypes.c_uint64(3), ctypes.c_float(0.25), ctypes.c_double(1e300),
                                  ctypes.c_bool(False), ctypes.c_void_p(0xABC0), ctypes.c_void_p(None), True))
    assert values == (-7, 3, 0.25, 1e300, False, 0xABC0, 0, True)
    assert types == (ctypes.c_int32, ctypes.c_uint64, ctypes.c_float, ctypes.c_double, ctypes.c_bool,
                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_bool)


def test_pack_args_device_arrays_become_pointers():
    cai = FakeCAI(0x7F0000001000, (16, 16), "<f4")
    dev = rt.as_device_array(0x7F0000002000, shape=(8,), dtype="bf16")
    values, types = rt.pack_args((cai, dev))
    assert values == (0x7F0000001000, 0x7F0000002000) and types == (ctypes.c_void_p, ctypes.c_void_p)


def test_pack_args_cuda_binding_objects():
    d = _bindings()
    tmap = d.CUtensorMap()
    values, types = rt.pack_args((tmap, d.CUdeviceptr(0x5000)))
    assert values[0] is tmap and types[0] is None                 # by value, 128 bytes
    assert values[1] == 0x5000 and types[1] is ctypes.c_void_p
    wrapped = tmod.TensorMap(tmap, {}, None)
    assert rt.pack_args((wrapped,)) == ((tmap,), (None,))


@pytest.mark.parametrize("bad, match", [
    (3, "Python int"), (2.5, "Python float"), (np.zeros(3, np.float32), "not a usable device array"),
    ("x", "no kernel parameter form"), (ctypes.c_char(b"a"), "not supported"), (np.complex64(1), "not supported"),
    ((ctypes.c_int * 2)(), "not supported"),
])
def test_pack_args_refuses_ambiguous_or_unsupported(bad, match):
    with pytest.raises(rt.PackError, match=match):
        rt.pack_args((np.int32(0), bad))
    with pytest.raises(rt.PackError, match="argument 1"):
        rt.pack_args((np.int32(0), bad))


def test_pack_args_needs_a_sequence():
    with pytest.raises(rt.PackError):
        rt.pack_args(np.int32(1))
    assert rt.pack_args([]) == ((), ())


# ---------------------------------------------------------------------------
# launch configuration


def test_launch_dims_normalizes_and_checks():
    assert rt.launch_dims(132, 384) == ((132, 1, 1), (384, 1, 1), None)
    assert rt.launch_dims((8, 4, 2), (32, 4), cluster=(2, 2)) == ((8, 4, 2), (32, 4, 1), (2, 2, 1))
    for kwargs, match in [(dict(grid=3, block=128, cluster=2), "divisible"),
                          (dict(grid=(4, 3), block=128, cluster=(2, 2)), "dim 1"),
                          (dict(grid=16, block=128, cluster=16), "portable"),
                          (dict(grid=1, block=(32, 33)), "1056 threads"),
                          (dict(grid=1, block=(1, 1, 65)), "z 65"),
                          (dict(grid=(1, 70000), block=32), "exceeds"),
                          (dict(grid=0, block=32), "positive"),
                          (dict(grid=(1, 2, 3, 4), block=32), "1 to 3"),
                          (dict(grid=True, block=32), "grid"),
                          (dict(grid=1, block=32, smem=-1), "smem")]:
        with pytest.raises(rt.LaunchError, match=match):
            rt.launch_dims(**kwargs)


def test_launch_rejects_non_kernels_before_touching_the_driver():
    with pytest.raises(rt.LaunchError, match="expected a Kernel"):
        rt.launch("kernel", 1, 32)


def test_stream_handles():
    d = _bindings()

    class TorchLike:
        cuda_stream = 0x1234

    class CupyLike:
        ptr = 0x5678

    class CoreLike:
        def __cuda_stream__(self):
            return (0, 0x9ABC)

    assert int(_stream_handle(None)) == 0
    assert int(_stream_handle(7)) == 7
    assert int(_stream_handle(TorchLike())) == 0x1234
    assert int(_stream_handle(CupyLike())) == 0x5678
    assert int(_stream_handle(CoreLike())) == 0x9ABC
    s = d.CUstream(42)
    assert _stream_handle(s) is s
    with pytest.raises(rt.LaunchError):
        _stream_handle(object())


# ---------------------------------------------------------------------------
# TMA encode arguments


def _kmajor_params(m=256, k=128, tile=(64, 64), swizzle=128, t="bf16", multicast=1):
    return make_tma_params(Layout((m, k), (k, 1)), tile_smem(smem_atom("K", swizzle, t), *tile), t,
                           multicast=multicast)


def test_encode_args_exact_values():
    p = _kmajor_params()
    a = rt.encode_args(0x7F0000000000, p)
    assert list(a) == list(tmod.ARG_ORDER)
    assert a == {
        "tensorDataType": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "tensorRank": 2, "globalAddress": 0x7F0000000000,
        "globalDim": (128, 256), "globalStrides": (256,), "boxDim": (64, 64), "elementStrides": (1, 1),
        "interleave": "CU_TENSOR_MAP_INTERLEAVE_NONE", "swizzle": "CU_TENSOR_MAP_SWIZZLE_128B",
        "l2Promotion": "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "oobFill": "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE"}


@pytest.mark.parametrize("swizzle, name", [(0, "NONE"), (32, "32B"), (64, "64B"), (128, "128B")])
@pytest.mark.parametrize("t, code", [("u8", "UINT8"), ("e4m3", "UINT8"), ("f16", "FLOAT16"), ("f32", "FLOAT32")])
def test_encode_args_swizzle_and_types(swizzle, name, t, code):
    from cute_py.dtypes import dtype

    w = (swizzle or 16) * 8 // dtype(t).bits
    p = _kmajor_params(k=4 * w, tile=(64, w), swizzle=swizzle, t=t)
    a = rt.encode_args(0x10000, p)
    assert a["swizzle"] == f"CU_TENSOR_MAP_SWIZZLE_{name}"
    assert a["tensorDataType"] == f"CU_TENSOR_MAP_DATA_TYPE_{code}"
    assert a["boxDim"] == (w, 64) and a["globalStrides"] == (4 * w * dtype(t).bits // 8,)


def test_encode_args_multicast_box_is_the_slice():
    p = _kmajor_params(multicast=2)
    assert rt.encode_args(0x10000, p)["boxDim"] == (64, 32) and p.full_box_dim == (64, 64)


def test_driver_args_wrap_lists_and_enums():
    d = _bindings()
    args = rt.encode_args(0x7F0000000000, _kmajor_params())
    out = tmod.driver_args(args)
    assert len(out) == 11
    assert out[0] == d.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    assert out[1] == 2 and out[2] == 0x7F0000000000
    assert [type(x) for x in out[3] + out[4]] == [d.cuuint64_t] * 3
    assert [int(x) for x in out[3]] == [128, 256] and [int(x) for x in out[4]] == [256]
    assert [type(x) for x in out[5] + out[6]] == [d.cuuint32_t] * 4
    assert [int(x) for x in out[5]] == [64, 64] and [int(x) for x in out[6]] == [1, 1]
    assert out[7:] == (d.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                       d.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
                       d.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                       d.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)


def test_every_tma_data_type_has_a_driver_enum():
    d = _bindings()
    from cute_py.arch.sm90 import TMA_DATA_TYPES

    for name in set(TMA_DATA_TYPES.values()):
        assert hasattr(d.CUtensorMapDataType, f"CU_TENSOR_MAP_DATA_TYPE_{name}"), name


def test_encode_args_checks():
    p = _kmajor_params()
    with pytest.raises(rt.TensorMapError, match="not 16-byte aligned") as ei:
        rt.encode_args(0x7F0000000008, p)
    assert ei.value.problems == ("global address 0x7f0000000008 is not 16-byte aligned",)
    bad = dataclasses.replace(p, box_dim=(300, 64), global_strides=(200,), element_strides=(1, 9))
    with pytest.raises(rt.TensorMapError) as ei:
        rt.encode_args(0x10000, bad)
    text = "\n".join(ei.value.problems)
    assert "boxDim[0] = 300" in text and "globalStrides[1] = 200" in text and "elementStrides[1] = 9" in text
    assert "exceeds the 128B swizzle span" in text


def test_encode_args_takes_concrete_params_only():
    """Runtime takes ints: symbolic params are bound above it (TmaParams.bind), and a symbolic one is an error."""
    m, k = sympy.symbols("M K", integer=True, positive=True)
    p = make_tma_params(((m, k), (k, 1)), tile_smem(smem_atom("K", 128, "bf16"), 64, 64), "bf16")
    with pytest.raises(rt.TensorMapError, match=r"globalDim\[0\] = K is symbolic; .*bind") as ei:
        rt.encode_args(0x10000, p)
    assert len(ei.value.problems) == 1
    with pytest.raises(TypeError):
        rt.encode_args(0x10000, p, bindings={m: 512, k: 1024})          # no substitution in runtime any more
    a = rt.encode_args(0x10000, p.bind((512, 1024), (1024, 1)))
    assert a["globalDim"] == (1024, 512) and a["globalStrides"] == (2048,)
    assert all(type(x) is int for x in a["globalDim"] + a["globalStrides"])
    # integers of other libraries are concrete; a float is not an extent
    b = rt.encode_args(0x10000, dataclasses.replace(p, global_dim=(sympy.Integer(1024), np.int64(512)),
                                                    global_strides=(np.uint32(2048),)))
    assert b["globalDim"] == (1024, 512) and all(type(x) is int for x in b["globalDim"] + b["globalStrides"])
    with pytest.raises(rt.TensorMapError, match=r"globalDim\[1\] = 512.0 is not an integer \(float\)"):
        rt.encode_args(0x10000, dataclasses.replace(p, global_dim=(1024, 512.0), global_strides=(2048,)))


# ---------------------------------------------------------------------------
# tensor_map's checks happen before the driver is touched


def test_tensor_map_rejects_mismatched_arrays_without_a_gpu():
    p = _kmajor_params()                                        # (256, 128) bf16, K contiguous
    good = FakeCAI(0x7F0000000000, (256, 128), "<V2", dtype="torch.bfloat16")
    transposed = FakeCAI(0x7F0000000000, (128, 256), "<V2", dtype="torch.bfloat16")
    too_small = FakeCAI(0x7F0000000000, (256, 64), "<V2", strides=(256, 2), dtype="torch.bfloat16")
    wide = FakeCAI(0x7F0000000000, (256, 128), "<f4")
    misaligned = FakeCAI(0x7F0000000008, (256, 128), "<V2", dtype="torch.bfloat16")
    with pytest.raises(rt.TensorMapError, match="matches no dimension"):
        rt.tensor_map(transposed, p)
    with pytest.raises(rt.TensorMapError, match="matches no dimension"):
        rt.tensor_map(too_small, p)
    with pytest.raises(rt.TensorMapError, match="32-bit"):
        rt.tensor_map(wide, p)
    with pytest.raises(rt.TensorMapError, match="16-byte aligned"):
        rt.tensor_map(misaligned, p)
    if _no_gpu():
        with pytest.raises(rt.NoDeviceError):
            rt.tensor_map(good, p)
    as_u16 = FakeCAI(0x7F0000000000, (256, 128), "<u2")         # raw storage of the same width is fine
    assert tmod._check_array(rt.as_device_array(as_u16), rt.encode_args(0x7F0000000000, p), p) == []


def test_tensor_map_accepts_mn_major_arrays():
    gmem = Layout((256, 64), (1, 256))                            # (MN, K), MN contiguous
    p = make_tma_params(gmem, tile_smem(smem_atom("MN", 128, "bf16"), 64, 16, major="MN"), "bf16")
    arr = rt.as_device_array(0x7F0000000000, shape=(64, 256), dtype="bf16")  # numpy-style (K, MN)
    assert tmod._check_array(arr, rt.encode_args(arr.ptr, p), p) == []


# ---------------------------------------------------------------------------
# The TMA hardware model (CUDA docs: tiled box order + 16-byte-chunk XOR swizzle) agrees with cute_py's
# smem layouts for every case the GPU tests run, so the GPU tests check the hardware, not the test.


@pytest.mark.parametrize("major", gpu_cases.MAJORS)
@pytest.mark.parametrize("t", gpu_cases.TMA_DTYPES)
@pytest.mark.parametrize("swizzle", gpu_cases.SWIZZLES)
def test_tma_model_matches_cute_py_layouts(major, t, swizzle):
    case = gpu_cases.tma_case(major, t, swizzle)
    values = case.gmem_values(seed=swizzle)
    want = case.expected_image(values)
    assert np.array_equal(gpu_cases.emulate_tma(case, values), want)
    assert len(case.copies) == case.params.copies_per_tile
    assert case.params.bytes_per_copy * len(case.copies) == case.tile_bytes


@pytest.mark.parametrize("cluster", (2, 4))
def test_tma_multicast_model_matches(cluster):
    case = gpu_cases.multicast_case(cluster)
    values = case.gmem_values(seed=cluster)
    for c, copies in enumerate(case.extra["per_cluster"]):
        assert np.array_equal(gpu_cases.emulate_tma(case, values, copies), case.expected_image(values, (c, 1)))


def test_tma_model_detects_a_wrong_swizzle():
    case = gpu_cases.tma_case("K", "bf16", 128)
    values = case.gmem_values()
    wrong = dataclasses.replace(case.params, swizzle="64B")
    case.params = wrong
    assert not np.array_equal(gpu_cases.emulate_tma(case, values), case.expected_image(values))


@pytest.mark.parametrize("name", sorted(gpu_cases.HIER_CASES))
def test_tma_model_matches_hierarchical_gmem(name):
    """Issue 16: a hierarchical gmem layout whose parts are not contiguous, one TMA dim per part: the hardware
    model reading through the descriptor's dims and strides gives the tile of the logical (MN, K) matrix
    (numpy's transpose + reshape of the array) at cute_py's smem offsets."""
    case = gpu_cases.hier_tma_case(name)
    values = case.gmem_values(seed=7)
    a = gpu_cases.logical_matrix(case, values)
    (mn, k), (i, j) = case.tile, case.tile_coord
    want = np.zeros(mn * k, dtype=values.dtype)
    want[gpu_cases.smem_offsets(case.smem, mn, k).reshape(-1)] = a[i * mn:(i + 1) * mn, j * k:(j + 1) * k].reshape(-1)
    assert np.array_equal(gpu_cases.emulate_tma(case, values), want)
    assert np.array_equal(case.expected_image(values), want)
    assert case.params.bytes_per_copy * len(case.copies) == case.tile_bytes
    # every TMA dim is one dimension of the array (the tensor map's own check on the device array)
    arr = rt.as_device_array(0x7F0000000000, shape=case.array_shape, dtype="bf16")
    assert tmod._check_array(arr, rt.encode_args(arr.ptr, case.params), case.params) == []


def test_wgmma_case_tables():
    case = gpu_cases.wgmma_case(128, "K", 128)
    assert sorted(case.c_index.tolist()) == list(range(64 * 128))     # the C TV layout covers the tile once
    a, b, a_img, b_img = case.inputs()
    assert a_img.nbytes == case.a_bytes and b_img.nbytes == case.b_bytes
    assert case.desc_a.layout_type == "B128" and case.k_tile == 64


# ---------------------------------------------------------------------------
# Docstrings (their examples run in test_docstrings.py; the ones needing a GPU or NVRTC are +SKIP)


def test_every_public_runtime_name_is_documented_with_an_example():
    import inspect

    missing = [n for n in rt.__all__ if (inspect.isfunction(getattr(rt, n)) or inspect.isclass(getattr(rt, n)))
               and ">>>" not in (inspect.getdoc(getattr(rt, n)) or "")]
    assert not missing, missing
