// The Mamba family's weights: one rank's TP shard of its pipeline stage's layers, by
// HF MambaForCausalLM's tensor names (which are the family's canonical names: a
// checkpoint is read as it is stored, docs/checkpoints.md).
//
// TP (vLLM's MambaMixer): in_proj, conv1d, dt_proj, A and D are split by the mixer's
// channels (rows [tp_rank I_l, (tp_rank + 1) I_l) of x and of the gate), x_proj and
// out_proj by their input columns; embeddings and the LM head by vocabulary rows.
// A = -exp(A_log), D and dt_proj's bias stay fp32 in every run (vLLM keeps them so);
// everything else is in the activation dtype.
//
// Mamba-2 layers: in_proj, conv1d, dt_bias, A_log, D, norm (the gated RMSNorm) and
// out_proj of HF Mamba2Mixer, the rank's heads and groups of each (the norm whole).
//
// Random values (docs/runner.md): linear weights U(-a, a) with a = sqrt(3 / fan_in),
// the conv's fan-in its width; embeddings U(-sqrt(3), sqrt(3)); norm weights U(0.8, 1.2);
// biases U(-0.1, 0.1); dt_proj's bias U(-4.6, -2.3) (softplus of it: dt in about
// [0.01, 0.1], HF's dt_min..dt_max); A_log U(0, ln(max(N, 2))) (A in [-N, -1], the range
// of HF's init; Mamba-2: A_log U(0, ln(max(heads, 2)))); D U(0.5, 1.5).
#pragma once

#include "core/spec/architecture.h"
#include "core/tensor.h"
#include "kernels/backend.h"
#include "runner/model/mamba/ssm_mixers.h"
#include "runner/model/placement.h"
#include "runner/model/weight_source.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fk::runner {

// One layer: its norm, and the mixer's tensors as the shared mixers take them
// (ssm_mixers.h): `selective` for Mamba-1 layers, `ssd` for Mamba-2 (ssm.version 2: the
// rank's heads and groups; gate_norm_w whole); the other stays empty.
struct MambaLayerWeights {
  int64_t index = 0;  // global layer index
  Tensor norm_w;      // [H]
  SelectiveMixerWeights selective;
  SsdMixerWeights ssd;
};

struct MambaWeights final : Weights {
  DType dtype = DType::kF32;
  Tensor embed;                          // [Vb, H] this rank's vocab block (first stage, or the tied head)
  std::vector<MambaLayerWeights> layers;  // this stage's, in order
  Tensor final_norm_w;                   // [H] (last stage)
  Tensor lm_head;                        // [Vb, H] (the embedding block when tied)

  // fp32 on the host, from `source` (RandomWeights or a checkpoint).
  static MambaWeights build(const spec::Architecture& a, const Placement& pl, const WeightSource& source);
  // On `backend` in `dtype`, block by block: bit for bit build(...).to_dtype(dtype).
  static MambaWeights load(const spec::Architecture& a, const Placement& pl, const WeightSource& source, DType dtype,
                           kernels::Backend& backend);
  // The shapes, values unspecified (the shape pass).
  static MambaWeights placeholders(const spec::Architecture& a, const Placement& pl, DType dtype);
  // A copy in `dtype` (the fp32 parameters stay fp32).
  MambaWeights to_dtype(DType dtype) const;
  // Every defined tensor by a stable name ("embed", "layers.2.in_proj_w"); a tied head is not listed twice.
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  int64_t parameter_count() const override;
  std::unique_ptr<Weights> rounded(DType dtype) const override;
};

}  // namespace fk::runner
