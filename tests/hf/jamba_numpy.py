#!/usr/bin/env python3
"""Jamba against an independent numpy port of HF transformers' JambaForCausalLM.

Until an HF fixture is made with transformers on the GPU machine, this checks the hybrid
another way, with a forward written from HF's code (JambaMambaMixer.slow_forward,
JambaAttention, JambaSparseMoeBlock): it writes a tiny Jamba checkpoint with HF's tensor
names and config.json keys (random weights, numpy), computes the logits in f64, then runs
`fk import-hf` and `fk forward` in each layout and compares the logits (relative L2 <=
1e-5). Two variants: "base" (Mamba layers with conv bias, no projection bias; attention
in layer 1; MoE in the odd layers, one of them a Mamba layer) and "bias" (projection
biases, no conv bias, an explicit dt rank, every layer dense, attention in layers 0 and 2).

Usage: jamba_numpy.py FK WORK_DIR
"""
import sys
import numpy as np

from numpy_port_util import attention_weights, gqa_attention, mlp, rms, run_port, silu, softplus, weight_makers


class Sizes:
    """The tiny model's sizes (one set of HF config values per variant)."""

    def __init__(self, variant):
        self.variant = variant
        self.V, self.H, self.I, self.L, self.NH, self.KV = 97, 32, 48, 4, 4, 2
        self.HD = self.H // self.NH
        self.EXPAND, self.N, self.K = 2, 8, 4
        self.MI = self.EXPAND * self.H
        self.EPS = 1e-6
        if variant == "base":
            self.R, self.R_KEY = 2, "auto"  # ceil(32 / 16)
            self.ATTN, self.EXPERT = (4, 1), (2, 1)  # (period, offset)
            self.E, self.TOPK = 4, 2
            self.CONV_BIAS, self.PROJ_BIAS = True, False
        else:
            self.R, self.R_KEY = 6, 6
            self.ATTN, self.EXPERT = (2, 0), (2, 1)
            self.E, self.TOPK = 1, 1
            self.CONV_BIAS, self.PROJ_BIAS = False, True

    def attention_layer(self, l):
        return l % self.ATTN[0] == self.ATTN[1]

    def moe_layer(self, l):
        return self.E > 1 and l % self.EXPERT[0] == self.EXPERT[1]

    def config(self):
        return {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "vocab_size": self.V,
                "hidden_size": self.H, "intermediate_size": self.I, "num_hidden_layers": self.L,
                "num_attention_heads": self.NH, "num_key_value_heads": self.KV, "hidden_act": "silu",
                "rms_norm_eps": self.EPS, "max_position_embeddings": 64, "tie_word_embeddings": False,
                "sliding_window": None, "attn_layer_period": self.ATTN[0], "attn_layer_offset": self.ATTN[1],
                "expert_layer_period": self.EXPERT[0], "expert_layer_offset": self.EXPERT[1],
                "num_experts": self.E, "num_experts_per_tok": self.TOPK, "mamba_d_state": self.N,
                "mamba_d_conv": self.K, "mamba_expand": self.EXPAND, "mamba_dt_rank": self.R_KEY,
                "mamba_conv_bias": self.CONV_BIAS, "mamba_proj_bias": self.PROJ_BIAS, "use_mamba_kernels": False,
                "router_aux_loss_coef": 0.001, "num_logits_to_keep": 1}


def make_weights(z, rng):
    """Random f32 weights under HF JambaForCausalLM's tensor names."""
    W = {}
    lin, vec = weight_makers(W, rng)

    W["model.embed_tokens.weight"] = rng.standard_normal((z.V, z.H)).astype(np.float32)
    for l in range(z.L):
        p = f"model.layers.{l}."
        vec(p + "input_layernorm.weight", z.H)
        vec(p + "pre_ff_layernorm.weight", z.H)
        if z.attention_layer(l):
            attention_weights(lin, p, z.H, z.NH, z.KV, z.HD)
        else:
            m = p + "mamba."
            lin(m + "in_proj.weight", 2 * z.MI, z.H)
            W[m + "conv1d.weight"] = (rng.standard_normal((z.MI, 1, z.K)) * 0.4).astype(np.float32)
            if z.CONV_BIAS:
                vec(m + "conv1d.bias", z.MI, 0.1, 0.0)
            lin(m + "x_proj.weight", z.R + 2 * z.N, z.MI)
            vec(m + "dt_layernorm.weight", z.R)
            vec(m + "b_layernorm.weight", z.N)
            vec(m + "c_layernorm.weight", z.N)
            lin(m + "dt_proj.weight", z.MI, z.R)
            vec(m + "dt_proj.bias", z.MI, 0.5, -1.0)
            W[m + "A_log"] = (np.log(np.arange(1, z.N + 1))[None, :] + 0.1 * rng.standard_normal((z.MI, z.N))).astype(
                np.float32)
            vec(m + "D", z.MI, 0.2)
            lin(m + "out_proj.weight", z.H, z.MI)
            if z.PROJ_BIAS:
                vec(m + "in_proj.bias", 2 * z.MI, 0.1, 0.0)
                vec(m + "out_proj.bias", z.H, 0.1, 0.0)
        f = p + "feed_forward."
        if z.moe_layer(l):
            lin(f + "router.weight", z.E, z.H)
            for e in range(z.E):
                lin(f + f"experts.{e}.gate_proj.weight", z.I, z.H)
                lin(f + f"experts.{e}.up_proj.weight", z.I, z.H)
                lin(f + f"experts.{e}.down_proj.weight", z.H, z.I)
        else:
            lin(f + "gate_proj.weight", z.I, z.H)
            lin(f + "up_proj.weight", z.I, z.H)
            lin(f + "down_proj.weight", z.H, z.I)
    vec("model.final_layernorm.weight", z.H)
    lin("lm_head.weight", z.V, z.H)
    return W


