// The transformer family, spec side (core/spec/family.h): every shipped architecture
// (decoders and encoders with attention and a dense or MoE MLP per layer). Which
// layouts cannot shard it (Megatron TP over heads and MLP columns, PP over layers) and
// the per-rank memory estimate (memory.h; docs/specs.md, "Memory estimate"). The
// runner side is runner/model/transformer/.
#include "core/spec/families/mamba_layers.h"
#include "core/spec/families/mla.h"
#include "core/spec/families/vision.h"
#include "core/spec/family.h"
#include "core/spec/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace fk::spec {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool any_sliding(const Architecture& a) {
  for (int64_t l = 0; l < std::max<int64_t>(a.num_hidden_layers, 1); ++l)
    if (a.layer_type(l) == LayerType::kSliding) return true;
  return false;
}

// Relations between the transformer's fields (their ranges are checked already).
void transformer_validate(const Architecture& a, const ParseContext& ctx) {
  const SourceMap& w = *ctx.where;
  auto err = [&](const std::string& field, std::string msg) { ctx.error(w.at(field), field, std::move(msg)); };
  if (a.num_key_value_heads > a.num_attention_heads) {
    err("num_key_value_heads", fmt::format("{} is more than num_attention_heads ({})", a.num_key_value_heads,
                                           a.num_attention_heads));
  } else if (a.num_key_value_heads > 0 && a.num_attention_heads % a.num_key_value_heads != 0) {
    err("num_key_value_heads", fmt::format("{} does not divide num_attention_heads ({})", a.num_key_value_heads,
                                           a.num_attention_heads));
  }
  if (a.position.kind == PositionKind::kRope && a.head_dim > 0) {
    const double exact = static_cast<double>(a.head_dim) * a.position.partial_rotary_factor;
    const int64_t rd = a.rotary_dim();
    if (rd < 2 || rd % 2 != 0 || std::abs(exact - static_cast<double>(rd)) > 1e-9) {
      err(w.has("position.partial_rotary_factor") ? "position.partial_rotary_factor" : "head_dim",
          fmt::format("rotary dimension head_dim ({}) x partial_rotary_factor ({}) = {} must be an even "
                      "whole number >= 2",
                      a.head_dim, a.position.partial_rotary_factor, exact));
    }
  }
  // relu and relu2 have plain baselines only: no relu_and_mul, no relu experts.
  if (a.mlp.activation == Activation::kRelu || a.mlp.activation == Activation::kRelu2) {
    const std::string act(activation_name(a.mlp.activation));
    if (a.moe.enabled()) {
      err("mlp.activation", act + " MoE experts are not supported");
    } else if (a.mlp.gated) {
      err("mlp.activation",
          act + " applies only to ungated MLPs (mlp.gated: false): there is no " + act + "_and_mul baseline");
    }
  }
  if (!a.position.rope_layers.empty()) {
    if (a.position.kind != PositionKind::kRope) {
      err("position.rope_layers", "applies only to position.kind rope");
    } else if (std::find(a.position.rope_layers.begin(), a.position.rope_layers.end(), true) ==
               a.position.rope_layers.end()) {
      err("position.rope_layers", "lists no rope layer; a model without rope is position.kind none");
    } else if (static_cast<int64_t>(a.position.rope_layers.size()) > a.num_hidden_layers) {
      err("position.rope_layers", fmt::format("lists {} layers, more than num_hidden_layers ({})",
                                              a.position.rope_layers.size(), a.num_hidden_layers));
    }
  }
  if (a.position.kind != PositionKind::kRope) {
    if (w.has("position.rope_theta")) err("position.rope_theta", "applies only to position.kind rope");
    if (a.position.rope_scaling.type != RopeScalingType::kNone)
      err("position.rope_scaling", "applies only to position.kind rope");
  }
  const auto& rs = a.position.rope_scaling;
  if (rs.type == RopeScalingType::kLlama3) {
    if (rs.low_freq_factor >= rs.high_freq_factor)
      err("position.rope_scaling.low_freq_factor",
          fmt::format("{} must be less than high_freq_factor ({})", rs.low_freq_factor, rs.high_freq_factor));
    if (rs.original_max_position_embeddings <= 0)
      err("position.rope_scaling.original_max_position_embeddings", "is required for llama3 scaling");
    else if (rs.original_max_position_embeddings > a.max_position_embeddings)
      err("position.rope_scaling.original_max_position_embeddings",
          fmt::format("{} exceeds max_position_embeddings ({})", rs.original_max_position_embeddings,
                      a.max_position_embeddings));
    if (rs.factor < 1.0) err("position.rope_scaling.factor", fmt::format("{} must be >= 1 for llama3 scaling", rs.factor));
  }
  if (rs.type == RopeScalingType::kYarn) {
    if (rs.original_max_position_embeddings <= 0)
      err("position.rope_scaling.original_max_position_embeddings", "is required for yarn scaling");
    if (rs.factor < 1.0)
      err("position.rope_scaling.factor", fmt::format("{} must be >= 1 for yarn scaling", rs.factor));
    if (rs.beta_fast <= rs.beta_slow)
      err("position.rope_scaling.beta_fast",
          fmt::format("{} must be greater than beta_slow ({})", rs.beta_fast, rs.beta_slow));
    if ((rs.mscale != 0.0) != (rs.mscale_all_dim != 0.0))
      err(rs.mscale != 0.0 ? "position.rope_scaling.mscale" : "position.rope_scaling.mscale_all_dim",
          "applies only with both mscale and mscale_all_dim (their ratio scales cos and sin)");
    if (rs.attention_factor && rs.mscale != 0.0)
      err("position.rope_scaling.attention_factor", "and mscale both set the cos/sin scale: give one");
  }
  // Keys of one scaling type under another are refused, not ignored.
  const auto only_for = [&](RopeScalingType type, std::initializer_list<const char*> keys) {
    if (rs.type == type) return;
    for (const char* k : keys)
      if (const std::string key = fmt::format("position.rope_scaling.{}", k); w.has(key))
        err(key, fmt::format("applies only to rope_scaling type {}", rope_scaling_name(type)));
  };
  only_for(RopeScalingType::kLlama3, {"low_freq_factor", "high_freq_factor"});
  only_for(RopeScalingType::kYarn,
           {"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"});
  const bool sliding = any_sliding(a);
  bool listed_sliding = false;
  for (auto t : a.attention.layer_types) listed_sliding |= t == LayerType::kSliding;
  if (listed_sliding && !a.attention.sliding_window)
    err("attention.layer_types", "lists sliding layers but attention.sliding_window is not set");
  if (a.attention.sliding_window && !sliding)
    err("attention.sliding_window", "is set but no layer in attention.layer_types is sliding");
  if (!a.attention.layer_types.empty() &&
      static_cast<int64_t>(a.attention.layer_types.size()) > a.num_hidden_layers)
    err("attention.layer_types", fmt::format("the pattern has {} entries but the model has only {} layers",
                                             a.attention.layer_types.size(), a.num_hidden_layers));
  if (a.attention.qk_norm_full && !a.attention.qk_norm)
    err("attention.qk_norm_full", "says how q and k are normalised, and attention.qk_norm is false");
  if (a.attention.qk_norm_per_head && !a.attention.qk_norm)
    err("attention.qk_norm_per_head", "says how q and k are normalised, and attention.qk_norm is false");
  if (a.attention.qk_norm_bias && (!a.attention.qk_norm || a.norm.kind != NormKind::kLayerNorm))
    err("attention.qk_norm_bias",
        "says whether the q/k LayerNorms add a bias; it needs attention.qk_norm and norm.kind layernorm");
  if (a.attention.qk_norm_per_head && a.attention.qk_norm_full)
    err("attention.qk_norm_per_head",
        "and attention.qk_norm_full exclude each other (a norm per head, or one over all)");
  if (a.attention.qk_norm_full && a.norm.kind == NormKind::kLayerNorm)
    err("attention.qk_norm_full",
        "is an RMSNorm over all heads; with norm.kind layer_norm the q/k norms are "
        "per-head LayerNorms");
  if (a.norm.placement == NormPlacement::kPostBranch && a.norm.kind != NormKind::kRmsNorm)
    err("norm.placement", "post_branch is supported with norm.kind rmsnorm (OLMo 2)");
  if (a.attention.scale && a.attention.query_pre_attn_scalar)
    err("attention.scale", "and attention.query_pre_attn_scalar both set the softmax scale; give one");
  if (a.embedding.multiplier && a.embedding.scale_by_sqrt_hidden)
    err("embedding.multiplier", "and embedding.scale_by_sqrt_hidden both scale the embeddings; give one");
  if (a.position.local_rope_theta && !sliding)
    err("position.local_rope_theta", "applies to sliding layers, and no layer is sliding");
  if (a.embedding.type_vocab_size > 0 && a.attention.causal)
    err("embedding.type_vocab_size", "token-type embeddings are supported for encoders (attention.causal false)");
  if (a.moe.enabled()) {
    if (a.moe.experts_per_token > a.moe.num_experts)
      err("moe.experts_per_token", fmt::format("{} is more than moe.num_experts ({})", a.moe.experts_per_token,
                                               a.moe.num_experts));
    if (a.moe.first_dense_layers >= a.num_hidden_layers)
      err("moe.first_dense_layers", fmt::format("{} leaves no MoE layer in {} layers", a.moe.first_dense_layers,
                                                a.num_hidden_layers));
    const auto& dl = a.moe.dense_layers;
    bool dense_ok = true;
    for (size_t i = 0; i < dl.size(); ++i) {
      if (dl[i] >= a.num_hidden_layers) {
        err("moe.dense_layers", fmt::format("[{}] = {} is not a layer of a {}-layer model (layers are 0-based)", i,
                                            dl[i], a.num_hidden_layers));
        dense_ok = false;
      } else if (i > 0 && dl[i] <= dl[i - 1]) {
        err("moe.dense_layers", fmt::format("[{}] = {} follows {}; list the layers in ascending order, each once", i,
                                            dl[i], dl[i - 1]));
        dense_ok = false;
      }
    }
    if (dense_ok && a.moe.first_dense_layers < a.num_hidden_layers) {
      bool any_moe = false;
      for (int64_t l = 0; l < a.num_hidden_layers && !any_moe; ++l) any_moe = a.layer_is_moe(l);
      if (!any_moe)
        err("moe.dense_layers", fmt::format("with first_dense_layers ({}) leaves no MoE layer in {} layers",
                                            a.moe.first_dense_layers, a.num_hidden_layers));
    }
    if (a.moe.shared_experts > 0 && a.moe.shared_intermediate_size <= 0)
      err("moe.shared_intermediate_size", "is required when moe.shared_experts > 0");
    if (a.moe.shared_expert_gate && a.moe.shared_experts == 0)
      err("moe.shared_expert_gate", "gates the shared experts, and moe.shared_experts is 0");
    // The clamped SwiGLU is fused_moe's activation 3; act_and_mul has no such baseline.
    if (a.moe.swiglu_limit) {
      if (a.mlp.activation != Activation::kSilu || !a.mlp.gated)
        err("moe.swiglu_limit", "clamps a SwiGLU: needs mlp.activation silu and mlp.gated true");
      else if (a.moe.shared_experts > 0 || a.moe.first_dense_layers > 0 || !a.moe.dense_layers.empty())
        err("moe.swiglu_limit",
            "applies to routed experts only: shared experts and dense layers have no clamped SwiGLU baseline");
    }
    const MoeSpec& m = a.moe;
    if (m.num_experts % m.n_group != 0) {
      err("moe.n_group", fmt::format("{} groups do not divide moe.num_experts ({})", m.n_group, m.num_experts));
    } else if (m.topk_group > m.n_group) {
      err("moe.topk_group", fmt::format("{} is more than moe.n_group ({})", m.topk_group, m.n_group));
    } else if (m.experts_per_token > m.topk_group * (m.num_experts / m.n_group)) {
      err("moe.experts_per_token", fmt::format("{} is more than the experts of the topk_group best groups ({} x {})",
                                               m.experts_per_token, m.topk_group, m.num_experts / m.n_group));
    }
    if (m.n_group == 1 && w.has("moe.topk_group") && m.topk_group != 1)
      err("moe.topk_group", "picks among expert groups, and moe.n_group is 1");
  }
  if (a.sections.find<MlaSpec>()) mla_validate(a, ctx);
  if (a.sections.find<MambaLayersSpec>()) mamba_layers_validate(a, ctx);
  if (a.sections.find<VisionSpec>()) vision_validate(a, ctx);
}


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
  for (std::string& m : mamba_layers_misfits(a, l.tp)) out.push_back(std::move(m));
  // Routed experts are split by their columns over TP (each rank holds every expert), so
  // the expert groups need nothing of the layout.
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
  const MlaSpec* mla = a.sections.find<MlaSpec>();

  MemoryEstimate best;
  for (int64_t stage = 0; stage < l.pp; ++stage) {
    MemoryEstimate m;
    const int64_t first = stage_first_layer(a.num_hidden_layers, l.pp, stage);
    const int64_t count = stage_layer_count(a.num_hidden_layers, l.pp, stage);
    for (int64_t layer = first; layer < first + count; ++layer) {
      const int64_t p = layer_parameters_per_rank(a, layer, l.tp);
      m.parameters += p;
      m.layer_parameters += p;
      m.largest_layer_parameters = std::max(m.largest_layer_parameters, p);
      if (is_mamba_layer(a, layer)) {  // a recurrent state, fp32 in the fp32 run
        m.kv_cache_bytes += mamba_state_elements(a, batch, l.tp) * 4;
        continue;
      }
      int64_t ctx = positions;
      // A causal sliding layer needs its window's keys; a bidirectional one (an encoder's
      // band) reads keys on both sides, so its cache holds the whole sequence.
      if (a.attention.causal && a.layer_type(layer) == LayerType::kSliding && a.attention.sliding_window)
        ctx = std::min(ctx, *a.attention.sliding_window);
      // The fp32 run's cache; MLA's holds one compressed row a token, on every TP rank.
      m.kv_cache_bytes +=
          mla != nullptr ? batch * ctx * mla_cache_row(a, *mla) * 4 : 2 * batch * ctx * kvr * a.head_dim * 4;
    }
    if (stage == 0) {
      m.parameters += vocab_local * h;
      if (a.position.kind == PositionKind::kLearned) m.parameters += a.max_position_embeddings * h;
      m.parameters += a.embedding.type_vocab_size * h;
      if (const VisionSpec* v = a.sections.find<VisionSpec>())  // the patch map and the class token
        m.parameters += vision_embedding_parameters(a, *v) - v->tokens() * h;
    }
    if (stage == l.pp - 1 && a.head.kind == HeadKind::kLm && !(a.embedding.tied && l.pp == 1))
      m.parameters += vocab_local * h;
    if (stage == l.pp - 1 && a.head.kind == HeadKind::kLm && a.head.bias) m.parameters += vocab_local;
    if (stage == l.pp - 1 && a.head.final_norm) m.parameters += a.norm.kind == NormKind::kLayerNorm ? 2 * h : h;
    // The fp32 run's weights; the CPU keeps its fp32 master beside the rounded copy.
    const bool master_kept = backend == DeviceKind::kCpu && dt != DType::kF32;
    m.weights_bytes = m.parameters * (4 + (master_kept ? bytes : 0));
    // Per token (fp32 working set): residual + normed + attention out + q/k/v + MLP halves.
    // MLA: the absorbed queries (kv_lora_rank + head_dim a head) stand for q.
    const int64_t q = heads_per_rank(a, l.tp) * (mla != nullptr ? mla_cache_row(a, *mla) : a.head_dim);
    const int64_t inter = a.moe.enabled() ? std::max(a.moe.moe_intermediate_size * a.moe.experts_per_token,
                                                     a.intermediate_size)
                                          : a.intermediate_size;
    int64_t per_token = 4 * h + q + 2 * kvr * a.head_dim + 3 * (inter / l.tp);
    // A Mamba layer's mixer (mamba_layers.h).
    if (a.sections.find<MambaLayersSpec>() != nullptr)
      per_token = std::max(per_token, 4 * h + mamba_values_per_token(a, l.tp));
    const int64_t tokens = batch * w.seq_len;
    constexpr int64_t kRowsInFlight = 64;  // query rows whose score rows exist at once
    m.activation_bytes = tokens * per_token * 4 + kRowsInFlight * heads_per_rank(a, l.tp) * positions * 4 +
                         batch * vocab_local * 4;
    // A vision encoder's pixels and their patches (fp32 in the fp32 run).
    if (const VisionSpec* v = a.sections.find<VisionSpec>())
      m.activation_bytes += 2 * batch * v->num_channels * v->image_size * v->image_size * 4;
    // The routed experts' scratch of the largest call (a chunk of kMoeChunkTokens at most).
    if (backend == DeviceKind::kCuda)
      m.activation_bytes += moe_scratch_bytes(a, tokens, a.moe.moe_intermediate_size / l.tp, bytes);
    if (m.total() > best.total()) best = m;
  }
  return best;
}

