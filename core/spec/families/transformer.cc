// The transformer family, spec side (core/spec/family.h): every shipped architecture
// (decoders and encoders with attention and a dense or MoE MLP per layer). Which
// layouts cannot shard it (Megatron TP over heads and MLP columns, PP over layers) and
// the per-rank memory estimate (memory.h; docs/specs.md, "Memory estimate"). The
// runner side is runner/model/transformer/.
#include "core/spec/family.h"

#include <algorithm>
#include <fmt/format.h>

namespace fk::spec {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<std::string> transformer_layout_misfits(const Architecture& a, const Workload& w, const Layout& l) {
  std::vector<std::string> out;
  if (a.num_attention_heads % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide num_attention_heads ({})", l.tp, a.num_attention_heads));
  const int64_t kv = a.num_key_value_heads;
  if (kv % l.tp != 0 && l.tp % kv != 0)
    out.push_back(fmt::format("num_key_value_heads ({}) can be neither divided among nor replicated over tp ({})",
                              kv, l.tp));
  bool any_dense = !a.moe.enabled();
  for (int64_t layer = 0; layer < a.num_hidden_layers && !any_dense; ++layer) any_dense = !a.layer_is_moe(layer);
  if (any_dense && a.intermediate_size % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide intermediate_size ({})", l.tp, a.intermediate_size));
  if (a.moe.enabled() && a.moe.moe_intermediate_size % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide moe.moe_intermediate_size ({})", l.tp,
                              a.moe.moe_intermediate_size));
  if (a.moe.shared_experts > 0 && a.moe.shared_intermediate_size % l.tp != 0)
    out.push_back(fmt::format("tp ({}) does not divide moe.shared_intermediate_size ({})", l.tp,
                              a.moe.shared_intermediate_size));
  if (l.pp > a.num_hidden_layers)
    out.push_back(fmt::format("pp ({}) is more than num_hidden_layers ({})", l.pp, a.num_hidden_layers));
  if (!a.attention.causal && (w.phase == Phase::kDecode || w.decode_steps > 0))
    out.push_back(fmt::format("{} is an encoder (attention.causal false) and cannot decode; use a prefill "
                              "workload with decode_steps 0",
                              a.name));
  if (w.max_positions() > a.max_position_embeddings)
    out.push_back(fmt::format("seq_len + decode_steps ({}) exceeds max_position_embeddings ({})",
                              w.max_positions(), a.max_position_embeddings));
  return out;
}

MemoryEstimate transformer_memory_estimate(const Architecture& a, const Workload& w, const Layout& l,
                                           DeviceKind backend) {
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
      m.kv_cache_bytes += 2 * batch * ctx * kvr * a.head_dim * 4;  // the fp32 run's cache
    }
    if (stage == 0) {
      m.parameters += vocab_local * h;
      if (a.position.kind == PositionKind::kLearned) m.parameters += a.max_position_embeddings * h;
      m.parameters += a.embedding.type_vocab_size * h;
    }
    if (stage == l.pp - 1 && a.head.kind == HeadKind::kLm && !(a.embedding.tied && l.pp == 1))
      m.parameters += vocab_local * h;
    if (stage == l.pp - 1 && a.head.final_norm) m.parameters += h;
    // The fp32 run's weights; the CPU keeps its fp32 master beside the rounded copy.
    const bool master_kept = backend == DeviceKind::kCpu && dt != DType::kF32;
    m.weights_bytes = m.parameters * (4 + (master_kept ? bytes : 0));
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

}  // namespace

void register_transformer_family(FamilyRegistry& r) {
  FamilyRules f;
  f.name = "transformer";
  f.summary = "attention and a dense or MoE MLP per layer (decoders and encoders)";
  f.layout_misfits = transformer_layout_misfits;
  f.memory_estimate = transformer_memory_estimate;
  r.add(std::move(f));
}

}  // namespace fk::spec
