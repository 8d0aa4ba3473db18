"""TiledMMA and TiledCopy: atoms repeated over threads, and the partitions they induce.

Semantics are CuTe's ``mma_atom.hpp`` and ``copy_atom.hpp``: every partition
is a layout computed with the algebra (divides, compositions, inverses) from
the atom's TV layouts, so "which thread holds which element" is a Layout.

>>> from cute_py.atoms import get
>>> mma = make_tiled_mma(get("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))
>>> print(mma.thr_layout_vmnk)
(128,2,1,1):(1,128,0,0)
>>> print(mma.get_layoutC_TV())
((4,8,8),((2,2,16),(1,1))):((256,1,16),((128,8,1024),(0,0)))
"""

from __future__ import annotations

from ..layouts import (
    Layout, _, append, coalesce, composition, int_tuple as it, logical_divide, logical_product,
    right_inverse, tiled_product, upcast, zip, zipped_divide,
)
from ..layouts.operands import layout_operand
from ..layouts.leaves import _norm
from ..layouts.errors import LayoutError, layout_error, names_caller
from .copy import CopyAtom
from .registry import make_copy_atom  # noqa: F401 - make_copy_atom is used in examples
from .mma import MMAAtom

__all__ = ["TiledMMA", "ThrMMA", "make_tiled_mma", "TiledCopy", "ThrCopy", "make_tiled_copy",
           "make_tiled_copy_A", "make_tiled_copy_B", "make_tiled_copy_C", "partition_shape_A",
           "partition_shape_B", "partition_shape_C"]


def _size(x) -> int:
    return it.product(x.shape if isinstance(x, Layout) else x)


def _as_tensor(op, t):
    """``(layout, apply)`` for a Tensor or a bare Layout: ``apply(f)`` is ``f(layout)``, as a view of the tensor
    (which keeps its dtype, and the data's coordinates where the view reaches past them) or as a layout."""
    if isinstance(t, Layout):
        return t, (lambda f: f(t))
    if getattr(t, "_is_tensor", False):
        return t.layout, t._apply
    raise TypeError(f"{op}: expected a Tensor or a Layout, got {type(t).__name__}")


def _slice(obj, coord):
    return obj(coord)


# ---------------------------------------------------------------------------
# TiledMMA


