// The cuBLASLt linear of the CUDA backend (kernels/cuda/ops/linear_lt.h) on a GPU (label
// gpu): a problem is timed over the heuristic's configurations at its first call outside
// a stream capture and keeps the fastest (or the heuristic's first, within 2%); a
// problem first seen inside a capture runs the heuristic's first and is timed at its
// next eager call; FK_CUBLASLT_AUTOTUNE=0 keeps the heuristic's first; a bad setting is
// an error naming the variable. Every result matches an fp64 reference whichever
// configuration ran. A decode-sized problem also times the GEMV form (unless
// FK_LINEAR_GEMV=0), and the GEMV kernel itself matches fp64 for every row count, dtype,
// odd widths and a bias, and refuses what it does not take.
#include "kernels/cuda/ops/linear_lt.h"
#include "core/dtype.h"
#include "core/error.h"
#include "kernels/cuda/ops/linear_launch.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace fk::cuda {
namespace {

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x

// bf16 operands of out[m, n] = x[m, k] @ w[n, k]^T on the device, and the fp64 result.
struct Problem {
  int64_t m, n, k;
  std::vector<uint16_t> x, w;
  std::vector<double> ref;
  void *dx = nullptr, *dw = nullptr, *dout = nullptr;

  Problem(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    std::mt19937 rng(static_cast<uint32_t>(m * 31 + n * 7 + k));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    x.resize(static_cast<size_t>(m * k));
    w.resize(static_cast<size_t>(n * k));
    for (auto& b : x) b = f32_to_bf16_bits(u(rng));
    for (auto& b : w) b = f32_to_bf16_bits(u(rng));
    ref.assign(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t t = 0; t < k; ++t)
          acc += static_cast<double>(bf16_bits_to_f32(x[i * k + t])) * bf16_bits_to_f32(w[j * k + t]);
        ref[i * n + j] = acc;
      }
    EXPECT_EQ(cudaMalloc(&dx, x.size() * 2), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&dw, w.size() * 2), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&dout, ref.size() * 2), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~Problem() {
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(dout);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void run(cudaStream_t stream) {
    LinearLt::instance().matmul(dout, dx, dw, nullptr, launch::Elem::kBF16, m, n, k, stream);
  }
  std::string describe() const { return LinearLt::instance().describe(launch::Elem::kBF16, m, n, k, false); }

  // Relative L2 error of the device output against the fp64 reference.
  double error() {
    std::vector<uint16_t> out(ref.size());
    EXPECT_EQ(cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
    double num = 0, den = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const double d = bf16_bits_to_f32(out[i]) - ref[i];
      num += d * d;
      den += ref[i] * ref[i];
    }
    return std::sqrt(num / den);
  }
};

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// bf16 output rounding (2^-8 relative) dominates; 1e-2 fails a wrong or partial product.
constexpr double kBound = 1e-2;

class LinearLtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_FAIL() << "no CUDA device";
    CUDA_OK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
    unsetenv("FK_CUBLASLT_AUTOTUNE");
    unsetenv("FK_LINEAR_GEMV");
  }
  cudaStream_t stream_ = nullptr;
};

TEST_F(LinearLtTest, FirstEagerCallTimesTheOfferedConfigurations) {
  Problem p(512, 768, 1024);
  EXPECT_EQ(p.describe(), "no cuBLASLt algorithm chosen yet");
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  const std::string d = p.describe();
  // Either the heuristic offered one configuration, or every offered one was timed.
  EXPECT_TRUE(has(d, "configurations timed") || has(d, "the one configuration offered")) << d;
  if (has(d, "configurations timed")) {
    EXPECT_TRUE(has(d, " us")) << d;
  }
  EXPECT_LT(p.error(), kBound);
  // Later calls reuse the choice.
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(p.describe(), d);
  EXPECT_LT(p.error(), kBound);
  bool listed = false;
  for (const auto& line : LinearLt::instance().plans()) listed = listed || has(line, "m 512 n 768 k 1024");
  EXPECT_TRUE(listed);
}

TEST_F(LinearLtTest, FirstSeenInACaptureIsTimedAtTheNextEagerCall) {
  Problem p(384, 640, 512);
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  p.run(stream_);
  CUDA_OK(cudaStreamEndCapture(stream_, &graph));
  const std::string captured = p.describe();
  EXPECT_TRUE(has(captured, "not yet timed") || has(captured, "the one configuration offered")) << captured;
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaGraphLaunch(exec, stream_));
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_LT(p.error(), kBound);
  CUDA_OK(cudaMemset(p.dout, 0, p.ref.size() * 2));
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_LT(p.error(), kBound);
  const std::string eager = p.describe();
  if (has(captured, "not yet timed")) {
    EXPECT_TRUE(has(eager, "configurations timed")) << eager;
  }
  // The graph still replays what it captured, and stays right.
  CUDA_OK(cudaMemset(p.dout, 0, p.ref.size() * 2));
  CUDA_OK(cudaGraphLaunch(exec, stream_));
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_LT(p.error(), kBound);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST_F(LinearLtTest, AutotuneOffKeepsTheHeuristicsFirst) {
  setenv("FK_CUBLASLT_AUTOTUNE", "0", 1);
  Problem p(256, 512, 768);
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  const std::string d = p.describe();
  EXPECT_TRUE(has(d, "(FK_CUBLASLT_AUTOTUNE=0)") || has(d, "the one configuration offered")) << d;
  EXPECT_FALSE(has(d, "timed")) << d;
  EXPECT_LT(p.error(), kBound);
}

