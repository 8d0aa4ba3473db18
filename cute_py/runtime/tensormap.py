"""TMA descriptors: ``cuTensorMapEncodeTiled`` from a device array and cute_py's :class:`~cute_py.arch.sm90.TmaParams`.

The parameters come from the layouts (:func:`cute_py.arch.sm90.make_tma_params`:
box, global dims and strides, swizzle); this module checks them once more
against the actual address and array, builds the exact argument list
(:func:`encode_args`, pure and testable without a GPU) and calls the driver
(:func:`tensor_map`). The result goes to a kernel by value, into a
``const __grid_constant__`` 128-byte, 64-byte-aligned parameter.

Runtime takes ints and buffers, not Layouts: the parameters must be
concrete (plain integers). Symbolic extents (sympy) are substituted before
they get here, by the plan's bind step (``TmaParams.bind``); a symbolic
value that arrives is reported as a :class:`~cute_py.runtime.errors.TensorMapError`.

>>> from cute_py import Layout
>>> from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
>>> p = make_tma_params(Layout((256, 128), (128, 1)), tile_smem(smem_atom("K", 128, "bf16"), 64, 64), "bf16")
>>> args = encode_args(0x7f0000000000, p)
>>> args["tensorDataType"], args["globalDim"], args["globalStrides"], args["boxDim"], args["swizzle"]
('CU_TENSOR_MAP_DATA_TYPE_BFLOAT16', (128, 256), (256,), (64, 64), 'CU_TENSOR_MAP_SWIZZLE_128B')
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from .arrays import DeviceArray, as_device_array
from .errors import TensorMapError

__all__ = ["TensorMap", "tensor_map", "encode_args", "check_params", "driver_args"]

_SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
_L2 = {"NONE": "NONE", "L2_64B": "L2_64B", "L2_128B": "L2_128B", "L2_256B": "L2_256B",
       "64B": "L2_64B", "128B": "L2_128B", "256B": "L2_256B"}
_OOB = {"NONE": "NONE", "NAN_REQUEST_ZERO_FMA": "NAN_REQUEST_ZERO_FMA"}
ARG_ORDER = ("tensorDataType", "tensorRank", "globalAddress", "globalDim", "globalStrides", "boxDim",
             "elementStrides", "interleave", "swizzle", "l2Promotion", "oobFill")
"""The parameter names of ``cuTensorMapEncodeTiled``, in call order (the keys of :func:`encode_args`)."""


def _concrete(value, what: str) -> int:
    """``value`` as a Python int: anything with ``__index__`` (int, numpy and sympy integers); else the error."""
    try:
        return int(operator.index(value))
    except TypeError:
        kind = "symbolic" if hasattr(value, "free_symbols") else f"not an integer ({type(value).__name__})"
        raise TensorMapError([f"{what} = {value} is {kind}; tensor maps take concrete parameters: bind the "
                              f"extents first (TmaParams.bind / GemmPlan.bind) or build the params from the "
                              f"array's own layout (make_tma_params(cute_py.interop.layout_of(array), ...))"]
                             ) from None


def check_params(tma_params, address: int) -> list:
    """Every TMA constraint the concrete parameters and ``address`` violate (empty: encodable).

    The checks are those of :func:`cute_py.arch.sm90.validate_tma`, on the
    final values: 16-byte aligned address; rank 1..5; each globalDim in
    [1, 2^32]; globalStrides multiples of 16 bytes and < 2^40; boxDim in
    [1, 256]; elementStrides in [1, 8]; the inner box a multiple of 16 bytes
    and within the swizzle span; a known data type, swizzle, L2 promotion
    and OOB fill; interleave NONE. A symbolic (or otherwise non-integer)
    global dim or stride raises :class:`~cute_py.runtime.errors.TensorMapError`
    at once: there is nothing to check until it is bound.

    >>> from cute_py import Layout
    >>> from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
    >>> p = make_tma_params(Layout((256, 128), (128, 1)), tile_smem(smem_atom("K", 128, "bf16"), 64, 64), "bf16")
    >>> check_params(p, 0x1008)
    ['global address 0x1008 is not 16-byte aligned']
    """
    problems = []
    if address % 16:
        problems.append(f"global address {address:#x} is not 16-byte aligned")
    rank = tma_params.rank
    if not 1 <= rank <= 5:
        problems.append(f"rank {rank} not in [1, 5]")
    dims = [_concrete(d, f"globalDim[{i}]") for i, d in enumerate(tma_params.global_dim)]
    strides = [_concrete(s, f"globalStrides[{i + 1}]") for i, s in enumerate(tma_params.global_strides)]
    for name, seq, want in (("globalDim", dims, rank), ("globalStrides", strides, rank - 1),
                            ("boxDim", tma_params.box_dim, rank), ("elementStrides", tma_params.element_strides, rank)):
        if len(seq) != want:
            problems.append(f"{name} has {len(seq)} entries for rank {rank} (needs {want})")
    for i, d in enumerate(dims):
        if not 1 <= d <= 2 ** 32:
            problems.append(f"globalDim[{i}] = {d} not in [1, 2^32]")
    for i, s in enumerate(strides, start=1):
        if s % 16 or not 0 < s < 2 ** 40:
            problems.append(f"globalStrides[{i}] = {s} bytes: must be a positive multiple of 16 and < 2^40")
    for i, b in enumerate(tma_params.box_dim):
        if not 1 <= b <= 256:
            problems.append(f"boxDim[{i}] = {b} not in [1, 256]")
    for i, e in enumerate(tma_params.element_strides):
        if not 1 <= e <= 8:
            problems.append(f"elementStrides[{i}] = {e} not in [1, 8]")
    nbytes = tma_params.dtype.bits // 8
    inner = tma_params.box_dim[0] * nbytes if tma_params.box_dim else 0
    if inner % 16:
        problems.append(f"inner box {tma_params.box_dim[0]} x {nbytes} B = {inner} B is not a multiple of 16 B")
    span = _SPAN.get(tma_params.swizzle)
    if span is None:
        problems.append(f"swizzle {tma_params.swizzle!r} is not one of NONE, 32B, 64B, 128B")
    elif span and inner > span:
        problems.append(f"inner box {inner} B exceeds the {tma_params.swizzle} swizzle span ({span} B)")
    if tma_params.interleave != "NONE":
        problems.append(f"interleave {tma_params.interleave!r}: only NONE is supported")
    if tma_params.l2_promotion not in _L2:
        problems.append(f"L2 promotion {tma_params.l2_promotion!r} is not one of NONE, L2_64B, L2_128B, L2_256B")
    if tma_params.oob_fill not in _OOB:
        problems.append(f"OOB fill {tma_params.oob_fill!r} is not NONE or NAN_REQUEST_ZERO_FMA")
    if not tma_params.data_type or tma_params.data_type == "?":
        problems.append(f"no TMA data type for {tma_params.dtype.name}")
    return problems


def encode_args(address: int, tma_params) -> dict:
    """The exact ``cuTensorMapEncodeTiled`` arguments, by parameter name in call order (pure; no GPU).

    Enums are given by their ``cuda.bindings.driver`` member names; dims,
    strides and boxes as plain int tuples, innermost dimension first
    (globalStrides in bytes, rank - 1 entries). The parameters must be
    concrete (bound). Raises :class:`~cute_py.runtime.errors.TensorMapError`
    listing every violated constraint (see :func:`check_params`).

    >>> from cute_py import Layout
    >>> from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
    >>> p = make_tma_params(Layout((64, 512), (1, 64)), tile_smem(smem_atom("MN", 0, "f32"), 64, 16, major="MN"), "f32")
    >>> a = encode_args(0x7f0000000000, p)
    >>> a["globalDim"], a["globalStrides"], a["boxDim"], a["swizzle"], a["l2Promotion"]
    ((64, 512), (256,), (4, 16), 'CU_TENSOR_MAP_SWIZZLE_NONE', 'CU_TENSOR_MAP_L2_PROMOTION_L2_128B')
    """
    address = int(address)
    problems = check_params(tma_params, address)
    if problems:
        raise TensorMapError(problems)
    return {
        "tensorDataType": f"CU_TENSOR_MAP_DATA_TYPE_{tma_params.data_type}",
        "tensorRank": int(tma_params.rank),
        "globalAddress": address,
        "globalDim": tuple(_concrete(d, "globalDim") for d in tma_params.global_dim),
        "globalStrides": tuple(_concrete(s, "globalStrides") for s in tma_params.global_strides),
        "boxDim": tuple(int(b) for b in tma_params.box_dim),
        "elementStrides": tuple(int(e) for e in tma_params.element_strides),
        "interleave": f"CU_TENSOR_MAP_INTERLEAVE_{tma_params.interleave}",
        "swizzle": f"CU_TENSOR_MAP_SWIZZLE_{tma_params.swizzle}",
        "l2Promotion": f"CU_TENSOR_MAP_L2_PROMOTION_{_L2[tma_params.l2_promotion]}",
        "oobFill": f"CU_TENSOR_MAP_FLOAT_OOB_FILL_{_OOB[tma_params.oob_fill]}",
    }


def driver_args(args: dict) -> tuple:
    """The positional arguments for ``cuda.bindings.driver.cuTensorMapEncodeTiled`` (needs cuda-bindings, no GPU).

    Enum names become driver enum members; dims and strides become lists
    of ``cuuint64_t``, box and element strides lists of ``cuuint32_t``
    (plain ints raise TypeError in the binding).

    >>> from cute_py import Layout
    >>> from cute_py.arch.sm90 import make_tma_params, smem_atom, tile_smem
    >>> p = make_tma_params(Layout((256, 128), (128, 1)), tile_smem(smem_atom("K", 128, "bf16"), 64, 64), "bf16")
    >>> driver_args(encode_args(0x7f0000000000, p))[3]  # doctest: +SKIP
    [<cuuint64_t 128>, <cuuint64_t 256>]
    """
    from .driver import _driver

    d = _driver()
    enum = {"tensorDataType": d.CUtensorMapDataType, "interleave": d.CUtensorMapInterleave,
            "swizzle": d.CUtensorMapSwizzle, "l2Promotion": d.CUtensorMapL2promotion,
            "oobFill": d.CUtensorMapFloatOOBfill}
    out = []
    for name in ARG_ORDER:
        v = args[name]
        if name in enum:
            v = getattr(enum[name], v)
        elif name in ("globalDim", "globalStrides"):
            v = [d.cuuint64_t(x) for x in v]
        elif name in ("boxDim", "elementStrides"):
            v = [d.cuuint32_t(x) for x in v]
        out.append(v)
    return tuple(out)


@dataclass(frozen=True)
class TensorMap:
    """An encoded TMA descriptor: ``handle`` (``CUtensorMap``, passed to kernels by value), the ``args``
    it was encoded from (:func:`encode_args`), the ``params`` and the ``array`` it describes (kept alive).

    >>> tm = tensor_map(torch_tensor, params)  # doctest: +SKIP
    >>> launch(kernel, grid, block, args=(tm, out))  # doctest: +SKIP
    """

    handle: object
    args: dict
    params: object
    array: object = field(default=None, repr=False, compare=False)

    @property
    def words(self) -> tuple:
        """The descriptor's 16 64-bit words (for debugging and comparisons)."""
        return tuple(int(w) for w in self.handle.opaque)


