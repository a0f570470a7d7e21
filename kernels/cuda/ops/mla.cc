// CUDA baselines of MLA's ops: unpack the calls of mla_cache_write (kv_c, k_pe,
// kv_cache; q_len, q_start), head_linear (out, x, weight; w_kn) and mla_attention (out,
// q_nope, q_pe, kv_cache; scale, q_len, q_start) for the launchers in mla.cu.
// mla_attention's supports() needs a cache row of at most launch::kMlaMaxRow values.
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/mla_launch.h"

namespace fk::cuda {
namespace {

bool plain(const kernels::OpCall& c, size_t first_float) {
  return host::device_contiguous(c) && host::elem_of(c.arg(first_float).dtype()).has_value();
}

}  // namespace

void register_cuda_mla(kernels::OpRegistry& reg) {
  reg.add_impl({"mla_cache_write", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) { return plain(c, 0) && c.params.size() == 2; },
                [](const kernels::OpCall& c) {
                  const Tensor& cache = c.arg(2);
                  host::check_launch(launch::mla_cache_write(c.arg(0).data(), c.arg(1).data(), cache.data(),
                                                             host::elem(cache, "mla_cache_write"), cache.size(0),
                                                             cache.size(1), c.arg(0).size(1), c.arg(1).size(1),
                                                             c.iparam(0), c.iparam(1), current_stream()),
                                     "mla_cache_write");
                }});
  reg.add_impl(
      {"head_linear", "cuda", DeviceKind::kCuda,
       [](const kernels::OpCall& c) { return plain(c, 1) && c.params.size() == 1 && c.arg(1).size(1) <= 65535; },
       [](const kernels::OpCall& c) {
         const Tensor& x = c.arg(1);
         const bool kn = c.iparam(0) != 0;
         host::check_launch(
             launch::head_linear(c.arg(0).data(), x.data(), c.arg(2).data(), host::elem(x, "head_linear"), x.size(0),
                                 x.size(1), x.size(2), kn ? c.arg(2).size(2) : c.arg(2).size(1), kn, current_stream()),
             "head_linear");
       }});
  reg.add_impl({"mla_attention", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return plain(c, 1) && c.params.size() == 3 && c.arg(3).size(2) <= launch::kMlaMaxRow;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& qn = c.arg(1);
                  const Tensor& cache = c.arg(3);
                  host::check_launch(
                      launch::mla_attention(c.arg(0).data(), qn.data(), c.arg(2).data(), cache.data(),
                                            host::elem(qn, "mla_attention"), cache.size(0), cache.size(1), c.iparam(1),
                                            c.iparam(2), qn.size(1), qn.size(2), c.arg(2).size(2),
                                            static_cast<float>(c.param(0)), current_stream()),
                      "mla_attention");
                }});
}

}  // namespace fk::cuda
