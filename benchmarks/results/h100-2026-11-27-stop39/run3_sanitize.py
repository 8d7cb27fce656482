"""Under compute-sanitizer: the staged layernorm_quant rows (several rows a
block: more rows than 2 blocks an SM) and pipelined rope tokens, each checked
against calls the old paths serve (chunks of <= SM-count rows; one token)."""
import torch, hetkern
sms = torch.cuda.get_device_properties(0).multi_processor_count
FP8 = torch.float8_e4m3fn
for dtype, hidden in ((torch.bfloat16, 16384), (torch.bfloat16, 12288), (torch.float32, 8192)):
    rows = 3 * sms + 5
    g = torch.Generator(device="cuda").manual_seed(hidden)
    x = torch.randn(rows, hidden, device="cuda", generator=g).to(dtype)
    w = torch.randn(hidden, device="cuda", generator=g).to(dtype)
    b = torch.randn(hidden, device="cuda", generator=g).to(dtype)
    s = torch.tensor([0.02], device="cuda")
    whole = torch.empty(rows, hidden, dtype=FP8, device="cuda")
    hetkern.layernorm_quant(whole, x, w, s, b, 1e-5)
    for i in range(0, rows, 64):
        part = torch.empty(min(64, rows - i), hidden, dtype=FP8, device="cuda")
        hetkern.layernorm_quant(part, x[i:i + 64], w, s, b, 1e-5)
        assert torch.equal(whole[i:i + 64].view(torch.uint8), part.view(torch.uint8)), (dtype, hidden, i)
    print("layernorm_quant staged", dtype, hidden, rows, "ok")
tokens, heads, kv, hs = 5 * sms * 6 + 7, 32, 8, 128
pos = torch.randint(0, 4096, (tokens,), device="cuda")
inv = 1.0 / (10000.0 ** (torch.arange(0, hs, 2, dtype=torch.float) / hs))
f = torch.outer(torch.arange(4096, dtype=torch.float), inv)
cache = torch.cat((f.cos(), f.sin()), -1).to(torch.bfloat16).cuda()
q = torch.randn(tokens, heads * hs, device="cuda").to(torch.bfloat16)
k = torch.randn(tokens, kv * hs, device="cuda").to(torch.bfloat16)
q1, k1 = q.clone(), k.clone()
hetkern.rope(pos, q1, k1, hs, cache, True)
q2, k2 = q.clone(), k.clone()
for t in range(0, tokens, 997):
    hetkern.rope(pos[t:t + 1], q2[t:t + 1], k2[t:t + 1], hs, cache, True)
    assert torch.equal(q1[t], q2[t]) and torch.equal(k1[t], k2[t]), t
print("rope pipelined", tokens, "tokens ok")
