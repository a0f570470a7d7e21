// CUDA baselines of the vision-encoder ops of kernels/ops/vision.cc: patchify (out,
// pixels [B, C, Hi, Wi]; patch), patch_tokens (out, patches, prefix or absent,
// positions; prefix_rows) and channel_scale (x in place, gamma); each unpacks its call
// for a launcher in vision.cu. supports() needs device-resident contiguous tensors of a
// CUDA float dtype and the ranks the op checks.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/vision_launch.h"

namespace fk::cuda {
namespace {

bool float_call(const kernels::OpCall& c, size_t i, int64_t rank) {
  return host::device_contiguous(c) && c.arg(i).dim() == rank && host::elem_of(c.arg(i).dtype()).has_value();
}

void impl_patchify(kernels::OpRegistry& reg) {
  enum { kOut, kPixels };
  reg.add_impl({"patchify", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_call(c, kPixels, 4) && c.params.size() == 1; },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kPixels);
                  host::check_launch(
                      launch::patchify(c.arg(kOut).data(), x.data(), host::elem(x, "patchify"), x.size(0), x.size(1),
                                       x.size(2), x.size(3), c.iparam(0), current_stream()),
                      "patchify");
                }});
}

void impl_patch_tokens(kernels::OpRegistry& reg) {
  enum { kOut, kPatches, kPrefix, kPositions };
  reg.add_impl({"patch_tokens", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_call(c, kPositions, 2) && c.params.size() == 1; },
                [](const kernels::OpCall& c) {
                  const Tensor &pre = c.arg(kPrefix), &pos = c.arg(kPositions);
                  const bool has_prefix = pre.defined() && pre.numel() > 0;
                  const int64_t p = has_prefix ? pre.size(0) : 0, n = pos.size(0) - p;
                  host::check_launch(launch::patch_tokens(
                                         c.arg(kOut).data(), c.arg(kPatches).data(), has_prefix ? pre.data() : nullptr,
                                         pos.data(), host::elem(pos, "patch_tokens"),
                                         n > 0 ? c.arg(kPatches).size(0) / n : 0, n, p, pos.size(1), current_stream()),
                                     "patch_tokens");
                }});
}

void impl_channel_scale(kernels::OpRegistry& reg) {
  enum { kX, kGamma };
  reg.add_impl(
      {"channel_scale", "cuda", DeviceKind::kCuda, [](const kernels::OpCall& c) { return float_call(c, kX, 2); },
       [](const kernels::OpCall& c) {
         const Tensor& x = c.arg(kX);
         host::check_launch(launch::channel_scale(x.data(), c.arg(kGamma).data(), host::elem(x, "channel_scale"),
                                                  x.size(0), x.size(1), current_stream()),
                            "channel_scale");
       }});
}

}  // namespace

void register_cuda_vision(kernels::OpRegistry& reg) {
  impl_patchify(reg);
  impl_patch_tokens(reg);
  impl_channel_scale(reg);
}

}  // namespace fk::cuda
