// CUDA baselines of the ConvNeXt ops of kernels/ops/conv.cc: depthwise_conv2d (out, x
// [B, H, W, C], weight [C, k, k], bias or absent; padding), grn (out, x [B, N, C], gamma,
// beta; eps), patchify_channels_last (out, x [B, H, W, C]; patch) and spatial_mean (out,
// x [B, N, C]); each unpacks its call for a launcher in conv.cu. supports() needs
// device-resident contiguous tensors of a CUDA float dtype and the ranks the op checks.
#include "kernels/cuda/ops/conv_launch.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/ops/op_util.h"

namespace fk::cuda {
namespace {

bool float_call(const kernels::OpCall& c, size_t i, int64_t rank) {
  return host::device_contiguous(c) && c.arg(i).dim() == rank && host::elem_of(c.arg(i).dtype()).has_value();
}

void impl_depthwise_conv2d(kernels::OpRegistry& reg) {
  enum { kOut, kX, kWeight, kBias };
  reg.add_impl({"depthwise_conv2d", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return float_call(c, kX, 4) && c.arg(kWeight).dim() == 3 && c.params.size() == 1;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kX);
                  const void* bias = kernels::util::present(c.arg(kBias)) ? c.arg(kBias).data() : nullptr;
                  host::check_launch(
                      launch::depthwise_conv2d(c.arg(kOut).data(), x.data(), c.arg(kWeight).data(), bias,
                                               host::elem(x, "depthwise_conv2d"), x.size(0), x.size(1), x.size(2),
                                               x.size(3), c.arg(kWeight).size(1), c.iparam(0), current_stream()),
                      "depthwise_conv2d");
                }});
}

void impl_grn(kernels::OpRegistry& reg) {
  enum { kOut, kX, kGamma, kBeta };
  reg.add_impl({"grn", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_call(c, kX, 3) && c.params.size() == 1; },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kX);
                  host::check_launch(launch::grn(c.arg(kOut).data(), x.data(), c.arg(kGamma).data(),
                                                 c.arg(kBeta).data(), host::elem(x, "grn"), x.size(0), x.size(1),
                                                 x.size(2), static_cast<float>(c.param(0)), current_stream()),
                                     "grn");
                }});
}

void impl_patchify_channels_last(kernels::OpRegistry& reg) {
  enum { kOut, kX };
  reg.add_impl({"patchify_channels_last", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_call(c, kX, 4) && c.params.size() == 1; },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kX);
                  host::check_launch(launch::patchify_channels_last(
                                         c.arg(kOut).data(), x.data(), host::elem(x, "patchify_channels_last"),
                                         x.size(0), x.size(1), x.size(2), x.size(3), c.iparam(0), current_stream()),
                                     "patchify_channels_last");
                }});
}

void impl_spatial_mean(kernels::OpRegistry& reg) {
  enum { kOut, kX };
  reg.add_impl({"spatial_mean", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_call(c, kX, 3); },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kX);
                  host::check_launch(launch::spatial_mean(c.arg(kOut).data(), x.data(), host::elem(x, "spatial_mean"),
                                                          x.size(0), x.size(1), x.size(2), current_stream()),
                                     "spatial_mean");
                }});
}

}  // namespace

void register_cuda_conv(kernels::OpRegistry& reg) {
  impl_depthwise_conv2d(reg);
  impl_grn(reg);
  impl_patchify_channels_last(reg);
  impl_spatial_mean(reg);
}

}  // namespace fk::cuda
