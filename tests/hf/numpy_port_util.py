"""What the numpy ports of HF models (deepseek_v3_numpy.py, jamba_numpy.py,
bamba_numpy.py, granitemoehybrid_numpy.py) share: f32 safetensors without torch, random weight makers, the norms,
MLP and grouped-query attention of HF's code, and the check that runs `fk import-hf` and
`fk forward` in each layout against the port's logits."""
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


def rms(x, g, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g


def silu(x):
    return x / (1 + np.exp(-x))


def mlp(w, x, p):
    """A gated SiLU MLP under prefix p (gate_proj, up_proj, down_proj)."""
    return silu(x @ w[p + "gate_proj.weight"].T) * (x @ w[p + "up_proj.weight"].T) @ w[p + "down_proj.weight"].T


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def weight_makers(W, rng):
    """lin(name, out, in) and vec(name, n, scale=0.1, base=1.0): random f32 tensors into W."""
    def lin(name, o, i):
        W[name] = (rng.standard_normal((o, i)) * 0.15).astype(np.float32)

    def vec(name, n, scale=0.1, base=1.0):
        W[name] = (base + scale * rng.standard_normal(n)).astype(np.float32)
    return lin, vec


def attention_weights(lin, p, H, NH, KV, HD):
    """q/k/v/o projections without bias under p + "self_attn."."""
    lin(p + "self_attn.q_proj.weight", NH * HD, H)
    lin(p + "self_attn.k_proj.weight", KV * HD, H)
    lin(p + "self_attn.v_proj.weight", KV * HD, H)
    lin(p + "self_attn.o_proj.weight", H, NH * HD)


def gqa_attention(w, h, p, NH, KV, HD, rope=None, scale=None):
    """HF's causal grouped-query attention of h [B, S, H] under p + "self_attn.", with
    rope(x [B, heads, S, HD], S) applied to q and k when given, and the softmax scale
    (default HD^-1/2)."""
    B, S, _ = h.shape
    q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(B, S, NH, HD).transpose(0, 2, 1, 3)
    k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(B, S, KV, HD).transpose(0, 2, 1, 3)
    v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(B, S, KV, HD).transpose(0, 2, 1, 3)
    if rope is not None:
        q, k = rope(q, S), rope(k, S)
    k, v = np.repeat(k, NH // KV, 1), np.repeat(v, NH // KV, 1)
    sc = q @ k.transpose(0, 1, 3, 2) * (HD ** -0.5 if scale is None else scale) + np.triu(np.full((S, S), -np.inf), 1)
    sc = np.exp(sc - sc.max(-1, keepdims=True))
    sc /= sc.sum(-1, keepdims=True)
    return (sc @ v).transpose(0, 2, 1, 3).reshape(B, S, NH * HD) @ w[p + "self_attn.o_proj.weight"].T


def write_case(out_dir, config, weights, ids, logits):
    """config.json, model.safetensors, inputs.safetensors and logits.npy in out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    json.dump(config, open(f"{out_dir}/config.json", "w"))
    save_st(f"{out_dir}/model.safetensors", weights)
    save_st(f"{out_dir}/inputs.safetensors", {"input_ids": ids})
    np.save(f"{out_dir}/logits.npy", logits)


def check_layouts(fk, d, want, label, layouts=("tp1", "tp2", "pp2", "tp2pp2"), tol=1e-5):
    """`fk import-hf` of d/config.json, then `fk forward` in each layout; prints one line a
    layout and returns how many were off by more than tol (relative L2 of the logits)."""
    subprocess.run([fk, "import-hf", f"{d}/config.json", "-o", f"{d}/spec.yaml"], check=True)
    failed = 0
    for layout in layouts:
        out = f"{d}/out-{layout}.safetensors"
        subprocess.run([fk, "forward", f"{d}/spec.yaml", "--weights", f"{d}/model.safetensors", "--inputs",
                        f"{d}/inputs.safetensors", "--layout", layout, "-o", out, "--timeout", "300"], check=True)
        got = load_st(out)["logits"].astype(np.float64).reshape(want.shape)
        rel = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        ok = rel <= tol
        failed += not ok
        print(f"{label} {layout}: logits rel L2 {rel:.3e} {'ok' if ok else f'FAILED (> {tol:g})'}")
    return failed


def run_port(fk, work, variants, sizes, make_weights, forward, seed):
    """Each variant's tiny model (sizes(variant): its config() and V), weights from
    make_weights(z, rng) with numpy's generator of `seed`, two 12-token prompts and the
    port's logits forward(z, weights, ids), written to work/<variant> and checked in every
    layout; exits 1 when any layout is off."""
    failed = 0
    for variant in variants:
        d = os.path.join(work, variant)
        z = sizes(variant)
        rng = np.random.default_rng(seed)
        weights = make_weights(z, rng)
        ids = rng.integers(0, z.V, (2, 12)).astype(np.int64)
        logits = forward(z, weights, ids)
        write_case(d, z.config(), weights, ids, logits)
        failed += check_layouts(fk, d, logits, variant)
    sys.exit(1 if failed else 0)
