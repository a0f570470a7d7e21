// Vision encoders (ViT, DINOv2, SigLIP's vision tower), the transformer family's own
// `vision:` section (core/spec/family_section.h), with HF ViTConfig's names. With it the
// model takes images, not token ids: each image of num_channels x image_size x
// image_size pixels is cut into floor(image_size / patch_size)^2 patches in row-major
// order (pixels past the last whole patch are dropped, as HF's conv drops them: SigLIP's
// 384 px at patch 14), each patch mapped to hidden_size values by a learned linear map
// (HF's Conv2d with kernel = stride = patch_size, its bias included); `class_token` puts
// one learned token before them (ViT's and DINOv2's CLS; SigLIP has none); learned
// position embeddings (position.kind learned, max_position_embeddings = tokens()) are
// added to every token. The layers are the transformer's, bidirectional; `layer_scale`
// multiplies each branch's output by a learned vector before it joins the stream
// (DINOv2's LayerScale). The output is the final norm's hidden states of every token (HF
// last_hidden_state); poolers and classifier heads are not part of it. Rules: vision.cc;
// the runner's front: Transformer::patch_embed (runner/model/transformer/transformer.cc).
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/limits.h"
#include "core/spec/workload.h"

#include <cstdint>

namespace fk::spec {

struct ParseContext;
struct SectionCodec;

struct VisionSpec {
  static constexpr const char* kKey = "vision";
  int64_t image_size = 0;    // pixels per side (square images; HF image_size); required
  int64_t patch_size = 0;    // pixels per patch side (HF patch_size); required
  int64_t num_channels = 3;  // HF num_channels
  bool class_token = false;  // a learned token before the patches (ViT, DINOv2)
  bool layer_scale = false;  // DINOv2's LayerScale (layer_scale1.lambda1, layer_scale2.lambda1)
  int64_t patches_per_side() const { return patch_size > 0 ? image_size / patch_size : 0; }
  int64_t patches() const { return patches_per_side() * patches_per_side(); }
  int64_t prefix_tokens() const { return class_token ? 1 : 0; }
  // Tokens an image becomes: its patches and the class token.
  int64_t tokens() const { return patches() + prefix_tokens(); }
  // Values of one patch (a row of the patch embedding's input).
  int64_t patch_values() const { return num_channels * patch_size * patch_size; }
  bool operator==(const VisionSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kVisionImageSize{1, 1 << 16};
inline constexpr IntRange kVisionPatchSize{1, 1024};
inline constexpr IntRange kVisionChannels{1, 64};
}  // namespace limits

// The transformer family's `vision:` section codec (registered in transformer.cc).
const SectionCodec& vision_section();
// The section's rules against the rest of the architecture (transformer_validate calls it).
void vision_validate(const Architecture& a, const ParseContext& ctx);
// The workload a vision encoder runs: its sequences are images of tokens() tokens each,
// whatever seq_len the workload gives, and nothing is decoded (a prefill workload is one
// pass over batch images; a decode-phase one does not fit an encoder: layout_misfits).
Workload vision_workload(const Architecture& a, Workload w);
// The parameters outside the layers: the patch map (weight and bias), the class token
// and the position embeddings.
int64_t vision_embedding_parameters(const Architecture& a, const VisionSpec& v);

}  // namespace fk::spec
