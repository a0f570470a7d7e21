#!/usr/bin/env python3
"""ConvNeXt (ConvNextModel) and ConvNeXt V2 (ConvNextV2Model) against an independent numpy
port of HF transformers' modeling code.

Beside the HF fixtures (tests/fixtures/hf/{convnext,convnextv2}, made with transformers),
this checks the family with a forward written from HF's code: the stem (a Conv2d of
kernel = stride = patch_size, then a LayerNorm over channels), each later stage's
downsampler (a LayerNorm, then a 2 x 2 stride-2 Conv2d that drops an odd last row and
column), the blocks (a 7 x 7 depthwise Conv2d with zero padding 3, a LayerNorm, the
pointwise MLP with exact GELU, V2's GRN, V1's layer scale, the residual), and the
pooler (the mean over the last map, then a LayerNorm of layer_norm_eps). It writes a
tiny checkpoint with HF's tensor names and shapes (Conv2d weights [O, I, k, k], GRN's
[1, 1, 1, C]) and config.json keys, computes the outputs in f64, then runs
`fk import-hf` and `fk forward` (inputs: pixel_values) in each layout the family has
and compares pooler_output and every hidden state (the stem's output, then each
stage's) within 1e-5 relative L2. A tensor-parallel layout must be refused.

Usage: convnext_numpy.py FK WORK_DIR
"""
import json, math, os, subprocess, sys
import numpy as np

from numpy_port_util import load_st, save_st

VARIANTS = {"convnext": 1, "convnextv2": 2}
C, P, B, IMG = 3, 2, 2, 22          # side 11 -> 5 -> 2 -> 1: odd maps lose their last row and column
WIDTHS, DEPTHS = [8, 12, 16, 20], [1, 2, 1, 1]
K, EPS_BLOCK, EPS_POOL = 7, 1e-6, 1e-5


