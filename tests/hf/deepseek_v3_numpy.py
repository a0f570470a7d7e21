#!/usr/bin/env python3
"""DeepSeek-V3 against an independent numpy port of HF transformers' DeepseekV3ForCausalLM.

Beside the HF parity fixtures (tests/fixtures/hf/deepseek_v3 and deepseek_v3-yarn, made
with transformers on the GPU machine), this checks the same path another way, with a
forward written from HF's code rather than run by it: it writes a tiny DeepSeek-V3
checkpoint with HF's tensor names and config.json keys (random weights, numpy), computes
the logits with a numpy port of HF's forward in its naive form (keys and values
decompressed per head, the grouped sigmoid router with the correction bias, the shared
expert), then runs `fk import-hf` and `fk forward` (absorbed MLA, grouped_topk) in each
layout and compares the logits (relative L2 <= 1e-5). Three variants: q compression with
interleaved rope, YaRN (its softmax mscale) with q_proj and rope over halves, and
DeepSeek-V2 (HF's DeepseekV2ForCausalLM: softmax scores in limited groups, not
renormalised, two shared experts, YaRN with unequal mscales: the rope carries their
ratio, the softmax mscale_all_dim's square, as transformers 5.17's fixture shows).

Usage: deepseek_v3_numpy.py FK WORK_DIR
"""
import sys
import numpy as np

from numpy_port_util import mlp, rms, run_port


class Sizes:
    """The tiny model's sizes (one set of HF config values per variant)."""

    def __init__(self, variant):
        self.variant = variant
        self.V, self.H, self.I, self.L, self.NH = 131, 32, 64, 3, 4
        self.V2 = variant == "v2"
        self.QR = 24 if variant in ("base", "v2") else None
        self.KVR, self.NOPE, self.ROPE, self.VD = 16, 8, 8, 12
        self.QK = self.NOPE + self.ROPE
        self.E, self.K, self.MI, self.NSH, self.NG, self.TG, self.FD = 8, 2, 24, 1, 4, 2, 1
        self.SCALE_R, self.EPS, self.THETA = 2.5, 1e-6, 10000.0
        self.INTERLEAVE = variant in ("base", "v2")
        self.YARN = {"factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 32.0, "beta_slow": 1.0,
                     "mscale": 1.0, "mscale_all_dim": 1.0} if variant == "yarn" else None
        if self.V2:  # two shared experts, scale 2; YaRN whose mscales differ (rope x their ratio)
            self.NSH, self.SCALE_R = 2, 2.0
            self.YARN = {"factor": 4.0, "original_max_position_embeddings": 16, "beta_fast": 32.0,
                         "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 0.8}

    def config(self):
        if self.V2:
            return {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": self.V,
                    "hidden_size": self.H, "intermediate_size": self.I, "num_hidden_layers": self.L,
                    "num_attention_heads": self.NH, "num_key_value_heads": self.NH, "q_lora_rank": self.QR,
                    "kv_lora_rank": self.KVR, "qk_nope_head_dim": self.NOPE, "qk_rope_head_dim": self.ROPE,
                    "v_head_dim": self.VD, "n_routed_experts": self.E, "num_experts_per_tok": self.K,
                    "moe_intermediate_size": self.MI, "n_shared_experts": self.NSH, "n_group": self.NG,
                    "topk_group": self.TG, "topk_method": "group_limited_greedy", "first_k_dense_replace": self.FD,
                    "norm_topk_prob": False, "routed_scaling_factor": self.SCALE_R, "rms_norm_eps": self.EPS,
                    "rope_theta": self.THETA, "max_position_embeddings": 64, "hidden_act": "silu",
                    "tie_word_embeddings": False, "attention_bias": False,
                    "rope_scaling": dict(type="yarn", **self.YARN)}
        c = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "vocab_size": self.V,
             "hidden_size": self.H, "intermediate_size": self.I, "num_hidden_layers": self.L,
             "num_attention_heads": self.NH, "num_key_value_heads": self.NH, "q_lora_rank": self.QR,
             "kv_lora_rank": self.KVR, "qk_nope_head_dim": self.NOPE, "qk_rope_head_dim": self.ROPE,
             "v_head_dim": self.VD, "n_routed_experts": self.E, "num_experts_per_tok": self.K,
             "moe_intermediate_size": self.MI, "n_shared_experts": self.NSH, "n_group": self.NG,
             "topk_group": self.TG, "first_k_dense_replace": self.FD, "norm_topk_prob": True,
             "routed_scaling_factor": self.SCALE_R, "rms_norm_eps": self.EPS, "rope_theta": self.THETA,
             "max_position_embeddings": 64, "hidden_act": "silu", "tie_word_embeddings": False,
             "rope_interleave": self.INTERLEAVE, "attention_bias": False}
        if self.YARN:
            c["rope_scaling"] = dict(type="yarn", **self.YARN)
        return c


