#include "runner/model/transformer/transformer.h"

#include "core/error.h"
#include "core/spec/families/vision.h"
#include "core/spec/memory.h"
#include "runner/model/transformer/rope_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fk::runner {
namespace {

using spec::NormKind;
using spec::NormPlacement;

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

std::string act_and_mul_op(spec::Activation a) {
  switch (a) {
    case spec::Activation::kSilu: return "silu_and_mul";
    case spec::Activation::kGelu: return "gelu_and_mul";
    case spec::Activation::kGeluTanh: return "gelu_tanh_and_mul";
    case spec::Activation::kRelu:
    case spec::Activation::kRelu2:
      fail(ErrorKind::kUnsupported, "gated relu MLPs are not supported");
  }
  return "";
}

double moe_activation_code(spec::Activation a) {
  switch (a) {
    case spec::Activation::kSilu: return 0;
    case spec::Activation::kGeluTanh: return 1;
    case spec::Activation::kGelu: return 2;
    case spec::Activation::kRelu:
    case spec::Activation::kRelu2:
      fail(ErrorKind::kUnsupported, "relu MoE experts are not supported");
  }
  return 0;
}

}  // namespace

Transformer::Transformer(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
                         ModelComms comms, const ModelWeights& weights, Runtime& runtime)
    : a_(arch),
      w_(workload),
      pl_(placement),
      comms_(comms),
      weights_(weights),
      rt_(runtime),
      dtype_(weights.dtype),
      max_positions_(workload.max_positions()),
      ctx_{arch, pl_, comms, runtime, weights.dtype, pl_.batch_size(workload), max_positions_, rope_, positions_} {
  if (a_.position.kind == spec::PositionKind::kRope) {
    for (const auto& lw : weights_.layers) {
      const spec::LayerType t = a_.layer_type(lw.index);
      if (!rope_.count(t)) rope_[t] = rt_.upload(rope_cache(a_, t, max_positions_, dtype_));
    }
  }
  for (const auto& lw : weights_.layers) mixers_.push_back(mixer_of(a_, lw.index).make(ctx_, lw.index));
}

void Transformer::reset() {
  for (auto& m : mixers_) m->reset();
}

bool Transformer::uses_residual_stream() const {
  return a_.norm.kind == NormKind::kRmsNorm && a_.norm.placement != NormPlacement::kPost &&
         a_.norm.placement != NormPlacement::kPostBranch && !placement_parallel();
}

Tensor Transformer::norm(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) {
  return ctx_.norm(x, w, b, role);
}

Tensor Transformer::linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) {
  return ctx_.linear(x, w, b, role);
}

Tensor Transformer::host_positions(int64_t seqs, int64_t q_len, int64_t q_start) const {
  Tensor p = Tensor::empty(DType::kI64, {seqs * q_len});
  for (int64_t s = 0; s < seqs; ++s)
    for (int64_t i = 0; i < q_len; ++i) p.data_as<int64_t>()[s * q_len + i] = q_start + i;
  return p;
}

// A vision encoder's tokens (core/spec/families/vision.h): the images' patches through
// the patch map, after the class token, each plus its position embedding.
Tensor Transformer::patch_embed(const spec::VisionSpec& v, const Tensor& pixels) {
  const int64_t images = pixels.size(0);
  Tensor patches = rt_.empty(dtype_, {images * v.patches(), v.patch_values()});
  rt_.run("patchify", "embed.patchify", call({patches, pixels}, {static_cast<double>(v.patch_size)}));
  const Tensor x = linear(patches, weights_.patch_w, weights_.patch_b, "embed.patch_proj");
  Tensor out = rt_.empty(dtype_, {images * v.tokens(), a_.hidden_size});
  rt_.run("patch_tokens", "embed.patch_tokens",
          call({out, x, weights_.prefix, weights_.pos_embed}, {static_cast<double>(v.prefix_tokens())}));
  return out;
}

