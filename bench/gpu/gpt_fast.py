"""The reference for FastKernels' decode step: a gpt-fast-style Llama-3.1-8B decode step
in PyTorch on one GPU, bf16, at the published config (specs/architectures/llama-3.1-8b.yaml):
a static KV cache, fused QKV and gate/up weights, SDPA, the whole step captured in a
CUDA graph and replayed. Grouped-query attention runs as SDPA over [batch, kv_heads,
group, head_dim] queries (the query heads of a KV head as its query rows; one mask row
for all), so K and V are read once and never repeated per query head.

For each BATCH:CONTEXT it times --steps decode steps at positions CONTEXT, CONTEXT + 1,
... (a graph replay each, CUDA events) and a few eager steps, and prints the median step
against the floor: weight bytes plus the KV bytes a step reads, over the copy bandwidth
measured in the same run (a device-to-device copy of 2 GiB, read + write).
Random weights and cache contents: the timing does not depend on the values.

With --prefill BATCH:LEN it also times the prefill of BATCH prompts of LEN tokens through
the same weights (eager: fused QKV and gate/up, causal SDPA with grouped-query heads,
the K and V written to the static cache, the LM head on each prompt's last token only),
the median of --prefill-runs, in tokens/s.

With --model mixtral-8x7b the same step runs Mixtral-8x7B's config
(specs/architectures/mixtral-8x7b.yaml): 8 experts, top 2 renormalised, each layer's
experts' gate/up weights stored [E, 2I, H] and down [E, H, I]. The MoE MLP is written two
ways, both graph-capturable (no host sync), and the step takes the one that reads less:
  gather   (gpt-fast's Mixtral form): each token's two experts' weights are indexed out
           and applied with einsum, reading 2 experts a token; at batch 1 that is the
           chosen experts only;
  dense    every expert on every token as one batched matmul, the router's top-2
           weights (zero elsewhere) combining them: each expert's weights read once,
           which the batch touches anyway from a handful of tokens on.
The floor counts the weights a step must read: everything outside the experts, and the
experts the step's routing chose (counted from the routing of the timed step).

Usage: python3 bench/gpu/gpt_fast.py 1:1024 8:512 32:2048 [--steps 16] [--prefill 1:4096]
       [--model llama-3.1-8b|mixtral-8x7b]"""
import argparse
import statistics

import torch
import torch.nn.functional as F

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, INTER, VOCAB = 4096, 32, 32, 8, 128, 14336, 128256
THETA, EPS = 500000.0, 1e-5
EXPERTS, TOP_K = 0, 0  # a dense MLP


def use_model(name):
    """Sets the config of `name` (the published values in specs/architectures/)."""
    global VOCAB, THETA, EXPERTS, TOP_K
    if name == "mixtral-8x7b":
        VOCAB, THETA, EXPERTS, TOP_K = 32000, 1000000.0, 8, 2
    elif name != "llama-3.1-8b":
        raise SystemExit(f"unknown model {name}: llama-3.1-8b or mixtral-8x7b")


