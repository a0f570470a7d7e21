// The ConvNeXt family's model (runner/model/family.h; the architecture:
// core/spec/families/convnext.h): one rank's pipeline stage's stages, whole, for its DP
// replica's images. Activations are channels-last, [images x pixels, channels] rows, so
// that the pointwise convs are `linear` and the LayerNorms over channels `layer_norm`:
//   stem        patchify (kernel = stride = patch_size), linear, layer_norm
//   downsample  layer_norm, patchify_channels_last (2 x 2), linear     (stages after the first)
//   block       depthwise_conv2d, layer_norm, linear, act, [grn], linear, [channel_scale], add
//   pooler      spatial_mean, layer_norm                                (last stage)
// One step is one pass over the images (q_len 1: each image's pooled features are its
// one output row); it splits (Model::splits_step), so a GPU can replay it as a graph. Pipeline parallelism sends a
// stage's map (GPipe over min(pp, images) micro-batches, lm_parts.h); the family has no TP (layout_misfits). The layer
// hook sees the stem's output (layer -1) and each stage's (layer i), [images x pixels, width]: HF's hidden_states.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/families/convnext.h"
#include "core/spec/workload.h"
#include "runner/model/convnext/weights.h"
#include "runner/model/family.h"
#include "runner/model/lm_parts.h"

#include <map>
#include <vector>

namespace fk::runner {

class ConvNext final : public Model {
 public:
  ConvNext(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement, ModelComms comms,
           const ConvNextWeights& weights, Runtime& runtime);

  void set_layer_hook(LayerHook hook) override { hook_ = std::move(hook); }
  void set_trace_last_rows(bool) override {}  // a stage's map has no "last position"
  void set_all_logits(bool) override {}       // one output row an image either way
  void reset() override {}                    // nothing is cached between passes
  Tensor step(const Tensor& images, int64_t q_len, int64_t q_start) override;
  // prepare() stages each micro-batch's images and keeps its output buffer; forward()
  // runs the stages on them (device work only: a captured graph replays it); result()
  // brings the pooled features to the host.
  bool splits_step() const override { return true; }
  void prepare(const Tensor& images, int64_t q_len, int64_t q_start) override;
  void forward() override;
  Tensor result() override;

 private:
  Tensor stem(const Tensor& pixels, int64_t images);
  Tensor stage(const ConvNextStageWeights& w, Tensor x, int64_t images);
  Tensor block(const ConvNextBlockWeights& w, const Tensor& x, int64_t images, int64_t side, int64_t width);
  Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, const std::string& role);
  Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role);

  const spec::Architecture& a_;
  const spec::ConvNextSpec& c_;
  const spec::Workload& w_;
  Placement pl_;
  ModelComms comms_;
  const ConvNextWeights& weights_;
  Runtime& rt_;
  DType dtype_;
  std::vector<lm::MicroBatch> mbs_;
  LayerHook hook_;
};

}  // namespace fk::runner
