#include "runner/model/transformer/weights.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/spec/families/vision.h"
#include "runner/model/transformer/layer_gen.h"
#include "runner/model/transformer/mixer.h"
#include "runner/model/weight_plan.h"

#include <cmath>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using spec::Architecture;

// The weight layout of a shard: which blocks of which global tensors make each tensor
// (the mixers' in their own files, mixer.h).
struct Gen : LayerGen {
  LayerWeights layer(int64_t l) const {
    LayerWeights w;
    w.index = l;
    mixer_of(a, l).weights(*this, l, w);
    norms_and_mlp(w, l);
    return w;
  }

  // The layer's norms and its dense MLP or MoE.
  void norms_and_mlp(LayerWeights& w, int64_t l) const {
    const bool ln = a.norm.kind == spec::NormKind::kLayerNorm;
    // Parallel layers name their MLP's norm post_attention_layernorm too (GPT-NeoX);
    // parallel_shared ones have the input norm alone.
    const bool mlp_norm = a.norm.placement != spec::NormPlacement::kParallelShared;
    const bool attn_norm = a.layer_has_attention_norm(l);  // not ModernBERT's layer 0
    if (a.norm.placement == spec::NormPlacement::kPostBranch) {
      // OLMo 2: the branches' outputs are normalised, and no input norm exists.
      w.post_attn_norm_w = make(norm(layer_name(l, "post_attention_layernorm.weight")));
      w.post_mlp_norm_w = make(norm(layer_name(l, "post_feedforward_layernorm.weight")));
    } else {
      if (attn_norm) w.attn_norm_w = make(norm(layer_name(l, "input_layernorm.weight")));
      if (mlp_norm) w.mlp_norm_w = make(norm(layer_name(l, "post_attention_layernorm.weight")));
    }
    if (ln) {
      if (attn_norm) w.attn_norm_b = make(norm_bias(layer_name(l, "input_layernorm.bias")));
      if (mlp_norm) w.mlp_norm_b = make(norm_bias(layer_name(l, "post_attention_layernorm.bias")));
    }
    if (a.norm.placement == spec::NormPlacement::kSandwich) {
      // Gemma 2/3 names: post_attention_layernorm normalises the attention output,
      // pre_feedforward_layernorm the MLP input, post_feedforward_layernorm its output.
      w.post_attn_norm_w = w.mlp_norm_w;
      w.mlp_norm_w = make(norm(layer_name(l, "pre_feedforward_layernorm.weight")));
      w.post_mlp_norm_w = make(norm(layer_name(l, "post_feedforward_layernorm.weight")));
    }
    if (a.layer_is_moe(l)) {
      moe(w, l);
    } else {
      dense(w, l);
    }
    const auto* v = a.sections.find<spec::VisionSpec>();
    if (v != nullptr && v->layer_scale) {  // DINOv2 initialises them to layerscale_value (1.0)
      w.attn_scale = make(draw_vector(layer_name(l, "attn_layer_scale.weight"), a.hidden_size, 0.5f, 1.5f));
      w.mlp_scale = make(draw_vector(layer_name(l, "mlp_layer_scale.weight"), a.hidden_size, 0.5f, 1.5f));
    }
  }