Transformer::Stream Transformer::embed(const Tensor& ids) {
  if (const auto* v = a_.sections.find<spec::VisionSpec>()) return Stream{patch_embed(*v, ids), Tensor()};
  const int64_t rows = ids.numel(), h = a_.hidden_size;
  Tensor x = lm::embed_tokens(rt_, comms_, a_, pl_, ids, weights_.embed, dtype_);
  if (a_.embedding.scale_by_sqrt_hidden) {
    // Gemma's normaliser is rounded to the activation dtype before the multiply.
    float factor = std::sqrt(static_cast<float>(h));
    dtype_round_trip(&factor, 1, dtype_);
    rt_.run("scale", "embed.scale", call({x}, {static_cast<double>(factor)}));
  }
  if (a_.embedding.multiplier) rt_.run("scale", "embed.multiplier", call({x}, {*a_.embedding.multiplier}));
  if (weights_.pos_embed.defined()) {
    Tensor p = rt_.empty(dtype_, {rows, h});
    rt_.run("embedding", "embed.positions", call({p, positions_, weights_.pos_embed},
                                                 {0.0, static_cast<double>(a_.max_position_embeddings)}));
    rt_.run("add", "embed.add_positions", call({x, x, p}));
  }
  if (weights_.type_embed.defined()) {
    Tensor types = rt_.zeros(DType::kI64, {rows});  // token type 0 for every token
    Tensor t = rt_.empty(dtype_, {rows, h});
    rt_.run("embedding", "embed.token_types", call({t, types, weights_.type_embed},
                                                   {0.0, static_cast<double>(a_.embedding.type_vocab_size)}));
    rt_.run("add", "embed.add_token_types", call({x, x, t}));
  }
  if (weights_.embed_norm_w.defined()) x = norm(x, weights_.embed_norm_w, weights_.embed_norm_b, "embed.norm");
  return Stream{x, Tensor()};
}

Tensor Transformer::mlp(const LayerWeights& w, const Tensor& x) {
  const int64_t rows = x.size(0);
  Tensor up = linear(x, w.up_w, w.up_b, a_.mlp.gated ? "mlp.gate_up_proj" : "mlp.fc1");
  Tensor act;
  if (a_.mlp.gated) {
    act = rt_.empty(dtype_, {rows, up.size(1) / 2});
    rt_.run(act_and_mul_op(a_.mlp.activation), "mlp.act", call({act, up}));
  } else {
    act = rt_.empty(dtype_, up.shape());
    rt_.run(activation_op(a_.mlp.activation), "mlp.act", call({act, up}));
  }
  Tensor out = linear(act, w.down_w, pl_.tp_rank == 0 ? w.down_b : Tensor(), a_.mlp.gated ? "mlp.down_proj" : "mlp.fc2");
  rt_.all_reduce(comms_.tp, out, "tp.mlp_out");
  return out;
}

