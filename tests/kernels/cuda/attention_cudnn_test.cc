// cuDNN fused attention (kernels/cuda/ops/attention_cudnn.h) on a GPU (label gpu): the
// prefill shapes the models produce run through cuDNN -- causal from position 0 and
// from a later one (chunked prefill), sliding windows, bidirectional, GQA, a KV cache
// longer than the keys used -- and match an fp64 reference; what cuDNN must decline
// is declined with a reason; a planned call replays inside a CUDA graph.
#include "core/dtype.h"
#include "kernels/cuda/cudnn_status.h"
#include "kernels/cuda/ops/attention_cudnn.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fk::cuda {
namespace {

struct Shape {
  const char* name;
  launch::Elem elem;
  int64_t batch, cache_len, q_len, q_start, q_heads, kv_heads, d;
  bool causal;
  int64_t window;
};

uint16_t to_bits(launch::Elem e, float v) { return e == launch::Elem::kBF16 ? f32_to_bf16_bits(v) : f32_to_f16_bits(v); }
float from_bits(launch::Elem e, uint16_t b) { return e == launch::Elem::kBF16 ? bf16_bits_to_f32(b) : f16_bits_to_f32(b); }

#define CUDA_OK(x) ASSERT_EQ((x), cudaSuccess) << #x

// Host data of one problem (16-bit patterns) and its fp64 reference output.
struct Problem {
  Shape s;
  std::vector<uint16_t> q, k, v;
  std::vector<double> ref;
  explicit Problem(const Shape& shape) : s(shape) {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const auto fill = [&](std::vector<uint16_t>& x, size_t n) {
      x.resize(n);
      for (auto& b : x) b = to_bits(s.elem, u(rng));
    };
    fill(q, static_cast<size_t>(s.batch * s.q_len * s.q_heads * s.d));
    fill(k, static_cast<size_t>(s.batch * s.cache_len * s.kv_heads * s.d));
    fill(v, k.size());
    reference();
  }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(s.d)); }
  void reference() {
    ref.assign(q.size(), 0.0);
    const int64_t group = s.q_heads / s.kv_heads, skv = s.q_start + s.q_len;
    std::vector<double> w(static_cast<size_t>(skv));
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t i = 0; i < s.q_len; ++i)
        for (int64_t h = 0; h < s.q_heads; ++h) {
          const int64_t p = s.q_start + i, kvh = h / group;
          const int64_t j0 = s.causal && s.window > 0 ? std::max<int64_t>(0, p - s.window + 1) : 0;
          const int64_t j1 = s.causal ? p + 1 : skv;
          const size_t qo = static_cast<size_t>(((b * s.q_len + i) * s.q_heads + h) * s.d);
          double mx = -INFINITY;
          for (int64_t j = j0; j < j1; ++j) {
            const size_t ko = static_cast<size_t>(((b * s.cache_len + j) * s.kv_heads + kvh) * s.d);
            double dot = 0;
            for (int64_t e = 0; e < s.d; ++e) dot += double(from_bits(s.elem, q[qo + e])) * from_bits(s.elem, k[ko + e]);
            w[static_cast<size_t>(j)] = dot * scale();
            mx = std::max(mx, w[static_cast<size_t>(j)]);
          }
          double sum = 0;
          for (int64_t j = j0; j < j1; ++j) sum += (w[static_cast<size_t>(j)] = std::exp(w[static_cast<size_t>(j)] - mx));
          for (int64_t j = j0; j < j1; ++j) {
            const size_t vo = static_cast<size_t>(((b * s.cache_len + j) * s.kv_heads + kvh) * s.d);
            for (int64_t e = 0; e < s.d; ++e) ref[qo + e] += w[static_cast<size_t>(j)] / sum * from_bits(s.elem, v[vo + e]);
          }
        }
  }
};

