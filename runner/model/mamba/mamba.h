// The Mamba family's model (runner/model/family.h): one rank's TP shard of its pipeline
// stage's Mamba-1 layers, for its DP replica's sequences, with a recurrent state in
// place of a KV cache. A layer (HF MambaBlock, vLLM's MambaDecoderLayer) is one
// pre-RMSNorm residual branch around the mixer:
//   xz = in_proj(x); x, z = split(xz)            column-parallel (x and gate channels)
//   x  = silu(causal_conv1d(x; conv_state))      per channel
//   dt, B, C = split(x_proj(x))                  row-parallel, all-reduced over TP
//   y  = selective_scan(x, dt_proj(dt), A, B, C, D, z, dt_bias; ssm_state)
//   out_proj(y)                                  row-parallel, all-reduced over TP
// Mamba-2 layers (ssm.version 2, HF Mamba2Mixer) instead:
//   z, xBC, dt = split(in_proj(x))                gate I, x B C conv_dim, one dt a head
//   xBC = silu(causal_conv1d(xBC; conv_state))
//   y  = ssd_scan(x, dt, A, B, C, D, dt_bias; ssm_state)   heads of head_dim, groups of B, C
//   out_proj(rms_norm(silu(z) * y))              HF's MambaRMSNormGated, over all I
// TP splits the heads (their x and gate channels, dt, A, D) and the groups of B and C,
// as vLLM's MambaMixer2 does; the gated norm runs over every channel, so its input is
// all-gathered over TP (tp.gate_norm_gather) and each rank keeps its block of the
// output; out_proj is row-parallel, all-reduced.
// The residual stream is vLLM's (fused add + RMSNorm). Each rank keeps, per local
// layer, conv_state [batch, W - 1, I_l] in the activation dtype and ssm_state
// [batch, I_l, N] in fp32; a step continues every sequence from where the previous one
// left it, so steps come in order from position 0 (reset() starts over). Pipeline
// parallelism is the transformer's (GPipe fill and drain over min(pp, batch)
// micro-batches, lm_parts.h). The step splits (Model::splits_step) like the
// transformer's, so decode steps are captured as CUDA graphs and replayed.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/families/mamba.h"
#include "core/spec/workload.h"
#include "runner/model/family.h"
#include "runner/model/lm_parts.h"
#include "runner/model/mamba/weights.h"

#include <map>
#include <vector>

namespace fk::runner {

class Mamba final : public Model {
 public:
  Mamba(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement, ModelComms comms,
        const MambaWeights& weights, Runtime& runtime);

  void set_layer_hook(LayerHook hook) override { hook_ = std::move(hook); }
  void set_trace_last_rows(bool last) override { trace_last_ = last; }
  void set_all_logits(bool all) override { all_logits_ = all; }
  void reset() override;
  Tensor step(const Tensor& tokens, int64_t q_len, int64_t q_start) override;
  // prepare() stages each micro-batch's token ids and makes its logits buffer (kept per
  // q_len for the model's life) and moves the sequences' position on; forward() runs the
  // stage's layers on the states; result() brings the logits to the host.
  bool splits_step() const override { return true; }
  void prepare(const Tensor& tokens, int64_t q_len, int64_t q_start) override;
  void forward() override;
  Tensor result() override;

 private:
  using MicroBatch = lm::MicroBatch;  // ids and logits; no positions (the states carry them)
  Tensor mixer(const MambaLayerWeights& w, int64_t local, const Tensor& x, int64_t seq_begin, int64_t seqs,
               int64_t q_len);
  // Mamba-2's (the rank's heads and groups).
  Tensor mixer2(const MambaLayerWeights& w, int64_t local, const Tensor& x, int64_t seq_begin, int64_t seqs,
                int64_t q_len);
  Tensor traced(const Tensor& t, int64_t q_len) const;

  const spec::Architecture& a_;
  const spec::SsmSpec& ssm_;  // a_'s ssm section
  const spec::Workload& w_;
  Placement pl_;
  ModelComms comms_;
  const MambaWeights& weights_;
  Runtime& rt_;
  DType dtype_;
  std::vector<Tensor> conv_state_, ssm_state_;  // per local layer
  int64_t position_ = 0;                        // positions every sequence has been through
  std::map<int64_t, std::vector<MicroBatch>> staged_;  // by q_len
  std::vector<MicroBatch>* mbs_ = nullptr;             // the prepared step's
  int64_t q_len_ = 0;
  LayerHook hook_;
  bool trace_last_ = false;
  bool all_logits_ = false;
};

}  // namespace fk::runner
