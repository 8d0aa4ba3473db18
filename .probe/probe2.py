from cuda.bindings import nvrtc
import time
print(nvrtc.nvrtcVersion())
src = b'extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 5.0f; }'
def comp(src, opts):
    err, prog = nvrtc.nvrtcCreateProgram(src, b"kernel.cu", 0, [], [])
    r = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    err, n = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" "*n; nvrtc.nvrtcGetProgramLog(prog, log)
    err, n = nvrtc.nvrtcGetCUBINSize(prog); c = b" "*n; nvrtc.nvrtcGetCUBIN(prog, c)
    return r[0], log.rstrip(b"\0").decode(), c
o = [b"--gpu-architecture=sm_90a", b"--ptxas-options=-v", b"--no-cache"]
for i in range(3):
    t=time.time(); st, log, c = comp(src, o); print(i, st, "%.3f"%(time.time()-t), len(c), "Used" in log)
o = [b"--gpu-architecture=sm_90a", b"--ptxas-options=-v"]
for i in range(2):
    t=time.time(); st, log, c = comp(src, o); print('nc', i, st, "%.3f"%(time.time()-t), len(c), "Used" in log)
