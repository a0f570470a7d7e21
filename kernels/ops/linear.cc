// linear: out[T, N] = input[T, K] @ weight[N, K]^T (+ bias[N]), the column- and
// row-parallel projections of the model (weights in PyTorch's [out, in] layout).
// CPU baseline: OpenBLAS sgemm; fp16/bf16 operands are widened to fp32 first (the
// CPU has no 16-bit GEMM in OpenBLAS), the output rounded once.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fk::kernels {
namespace {

enum { kOut, kInput, kWeight, kBias };

const float* as_f32(const Tensor& t, std::vector<float>& scratch) {
  if (t.dtype() == DType::kF32) return t.data_as<const float>();
  scratch.resize(static_cast<size_t>(t.numel()));
  const int64_t n = t.numel();
  cpu::dispatch_float(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = t.data_as<const T>();
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; ++i) scratch[static_cast<size_t>(i)] = cpu::load(src[i]);
  });
  return scratch.data();
}

void linear_cpu(const OpCall& c) {
  const Tensor& x = c.arg(kInput);
  const Tensor& w = c.arg(kWeight);
  const Tensor& out = c.arg(kOut);
  const int64_t m = util::rows(x), k = x.size(-1), n = w.size(0);
  std::vector<float> xs, ws, os, bs;
  const float* a = as_f32(x, xs);
  const float* b = as_f32(w, ws);
  float* o = out.dtype() == DType::kF32 ? out.data_as<float>() : (os.resize(static_cast<size_t>(m * n)), os.data());
  if (m > 0 && n > 0) {
    if (k == 0) {
      std::fill(o, o + m * n, 0.0f);
    } else {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                  1.0f, a, static_cast<int>(k), b, static_cast<int>(k), 0.0f, o, static_cast<int>(n));
    }
  }
  const bool has_bias = util::present(c.arg(kBias));
  const float* bias = has_bias ? as_f32(c.arg(kBias), bs) : nullptr;
  cpu::dispatch_float(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data_as<T>();
#pragma omp parallel for schedule(static) if (m * n > 65536)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        const float v = o[r * n + j] + (has_bias ? bias[j] : 0.0f);
        dst[r * n + j] = cpu::store<T>(v);
      }
  });
}

}  // namespace

void register_linear(OpRegistry& reg) {
  OpDef d;
  d.name = "linear";
  d.summary = "out = input @ weight^T + bias (weight [out_features, in_features])";
  d.args = {{"out", ArgRole::kOut}, {"input", ArgRole::kIn}, {"weight", ArgRole::kIn}, {"bias", ArgRole::kIn, true, true}};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kInput, 2), util::check_tensor(c, d, kWeight, 2),
                                       util::check_tensor(c, d, kOut, 2), util::check_tensor(c, d, kBias, 1),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    return util::first_error(
        {util::check_dim(c, d, kWeight, 1, c.arg(kInput).size(1), "in_features"),
         util::check_dim(c, d, kOut, 0, c.arg(kInput).size(0), "tokens"),
         util::check_dim(c, d, kOut, 1, c.arg(kWeight).size(0), "out_features"),
         util::present(c.arg(kBias)) ? util::check_dim(c, d, kBias, 0, c.arg(kWeight).size(0), "out_features") : ""});
  };
  d.reference = [](const OpCall& c) {
    const int64_t m = c.arg(kInput).size(0), k = c.arg(kInput).size(1), n = c.arg(kWeight).size(0);
    const double *x = util::f64(c.arg(kInput)), *w = util::f64(c.arg(kWeight));
    const double* b = util::present(c.arg(kBias)) ? util::f64(c.arg(kBias)) : nullptr;
    double* out = util::f64(c.arg(kOut));
    // fp64 GEMM through BLAS (dgemm): a full-size projection (4096 x 4096 x 28672) is
    // seconds, not the minutes of a scalar loop; bias added after, in fp64.
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill(out, out + m * n, 0.0);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                  1.0, x, static_cast<int>(k), w, static_cast<int>(k), 0.0, out, static_cast<int>(n));
    }
    if (b != nullptr) {
#pragma omp parallel for schedule(static) if (m * n > 65536)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) out[r * n + j] += b[j];
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), k = s.dim("in"), n = s.dim("out");
    const float a = static_cast<float>(std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(k, 1))));
    return OpCall{{util::output(dt, {t, n}), util::uniform(dt, {t, k}, rng, "input", -1, 1),
                   util::uniform(dt, {n, k}, rng, "weight", -a, a),
                   s.dim("bias") ? util::uniform(dt, {n}, rng, "bias", -0.1f, 0.1f) : util::none()},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kInput).size(0)},
                    {"in", c.arg(kInput).size(1)},
                    {"out", c.arg(kWeight).size(0)},
                    {"bias", util::present(c.arg(kBias)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    return 2.0 * static_cast<double>(c.arg(kInput).size(0)) * static_cast<double>(c.arg(kInput).size(1)) *
           static_cast<double>(c.arg(kWeight).size(0));
  };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"linear", "cpu", DeviceKind::kCpu, nullptr, linear_cpu});
}

}  // namespace fk::kernels
