// The built-in attention mixer (mixer.h): multi-head, grouped-query and multi-query
// attention over a KV cache, as vLLM's Attention layer runs it:
//   qkv = qkv_proj(x) (q, k and v projections fused; TP splits the heads, kv heads
//         replicated when tp exceeds them); q, k and v taken apart
//   optional q/k norms: per head (Qwen3, Gemma 3), each head its own weights (Cohere),
//         or over all heads of a token (OLMo 2, gathered across TP as vLLM does)
//   rotary_embedding(q, k) on rope layers; kv_cache_write(k, v)
//   attention(q, cache) with the layer type's sliding window, sinks, soft-cap
//   out = o_proj(o), all-reduced over TP (its bias added once, by TP rank 0)
// The default kind: it takes every layer no other mixer takes.
#include "runner/model/transformer/mixer.h"

#include <functional>

namespace fk::runner {
namespace {

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

// qkv_w [(Hq_l + 2 Hk_l) D, H] from q_proj, k_proj and v_proj; o_w [H, Hq_l D]; their
// biases, sinks and q/k norms when the architecture has them.
void attention_weights(const LayerGen& g, int64_t l, LayerWeights& w) {
  const spec::Architecture& a = g.a;
  const Placement& pl = g.pl;
  const int64_t h = a.hidden_size, d = a.head_dim;
  const int64_t hq = pl.q_heads(a), hk = pl.kv_heads(a);
  const int64_t q0 = pl.tp_rank * hq * d, k0 = pl.kv_head_begin(a) * d;
  const int64_t qt = a.num_attention_heads * d, kt = a.num_key_value_heads * d;
  w.qkv_w = g.make(plan_concat_rows({g.rows(g.layer_name(l, "self_attn.q_proj.weight"), qt, q0, hq * d, h),
                                     g.rows(g.layer_name(l, "self_attn.k_proj.weight"), kt, k0, hk * d, h),
                                     g.rows(g.layer_name(l, "self_attn.v_proj.weight"), kt, k0, hk * d, h)}));
  if (a.attention.qkv_bias)
    w.qkv_b = g.make(plan_concat_vectors({g.bias_rows(g.layer_name(l, "self_attn.q_proj.bias"), qt, q0, hq * d),
                                          g.bias_rows(g.layer_name(l, "self_attn.k_proj.bias"), kt, k0, hk * d),
                                          g.bias_rows(g.layer_name(l, "self_attn.v_proj.bias"), kt, k0, hk * d)}));
  w.o_w = g.make(g.cols(g.layer_name(l, "self_attn.o_proj.weight"), qt, q0, hq * d));
  if (a.attention.out_bias) w.o_b = g.make(g.bias_rows(g.layer_name(l, "self_attn.o_proj.bias"), h, 0, h));
  if (a.attention.sinks)
    w.sinks = g.make.fp32_in_dtype(
        plan_vector(g.layer_name(l, "self_attn.sinks"), a.num_attention_heads, q0 / d, hq, -1.0f, 1.0f));
  if (a.attention.qk_norm && a.attention.qk_norm_per_head) {
    // Each head its own weights, stored [heads, d] (Cohere; StableLM's one tensor a
    // head): this rank's heads' rows.
    const float c = a.norm.weight_offset != 0 ? 0.0f : 1.0f;
    const auto per_head = [&](const char* what, int64_t heads, int64_t begin, int64_t count, bool bias) {
      const std::string name = g.layer_name(l, fmt::format("self_attn.{}", what));
      const float lo = bias ? -0.1f : c - 0.2f, hi = bias ? 0.1f : c + 0.2f;
      Planned p = g.draw(name, heads, d, begin / d, count, 0, d, lo, hi,
                         bias ? 0.0f : static_cast<float>(a.norm.weight_offset));
      p.shape = {count * d};  // the [count, d] block, flat (head_norm's weight is 1-D)
      return g.make(p);
    };
    w.q_norm = per_head("q_norm.weight", a.num_attention_heads, q0, hq, false);
    w.k_norm = per_head("k_norm.weight", a.num_key_value_heads, k0, hk, false);
    if (a.qk_norm_has_bias()) {
      w.q_norm_b = per_head("q_norm.bias", a.num_attention_heads, q0, hq, true);
      w.k_norm_b = per_head("k_norm.bias", a.num_key_value_heads, k0, hk, true);
    }
  } else if (a.attention.qk_norm) {  // per head [d], or over all heads (OLMo 2), replicated on every rank
    const bool full = a.attention.qk_norm_full;
    w.q_norm = g.make(g.scale(g.layer_name(l, "self_attn.q_norm.weight"), full ? qt : d));
    w.k_norm = g.make(g.scale(g.layer_name(l, "self_attn.k_norm.weight"), full ? kt : d));
    if (a.qk_norm_has_bias()) {  // per-head LayerNorms (Persimmon)
      w.q_norm_b = g.make(g.norm_bias(g.layer_name(l, "self_attn.q_norm.bias"), d));
      w.k_norm_b = g.make(g.norm_bias(g.layer_name(l, "self_attn.k_norm.bias"), d));
    }
  }
}

class Attention final : public Mixer {
 public:
  Attention(const LayerContext& ctx, int64_t layer) : c_(ctx), type_(ctx.arch.layer_type(layer)) {
    const int64_t hk = c_.placement.kv_heads(c_.arch), d = c_.arch.head_dim;
    k_cache_ = c_.rt.zeros(c_.dtype, {c_.batch, c_.max_positions, hk, d});
    v_cache_ = c_.rt.zeros(c_.dtype, {c_.batch, c_.max_positions, hk, d});
  }

