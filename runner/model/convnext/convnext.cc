#include "runner/model/convnext/convnext.h"

#include "core/error.h"

namespace fk::runner {
namespace {

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

}  // namespace

ConvNext::ConvNext(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
                   ModelComms comms, const ConvNextWeights& weights, Runtime& runtime)
    : a_(arch),
      c_(arch.sections.get<spec::ConvNextSpec>()),
      w_(workload),
      pl_(placement),
      comms_(comms),
      weights_(weights),
      rt_(runtime),
      dtype_(weights.dtype) {}

Tensor ConvNext::layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps, const std::string& role) {
  Tensor out = rt_.empty(dtype_, x.shape());
  rt_.run("layer_norm", role, call({out, x, w, b}, {eps}));
  return out;
}

Tensor ConvNext::linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) {
  Tensor out = rt_.empty(dtype_, {x.size(0), w.size(0)});
  rt_.run("linear", role, call({out, x, w, b}));
  return out;
}

// [images x pixels(0), width(0)]: the stem's patches through its map, normalised.
Tensor ConvNext::stem(const Tensor& pixels, int64_t images) {
  const int64_t p = c_.patch_size;
  Tensor patches = rt_.empty(dtype_, {images * c_.pixels(0), c_.num_channels * p * p});
  rt_.run("patchify", "stem.patchify", call({patches, pixels}, {static_cast<double>(p)}));
  const Tensor x = linear(patches, weights_.stem_w, weights_.stem_b, "stem.conv");
  return layer_norm(x, weights_.stem_norm_w, weights_.stem_norm_b, c_.block_norm_eps, "stem.norm");
}

Tensor ConvNext::block(const ConvNextBlockWeights& w, const Tensor& x, int64_t images, int64_t side, int64_t width) {
  const int64_t rows = images * side * side;
  Tensor conv = rt_.empty(dtype_, {images, side, side, width});
  rt_.run(
      "depthwise_conv2d", "block.dwconv",
      call({conv, x.reshape({images, side, side, width}), w.dw_w, w.dw_b}, {static_cast<double>(c_.kernel_size / 2)}));
  const Tensor normed = layer_norm(conv.reshape({rows, width}), w.norm_w, w.norm_b, c_.block_norm_eps, "block.norm");
  const Tensor up = linear(normed, w.pw1_w, w.pw1_b, "block.pwconv1");
  Tensor act = rt_.empty(dtype_, up.shape());
  rt_.run(activation_op(a_.mlp.activation), "block.act", call({act, up}));
  if (c_.v2()) {
    const int64_t inner = up.size(1);
    Tensor g = rt_.empty(dtype_, {images, side * side, inner});
    rt_.run("grn", "block.grn", call({g, act.reshape({images, side * side, inner}), w.grn_gamma, w.grn_beta}, {1e-6}));
    act = g.reshape({rows, inner});
  }
  const Tensor branch = linear(act, w.pw2_w, w.pw2_b, "block.pwconv2");
  if (w.layer_scale.defined()) rt_.run("channel_scale", "block.layer_scale", call({branch, w.layer_scale}));
  Tensor out = rt_.empty(dtype_, x.shape());
  rt_.run("add", "block.residual", call({out, x, branch}));
  return out;
}

// Stage w.index of images whose map x is the previous stage's (or the stem's).
Tensor ConvNext::stage(const ConvNextStageWeights& w, Tensor x, int64_t images) {
  const int64_t i = w.index, side = c_.side(i), width = c_.width(i);
  if (i > 0) {
    const int64_t prev_side = c_.side(i - 1), prev = c_.width(i - 1);
    const Tensor normed = layer_norm(x, w.down_norm_w, w.down_norm_b, c_.block_norm_eps, "downsample.norm");
    Tensor patches = rt_.empty(dtype_, {images * side * side, prev * 4});
    rt_.run("patchify_channels_last", "downsample.patchify",
            call({patches, normed.reshape({images, prev_side, prev_side, prev})}, {2.0}));
    x = linear(patches, w.down_w, w.down_b, "downsample.conv");
  }
  for (const ConvNextBlockWeights& b : w.blocks) x = block(b, x, images, side, width);
  return x;
}

Tensor ConvNext::step(const Tensor& images, int64_t q_len, int64_t q_start) {
  prepare(images, q_len, q_start);
  forward();
  return result();
}

void ConvNext::prepare(const Tensor& images, int64_t q_len, int64_t q_start) {
  if (q_len != 1 || q_start != 0)
    fail(ErrorKind::kInternal, "a ConvNeXt runs one pass over its images (q_len 1 at 0), not {} at {}", q_len, q_start);
  lm::stage_micro_batches(rt_, pl_, mbs_, images, pl_.batch_size(w_), 1, a_.hidden_size, false, dtype_);
}

void ConvNext::forward() {
  for (size_t m = 0; m < mbs_.size(); ++m) {
    const lm::MicroBatch& mb = mbs_[m];
    Tensor x;
    if (pl_.first_stage()) {
      x = stem(mb.ids, mb.seqs);
      if (hook_) hook_(-1, mb.seq_begin, rt_.host_f32(x));
    } else {
      const int64_t prev = pl_.first_layer(a_) - 1;
      x = lm::recv_stream(rt_, comms_, pl_, static_cast<int64_t>(m), mb.seqs * c_.pixels(prev), c_.width(prev), dtype_,
                          false)
              .h;
    }
    for (const ConvNextStageWeights& s : weights_.stages) {
      rt_.set_layer(s.index);
      x = stage(s, x, mb.seqs);
      if (hook_) hook_(s.index, mb.seq_begin, rt_.host_f32(x));
      rt_.set_layer(-1);
    }
    if (pl_.last_stage()) {
      const int64_t width = a_.hidden_size, pixels = c_.pixels(c_.stages() - 1);
      Tensor pooled = rt_.empty(dtype_, {mb.seqs, width});
      rt_.run("spatial_mean", "pooler.mean", call({pooled, x.reshape({mb.seqs, pixels, width})}));
      rt_.run("layer_norm", "pooler.norm",
              call({mb.out, pooled, weights_.final_norm_w, weights_.final_norm_b}, {a_.norm.eps}));
    } else {
      lm::send_stream(rt_, comms_, pl_, lm::StageStream{x, Tensor()}, static_cast<int64_t>(m), false);
    }
  }
}

Tensor ConvNext::result() { return lm::gather_outputs(rt_, pl_, mbs_, pl_.batch_size(w_), 1, false); }

}  // namespace fk::runner
