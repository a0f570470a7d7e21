// The ConvNeXt family's weights (core/spec/families/convnext.h): one rank's pipeline
// stage's stages, whole (the family is not tensor-parallel), by HF ConvNextModel's and
// ConvNextV2Model's tensor names, which are the family's canonical names (a checkpoint
// is read as it is stored, docs/checkpoints.md). Each Conv2d weight is read as the
// matrix (or, depthwise, the [C, k, k] filters) its elements make in order: the stem's
// and the downsamplers' [O, I, p, p] as [O, I p p], rows of `linear` over patchify's
// columns.
//
// Random values (docs/runner.md): linear and conv weights U(-a, a) with
// a = sqrt(3 / fan_in) (a depthwise filter's fan-in its k x k taps); LayerNorm weights
// U(0.8, 1.2); biases U(-0.1, 0.1); GRN's gamma U(-0.5, 0.5) and beta U(-0.1, 0.1) (HF
// initialises both to 0, which would leave GRN untested); V1's layer scale U(0.1, 1)
// (HF's 1e-6 would leave the blocks untested).
#pragma once

#include "core/spec/architecture.h"
#include "core/tensor.h"
#include "kernels/backend.h"
#include "runner/model/placement.h"
#include "runner/model/weight_source.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fk::runner {

struct ConvNextBlockWeights {
  Tensor dw_w, dw_b;           // [C, k, k], [C]
  Tensor norm_w, norm_b;       // [C]
  Tensor pw1_w, pw1_b;         // [r C, C], [r C]
  Tensor grn_gamma, grn_beta;  // [r C] (V2)
  Tensor pw2_w, pw2_b;         // [C, r C], [C]
  Tensor layer_scale;          // [C] (V1 with layer_scale)
};

struct ConvNextStageWeights {
  int64_t index = 0;                // the stage's global index
  Tensor down_norm_w, down_norm_b;  // [C_prev] (stages after the first)
  Tensor down_w, down_b;            // [C, C_prev 2 2], [C]
  std::vector<ConvNextBlockWeights> blocks;
};

struct ConvNextWeights final : Weights {
  DType dtype = DType::kF32;
  Tensor stem_w, stem_b;                     // [C0, channels p p], [C0] (first pipeline stage)
  Tensor stem_norm_w, stem_norm_b;           // [C0]
  std::vector<ConvNextStageWeights> stages;  // this pipeline stage's, in order
  Tensor final_norm_w, final_norm_b;         // [hidden_size] (last pipeline stage: the pooler's LayerNorm)

  static ConvNextWeights build(const spec::Architecture& a, const Placement& pl, const WeightSource& source);
  static ConvNextWeights load(const spec::Architecture& a, const Placement& pl, const WeightSource& source, DType dtype,
                              kernels::Backend& backend);
  static ConvNextWeights placeholders(const spec::Architecture& a, const Placement& pl, DType dtype);
  ConvNextWeights to_dtype(DType dtype) const;
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  int64_t parameter_count() const override;
  std::unique_ptr<Weights> rounded(DType dtype) const override;
};

}  // namespace fk::runner
