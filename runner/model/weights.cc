#include "runner/model/weights.h"

#include "core/hash.h"
#include "core/rng.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using spec::Architecture;

Tensor draw(uint64_t seed, const std::string& name, int64_t rows_total, int64_t cols_total, int64_t r0, int64_t nr,
            int64_t c0, int64_t nc, float lo, float hi) {
  Tensor t = Tensor::empty(DType::kF32, {nr, nc});
  rng_fill_uniform(RngStream(seed, name), ShardBox{{rows_total, cols_total}, {r0, c0}, {nr, nc}}, lo, hi,
                   t.span<float>());
  return t;
}

// With `copy` false (placeholders) only the shape is made.
Tensor concat_rows(const std::vector<Tensor>& parts, bool copy) {
  int64_t rows = 0, cols = parts.empty() ? 0 : parts[0].size(1);
  for (const auto& p : parts) rows += p.size(0);
  Tensor out = Tensor::empty(parts.empty() ? DType::kF32 : parts[0].dtype(), {rows, cols});
  if (!copy) return out;
  char* dst = static_cast<char*>(out.data());
  for (const auto& p : parts) {
    std::memcpy(dst, p.data(), p.nbytes());
    dst += p.nbytes();
  }
  return out;
}

// Vectors of any lengths, end to end.
Tensor concat_vectors(const std::vector<Tensor>& parts, bool copy) {
  int64_t n = 0;
  for (const auto& p : parts) n += p.numel();
  Tensor out = Tensor::empty(parts.empty() ? DType::kF32 : parts[0].dtype(), {n});
  if (!copy) return out;
  float* dst = out.data_as<float>();
  for (const auto& p : parts) {
    std::memcpy(dst, p.data(), p.nbytes());
    dst += p.numel();
  }
  return out;
}

float linear_bound(int64_t fan_in) { return static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in))); }

// Builds a shard from `src` (fp32), or when `src` is null placeholders in `dtype`:
// tensors of the same shapes that are allocated and never written.
struct Gen {
  const Architecture& a;
  const Placement& pl;
  const WeightSource* src;
  DType dtype = DType::kF32;

  bool fill() const { return src != nullptr; }
  Tensor draw(const std::string& name, int64_t rows_total, int64_t cols_total, int64_t r0, int64_t nr, int64_t c0,
              int64_t nc, float lo, float hi) const {
    if (!fill()) return Tensor::empty(dtype, {nr, nc});
    return src->block(name, rows_total, cols_total, r0, nr, c0, nc, lo, hi);
  }
  Tensor concat_rows(const std::vector<Tensor>& parts) const { return runner::concat_rows(parts, fill()); }
  Tensor concat_vectors(const std::vector<Tensor>& parts) const { return runner::concat_vectors(parts, fill()); }
  Tensor draw_vector(const std::string& name, int64_t n, float lo, float hi) const {
    return draw(name, 1, n, 0, 1, 0, n, lo, hi).reshape({n});
  }

  std::string layer_name(int64_t l, const std::string& rest) const { return fmt::format("model.layers.{}.{}", l, rest); }

  Tensor norm(const std::string& name, int64_t n = 0) const {
    const float c = a.norm.weight_offset != 0 ? 0.0f : 1.0f;  // Gemma stores w in (1 + w)
    Tensor w = draw_vector(name, n > 0 ? n : a.hidden_size, c - 0.2f, c + 0.2f);
    if (fill() && a.norm.weight_offset != 0) {  // fold the offset in: the op multiplies by the tensor
      for (float& v : w.span<float>()) v += static_cast<float>(a.norm.weight_offset);
    }
    return w;
  }
  Tensor norm_bias(const std::string& name) const { return draw_vector(name, a.hidden_size, -0.1f, 0.1f); }

  // Column-parallel rows [begin, begin + count) of a [rows_total, H] projection.
  Tensor rows(const std::string& name, int64_t rows_total, int64_t begin, int64_t count, int64_t fan_in) const {
    const float b = linear_bound(fan_in);
    return draw(name, rows_total, fan_in, begin, count, 0, fan_in, -b, b);
  }
  Tensor bias_rows(const std::string& name, int64_t total, int64_t begin, int64_t count) const {
    return draw(name, 1, total, 0, 1, begin, count, -0.1f, 0.1f).reshape({count});
  }
  // Row-parallel columns [begin, begin + count) of a [H, cols_total] projection.
  Tensor cols(const std::string& name, int64_t cols_total, int64_t begin, int64_t count) const {
    const float b = linear_bound(cols_total);
    return draw(name, a.hidden_size, cols_total, 0, a.hidden_size, begin, count, -b, b);
  }