Tensor Transformer::moe(const LayerWeights& w, const Tensor& x) {
  const int64_t rows = x.size(0), k = a_.moe.experts_per_token;
  Tensor logits = linear(x, w.router_w, w.router_b, "moe.router");
  Tensor weights = rt_.empty(DType::kF32, {rows, k});
  Tensor ids = rt_.empty(DType::kI32, {rows, k});
  const spec::MoeSpec& m = a_.moe;
  if (m.grouped_routing()) {  // DeepSeek: expert groups, sigmoid scores, a correction bias, a scale
    rt_.run("grouped_topk", "moe.topk",
            call({weights, ids, logits, w.score_bias},
                 {static_cast<double>(m.n_group), static_cast<double>(m.topk_group), m.renormalize ? 1.0 : 0.0,
                  m.scoring == spec::MoeScoring::kSigmoid ? 1.0 : 0.0, m.routed_scaling_factor}));
  } else {
    rt_.run("topk_softmax", "moe.topk", call({weights, ids, logits}, {m.renormalize ? 1.0 : 0.0}));
  }
  Tensor out = rt_.empty(dtype_, x.shape());
  // gpt-oss: biased experts with the clamped SwiGLU (activation 3); w2's bias is added by
  // TP rank 0 only, as the partial outputs are summed over the group.
  const bool clamped = a_.moe.swiglu_limit.has_value();
  const std::vector<double> params = {clamped ? 3.0 : moe_activation_code(a_.mlp.activation),
                                      clamped ? a_.moe.swiglu_alpha : 0.0, a_.moe.swiglu_limit.value_or(0.0)};
  // At most spec::kMoeChunkTokens tokens a call, as vLLM's fused_experts (its scratch grows
  // with the tokens: a 32 x 2048 prefill of Mixtral would take 22 GB at once).
  for (int64_t r0 = 0; r0 < rows; r0 += spec::kMoeChunkTokens) {
    const int64_t n = std::min(spec::kMoeChunkTokens, rows - r0);
    rt_.run("fused_moe", "moe.experts",
            call({out.slice(0, r0, n), x.slice(0, r0, n), w.w13, w.w2, weights.slice(0, r0, n), ids.slice(0, r0, n),
                  w.w13_b, pl_.tp_rank == 0 ? w.w2_b : Tensor()},
                 params));
  }
  if (w.shared_up_w.defined()) {
    Tensor up = linear(x, w.shared_up_w, Tensor(), "moe.shared_gate_up_proj");
    Tensor act = rt_.empty(dtype_, {rows, up.size(1) / 2});
    rt_.run(act_and_mul_op(a_.mlp.activation), "moe.shared_act", call({act, up}));
    Tensor shared = linear(act, w.shared_down_w, Tensor(), "moe.shared_down_proj");
    if (w.shared_gate_w.defined()) {  // a TP partial sum times the same gate on every rank: still a partial sum
      const Tensor gate = linear(x, w.shared_gate_w, Tensor(), "moe.shared_expert_gate");
      rt_.run("sigmoid_gate", "moe.shared_gate", call({shared, gate}));
    }
    rt_.run("add", "moe.shared_add", call({out, out, shared}));
  }
  rt_.all_reduce(comms_.tp, out, "tp.moe_out");
  return out;
}

// A layer is a list of blocks, each a residual branch: a mixer (the layer's kind,
// mixer.h: attention, MLA, ...) and a feed-forward (a dense MLP or an MoE), each with its own norms. The norm placement
// wraps every block alike:
//   RMSNorm (pre or sandwich), vLLM's residual stream: h holds the pending branch
//     output, residual the stream; the first block of the model normalises the stream,
//     every later one adds h to it and normalises in one fused_add_rms_norm; sandwich
//     models also normalise the branch output (the block's post norm);
//   LayerNorm pre: x + f(N(x));  post (BERT): x = N(x + f(x)).
// The ops' roles are the block's ("attn.norm", "mlp.residual", ...).
void Transformer::block(const Block& b, Stream& s) {
  const std::string role(b.role);
  const auto placement = a_.norm.placement;
  if (uses_residual_stream()) {
    if (!s.residual.defined()) {
      s.residual = s.h;
      s.h = norm(s.h, *b.norm_w, Tensor(), role + ".norm");
    } else {
      rt_.run("fused_add_rms_norm", role + ".norm", call({s.h, s.residual, *b.norm_w}, {a_.norm.eps}));
    }
    s.h = b.run(s.h);
    if (placement == NormPlacement::kSandwich) s.h = norm(s.h, *b.post_norm_w, Tensor(), role + ".post_norm");
    scale_branch(s.h, role, b.scale);
  } else if (placement == NormPlacement::kPostBranch) {  // OLMo 2: x + norm(f(x))
    const Tensor f = norm(b.run(s.h), *b.post_norm_w, Tensor(), role + ".post_norm");
    scale_branch(f, role, b.scale);
    rt_.run("add", role + ".residual", call({s.h, s.h, f}));
  } else if (placement == NormPlacement::kPre) {
    const Tensor f = b.run(b.normalise ? norm(s.h, *b.norm_w, *b.norm_b, role + ".norm") : s.h);
    scale_branch(f, role, b.scale);
    rt_.run("add", role + ".residual", call({s.h, s.h, f}));
  } else {
    Tensor f = b.run(s.h);
    scale_branch(f, role, b.scale);
    rt_.run("add", role + ".residual", call({f, f, s.h}));
    s.h = norm(f, *b.norm_w, *b.norm_b, role + ".norm");
  }
}

