import torch, cute_py
BLOCK=128
for trial in range(2):
  for M,N,K in [(1024,1536,4096),(2048,2048,8192)]:
    gen = torch.Generator(device="cuda").manual_seed(7)
    a8 = torch.randn(M, K, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    b8 = torch.randn(N, K, device="cuda", generator=gen).to(torch.float8_e4m3fn).t()
    kb, nb = -(-K // BLOCK), -(-N // BLOCK)
    res=[]
    for mode in ("tensor","row","block"):
        if mode == "tensor":
            sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda"); ea, eb = sa.double(), sb.double()
        elif mode == "row":
            sa, sb = torch.rand(M, 1, device="cuda", generator=gen) + 0.5, torch.rand(1, N, device="cuda", generator=gen) + 0.5; ea, eb = sa.double(), sb.double()
        else:
            sa = (torch.rand(kb, M, device="cuda", generator=gen) + 0.5).t(); sb = torch.rand(kb, nb, device="cuda", generator=gen) + 0.5
            ea = sa.double().repeat_interleave(BLOCK, 1)[:, :K]; eb = sb.double().repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)[:K, :N]
        ref = (a8.double() * ea) @ (b8.double() * eb)
        d = cute_py.scaled_gemm(a8, b8, sa, sb, out_dtype="f32")
        e = float((d.double() - ref).norm() / ref.norm())
        row=[mode, f"{e:.2e}"]
        if mode != "block":
            for fa in (False, True):
                t = torch._scaled_mm(a8, b8, scale_a=sa.float(), scale_b=sb.float(), out_dtype=torch.float32, use_fast_accum=fa)
                row.append(f"torch fast={fa} {float((t.double() - ref).norm() / ref.norm()):.2e}")
        res.append(" ".join(row))
    print(M,N,K, " | ".join(res), flush=True)
