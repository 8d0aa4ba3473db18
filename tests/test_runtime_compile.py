"""NVRTC compile without a GPU: header-free sm_90a kernels (mbarrier, TMA, wgmma, setmaxnreg) to CUBIN,
the parsed ptxas report, wgmma-serialization errors, CompileError, the on-disk cache, clear errors.

Needs cuda-bindings + nvidia-cuda-nvrtc (the ``test`` extra); skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import pytest

from cute_py import runtime as rt
from cute_py.runtime import cache as rt_cache
from cute_py.runtime import nvrtc as rt_nvrtc

HERE = os.path.dirname(os.path.abspath(__file__))


def _nvrtc_reason():
    try:
        rt.nvrtc_version()
    except (rt.NvrtcNotFoundError, rt.CudaNotInstalledError) as e:
        return str(e)
    return None


NVRTC_MISSING = _nvrtc_reason()
needs_nvrtc = pytest.mark.skipif(NVRTC_MISSING is not None, reason=f"NVRTC unavailable: {NVRTC_MISSING}")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test gets an empty cache of its own (never the user's)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(d))
    monkeypatch.delenv("CUTE_PY_CACHE", raising=False)
    return d


PRELUDE = r"""
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
struct __align__(64) TmaDesc { u64 words[16]; };   // CUtensorMap: 128 bytes, 64-byte aligned
__device__ __forceinline__ u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }
"""

MBARRIER = PRELUDE + r"""
extern "C" __global__ void __launch_bounds__(128, 1) mbar_loop(u32* out) {
  __shared__ __align__(8) u64 bar;
  const u32 b = smem_u32(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(128) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
  u32 done = 0;
  while (!done) {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(b), "r"(0) : "memory");
  }
  out[threadIdx.x] = done;
}
"""

TMA_2D = PRELUDE + r"""
extern "C" __global__ void __launch_bounds__(128, 1)
tma_load(const __grid_constant__ TmaDesc desc, u32* out, int c0, int c1) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) u64 bar;
  const u32 b = smem_u32(&bar), dst = smem_u32(smem);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(8192) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"((u64)&desc), "r"(c0), "r"(c1), "r"(b) : "memory");
  }
  u32 done = 0;
  while (!done) {
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                 "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(b) : "memory");
  }
  const u32* s = (const u32*)smem;
  for (int i = threadIdx.x; i < 2048; i += 128) out[i] = s[i];
}
"""


def wgmma_source(touch_accumulators: bool = False) -> str:
    regs = ", ".join(f"%{i}" for i in range(32))
    outs = ", ".join(f'"+f"(d[{i}])' for i in range(32))
    mma = (f'  asm volatile("{{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %34, 0;\\n\\t"\n'
           f'               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{regs}}}, %32, %33, p, 1, 1, 0, 0;\\n}}"\n'
           f'               : {outs} : "l"(da), "l"(db), "r"(1));\n')
    # writing an accumulator between two wgmma without wgmma.fence makes ptxas serialize them (C7511)
    between = "  d[0] += out[7];\n" + mma if touch_accumulators else ""
    return PRELUDE + f"""
extern "C" __global__ void __launch_bounds__(128, 1) wg(u64 da, u64 db, float* out) {{
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
{mma}{between}  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}}
"""


SETMAXNREG = PRELUDE + r"""
extern "C" __global__ void BOUNDS warp_specialized(u32* out) {
  const u32 wg = threadIdx.x / 128;
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    out[threadIdx.x] = 1;
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    out[threadIdx.x] = 2 + wg;
  }
}
"""

KERNELS = {
    "mbar_loop": MBARRIER,
    "tma_load": TMA_2D,
    "wg": wgmma_source(),
    "warp_specialized": SETMAXNREG.replace("BOUNDS", "__launch_bounds__(384, 1)"),
}


@needs_nvrtc
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_header_free_sm90a_kernels_compile(kernel):
    p = rt.compile(KERNELS[kernel])
    assert p.cubin[:4] == b"\x7fELF"
    assert list(p.kernels) == [kernel]
    assert p.registers[kernel] > 0
    assert p.spills[kernel] == 0 and p.stack_bytes[kernel] == 0
    assert not [w for w in p.warnings if w.serializes]
    assert p.arch == "sm_90a" and p.cached is False
    assert "ptxas" in p.log


@needs_nvrtc
def test_report_figures_match_the_log():
    p = rt.compile(KERNELS["mbar_loop"])
    k = p.kernels["mbar_loop"]
    assert k.smem_bytes == p.smem_bytes["mbar_loop"] == 8          # the u64 mbarrier
    assert f"Used {k.registers} registers" in p.log
    # the setmaxnreg kernel keeps 168 registers at entry (384 threads x 168 <= 64K)
    assert rt.compile(KERNELS["warp_specialized"]).registers["warp_specialized"] == 168


@needs_nvrtc
def test_spills_are_reported():
    src = r"""