  void dense(LayerWeights& w, int64_t l) const {
    const int64_t inter = a.intermediate_size, il = inter / pl.tp, i0 = pl.tp_rank * il;
    if (a.mlp.gated) {
      w.up_w = make(plan_concat_rows({rows(layer_name(l, "mlp.gate_proj.weight"), inter, i0, il, a.hidden_size),
                                 rows(layer_name(l, "mlp.up_proj.weight"), inter, i0, il, a.hidden_size)}));
      if (a.mlp.bias)
        w.up_b = make(plan_concat_vectors({bias_rows(layer_name(l, "mlp.gate_proj.bias"), inter, i0, il),
                                      bias_rows(layer_name(l, "mlp.up_proj.bias"), inter, i0, il)}));
    } else {
      w.up_w = make(rows(layer_name(l, "mlp.fc1.weight"), inter, i0, il, a.hidden_size));
      if (a.mlp.bias) w.up_b = make(bias_rows(layer_name(l, "mlp.fc1.bias"), inter, i0, il));
    }
    w.down_w = make(cols(layer_name(l, a.mlp.gated ? "mlp.down_proj.weight" : "mlp.fc2.weight"), inter, i0, il));
    if (a.mlp.bias)
      w.down_b = make(bias_rows(layer_name(l, a.mlp.gated ? "mlp.down_proj.bias" : "mlp.fc2.bias"), a.hidden_size, 0,
                                a.hidden_size));
  }

  void moe(LayerWeights& w, int64_t l) const {
    const int64_t h = a.hidden_size, e = a.moe.num_experts;
    const int64_t im = a.moe.moe_intermediate_size, iml = im / pl.tp, i0 = pl.tp_rank * iml;
    w.router_w = make(rows(layer_name(l, "mlp.gate.weight"), e, 0, e, h));
    std::vector<Planned> up, down;
    for (int64_t x = 0; x < e; ++x) {
      up.push_back(rows(layer_name(l, fmt::format("mlp.experts.{}.gate_proj.weight", x)), im, i0, iml, h));
      up.push_back(rows(layer_name(l, fmt::format("mlp.experts.{}.up_proj.weight", x)), im, i0, iml, h));
      down.push_back(cols(layer_name(l, fmt::format("mlp.experts.{}.down_proj.weight", x)), im, i0, iml));
    }
    w.w13 = make(plan_concat(up, {e, 2 * iml, h}));
    w.w2 = make(plan_concat(down, {e, h, iml}));
    if (a.moe.router_bias) w.router_b = make(bias_rows(layer_name(l, "mlp.gate.bias"), e, 0, e));
    if (a.moe.score_correction_bias)  // sigmoid scores are in (0, 1): a bias of that order steers the choice
      w.score_bias =
          make.fp32_in_dtype(plan_vector(layer_name(l, "mlp.gate.e_score_correction_bias"), e, 0, e, 0.0f, 0.1f));
    if (a.moe.expert_bias) {
      std::vector<Planned> b13, b2;
      for (int64_t x = 0; x < e; ++x) {
        b13.push_back(bias_rows(layer_name(l, fmt::format("mlp.experts.{}.gate_proj.bias", x)), im, i0, iml));
        b13.push_back(bias_rows(layer_name(l, fmt::format("mlp.experts.{}.up_proj.bias", x)), im, i0, iml));
        b2.push_back(bias_rows(layer_name(l, fmt::format("mlp.experts.{}.down_proj.bias", x)), h, 0, h));
      }
      w.w13_b = make(plan_concat(b13, {e, 2 * iml}));
      w.w2_b = make(plan_concat(b2, {e, h}));
    }
    if (a.moe.shared_experts > 0) {
      const int64_t is = a.moe.shared_intermediate_size * a.moe.shared_experts, isl = is / pl.tp, s0 = pl.tp_rank * isl;
      w.shared_up_w = make(plan_concat_rows({rows(layer_name(l, "mlp.shared_expert.gate_proj.weight"), is, s0, isl, h),
                                        rows(layer_name(l, "mlp.shared_expert.up_proj.weight"), is, s0, isl, h)}));
      w.shared_down_w = make(cols(layer_name(l, "mlp.shared_expert.down_proj.weight"), is, s0, isl));
      if (a.moe.shared_expert_gate)
        w.shared_gate_w = make(rows(layer_name(l, "mlp.shared_expert_gate.weight"), 1, 0, 1, h));
    }
  }

