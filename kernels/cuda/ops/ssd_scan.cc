// CUDA ssd_scan baseline: unpacks the call (out, x, dt, A, B, C, D optional, z optional,
// dt_bias optional, ssm_state; dt_softplus, dt_min, dt_max) for launch::ssd_scan, the
// selective_scan kernel with Mamba-2's indexing (selective_scan.cu). supports() needs
// one activation dtype for x, dt, B, C, z and out, fp32 A, D, dt_bias and ssm_state
// (fp64 ones are the reference's), and a state size the kernel holds in registers.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/selective_scan_launch.h"
#include "kernels/ops/op_util.h"

namespace fk::cuda {

void register_cuda_ssd_scan(kernels::OpRegistry& reg) {
  enum { kOut, kX, kDt, kA, kB, kC, kD, kZ, kDtBias, kState };
  reg.add_impl(
      {"ssd_scan", "cuda", DeviceKind::kCuda,
       [](const kernels::OpCall& c) {
         using kernels::util::present;
         if (c.args.size() != 10 || c.params.size() != 3 || !host::device_contiguous(c)) return false;
         const DType dt = c.arg(kX).dtype();
         for (size_t i : {kOut, kDt, kB, kC, kZ})
           if ((i != kZ || present(c.arg(i))) && c.arg(i).dtype() != dt) return false;
         for (size_t i : {kA, kD, kDtBias, kState})
           if ((i == kA || i == kState || present(c.arg(i))) && c.arg(i).dtype() != DType::kF32) return false;
         const Tensor& b = c.arg(kB);
         return host::elem_of(dt).has_value() && c.arg(kX).dim() == 4 && b.dim() == 4 && b.size(3) >= 1 &&
                b.size(3) <= launch::kSelectiveScanMaxState;
       },
       [](const kernels::OpCall& c) {
         using kernels::util::present;
         const Tensor& x = c.arg(kX);
         const float* d = present(c.arg(kD)) ? c.arg(kD).data_as<float>() : nullptr;
         const void* z = present(c.arg(kZ)) ? c.arg(kZ).data() : nullptr;
         const float* bias = present(c.arg(kDtBias)) ? c.arg(kDtBias).data_as<float>() : nullptr;
         const launch::SsdDt rule{c.iparam(0) != 0, static_cast<float>(c.param(1)), static_cast<float>(c.param(2))};
         host::check_launch(
             launch::ssd_scan(c.arg(kOut).data(), x.data(), c.arg(kDt).data(), c.arg(kA).data_as<float>(),
                              c.arg(kB).data(), c.arg(kC).data(), d, z, bias, c.arg(kState).data_as<float>(),
                              host::elem(x, "ssd_scan"), x.size(0), x.size(1), x.size(2), x.size(3), c.arg(kB).size(2),
                              c.arg(kB).size(3), rule, current_stream()),
             "ssd_scan");
       }});
}

}  // namespace fk::cuda