def _check_array(a: DeviceArray, args: dict, tma_params) -> list:
    """Problems between an array and the encoded arguments: dtype width and the TMA footprint."""
    problems = []
    pt = tma_params.dtype
    if a.dtype.bits != pt.bits:
        problems.append(f"the array holds {a.dtype.name} ({a.dtype.bits}-bit) but the TMA params are for "
                        f"{pt.name} ({pt.bits}-bit)")
        return problems
    raw = ("uint", "bits")
    if a.dtype != pt and a.dtype.kind not in raw and pt.kind not in raw and pt.bits != 8:
        problems.append(f"the array holds {a.dtype.name} but the TMA params are for {pt.name}")
    item = a.itemsize
    used = set()
    strides = (item,) + args["globalStrides"]
    for i, (dim, stride) in enumerate(zip(args["globalDim"], strides)):
        if dim == 1:
            continue
        match = [j for j, (n, s) in enumerate(zip(a.shape, a.byte_strides))
                 if j not in used and s == stride and n >= dim]
        if not match:
            problems.append(f"TMA dim {i} (extent {dim}, byte stride {stride}) matches no dimension of the array "
                            f"(shape {a.shape}, byte strides {a.byte_strides}); were the params built from "
                            f"another layout (transposed or another size)?")
        else:
            used.add(match[0])
    return problems