// Granite's residual_multiplier: x + m * f(x), the branch output scaled in place; a
// vision encoder's LayerScale (DINOv2): x + gamma * f(x), gamma a learned vector.
void Transformer::scale_branch(const Tensor& f, const std::string& role, const Tensor* layer_scale) {
  if (a_.norm.residual_multiplier)
    rt_.run("scale", role + ".residual_scale", call({f}, {*a_.norm.residual_multiplier}));
  if (layer_scale != nullptr && layer_scale->defined())
    rt_.run("channel_scale", role + ".layer_scale", call({f, *layer_scale}));
}

bool Transformer::placement_parallel() const {
  return a_.norm.placement == NormPlacement::kParallel || a_.norm.placement == NormPlacement::kParallelShared;
}

// Parallel layers (GPT-NeoX, Phi, GPT-J, Falcon): both branches read the layer input,
// x + attn(N_attn(x)) + mlp(N_mlp(x)); parallel_shared normalises once for both. Each
// branch ends in its own TP all-reduce, as in vLLM's GPT-NeoX and Phi.
void Transformer::parallel_blocks(const Block& attn, const Block& mlp, Stream& s) {
  const Tensor xa = norm(s.h, *attn.norm_w, *attn.norm_b, "attn.norm");
  const Tensor xm = mlp.norm_w->defined() ? norm(s.h, *mlp.norm_w, *mlp.norm_b, "mlp.norm") : xa;
  const Tensor fa = attn.run(xa);
  const Tensor fm = mlp.run(xm);
  scale_branch(fa, "attn", attn.scale);
  scale_branch(fm, "mlp", mlp.scale);
  rt_.run("add", "attn.residual", call({s.h, s.h, fa}));
  rt_.run("add", "mlp.residual", call({s.h, s.h, fm}));
}

void Transformer::layer(const LayerWeights& w, int64_t local, Stream& s, int64_t seq_begin, int64_t seqs,
                        int64_t q_len, int64_t q_start) {
  rt_.set_layer(w.index);
  Block blocks[] = {
      {"attn", &w.attn_norm_w, &w.attn_norm_b, &w.post_attn_norm_w, &w.attn_scale,
       [&](const Tensor& x) {
         return mixers_[static_cast<size_t>(local)]->forward(w, x, MixerStep{seq_begin, seqs, q_len, q_start});
       }},
      {"mlp", &w.mlp_norm_w, &w.mlp_norm_b, &w.post_mlp_norm_w, &w.mlp_scale,
       [&](const Tensor& x) { return a_.layer_is_moe(w.index) ? moe(w, x) : mlp(w, x); }},
  };
  blocks[0].normalise = a_.layer_has_attention_norm(w.index);
  if (placement_parallel()) {
    parallel_blocks(blocks[0], blocks[1], s);
  } else {
    for (const Block& b : blocks) block(b, s);
  }
  if (hook_) hook_(w.index, seq_begin, lm::host_sum_f32(rt_, traced_rows(s.h, q_len), traced_rows(s.residual, q_len)));
  rt_.set_layer(-1);
}

Tensor Transformer::traced_rows(const Tensor& t, int64_t q_len) const {
  if (!trace_last_ || !t.defined()) return t;
  return lm::last_rows(rt_, t, q_len);
}