// With the device's memory taken (a model filling it), a new problem is not timed (no
// room for the cache flush): it keeps the heuristic's first and runs, right. This test
// binary runs alone (RUN_SERIAL): it holds nearly all of the GPU's memory for a moment.
TEST_F(LinearLtTest, NoMemoryForTheFlushKeepsTheHeuristicsFirst) {
  Problem warm(64, 128, 256);  // the handle and workspace exist before memory runs out
  warm.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  Problem p(192, 320, 448);
  size_t free_bytes = 0, total = 0;
  CUDA_OK(cudaMemGetInfo(&free_bytes, &total));
  void* hog = nullptr;
  // Leave 16 MiB: enough for cuBLASLt's launch, too little for a flush of twice the L2.
  size_t want = free_bytes > (size_t{16} << 20) ? free_bytes - (size_t{16} << 20) : 0;
  while (want > 0 && cudaMalloc(&hog, want) != cudaSuccess) {
    cudaGetLastError();
    want -= size_t{8} << 20;
  }
  ASSERT_NE(hog, nullptr) << "could not take the device's memory";
  p.run(stream_);
  const cudaError_t synced = cudaStreamSynchronize(stream_);
  cudaFree(hog);
  ASSERT_EQ(synced, cudaSuccess);
  const std::string d = p.describe();
  EXPECT_TRUE(has(d, "not timed: no device memory") || has(d, "the one configuration offered")) << d;
  EXPECT_LT(p.error(), kBound);
}

TEST_F(LinearLtTest, BadAutotuneSettingNamesTheVariable) {
  setenv("FK_CUBLASLT_AUTOTUNE", "sometimes", 1);
  Problem p(128, 256, 384);
  try {
    p.run(stream_);
    FAIL() << "FK_CUBLASLT_AUTOTUNE=sometimes was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_TRUE(has(e.what(), "FK_CUBLASLT_AUTOTUNE=sometimes")) << e.what();
  }
  // The failed first call chose nothing; with a good setting the problem runs.
  unsetenv("FK_CUBLASLT_AUTOTUNE");
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_LT(p.error(), kBound);
}

// A decode step's problem (one row): the GEMV form is timed beside cuBLASLt's
// configurations, and whichever is kept is right; FK_LINEAR_GEMV=0 leaves it out.
TEST_F(LinearLtTest, OneRowProblemTimesTheGemvForm) {
  Problem p(1, 2048, 1536);
  p.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  const std::string d = p.describe();
  EXPECT_TRUE(has(d, "configurations timed")) << d;
  EXPECT_TRUE(has(d, "GEMV kernel: ")) << d;
  EXPECT_LT(p.error(), kBound);
  p.run(stream_);  // the choice again, whichever it is
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_LT(p.error(), kBound);
  setenv("FK_LINEAR_GEMV", "0", 1);
  Problem q(3, 2048, 1536);
  q.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_FALSE(has(q.describe(), "GEMV")) << q.describe();
  EXPECT_LT(q.error(), kBound);
  Problem big(64, 2048, 1536);  // past kLinearGemvMaxRows: cuBLASLt only
  unsetenv("FK_LINEAR_GEMV");
  big.run(stream_);
  CUDA_OK(cudaStreamSynchronize(stream_));
  EXPECT_FALSE(has(big.describe(), "GEMV")) << big.describe();
}

// The GEMV kernel alone, against fp64, for each element type and row count.
struct GemvCase {
  launch::Elem elem;
  int64_t m, n, k;
  bool bias;
};

