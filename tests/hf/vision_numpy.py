#!/usr/bin/env python3
"""Vision encoders (ViT, DINOv2, SigLIP's vision tower) against an independent numpy
port of HF transformers' ViTModel, Dinov2Model and SiglipVisionModel.

Beside the HF fixtures (tests/fixtures/hf/{vit,dinov2,siglip_vision_model}, made with
transformers), this checks the vision front and layers with a forward written from HF's
code: the patch embedding (a Conv2d of
kernel = stride = patch_size, flattened to patches in row-major order), the class token
(ViT, DINOv2), the learned position embeddings, pre-LayerNorm bidirectional layers with
biased projections and an ungated MLP (exact GELU; SigLIP's tanh GELU), DINOv2's
LayerScale, and the final LayerNorm (SigLIP's post_layernorm). It writes a tiny
checkpoint with HF's tensor names (the conv weight [H, C, p, p], ViT's position table
[1, tokens, H]) and config.json keys, computes the outputs in f64, then runs
`fk import-hf` and `fk forward` (inputs: pixel_values) in each layout and compares
last_hidden_state and hidden_states.0 and .L (HF's output_hidden_states: the
embeddings, then each layer's output before the final norm) within 1e-5 relative L2.

Usage: vision_numpy.py FK WORK_DIR
"""
import json, math, os, subprocess, sys
import numpy as np

from numpy_port_util import load_st, save_st

VARIANTS = {
    # model_type, prefix of its tensor names, class token, layer scale, tanh GELU, eps
    "vit": ("vit", "", True, False, False, 1e-12),
    "dinov2": ("dinov2", "", True, True, False, 1e-6),
    "siglip": ("siglip_vision_model", "vision_model.", False, False, True, 1e-6),
}
H, NH, I, L, C, P, B = 32, 4, 48, 3, 3, 4, 2
HD = H // NH
# Image sizes: SigLIP's 14 px at patch 4 leaves 2 rows and columns past the last whole
# patch, which the conv drops (as SigLIP's 384 px at patch 14).
IMGS = {"vit": 12, "dinov2": 12, "siglip": 14}
NP = (12 // P) ** 2


def layer_names(mt, l):
    """HF's names of layer l's tensors: (norm1, q, k, v, o, norm2, fc1, fc2, scale1, scale2)."""
    if mt == "siglip_vision_model":
        b = f"encoder.layers.{l}."
        return (b + "layer_norm1", b + "self_attn.q_proj", b + "self_attn.k_proj", b + "self_attn.v_proj",
                b + "self_attn.out_proj", b + "layer_norm2", b + "mlp.fc1", b + "mlp.fc2", None, None)
    b = f"encoder.layer.{l}."
    a = b + "attention.attention."
    if mt == "dinov2":
        return (b + "norm1", a + "query", a + "key", a + "value", b + "attention.output.dense", b + "norm2",
                b + "mlp.fc1", b + "mlp.fc2", b + "layer_scale1.lambda1", b + "layer_scale2.lambda1")
    return (b + "layernorm_before", a + "query", a + "key", a + "value", b + "attention.output.dense",
            b + "layernorm_after", b + "intermediate.dense", b + "output.dense", None, None)


def config(variant):
    mt, _, _, _, tanh, eps = VARIANTS[variant]
    c = {"model_type": mt, "hidden_size": H, "num_hidden_layers": L, "num_attention_heads": NH, "num_channels": C,
         "image_size": IMGS[variant], "patch_size": P, "layer_norm_eps": eps,
         "hidden_act": "gelu_pytorch_tanh" if tanh else "gelu"}
    if mt == "dinov2":
        c.update({"mlp_ratio": I / H, "layerscale_value": 1.0, "use_swiglu_ffn": False, "qkv_bias": True})
    else:
        c["intermediate_size"] = I
    if mt == "vit":
        c.update({"architectures": ["ViTModel"], "qkv_bias": True})
    return c


def make_weights(variant, rng):
    mt, pre, cls, scale, _, _ = VARIANTS[variant]
    W = {}

    def lin(name, o, i):
        W[name + ".weight"] = (rng.standard_normal((o, i)) * 0.15).astype(np.float32)
        W[name + ".bias"] = (0.1 * rng.standard_normal(o)).astype(np.float32)

    def norm(name):
        W[name + ".weight"] = (1 + 0.1 * rng.standard_normal(H)).astype(np.float32)
        W[name + ".bias"] = (0.1 * rng.standard_normal(H)).astype(np.float32)

    tokens = NP + (1 if cls else 0)
    e = "embeddings."
    patch = e + ("patch_embedding" if mt == "siglip_vision_model" else "patch_embeddings.projection")
    W[patch + ".weight"] = (rng.standard_normal((H, C, P, P)) * 0.2).astype(np.float32)
    W[patch + ".bias"] = (0.1 * rng.standard_normal(H)).astype(np.float32)
    if mt == "siglip_vision_model":
        W[e + "position_embedding.weight"] = (0.5 * rng.standard_normal((tokens, H))).astype(np.float32)
    else:
        W[e + "position_embeddings"] = (0.5 * rng.standard_normal((1, tokens, H))).astype(np.float32)
        W[e + "cls_token"] = (0.5 * rng.standard_normal((1, 1, H))).astype(np.float32)
    if mt == "dinov2":
        W[e + "mask_token"] = np.zeros((1, H), np.float32)  # unused without bool_masked_pos
    for l in range(L):
        n1, q, k, v, o, n2, f1, f2, s1, s2 = layer_names(mt, l)
        norm(n1)
        for name in (q, k, v, o):
            lin(name, H, H)
        norm(n2)
        lin(f1, I, H)
        lin(f2, H, I)
        if scale:
            W[s1] = (1 + 0.3 * rng.standard_normal(H)).astype(np.float32)
            W[s2] = (1 + 0.3 * rng.standard_normal(H)).astype(np.float32)
    norm("post_layernorm" if mt == "siglip_vision_model" else "layernorm")
    return {pre + k: v for k, v in W.items()}


def layer_norm(x, w, p, eps):
    m = x.mean(-1, keepdims=True)
    var = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]


