// The Mamba family's own section of an architecture (core/spec/family_section.h): the
// `ssm:` map, with HF MambaConfig's and Mamba2Config's names. The mixer's inner width is
// the architecture's intermediate_size (expand x hidden_size). `version: 2` makes the
// layers Mamba-2's (SSD: heads of head_dim channels, one decay a head, B and C in
// n_groups groups, a gated RMSNorm before out_proj); its fields are written only then,
// so Mamba-1 specs and job ids are unchanged. Rules: mamba.cc.
#pragma once

#include "core/spec/limits.h"

#include <cstdint>

namespace fk::spec {

struct SsmSpec {
  static constexpr const char* kKey = "ssm";
  int64_t version = 1;         // 1: Mamba (selective_scan), 2: Mamba-2 (ssd_scan)
  int64_t state_size = 0;      // N, the state per channel (HF state_size); required
  int64_t conv_kernel = 4;     // width of the depthwise causal conv (HF conv_kernel)
  int64_t time_step_rank = 0;  // Mamba-1: rank of the dt projection (HF time_step_rank; "auto": ceil(hidden / 16))
  bool conv_bias = true;       // HF use_conv_bias
  bool proj_bias = false;      // bias on in_proj and out_proj (HF use_bias)
  // Mamba-2 only (version 2): num_heads x head_dim = intermediate_size.
  int64_t num_heads = 0;  // HF num_heads
  int64_t head_dim = 0;   // HF head_dim
  int64_t n_groups = 1;   // groups of B and C; divides num_heads (HF n_groups)
  // HF time_step_limit: dt clamped to [min, max] after softplus; max 0 is HF's (0, inf),
  // no clamp.
  double time_step_limit_min = 0.0, time_step_limit_max = 0.0;
  bool mamba2() const { return version == 2; }
  // Mamba-2: the conv's channels, x then B then C (intermediate + 2 n_groups N); on one
  // of `tp` ranks, its heads' x channels and its groups' B and C (tp divides both).
  int64_t conv_dim(int64_t intermediate, int64_t tp = 1) const {
    return intermediate / tp + 2 * (n_groups / tp) * state_size;
  }
  bool operator==(const SsmSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kSsmStateSize{1, 1024};
inline constexpr IntRange kSsmConvKernel{2, 8};  // the CUDA baseline keeps the window in registers
inline constexpr IntRange kSsmTimeStepRank{1, kMaxDim};
inline constexpr IntRange kSsmVersion{1, 2};
inline constexpr IntRange kSsmHeads{1, kMaxDim};
inline constexpr RealRange kSsmTimeStepLimit{0.0, 1e6};
}  // namespace limits

}  // namespace fk::spec