def tensor_map(array_or_pointer, tma_params) -> TensorMap:
    """Encode a TMA descriptor for ``array_or_pointer`` with ``tma_params`` (needs a driver and a GPU).

    ``array_or_pointer`` is anything :func:`~cute_py.runtime.as_device_array`
    accepts, or an integer device address (then only the parameters are
    checked). ``tma_params`` comes from
    :func:`cute_py.arch.sm90.make_tma_params`, with concrete extents
    (bound; see the module docstring). For an array, its element width must match the params and
    every TMA dimension must be one of its dimensions (same byte stride,
    extent at least the TMA's): a transposed or mismatched array is caught
    here rather than as garbage in shared memory.

    Raises :class:`~cute_py.runtime.errors.TensorMapError` listing every
    problem; :class:`~cute_py.runtime.errors.NoDeviceError` without a GPU.

    >>> from cute_py.interop import layout_of  # doctest: +SKIP
    >>> p = make_tma_params(layout_of(a), tile_smem(smem_atom("K", 128, "bf16"), 128, 64), "bf16")  # doctest: +SKIP
    >>> tensor_map(a, p).args["boxDim"]  # doctest: +SKIP
    (64, 128)
    """
    from .driver import _check, _driver, device

    if isinstance(array_or_pointer, int) and not isinstance(array_or_pointer, bool):
        arr, address = None, array_or_pointer
    else:
        arr = as_device_array(array_or_pointer)
        address = arr.ptr
    args = encode_args(address, tma_params)
    if arr is not None:
        problems = _check_array(arr, args, tma_params)
        if problems:
            raise TensorMapError(problems)
    device()
    d = _driver()
    res = d.cuTensorMapEncodeTiled(*driver_args(args))
    handle = _check(res, "cuTensorMapEncodeTiled",
                    hint=f"arguments: {args}")
    return TensorMap(handle, args, tma_params, arr if arr is not None else array_or_pointer)