// Host values of `elem` as raw bytes, and back to double.
std::vector<uint8_t> encode(launch::Elem elem, const std::vector<float>& v) {
  const size_t size = elem == launch::Elem::kF32 ? 4 : 2;
  std::vector<uint8_t> out(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i) {
    if (elem == launch::Elem::kF32) {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    } else {
      const uint16_t b = elem == launch::Elem::kF16 ? f32_to_f16_bits(v[i]) : f32_to_bf16_bits(v[i]);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
  }
  return out;
}
double decode(launch::Elem elem, const uint8_t* p) {
  if (elem == launch::Elem::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, p, 2);
  return elem == launch::Elem::kF16 ? f16_bits_to_f32(b) : bf16_bits_to_f32(b);
}

// Relative L2 error of the GEMV kernel's out against fp64 over the rounded inputs.
double gemv_error(const GemvCase& c, cudaStream_t stream) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 131 + c.n * 17 + c.k));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(static_cast<size_t>(c.m * c.k)), w(static_cast<size_t>(c.n * c.k)), b(static_cast<size_t>(c.n));
  for (auto* v : {&x, &w, &b})
    for (auto& e : *v) e = u(rng);
  const auto hx = encode(c.elem, x), hw = encode(c.elem, w), hb = encode(c.elem, b);
  const size_t size = c.elem == launch::Elem::kF32 ? 4 : 2;
  void *dx = nullptr, *dw = nullptr, *db = nullptr, *dout = nullptr;
  EXPECT_EQ(cudaMalloc(&dx, hx.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dw, hw.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&db, hb.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dout, static_cast<size_t>(c.m * c.n) * size), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dx, hx.data(), hx.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dw, hw.data(), hw.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(db, hb.data(), hb.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(dout, 0xff, static_cast<size_t>(c.m * c.n) * size), cudaSuccess);  // NaN everywhere
  EXPECT_TRUE(launch::linear_gemv_fits(c.elem, c.m, c.n, c.k, dx, dw));
  EXPECT_EQ(launch::linear_gemv(dout, dx, dw, c.bias ? db : nullptr, c.elem, c.m, c.n, c.k, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<uint8_t> out(static_cast<size_t>(c.m * c.n) * size);
  EXPECT_EQ(cudaMemcpy(out.data(), dout, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (void* p : {dx, dw, db, dout}) cudaFree(p);
  double num = 0, den = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = c.bias ? decode(c.elem, hb.data() + j * size) : 0.0;
      for (int64_t t = 0; t < c.k; ++t)
        ref += decode(c.elem, hx.data() + (i * c.k + t) * size) * decode(c.elem, hw.data() + (j * c.k + t) * size);
      const double d = decode(c.elem, out.data() + (i * c.n + j) * size) - ref;
      num += d * d;
      den += ref * ref;
    }
  return std::sqrt(num / den);  // NaN (a failed comparison) where an output was never written
}

TEST_F(LinearLtTest, GemvKernelMatchesFp64) {
  for (const launch::Elem elem : {launch::Elem::kF32, launch::Elem::kF16, launch::Elem::kBF16}) {
    // fp32: fp32 sums of k products; fp16/bf16: the one output rounding dominates.
    const double bound = elem == launch::Elem::kF32 ? 1e-5 : elem == launch::Elem::kF16 ? 2e-3 : 1e-2;
    for (int64_t m = 1; m <= launch::kLinearGemvMaxRows; ++m)
      for (const auto& [n, k, bias] :
           {std::tuple<int64_t, int64_t, bool>{37, 24, false}, {64, 1032, true}, {1, 8, true}, {129, 4104, false}}) {
        const GemvCase c{elem, m, n, k, bias};
        const double e = gemv_error(c, stream_);
        EXPECT_LT(e, bound) << launch::elem_name(elem) << " m " << m << " n " << n << " k " << k << " bias " << bias;
      }
  }
}

TEST_F(LinearLtTest, GemvKernelRefusesWhatItDoesNotTake) {
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, 1 << 16));
  const auto* p = static_cast<const uint8_t*>(d);
  const auto bf16 = launch::Elem::kBF16;
  EXPECT_TRUE(launch::linear_gemv_fits(bf16, launch::kLinearGemvMaxRows, 16, 64, p, p));
  EXPECT_FALSE(launch::linear_gemv_fits(bf16, launch::kLinearGemvMaxRows + 1, 16, 64, p, p));  // too many rows
  EXPECT_FALSE(launch::linear_gemv_fits(bf16, 0, 16, 64, p, p));
  EXPECT_FALSE(launch::linear_gemv_fits(bf16, 1, 16, 12, p, p));  // k not whole 16-byte vectors
  EXPECT_FALSE(launch::linear_gemv_fits(launch::Elem::kF32, 1, 16, 6, p, p));
  EXPECT_FALSE(launch::linear_gemv_fits(bf16, 1, 16, 64, p + 2, p));  // x not 16-byte aligned
  EXPECT_FALSE(launch::linear_gemv_fits(bf16, 1, 16, 64, p, p + 8));  // w not 16-byte aligned
  EXPECT_EQ(launch::linear_gemv(d, p, p, nullptr, bf16, launch::kLinearGemvMaxRows + 1, 16, 64, stream_),
            cudaErrorInvalidValue);
  CUDA_OK(cudaStreamSynchronize(stream_));
  cudaFree(d);
}

}  // namespace
}  // namespace fk::cuda