void Transformer::head(Stream& s, const MicroBatch& mb) {
  const int64_t q_len = q_len_;
  Tensor x = s.h;
  if (weights_.final_norm_w.defined()) {
    if (s.residual.defined()) {
      rt_.run("fused_add_rms_norm", "final.norm", call({x, s.residual, weights_.final_norm_w}, {a_.norm.eps}));
    } else {
      x = norm(x, weights_.final_norm_w, weights_.final_norm_b, "final.norm");
    }
  } else if (s.residual.defined()) {
    rt_.run("add", "final.residual", call({x, x, s.residual}));
  }
  if (hook_ && weights_.final_norm_w.defined())
    hook_(a_.num_hidden_layers, mb.seq_begin, rt_.host_f32(traced_rows(x, q_len)));
  if (a_.head.kind == spec::HeadKind::kNone) {
    rt_.copy_rows(mb.out, x);
    return;
  }
  // Logits of each sequence's last position only (vLLM prunes before the LM head),
  // unless every position's are asked for.
  lm::logits(rt_, comms_, a_, pl_, all_logits_ ? x : lm::last_rows(rt_, x, q_len), weights_.lm_head,
             weights_.lm_head_b, mb.out);
  if (a_.head.logit_scale) rt_.run("scale", "lm_head.scale", call({mb.out}, {*a_.head.logit_scale}));
  if (a_.head.logit_softcap) rt_.run("softcap", "lm_head.softcap", call({mb.out}, {*a_.head.logit_softcap}));
}

Tensor Transformer::step(const Tensor& tokens, int64_t q_len, int64_t q_start) {
  prepare(tokens, q_len, q_start);
  forward();
  return result();
}

void Transformer::prepare(const Tensor& tokens, int64_t q_len, int64_t q_start) {
  const int64_t batch = pl_.batch_size(w_);
  if (q_start + q_len > max_positions_)
    fail(ErrorKind::kInternal, "step beyond the cache: {} + {} > {}", q_start, q_len, max_positions_);
  const bool encoder = a_.head.kind == spec::HeadKind::kNone;
  mbs_ = &staged_[q_len];
  lm::stage_micro_batches(rt_, pl_, *mbs_, tokens, batch, q_len, encoder ? a_.hidden_size : a_.vocab_size,
                          encoder || all_logits_, dtype_);
  for (MicroBatch& mb : *mbs_) rt_.stage(mb.positions, host_positions(mb.seqs, q_len, q_start));
  q_len_ = q_len;
  q_start_ = q_start;
}

void Transformer::forward() {
  if (mbs_ == nullptr) fail(ErrorKind::kInternal, "Transformer::forward before prepare");
  const int64_t q_len = q_len_, q_start = q_start_;
  for (size_t i = 0; i < mbs_->size(); ++i) {
    const MicroBatch& mb = (*mbs_)[i];
    const auto m = static_cast<int64_t>(i);
    positions_ = mb.positions;
    Stream s = pl_.first_stage() ? embed(mb.ids)
                                  : lm::recv_stream(rt_, comms_, pl_, m, mb.seqs * q_len, a_.hidden_size, dtype_,
                                                    uses_residual_stream());
    if (hook_ && pl_.first_stage()) hook_(-1, mb.seq_begin, rt_.host_f32(traced_rows(s.h, q_len)));
    for (size_t l = 0; l < weights_.layers.size(); ++l)
      layer(weights_.layer(l), static_cast<int64_t>(l), s, mb.seq_begin, mb.seqs, q_len, q_start);
    if (pl_.last_stage()) {
      head(s, mb);
    } else {
      lm::send_stream(rt_, comms_, pl_, s, m, uses_residual_stream());
    }
  }
  positions_ = Tensor();
}

Tensor Transformer::result() {
  if (mbs_ == nullptr) fail(ErrorKind::kInternal, "Transformer::result before prepare");
  return lm::gather_outputs(rt_, pl_, *mbs_, pl_.batch_size(w_), q_len_,
                            a_.head.kind == spec::HeadKind::kNone || all_logits_);
}

}  // namespace fk::runner