def sides():
    s = [IMG // P]
    for _ in WIDTHS[1:]:
        s.append(s[-1] // 2)
    return s


def config(variant):
    c = {"model_type": variant, "num_channels": C, "patch_size": P, "num_stages": len(WIDTHS),
         "hidden_sizes": WIDTHS, "depths": DEPTHS, "hidden_act": "gelu", "layer_norm_eps": EPS_POOL,
         "image_size": IMG, "drop_path_rate": 0.0}
    if variant == "convnext":
        c["layer_scale_init_value"] = 1e-6
    return c


def make_weights(variant, rng):
    W = {}

    def vec(name, n, scale=0.1, base=0.0):
        W[name] = (base + scale * rng.standard_normal(n)).astype(np.float32)

    def conv(name, o, i, k):
        W[name + ".weight"] = (rng.standard_normal((o, i, k, k)) / math.sqrt(i * k * k)).astype(np.float32)
        vec(name + ".bias", o)

    def lin(name, o, i):
        W[name + ".weight"] = (rng.standard_normal((o, i)) / math.sqrt(i)).astype(np.float32)
        vec(name + ".bias", o)

    def norm(name, n):
        vec(name + ".weight", n, 0.1, 1.0)
        vec(name + ".bias", n)

    conv("embeddings.patch_embeddings", WIDTHS[0], C, P)
    norm("embeddings.layernorm", WIDTHS[0])
    for i, (c, d) in enumerate(zip(WIDTHS, DEPTHS)):
        st = f"encoder.stages.{i}."
        if i > 0:
            norm(st + "downsampling_layer.0", WIDTHS[i - 1])
            conv(st + "downsampling_layer.1", c, WIDTHS[i - 1], 2)
        for j in range(d):
            b = f"{st}layers.{j}."
            W[b + "dwconv.weight"] = (rng.standard_normal((c, 1, K, K)) / K).astype(np.float32)
            vec(b + "dwconv.bias", c)
            norm(b + "layernorm", c)
            lin(b + "pwconv1", 4 * c, c)
            lin(b + "pwconv2", c, 4 * c)
            if variant == "convnextv2":
                W[b + "grn.weight"] = (0.5 * rng.standard_normal((1, 1, 1, 4 * c))).astype(np.float32)
                W[b + "grn.bias"] = (0.1 * rng.standard_normal((1, 1, 1, 4 * c))).astype(np.float32)
            else:
                vec(b + "layer_scale_parameter", c, 0.3, 0.6)
    norm("layernorm", WIDTHS[-1])
    return W


def ln(x, w, p, eps):
    m = x.mean(-1, keepdims=True)
    var = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def patches(x, p):
    """NHWC [B, s, s, Ci] -> [B, s/p, s/p, Ci p p] (columns as a Conv2d weight [O, Ci, p, p] flattened)."""
    b, s, _, ci = x.shape
    n = s // p
    x = x[:, :n * p, :n * p].reshape(b, n, p, n, p, ci).transpose(0, 1, 3, 5, 2, 4)
    return x.reshape(b, n, n, ci * p * p)


def dwconv(x, wt, bias):
    b, s, _, c = x.shape
    pad = K // 2
    xp = np.zeros((b, s + 2 * pad, s + 2 * pad, c))
    xp[:, pad:pad + s, pad:pad + s] = x
    out = np.broadcast_to(bias, x.shape).copy()
    for ky in range(K):
        for kx in range(K):
            out += xp[:, ky:ky + s, kx:kx + s] * wt[:, 0, ky, kx]
    return out


def forward(variant, W, pixels):
    """(pooler_output [B, C_last], hidden_states: NHWC maps) in f64."""
    w = {k: v.astype(np.float64) for k, v in W.items()}
    x = pixels.astype(np.float64).transpose(0, 2, 3, 1)  # NHWC
    e = "embeddings."
    x = patches(x, P) @ w[e + "patch_embeddings.weight"].reshape(WIDTHS[0], -1).T + w[e + "patch_embeddings.bias"]
    x = ln(x, w, e + "layernorm", EPS_BLOCK)
    hs = [x]
    for i, d in enumerate(DEPTHS):
        st = f"encoder.stages.{i}."
        if i > 0:
            x = ln(x, w, st + "downsampling_layer.0", EPS_BLOCK)
            x = patches(x, 2) @ w[st + "downsampling_layer.1.weight"].reshape(WIDTHS[i], -1).T + \
                w[st + "downsampling_layer.1.bias"]
        for j in range(d):
            b = f"{st}layers.{j}."
            y = dwconv(x, w[b + "dwconv.weight"], w[b + "dwconv.bias"])
            y = ln(y, w, b + "layernorm", EPS_BLOCK)
            y = gelu(y @ w[b + "pwconv1.weight"].T + w[b + "pwconv1.bias"])
            if variant == "convnextv2":
                gx = np.sqrt((y ** 2).sum(axis=(1, 2), keepdims=True))
                nx = gx / (gx.mean(axis=-1, keepdims=True) + 1e-6)
                y = w[b + "grn.weight"] * (y * nx) + w[b + "grn.bias"] + y
            y = y @ w[b + "pwconv2.weight"].T + w[b + "pwconv2.bias"]
            if variant == "convnext":
                y = y * w[b + "layer_scale_parameter"]
            x = x + y
        hs.append(x)
    pooled = ln(x.mean(axis=(1, 2)), w, "layernorm", EPS_POOL)
    return pooled, hs


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    fk, work = sys.argv[1], sys.argv[2]
    failed = 0
    assert sides() == [11, 5, 2, 1], sides()
    for variant in VARIANTS:
        d = os.path.join(work, variant)
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(43)
        W = make_weights(variant, rng)
        pixels = rng.uniform(-1, 1, (B, C, IMG, IMG)).astype(np.float32)
        pooled, hs = forward(variant, W, pixels)
        json.dump(config(variant), open(f"{d}/config.json", "w"))
        save_st(f"{d}/model.safetensors", W)
        save_st(f"{d}/inputs.safetensors", {"pixel_values": pixels})
        subprocess.run([fk, "import-hf", f"{d}/config.json", "-o", f"{d}/spec.yaml"], check=True)
        for layout in ("tp1", "pp2", "dp2"):
            out = f"{d}/out-{layout}.safetensors"
            subprocess.run([fk, "forward", f"{d}/spec.yaml", "--weights", f"{d}/model.safetensors", "--inputs",
                            f"{d}/inputs.safetensors", "--layout", layout, "-o", out, "--timeout", "300"], check=True)
            got = load_st(out)
            errs = {"pooler_output": rel(got["pooler_output"].astype(np.float64).reshape(pooled.shape), pooled)}
            for i, h in enumerate(hs):
                errs[f"hidden_states.{i}"] = rel(got[f"hidden_states.{i}"].astype(np.float64).reshape(h.shape), h)
            bad = {k: v for k, v in errs.items() if not v <= 1e-5}
            failed += bool(bad)
            print(f"{variant} {layout}: " + ", ".join(f"{k} rel L2 {v:.3e}" for k, v in errs.items()) +
                  (" ok" if not bad else f" FAILED (> 1e-5: {', '.join(bad)})"))
        r = subprocess.run([fk, "forward", f"{d}/spec.yaml", "--weights", f"{d}/model.safetensors", "--inputs",
                            f"{d}/inputs.safetensors", "--layout", "tp2", "-o", f"{d}/out-tp2.safetensors",
                            "--timeout", "300"], capture_output=True, text=True)
        refused = r.returncode != 0 and "not tensor-parallel" in r.stdout + r.stderr
        failed += not refused
        print(f"{variant} tp2: " + ("refused: ok" if refused else f"FAILED (rc {r.returncode}: {(r.stdout + r.stderr).strip()})"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
