#!/usr/bin/env python3
"""GraniteMoeHybrid against an independent numpy port of HF transformers'
GraniteMoeHybridForCausalLM.

Beside the HF fixture (tests/fixtures/hf/granitemoehybrid, made with transformers), this
checks Granite 4.0-H's layers another way, with a forward written from HF's code: GraniteMoeShared's
decoder layer (the embedding, residual and attention multipliers and the logits
divisor; experts stacked in block_sparse_moe.input_linear / output_linear, the top-k
router logits softmaxed, a shared MLP beside them) whose mixer is attention or Bamba's
Mamba-2 mixer (bamba_numpy.mamba2) by layer_types. It writes a tiny checkpoint with HF's
tensor names and config.json keys (random weights, numpy), computes the logits in f64,
then runs `fk import-hf` and `fk forward` in each layout and compares the logits
(relative L2 <= 1e-5). Two variants: "moe" (4 experts, top 2, rope on whole heads,
attention in layers 1 and 3) and "dense" (num_local_experts 0: the shared MLP alone; no
position embedding; attention in layer 2; projection biases).

Usage: granitemoehybrid_numpy.py FK WORK_DIR
"""
import sys
import numpy as np

from bamba_numpy import mamba2, mamba2_weights
from numpy_port_util import attention_weights, gqa_attention, rms, run_port, silu, weight_makers


class Sizes:
    """The tiny model's sizes (one set of HF config values per variant)."""

    def __init__(self, variant):
        self.V, self.H, self.I, self.S_I, self.L, self.NH, self.KV = 89, 32, 24, 40, 4, 4, 2
        self.HD = self.H // self.NH
        self.EXPAND, self.N, self.K, self.G = 2, 8, 4, 2
        self.MI = self.EXPAND * self.H
        self.EPS, self.THETA = 1e-6, 10000.0
        self.EMB, self.RES, self.ATT, self.LOGITS = 2.0, 0.5, 0.2, 3.0
        if variant == "moe":
            self.E, self.TOPK = 4, 2
            self.ATTN, self.ROPE = [1, 3], True
            self.MH, self.CONV_BIAS, self.PROJ_BIAS = 8, True, False
        else:
            self.E, self.TOPK = 0, 0
            self.ATTN, self.ROPE = [2], False
            self.MH, self.CONV_BIAS, self.PROJ_BIAS = 4, False, True
        self.P = self.MI // self.MH
        self.CD = self.MI + 2 * self.G * self.N

    def config(self):
        c = {"architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
             "vocab_size": self.V, "hidden_size": self.H, "intermediate_size": self.I,
             "shared_intermediate_size": self.S_I, "num_hidden_layers": self.L, "num_attention_heads": self.NH,
             "num_key_value_heads": self.KV, "hidden_act": "silu", "rms_norm_eps": self.EPS,
             "max_position_embeddings": 64, "tie_word_embeddings": False, "embedding_multiplier": self.EMB,
             "residual_multiplier": self.RES, "attention_multiplier": self.ATT, "logits_scaling": self.LOGITS,
             "num_local_experts": self.E, "num_experts_per_tok": self.TOPK,
             "layer_types": ["attention" if l in self.ATTN else "mamba" for l in range(self.L)],
             "position_embedding_type": "rope" if self.ROPE else None, "mamba_n_heads": self.MH,
             "mamba_d_head": "auto", "mamba_n_groups": self.G, "mamba_d_state": self.N, "mamba_d_conv": self.K,
             "mamba_expand": self.EXPAND, "mamba_chunk_size": 5, "mamba_conv_bias": self.CONV_BIAS,
             "mamba_proj_bias": self.PROJ_BIAS}
        if self.ROPE:
            c["rope_theta"] = self.THETA
        return c


