#!/usr/bin/env python3
"""Bamba against an independent numpy port of HF transformers' BambaForCausalLM.

Until an HF fixture is made with transformers on the GPU machine, this checks the
Mamba-2 hybrid another way, with a forward written from HF's code (BambaMixer's
recurrence as its torch_forward computes it, BambaRMSNormGated over every channel,
BambaAttention with rope on half of each head): it writes a tiny Bamba checkpoint with
HF's tensor names and config.json keys (random weights, numpy), computes the logits in
f64, then runs `fk import-hf` and `fk forward` in each layout and compares the logits
(relative L2 <= 1e-5). Two variants: "base" (8 heads of 8 in 2 groups of B and C, conv
bias, attention in layer 1) and "bias" (4 heads of 16, "auto" head size, projection
biases, no conv bias, attention in layers 0 and 2).

Usage: bamba_numpy.py FK WORK_DIR
"""
import sys
import numpy as np

from numpy_port_util import attention_weights, gqa_attention, mlp, rms, run_port, silu, softplus, weight_makers


class Sizes:
    """The tiny model's sizes (one set of HF config values per variant)."""

    def __init__(self, variant):
        self.V, self.H, self.I, self.L, self.NH, self.KV = 97, 32, 48, 4, 4, 2
        self.HD = self.H // self.NH
        self.ROT = self.HD // 2  # partial_rotary_factor 0.5
        self.EXPAND, self.N, self.K, self.G = 2, 8, 4, 2
        self.MI = self.EXPAND * self.H
        self.EPS, self.THETA = 1e-5, 10000.0
        if variant == "base":
            self.MH, self.HEAD_KEY = 8, 8
            self.ATTN = [1]
            self.CONV_BIAS, self.PROJ_BIAS = True, False
        else:
            self.MH, self.HEAD_KEY = 4, "auto"
            self.ATTN = [0, 2]
            self.CONV_BIAS, self.PROJ_BIAS = False, True
        self.P = self.MI // self.MH
        self.CD = self.MI + 2 * self.G * self.N

    def config(self):
        return {"architectures": ["BambaForCausalLM"], "model_type": "bamba", "vocab_size": self.V,
                "hidden_size": self.H, "intermediate_size": self.I, "num_hidden_layers": self.L,
                "num_attention_heads": self.NH, "num_key_value_heads": self.KV, "hidden_act": "silu",
                "rms_norm_eps": self.EPS, "max_position_embeddings": 64, "tie_word_embeddings": False,
                "rope_theta": self.THETA, "attn_layer_indices": self.ATTN, "mamba_n_heads": self.MH,
                "mamba_d_head": self.HEAD_KEY, "mamba_n_groups": self.G, "mamba_d_state": self.N,
                "mamba_d_conv": self.K, "mamba_expand": self.EXPAND, "mamba_chunk_size": 5,
                "mamba_conv_bias": self.CONV_BIAS, "mamba_proj_bias": self.PROJ_BIAS, "z_loss_coefficient": 0.0,
                "num_logits_to_keep": 1}


def mamba2_weights(z, W, rng, lin, vec, m):
    """A BambaMixer's random tensors under prefix m (also GraniteMoeHybrid's)."""
    lin(m + "in_proj.weight", z.MI + z.CD + z.MH, z.H)
    W[m + "conv1d.weight"] = (rng.standard_normal((z.CD, 1, z.K)) * 0.4).astype(np.float32)
    if z.CONV_BIAS:
        vec(m + "conv1d.bias", z.CD, 0.1, 0.0)
    vec(m + "dt_bias", z.MH, 0.5, -1.0)
    W[m + "A_log"] = (np.log(np.arange(1, z.MH + 1)) + 0.1 * rng.standard_normal(z.MH)).astype(np.float32)
    vec(m + "D", z.MH, 0.2)
    vec(m + "norm.weight", z.MI)
    lin(m + "out_proj.weight", z.H, z.MI)
    if z.PROJ_BIAS:
        vec(m + "in_proj.bias", z.MI + z.CD + z.MH, 0.1, 0.0)
        vec(m + "out_proj.bias", z.H, 0.1, 0.0)


