"""One small exact GEMM per scheduler and mainloop, for ``compute-sanitizer --tool memcheck``.

Each case runs once on small integers (exact in f32) and is compared with a float64 reference; the script exits 1
if any result is wrong, and memcheck reports any out-of-bounds or misaligned access of the kernels. Run::

    compute-sanitizer --tool memcheck --report-api-errors no python benchmarks/memcheck_collectives.py

(initcheck flags TMA-stored outputs although their values are exact: judge those by memcheck and the values.)
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main() -> int:
    import numpy as np
    import torch

    import cute_py
    from cute_py.emit import GemmSpec

    rng = np.random.default_rng(7)
    bad = 0

    def ints(*shape):
        return torch.from_numpy(rng.integers(-3, 4, size=shape).astype(np.float32))

    dense = {
        "tile": dict(tile=(128, 128, 64)),
        "split_k": dict(tile=(128, 128, 64), split_k=3),
        "split_k pingpong": dict(tile=(128, 64, 64), split_k=2, schedule="pingpong"),
        "stream_k": dict(tile=(128, 128, 64), scheduler="stream_k"),
        "stream_k cluster": dict(tile=(128, 256, 64), scheduler="stream_k", cluster=(2, 1)),
        "stream_k pingpong direct": dict(tile=(128, 128, 64), scheduler="stream_k", schedule="pingpong",
                                         epilogue="direct"),
        "pingpong cluster": dict(tile=(128, 64, 64), schedule="pingpong", cluster=(1, 2)),
        "direct loads": dict(tile=(128, 128, 64), load_a=2, load_b=16),
        "direct a, b multicast": dict(tile=(128, 128, 64), load_a=2, cluster=(2, 1)),
        "direct b in a cluster": dict(tile=(128, 128, 64), load_b=16, cluster=(2, 1)),
    }
    for name, kw in dense.items():
        for M, N, K in ((200, 264, 136), (1160, 1344, 648)):
            a, b = ints(M, K), ints(K, N)
            spec = GemmSpec(**kw)
            if spec.load_a or spec.load_b:
                a_dev = torch.zeros(M, K + 1, dtype=torch.bfloat16, device="cuda")[:, 1:]   # 2-byte aligned rows
                a_dev.copy_(a.bfloat16())
            else:
                a_dev = a.bfloat16().cuda()
            b_dev = b.t().contiguous().bfloat16().cuda().t()           # (K, N), K contiguous: B K-major
            d = cute_py.gemm(a_dev, b_dev, spec=spec)
            ok = torch.equal(d.float().cpu(), (a.double() @ b.double()).bfloat16().float())
            bad += not ok
            print(f"{name:28s} {M}x{N}x{K} {spec.name}: {'exact' if ok else 'WRONG'}", flush=True)

    # fp8 promotion (blockwise scales) with the tile scheduler and stream-K; tiles over two scale blocks (f32 and
    # UE8M0 scales), and a 160-wide tile staged for its TMA store in 32-column chunks
    for kw in (dict(tile=(128, 128, 128)), dict(tile=(128, 128, 128), scheduler="stream_k"),
               dict(tile=(128, 144, 128)), dict(tile=(64, 160, 128), consumers=1, scale_type="ue8m0"),
               dict(tile=(128, 160, 128))):
        M, N, K = 520, 640, 1024
        a, b = ints(M, K), ints(K, N)
        t = torch.float8_e8m0fnu if kw.get("scale_type") == "ue8m0" else torch.float32
        sa = torch.ones(M, K // 128, device="cuda").to(t)
        sb = torch.ones(K // 128, N // 128, device="cuda").to(t)
        spec = GemmSpec(dtype="e4m3", scale="block", **kw)
        a8 = a.cuda().to(torch.float8_e4m3fn)
        b8 = b.t().contiguous().cuda().to(torch.float8_e4m3fn).t()
        d = cute_py.scaled_gemm(a8, b8, sa, sb, spec=spec)
        ok = torch.equal(d.float().cpu(), (a.double() @ b.double()).bfloat16().float())
        bad += not ok
        print(f"{'promoting ' + str(kw.get('scheduler', 'tile')):28s} {spec.name}: {'exact' if ok else 'WRONG'}", flush=True)

    # groups along M (MoE), along K (weight gradient) and a batch: their own schedulers, stream-K and split-K over
    # each, and groups along K in a cluster (a multicast of ragged K tiles)
    sizes = [200, 0, 64, 300]
    M, N, K, L = sum(sizes), 256, 192, len(sizes)
    a, w = ints(M, K), ints(L, K, N)
    x, dy = ints(M, K), ints(M, N)             # a weight gradient: D[g] = x[group rows].t() @ dy[group rows]
    a3, b3 = ints(3, 136, 200), ints(3, 200, 264)
    offs = torch.tensor(np.cumsum(sizes), dtype=torch.int32, device="cuda")
    layouts = {"m": dict(b="(N,K,L):(1,N,ldb_l)"), "k": dict(a="(M,K):(1,M)", b="(N,K):(1,N)", c="(M,N,L):(N,1,ldd_l)"),
               "batch": dict(a="(M,K,L):(K,1,lda_l)", b="(N,K,L):(1,N,ldb_l)", c="(M,N,L):(N,1,ldd_l)")}
    for form, extra in (("m", {}), ("k", {}), ("batch", {}), ("m", dict(scheduler="stream_k")),
                        ("k", dict(scheduler="stream_k")), ("batch", dict(scheduler="stream_k")),
                        ("m", dict(split_k=2)), ("k", dict(split_k=3)), ("batch", dict(split_k=2)),
                        ("k", dict(cluster=(2, 1))), ("k", dict(cluster=(1, 2), scheduler="stream_k"))):
        spec = GemmSpec(tile=(128, 128, 64), **layouts[form], **extra)
        if form == "m":
            d = cute_py.grouped_gemm(a.bfloat16().cuda(), w.bfloat16().cuda(), offs=offs, spec=spec)
            ref = torch.cat([a[o - s:o].double() @ w[g].double() for g, (s, o) in enumerate(zip(sizes, np.cumsum(sizes)))])
        elif form == "k":
            d = cute_py.grouped_gemm(x.bfloat16().cuda().t(), dy.bfloat16().cuda(), offs=offs, spec=spec)
            ref = torch.stack([x[o - s:o].double().t() @ dy[o - s:o].double() for s, o in zip(sizes, np.cumsum(sizes))])
        else:
            d = cute_py.bmm(a3.bfloat16().cuda(), b3.bfloat16().cuda(), spec=spec)
            ref = a3.double() @ b3.double()
        ok = torch.equal(d.float().cpu(), ref.bfloat16().float())
        bad += not ok
        print(f"{'groups ' + form:28s} {spec.name}: {'exact' if ok else 'WRONG'}", flush=True)
    torch.cuda.synchronize()
    print(f"{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
