import os, sys, time
from cuda.bindings import nvrtc
print(nvrtc.nvrtcVersion())
src = b'extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 3.0f; }'
def comp(src, opts):
    err, prog = nvrtc.nvrtcCreateProgram(src, b"kernel.cu", 0, [], [])
    r = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    err, n = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" "*n; nvrtc.nvrtcGetProgramLog(prog, log)
    err, n = nvrtc.nvrtcGetCUBINSize(prog); c = b" "*n; nvrtc.nvrtcGetCUBIN(prog, c)
    return log.rstrip(b"\0").decode(), c
o = [b"--gpu-architecture=sm_90a", b"--ptxas-options=-v"]
for i in range(2):
    t=time.time(); log, c = comp(src, o); print(i, "%.3f"%(time.time()-t), len(c), repr(log[:200]))
for extra in (b"--no-cache", b"-no-cache", b"--ptxas-options=--no-cache", b"--ptxas-options=-v,-O3", b"-Xptxas=-v", b"--dlink-time-opt"):
    try:
        log, c = comp(src, o + [extra]); print(extra, len(c), repr(log[:300]))
    except Exception as e: print(extra, "EXC", e)
src2 = src.replace(b"3.0f", b"4.0f")
log, c = comp(src2, [b"--gpu-architecture=sm_90a", b"--ptxas-options=--verbose"]); print("verbose", repr(log[:200]))
log, c = comp(src2, [b"--gpu-architecture=sm_90a", b"--ptxas-options=--verbose"]); print("verbose2", repr(log[:200]))
log, c = comp(src2, [b"--gpu-architecture=sm_90a", b"--ptxas-options=-v", b"--ptxas-options=-O3"]); print("v+O3", repr(log[:200]))
os.system("ls -la ~/.nv 2>&1; ls ~/.nv/ComputeCache 2>&1 | head; env | grep -i cache")
