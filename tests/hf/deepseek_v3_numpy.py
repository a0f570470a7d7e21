#!/usr/bin/env python3
"""DeepSeek-V3 against an independent numpy port of HF transformers' DeepseekV3ForCausalLM.

Until the HF parity fixture (tests/fixtures/hf/deepseek_v3, made with transformers on the
GPU machine) exists, this checks the same path another way: it writes a tiny DeepSeek-V3
checkpoint with HF's tensor names and config.json keys (random weights, numpy), computes
the logits with a numpy port of HF's forward in its naive form (keys and values
decompressed per head, the grouped sigmoid router with the correction bias, the shared
expert), then runs `fk import-hf` and `fk forward` (absorbed MLA, grouped_topk) in each
layout and compares the logits (relative L2 <= 1e-5). Two variants: q compression with
interleaved rope, and YaRN (its softmax mscale) with q_proj and rope over halves.

Usage: deepseek_v3_numpy.py FK WORK_DIR
"""
import json, os, struct, subprocess, sys
import numpy as np


def save_st(path, tensors):
    header, off, blobs = {}, 0, []
    for k, a in tensors.items():
        a = np.ascontiguousarray(a)
        dt = {np.float32: "F32", np.int64: "I64"}[a.dtype.type]
        b = a.tobytes(); header[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b); blobs.append(b)
    h = json.dumps(header).encode(); h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for b in blobs: f.write(b)

def load_st(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n)); data = f.read()
    out = {}
    for k, v in h.items():
        if k == "__metadata__": continue
        a, b = v["data_offsets"]; dt = {"F32": np.float32, "I64": np.int64}[v["dtype"]]
        out[k] = np.frombuffer(data[a:b], dtype=dt).reshape(v["shape"])
    return out