class TiledMMA:
    """An MMA atom tiled over ``atom_layout`` (threads in M, N, K) with an optional permutation.

    ``thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout)`` maps
    ``(thread-in-atom, m, n, k)`` to the thread index. ``permutation`` holds one
    entry per mode (``_``, an int tile size or a Layout), as CuTe's
    ``PermutationMNK``.

    >>> mma = make_tiled_mma(get_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1), (32, 32, 16))
    >>> print(mma.thr_layout_vmnk), mma.tile_size
    (32,2,2,1):(1,32,64,0)
    (None, (32, 32, 16))
    """

    def __init__(self, atom: MMAAtom, atom_layout: Layout, permutation=(_, _, _)):
        if not isinstance(atom, MMAAtom):
            raise TypeError(f"TiledMMA (make_tiled_mma): atom must be an MMAAtom, got {type(atom).__name__}")
        if not isinstance(atom_layout, Layout):
            raise TypeError(f"TiledMMA (make_tiled_mma): atom_layout must be a Layout, got {type(atom_layout).__name__}")
        self.atom = atom
        self.atom_layout = atom_layout
        self.permutation = permutation
        self.thr_layout_vmnk = tiled_product(atom.thr_id, atom_layout)

    def permutation_mnk(self, i: int):
        """Mode ``i``'s permutation, an int ``size(atom) * threads`` when it is ``_``."""
        p = self.permutation[i]
        if p is _:
            return self.atom.shape_mnk[i] * _size(self.thr_layout_vmnk[i + 1])
        return p

    def tile_size_mnk(self, i: int) -> int:
        """Extent of the tiled MMA in mode ``i`` (M, N, K)."""
        p = self.permutation_mnk(i)
        return _size(p) if isinstance(p, Layout) else it.product(p)

    @property
    def tile_size(self) -> tuple:
        """``(tile_size_mnk(0), tile_size_mnk(1), tile_size_mnk(2))``."""
        return tuple(self.tile_size_mnk(i) for i in range(3))

    @property
    def num_threads(self) -> int:
        """``size(thr_layout_vmnk)``: threads that run the tiled MMA."""
        return _size(self.thr_layout_vmnk)

    def _thrfrg(self, t: Layout, mi: int, ni: int, tv: Layout) -> Layout:
        shape_mnk = self.atom.shape_mnk
        permuted = logical_divide(t, (self.permutation_mnk(mi), self.permutation_mnk(ni)))
        atoms = zipped_divide(permuted, (Layout(shape_mnk[mi]), Layout(shape_mnk[ni])))
        tv_layout = composition(atoms, (tv, _))
        thr = (Layout(_size(self.thr_layout_vmnk[mi + 1])), Layout(_size(self.thr_layout_vmnk[ni + 1])))
        return zipped_divide(tv_layout, (_, thr))

    def thrfrg_C(self, c: Layout) -> Layout:
        """``((ThrV,(ThrM,ThrN)),(FrgV,(RestM,RestN,...)))`` view of an (M,N,...) layout."""
        return self._thrfrg(c, 0, 1, self.atom.c_layout)

    def thrfrg_A(self, a: Layout) -> Layout:
        """``((ThrV,(ThrM,ThrK)),(FrgV,(RestM,RestK,...)))`` view of an (M,K,...) layout."""
        return self._thrfrg(a, 0, 2, self.atom.a_layout)

    def thrfrg_B(self, b: Layout) -> Layout:
        """``((ThrV,(ThrN,ThrK)),(FrgV,(RestN,RestK,...)))`` view of an (N,K,...) layout."""
        return self._thrfrg(b, 1, 2, self.atom.b_layout)

    def get_layoutC_TV(self) -> Layout:
        """``(thread index, value) -> m + M*n`` over the tiled MMA's (M, N) tile.

        Postcondition: a bijection onto ``[0, M*N)`` when the atom's C layout is.
        """
        ref = Layout((self.tile_size_mnk(0), self.tile_size_mnk(1)))
        return composition(self.thrfrg_C(ref), (right_inverse(self.thr_layout_vmnk), _))

    def _layout_AB_TV(self, ref, thrfrg, bcast_stride) -> Layout:
        """Compose the (ThrM, ThrN) broadcast into thrfrg's thread mode, then thread index -> (v,m,n,k)."""
        v = self.thr_layout_vmnk
        tile = (_, (Layout((_size(v[1]), _size(v[2])), bcast_stride), _))
        return composition(composition(thrfrg(ref), (tile, _)), (right_inverse(v), _))

    def get_layoutA_TV(self) -> Layout:
        """``(thread index, value) -> m + M*k`` over the (M, K) tile (threads along N see the same A)."""
        ref = Layout((self.tile_size_mnk(0), self.tile_size_mnk(2)))
        return self._layout_AB_TV(ref, self.thrfrg_A, (1, 0))

    def get_layoutB_TV(self) -> Layout:
        """``(thread index, value) -> n + N*k`` over the (N, K) tile (threads along M see the same B)."""
        ref = Layout((self.tile_size_mnk(1), self.tile_size_mnk(2)))
        return self._layout_AB_TV(ref, self.thrfrg_B, (0, 1))

    def get_slice(self, thr_idx: int) -> "ThrMMA":
        """The view of thread ``thr_idx`` (its ``(v, m, n, k)`` coordinate in ``thr_layout_vmnk``)."""
        n = self.num_threads
        if not it.is_int(thr_idx) or not 0 <= thr_idx < n:
            raise layout_error(LayoutError, "TiledMMA.get_slice", "thread index out of range",
                               f"thr_idx={thr_idx!r}, threads={n}")
        return ThrMMA(self, thr_idx, self.thr_layout_vmnk.get_flat_coord(thr_idx))

    get_thread_slice = get_slice

    def __str__(self) -> str:
        perm = "(" + ",".join("_" if p is _ else str(p) for p in self.permutation) + ")"
        return (f"TiledMMA\n  ThrLayoutVMNK:  {self.thr_layout_vmnk}\n  PermutationMNK: {perm}\n"
                + str(self.atom))