extern "C" __global__ void __launch_bounds__(1024, 2) spill(float* o, int n) {
  float a[40];
#pragma unroll
  for (int i = 0; i < 40; ++i) a[i] = o[i * n + threadIdx.x];
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 40; ++i) a[i] = a[i] * a[(i + j) % 40] + o[j + i];
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 40; ++i) s += a[i];
  o[threadIdx.x] = s;
}
"""
    p = rt.compile(src)
    k = p.kernels["spill"]
    assert k.registers == 32 and p.spills["spill"] == k.spill_stores + k.spill_loads > 0


@needs_nvrtc
def test_wgmma_serialization_is_an_error():
    src = wgmma_source(touch_accumulators=True)
    with pytest.raises(rt.CompileError) as ei:
        rt.compile(src)
    e = ei.value
    assert e.status == "PTXAS_SERIALIZATION" and "C7511" in e.codes
    assert "wg" in str(e) and "strict=False" in str(e)
    p = rt.compile(src, strict=False)
    (w,) = [w for w in p.warnings if w.serializes]
    assert w.code == "C7511" and w.kernel == "wg" and "serialized" in w.text


@needs_nvrtc
def test_setmaxnreg_without_launch_bounds_is_an_error():
    src = SETMAXNREG.replace("BOUNDS", "")
    with pytest.raises(rt.CompileError, match="C7508"):
        rt.compile(src)
    p = rt.compile(src, strict=False)
    assert [w.code for w in p.warnings] == ["C7508"] and p.warnings[0].kernel is None


@needs_nvrtc
def test_syntax_error_carries_line_and_numbered_source():
    src = 'extern "C" __global__ void f(int* x) {\n  int y = 1;\n  x[0] = y\n}\n'
    with pytest.raises(rt.CompileError) as ei:
        rt.compile(src, name="bad.cu")
    e = ei.value
    assert e.status == "NVRTC_ERROR_COMPILATION"
    assert e.lines == (4,) and e.name == "bad.cu" and e.source == src
    assert 'bad.cu(4): error: expected a ";"' in e.log
    assert ">   4 | }" in str(e) and "    3 |   x[0] = y" in str(e)
    assert e.numbered_source.splitlines()[2] == "    3 |   x[0] = y"
    assert not list(rt_cache.cache_dir().glob("nvrtc/*.cubin"))     # failures are not cached


@needs_nvrtc
def test_report_survives_recompiling_the_same_source():
    # NVRTC 13.0 has a compile cache of its own whose hits come back with an empty log (no ptxas report);
    # cute_py passes --no-cache so every NVRTC compile reports
    for _ in range(3):
        p = rt.compile(KERNELS["mbar_loop"], cache=False)
        assert p.registers["mbar_loop"] > 0 and "Used" in p.log


@needs_nvrtc
def test_plain_sm90_rejects_wgmma_with_ptxas_error():
    with pytest.raises(rt.CompileError, match="not supported on .target 'sm_90'"):
        rt.compile(KERNELS["warp_specialized"], arch="sm_90")


@needs_nvrtc
def test_unsupported_arch_and_options():
    with pytest.raises(rt.UnsupportedArchError, match="real GPU architecture"):
        rt.compile(MBARRIER, arch="compute_90a")
    with pytest.raises(rt.UnsupportedArchError, match="cannot target sm_21"):
        rt.compile(MBARRIER, arch="sm_21")
    with pytest.raises(ValueError, match="arch="):
        rt.compile(MBARRIER, options=("--gpu-architecture=sm_80",))
    with pytest.raises(TypeError):
        rt.compile(MBARRIER.encode())


@needs_nvrtc
def test_extra_options_and_frontend_warnings():
    src = 'extern "C" __global__ void k(int* x) { int unused; x[0] = 1; }'
    p = rt.compile(src, options=("--use_fast_math", "-std=c++17"))
    assert p.options == ("--use_fast_math", "-std=c++17")
    fe = [w for w in p.warnings if w.source == "nvrtc"]
    assert fe and fe[0].line == 1 and "unused" in fe[0].text


# ---------------------------------------------------------------------------
# Cache


@needs_nvrtc
def test_cache_miss_then_hit(cache_dir):
    src = KERNELS["wg"]
    cold = time.perf_counter()
    p1 = rt.compile(src)
    cold = time.perf_counter() - cold
    assert not p1.cached and p1.compile_seconds > 0
    files = sorted(f.suffix for f in (cache_dir / "nvrtc").iterdir())
    assert files == [".cubin", ".json"]
    times = []
    for _ in range(5):
        t = time.perf_counter()
        p2 = rt.compile(src)
        times.append(time.perf_counter() - t)
    assert p2.cached
    assert p2.cubin == p1.cubin and p2.log == p1.log and p2.report == p1.report
    hit = statistics.median(times)
    print(f"\nwgmma kernel: cold compile {cold * 1e3:.1f} ms, cache hit {hit * 1e3:.2f} ms (median of 5)")
    assert hit < 0.050, f"cache hit took {hit * 1e3:.1f} ms (target < 10 ms)"
    assert hit < cold / 5


@needs_nvrtc
def test_cache_invalidation(cache_dir, monkeypatch):
    src = KERNELS["mbar_loop"]
    assert not rt.compile(src).cached
    assert rt.compile(src).cached
    assert not rt.compile(src, options=("--use_fast_math",)).cached           # options are in the key
    assert rt.compile(src, options=("--use_fast_math",)).cached
    assert not rt.compile(src + "\n").cached                       # so is every byte of source
    assert not rt.compile(src, name="other.cu").cached            # and the file name
    monkeypatch.setattr(rt_nvrtc, "_VERSION", (99, 9))             # and the NVRTC version
    assert not rt.compile(src).cached
    monkeypatch.undo()
    assert len(list((cache_dir / "nvrtc").glob("*.cubin"))) == 5


@needs_nvrtc
def test_cache_strict_check_applies_on_hit():
    src = wgmma_source(touch_accumulators=True)
    assert not rt.compile(src, strict=False).cached
    with pytest.raises(rt.CompileError, match="C7511"):
        rt.compile(src)                                            # a hit, still rejected


@needs_nvrtc
def test_cache_disabled_and_damaged(cache_dir, monkeypatch):
    src = KERNELS["mbar_loop"]
    monkeypatch.setenv("CUTE_PY_CACHE", "0")
    assert not rt.compile(src).cached and not rt.compile(src).cached
    assert not (cache_dir / "nvrtc").exists()
    monkeypatch.delenv("CUTE_PY_CACHE")
    assert not rt.compile(src, cache=False).cached and not (cache_dir / "nvrtc").exists()
    rt.compile(src)
    (meta,) = (cache_dir / "nvrtc").glob("*.json")
    meta.write_text("{ not json")
    p = rt.compile(src)                                            # damaged entry: a miss, then rewritten
    assert not p.cached and rt.compile(src).cached
    (cubin,) = (cache_dir / "nvrtc").glob("*.cubin")
    cubin.write_bytes(b"\x7fELF truncated")
    assert not rt.compile(src).cached                              # checksum mismatch: a miss
    assert rt_cache.clear() == 2 and not rt.compile(src).cached


def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("CUTE_PY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert rt_cache.cache_dir() == tmp_path / "xdg" / "cute_py"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert rt_cache.cache_dir() == tmp_path / "home" / ".cache" / "cute_py"
    monkeypatch.setenv("CUTE_PY_CACHE_DIR", str(tmp_path / "moved"))
    assert rt_cache.cache_dir() == tmp_path / "moved"
    for off in ("0", "off", "False", "no"):
        monkeypatch.setenv("CUTE_PY_CACHE", off)
        assert not rt_cache.cache_enabled()
    monkeypatch.setenv("CUTE_PY_CACHE", "1")
    assert rt_cache.cache_enabled()


def test_cache_key_covers_every_input():
    base = ("src", ("--use_fast_math",), "sm_90a", (13, 0), "k.cu")
    keys = {rt_cache.cache_key(*base)}
    for i, alt in enumerate(("src ", ("-O2",), "sm_100a", (13, 5), "j.cu")):
        args = list(base)
        args[i] = alt
        keys.add(rt_cache.cache_key(*args))
    keys.add(rt_cache.cache_key("src", ("-O3", "-g"), "sm_90a", (13, 0), "k.cu"))
    assert len(keys) == 7


# ---------------------------------------------------------------------------
# Missing pieces: clear errors naming the fix


def test_missing_nvrtc_library_names_the_wheel(monkeypatch):
    class DynamicLibNotFoundError(RuntimeError):
        pass

    class FakeNvrtc:
        @staticmethod
        def nvrtcVersion():
            raise DynamicLibNotFoundError('Failure finding "libnvrtc.so.13"')

    monkeypatch.setattr(rt_nvrtc, "_NVRTC", FakeNvrtc)
    monkeypatch.setattr(rt_nvrtc, "_VERSION", None)
    with pytest.raises(rt.NvrtcNotFoundError) as ei:
        rt.compile("int x;")
    assert 'pip install "cute-py[cuda]"' in str(ei.value) and "nvidia-cuda-nvrtc" in str(ei.value)
    assert isinstance(ei.value, ImportError)


def test_missing_cuda_bindings_names_the_extra(monkeypatch):
    monkeypatch.setattr(rt_nvrtc, "_NVRTC", None)
    monkeypatch.setattr(rt_nvrtc, "_VERSION", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    with pytest.raises(rt.CudaNotInstalledError, match=r'pip install "cute-py\[cuda\]"'):
        rt.compile("int x;")


def test_no_gpu_error_says_compiling_still_works():
    try:
        rt.device()
    except rt.NoDeviceError as e:
        assert "compile-only operations still work" in str(e)
    except rt.CudaNotInstalledError:
        pytest.skip("cuda-bindings not installed")
    else:
        pytest.skip("a GPU is present: the no-device path cannot be exercised")


@needs_nvrtc
def test_program_kernel_without_gpu_raises_no_device():
    p = rt.compile(KERNELS["mbar_loop"])
    with pytest.raises(KeyError, match="mbar_loop"):
        p.kernel("nope")
    try:
        rt.device()
    except rt.NoDeviceError:
        with pytest.raises(rt.NoDeviceError, match="compile-only"):
            p.kernel("mbar_loop")
    else:
        pytest.skip("a GPU is present")


def test_importing_runtime_imports_no_cuda_and_no_torch():
    code = ("import sys, cute_py, cute_py.runtime, cute_py.runtime.tensormap; "
            "bad = [m for m in sys.modules if m == 'cuda' or m.startswith(('cuda.', 'torch', 'cupy'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


# ---------------------------------------------------------------------------
# The kernels of tests/gpu compile here (their launches run on the GPU machine)

sys.path.insert(0, os.path.join(HERE, "gpu"))
import cases as gpu_cases  # noqa: E402

GPU_CASES = ([("tma", m, t, s) for m in gpu_cases.MAJORS for t in gpu_cases.TMA_DTYPES for s in gpu_cases.SWIZZLES]
             + [("multicast", c) for c in (2, 4)] + [("hier", n) for n in sorted(gpu_cases.HIER_CASES)]
             + [("wgmma", n, m, s) for m in gpu_cases.MAJORS for s in gpu_cases.SWIZZLES for n in gpu_cases.WGMMA_NS])


def _build(spec):
    kind = spec[0]
    if kind == "tma":
        return gpu_cases.tma_case(*spec[1:])
    if kind == "multicast":
        return gpu_cases.multicast_case(spec[1])
    if kind == "hier":
        return gpu_cases.hier_tma_case(spec[1])
    return gpu_cases.wgmma_case(*spec[1:])


@needs_nvrtc
@pytest.mark.parametrize("spec", GPU_CASES, ids=lambda s: "-".join(map(str, s)))
def test_gpu_test_kernels_compile(spec):
    case = _build(spec)
    p = rt.compile(case.source)
    k = p.kernels[case.kernel]
    assert k.registers > 0 and k.spill_bytes == 0 and k.stack_bytes == 0
    assert not p.warnings
    assert case.dyn_smem <= 227 * 1024
