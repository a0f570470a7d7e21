"""Times torch eager and torch.compile on the op instances fk-bench-ops measured (its
--json rows: same op semantics, shapes and dtype) and prints them side by side with
FastKernels' baselines: median us, share of the copy bandwidth fk-bench-ops measured,
and FastKernels' speedup over each. torch is the independent reference here, never a
dependency of the product. Timing: triton.testing.do_bench (median, its L2 flush).

Usage: python3 bench/gpu/ops_torch.py OPS.jsonl [OPS2.jsonl ...]
"""
import json
import sys

import torch
import torch.nn.functional as F
import triton.testing

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def uniform(shape, dt, lo=-1.0, hi=1.0):
    return (torch.rand(shape, device="cuda", dtype=torch.float32) * (hi - lo) + lo).to(dt)


def rms(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rope(q, k, pos, cache, hs, neox):
    rot = cache.shape[1]
    half = rot // 2
    cs = cache[pos]
    cos, sin = cs[:, None, :half], cs[:, None, half:]

    def one(x):
        t = x.shape[0]
        x = x.view(t, -1, hs)
        r, rest = x[..., :rot], x[..., rot:]
        if neox:
            x1, x2 = r[..., :half], r[..., half:]
            out = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
        else:
            x1, x2 = r[..., 0::2], r[..., 1::2]
            out = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
        return torch.cat((out, rest), dim=-1).view(t, -1)

    return one(q), one(k)


def build(row):
    """(eager function, compiled-able function) of the row's op, or None when not covered."""
    op, d, p, dt = row["op"], row["dims"], row["params"], DTYPES[row["dtype"]]
    if op == "rms_norm":
        x, w = uniform((d["tokens"], d["hidden"]), dt, -2, 2), uniform((d["hidden"],), dt, 0.5, 1.5)
        return lambda: rms(x, w, p[0])
    if op == "fused_add_rms_norm":
        x, r = uniform((d["tokens"], d["hidden"]), dt), uniform((d["tokens"], d["hidden"]), dt, -2, 2)
        w = uniform((d["hidden"],), dt, 0.5, 1.5)

        def f():
            s = x + r
            return rms(s, w, p[0]), s
        return f
    if op in ("silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul"):
        x = uniform((d["tokens"], 2 * d["d"]), dt, -4, 4)
        n = d["d"]
        act = {"silu_and_mul": F.silu, "gelu_and_mul": F.gelu,
               "gelu_tanh_and_mul": lambda v: F.gelu(v, approximate="tanh")}[op]
        return lambda: act(x[:, :n]) * x[:, n:]
    if op == "rotary_embedding":
        hs = int(p[0])
        neox = bool(p[1]) if len(p) > 1 else True
        t = d["tokens"]
        pos = torch.randint(0, d["max_positions"], (t,), device="cuda")
        q, k = uniform((t, d["q_heads"] * hs), dt, -2, 2), uniform((t, d["kv_heads"] * hs), dt, -2, 2)
        cache = uniform((d["max_positions"], d["rot_dim"]), dt)
        return lambda: rope(q, k, pos, cache, hs, neox)
    if op == "embedding":
        ids = torch.randint(0, d["rows"], (d["tokens"],), device="cuda")
        w = uniform((d["rows"], d["hidden"]), dt)
        return lambda: F.embedding(ids, w)
    if op == "kv_cache_write":
        b, hk, hd, L = d["batch"], d["kv_heads"], d["head_dim"], d["cache_len"]
        q_len, q0 = int(p[0]), int(p[1])
        k, v = uniform((b * q_len, hk, hd), dt), uniform((b * q_len, hk, hd), dt)
        kc, vc = uniform((b, L, hk, hd), dt), uniform((b, L, hk, hd), dt)

        def f():
            kc[:, q0:q0 + q_len] = k.view(b, q_len, hk, hd)
            vc[:, q0:q0 + q_len] = v.view(b, q_len, hk, hd)
        return f
    if op == "add":
        a, c = uniform((d["elements"],), dt, -2, 2), uniform((d["elements"],), dt, -2, 2)
        return lambda: a + c
    if op == "linear":
        x = uniform((d["tokens"], d["in"]), dt)
        w = uniform((d["out"], d["in"]), dt, -0.02, 0.02)
        bias = uniform((d["out"],), dt, -0.1, 0.1) if d.get("bias") else None
        return lambda: F.linear(x, w, bias)
    if op == "attention":
        scale, q_len, q0, causal, window, softcap = p[0], int(p[1]), int(p[2]), bool(p[3]), p[4], p[5]
        if window > 0 or softcap > 0:
            return None  # SDPA has neither; compared where the model uses plain attention
        b, hq, hk, hd = d["batch"], d["q_heads"], d["kv_heads"], d["head_dim"]
        L = max(d["cache_len"], q0 + q_len)
        q = uniform((b, hq, q_len, hd), dt)
        kc, vc = uniform((b, hk, L, hd), dt), uniform((b, hk, L, hd), dt)
        kv = q0 + q_len
        is_causal = causal and q_len > 1
        if is_causal and q0 != 0:
            return None  # chunked prefill: SDPA's causal mask is top-left aligned
        return lambda: F.scaled_dot_product_attention(q, kc[:, :, :kv], vc[:, :, :kv], is_causal=is_causal,
                                                      scale=scale, enable_gqa=hq != hk)
    if op == "argmax":
        x = uniform((d["tokens"], d["vocab"]), dt, -8, 8)
        return lambda: x.argmax(-1)
    if op == "softcap":
        x = uniform((d["elements"],), dt, -60, 60)
        return lambda: p[0] * torch.tanh(x / p[0])
    return None


def time_us(fn):
    return 1e3 * triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main(paths):
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = [json.loads(line) for path in paths for line in open(path) if line.strip()]
    # With fk-bench-ops --device-span, median_s is the device's busy time in each call,
    # as do_bench's time is (its L2 flush before each call hides the launch).
    fk_col = "fk busy" if rows and "device_busy_s" in rows[0] else "fk us"
    print(f"{'op':<20} {'role':<22} {'dtype':<5} {fk_col:>9} {'eager us':>9} {'compile us':>10} "
          f"{'fk %copy':>8} {'compile %copy':>13} {'vs eager':>8} {'vs compile':>10}")
    for row in rows:
        fn = build(row)
        name = f"{row['op']:<20} {row['role']:<22} {row['dtype']:<5} {1e6 * row['median_s']:9.2f}"
        if fn is None:
            print(f"{name}  (no torch counterpart for these params)")
            continue
        eager = time_us(fn)
        torch._dynamo.reset()
        compiled = torch.compile(fn)
        compiled()
        comp = time_us(compiled)
        fk_us = 1e6 * row["median_s"]
        bw = row["copy_bw"]
        pct = lambda us: 100 * row["bytes"] / (us * 1e-6) / bw
        print(f"{name} {eager:9.2f} {comp:10.2f} {pct(fk_us):7.1f}% {pct(comp):12.1f}% "
              f"{eager / fk_us:7.2f}x {comp / fk_us:9.2f}x", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