  // This rank's vocab block, zero-padded past the vocabulary.
  Tensor vocab_block(const std::string& name) const {
    const float b = name.find("embed_tokens") != std::string::npos ? std::sqrt(3.0f) : linear_bound(a.hidden_size);
    return make(plan_vocab_block(a, pl, name, b));
  }
};

ModelWeights make_shard(const Architecture& a, const Placement& pl, const WeightMaker& make, bool with_layers = true) {
  Gen g{{a, pl, make}};
  ModelWeights m;
  m.dtype = make.made_dtype();
  const bool ln = a.norm.kind == spec::NormKind::kLayerNorm;
  if (pl.first_stage()) {
    if (a.vocab_size > 0) m.embed = g.vocab_block("model.embed_tokens.weight");
    if (const auto* v = a.sections.find<spec::VisionSpec>()) {  // the patch map, as a Conv2d's
      const int64_t h = a.hidden_size, k = v->patch_values();
      const float b = linear_bound(k);
      m.patch_w = make(g.draw("model.patch_embed.weight", h, k, 0, h, 0, k, -b, b));
      m.patch_b = make(g.draw_vector("model.patch_embed.bias", h, -0.1f, 0.1f));
      if (v->class_token)
        m.prefix = make(g.draw("model.class_token", 1, h, 0, 1, 0, h, -std::sqrt(3.0f), std::sqrt(3.0f)));
    }
    if (a.position.kind == spec::PositionKind::kLearned)
      m.pos_embed = make(g.draw("model.embed_positions.weight", a.max_position_embeddings, a.hidden_size, 0,
                                a.max_position_embeddings, 0, a.hidden_size, -std::sqrt(3.0f), std::sqrt(3.0f)));
    if (a.embedding.type_vocab_size > 0)
      m.type_embed = make(g.draw("model.embed_token_types.weight", a.embedding.type_vocab_size, a.hidden_size, 0,
                                 a.embedding.type_vocab_size, 0, a.hidden_size, -std::sqrt(3.0f), std::sqrt(3.0f)));
    if (a.embedding.norm) {
      m.embed_norm_w = make(g.norm("model.embed_norm.weight"));
      if (ln) m.embed_norm_b = make(g.norm_bias("model.embed_norm.bias"));
    }
  }
  const int64_t first = pl.first_layer(a);
  if (with_layers)
    for (int64_t l = first; l < first + pl.layer_count(a); ++l) m.layers.push_back(g.layer(l));
  if (pl.last_stage()) {
    if (a.head.final_norm) {
      m.final_norm_w = make(g.norm("model.norm.weight"));
      if (ln) m.final_norm_b = make(g.norm_bias("model.norm.bias"));
    }
    if (a.head.kind == spec::HeadKind::kLm) {
      m.lm_head = a.embedding.tied ? (m.embed.defined() ? m.embed : g.vocab_block("model.embed_tokens.weight"))
                                   : g.vocab_block("lm_head.weight");
      if (a.head.bias) m.lm_head_b = make(plan_vocab_vector(a, pl, "lm_head.bias", -0.1f, 0.1f));
    }
  }
  return m;
}

}  // namespace

void LayerWeights::add_mixer(std::string name, Tensor t, Storage storage) {
  for (const MixerTensor& m : mixer)
    if (m.name == name) fail(ErrorKind::kInternal, "layer {} has two mixer tensors named {}", index, name);
  mixer.push_back({std::move(name), std::move(t), storage});
}

Tensor LayerWeights::mixer_tensor(const std::string& name) const {
  for (const MixerTensor& m : mixer)
    if (m.name == name) return m.tensor;
  return Tensor();
}

ModelWeights ModelWeights::generate(const Architecture& a, const Placement& pl, uint64_t seed) {
  return build(a, pl, RandomWeights(seed));
}

ModelWeights ModelWeights::build(const Architecture& a, const Placement& pl, const WeightSource& source) {
  return make_shard(a, pl, WeightMaker{&source, nullptr, DType::kF32});
}