def copy_bandwidth():
    n = 1 << 30  # bf16 elements: 2 GiB
    a = torch.empty(n, dtype=torch.bfloat16, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(10):
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    del a, b
    return 2 * 2 * n / statistics.median(times)


class Llama:
    def __init__(self, batch, max_len):
        g = torch.Generator(device="cuda").manual_seed(0)

        def w(*shape):
            return (torch.randn(*shape, device="cuda", generator=g) * 0.02).to(torch.bfloat16)

        self.embed = w(VOCAB, HIDDEN)
        self.lm_head = w(VOCAB, HIDDEN)
        self.final_norm = torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16)
        self.layers = []
        for _ in range(LAYERS):
            mlp = {"w13": w(2 * INTER, HIDDEN), "w2": w(HIDDEN, INTER)} if not EXPERTS else {
                "router": w(EXPERTS, HIDDEN), "w13": w(EXPERTS, 2 * INTER, HIDDEN), "w2": w(EXPERTS, HIDDEN, INTER)}
            self.layers.append({
                "wqkv": w((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN),
                "wo": w(HIDDEN, HEADS * HEAD_DIM),
                **mlp,
                "n1": torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16),
                "n2": torch.ones(HIDDEN, device="cuda", dtype=torch.bfloat16),
                "k": w(batch, KV_HEADS, max_len, HEAD_DIM),
                "v": w(batch, KV_HEADS, max_len, HEAD_DIM),
            })
        inv = 1.0 / THETA ** (torch.arange(0, HEAD_DIM, 2, device="cuda", dtype=torch.float32) / HEAD_DIM)
        ang = torch.outer(torch.arange(max_len, device="cuda", dtype=torch.float32), inv)
        self.cos, self.sin = ang.cos(), ang.sin()
        self.positions = torch.arange(max_len, device="cuda")
        self.max_len = max_len

    def weight_bytes(self, experts_touched=None):
        """Bytes of the weights a step reads; with experts, those of `experts_touched`
        experts a layer (a list, one count per layer), or all of them."""
        n = self.lm_head.numel() + self.final_norm.numel()
        for i, l in enumerate(self.layers):
            n += sum(l[k].numel() for k in ("wqkv", "wo", "n1", "n2", "router") if k in l)
            per_expert = (l["w13"].numel() + l["w2"].numel()) // max(EXPERTS, 1)
            n += per_expert * (experts_touched[i] if EXPERTS and experts_touched is not None else max(EXPERTS, 1))
        return 2 * n  # the embedding reads one row a token: left out

    def mlp(self, l, h, touched=None):  # h [..., H]
        if not EXPERTS:
            gate, up = F.linear(h, l["w13"]).chunk(2, dim=-1)
            return F.linear(F.silu(gate) * up, l["w2"])
        shape = h.shape
        x = h.reshape(-1, HIDDEN)  # [T, H]
        probs = F.linear(x, l["router"]).float().softmax(dim=-1)
        top_w, top_i = probs.topk(TOP_K, dim=-1)  # [T, K]
        top_w = (top_w / top_w.sum(dim=-1, keepdim=True)).to(x.dtype)
        if touched is not None:
            touched.append(top_i.unique().numel())
        t = x.size(0)
        if t * TOP_K < EXPERTS:  # gather: each token's chosen experts only
            w13, w2 = l["w13"][top_i], l["w2"][top_i]  # [T, K, 2I, H], [T, K, H, I]
            gate, up = torch.einsum("th,tkoh->tko", x, w13).chunk(2, dim=-1)
            y = torch.einsum("tki,tkhi->tkh", F.silu(gate) * up, w2)
            out = torch.einsum("tkh,tk->th", y, top_w)
        else:  # dense: every expert once, combined by the top-k weights
            gate, up = torch.matmul(x.unsqueeze(0), l["w13"].transpose(1, 2)).chunk(2, dim=-1)  # [E, T, I]
            y = torch.matmul(F.silu(gate) * up, l["w2"].transpose(1, 2))  # [E, T, H]
            combine = torch.zeros(t, EXPERTS, device=x.device, dtype=x.dtype).scatter(1, top_i, top_w)  # [T, E]
            out = torch.einsum("eth,te->th", y, combine)
        return out.reshape(shape)

    @staticmethod
    def rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w

    @staticmethod
    def rotate(x, c, s):  # neox halves, as the HF Llama; c and s broadcast over x [B, S, h, D]
        x1, x2 = x.float().chunk(2, dim=-1)
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(x.dtype)

    def rope(self, x, pos):  # x [B, 1, h, D] at position pos
        return self.rotate(x, self.cos[pos].view(1, 1, 1, -1), self.sin[pos].view(1, 1, 1, -1))

    def prefill(self, tokens):  # tokens [B, S] int64: positions 0 .. S-1; logits of the last one
        b, n = tokens.shape
        x = F.embedding(tokens, self.embed)  # [B, S, H]
        c, s = self.cos[:n].view(1, n, 1, -1), self.sin[:n].view(1, n, 1, -1)

        for l in self.layers:
            h = self.rms(x, l["n1"])
            q, k, v = F.linear(h, l["wqkv"]).split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
            q = self.rotate(q.view(b, n, HEADS, HEAD_DIM), c, s).transpose(1, 2)
            k = self.rotate(k.view(b, n, KV_HEADS, HEAD_DIM), c, s).transpose(1, 2)
            v = v.view(b, n, KV_HEADS, HEAD_DIM).transpose(1, 2)
            l["k"][:, :, :n] = k
            l["v"][:, :, :n] = v
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + F.linear(o.transpose(1, 2).reshape(b, n, HEADS * HEAD_DIM), l["wo"])
            x = x + self.mlp(l, self.rms(x, l["n2"]))
        return F.linear(self.rms(x[:, -1:], self.final_norm), self.lm_head)

    def step(self, tokens, pos, touched=None):  # tokens [B, 1] int64, pos [1] int64 (device tensors)
        b = tokens.size(0)
        x = F.embedding(tokens, self.embed)  # [B, 1, H]
        mask = (self.positions <= pos).view(1, 1, 1, self.max_len)
        group = HEADS // KV_HEADS
        for l in self.layers:
            h = self.rms(x, l["n1"])
            qkv = F.linear(h, l["wqkv"])
            q, k, v = qkv.split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
            q = self.rope(q.view(b, 1, HEADS, HEAD_DIM), pos)
            k = self.rope(k.view(b, 1, KV_HEADS, HEAD_DIM), pos)
            l["k"].index_copy_(2, pos, k.transpose(1, 2))
            l["v"].index_copy_(2, pos, v.view(b, 1, KV_HEADS, HEAD_DIM).transpose(1, 2))
            qg = q.view(b, KV_HEADS, group, HEAD_DIM)  # a KV head's query heads as its query rows
            o = F.scaled_dot_product_attention(qg, l["k"], l["v"], attn_mask=mask)
            x = x + F.linear(o.reshape(b, 1, HEADS * HEAD_DIM), l["wo"])
            x = x + self.mlp(l, self.rms(x, l["n2"]), touched)
        return F.linear(self.rms(x, self.final_norm), self.lm_head)


