"""MMA and copy atoms with their thread-value layouts, and their tilings (``cute_py.atoms``).

Pure Python: importing it needs no GPU. ``get(name)`` builds any atom from its
CuTe name; ``find(...)`` searches by architecture, element types and shape.

>>> from cute_py import atoms
>>> atom = atoms.get("SM90_64x128x16_F32BF16BF16_SS")
>>> atom.shape_mnk, atom.num_threads
((64, 128, 16), 128)
"""

from .copy import CopyAtom, CopyOp, cp_async, ldmatrix, stmatrix, tma, universal_copy
from .mma import MMAAtom, gmma, gmma_c_layout, sm70_mma, sm75_mma, sm80_mma, sm89_mma
from .registry import AtomError, all_copy_ops, all_mma_atoms, find, get, get_copy_op, make_copy_atom
from .tiled import (
    ThrCopy, ThrMMA, TiledCopy, TiledMMA, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B,
    make_tiled_copy_C, make_tiled_mma, partition_shape_A, partition_shape_B, partition_shape_C,
)

__all__ = [
    "MMAAtom", "CopyOp", "CopyAtom", "AtomError", "get", "get_copy_op", "find", "all_mma_atoms",
    "all_copy_ops", "sm70_mma", "sm75_mma", "sm80_mma", "sm89_mma", "gmma", "gmma_c_layout",
    "universal_copy", "ldmatrix", "stmatrix", "cp_async", "tma", "make_copy_atom",
    "TiledMMA", "ThrMMA", "make_tiled_mma", "TiledCopy", "ThrCopy", "make_tiled_copy",
    "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C",
    "partition_shape_A", "partition_shape_B", "partition_shape_C",
]
