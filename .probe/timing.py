import os, sys, time, tempfile, subprocess
sys.path.insert(0, "tests/gpu")
d = tempfile.mkdtemp()
os.environ["CUTE_PY_CACHE_DIR"] = d
t = time.perf_counter()
from cute_py import runtime as rt
import cases
t_imp = time.perf_counter() - t
srcs = {"tma K bf16 sw128": cases.tma_case("K", "bf16", 128).source,
        "wgmma 64x256x64 K sw128": cases.wgmma_case(256, "K", 128).source,
        "multicast x2": cases.multicast_case(2).source}
t = time.perf_counter(); rt.nvrtc_version(); t_load = time.perf_counter() - t
print(f"import cute_py.runtime {t_imp*1e3:.0f} ms (no cuda), first NVRTC load {t_load*1e3:.0f} ms")
for name, src in srcs.items():
    t = time.perf_counter(); p = rt.compile(src); cold = time.perf_counter() - t
    hits = []
    for _ in range(20):
        t = time.perf_counter(); q = rt.compile(src); hits.append(time.perf_counter() - t)
    hits.sort()
    assert q.cached
    print(f"{name}: cold {cold*1e3:.0f} ms, cached hit median {hits[10]*1e3:.2f} ms (max {hits[-1]*1e3:.2f}), cubin {len(p.cubin)} B")
code = ("import time; t=time.perf_counter(); from cute_py import runtime as rt; import sys; sys.path.insert(0,'tests/gpu'); "
        "src=open('%s').read(); t1=time.perf_counter(); p=rt.compile(src); t2=time.perf_counter(); "
        "print(f'fresh process: import {(t1-t)*1e3:.0f} ms, first compile() (cache hit incl. NVRTC load) {(t2-t1)*1e3:.0f} ms, cached={p.cached}')")
f = os.path.join(d, "src.cu"); open(f, "w").write(srcs["wgmma 64x256x64 K sw128"])
subprocess.run([sys.executable, "-c", code % f], env=dict(os.environ, PYTHONPATH=os.getcwd()))