class DeviceBuffers {
 public:
  explicit DeviceBuffers(const Problem& p) {
    bytes_q_ = p.q.size() * 2;
    bytes_kv_ = p.k.size() * 2;
    ok_ = cudaMalloc(&q, bytes_q_) == cudaSuccess && cudaMalloc(&k, bytes_kv_) == cudaSuccess &&
          cudaMalloc(&v, bytes_kv_) == cudaSuccess && cudaMalloc(&o, bytes_q_) == cudaSuccess &&
          cudaMemcpy(q, p.q.data(), bytes_q_, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaMemcpy(k, p.k.data(), bytes_kv_, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaMemcpy(v, p.v.data(), bytes_kv_, cudaMemcpyHostToDevice) == cudaSuccess &&
          cudaMemset(o, 0xff, bytes_q_) == cudaSuccess;  // NaN patterns: unwritten outputs show
  }
  ~DeviceBuffers() {
    for (void* x : {q, k, v, o}) cudaFree(x);
  }
  bool ok() const { return ok_; }
  std::vector<uint16_t> out() const {
    std::vector<uint16_t> h(bytes_q_ / 2);
    if (cudaMemcpy(h.data(), o, bytes_q_, cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
    return h;
  }
  void* q = nullptr;
  void* k = nullptr;
  void* v = nullptr;
  void* o = nullptr;

 private:
  size_t bytes_q_ = 0, bytes_kv_ = 0;
  bool ok_ = false;
};

AttentionCudnnCall call_of(const Problem& p, const DeviceBuffers& d) {
  AttentionCudnnCall c;
  c.out = d.o;
  c.query = d.q;
  c.key_cache = d.k;
  c.value_cache = d.v;
  c.elem = p.s.elem;
  c.batch = p.s.batch;
  c.cache_len = p.s.cache_len;
  c.q_len = p.s.q_len;
  c.q_start = p.s.q_start;
  c.q_heads = p.s.q_heads;
  c.kv_heads = p.s.kv_heads;
  c.head_dim = p.s.d;
  c.scale = static_cast<float>(p.scale());
  c.causal = p.s.causal;
  c.window = p.s.window;
  return c;
}

// Relative L2 and max abs error of `got` against the reference; NaN when unwritten.
void expect_close(const Problem& p, const std::vector<uint16_t>& got) {
  ASSERT_EQ(got.size(), p.ref.size());
  double num = 0, den = 0, max_abs = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = from_bits(p.s.elem, got[i]), r = p.ref[i];
    ASSERT_TRUE(std::isfinite(g)) << p.s.name << ": output " << i << " not finite";
    num += (g - r) * (g - r);
    den += r * r;
    max_abs = std::max(max_abs, std::abs(g - r));
  }
  const double rel = std::sqrt(num / std::max(den, 1e-30));
  const double tol = p.s.elem == launch::Elem::kBF16 ? 1.6e-2 : 4e-3;
  EXPECT_LT(rel, tol) << p.s.name;
  EXPECT_LT(max_abs, 20 * tol) << p.s.name;
}

class AttentionCudnn : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override {
    int n = 0;
    ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess) << "no CUDA device";
    // A GPU machine without cuDNN fails here with the loader's reason (FK_CUDNN_PATH).
    ASSERT_TRUE(cudnn_library().usable()) << cudnn_library().error;
  }
};

TEST_P(AttentionCudnn, RunsAndMatchesFp64) {
  const Problem p(GetParam());
  DeviceBuffers d(p);
  ASSERT_TRUE(d.ok());
  const AttentionCudnnOutcome r = attention_cudnn(call_of(p, d), nullptr);
  ASSERT_TRUE(r.ran) << p.s.name << ": " << r.reason;
  CUDA_OK(cudaDeviceSynchronize());
  expect_close(p, d.out());
}

INSTANTIATE_TEST_SUITE_P(
    Prefill, AttentionCudnn,
    ::testing::Values(Shape{"bf16_causal_gqa", launch::Elem::kBF16, 2, 320, 256, 0, 8, 2, 128, true, 0},
                      Shape{"fp16_causal_gqa", launch::Elem::kF16, 2, 256, 256, 0, 8, 2, 128, true, 0},
                      Shape{"bf16_chunked_prefill", launch::Elem::kBF16, 2, 256, 128, 64, 8, 2, 128, true, 0},
                      Shape{"bf16_sliding_window", launch::Elem::kBF16, 1, 256, 256, 0, 4, 1, 128, true, 100},
                      Shape{"bf16_window_chunk", launch::Elem::kBF16, 1, 256, 128, 96, 4, 4, 64, true, 80},
                      Shape{"bf16_bidirectional", launch::Elem::kBF16, 2, 200, 200, 0, 4, 4, 64, false, 0},
                      Shape{"fp16_odd_length_mqa", launch::Elem::kF16, 3, 77, 77, 0, 8, 1, 64, true, 0}),
    [](const ::testing::TestParamInfo<Shape>& i) { return std::string(i.param.name); });

TEST_F(AttentionCudnn, DeclinesWhatItCannotTake) {
  const Problem p(Shape{"decline", launch::Elem::kBF16, 1, 64, 64, 0, 2, 2, 64, true, 0});
  DeviceBuffers d(p);
  ASSERT_TRUE(d.ok());
  AttentionCudnnCall c = call_of(p, d);
  c.softcap = 30.f;
  AttentionCudnnOutcome r = attention_cudnn(c, nullptr);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.reason.find("soft-capping"), std::string::npos) << r.reason;
  c = call_of(p, d);
  c.elem = launch::Elem::kF32;
  r = attention_cudnn(c, nullptr);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.reason.find("fp32"), std::string::npos) << r.reason;
  c = call_of(p, d);
  c.q_len = 1;
  c.q_start = 63;
  r = attention_cudnn(c, nullptr);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.reason.find("single query"), std::string::npos) << r.reason;
  c = call_of(p, d);
  c.query = static_cast<const char*>(d.q) + 2;
  r = attention_cudnn(c, nullptr);
  EXPECT_FALSE(r.ran);
  EXPECT_NE(r.reason.find("aligned"), std::string::npos) << r.reason;
}