def time_shape(batch, ctx, steps, bw):
    model = Llama(batch, ctx + steps)
    tokens = torch.randint(0, VOCAB, (batch, 1), device="cuda")
    pos = torch.tensor([ctx], device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            model.step(tokens, pos)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        logits = model.step(tokens, pos)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn):
        out = []
        for i in range(steps):
            pos.fill_(ctx + i)
            torch.cuda.synchronize()
            s.record()
            fn()
            e.record()
            e.synchronize()
            out.append(s.elapsed_time(e) / 1e3)
        return statistics.median(out)

    graph_s = timed(graph.replay)
    with torch.no_grad():
        eager_s = timed(lambda: model.step(tokens, pos))
    kv_bytes = 2 * 2 * LAYERS * batch * KV_HEADS * (ctx + steps) * HEAD_DIM  # K and V, bf16, the masked length
    touched = None
    if EXPERTS:  # the experts this step's routing chose, layer by layer
        touched = []
        with torch.no_grad():
            model.step(tokens, pos, touched)
    weights = model.weight_bytes(touched)
    floor = (weights + kv_bytes) / bw
    assert torch.isfinite(logits.float()).all()
    moe = f", experts read a layer {statistics.mean(touched):.2f} of {EXPERTS}" if touched else ""
    print(f"gpt-fast batch {batch:>3} context {ctx:>5}: graph {1e3 * graph_s:8.3f} ms, eager {1e3 * eager_s:8.3f} ms, "
          f"floor {1e3 * floor:7.3f} ms (weights {weights / 1e9:.2f} GB + KV {kv_bytes / 1e9:.2f} GB{moe}), "
          f"graph at {100 * floor / graph_s:5.1f}% of the floor", flush=True)
    del model, graph, logits
    torch.cuda.empty_cache()


def time_prefill(batch, length, runs):
    model = Llama(batch, length)
    tokens = torch.randint(0, VOCAB, (batch, length), device="cuda")
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with torch.no_grad():
        for i in range(runs + 2):  # two warm-up runs
            torch.cuda.synchronize()
            s.record()
            logits = model.prefill(tokens)
            e.record()
            e.synchronize()
            if i >= 2:
                times.append(s.elapsed_time(e) / 1e3)
    assert torch.isfinite(logits.float()).all()
    t = statistics.median(times)
    print(f"gpt-fast prefill batch {batch:>3} length {length:>5}: eager {1e3 * t:8.3f} ms, "
          f"{batch * length / t:,.0f} tokens/s (median of {runs})", flush=True)
    del model, logits
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shapes", nargs="+", help="BATCH:CONTEXT")
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--prefill", action="append", default=[], help="BATCH:LEN (repeatable)")
    ap.add_argument("--prefill-runs", type=int, default=5)
    ap.add_argument("--model", default="llama-3.1-8b", help="llama-3.1-8b (default) or mixtral-8x7b")
    a = ap.parse_args()
    use_model(a.model)
    torch.backends.cuda.matmul.allow_tf32 = False
    bw = copy_bandwidth()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, copy bandwidth {bw / 1e9:.0f} GB/s (read + write), "
          f"{a.model}")
    for shape in a.shapes:
        batch, ctx = (int(v) for v in shape.split(":"))
        time_shape(batch, ctx, a.steps, bw)
    for shape in a.prefill:
        batch, length = (int(v) for v in shape.split(":"))
        time_prefill(batch, length, a.prefill_runs)


if __name__ == "__main__":
    main()
