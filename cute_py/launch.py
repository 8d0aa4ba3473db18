"""Launches: the last step of the product path, and the one owner of what it caches.

``plan.bind(problem)`` gives the concrete TMA parameters, work units,
workspace and scalar arguments; :class:`Launches` turns them into a
:class:`GemmLaunch` (tensor maps encoded, the kernel compiled and loaded, its
arguments packed in C memory) and keeps it, so a repeated call on the same
arrays costs one dictionary lookup and one driver call. Everything is bounded
(least recently used entries go first). The caller says which generation of its
choices a lookup belongs to (``cute_py.gemm`` passes
:func:`cute_py.tuned.generation`): when it changes, the prepared launches are
dropped, so a call that chose its spec before an autotune record chooses again.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import replace

from . import runtime as rt
from .arraylib import allocator, library, zeros
from .emit import emit_gemm, gemm_plan
from .emit.scaling import SCALE_BYTES, gathered_ld, scale_blocks
from .emit.stage_copy import (STAGE_COPY_BLOCKS, STAGE_COPY_THREADS, emit_scale_gather, emit_stage_copy,
                              scale_gather_name, stage_copy_name)
from .problem import GemmInputError

__all__ = ["Launches", "GemmLaunch", "LRU"]


class LRU:
    """A dict of at most ``maxsize`` entries; :meth:`get` refreshes an entry, :meth:`put` evicts the oldest.

    >>> c = LRU(2); c.put("a", 1); c.put("b", 2); c.get("a"); c.put("c", 3)
    1
    2
    1
    3
    >>> "b" in c, len(c)                     # "b" was the least recently used
    (False, 2)
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._d: OrderedDict = OrderedDict()

    def get(self, key):
        """The value stored under ``key`` (None if absent), made the most recently used entry."""
        hit = self._d.get(key)
        if hit is not None:
            self._d.move_to_end(key)
        return hit

    def put(self, key, value):
        """Store ``value`` under ``key``, evict the least recently used entry beyond ``maxsize``; return ``value``."""
        self._d[key] = value
        self._d.move_to_end(key)
        if len(self._d) > self.maxsize:
            self._d.popitem(last=False)
        return value

    def clear(self) -> None:
        self._d.clear()

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, key) -> bool:
        return key in self._d


class GemmLaunch:
    """A prepared GEMM launch; ``run(out)`` launches it (allocating D first when ``out`` is None) and returns D.

    Only D's address may change between runs (a new ``out`` per call is the common case): its pointer
    argument, and for the TMA-store epilogue its tensor map, are swapped in place. ``copies``: the staging
    copies (prepared launches) that run before the GEMM, on its stream.

    >>> call = LAUNCHES.get(key, tuned.generation())                   # doctest: +SKIP
    >>> d2 = call.run(None)                                              # doctest: +SKIP
    """

    def __init__(self, launch, binding, new, shape, out_dtype, tensor_map, keep, d_ptr, copies=()):
        self.launch, self.new, self.shape, self.out_dtype, self.copies = launch, new, shape, out_dtype, copies
        self.d_index, self.tmd_index = binding.index("d"), binding.index("tma_d")
        self.d_params = binding.tma.get("tma_d")
        self.d_shift = binding.ptr_offsets.get("tma_d", 0)   # a ragged D's map starts before D
        self.tensor_map, self.keep = tensor_map, keep
        self.d_ptr = d_ptr                           # the address D's pointer (and tensor map) were packed for

    def run(self, out):
        if out is None:
            out = self.new(self.shape, self.out_dtype)
        ptr = out.data_ptr() if hasattr(out, "data_ptr") else rt.as_device_array(out).ptr
        if ptr != self.d_ptr:
            self.launch.set_pointer(self.d_index, ptr)
            if self.tmd_index is not None:
                self.launch.set_arg(self.tmd_index, self.tensor_map(ptr + self.d_shift, self.d_params))
            self.d_ptr = ptr
        for copy in self.copies:
            copy()
        self.launch()
        return out