class ThrMMA:
    """One thread's view of a TiledMMA: ``partition_A/B/C`` and ``partition_fragment_A/B/C``."""

    def __init__(self, tiled: TiledMMA, thr_idx: int, thr_vmnk: tuple):
        self.tiled = tiled
        self.thr_idx = thr_idx
        self.thr_vmnk = thr_vmnk

    def _partition(self, op, t, thrfrg, m_index, n_index):
        layout, apply = _as_tensor(op, t)
        frg = apply(thrfrg)
        v, m, n, k = self.thr_vmnk
        coords = (v, m, n, k)
        rest_rank = it.rank(frg.shape[1][1])
        coord = ((v, (coords[m_index], coords[n_index])), (_, (_,) * rest_rank if rest_rank > 1 else _))
        return _slice(frg, coord)

    def partition_C(self, t):
        """This thread's accumulators of an (M, N, ...) tensor: shape ``(FrgV, RestM, RestN, ...)``."""
        return self._partition("partition_C", t, self.tiled.thrfrg_C, 1, 2)

    def partition_A(self, t):
        """This thread's A elements of an (M, K, ...) tensor: ``(FrgV, RestM, RestK, ...)``."""
        return self._partition("partition_A", t, self.tiled.thrfrg_A, 1, 3)

    def partition_B(self, t):
        """This thread's B elements of an (N, K, ...) tensor: ``(FrgV, RestN, RestK, ...)``."""
        return self._partition("partition_B", t, self.tiled.thrfrg_B, 2, 3)

    def _fragment(self, part, value_type, like=False):
        """A zeroed register tensor of ``value_type`` shaped like the partition.

        C fragments are compact column-major (CuTe's ``make_fragment_C``); A/B
        fragments follow ``make_fragment_like``: mode 0 column-major, the other
        modes ordered like the partition's strides (integer strides only;
        otherwise column-major).
        """
        from ..layouts import make_fragment_like
        from ..layouts.tensor_make import make_tensor_like

        layout = part if isinstance(part, Layout) else part.layout
        if like and all(it.is_int(d) for d in it.flatten_to_tuple(layout.stride)):
            return make_fragment_like(layout, value_type)
        return make_tensor_like(Layout(layout.shape), value_type)

    def partition_fragment_C(self, t):
        """A new register fragment shaped like ``partition_C(t)`` (zeros of the atom's C type)."""
        return self._fragment(self.partition_C(t), self.tiled.atom.c_type)

    def partition_fragment_A(self, t):
        """A new register fragment shaped like ``partition_A(t)``."""
        return self._fragment(self.partition_A(t), self.tiled.atom.a_type, like=True)

    def partition_fragment_B(self, t):
        """A new register fragment shaped like ``partition_B(t)``."""
        return self._fragment(self.partition_B(t), self.tiled.atom.b_type, like=True)

    def __str__(self) -> str:
        return f"ThrMMA\n  Thr VMNK: {it.to_str(self.thr_vmnk)}\n" + str(self.tiled)


def get_atom(name):
    """Shorthand for :func:`cute_py.atoms.get` (used in examples)."""
    from .registry import get

    return get(name)


def _is_tiler(x) -> bool:
    """Whether ``x`` is one mode of a tiler: ``_``, a positive int, a Layout, or a tuple of those."""
    if isinstance(x, tuple):
        return all(_is_tiler(y) for y in x)
    return x is _ or isinstance(x, Layout) or (it.is_int(x) and x >= 1)


