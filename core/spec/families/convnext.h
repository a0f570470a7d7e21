// The ConvNeXt family's own section of an architecture (core/spec/family_section.h): the
// `convnext:` map, with HF ConvNextConfig's and ConvNextV2Config's names. A ConvNeXt
// (arXiv 2201.03545; V2: arXiv 2301.00808) is an image backbone of stages: a stem (a
// Conv2d of kernel = stride = patch_size, then a LayerNorm over channels) makes an image
// a map of (image_size / patch_size)^2 pixels of hidden_sizes[0] channels; every later
// stage first halves the map (a LayerNorm, then a Conv2d of kernel = stride = 2) to its
// own width; each stage then runs depths[i] blocks:
//   x + gamma * pwconv2(grn(act(pwconv1(layernorm(dwconv(x))))))
// dwconv a depthwise Conv2d of kernel_size (padding kernel_size / 2), pwconv1 and
// pwconv2 linear maps to and from mlp_ratio x the width, grn V2's Global Response
// Normalization (version 2), gamma V1's layer scale (version 1 with layer_scale). The
// output (HF pooler_output) is the final LayerNorm (norm.eps) of each image's map
// averaged over its pixels: one row of hidden_size = hidden_sizes[-1] values an image.
// num_hidden_layers is the number of stages: a "layer" of this family is a stage (the
// per-layer trace, pipeline stages and HF's hidden_states all count stages). Rules:
// convnext.cc; the runner side: runner/model/convnext/.
#pragma once

#include "core/spec/limits.h"

#include <cstdint>
#include <vector>

namespace fk::spec {

struct ConvNextSpec {
  static constexpr const char* kKey = "convnext";
  int64_t version = 1;                // 1: ConvNeXt (layer scale), 2: ConvNeXt V2 (GRN)
  int64_t image_size = 0;             // pixels per side (square images); required
  int64_t num_channels = 3;           // HF num_channels
  int64_t patch_size = 4;             // the stem's kernel and stride (HF patch_size)
  int64_t kernel_size = 7;            // the depthwise conv's (HF's is fixed at 7)
  int64_t mlp_ratio = 4;              // pwconv1's width over the stage's (HF's is fixed at 4)
  std::vector<int64_t> depths;        // blocks of each stage (HF depths); required
  std::vector<int64_t> hidden_sizes;  // channels of each stage (HF hidden_sizes); required
  bool layer_scale = true;            // V1: a learned gamma on each block's branch (HF layer_scale_init_value > 0)
  double block_norm_eps = 1e-6;       // the stem's, the downsamplers' and the blocks' LayerNorms (HF's fixed 1e-6)
  bool v2() const { return version == 2; }
  int64_t stages() const { return static_cast<int64_t>(depths.size()); }
  // Pixels per side of stage i's map: the stem's image_size / patch_size, halved
  // (rounded down) by each later stage's downsampler.
  int64_t side(int64_t stage) const {
    int64_t s = patch_size > 0 ? image_size / patch_size : 0;
    for (int64_t i = 1; i <= stage; ++i) s /= 2;
    return s;
  }
  int64_t pixels(int64_t stage) const { return side(stage) * side(stage); }
  int64_t width(int64_t stage) const { return hidden_sizes[static_cast<size_t>(stage)]; }
  int64_t depth(int64_t stage) const { return depths[static_cast<size_t>(stage)]; }
  // Parameters of stage i (its downsampler and blocks) and of the stem.
  int64_t stage_parameters(int64_t stage) const;
  int64_t stem_parameters() const;
  bool operator==(const ConvNextSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kConvNextVersion{1, 2};
inline constexpr IntRange kConvNextImageSize{1, 1 << 14};
inline constexpr IntRange kConvNextChannels{1, 64};
inline constexpr IntRange kConvNextPatchSize{1, 64};
inline constexpr IntRange kConvNextKernel{1, 31};
inline constexpr IntRange kConvNextMlpRatio{1, 16};
inline constexpr IntRange kConvNextDepth{1, 1024};
inline constexpr IntRange kConvNextWidth{1, 1 << 16};
inline constexpr RealRange kConvNextEps{0.0, 0.1, true};
}  // namespace limits

}  // namespace fk::spec