class Launches:
    """Compiled kernels, resident-cluster counts, bindings, tensor maps, split-K workspaces, staging buffers and
    prepared launches.

    Bindings are kept per (spec, problem), so a problem seen before reuses its concrete TMA parameters, and the
    tensor maps of those parameters are found by identity.

    >>> launches = Launches()
    >>> problem = Problem.from_arrays(a, b, out=d)                      # doctest: +SKIP
    >>> launches.put(key, launches.prepare(problem, select(problem)))   # doctest: +SKIP
    >>> launches.get(key, tuned.generation()).run(d)                   # doctest: +SKIP
    """

    def __init__(self, launches: int = 256, kernels: int = 1024, tensor_maps: int = 64, workspaces: int = 16):
        self.kernels, self.waves = LRU(kernels), LRU(kernels)
        self.tensor_maps, self.prepared, self.bindings = LRU(tensor_maps), LRU(launches), LRU(launches)
        self.workspaces, self.staging = LRU(workspaces), LRU(workspaces)
        self._generation = None

    def clear(self) -> None:
        """Forget the prepared launches (kernels, tensor maps and workspaces stay valid)."""
        self.prepared.clear()

    def get(self, key, generation=None) -> GemmLaunch | None:
        """The launch prepared under ``key``, if ``generation`` (of the caller's choices) is the one it was
        prepared in; a new generation drops every prepared launch."""
        if generation != self._generation:
            self.prepared.clear()
            self._generation = generation
        return self.prepared.get(key)

    def put(self, key, launch: GemmLaunch) -> GemmLaunch:
        """Keep ``launch`` under ``key`` (the least recently used one goes when full)."""
        return self.prepared.put(key, launch)

    def compiled(self, spec):
        """``(Program, Kernel)`` for ``spec``: emitted, compiled with NVRTC (disk-cached) and loaded once."""
        hit = self.kernels.get(spec)
        if hit is None:
            prog = rt.compile(emit_gemm(spec), name=f"{spec.name}.cu")
            hit = self.kernels.put(spec, (prog, prog.kernel(spec.name)))
        return hit

    def tensor_map(self, ptr: int, params):
        """The encoded tensor map of ``params`` at ``ptr`` (a driver call per new pair)."""
        key = (ptr, params)
        return self.tensor_maps.get(key) or self.tensor_maps.put(key, rt.tensor_map(ptr, params))

    def grid(self, spec, plan, kernel, binding) -> int:
        """CTAs to launch: every work unit once, or (persistent) the clusters the scheduler runs given how many can
        be resident at once."""
        cs = plan.cluster_size
        if not spec.persistent:
            return binding.units * cs
        wave = self.waves.get(spec)
        if wave is None:
            cl = (cs, 1, 1) if cs > 1 else None
            wave = rt.max_active_clusters(kernel, plan.threads, plan.smem_bytes, cl) if cl else rt.device().sm_count
            if wave < 1:
                raise GemmInputError(f"gemm: no cluster of {cs} CTAs of {spec.name} fits on the device")
            self.waves.put(spec, wave)
        return binding.ctas(wave) * cs

    def workspace(self, like, device, need: tuple, stream_id, private: bool = False):
        """The f32 workspace of partial tiles and the per-tile counters (split-K, stream-K) of ``need`` = (floats,
        counters) (the counters return to zero after every launch, so one pair serves every call on a stream:
        calls on one stream are ordered). ``private``: a new pair, not shared (for a launch captured into a CUDA
        graph, whose zeroing is captured with it and runs at replay)."""
        floats, counters = need
        key = (library(like), device, stream_id)
        ws, cnt = (None, None) if private else (self.workspaces.get(key) or (None, None))
        if ws is None or ws.shape[0] < floats or cnt.shape[0] < counters:
            ws, cnt = zeros(like, floats, "f32"), zeros(like, counters, "s32")
            if not private:
                self.workspaces.put(key, (ws, cnt))
        return ws, cnt

    def staging_copies(self, problem, stream, capturing: bool, direct=()) -> tuple:
        """``(buffers, copies)`` of ``problem.staging``: per operand tensor-map name, the staging buffer TMA reads
        (one per library, device, stream and operand, grown as needed: calls on one stream are ordered; a launch
        being captured gets its own), and the prepared staging copy that fills them (one launch for both
        operands; none without staging). ``direct``: the operands the kernel reads without TMA (not staged)."""
        ops = problem.operands
        buffers, jobs = {}, []
        staged = [st for st in problem.staging if st.which not in direct]
        for st in staged:
            buf = self._staging_buffer(ops, stream, capturing, st.which, st.nbytes, f"a staging copy of {st.which}",
                                       f"give {st.which} a base address and leading dimension that are multiples "
                                       f"of 16 bytes (TMA), or pass torch/cupy arrays")
            dst = rt.as_device_array(buf).ptr
            buffers["tma_" + st.which] = (dst, buf)
            src = (ops.a if st.which == "a" else ops.b).ptr
            jobs.append((ctypes.c_void_p(src), ctypes.c_void_p(dst),
                         *(ctypes.c_int64(v) for v in (st.groups * st.rows, st.row_bytes, st.src_ld, st.ld, st.rows,
                                                       st.src_group))))
        if not jobs:
            return buffers, ()
        chunks = sum(st.groups * st.rows * -(-st.row_bytes // 16) for st in staged)
        empty = (ctypes.c_void_p(0), ctypes.c_void_p(0), *(ctypes.c_int64(v) for v in (0, 16, 0, 16, 1, 0)))
        args = jobs[0] + (jobs[1] if len(jobs) > 1 else empty)
        vec = min(st.vec for st in staged)
        copy = rt.prepare_launch(self._copy_kernel(stage_copy_name(vec), emit_stage_copy, vec),
                                 grid=(max(1, min(-(-chunks // STAGE_COPY_THREADS), STAGE_COPY_BLOCKS)), 1, 1),
                                 block=STAGE_COPY_THREADS, stream=stream, args=args)
        return buffers, (copy,)

    def _staging_buffer(self, ops, stream, capturing: bool, which: str, nbytes: int, what: str, hint: str):
        """A device buffer of at least ``nbytes`` for the copy of ``which`` ("a", "b", "scale_a"): one per library,
        device, stream and operand, grown as needed (calls on one stream are ordered); a launch being captured gets
        its own."""
        key = (library(ops.like), ops.device, rt.stream_int(stream), which)
        buf = None if capturing else self.staging.get(key)
        if buf is None or rt.as_device_array(buf).size * 4 < nbytes:
            buf = allocator(ops.like, what=what, hint=hint)((-(-nbytes // 4),), "s32")
            if not capturing:
                self.staging.put(key, buf)
        return buf

    def _copy_kernel(self, name: str, emit, arg):
        """The loaded kernel ``name`` of ``emit(arg)`` (a staging copy or the scale gather), compiled once."""
        key = (name, arg)
        hit = self.kernels.get(key)
        if hit is None:
            hit = self.kernels.put(key, rt.compile(emit(arg), name=f"{name}.cu").kernel(name))
        return hit

    def scale_gather(self, problem, stream, capturing: bool) -> tuple:
        """``(address, buffer, copies)`` of a blockwise problem's scale_a as the kernel's tensor map reads it: the
        array itself, or (``problem.scale_a_tma`` False) the buffer it is gathered into by the returned prepared
        copy, M-major with rows padded to 16 bytes (:func:`~cute_py.emit.scaling.scale_a_map`; one buffer per library, device,
        stream, grown as needed; a launch being captured gets its own). ``(None, None, ())`` without blockwise
        scales."""
        ops = problem.operands
        if problem.scale != "block" or ops.scale_a is None:
            return None, None, ()
        if problem.scale_a_tma:
            return ops.scale_a.ptr, None, ()
        e, kb = SCALE_BYTES[problem.scale_type], scale_blocks(problem.K)
        batch = problem.grouping == "batch"
        L, ld = problem.groups if batch else 1, gathered_ld(problem.M, problem.scale_type)
        nbytes = max(L * kb * ld * e, 16)
        buf = self._staging_buffer(ops, stream, capturing, "scale_a", nbytes, "a copy of scale_a",
                                   "pass an M-major scale_a with 16-byte aligned strides, or torch/cupy arrays")
        dst, n = rt.as_device_array(buf).ptr, problem.M * kb * L
        if n == 0:                                   # nothing is read
            return dst, buf, ()
        kernel = self._copy_kernel(scale_gather_name(e), emit_scale_gather, e)
        sa_m, sa_k = problem.scale_strides[:2]
        args = (ctypes.c_void_p(ops.scale_a.ptr), ctypes.c_void_p(dst),
                *(ctypes.c_int64(v) for v in (problem.M, kb, L, sa_m, sa_k, problem.batch_strides[6], ld)))
        copy = rt.prepare_launch(kernel, grid=(max(1, min(-(-n // STAGE_COPY_THREADS), STAGE_COPY_BLOCKS)), 1, 1),
                                 block=STAGE_COPY_THREADS, stream=stream, args=args)
        return dst, buf, (copy,)

    def prepare(self, problem, spec, stream=None, capturing: bool = False, out_shape=None, out_like=None
                ) -> GemmLaunch:
        """Bind ``spec``'s plan to ``problem`` (whose arrays were read by
        :meth:`~cute_py.problem.Problem.from_arrays`, ``out`` included) and prepare the launch on ``stream``
        (``capturing``: that stream is being captured into a CUDA graph, so the launch gets its own workspace).
        ``out_shape``: the shape of the D a run without ``out`` allocates (row-major), when the kernel writes it
        through another view (swap-AB writes D^T: ``problem.out_shape`` reversed); default ``problem.out_shape``.
        ``out_like``: the array whose library allocates that D (swap-AB: the call's ``a``, not the swapped
        problem's); default the problem's ``a``."""
        ops = problem.operands
        plan = gemm_plan(spec)
        shape = replace(problem, operands=None)       # the key holds no arrays: they must not be kept alive
        binding = self.bindings.get((spec, shape)) or self.bindings.put((spec, shape), plan.bind(problem))
        direct = tuple(x for x, v in (("a", spec.load_a), ("b", spec.load_b)) if v)
        staged, copies = self.staging_copies(problem, stream, capturing, direct)
        sa_ptr, sa_buf, sa_copies = self.scale_gather(problem, stream, capturing)
        _, kernel = self.compiled(spec)
        addresses = {"tma_a": ops.a.ptr, "tma_b": ops.b.ptr, "tma_d": ops.out.ptr, "tma_sa": sa_ptr}
        addresses.update({name: ptr for name, (ptr, _) in staged.items()})
        values = {name: self.tensor_map(ptr + binding.ptr_offsets.get(name, 0), binding.tma[name])
                  for name, ptr in addresses.items() if name in binding.tma}
        values.update(a=ops.a.ptr, b=ops.b.ptr, d=ops.out.ptr, c=ops.c.ptr if ops.c is not None else 0,
                      bias=ops.bias.ptr if ops.bias is not None else 0, alpha=ops.alpha, beta=ops.beta,
                      scale_a=ops.scale_a.ptr if ops.scale_a is not None else 0,
                      scale_b=ops.scale_b.ptr if ops.scale_b is not None else 0,
                      offs=ops.offs.ptr if ops.offs is not None else 0)
        keep = tuple(buf for _, buf in staged.values()) + ((sa_buf,) if sa_buf is not None else ())
        cs = plan.cluster_size
        grid = self.grid(spec, plan, kernel, binding)
        need = binding.workspace(grid // cs)
        if need[1]:
            ws, cnt = self.workspace(ops.like, ops.device, need, rt.stream_int(stream), private=capturing)
            values.update(ws=rt.as_device_array(ws).ptr, counters=rt.as_device_array(cnt).ptr)
            keep += (ws, cnt)
        launch = rt.prepare_launch(kernel, grid=(grid, 1, 1),
                                   block=plan.threads, smem=plan.smem_bytes, cluster=(cs, 1, 1) if cs > 1 else None,
                                   stream=stream, args=binding.arguments(values))
        return GemmLaunch(launch, binding, allocator(ops.like if out_like is None else out_like),
                          out_shape or problem.out_shape, spec.out_dtype,
                          self.tensor_map, keep, ops.out.ptr, copies + sa_copies)