// Planned outside capture, the call is captured and replayed in a graph; a problem
// first seen during capture is declined (planning is not capturable).
TEST_F(AttentionCudnn, ReplaysInACudaGraph) {
  const Problem p(Shape{"graph", launch::Elem::kBF16, 2, 192, 192, 0, 8, 2, 128, true, 0});
  DeviceBuffers d(p);
  ASSERT_TRUE(d.ok());
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ASSERT_TRUE(attention_cudnn(call_of(p, d), stream).ran);
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaMemset(d.o, 0xff, p.q.size() * 2));

  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const AttentionCudnnOutcome planned = attention_cudnn(call_of(p, d), stream);
  const Problem other(Shape{"unplanned", launch::Elem::kBF16, 1, 96, 96, 0, 8, 2, 128, true, 0});
  AttentionCudnnCall fresh = call_of(other, d);
  const AttentionCudnnOutcome unplanned = attention_cudnn(fresh, stream);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_TRUE(planned.ran) << planned.reason;
  EXPECT_FALSE(unplanned.ran);
  EXPECT_NE(unplanned.reason.find("capture"), std::string::npos) << unplanned.reason;
  cudaGraphExec_t exec = nullptr;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_OK(cudaGraphLaunch(exec, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  expect_close(p, d.out());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);

  // Every planned problem has run, so each names the configuration its first call chose.
  bool listed = false;
  for (const std::string& line : attention_cudnn_plans()) {
    if (line.find("cudnn engine") == std::string::npos) continue;
    listed = true;
    EXPECT_EQ(line.find("not yet chosen"), std::string::npos) << line;
    EXPECT_NE(line.find("configuration"), std::string::npos) << line;
  }
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace fk::cuda