  LayerWeights layer(int64_t l) const {
    LayerWeights w;
    w.index = l;
    const int64_t h = a.hidden_size, d = a.head_dim;
    const int64_t hq = pl.q_heads(a), hk = pl.kv_heads(a);
    const int64_t q0 = pl.tp_rank * hq * d, k0 = pl.kv_head_begin(a) * d;
    const int64_t qt = a.num_attention_heads * d, kt = a.num_key_value_heads * d;
    w.qkv_w = concat_rows({rows(layer_name(l, "self_attn.q_proj.weight"), qt, q0, hq * d, h),
                           rows(layer_name(l, "self_attn.k_proj.weight"), kt, k0, hk * d, h),
                           rows(layer_name(l, "self_attn.v_proj.weight"), kt, k0, hk * d, h)});
    if (a.attention.qkv_bias)
      w.qkv_b = concat_vectors({bias_rows(layer_name(l, "self_attn.q_proj.bias"), qt, q0, hq * d),
                                bias_rows(layer_name(l, "self_attn.k_proj.bias"), kt, k0, hk * d),
                                bias_rows(layer_name(l, "self_attn.v_proj.bias"), kt, k0, hk * d)});
    w.o_w = cols(layer_name(l, "self_attn.o_proj.weight"), qt, q0, hq * d);
    if (a.attention.out_bias) w.o_b = bias_rows(layer_name(l, "self_attn.o_proj.bias"), h, 0, h);
    if (a.attention.qk_norm) {
      w.q_norm = norm(layer_name(l, "self_attn.q_norm.weight"), d);
      w.k_norm = norm(layer_name(l, "self_attn.k_norm.weight"), d);
    }
    const bool ln = a.norm.kind == spec::NormKind::kLayerNorm;
    w.attn_norm_w = norm(layer_name(l, "input_layernorm.weight"));
    w.mlp_norm_w = norm(layer_name(l, "post_attention_layernorm.weight"));
    if (ln) {
      w.attn_norm_b = norm_bias(layer_name(l, "input_layernorm.bias"));
      w.mlp_norm_b = norm_bias(layer_name(l, "post_attention_layernorm.bias"));
    }
    if (a.norm.placement == spec::NormPlacement::kSandwich) {
      // Gemma 2/3 names: post_attention_layernorm normalises the attention output,
      // pre_feedforward_layernorm the MLP input, post_feedforward_layernorm its output.
      w.post_attn_norm_w = w.mlp_norm_w;
      w.mlp_norm_w = norm(layer_name(l, "pre_feedforward_layernorm.weight"));
      w.post_mlp_norm_w = norm(layer_name(l, "post_feedforward_layernorm.weight"));
    }
    if (a.layer_is_moe(l)) {
      moe(w, l);
    } else {
      dense(w, l);
    }
    return w;
  }

  void dense(LayerWeights& w, int64_t l) const {
    const int64_t inter = a.intermediate_size, il = inter / pl.tp, i0 = pl.tp_rank * il;
    if (a.mlp.gated) {
      w.up_w = concat_rows({rows(layer_name(l, "mlp.gate_proj.weight"), inter, i0, il, a.hidden_size),
                            rows(layer_name(l, "mlp.up_proj.weight"), inter, i0, il, a.hidden_size)});
      if (a.mlp.bias)
        w.up_b = concat_vectors({bias_rows(layer_name(l, "mlp.gate_proj.bias"), inter, i0, il),
                                 bias_rows(layer_name(l, "mlp.up_proj.bias"), inter, i0, il)});
    } else {
      w.up_w = rows(layer_name(l, "mlp.fc1.weight"), inter, i0, il, a.hidden_size);
      if (a.mlp.bias) w.up_b = bias_rows(layer_name(l, "mlp.fc1.bias"), inter, i0, il);
    }
    w.down_w = cols(layer_name(l, a.mlp.gated ? "mlp.down_proj.weight" : "mlp.fc2.weight"), inter, i0, il);
    if (a.mlp.bias)
      w.down_b = bias_rows(layer_name(l, a.mlp.gated ? "mlp.down_proj.bias" : "mlp.fc2.bias"), a.hidden_size, 0,
                           a.hidden_size);
  }