@names_caller
def make_tiled_mma(atom, atom_layout=(1, 1, 1), permutation=(_, _, _)) -> TiledMMA:
    """Tile ``atom`` over ``atom_layout`` (a Layout or shape, padded to rank 3) with ``permutation``.

    Preconditions: ``atom_layout`` has rank <= 3 (padded with ``1:0``) and positive extents (the atoms
    along M, N and K), the permutation has at most 3 entries (padded with ``_``).

    >>> mma = make_tiled_mma(get_atom("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1))
    >>> mma.num_threads, mma.tile_size
    (256, (128, 128, 16))
    """
    if isinstance(atom, str):
        atom = get_atom(atom)
    if not isinstance(atom, MMAAtom):
        raise TypeError(f"make_tiled_mma: atom must be an MMAAtom, got {type(atom).__name__}")
    shape = atom_layout.shape if isinstance(atom_layout, Layout) else atom_layout
    if isinstance(shape, list):
        shape = _norm(shape, "atom_layout", "make_tiled_mma")
    leaves = it.flatten_to_tuple(shape) if isinstance(shape, tuple) else (shape,)
    bad = [x for x in leaves if it.is_int(x) and x < 1]
    if bad:                                 # before the layout is built, which refuses a negative extent itself
        raise layout_error(LayoutError, "make_tiled_mma", "atom_layout counts the atoms along M, N and K: each "
                           "extent must be a positive int", f"{it.to_str(shape)} has {bad[0]}")
    atom_layout = layout_operand("make_tiled_mma", atom_layout, "atom_layout")     # a shape (tuple, list) too
    if it.rank(atom_layout.shape) > 3:
        raise layout_error(LayoutError, "make_tiled_mma", "atom layout must have rank <= 3", layout=atom_layout)
    atom_layout = append(atom_layout, n=3) if isinstance(atom_layout.shape, tuple) else append(
        Layout._make((atom_layout.shape,), (atom_layout.stride,)), n=3)
    permutation = tuple(permutation) if isinstance(permutation, (tuple, list)) else (permutation,)
    if len(permutation) > 3:
        raise layout_error(LayoutError, "make_tiled_mma", "permutation has more than 3 modes", f"{permutation}")
    bad = [x for x in permutation if not _is_tiler(x)]
    if bad:
        raise TypeError(f"make_tiled_mma: permutation entries must be _, a positive int, a Layout or a tuple of "
                        f"them, got {bad[0]!r:.60} in {permutation!r:.120}")
    permutation = permutation + (_,) * (3 - len(permutation))
    return TiledMMA(atom, atom_layout, permutation)