ModelWeights ModelWeights::load(const Architecture& a, const Placement& pl, const WeightSource& source, DType dtype,
                                kernels::Backend& backend) {
  ModelWeights m = make_shard(a, pl, WeightMaker{&source, &backend, dtype});
  backend.synchronize();  // every block is written (host staging buffers are freed) before the run starts
  return m;
}

struct LayerStream {
  Architecture arch;
  Placement placement;
  WeightMaker make;
  int64_t layer_parameters = 0;  // of every layer of the stage
  int64_t made = -1;             // the stage position of `current`, -1 for none
  LayerWeights current;
};

ModelWeights ModelWeights::streamed(const Architecture& a, const Placement& pl, const WeightSource& source, DType dtype,
                                    kernels::Backend& backend) {
  auto stream = std::make_shared<LayerStream>();
  stream->arch = a;
  stream->placement = pl;
  stream->make = WeightMaker{&source, &backend, dtype};
  // Everything outside the layers, made as load() makes it.
  ModelWeights m = make_shard(a, pl, stream->make, /*with_layers=*/false);
  // Each layer's parameters, counted on placeholders (they take no memory).
  const Gen shapes{{a, pl, WeightMaker{nullptr, nullptr, dtype}}};
  const int64_t first = pl.first_layer(a);
  for (int64_t l = first; l < first + pl.layer_count(a); ++l) {
    LayerWeights lw;
    lw.index = l;
    m.layers.push_back(lw);
    ModelWeights one;
    one.layers.push_back(shapes.layer(l));
    for (const auto& [name, t] : one.named_tensors()) stream->layer_parameters += t.numel();
  }
  m.stream = std::move(stream);
  backend.synchronize();
  return m;
}

const LayerWeights& ModelWeights::layer(size_t i) const {
  if (i >= layers.size()) fail(ErrorKind::kInternal, "layer {} of a stage of {} layers", i, layers.size());
  if (!stream) return layers[i];
  LayerStream& s = *stream;
  if (s.made == static_cast<int64_t>(i)) return s.current;
  s.current = LayerWeights{};  // give the previous layer's memory back before making this one
  s.made = -1;
  s.current = Gen{{s.arch, s.placement, s.make}}.layer(layers[i].index);
  // Host staging buffers of a checkpoint's blocks live until their copies are done.
  s.make.backend->synchronize();
  s.made = static_cast<int64_t>(i);
  return s.current;
}

ModelWeights ModelWeights::placeholders(const Architecture& a, const Placement& pl, DType dtype) {
  return make_shard(a, pl, WeightMaker{nullptr, nullptr, dtype});
}