  void moe(LayerWeights& w, int64_t l) const {
    const int64_t h = a.hidden_size, e = a.moe.num_experts;
    const int64_t im = a.moe.moe_intermediate_size, iml = im / pl.tp, i0 = pl.tp_rank * iml;
    w.router_w = rows(layer_name(l, "mlp.gate.weight"), e, 0, e, h);
    std::vector<Tensor> up, down;
    for (int64_t x = 0; x < e; ++x) {
      up.push_back(rows(layer_name(l, fmt::format("mlp.experts.{}.gate_proj.weight", x)), im, i0, iml, h));
      up.push_back(rows(layer_name(l, fmt::format("mlp.experts.{}.up_proj.weight", x)), im, i0, iml, h));
      down.push_back(cols(layer_name(l, fmt::format("mlp.experts.{}.down_proj.weight", x)), im, i0, iml));
    }
    w.w13 = concat_rows(up).reshape({e, 2 * iml, h});
    Tensor d = Tensor::empty(dtype, {e, h, iml});
    for (int64_t x = 0; x < e && fill(); ++x)
      std::memcpy(d.data_as<float>() + x * h * iml, down[static_cast<size_t>(x)].data(), down[static_cast<size_t>(x)].nbytes());
    w.w2 = d;
    if (a.moe.shared_experts > 0) {
      const int64_t is = a.moe.shared_intermediate_size * a.moe.shared_experts, isl = is / pl.tp, s0 = pl.tp_rank * isl;
      w.shared_up_w = concat_rows({rows(layer_name(l, "mlp.shared_expert.gate_proj.weight"), is, s0, isl, h),
                                   rows(layer_name(l, "mlp.shared_expert.up_proj.weight"), is, s0, isl, h)});
      w.shared_down_w = cols(layer_name(l, "mlp.shared_expert.down_proj.weight"), is, s0, isl);
    }
  }

  Tensor vocab_block(const std::string& name) const {
    const int64_t block = pl.vocab_block(a), n = pl.vocab_rows(a), h = a.hidden_size;
    if (!fill()) return Tensor::empty(dtype, {block, h});
    Tensor t = Tensor::zeros(DType::kF32, {block, h});
    if (n > 0) {
      const float b = name.find("embed_tokens") != std::string::npos ? std::sqrt(3.0f) : linear_bound(h);
      Tensor part = draw(name, a.vocab_size, h, pl.vocab_begin(a), n, 0, h, -b, b);
      std::memcpy(t.data(), part.data(), part.nbytes());
    }
    return t;
  }
};

}  // namespace

Tensor RandomWeights::block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                           int64_t nc, float lo, float hi) const {
  return draw(seed_, name, rows, cols, r0, nr, c0, nc, lo, hi);
}

ModelWeights ModelWeights::generate(const Architecture& a, const Placement& pl, uint64_t seed) {
  return build(a, pl, RandomWeights(seed));
}

ModelWeights ModelWeights::build(const Architecture& a, const Placement& pl, const WeightSource& source) {
  return build_shard(a, pl, &source, DType::kF32);
}

ModelWeights ModelWeights::placeholders(const Architecture& a, const Placement& pl, DType dtype) {
  return build_shard(a, pl, nullptr, dtype);
}

ModelWeights ModelWeights::build_shard(const Architecture& a, const Placement& pl, const WeightSource* source,
                                       DType dtype) {
  Gen g{a, pl, source, source != nullptr ? DType::kF32 : dtype};
  ModelWeights m;
  m.dtype = g.dtype;
  const bool ln = a.norm.kind == spec::NormKind::kLayerNorm;
  if (pl.first_stage()) {
    m.embed = g.vocab_block("model.embed_tokens.weight");
    if (a.position.kind == spec::PositionKind::kLearned)
      m.pos_embed = g.draw("model.embed_positions.weight", a.max_position_embeddings, a.hidden_size, 0,
                         a.max_position_embeddings, 0, a.hidden_size, -std::sqrt(3.0f), std::sqrt(3.0f));
    if (a.embedding.type_vocab_size > 0)
      m.type_embed = g.draw("model.embed_token_types.weight", a.embedding.type_vocab_size, a.hidden_size, 0,
                          a.embedding.type_vocab_size, 0, a.hidden_size, -std::sqrt(3.0f), std::sqrt(3.0f));
    if (a.embedding.norm) {
      m.embed_norm_w = g.norm("model.embed_norm.weight");
      if (ln) m.embed_norm_b = g.norm_bias("model.embed_norm.bias");
    }
  }
  const int64_t first = pl.first_layer(a);
  for (int64_t l = first; l < first + pl.layer_count(a); ++l) m.layers.push_back(g.layer(l));
  if (pl.last_stage()) {
    if (a.head.final_norm) {
      m.final_norm_w = g.norm("model.norm.weight");
      if (ln) m.final_norm_b = g.norm_bias("model.norm.bias");
    }
    if (a.head.kind == spec::HeadKind::kLm)
      m.lm_head = a.embedding.tied ? (m.embed.defined() ? m.embed : g.vocab_block("model.embed_tokens.weight"))
                                   : g.vocab_block("lm_head.weight");
  }
  return m;
}

