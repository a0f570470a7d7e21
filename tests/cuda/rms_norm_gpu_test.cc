// GPU test (label gpu): the CUDA rms_norm baseline against an fp64 host reference,
// for fp32, fp16 and bf16 and odd hidden sizes. Runs only on a machine with a GPU.
#include "core/rng.h"
#include "kernels/cuda/cuda_backend.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fk {
namespace {

class CudaRmsNorm : public ::testing::TestWithParam<std::tuple<DType, int64_t>> {
 protected:
  void SetUp() override {
    cuda::backend_init();
    ASSERT_GT(cuda::device_count(), 0) << "gpu-labelled tests need a CUDA device";
  }
};

TEST_P(CudaRmsNorm, MatchesFp64Reference) {
  const auto [dtype, hidden] = GetParam();
  const int64_t tokens = 37;
  const double eps = 1e-6;
  std::vector<float> x(static_cast<size_t>(tokens * hidden)), w(static_cast<size_t>(hidden));
  rng_fill_uniform(RngStream(1, "x"), ShardBox::whole({tokens, hidden}), -2.0f, 2.0f, x);
  rng_fill_uniform(RngStream(1, "w"), ShardBox::whole({hidden}), 0.5f, 1.5f, w);
  Tensor hx = Tensor::borrow(x.data(), DType::kF32, {tokens, hidden}).to_dtype(dtype);
  Tensor hw = Tensor::borrow(w.data(), DType::kF32, {hidden}).to_dtype(dtype);
  Tensor dx = Tensor::empty(dtype, {tokens, hidden}, Device::cuda(0));
  Tensor dw = Tensor::empty(dtype, {hidden}, Device::cuda(0));
  Tensor dout = Tensor::empty(dtype, {tokens, hidden}, Device::cuda(0));
  cuda::copy_to_device(hx, dx);
  cuda::copy_to_device(hw, dw);
  cuda::rms_norm(dout, dx, dw, eps);
  Tensor hout = Tensor::empty(dtype, {tokens, hidden});
  cuda::copy_to_host(dout, hout);
  Tensor out32 = hout.to_dtype(DType::kF32);
  Tensor x32 = hx.to_dtype(DType::kF32), w32 = hw.to_dtype(DType::kF32);
  double num = 0, den = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    double ss = 0;
    for (int64_t i = 0; i < hidden; ++i) ss += std::pow(static_cast<double>(x32.span<float>()[t * hidden + i]), 2);
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    for (int64_t i = 0; i < hidden; ++i) {
      const double ref = x32.span<float>()[t * hidden + i] * inv * w32.span<float>()[i];
      const double got = out32.span<float>()[t * hidden + i];
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LT(rel, dtype == DType::kF32 ? 1e-6 : dtype == DType::kF16 ? 1e-3 : 8e-3) << dtype_name(dtype);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CudaRmsNorm,
                         ::testing::Combine(::testing::Values(DType::kF32, DType::kF16, DType::kBF16),
                                            ::testing::Values(int64_t{64}, int64_t{4095}, int64_t{4096},
                                                              int64_t{8192})));

}  // namespace
}  // namespace fk