namespace {

// Every tensor slot of `m` with its name ("embed", "layers.3.qkv_w"). A tied LM head
// shares the embedding's storage and is left out; callers restore the tie.
template <typename M, typename T>
std::vector<std::pair<std::string, T*>> slots(M& m) {
  std::vector<std::pair<std::string, T*>> out = {{"embed", &m.embed},
                                                 {"pos_embed", &m.pos_embed},
                                                 {"type_embed", &m.type_embed},
                                                 {"embed_norm_w", &m.embed_norm_w},
                                                 {"embed_norm_b", &m.embed_norm_b},
                                                 {"final_norm_w", &m.final_norm_w},
                                                 {"final_norm_b", &m.final_norm_b},
                                                 {"patch_w", &m.patch_w},
                                                 {"patch_b", &m.patch_b},
                                                 {"prefix", &m.prefix}};
  if (!(m.lm_head.defined() && m.lm_head.data() == m.embed.data())) out.emplace_back("lm_head", &m.lm_head);
  out.emplace_back("lm_head_b", &m.lm_head_b);
  for (auto& l : m.layers) {
    const std::string p = fmt::format("layers.{}.", l.index);
    for (auto [name, t] : std::initializer_list<std::pair<const char*, T*>>{{"qkv_w", &l.qkv_w},
                                                                            {"qkv_b", &l.qkv_b},
                                                                            {"o_w", &l.o_w},
                                                                            {"o_b", &l.o_b},
                                                                            {"q_norm", &l.q_norm},
                                                                            {"k_norm", &l.k_norm},
                                                                            {"q_norm_b", &l.q_norm_b},
                                                                            {"k_norm_b", &l.k_norm_b},
                                                                            {"attn_norm_w", &l.attn_norm_w},
                                                                            {"attn_norm_b", &l.attn_norm_b},
                                                                            {"mlp_norm_w", &l.mlp_norm_w},
                                                                            {"mlp_norm_b", &l.mlp_norm_b},
                                                                            {"post_attn_norm_w", &l.post_attn_norm_w},
                                                                            {"post_mlp_norm_w", &l.post_mlp_norm_w},
                                                                            {"up_w", &l.up_w},
                                                                            {"up_b", &l.up_b},
                                                                            {"down_w", &l.down_w},
                                                                            {"down_b", &l.down_b},
                                                                            {"router_w", &l.router_w},
                                                                            {"w13", &l.w13},
                                                                            {"w2", &l.w2},
                                                                            {"shared_up_w", &l.shared_up_w},
                                                                            {"shared_down_w", &l.shared_down_w},
                                                                            {"shared_gate_w", &l.shared_gate_w},
                                                                            {"sinks", &l.sinks},
                                                                            {"router_b", &l.router_b},
                                                                            {"w13_b", &l.w13_b},
                                                                            {"w2_b", &l.w2_b},
                                                                            {"score_bias", &l.score_bias},
                                                                            {"attn_scale", &l.attn_scale},
                                                                            {"mlp_scale", &l.mlp_scale}})
      out.emplace_back(p + name, t);
    for (auto& x : l.mixer) out.emplace_back(p + x.name, &x.tensor);
  }
  return out;
}

}  // namespace

ModelWeights ModelWeights::to_dtype(DType d) const {
  if (stream) fail(ErrorKind::kInternal, "streamed weights cannot be rounded (load them in {})", dtype_name(d));
  ModelWeights m = *this;
  m.dtype = d;
  const bool tied = lm_head.defined() && lm_head.data() == embed.data();
  for (auto& [name, t] : slots<ModelWeights, Tensor>(m))
    if (t->defined()) *t = t->to_dtype(d);
  if (tied) m.lm_head = m.embed;
  for (size_t li = 0; li < m.layers.size(); ++li) {
    LayerWeights& l = m.layers[li];
    // Sinks and router biases keep fp32 storage (their ops'), with the dtype's values.
    if (l.sinks.defined()) l.sinks = l.sinks.to_dtype(DType::kF32);
    if (l.score_bias.defined()) l.score_bias = l.score_bias.to_dtype(DType::kF32);
    for (size_t xi = 0; xi < l.mixer.size(); ++xi) {
      LayerWeights::MixerTensor& x = l.mixer[xi];
      if (!x.tensor.defined()) continue;
      if (x.storage == LayerWeights::Storage::kFp32Rounded) x.tensor = x.tensor.to_dtype(DType::kF32);
      if (x.storage == LayerWeights::Storage::kFp32) x.tensor = layers[li].mixer[xi].tensor;  // as made
    }
  }
  return m;
}

std::vector<std::pair<std::string, Tensor>> ModelWeights::named_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, t] : slots<const ModelWeights, const Tensor>(*this))
    if (t->defined()) out.emplace_back(name, *t);
  return out;
}

std::unique_ptr<Weights> ModelWeights::rounded(DType d) const { return std::make_unique<ModelWeights>(to_dtype(d)); }

int64_t ModelWeights::parameter_count() const {
  int64_t n = 0;
  for (const auto& [name, t] : named_tensors()) n += t.numel();
  return n + (stream ? stream->layer_parameters : 0);
}

}  // namespace fk::runner