namespace {
Tensor convert(const Tensor& t, DType d) { return t.defined() ? t.to_dtype(d) : t; }
}  // namespace

ModelWeights ModelWeights::to_dtype(DType d) const {
  ModelWeights m = *this;
  m.dtype = d;
  for (Tensor* t : {&m.embed, &m.pos_embed, &m.type_embed, &m.embed_norm_w, &m.embed_norm_b, &m.final_norm_w,
                    &m.final_norm_b, &m.lm_head})
    *t = convert(*t, d);
  for (auto& l : m.layers)
    for (Tensor* t : {&l.qkv_w, &l.qkv_b, &l.o_w, &l.o_b, &l.q_norm, &l.k_norm, &l.attn_norm_w, &l.attn_norm_b,
                      &l.mlp_norm_w, &l.mlp_norm_b, &l.post_attn_norm_w, &l.post_mlp_norm_w, &l.up_w, &l.up_b,
                      &l.down_w, &l.down_b, &l.router_w, &l.w13, &l.w2, &l.shared_up_w, &l.shared_down_w})
      *t = convert(*t, d);
  return m;
}

ModelWeights ModelWeights::to_backend(kernels::Backend& backend) const {
  if (backend.kind() == DeviceKind::kCpu) return *this;
  ModelWeights m = *this;
  auto move = [&](Tensor* t) {
    if (t->defined()) *t = backend.to_device(*t);
  };
  const bool tied = lm_head.defined() && lm_head.data() == embed.data();
  for (Tensor* t : {&m.embed, &m.pos_embed, &m.type_embed, &m.embed_norm_w, &m.embed_norm_b, &m.final_norm_w,
                    &m.final_norm_b})
    move(t);
  if (tied) {
    m.lm_head = m.embed;
  } else {
    move(&m.lm_head);
  }
  for (auto& l : m.layers)
    for (Tensor* t : {&l.qkv_w, &l.qkv_b, &l.o_w, &l.o_b, &l.q_norm, &l.k_norm, &l.attn_norm_w, &l.attn_norm_b,
                      &l.mlp_norm_w, &l.mlp_norm_b, &l.post_attn_norm_w, &l.post_mlp_norm_w, &l.up_w, &l.up_b,
                      &l.down_w, &l.down_b, &l.router_w, &l.w13, &l.w2, &l.shared_up_w, &l.shared_down_w})
      move(t);
  return m;
}

int64_t ModelWeights::parameter_count() const {
  int64_t n = 0;
  auto count = [&](const Tensor& t) { n += t.defined() ? t.numel() : 0; };
  for (const Tensor* t : {&embed, &pos_embed, &type_embed, &embed_norm_w, &embed_norm_b, &final_norm_w, &final_norm_b})
    count(*t);
  if (lm_head.defined() && lm_head.data() != embed.data()) count(lm_head);
  for (const auto& l : layers)
    for (const Tensor* t : {&l.qkv_w, &l.qkv_b, &l.o_w, &l.o_b, &l.q_norm, &l.k_norm, &l.attn_norm_w, &l.attn_norm_b,
                            &l.mlp_norm_w, &l.mlp_norm_b, &l.post_attn_norm_w, &l.post_mlp_norm_w, &l.up_w, &l.up_b,
                            &l.down_w, &l.down_b, &l.router_w, &l.w13, &l.w2, &l.shared_up_w, &l.shared_down_w})
      count(*t);
  return n;
}

}  // namespace fk::runner
