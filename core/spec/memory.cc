#include "core/spec/memory.h"

#include <algorithm>
#include <fmt/format.h>

namespace fk::spec {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t heads_per_rank(const Architecture& a, int64_t tp) { return a.num_attention_heads / tp; }

int64_t kv_heads_per_rank(const Architecture& a, int64_t tp) {
  return std::max<int64_t>(1, a.num_key_value_heads / tp);
}

int64_t stage_layer_count(int64_t layers, int64_t pp, int64_t stage) {
  return layers / pp + (stage < layers % pp ? 1 : 0);
}

int64_t stage_first_layer(int64_t layers, int64_t pp, int64_t stage) {
  int64_t first = 0;
  for (int64_t s = 0; s < stage; ++s) first += stage_layer_count(layers, pp, s);
  return first;
}

int64_t layer_parameters_per_rank(const Architecture& a, int64_t layer, int64_t tp) {
  const int64_t h = a.hidden_size, hd = a.head_dim;
  const int64_t q = heads_per_rank(a, tp) * hd, kv = kv_heads_per_rank(a, tp) * hd;
  int64_t p = h * (q + 2 * kv) + q * h;
  if (a.attention.qkv_bias) p += q + 2 * kv;
  if (a.attention.out_bias) p += h;
  if (a.attention.qk_norm) p += 2 * hd;
  const int64_t norm_params = a.norm.kind == NormKind::kLayerNorm ? 2 * h : h;
  p += norm_params * (a.norm.placement == NormPlacement::kSandwich ? 4 : 2);
  const int64_t mats = a.mlp.gated ? 3 : 2;
  if (a.layer_is_moe(layer)) {
    const int64_t im = a.moe.moe_intermediate_size / tp;
    p += a.moe.num_experts * mats * h * im + h * a.moe.num_experts;
    if (a.moe.shared_experts > 0)
      p += a.moe.shared_experts * mats * h * (a.moe.shared_intermediate_size / tp);
  } else {
    const int64_t i = a.intermediate_size / tp;
    p += mats * h * i;
    if (a.mlp.bias) p += (mats - 1) * i + h;
  }
  return p;
}

MemoryEstimate memory_estimate(const Architecture& a, const Workload& w, const Layout& l) {
  const DType dt = w.dtype_for(a);
  const int64_t bytes = static_cast<int64_t>(dtype_size(dt));
  const int64_t h = a.hidden_size;
  const int64_t vocab_local = ceil_div(a.vocab_size, l.tp);
  const int64_t batch = w.batch / l.dp;
  const int64_t positions = w.max_positions();
  const int64_t kvr = kv_heads_per_rank(a, l.tp);

  MemoryEstimate best;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    MemoryEstimate m;
    const int64_t first = stage_first_layer(a.num_hidden_layers, l.pp, stage);
    const int64_t count = stage_layer_count(a.num_hidden_layers, l.pp, stage);
    for (int64_t layer = first; layer < first + count; ++layer) {
      m.parameters += layer_parameters_per_rank(a, layer, l.tp);
      int64_t ctx = positions;
      if (a.layer_type(layer) == LayerType::kSliding && a.attention.sliding_window)
        ctx = std::min(ctx, *a.attention.sliding_window);
      m.kv_cache_bytes += 2 * batch * ctx * kvr * a.head_dim * bytes;
    }
    if (stage == 0) {
      m.parameters += vocab_local * h;
      if (a.position.kind == PositionKind::kLearned) m.parameters += a.max_position_embeddings * h;
      m.parameters += a.embedding.type_vocab_size * h;
    }
    if (stage == l.pp - 1 && a.head.kind == HeadKind::kLm && !(a.embedding.tied && l.pp == 1))
      m.parameters += vocab_local * h;
    if (stage == l.pp - 1 && a.head.final_norm) m.parameters += h;
    m.weights_bytes = m.parameters * (bytes + (dt == DType::kF32 ? 0 : 4));
    // Per token (fp32 working set): residual + normed + attention out + q/k/v + MLP halves.
    const int64_t q = heads_per_rank(a, l.tp) * a.head_dim;
    const int64_t inter = a.moe.enabled() ? std::max(a.moe.moe_intermediate_size * a.moe.experts_per_token,
                                                     a.intermediate_size)
                                          : a.intermediate_size;
    const int64_t per_token = 4 * h + q + 2 * kvr * a.head_dim + 3 * (inter / l.tp);
    const int64_t tokens = batch * w.seq_len;
    constexpr int64_t kRowsInFlight = 64;  // query rows whose score rows exist at once
    m.activation_bytes = tokens * per_token * 4 + kRowsInFlight * heads_per_rank(a, l.tp) * positions * 4 +
                         batch * vocab_local * 4;
    if (m.total() > best.total()) best = m;
  }
  return best;
}

std::string bytes_human(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", b / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (bytes >= (int64_t{1} << 10)) return fmt::format("{:.1f} KiB", b / (1 << 10));
  return fmt::format("{} B", bytes);
}

}  // namespace fk::spec