def make_weights(z, rng):
    """Random f32 weights under HF GraniteMoeHybridForCausalLM's tensor names."""
    W = {}
    lin, vec = weight_makers(W, rng)
    W["model.embed_tokens.weight"] = (0.5 * rng.standard_normal((z.V, z.H))).astype(np.float32)
    for l in range(z.L):
        p = f"model.layers.{l}."
        vec(p + "input_layernorm.weight", z.H)
        vec(p + "post_attention_layernorm.weight", z.H)
        if l in z.ATTN:
            attention_weights(lin, p, z.H, z.NH, z.KV, z.HD)
        else:
            mamba2_weights(z, W, rng, lin, vec, p + "mamba.")
        if z.E:
            b = p + "block_sparse_moe."
            lin(b + "router.layer.weight", z.E, z.H)
            W[b + "input_linear.weight"] = (rng.standard_normal((z.E, 2 * z.I, z.H)) * 0.15).astype(np.float32)
            W[b + "output_linear.weight"] = (rng.standard_normal((z.E, z.H, z.I)) * 0.15).astype(np.float32)
        lin(p + "shared_mlp.input_linear.weight", 2 * z.S_I, z.H)
        lin(p + "shared_mlp.output_linear.weight", z.H, z.S_I)
    vec("model.norm.weight", z.H)
    lin("lm_head.weight", z.V, z.H)
    return W


def glu(t, w_in, w_out):
    """GraniteMoe's MLP: input_linear's rows are the gate's, then the up projection's."""
    g, u = np.split(t @ w_in.T, 2, -1)
    return (silu(g) * u) @ w_out.T


def moe(z, w, t, b):
    """GraniteMoeSharedMoE on rows t [T, H]: the top-k router logits, softmaxed."""
    logits = t @ w[b + "router.layer.weight"].T
    top = np.argsort(-logits, -1, kind="stable")[:, :z.TOPK]
    sel = np.take_along_axis(logits, top, -1)
    gates = np.exp(sel - sel.max(-1, keepdims=True))
    gates /= gates.sum(-1, keepdims=True)
    out = np.zeros_like(t)
    for r in range(t.shape[0]):
        for j in range(z.TOPK):
            e = top[r, j]
            out[r] += gates[r, j] * glu(t[r], w[b + "input_linear.weight"][e], w[b + "output_linear.weight"][e])
    return out


def rope(z, x, S):
    """Rotate whole heads by halves (HF's apply_rotary_pos_emb)."""
    inv = 1.0 / z.THETA ** (np.arange(0, z.HD, 2) / z.HD)
    fr = np.concatenate([np.outer(np.arange(S), inv)] * 2, -1)
    d = z.HD // 2
    return x * np.cos(fr) + np.concatenate([-x[..., d:], x[..., :d]], -1) * np.sin(fr)


def forward(z, W, ids):
    """The logits [B, S, V] in f64."""
    w = {k: v.astype(np.float64) for k, v in W.items()}
    x = w["model.embed_tokens.weight"][ids] * z.EMB
    B, S, _ = x.shape
    for l in range(z.L):
        p = f"model.layers.{l}."
        h = rms(x, w[p + "input_layernorm.weight"], z.EPS)
        if l in z.ATTN:
            o = gqa_attention(w, h, p, z.NH, z.KV, z.HD, rope=(lambda t, n: rope(z, t, n)) if z.ROPE else None,
                              scale=z.ATT)
        else:
            o = mamba2(z, w, h, p + "mamba.")
        x = x + o * z.RES
        h = rms(x, w[p + "post_attention_layernorm.weight"], z.EPS).reshape(-1, z.H)
        f = glu(h, w[p + "shared_mlp.input_linear.weight"], w[p + "shared_mlp.output_linear.weight"])
        if z.E:
            f = f + moe(z, w, h, p + "block_sparse_moe.")
        x = x + f.reshape(B, S, z.H) * z.RES
    return rms(x, w["model.norm.weight"], z.EPS) @ w["lm_head.weight"].T / z.LOGITS


def main():
    run_port(sys.argv[1], sys.argv[2], ("moe", "dense"), Sizes, make_weights, forward, seed=23)


if __name__ == "__main__":
    main()