def make_weights(z, rng):
    """Random f32 weights under HF DeepseekV3ForCausalLM's tensor names."""
    W = {}

    def lin(name, o, i):
        W[name] = (rng.standard_normal((o, i)) * 0.1).astype(np.float32)

    def vec(name, n):
        W[name] = (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    W["model.embed_tokens.weight"] = rng.standard_normal((z.V, z.H)).astype(np.float32)
    for l in range(z.L):
        p = f"model.layers.{l}."
        vec(p + "input_layernorm.weight", z.H)
        vec(p + "post_attention_layernorm.weight", z.H)
        if z.QR:
            lin(p + "self_attn.q_a_proj.weight", z.QR, z.H)
            vec(p + "self_attn.q_a_layernorm.weight", z.QR)
            lin(p + "self_attn.q_b_proj.weight", z.NH * z.QK, z.QR)
        else:
            lin(p + "self_attn.q_proj.weight", z.NH * z.QK, z.H)
        lin(p + "self_attn.kv_a_proj_with_mqa.weight", z.KVR + z.ROPE, z.H)
        vec(p + "self_attn.kv_a_layernorm.weight", z.KVR)
        lin(p + "self_attn.kv_b_proj.weight", z.NH * (z.NOPE + z.VD), z.KVR)
        lin(p + "self_attn.o_proj.weight", z.H, z.NH * z.VD)
        if l < z.FD:
            lin(p + "mlp.gate_proj.weight", z.I, z.H)
            lin(p + "mlp.up_proj.weight", z.I, z.H)
            lin(p + "mlp.down_proj.weight", z.H, z.I)
            continue
        lin(p + "mlp.gate.weight", z.E, z.H)
        if not z.V2:
            W[p + "mlp.gate.e_score_correction_bias"] = (0.1 * rng.random(z.E)).astype(np.float32)
        for e in range(z.E):
            lin(p + f"mlp.experts.{e}.gate_proj.weight", z.MI, z.H)
            lin(p + f"mlp.experts.{e}.up_proj.weight", z.MI, z.H)
            lin(p + f"mlp.experts.{e}.down_proj.weight", z.H, z.MI)
        lin(p + "mlp.shared_experts.gate_proj.weight", z.MI * z.NSH, z.H)
        lin(p + "mlp.shared_experts.up_proj.weight", z.MI * z.NSH, z.H)
        lin(p + "mlp.shared_experts.down_proj.weight", z.H, z.MI * z.NSH)
    vec("model.norm.weight", z.H)
    lin("lm_head.weight", z.V, z.H)
    return W


def yarn_mscale(scale, m):
    return 1.0 if scale <= 1 else 0.1 * m * np.log(scale) + 1.0


def rope_tables(z, S):
    """HF's cos/sin [S, ROPE] (default or YaRN rope) and the softmax scale."""
    inv = 1.0 / z.THETA ** (np.arange(0, z.ROPE, 2) / z.ROPE)
    att, scale = 1.0, z.QK ** -0.5
    if z.YARN:
        y = z.YARN
        f, orig = y["factor"], y["original_max_position_embeddings"]

        def corr_dim(nrot):
            return z.ROPE * np.log(orig / (nrot * 2 * np.pi)) / (2 * np.log(z.THETA))

        low, high = max(np.floor(corr_dim(y["beta_fast"])), 0), min(np.ceil(corr_dim(y["beta_slow"])), z.ROPE - 1)
        if low == high:
            high += 0.001
        extra = 1 - np.clip((np.arange(z.ROPE // 2) - low) / (high - low), 0, 1)
        inv = (inv / f) * (1 - extra) + inv * extra
        att = yarn_mscale(f, y["mscale"]) / yarn_mscale(f, y["mscale_all_dim"])
        scale = scale * yarn_mscale(f, y["mscale_all_dim"]) ** 2
    fr = np.outer(np.arange(S), inv)
    emb = np.concatenate([fr, fr], -1)
    return np.cos(emb) * att, np.sin(emb) * att, scale


def rotate_half(x):
    d = x.shape[-1] // 2
    return np.concatenate([-x[..., d:], x[..., :d]], -1)


def apply_rope(z, x, cos, sin):
    """x [..., S, ROPE]; interleaved pairs are first gathered into halves (HF's rope_interleave)."""
    if z.INTERLEAVE:
        sh = x.shape
        x = x.reshape(*sh[:-1], z.ROPE // 2, 2).swapaxes(-1, -2).reshape(sh)
    return x * cos + rotate_half(x) * sin


def attention(z, w, h, p, cos, sin, scale):
    """HF DeepseekV3Attention, naive form: keys and values decompressed per head."""
    B, S, _ = h.shape
    if z.QR:
        qa = rms(h @ w[p + "self_attn.q_a_proj.weight"].T, w[p + "self_attn.q_a_layernorm.weight"], 1e-6)
        q = qa @ w[p + "self_attn.q_b_proj.weight"].T
    else:
        q = h @ w[p + "self_attn.q_proj.weight"].T
    q = q.reshape(B, S, z.NH, z.QK).transpose(0, 2, 1, 3)
    q_nope, q_rot = q[..., :z.NOPE], q[..., z.NOPE:]
    c = h @ w[p + "self_attn.kv_a_proj_with_mqa.weight"].T
    latent, k_rot = c[..., :z.KVR], c[..., z.KVR:]
    kv = rms(latent, w[p + "self_attn.kv_a_layernorm.weight"], 1e-6) @ w[p + "self_attn.kv_b_proj.weight"].T
    kv = kv.reshape(B, S, z.NH, z.NOPE + z.VD).transpose(0, 2, 1, 3)
    k_nope, v = kv[..., :z.NOPE], kv[..., z.NOPE:]
    q_rot = apply_rope(z, q_rot, cos, sin)
    k_rot = apply_rope(z, k_rot[:, None], cos, sin)
    qs = np.concatenate([q_nope, q_rot], -1)
    ks = np.concatenate([k_nope, np.broadcast_to(k_rot, k_nope.shape[:-1] + (z.ROPE,))], -1)
    sc = qs @ ks.transpose(0, 1, 3, 2) * scale + np.triu(np.full((S, S), -np.inf), 1)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    sc /= sc.sum(-1, keepdims=True)
    return (sc @ v).transpose(0, 2, 1, 3).reshape(B, S, z.NH * z.VD) @ w[p + "self_attn.o_proj.weight"].T


def moe_v2(z, w, t, p):
    """HF DeepseekV2Moe on rows t [T, H]: softmax scores; group_limited_greedy keeps the
    topk_group groups with the best single score (the others' scores become 0) and takes
    the top k; the weights are those scores, not renormalised, times the scale; plus the
    shared experts."""
    s = t @ w[p + "mlp.gate.weight"].T
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    group_score = s.reshape(-1, z.NG, z.E // z.NG).max(-1)
    best_groups = np.argsort(-group_score, -1, kind="stable")[:, :z.TG]
    group_mask = np.zeros_like(group_score)
    np.put_along_axis(group_mask, best_groups, 1, -1)
    masked = np.where(np.repeat(group_mask, z.E // z.NG, -1) > 0, s, 0.0)
    idx = np.argsort(-masked, -1, kind="stable")[:, :z.K]
    wt = np.take_along_axis(masked, idx, -1) * z.SCALE_R
    out = np.zeros_like(t)
    for r in range(t.shape[0]):
        for j in range(z.K):
            out[r] += wt[r, j] * mlp(w, t[r:r + 1], p + f"mlp.experts.{idx[r, j]}.")[0]
    return out + mlp(w, t, p + "mlp.shared_experts.")


def moe(z, w, t, p):
    """HF DeepseekV3MoE on rows t [T, H]: sigmoid scores, the correction bias picks the
    topk_group best groups (by their two best experts) and the top-k experts in them; the
    weights are the unbiased scores, renormalized and scaled; plus the shared expert."""
    s = 1 / (1 + np.exp(-(t @ w[p + "mlp.gate.weight"].T)))
    ch = s + w[p + "mlp.gate.e_score_correction_bias"]
    group_score = np.sort(ch.reshape(-1, z.NG, z.E // z.NG), -1)[..., -2:].sum(-1)
    best_groups = np.argsort(-group_score, -1, kind="stable")[:, :z.TG]
    group_mask = np.zeros_like(group_score)
    np.put_along_axis(group_mask, best_groups, 1, -1)
    ch = np.where(np.repeat(group_mask, z.E // z.NG, -1) > 0, ch, 0.0)
    idx = np.argsort(-ch, -1, kind="stable")[:, :z.K]
    wt = np.take_along_axis(s, idx, -1)
    wt = wt / (wt.sum(-1, keepdims=True) + 1e-20) * z.SCALE_R
    out = np.zeros_like(t)
    for r in range(t.shape[0]):
        for j in range(z.K):
            out[r] += wt[r, j] * mlp(w, t[r:r + 1], p + f"mlp.experts.{idx[r, j]}.")[0]
    return out + mlp(w, t, p + "mlp.shared_experts.")


def forward(z, W, ids):
    """The logits [B, S, V] in f64."""
    w = {k: v.astype(np.float64) for k, v in W.items()}
    B, S = ids.shape
    cos, sin, scale = rope_tables(z, S)
    x = w["model.embed_tokens.weight"][ids]
    for l in range(z.L):
        p = f"model.layers.{l}."
        x = x + attention(z, w, rms(x, w[p + "input_layernorm.weight"], z.EPS), p, cos, sin, scale)
        h = rms(x, w[p + "post_attention_layernorm.weight"], z.EPS)
        if l < z.FD:
            x = x + mlp(w, h, p + "mlp.")
        else:
            x = x + (moe_v2 if z.V2 else moe)(z, w, h.reshape(-1, z.H), p).reshape(B, S, z.H)
    return rms(x, w["model.norm.weight"], z.EPS) @ w["lm_head.weight"].T


def main():
    run_port(sys.argv[1], sys.argv[2], ("base", "yarn", "v2"), Sizes, make_weights, forward, seed=5)


if __name__ == "__main__":
    main()