def _partition_shape(op, mma, shape, tv_layout, i, j):
    shape = tuple(shape)
    if len(shape) < 2:
        raise layout_error(LayoutError, op, "need at least two modes", f"shape={shape}")
    atom_i, atom_j = mma.atom.shape_mnk[i], mma.atom.shape_mnk[j]
    thr_i, thr_j = _size(mma.thr_layout_vmnk[i + 1]), _size(mma.thr_layout_vmnk[j + 1])
    for mode, ext, tile in ((i, shape[0], atom_i * thr_i), (j, shape[1], atom_j * thr_j)):
        if it.product(ext) % tile:
            raise layout_error(LayoutError, op, "the tiled MMA does not divide the shape",
                               f"extent {ext} is not a multiple of {tile} (atom x threads) in mode {'MNK'[mode]}")
    return (tv_layout.shape[1], it.product(shape[0]) // (atom_i * thr_i),
            it.product(shape[1]) // (atom_j * thr_j)) + shape[2:]


def partition_shape_C(mma: TiledMMA, shape_mn) -> tuple:
    """``(FrgV, M/(AtomM*ThrM), N/(AtomN*ThrN), ...)``: the shape of one thread's accumulators.

    >>> partition_shape_C(make_tiled_mma(get_atom("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1)), (128, 128))
    ((2, 2, 16), 1, 1)
    """
    return _partition_shape("partition_shape_C", mma, shape_mn, mma.atom.c_layout, 0, 1)


def partition_shape_A(mma: TiledMMA, shape_mk) -> tuple:
    """``(FrgV, M/(AtomM*ThrM), K/(AtomK*ThrK), ...)``.

    >>> partition_shape_A(make_tiled_mma(get_atom("SM90_64x128x16_F32BF16BF16_SS"), (2, 1, 1)), (128, 64))
    ((64, 16), 1, 4)
    """
    return _partition_shape("partition_shape_A", mma, shape_mk, mma.atom.a_layout, 0, 2)


def partition_shape_B(mma: TiledMMA, shape_nk) -> tuple:
    """``(FrgV, N/(AtomN*ThrN), K/(AtomK*ThrK), ...)``."""
    return _partition_shape("partition_shape_B", mma, shape_nk, mma.atom.b_layout, 1, 2)


# ---------------------------------------------------------------------------
# TiledCopy


class TiledCopy:
    """A copy atom tiled over threads and values: ``layout_tv`` maps ``(thread, value)`` to the tile.

    ``tiler_mn`` is the tile shape; ``layout_tv`` indexes it column-major.

    >>> tc = make_tiled_copy(make_copy_atom("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "f16"),
    ...                      Layout((16, 8), (8, 1)), Layout((1, 8)))
    >>> print(tc.tiler_mn, tc.layout_tv)
    (16, 64) ((8,16),8):((128,1),16)
    """

    def __init__(self, atom: CopyAtom, layout_tv: Layout, tiler_mn: tuple):
        if not isinstance(atom, CopyAtom):
            raise TypeError(f"TiledCopy: expected a CopyAtom, got {type(atom).__name__}")
        if not isinstance(layout_tv, Layout):
            raise TypeError(f"TiledCopy: layout_tv must be a (thread, value) Layout, got {type(layout_tv).__name__}")
        self.atom = atom
        self.layout_tv = layout_tv
        self.tiler_mn = tuple(tiler_mn) if isinstance(tiler_mn, (tuple, list)) else (tiler_mn,)
        if not all(_is_tiler(x) and x is not _ for x in self.tiler_mn):
            raise TypeError(f"TiledCopy: tiler_mn must be a tile shape (positive ints, Layouts, or tuples of them), "
                            f"got {tiler_mn!r:.80}")
        nthr, nval = _size(layout_tv[0]), _size(layout_tv[1])
        if nthr % atom.num_threads or nval % atom.num_values:
            raise layout_error(LayoutError, "TiledCopy", "the atom does not divide the TV layout",
                               f"{nthr} threads x {nval} values vs the atom's {atom.num_threads} x {atom.num_values}",
                               atom=atom.name, layout_tv=layout_tv)

    @property
    def num_threads(self) -> int:
        """Threads of the tiled copy."""
        return _size(self.layout_tv[0])

    def _tile2thrfrg(self, t: Layout, ref2trg: Layout) -> Layout:
        atom_tv = zipped_divide(self.layout_tv, (self.atom.num_threads, self.atom.num_values))
        trg_tv = composition(atom_tv, (ref2trg, _))
        thrval2mn = coalesce(zip(trg_tv), (1, (1, 1)))
        tv = composition(t, (thrval2mn, _))
        return tv((_, _), _)

    def _src2ref(self) -> Layout:
        return composition(right_inverse(self.atom.ref_layout), self.atom.src_layout)

    def _dst2ref(self) -> Layout:
        return composition(right_inverse(self.atom.ref_layout), self.atom.dst_layout)

    def tidfrg_S(self, s: Layout) -> Layout:
        """``(Thr, (FrgV, FrgX), (RestM, RestN, ...))`` view of a source layout."""
        return self._tile2thrfrg(zipped_divide(s, self.tiler_mn), self._src2ref())

    def tidfrg_D(self, d: Layout) -> Layout:
        """``(Thr, (FrgV, FrgX), (RestM, RestN, ...))`` view of a destination layout."""
        return self._tile2thrfrg(zipped_divide(d, self.tiler_mn), self._dst2ref())

    def _layout_TV(self, ref2trg) -> Layout:
        ref = Layout((self.tiler_mn, 1))
        return self._tile2thrfrg(ref, ref2trg)(_, _, 0)

    def get_layoutS_TV(self) -> Layout:
        """``(thread, value) -> tile index`` of the source elements."""
        return self._layout_TV(self._src2ref())

    def get_layoutD_TV(self) -> Layout:
        """``(thread, value) -> tile index`` of the destination elements."""
        return self._layout_TV(self._dst2ref())

    def retile(self, t):
        """Re-view a thread's register fragment (``(V, RestM, RestN, ...)``) by the copy's values.

        Result shape ``((AtomV, RestV), CPY_M, CPY_N, ...)``: the fragment's
        elements grouped the way this copy moves them (CuTe's ``retile``, used
        by ``retile_S``/``retile_D``).
        """
        layout = _as_tensor("retile", t)[0]
        v = _size(Layout._make(layout.shape[0], layout.stride[0])) if isinstance(layout.shape, tuple) \
            else _size(layout)
        tiler = Layout(self.tiler_mn)
        frg_mn = upcast(composition(right_inverse(self.layout_tv), tiler), self.num_threads * v)
        frg_v = zipped_divide(logical_product(Layout(v), right_inverse(frg_mn)), Layout(self.atom.num_values))
        t_tensor = zipped_divide(t, (v,) + tuple(it.product_each(frg_mn.shape)))
        v_tensor = t_tensor.compose(frg_v, _) if not isinstance(t_tensor, Layout) else composition(t_tensor, (frg_v, _))
        r = it.rank(layout.shape)
        return _slice(v_tensor, (_, (0,) + (_,) * (r - 1)))

    def get_slice(self, thr_idx: int) -> "ThrCopy":
        """The view of thread ``thr_idx``."""
        if not it.is_int(thr_idx) or not 0 <= thr_idx < self.num_threads:
            raise layout_error(LayoutError, "TiledCopy.get_slice", "thread index out of range",
                               f"thr_idx={thr_idx!r}, threads={self.num_threads}")
        return ThrCopy(self, thr_idx)

    get_thread_slice = get_slice

    def __str__(self) -> str:
        return (f"TiledCopy\n  Tiler_MN:       {it.to_str(self.tiler_mn)}\n  TiledLayout_TV: {self.layout_tv}\n"
                + str(self.atom))


class ThrCopy:
    """One thread's view of a TiledCopy: ``partition_S`` and ``partition_D``."""

    def __init__(self, tiled: TiledCopy, thr_idx: int):
        self.tiled = tiled
        self.thr_idx = thr_idx

    def _partition(self, op, t, tidfrg):
        layout, apply = _as_tensor(op, t)
        r = it.rank(layout.shape)
        return _slice(apply(tidfrg), (self.thr_idx, _, (_,) * r if r > 1 else _))

    def partition_S(self, t):
        """This thread's source elements: shape ``(CPY, CPY_M, CPY_N, ...)``."""
        return self._partition("partition_S", t, self.tiled.tidfrg_S)

    def partition_D(self, t):
        """This thread's destination elements: shape ``(CPY, CPY_M, CPY_N, ...)``."""
        return self._partition("partition_D", t, self.tiled.tidfrg_D)

    def retile_S(self, t):
        """A register fragment (e.g. from an MMA partition) re-viewed as this copy's source."""
        return self.tiled.retile(t)

    def retile_D(self, t):
        """A register fragment re-viewed as this copy's destination (``((AtomV,RestV), CPY_M, ...)``)."""
        return self.tiled.retile(t)


@names_caller
def make_tiled_copy(atom, thr_layout, val_layout=None) -> TiledCopy:
    """Tile a copy atom: ``thr_layout`` maps (m, n) -> thread, ``val_layout`` (m, n) -> value.

    ``layout_mn = raked_product(thr_layout, val_layout)``, ``layout_tv =
    right_inverse(layout_mn).with_shape((size(thr), size(val)))`` and the tiler
    is ``product_each(shape(layout_mn))`` (CuTe's make_tiled_copy).

    >>> tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "f32"), Layout((32, 4), (4, 1)))
    >>> tc.tiler_mn, tc.num_threads
    ((32, 4), 128)
    """
    from ..layouts import raked_product

    if not isinstance(atom, CopyAtom):
        raise TypeError(f"make_tiled_copy: expected a CopyAtom (see make_copy_atom), got {type(atom).__name__}")
    thr_layout = layout_operand("make_tiled_copy", thr_layout, "thr_layout")
    val_layout = Layout(1) if val_layout is None else layout_operand("make_tiled_copy", val_layout, "val_layout")
    layout_mn = raked_product(thr_layout, val_layout)
    layout_tv = composition(right_inverse(layout_mn), Layout((_size(thr_layout), _size(val_layout))))
    return TiledCopy(atom, layout_tv, it.product_each(layout_mn.shape))


def _copy_from_mma(atom, mma, which):
    """The tiled copy of ``make_tiled_copy_<which>``: both arguments checked first, by name."""
    fn = f"make_tiled_copy_{which}"
    if not isinstance(atom, CopyAtom):
        raise TypeError(f"{fn}: atom must be a CopyAtom, got {type(atom).__name__}")
    if not isinstance(mma, TiledMMA):
        raise TypeError(f"{fn}: mma must be a TiledMMA (make_tiled_mma), got {type(mma).__name__}")
    layout_tv = getattr(mma, f"get_layout{which}_TV")()
    modes = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}[which]
    return TiledCopy(atom, layout_tv, tuple(mma.tile_size_mnk(k) for k in modes))