def mamba(z, w, h, m):
    """HF JambaMambaMixer.slow_forward without a cache: h [B, S, H] -> [B, S, H]."""
    B, S, _ = h.shape
    xz = h @ w[m + "in_proj.weight"].T
    if z.PROJ_BIAS:
        xz = xz + w[m + "in_proj.bias"]
    x, gate = xz[..., :z.MI], xz[..., z.MI:]
    # The depthwise causal conv: output t sees inputs t - K + 1 .. t (zeros before 0).
    cw = w[m + "conv1d.weight"][:, 0, :]
    xp = np.concatenate([np.zeros((B, z.K - 1, z.MI)), x], 1)
    conv = sum(xp[:, j:j + S, :] * cw[:, j] for j in range(z.K))
    if z.CONV_BIAS:
        conv = conv + w[m + "conv1d.bias"]
    x = silu(conv)
    p = x @ w[m + "x_proj.weight"].T
    dt = rms(p[..., :z.R], w[m + "dt_layernorm.weight"], z.EPS)
    Bm = rms(p[..., z.R:z.R + z.N], w[m + "b_layernorm.weight"], z.EPS)
    Cm = rms(p[..., z.R + z.N:], w[m + "c_layernorm.weight"], z.EPS)
    delta = softplus(dt @ w[m + "dt_proj.weight"].T + w[m + "dt_proj.bias"])  # [B, S, MI]
    A = -np.exp(w[m + "A_log"])  # [MI, N]
    state = np.zeros((B, z.MI, z.N))
    ys = []
    for t in range(S):
        d = delta[:, t, :, None]
        state = np.exp(A * d) * state + d * Bm[:, t, None, :] * x[:, t, :, None]
        ys.append((state * Cm[:, t, None, :]).sum(-1))
    y = (np.stack(ys, 1) + x * w[m + "D"]) * silu(gate)
    out = y @ w[m + "out_proj.weight"].T
    if z.PROJ_BIAS:
        out = out + w[m + "out_proj.bias"]
    return out


def attention(z, w, h, p):
    """HF JambaAttention: grouped-query attention without rotary embedding, causal."""
    return gqa_attention(w, h, p, z.NH, z.KV, z.HD)


def moe(z, w, t, f):
    """HF JambaSparseMoeBlock on rows t [T, H]: the softmax of the router's logits, its
    top-k weights as they are (not renormalised)."""
    s = t @ w[f + "router.weight"].T
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    idx = np.argsort(-s, -1, kind="stable")[:, :z.TOPK]
    wt = np.take_along_axis(s, idx, -1)
    out = np.zeros_like(t)
    for r in range(t.shape[0]):
        for j in range(z.TOPK):
            out[r] += wt[r, j] * mlp(w, t[r:r + 1], f + f"experts.{idx[r, j]}.")[0]
    return out


def forward(z, W, ids):
    """The logits [B, S, V] in f64."""
    w = {k: v.astype(np.float64) for k, v in W.items()}
    B, S = ids.shape
    x = w["model.embed_tokens.weight"][ids]
    for l in range(z.L):
        p = f"model.layers.{l}."
        h = rms(x, w[p + "input_layernorm.weight"], z.EPS)
        x = x + (attention(z, w, h, p) if z.attention_layer(l) else mamba(z, w, h, p + "mamba."))
        h = rms(x, w[p + "pre_ff_layernorm.weight"], z.EPS)
        if z.moe_layer(l):
            x = x + moe(z, w, h.reshape(-1, z.H), p + "feed_forward.").reshape(B, S, z.H)
        else:
            x = x + mlp(w, h, p + "feed_forward.")
    return rms(x, w["model.final_layernorm.weight"], z.EPS) @ w["lm_head.weight"].T


def main():
    run_port(sys.argv[1], sys.argv[2], ("base", "bias"), Sizes, make_weights, forward, seed=11)


if __name__ == "__main__":
    main()
