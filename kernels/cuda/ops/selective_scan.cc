// CUDA selective_scan baseline: unpacks the call (out, u, delta, A, B, C, D optional,
// z optional, delta_bias optional, ssm_state; delta_softplus) for the launcher in
// selective_scan.cu. supports() needs one activation dtype for u, delta, B, C, z and
// out, fp32 A, D, delta_bias and ssm_state (fp64 ones are the reference's), and a state
// size the kernel holds in registers (1..1024).
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/selective_scan_launch.h"
#include "kernels/ops/op_util.h"

namespace fk::cuda {

void register_cuda_selective_scan(kernels::OpRegistry& reg) {
  enum { kOut, kU, kDelta, kA, kB, kC, kD, kZ, kDeltaBias, kState };
  reg.add_impl({"selective_scan", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  using kernels::util::present;
                  if (c.args.size() != 10 || c.params.empty() || !host::device_contiguous(c)) return false;
                  const DType dt = c.arg(kU).dtype();
                  for (size_t i : {kOut, kDelta, kB, kC, kZ})
                    if ((i != kZ || present(c.arg(i))) && c.arg(i).dtype() != dt) return false;
                  for (size_t i : {kA, kD, kDeltaBias, kState})
                    if ((i == kA || i == kState || present(c.arg(i))) && c.arg(i).dtype() != DType::kF32) return false;
                  const Tensor& a = c.arg(kA);
                  return host::elem_of(dt).has_value() && c.arg(kU).dim() == 3 && a.dim() == 2 && a.size(1) >= 1 &&
                         a.size(1) <= launch::kSelectiveScanMaxState;
                },
                [](const kernels::OpCall& c) {
                  using kernels::util::present;
                  const Tensor& u = c.arg(kU);
                  const float* d = present(c.arg(kD)) ? c.arg(kD).data_as<float>() : nullptr;
                  const void* z = present(c.arg(kZ)) ? c.arg(kZ).data() : nullptr;
                  const float* bias = present(c.arg(kDeltaBias)) ? c.arg(kDeltaBias).data_as<float>() : nullptr;
                  host::check_launch(
                      launch::selective_scan(c.arg(kOut).data(), u.data(), c.arg(kDelta).data(),
                                             c.arg(kA).data_as<float>(), c.arg(kB).data(), c.arg(kC).data(), d, z,
                                             bias, c.arg(kState).data_as<float>(), host::elem(u, "selective_scan"),
                                             u.size(0), u.size(1), u.size(2), c.arg(kA).size(1), c.iparam(0) != 0,
                                             current_stream()),
                      "selective_scan");
                }});
}

}  // namespace fk::cuda