def make_weights(z, rng):
    """Random f32 weights under HF BambaForCausalLM's tensor names."""
    W = {}
    lin, vec = weight_makers(W, rng)

    W["model.embed_tokens.weight"] = rng.standard_normal((z.V, z.H)).astype(np.float32)
    for l in range(z.L):
        p = f"model.layers.{l}."
        vec(p + "input_layernorm.weight", z.H)
        vec(p + "pre_ff_layernorm.weight", z.H)
        if l in z.ATTN:
            attention_weights(lin, p, z.H, z.NH, z.KV, z.HD)
        else:
            mamba2_weights(z, W, rng, lin, vec, p + "mamba.")
        f = p + "feed_forward."
        lin(f + "gate_proj.weight", z.I, z.H)
        lin(f + "up_proj.weight", z.I, z.H)
        lin(f + "down_proj.weight", z.H, z.I)
    vec("model.final_layernorm.weight", z.H)
    lin("lm_head.weight", z.V, z.H)
    return W


def mamba2(z, w, h, m):
    """HF BambaMixer without a cache: h [B, S, H] -> [B, S, H], the SSD recurrence token
    by token (what its chunked sums compute)."""
    B, S, _ = h.shape
    proj = h @ w[m + "in_proj.weight"].T
    if z.PROJ_BIAS:
        proj = proj + w[m + "in_proj.bias"]
    gate, xbc, dt = proj[..., :z.MI], proj[..., z.MI:z.MI + z.CD], proj[..., z.MI + z.CD:]
    cw = w[m + "conv1d.weight"][:, 0, :]
    xp = np.concatenate([np.zeros((B, z.K - 1, z.CD)), xbc], 1)
    conv = sum(xp[:, j:j + S, :] * cw[:, j] for j in range(z.K))
    if z.CONV_BIAS:
        conv = conv + w[m + "conv1d.bias"]
    xbc = silu(conv)
    gn = z.G * z.N
    x = xbc[..., :z.MI].reshape(B, S, z.MH, z.P)
    Bm = np.repeat(xbc[..., z.MI:z.MI + gn].reshape(B, S, z.G, z.N), z.MH // z.G, axis=2)
    Cm = np.repeat(xbc[..., z.MI + gn:].reshape(B, S, z.G, z.N), z.MH // z.G, axis=2)
    dt = softplus(dt + w[m + "dt_bias"])  # [B, S, MH]
    A = -np.exp(w[m + "A_log"])
    state = np.zeros((B, z.MH, z.P, z.N))
    ys = []
    for t in range(S):
        d = dt[:, t, :, None, None]
        state = np.exp(d * A[None, :, None, None]) * state + d * x[:, t, :, :, None] * Bm[:, t, :, None, :]
        ys.append((state * Cm[:, t, :, None, :]).sum(-1) + w[m + "D"][None, :, None] * x[:, t])
    y = np.stack(ys, 1).reshape(B, S, z.MI)
    g = y * silu(gate)
    g = g / np.sqrt((g * g).mean(-1, keepdims=True) + z.EPS) * w[m + "norm.weight"]
    out = g @ w[m + "out_proj.weight"].T
    if z.PROJ_BIAS:
        out = out + w[m + "out_proj.bias"]
    return out


def rope(z, x, S):
    """Rotate the first ROT channels of each head by halves (HF's apply_rotary_pos_emb)."""
    inv = 1.0 / z.THETA ** (np.arange(0, z.ROT, 2) / z.ROT)
    fr = np.outer(np.arange(S), inv)
    cos, sin = np.cos(np.concatenate([fr, fr], -1)), np.sin(np.concatenate([fr, fr], -1))
    r, keep = x[..., :z.ROT], x[..., z.ROT:]
    d = z.ROT // 2
    rot = np.concatenate([-r[..., d:], r[..., :d]], -1)
    return np.concatenate([r * cos + rot * sin, keep], -1)


def attention(z, w, h, p):
    """HF BambaAttention: grouped-query attention, rope on half of each head, causal."""
    return gqa_attention(w, h, p, z.NH, z.KV, z.HD, rope=lambda x, S: rope(z, x, S))


def forward(z, W, ids):
    """The logits [B, S, V] in f64."""
    w = {k: v.astype(np.float64) for k, v in W.items()}
    x = w["model.embed_tokens.weight"][ids]
    for l in range(z.L):
        p = f"model.layers.{l}."
        h = rms(x, w[p + "input_layernorm.weight"], z.EPS)
        x = x + (attention(z, w, h, p) if l in z.ATTN else mamba2(z, w, h, p + "mamba."))
        x = x + mlp(w, rms(x, w[p + "pre_ff_layernorm.weight"], z.EPS), p + "feed_forward.")
    return rms(x, w["model.final_layernorm.weight"], z.EPS) @ w["lm_head.weight"].T


def main():
    run_port(sys.argv[1], sys.argv[2], ("base", "bias"), Sizes, make_weights, forward, seed=17)


if __name__ == "__main__":
    main()