def make_tiled_copy_A(atom, mma: TiledMMA) -> TiledCopy:
    """A tiled copy whose TV layout is the MMA's A layout over its (M, K) tile.

    Postcondition: thread ``t``'s destination elements are its MMA A fragment.

    >>> mma = make_tiled_mma(get_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1), (32, 32, 16))
    >>> tc = make_tiled_copy_A(make_copy_atom("SM75_U32x4_LDSM_N", "f16"), mma)
    >>> tc.tiler_mn, tc.layout_tv == mma.get_layoutA_TV()
    ((32, 16), True)
    """
    return _copy_from_mma(atom, mma, "A")


def make_tiled_copy_B(atom, mma: TiledMMA) -> TiledCopy:
    """A tiled copy whose TV layout is the MMA's B layout over its (N, K) tile.

    >>> mma = make_tiled_mma(get_atom("SM80_16x8x16_F16F16F16F16_TN"), (2, 2, 1), (32, 32, 16))
    >>> make_tiled_copy_B(make_copy_atom("SM75_U32x2_LDSM_N", "f16"), mma).tiler_mn
    (32, 16)
    """
    return _copy_from_mma(atom, mma, "B")


def make_tiled_copy_C(atom, mma: TiledMMA) -> TiledCopy:
    """A tiled copy whose TV layout is the MMA's C layout over its (M, N) tile.

    >>> mma = make_tiled_mma(get_atom("SM80_16x8x16_F32F16F16F32_TN"), (2, 2, 1))
    >>> make_tiled_copy_C(make_copy_atom("UniversalCopy<uint32_t>", "f32"), mma).tiler_mn
    (32, 16)
    """
    return _copy_from_mma(atom, mma, "C")

