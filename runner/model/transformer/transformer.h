// The transformer forward pass of one rank: its TP shard of its pipeline stage's
// layers, for its DP replica's sequences, with a KV cache, every op and collective
// going through the Runtime (so implementations can be swapped and everything is
// timed).
//
// Tensor parallelism (Megatron): QKV and gate/up projections are column-parallel,
// output and down projections row-parallel followed by an all-reduce over the TP
// group (their bias added once, on TP rank 0); embeddings and the LM head are
// vocab-parallel (all-reduce after the lookup; all-gather of the logit blocks).
// Pipeline parallelism: each stage holds a contiguous layer range; a step splits the
// replica's sequences into M = min(pp, batch) micro-batches that flow forward through
// the stages (GPipe-style fill and drain, forward only): stage s works on micro-batch
// m at tick s + m, receiving it from stage s - 1 and sending it to s + 1 with blocking
// point-to-point calls, which yields that schedule without extra coordination.
// The residual stream crosses stages as (hidden, residual) like vLLM's intermediate
// tensors. docs/runner.md describes the layer forms (pre-norm, post-norm, sandwich).
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/workload.h"
#include "runner/model/family.h"
#include "runner/model/lm_parts.h"
#include "runner/model/model_comms.h"
#include "runner/model/placement.h"
#include "runner/model/transformer/mixer.h"
#include "runner/model/transformer/weights.h"
#include "runner/runtime.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fk::spec {
struct VisionSpec;
}

namespace fk::runner {

// The transformer family's model (runner/model/family.h; registered in
// transformer_family.cc). Model's contract; the notes below are its own.
class Transformer final : public Model {
 public:
  Transformer(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
              ModelComms comms, const ModelWeights& weights, Runtime& runtime);

  void set_layer_hook(LayerHook hook) override { hook_ = std::move(hook); }
  // The last rows are picked on the device before the copy to the host, so tracing a
  // long prefill moves one row per sequence, not the stream.
  void set_trace_last_rows(bool last) override { trace_last_ = last; }
  void set_all_logits(bool all) override { all_logits_ = all; }
  void reset() override;
  // Runs positions [q_start, q_start + q_len) of this replica's sequences (Model::step).
  Tensor step(const Tensor& tokens, int64_t q_len, int64_t q_start) override;
  // The split step (Model::splits_step): prepare() stages each micro-batch's token ids
  // and positions and makes its output buffer; forward() runs every micro-batch through
  // the stage's layers into it (collectives included: NCCL work is captured too).
  bool splits_step() const override { return true; }
  void prepare(const Tensor& tokens, int64_t q_len, int64_t q_start) override;
  void forward() override;
  Tensor result() override;

  bool uses_residual_stream() const;

 private:
  using Stream = lm::StageStream;
  // One micro-batch of the step (lm_parts.h): ids, positions, and logits or features.
  using MicroBatch = lm::MicroBatch;
  Stream embed(const Tensor& ids);
  Tensor patch_embed(const spec::VisionSpec& v, const Tensor& pixels);
  // One residual branch of a layer (transformer.cc, Transformer::block).
  struct Block {
    const char* role;  // "attn", "mlp": the prefix of its ops' roles
    const Tensor* norm_w;
    const Tensor* norm_b;
    const Tensor* post_norm_w;  // sandwich norms only
    const Tensor* scale;        // LayerScale's vector (DINOv2), or undefined
    std::function<Tensor(const Tensor&)> run;
    // The block normalises its input (false: ModernBERT's layer 0 attention, which reads
    // the stream as is; norm.first_attention_norm).
    bool normalise = true;
  };
  void block(const Block& b, Stream& s);
  void scale_branch(const Tensor& f, const std::string& role, const Tensor* layer_scale);
  bool placement_parallel() const;
  void parallel_blocks(const Block& attn, const Block& mlp, Stream& s);
  void layer(const LayerWeights& w, int64_t local, Stream& s, int64_t seq_begin, int64_t seqs, int64_t q_len,
             int64_t q_start);
  Tensor mlp(const LayerWeights& w, const Tensor& x);
  Tensor moe(const LayerWeights& w, const Tensor& x);
  void head(Stream& s, const MicroBatch& mb);
  Tensor norm(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role);
  Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role);
  Tensor host_positions(int64_t seqs, int64_t q_len, int64_t q_start) const;

  const spec::Architecture& a_;
  const spec::Workload& w_;
  Placement pl_;
  ModelComms comms_;
  const ModelWeights& weights_;
  Runtime& rt_;
  DType dtype_;
  int64_t max_positions_;
  std::map<spec::LayerType, Tensor> rope_;   // cos/sin tables by layer type
  Tensor positions_;  // the running micro-batch's positions (staged once a step, not once a layer)
  LayerContext ctx_;  // what the mixers see (refers to rope_ and positions_)
  std::vector<std::unique_ptr<Mixer>> mixers_;  // each local layer's (mixer.h)
  // Staged micro-batches by q_len, kept for the model's life: a prefill between two
  // replays of a captured decode step must not move the buffers that step reads.
  std::map<int64_t, std::vector<MicroBatch>> staged_;
  std::vector<MicroBatch>* mbs_ = nullptr;  // the prepared step's
  int64_t q_len_ = 0, q_start_ = 0;
  LayerHook hook_;
  bool all_logits_ = false;
  bool trace_last_ = false;
  // t, or each sequence's last of every q_len rows when tracing last rows (on the device).
  Tensor traced_rows(const Tensor& t, int64_t q_len) const;
};

}  // namespace fk::runner