  void reset() override {
    c_.rt.zero(k_cache_);
    c_.rt.zero(v_cache_);
  }

  Tensor forward(const LayerWeights& w, const Tensor& x, const MixerStep& st) override {
    const spec::Architecture& a = c_.arch;
    const Placement& pl = c_.placement;
    Runtime& rt = c_.rt;
    const int64_t rows = x.size(0), d = a.head_dim, hq = pl.q_heads(a), hk = pl.kv_heads(a);
    Tensor qkv = c_.linear(x, w.qkv_w, w.qkv_b, "attn.qkv_proj");
    // q, k and v as contiguous tensors: the ops take them so (vLLM's take strided views).
    Tensor q = rt.empty(c_.dtype, {rows, hq * d});
    Tensor k = rt.empty(c_.dtype, {rows, hk * d});
    Tensor v = rt.empty(c_.dtype, {rows, hk * d});
    rt.copy_rows(q, qkv.slice(1, 0, hq * d));
    rt.copy_rows(k, qkv.slice(1, hq * d, hk * d));
    rt.copy_rows(v, qkv.slice(1, (hq + hk) * d, hk * d));
    if (a.attention.qk_norm && a.attention.qk_norm_full) {
      q = full_width_norm(
          q, w.q_norm, hq, a.num_attention_heads, [&](int64_t r) { return r * hq; }, "attn.q_norm");
      k = full_width_norm(
          k, w.k_norm, hk, a.num_key_value_heads,
          [&](int64_t r) {
            Placement other = pl;
            other.tp_rank = r;
            return other.kv_head_begin(a);
          },
          "attn.k_norm");
    } else if (a.attention.qk_norm && a.attention.qk_norm_per_head) {  // each head its own weights
      q = head_norm(q, w.q_norm, w.q_norm_b, "attn.q_norm");
      k = head_norm(k, w.k_norm, w.k_norm_b, "attn.k_norm");
    } else if (a.attention.qk_norm) {  // each head by the model's norm kind
      q = c_.norm(q.reshape({rows * hq, d}), w.q_norm, w.q_norm_b, "attn.q_norm").reshape({rows, hq * d});
      k = c_.norm(k.reshape({rows * hk, d}), w.k_norm, w.k_norm_b, "attn.k_norm").reshape({rows, hk * d});
    }
    if (a.layer_has_rope(w.index)) {  // NoPE layers (position.rope_layers) rotate nothing
      rt.run("rotary_embedding", "attn.rotary",
             call({c_.positions, q, k, c_.rope.at(type_)},
                  {static_cast<double>(d), a.position.rope_style == spec::RopeStyle::kNeox ? 1.0 : 0.0}));
    }
    Tensor kc = k_cache_.slice(0, st.seq_begin, st.seqs);
    Tensor vc = v_cache_.slice(0, st.seq_begin, st.seqs);
    rt.run("kv_cache_write", "attn.kv_cache_write",
           call({k.reshape({rows, hk, d}), v.reshape({rows, hk, d}), kc, vc},
                {static_cast<double>(st.q_len), static_cast<double>(st.q_start)}));
    Tensor o = rt.empty(c_.dtype, {rows, hq, d});
    const double window = type_ == spec::LayerType::kSliding ? static_cast<double>(*a.attention.sliding_window) : 0.0;
    rt.run("attention", "attn.attention",
           call({o, q.reshape({rows, hq, d}), kc, vc, w.sinks},
                {a.attention_scale(), static_cast<double>(st.q_len), static_cast<double>(st.q_start),
                 a.attention.causal ? 1.0 : 0.0, window, a.attention.logit_softcap.value_or(0.0)}));
    Tensor out = c_.linear(o.reshape({rows, hq * d}), w.o_w, pl.tp_rank == 0 ? w.o_b : Tensor(), "attn.o_proj");
    rt.all_reduce(c_.comms.tp, out, "tp.attn_out");
    return out;
  }

