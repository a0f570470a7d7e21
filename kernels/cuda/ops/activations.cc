// CUDA activation baselines: one "cuda" impl per op of kernels/ops/activations.cc,
// each unpacking (out, input) for the launcher in activations.cu. rows and d come
// from out; a gated op's input rows are 2 * d wide.
#include "kernels/cuda/ops/activations_launch.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"

#include <string>

namespace fk::cuda {
namespace {

enum { kOut, kInput };

void add_activation(kernels::OpRegistry& reg, const std::string& name, launch::Activation act, bool gated) {
  reg.add_impl({name, "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && c.arg(kOut).dim() >= 1 &&
                         host::elem_of(c.arg(kOut).dtype()).has_value();
                },
                [name, act, gated](const kernels::OpCall& c) {
                  const Tensor& out = c.arg(kOut);
                  const int64_t d = out.size(-1);
                  const int64_t rows = d > 0 ? out.numel() / d : 0;
                  host::check_launch(launch::activation(out.data(), c.arg(kInput).data(), host::elem(out, name.c_str()),
                                                        act, gated, rows, d, current_stream()),
                                     name.c_str());
                }});
}

}  // namespace

void register_cuda_activations(kernels::OpRegistry& reg) {
  using launch::Activation;
  add_activation(reg, "silu_and_mul", Activation::kSilu, true);
  add_activation(reg, "gelu_and_mul", Activation::kGelu, true);
  add_activation(reg, "gelu_tanh_and_mul", Activation::kGeluTanh, true);
  add_activation(reg, "gelu", Activation::kGelu, false);
  add_activation(reg, "gelu_new", Activation::kGeluTanh, false);
  add_activation(reg, "relu", Activation::kRelu, false);
  add_activation(reg, "relu2", Activation::kRelu2, false);
  add_activation(reg, "silu", Activation::kSilu, false);
}

}  // namespace fk::cuda
