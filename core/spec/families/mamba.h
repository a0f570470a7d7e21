// The Mamba family's own section of an architecture (core/spec/family_section.h): the
// `ssm:` map, with HF MambaConfig's names. The mixer's inner width is the
// architecture's intermediate_size (expand x hidden_size). Rules: mamba.cc.
#pragma once

#include "core/spec/limits.h"

#include <cstdint>

namespace fk::spec {

struct SsmSpec {
  static constexpr const char* kKey = "ssm";
  int64_t state_size = 0;      // N, the state per channel (HF state_size); required
  int64_t conv_kernel = 4;     // width of the depthwise causal conv (HF conv_kernel)
  int64_t time_step_rank = 0;  // rank of the dt projection (HF time_step_rank; "auto": ceil(hidden / 16))
  bool conv_bias = true;       // HF use_conv_bias
  bool proj_bias = false;      // bias on in_proj and out_proj (HF use_bias)
  bool operator==(const SsmSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kSsmStateSize{1, 1024};
inline constexpr IntRange kSsmConvKernel{2, 8};  // the CUDA baseline keeps the window in registers
inline constexpr IntRange kSsmTimeStepRank{1, kMaxDim};
}  // namespace limits

}  // namespace fk::spec