 private:
  // head_norm over [rows, heads x head_dim]: each head its own weight (and, for a
  // LayerNorm, bias when b is defined) out of w [heads x head_dim].
  Tensor head_norm(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) const {
    Tensor out = c_.rt.empty(x.dtype(), x.shape());
    const bool layer = c_.arch.norm.kind == spec::NormKind::kLayerNorm;
    c_.rt.run("head_norm", role,
              call({out, x, w, layer ? b : Tensor()},
                   {c_.arch.norm.eps, static_cast<double>(c_.arch.head_dim), layer ? 1.0 : 0.0}));
    return out;
  }

  // OLMo 2's q/k norm: one RMSNorm over all `heads` heads of a token, of which this rank
  // holds `local` (those from head_begin(tp_rank) on). With TP the ranks' blocks are
  // all-gathered into the full width, normalised there and this rank's block taken back,
  // as vLLM's Olmo2Attention does; replicated kv heads are written once per holder.
  Tensor full_width_norm(const Tensor& x, const Tensor& weight, int64_t local, int64_t heads,
                         const std::function<int64_t(int64_t)>& head_begin, const std::string& role) const {
    const Placement& pl = c_.placement;
    Runtime& rt = c_.rt;
    const int64_t rows = x.size(0), d = c_.arch.head_dim;
    if (pl.tp == 1) return c_.norm(x, weight, Tensor(), role);
    Tensor gathered = rt.empty(c_.dtype, {pl.tp, rows, local * d});
    rt.all_gather(c_.comms.tp, x, gathered, "tp." + role.substr(role.find('.') + 1) + "_gather");
    Tensor full = rt.empty(c_.dtype, {rows, heads * d});
    for (int64_t r = 0; r < pl.tp; ++r)
      rt.copy_rows(full.slice(1, head_begin(r) * d, local * d), gathered.slice(0, r, 1).reshape({rows, local * d}));
    const Tensor normed = c_.norm(full, weight, Tensor(), role);
    Tensor out = rt.empty(c_.dtype, {rows, local * d});
    rt.copy_rows(out, normed.slice(1, head_begin(pl.tp_rank) * d, local * d));
    return out;
  }

  const LayerContext& c_;
  spec::LayerType type_;
  Tensor k_cache_, v_cache_;  // [batch, L, Hk_l, D]
};

std::unique_ptr<Mixer> make_attention(const LayerContext& ctx, int64_t layer) {
  return std::make_unique<Attention>(ctx, layer);
}

}  // namespace

void register_attention_mixer(MixerRegistry& r) {
  MixerKind k;
  k.name = "attention";
  k.is_default = true;
  k.weights = attention_weights;
  k.make = make_attention;
  r.add(std::move(k));
}

}  // namespace fk::runner