// Decoders with an LM head are the benchmark's "Dense & MoE LLMs"; text encoders (BERT;
// its bge-m3 and ColBERT) are its "Recsys & specialized"; hybrids with Mamba layers its
// "Linear attention & SSM".
FastKernelsCategory transformer_category(const Architecture& a) {
  // Vision encoders (SigLIP, DINOv2) are the benchmark's "Multimodal & encoders".
  if (a.sections.find<VisionSpec>() != nullptr) return FastKernelsCategory::kMultimodalEncoder;
  // Hybrids with state-space layers (Jamba) are the benchmark's SSM category.
  if (a.sections.find<MambaLayersSpec>() != nullptr) return FastKernelsCategory::kLinearAttentionSsm;
  return a.head.kind == HeadKind::kLm ? FastKernelsCategory::kDenseMoeLlm : FastKernelsCategory::kRecsysSpecialized;
}

}  // namespace

void register_transformer_family(FamilyRegistry& r) {
  FamilyRules f;
  f.name = "transformer";
  f.summary = "attention and a dense or MoE MLP per layer (decoders and encoders)";
  f.fields = {{"num_attention_heads", true}, {"num_key_value_heads", false}, {"head_dim", false},
              {"intermediate_size", true},   {"max_position_embeddings", true}, {"attention", false},
              {"mlp", true},                 {"position", true},                {"moe", false}};
  f.sections = {mla_section(), mamba_layers_section(), vision_section()};
  f.validate = transformer_validate;
  f.layout_misfits = transformer_layout_misfits;
  f.memory_estimate = transformer_memory_estimate;
  f.category = transformer_category;
  f.workload = vision_workload;
  r.add(std::move(f));
}

}  // namespace fk::spec