def reference(variant, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    V, H, I, L, NH = 131, 32, 64, 3, 4
    QR = 24 if variant == "base" else None
    KVR, NOPE, ROPE, VD = 16, 8, 8, 12
    E, K, MI, NSH, NG, TG, FD = 8, 2, 24, 1, 4, 2, 1
    SCALE_R, EPS, THETA = 2.5, 1e-6, 10000.0
    INTERLEAVE = variant == "base"
    cfg = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": V, "hidden_size": H,
           "intermediate_size": I, "num_hidden_layers": L, "num_attention_heads": NH, "num_key_value_heads": NH,
           "q_lora_rank": QR, "kv_lora_rank": KVR, "qk_nope_head_dim": NOPE, "qk_rope_head_dim": ROPE, "v_head_dim": VD,
           "n_routed_experts": E, "num_experts_per_tok": K, "moe_intermediate_size": MI, "n_shared_experts": NSH,
           "n_group": NG, "topk_group": TG, "first_k_dense_replace": FD, "norm_topk_prob": True,
           "routed_scaling_factor": SCALE_R, "rms_norm_eps": EPS, "rope_theta": THETA, "max_position_embeddings": 64,
           "hidden_act": "silu", "tie_word_embeddings": False, "rope_interleave": INTERLEAVE, "attention_bias": False}
    if variant == "yarn":
        cfg["rope_scaling"] = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 32.0,
                               "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0}
    json.dump(cfg, open(f"{out_dir}/config.json", "w"))
    rng = np.random.default_rng(5)
    W = {}
    def lin(name, o, i): W[name] = (rng.standard_normal((o, i)) * 0.1).astype(np.float32)
    def vec(name, n, c=1.0): W[name] = (c + 0.1 * rng.standard_normal(n)).astype(np.float32)
    W["model.embed_tokens.weight"] = (rng.standard_normal((V, H))).astype(np.float32)
    QK = NOPE + ROPE
    for l in range(L):
        p = f"model.layers.{l}."
        vec(p + "input_layernorm.weight", H); vec(p + "post_attention_layernorm.weight", H)
        if QR:
            lin(p + "self_attn.q_a_proj.weight", QR, H); vec(p + "self_attn.q_a_layernorm.weight", QR)
            lin(p + "self_attn.q_b_proj.weight", NH * QK, QR)
        else:
            lin(p + "self_attn.q_proj.weight", NH * QK, H)
        lin(p + "self_attn.kv_a_proj_with_mqa.weight", KVR + ROPE, H); vec(p + "self_attn.kv_a_layernorm.weight", KVR)
        lin(p + "self_attn.kv_b_proj.weight", NH * (NOPE + VD), KVR); lin(p + "self_attn.o_proj.weight", H, NH * VD)
        if l < FD:
            lin(p + "mlp.gate_proj.weight", I, H); lin(p + "mlp.up_proj.weight", I, H); lin(p + "mlp.down_proj.weight", H, I)
        else:
            lin(p + "mlp.gate.weight", E, H); W[p + "mlp.gate.e_score_correction_bias"] = (0.1 * rng.random(E)).astype(np.float32)
            for e in range(E):
                lin(p + f"mlp.experts.{e}.gate_proj.weight", MI, H); lin(p + f"mlp.experts.{e}.up_proj.weight", MI, H)
                lin(p + f"mlp.experts.{e}.down_proj.weight", H, MI)
            lin(p + "mlp.shared_experts.gate_proj.weight", MI * NSH, H); lin(p + "mlp.shared_experts.up_proj.weight", MI * NSH, H)
            lin(p + "mlp.shared_experts.down_proj.weight", H, MI * NSH)
    vec("model.norm.weight", H); lin("lm_head.weight", V, H)
    save_st(f"{out_dir}/model.safetensors", W)
    B, S = 2, 12
    ids = rng.integers(0, V, (B, S)).astype(np.int64)
    save_st(f"{out_dir}/inputs.safetensors", {"input_ids": ids})

    w = {k: v.astype(np.float64) for k, v in W.items()}
    def rms(x, g, eps): return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g
    def silu(x): return x / (1 + np.exp(-x))
    def mlp(x, p): return silu(x @ w[p + "gate_proj.weight"].T) * (x @ w[p + "up_proj.weight"].T) @ w[p + "down_proj.weight"].T
    # rope (HF default or yarn), cos/sin of [S, ROPE]
    inv = 1.0 / THETA ** (np.arange(0, ROPE, 2) / ROPE)
    att = 1.0
    scale = QK ** -0.5
    if variant == "yarn":
        f, orig, bf, bs = 4.0, 16, 32.0, 1.0
        def corr_dim(nrot): return ROPE * np.log(orig / (nrot * 2 * np.pi)) / (2 * np.log(THETA))
        low, high = max(np.floor(corr_dim(bf)), 0), min(np.ceil(corr_dim(bs)), ROPE - 1)
        if low == high: high += 0.001
        ramp = np.clip((np.arange(ROPE // 2) - low) / (high - low), 0, 1)
        extra = 1 - ramp
        inv = (inv / f) * (1 - extra) + inv * extra
        ms = lambda s, m: 1.0 if s <= 1 else 0.1 * m * np.log(s) + 1.0
        att = ms(f, 1.0) / ms(f, 1.0)
        scale = scale * ms(f, 1.0) ** 2
    pos = np.arange(S)
    fr = np.outer(pos, inv)
    emb = np.concatenate([fr, fr], -1)
    cos, sin = np.cos(emb) * att, np.sin(emb) * att
    def rot_half(x): d = x.shape[-1] // 2; return np.concatenate([-x[..., d:], x[..., :d]], -1)
    def rope(x):  # x [..., S, ROPE]
        if INTERLEAVE:
            sh = x.shape; x = x.reshape(*sh[:-1], ROPE // 2, 2).swapaxes(-1, -2).reshape(sh)
        return x * cos + rot_half(x) * sin
    x = w["model.embed_tokens.weight"][ids]
    mask = np.triu(np.full((S, S), -np.inf), 1)
    for l in range(L):
        p = f"model.layers.{l}."
        h = rms(x, w[p + "input_layernorm.weight"], EPS)
        if QR:
            q = rms(h @ w[p + "self_attn.q_a_proj.weight"].T, w[p + "self_attn.q_a_layernorm.weight"], 1e-6) @ w[p + "self_attn.q_b_proj.weight"].T
        else:
            q = h @ w[p + "self_attn.q_proj.weight"].T
        q = q.reshape(B, S, NH, QK).transpose(0, 2, 1, 3)
        qp, qr = q[..., :NOPE], q[..., NOPE:]
        c = h @ w[p + "self_attn.kv_a_proj_with_mqa.weight"].T
        kp, kr = c[..., :KVR], c[..., KVR:]
        kv = (rms(kp, w[p + "self_attn.kv_a_layernorm.weight"], 1e-6) @ w[p + "self_attn.kv_b_proj.weight"].T).reshape(B, S, NH, NOPE + VD).transpose(0, 2, 1, 3)
        kn, v = kv[..., :NOPE], kv[..., NOPE:]
        qr = rope(qr); kr = rope(kr[:, None])
        qs = np.concatenate([qp, qr], -1); ks = np.concatenate([kn, np.broadcast_to(kr, kn.shape[:-1] + (ROPE,))], -1)
        sc = qs @ ks.transpose(0, 1, 3, 2) * scale + mask
        sc = np.exp(sc - sc.max(-1, keepdims=True)); sc /= sc.sum(-1, keepdims=True)
        o = (sc @ v).transpose(0, 2, 1, 3).reshape(B, S, NH * VD) @ w[p + "self_attn.o_proj.weight"].T
        x = x + o
        h = rms(x, w[p + "post_attention_layernorm.weight"], EPS)
        if l < FD:
            x = x + mlp(h, p + "mlp.")
        else:
            t = h.reshape(-1, H)
            s = 1 / (1 + np.exp(-(t @ w[p + "mlp.gate.weight"].T)))
            ch = s + w[p + "mlp.gate.e_score_correction_bias"]
            gs = np.sort(ch.reshape(-1, NG, E // NG), -1)[..., -2:].sum(-1)
            gi = np.argsort(-gs, -1, kind="stable")[:, :TG]
            gm = np.zeros_like(gs); np.put_along_axis(gm, gi, 1, -1)
            sm = np.repeat(gm, E // NG, -1)
            ch = np.where(sm > 0, ch, 0.0)
            idx = np.argsort(-ch, -1, kind="stable")[:, :K]
            wt = np.take_along_axis(s, idx, -1); wt = wt / (wt.sum(-1, keepdims=True) + 1e-20) * SCALE_R
            out = np.zeros_like(t)
            for r in range(t.shape[0]):
                for j in range(K):
                    out[r] += wt[r, j] * mlp(t[r:r + 1], p + f"mlp.experts.{idx[r, j]}.")[0]
            out += mlp(t, p + "mlp.shared_experts.")
            x = x + out.reshape(B, S, H)
    x = rms(x, w["model.norm.weight"], EPS)
    logits = x @ w["lm_head.weight"].T
    np.save(f"{out_dir}/logits.npy", logits)
    return logits


def main():
    fk, work = sys.argv[1], sys.argv[2]
    failed = 0
    for variant in ("base", "yarn"):
        d = os.path.join(work, variant)
        want = reference(variant, d)
        subprocess.run([fk, "import-hf", f"{d}/config.json", "-o", f"{d}/spec.yaml"], check=True)
        for layout in ("tp1", "tp2", "pp2", "tp2pp2"):
            out = f"{d}/out-{layout}.safetensors"
            subprocess.run([fk, "forward", f"{d}/spec.yaml", "--weights", f"{d}/model.safetensors", "--inputs",
                            f"{d}/inputs.safetensors", "--layout", layout, "-o", out, "--timeout", "300"], check=True)
            got = load_st(out)["logits"].astype(np.float64).reshape(want.shape)
            rel = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            ok = rel <= 1e-5
            failed += not ok
            print(f"{variant} {layout}: logits rel L2 {rel:.3e} {'ok' if ok else 'FAILED (> 1e-5)'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