def gelu(x, tanh):
    if tanh:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def forward(variant, W, pixels):
    """(last_hidden_state, hidden_states) in f64: hidden_states[0] the embeddings,
    hidden_states[l + 1] layer l's output."""
    mt, pre, cls, scale, tanh, eps = VARIANTS[variant]
    w = {k[len(pre):]: v.astype(np.float64) for k, v in W.items()}
    e = "embeddings."
    patch = e + ("patch_embedding" if mt == "siglip_vision_model" else "patch_embeddings.projection")
    s = IMGS[variant] // P
    # The conv: [B, C, s, P, s, P] -> [B, s, s, C, P, P] patches, each dotted with the kernel
    # (rows and columns past the last whole patch dropped).
    x = pixels.astype(np.float64)[:, :, :s * P, :s * P].reshape(B, C, s, P, s, P).transpose(0, 2, 4, 1, 3, 5).reshape(B, NP, C * P * P)
    x = x @ w[patch + ".weight"].reshape(H, -1).T + w[patch + ".bias"]
    if mt == "siglip_vision_model":
        x = x + w[e + "position_embedding.weight"]
    else:
        x = np.concatenate([np.broadcast_to(w[e + "cls_token"].reshape(1, 1, H), (B, 1, H)), x], 1)
        x = x + w[e + "position_embeddings"].reshape(1, -1, H)
    hs = [x]
    T = x.shape[1]
    for l in range(L):
        n1, q, k, v, o, n2, f1, f2, s1, s2 = layer_names(mt, l)
        h = layer_norm(x, w, n1, eps)
        heads = [(h @ w[t + ".weight"].T + w[t + ".bias"]).reshape(B, T, NH, HD).transpose(0, 2, 1, 3) for t in (q, k, v)]
        sc = heads[0] @ heads[1].transpose(0, 1, 3, 2) * HD ** -0.5
        sc = np.exp(sc - sc.max(-1, keepdims=True))
        sc /= sc.sum(-1, keepdims=True)
        a = (sc @ heads[2]).transpose(0, 2, 1, 3).reshape(B, T, H) @ w[o + ".weight"].T + w[o + ".bias"]
        x = x + (a * w[s1] if scale else a)
        h = layer_norm(x, w, n2, eps)
        m = gelu(h @ w[f1 + ".weight"].T + w[f1 + ".bias"], tanh) @ w[f2 + ".weight"].T + w[f2 + ".bias"]
        x = x + (m * w[s2] if scale else m)
        hs.append(x)
    final = "post_layernorm" if mt == "siglip_vision_model" else "layernorm"
    return layer_norm(x, w, final, eps), hs


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    fk, work = sys.argv[1], sys.argv[2]
    failed = 0
    for variant in VARIANTS:
        d = os.path.join(work, variant)
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(41)
        W = make_weights(variant, rng)
        pixels = rng.uniform(-1, 1, (B, C, IMGS[variant], IMGS[variant])).astype(np.float32)
        last, hs = forward(variant, W, pixels)
        json.dump(config(variant), open(f"{d}/config.json", "w"))
        save_st(f"{d}/model.safetensors", W)
        save_st(f"{d}/inputs.safetensors", {"pixel_values": pixels})
        subprocess.run([fk, "import-hf", f"{d}/config.json", "-o", f"{d}/spec.yaml"], check=True)
        for layout in ("tp1", "tp2", "pp2", "tp2pp2"):
            out = f"{d}/out-{layout}.safetensors"
            subprocess.run([fk, "forward", f"{d}/spec.yaml", "--weights", f"{d}/model.safetensors", "--inputs",
                            f"{d}/inputs.safetensors", "--layout", layout, "-o", out, "--timeout", "300"], check=True)
            got = load_st(out)
            errs = {"last_hidden_state": rel(got["last_hidden_state"].astype(np.float64).reshape(last.shape), last)}
            for i in (0, L):
                errs[f"hidden_states.{i}"] = rel(got[f"hidden_states.{i}"].astype(np.float64).reshape(hs[i].shape), hs[i])
            bad = {k: v for k, v in errs.items() if not v <= 1e-5}
            failed += bool(bad)
            print(f"{variant} {layout}: " + ", ".join(f"{k} rel L2 {v:.3e}" for k, v in errs.items()) +
                  (" ok" if not bad else f" FAILED (> 1e-5: {', '.join(bad)})"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
