// CUDA baselines of the ops of kernels/ops/elementwise.cc: add (out, a, b), scale and
// softcap (x in place; factor / cap), sigmoid_gate (x [tokens, hidden] in place, gate
// [tokens, 1]), argmax (int64 ids, input [tokens, vocab]); each
// unpacks its call for a launcher in elementwise.cu.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/elementwise_launch.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {
namespace {

bool float_arg_supported(const kernels::OpCall& c, size_t i) {
  return host::device_contiguous(c) && host::elem_of(c.arg(i).dtype()).has_value();
}

void impl_add(kernels::OpRegistry& reg) {
  reg.add_impl({"add", "cuda", DeviceKind::kCuda, [](const kernels::OpCall& c) { return float_arg_supported(c, 0); },
                [](const kernels::OpCall& c) {
                  const Tensor& out = c.arg(0);
                  host::check_launch(launch::add(out.data(), c.arg(1).data(), c.arg(2).data(), host::elem(out, "add"),
                                                 out.numel(), current_stream()),
                                     "add");
                }});
}

// scale and softcap: x (in place) and one float parameter, through `launcher`.
using InPlaceLauncher = cudaError_t (*)(void*, launch::Elem, int64_t, float, cudaStream_t);

void impl_in_place(kernels::OpRegistry& reg, const char* op, InPlaceLauncher launcher) {
  reg.add_impl({op, "cuda", DeviceKind::kCuda, [](const kernels::OpCall& c) { return float_arg_supported(c, 0); },
                [op, launcher](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(0);
                  host::check_launch(
                      launcher(x.data(), host::elem(x, op), x.numel(), static_cast<float>(c.param(0)), current_stream()),
                      op);
                }});
}

void impl_argmax(kernels::OpRegistry& reg) {
  reg.add_impl({"argmax", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return float_arg_supported(c, 1) && c.arg(0).dtype() == DType::kI64 && c.arg(1).dim() == 2;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(1);
                  host::check_launch(launch::argmax(c.arg(0).data_as<int64_t>(), x.data(), host::elem(x, "argmax"),
                                                    x.size(0), x.size(1), current_stream()),
                                     "argmax");
                }});
}

void impl_sigmoid_gate(kernels::OpRegistry& reg) {
  reg.add_impl({"sigmoid_gate", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return float_arg_supported(c, 0) && c.arg(0).dim() == 2; },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(0);
                  host::check_launch(launch::sigmoid_gate(x.data(), c.arg(1).data(), host::elem(x, "sigmoid_gate"),
                                                          x.size(0), x.size(1), current_stream()),
                                     "sigmoid_gate");
                }});
}

}  // namespace

void register_cuda_elementwise(kernels::OpRegistry& reg) {
  impl_add(reg);
  impl_in_place(reg, "scale", launch::scale);
  impl_in_place(reg, "softcap", launch::softcap);
  impl_argmax(reg);
  impl_sigmoid_gate(reg);
}

}  // namespace fk::cuda
