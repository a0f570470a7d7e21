// Limits of spec values: the one definition of each.
//
// Every reader applies the same ones. The YAML loaders pass them to MapReader, so an
// error points at the value as written; the validators of resolved values
// (architecture_validate, workload_validate, layout_validate, and the job-file
// reader through them) check against them too, so a value from a job file
// (fk plan --emit) or a HuggingFace config (fk import-hf) meets exactly the limits of
// a spec file. The bounds keep every size product far from int64 overflow and every
// loop over layers short; they are not claims about real models.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace fk::spec {

struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  bool contains(int64_t v) const { return v >= min && v <= max; }
  // "an integer in [1, 100000]", or "an integer >= 0" when max is INT64_MAX.
  std::string describe() const;
};

struct RealRange {
  double min = 0;
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  // False for NaN.
  bool contains(double v) const { return (min_exclusive ? v > min : v >= min) && v <= max; }
  // "a number in (0, 0.1]", or "a number > 0" when max is infinite.
  std::string describe() const;
};

namespace limits {

inline constexpr int64_t kMaxDim = int64_t{1} << 24;

// Architecture (architecture_load.cc reads and validates them).
inline constexpr IntRange kHiddenSize{1, kMaxDim};
inline constexpr IntRange kNumHiddenLayers{1, 100000};
inline constexpr IntRange kHeads{1, 1 << 16};  // num_attention_heads, num_key_value_heads, head_dim
inline constexpr IntRange kIntermediateSize{1, kMaxDim};
inline constexpr IntRange kVocabSize{1, int64_t{1} << 32};
inline constexpr IntRange kMaxPositionEmbeddings{1, kMaxDim * 64};
inline constexpr IntRange kSlidingWindow{1, kMaxDim};
inline constexpr RealRange kLogitSoftcap{0.0, 1e6, true};
inline constexpr RealRange kLogitScale{0.0, 1e6, true};
inline constexpr RealRange kQueryPreAttnScalar{0.0, 1e9, true};
inline constexpr RealRange kAttentionScale{0.0, 1e3, true};  // attention.scale
inline constexpr RealRange kMultiplier{0.0, 1e4, true};      // embedding.multiplier, norm.residual_multiplier
inline constexpr RealRange kSwigluLimit{0.0, 1e6, true};     // moe.swiglu_limit
inline constexpr RealRange kSwigluAlpha{0.0, 1e3, true};     // moe.swiglu_alpha
inline constexpr RealRange kNormEps{0.0, 0.1, true};
inline constexpr RealRange kNormWeightOffset{-10.0, 10.0};
inline constexpr RealRange kRopeScalingFactor{0.0, 1e6, true};  // factor, low_freq_factor, high_freq_factor
inline constexpr RealRange kYarnBeta{0.0, 1e6, true};           // yarn beta_fast, beta_slow
inline constexpr RealRange kYarnMscale{0.0, 1e3};               // yarn mscale, mscale_all_dim (0: not set)
inline constexpr RealRange kRopeAttentionFactor{0.0, 1e3, true};  // yarn attention_factor
inline constexpr IntRange kRopeOriginalMaxPositions{1, kMaxDim * 64};
inline constexpr RealRange kRopeTheta{0.0, 1e12, true};  // rope_theta, local_rope_theta
inline constexpr RealRange kPartialRotaryFactor{0.0, 1.0, true};
inline constexpr IntRange kTypeVocabSize{0, 1 << 16};
inline constexpr IntRange kNumExperts{2, 1 << 16};
inline constexpr IntRange kExpertsPerToken{1, 1 << 16};
inline constexpr IntRange kMoeIntermediateSize{1, kMaxDim};
inline constexpr IntRange kSharedExperts{0, 64};
inline constexpr IntRange kSharedIntermediateSize{1, kMaxDim};
inline constexpr IntRange kFirstDenseLayers{0, kMaxDim};
inline constexpr IntRange kDenseLayer{0, kMaxDim};  // each entry of moe.dense_layers
inline constexpr IntRange kExpertGroups{1, 1 << 16};  // moe.n_group, moe.topk_group
inline constexpr RealRange kRoutedScalingFactor{0.0, 1e4, true};

// Workload and layout (workload.cc).
inline constexpr IntRange kBatch{1, 1 << 20};
inline constexpr IntRange kSeqLen{1, int64_t{1} << 24};
inline constexpr IntRange kDecodeSteps{0, 1 << 16};
inline constexpr IntRange kParallel{1, 1 << 16};  // tp, pp, dp

// Campaign settings that travel into jobs (campaign.cc).
inline constexpr IntRange kRepetitions{1, 1000};
inline constexpr IntRange kWarmup{0, 100000};
inline constexpr IntRange kKernelIterations{1, 1000000};
inline constexpr IntRange kRounds{1, 1000};
inline constexpr IntRange kModelIterations{1, 100000};
// Durations (time limits, heartbeat timeouts), in seconds: positive, at most one
// year, so that every conversion to milliseconds or nanoseconds fits in 64 bits.
inline constexpr RealRange kDuration{0.0, 365.0 * 24 * 3600, true};

}  // namespace limits
}  // namespace fk::spec
