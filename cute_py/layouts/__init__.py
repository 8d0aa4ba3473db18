"""The CuTe layout algebra in pure Python (``cute_py.layouts``); everything is re-exported at ``cute_py``."""

from . import dtypes, int_tuple
from .algebra import complement
from .inverse import left_inverse, right_inverse
from .domain import domain_distribute, max_common_layout, max_common_vector, nullspace
from .coalescing import filter, filter_zeros
from .common import common_coarsening, common_refinement, greatest_common_domain, layout_add, shape_mod
from .basis import ArithmeticTuple, E, ScaledBasis, make_basis_like
from .dtypes import DType, dtype
from .f2 import F2
from .f2_algebra import f2_layout
from .linear_layout import LinearLayout, from_linear_layout, to_linear_layout
from .errors import (
    CoordinateError, DivisibilityError, InjectivityError, LayoutError, ParseError, RankError, SizeLimitError,
    SymbolicError,
)
from .int_tuple import _, Underscore, safe_div
from .layout import Layout, LayoutLeft, LayoutRight, coprofile, crd2idx, is_layout
from .slicing import dice, dice_modes, slice_, slice_and_offset, slice_modes
from .mixed_bits import MixedBits, make_mixed_bits, to_mixed_bits
from .make import make_identity_layout, make_layout, make_layout_like, make_ordered_layout, tiler_to_layout
from .modes import (append, concat, domain_offset, flatten, iter_layout, squeeze, group, prepend, replace, select,
                    sort, take, unflatten, zip)
from .queries import crd2flat, crd2offset, is_affine, is_empty, is_stride_scalar
from .parse import parse
from .recast import downcast, max_alignment, recast_by, recast_layout, sizeof_bits, upcast
from .swizzle import ComposedLayout, Swizzle, get_nonswizzle_portion, get_swizzle_portion, make_swizzle
from .partition import inner_partition, local_partition, local_tile, outer_partition
from .tensor import IdentityEngine, Tensor
from .tensor_make import make_fragment_like, make_identity_tensor, make_tensor, make_tensor_like, recast
from .tensor_print import print_tensor
from .walk import coordinates, leaves, values
from .tiling import (
    blocked_product, evenly_divides, flat_divide, flat_product, layout_ceil_div, raked_product, tile_to_shape,
    tile_unzip, tiled_divide, tiled_product, zipped_product,
)
# The mode-addressed forms (op[i](A, ...), op(A, ..., mode=i)) of these; the modules above call the plain ones.
from .mode_ops import (
    ModeOp, coalesce, coalesce_z, composition, coshape, cosize, depth, get, logical_divide, logical_product, rank,
    shape, size, stride, zipped_divide,
)

__all__ = [
    "int_tuple", "_", "Underscore", "safe_div",
    "Layout", "LayoutLeft", "LayoutRight", "ComposedLayout", "Swizzle", "ScaledBasis",
    "ArithmeticTuple", "E", "make_basis_like", "F2", "f2_layout", "LinearLayout", "to_linear_layout", "from_linear_layout",
    "ModeOp", "MixedBits", "make_mixed_bits", "to_mixed_bits", "coalesce_z", "squeeze", "tiler_to_layout", "leaves", "coordinates", "values",
    "make_layout", "make_ordered_layout", "make_layout_like", "make_fragment_like",
    "make_identity_layout", "make_swizzle", "is_layout",
    "size", "cosize", "rank", "depth", "shape", "stride", "coshape", "coprofile", "crd2idx",
    "is_empty", "is_affine", "is_stride_scalar", "crd2flat", "crd2offset",
    "get", "take", "select", "group", "flatten", "unflatten", "append", "prepend", "replace", "zip",
    "concat", "sort", "iter_layout",
    "slice_", "slice_and_offset", "dice", "slice_modes", "dice_modes", "domain_offset",
    "coalesce", "filter", "filter_zeros", "composition", "complement", "right_inverse",
    "left_inverse", "nullspace", "max_common_layout", "max_common_vector", "domain_distribute",
    "common_refinement", "common_coarsening", "greatest_common_domain", "layout_add", "shape_mod",
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
    "logical_product", "zipped_product", "tiled_product", "flat_product",
    "blocked_product", "raked_product", "tile_to_shape", "tile_unzip", "layout_ceil_div", "evenly_divides",
    "upcast", "downcast", "recast_layout", "recast_by", "max_alignment", "sizeof_bits",
    "get_swizzle_portion", "get_nonswizzle_portion", "parse",
    "dtypes", "DType", "dtype",
    "Tensor", "IdentityEngine", "make_tensor", "make_identity_tensor", "make_tensor_like",
    "inner_partition", "outer_partition", "local_tile", "local_partition", "recast", "print_tensor",
    "LayoutError", "RankError", "DivisibilityError", "InjectivityError", "CoordinateError", "ParseError",
    "SymbolicError", "SizeLimitError",
]
