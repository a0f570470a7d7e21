// cuBLASLt matmul of the CUDA linear baseline (see linear_lt.h). Row-major out[m, n] =
// x[m, k] @ w[n, k]^T is computed as the column-major out^T[n, m] = op_T(W) * x^T:
// A = w viewed as a k x n column-major matrix (ld k), transposed; B = x viewed as
// k x m (ld k); D = out as n x m (ld n). The bias epilogue adds bias[n] along D's rows.
#include "kernels/cuda/ops/linear_lt.h"

#include "core/error.h"
#include "kernels/cuda/cublaslt_api.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/env_switch.h"
#include "kernels/cuda/event_pair.h"
#include "kernels/cuda/ops/linear_launch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <compare>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace fk::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr int kOffered = 8;  // configurations asked of the heuristic for one problem

// The process's cuBLASLt (loaded on the first call; throws naming why it cannot be).
const CublasLtApi& lt() { return cublaslt_api(); }

void lt_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(ErrorKind::kRuntime, "linear: cuBLASLt call {} failed: {} ({})", call, lt().status_name(status),
         lt().status_string(status));
}
#define FK_LT_CHECK(call) lt_check((call), #call)

cudaDataType_t data_type(launch::Elem elem) {
  switch (elem) {
    case launch::Elem::kF32: return CUDA_R_32F;
    case launch::Elem::kF16: return CUDA_R_16F;
    case launch::Elem::kBF16: return CUDA_R_16BF;
  }
  fail(ErrorKind::kInternal, "linear: unknown element type");
}

// Largest power of two up to 256 dividing the address: what the heuristic may assume.
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && address % a != 0) a /= 2;
  return a;
}

struct Key {
  int device;
  int64_t m, n, k;
  launch::Elem elem;
  bool bias;
  bool f32_out;         // the output is fp32 whatever the inputs' type (matmul_batched)
  int64_t batch;        // pointer-array batch count; 0: one matrix (matmul)
  uint32_t align;       // least alignment of out, x and w (the heuristic's preference)
  uint32_t bias_align;  // the heuristic reads the bias pointer's alignment from its value
  auto operator<=>(const Key&) const = default;
};

// The algorithm of one problem. Until it is tuned, `offered` holds the heuristic's
// configurations and `algo` the first of them; `gemv_offered` says the GEMV form
// (linear_gemv.cu) is timed beside them, `gemv` that it was chosen.
struct Choice {
  bool none = false;  // the heuristic offered nothing (matmul_batched reports it)
  bool gemv_offered = false;
  bool gemv = false;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  float waves = 0;
  bool tuned = false;
  std::vector<cublasLtMatmulHeuristicResult_t> offered;
  std::string tuning;  // how it was chosen, for describe() and plans()
};

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

// The descriptors of one call (cheap host objects, made per call and destroyed).
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  Descriptors(launch::Elem elem, int64_t m, int64_t n, int64_t k, const void* bias, bool f32_out = false,
              int64_t batch = 0) {
    const cudaDataType_t t = data_type(elem);
    FK_LT_CHECK(lt().matmul_desc_create(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    FK_LT_CHECK(lt().matmul_desc_set_attribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
    FK_LT_CHECK(lt().matmul_desc_set_attribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
    if (bias != nullptr) {
      const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const int32_t bias_type = t;  // the bias has the output's dtype (also cuBLASLt's default)
      FK_LT_CHECK(lt().matmul_desc_set_attribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      FK_LT_CHECK(lt().matmul_desc_set_attribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      FK_LT_CHECK(
          lt().matmul_desc_set_attribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
    }
    const auto um = static_cast<uint64_t>(m), un = static_cast<uint64_t>(n), uk = static_cast<uint64_t>(k);
    FK_LT_CHECK(lt().layout_create(&a, t, uk, un, k));
    FK_LT_CHECK(lt().layout_create(&b, t, uk, um, k));
    FK_LT_CHECK(lt().layout_create(&d, f32_out ? CUDA_R_32F : t, un, um, n));
    if (batch > 0) {  // each operand an array of `batch` device pointers
      const int32_t count = static_cast<int32_t>(batch);
      const uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
      for (auto* layout : {a, b, d}) {
        FK_LT_CHECK(lt().layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
        FK_LT_CHECK(lt().layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof(mode)));
      }
    }
  }
  ~Descriptors() {
    if (d) lt().layout_destroy(d);
    if (b) lt().layout_destroy(b);
    if (a) lt().layout_destroy(a);
    if (op) lt().matmul_desc_destroy(op);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

// Up to kOffered configurations of the heuristic for this problem, best first. Throws
// when it offers none, unless may_be_empty (a pointer-array batch: none is returned).
std::vector<cublasLtMatmulHeuristicResult_t> offered(cublasLtHandle_t handle, const Descriptors& desc, uint32_t align,
                                                     bool may_be_empty = false) {
  cublasLtMatmulPreference_t pref = nullptr;
  FK_LT_CHECK(lt().preference_create(&pref));
  struct Guard {
    cublasLtMatmulPreference_t p;
    ~Guard() { lt().preference_destroy(p); }
  } guard{pref};
  const uint64_t workspace = kWorkspaceBytes;
  FK_LT_CHECK(
      lt().preference_set_attribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  for (const auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    FK_LT_CHECK(lt().preference_set_attribute(pref, attr, &align, sizeof(align)));
  std::vector<cublasLtMatmulHeuristicResult_t> results(kOffered);
  int found = 0;
  const cublasStatus_t status =
      lt().algo_get_heuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d, pref, kOffered, results.data(), &found);
  if (may_be_empty && status == CUBLAS_STATUS_NOT_SUPPORTED) return {};
  FK_LT_CHECK(status);
  results.resize(static_cast<size_t>(std::max(found, 0)));
  std::erase_if(results, [](const auto& r) { return r.state != CUBLAS_STATUS_SUCCESS; });
  if (results.empty() && may_be_empty) return results;
  if (results.empty()) fail(ErrorKind::kRuntime, "linear: cublasLtMatmulAlgoGetHeuristic found no algorithm");
  return results;
}

template <typename V>
V algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  V v{};
  size_t written = 0;
  if (lt().algo_config_get_attribute(&algo, attr, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) return V{};
  return v;
}

int current_device() {
  int device = 0;
  FK_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// FK_CUBLASLT_AUTOTUNE=0 keeps the heuristic's first configuration untimed.
bool autotune() { return env_switch("FK_CUBLASLT_AUTOTUNE", "1", "0"); }

// FK_LINEAR_GEMV=0 leaves the GEMV form out of the tuning.
bool gemv_allowed() { return env_switch("FK_LINEAR_GEMV", "1", "0"); }

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  FK_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

// This thread's stream-capture interaction mode is cudaStreamCaptureModeRelaxed while
// it lives (calls such as cudaMalloc are then allowed while a stream captures), and
// what it was before afterwards.
struct RelaxedCaptureMode {
  cudaStreamCaptureMode previous = cudaStreamCaptureModeRelaxed;
  RelaxedCaptureMode() { FK_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&previous)); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&previous); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;
};

// Device memory freed when it goes out of scope (after the stream's work is waited for).
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(void* adopted) : p(adopted) {}
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// One configuration the tuning times: its name in the tuning line, and a call that
// enqueues it on the problem's buffers and returns "" or what failed.
struct Candidate {
  std::string name;
  std::function<std::string()> call;
};

// Times each candidate on this call's own buffers: one untimed call, then kMinTuneRuns
// to kMaxTuneRuns calls (as many as fill about a millisecond), each after a memset of
// twice the L2 (the weights come from memory, as they do when a model runs) and timed
// alone between two events; the median counts. The first (the heuristic's first) is
// kept unless another is more than kTuneMargin faster (timing cannot rank configurations
// closer than that, and the heuristic's order breaks the tie). The output is written,
// the inputs only read. A candidate whose call fails is left out; when all fail, the
// first failure is thrown. Returns the index chosen and the line that says what was
// timed. Synchronises the stream; never inside a capture. When the device has no
// memory left for the flush buffer (a model filling it), nothing is timed and the
// first is kept: tuning never makes a call fail.
std::pair<size_t, std::string> tune(const std::vector<Candidate>& candidates, int device, cudaStream_t stream) {
  constexpr int kMinTuneRuns = 5, kMaxTuneRuns = 25;
  constexpr float kTuneMargin = 0.02f, kTuneBudgetMs = 1.0f;
  int l2 = 0;
  FK_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const size_t flush_bytes = std::max<size_t>(2 * static_cast<size_t>(l2), size_t{64} << 20);
  FK_CUDA_CHECK(cudaStreamSynchronize(stream));
  void* flush_p = nullptr;
  if (const cudaError_t e = cudaMalloc(&flush_p, flush_bytes); e != cudaSuccess) {
    if (e != cudaErrorMemoryAllocation) FK_CUDA_CHECK(e);
    cudaGetLastError();  // the failed allocation's error is not sticky: clear it
    return {0, fmt::format("the heuristic's first of {}, not timed: no device memory for the timing's cache flush "
                           "({} MiB)",
                           candidates.size(), flush_bytes >> 20)};
  }
  const DeviceBuffer flush(flush_p);
  const EventPair ev;
  std::vector<float> medians(candidates.size(), std::numeric_limits<float>::infinity());
  std::string lines, first_error;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::vector<float> times;
    int runs = kMinTuneRuns;
    std::string error = candidates[i].call();
    for (int r = 0; r < runs && error.empty(); ++r) {
      FK_CUDA_CHECK(cudaMemsetAsync(flush.p, r & 0xff, flush_bytes, stream));
      FK_CUDA_CHECK(cudaEventRecord(ev.start, stream));
      error = candidates[i].call();
      FK_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
      const float ms = ev.elapsed_ms();
      times.push_back(ms);
      if (r == 0 && ms > 0)
        runs = std::clamp(static_cast<int>(std::ceil(kTuneBudgetMs / ms)), kMinTuneRuns, kMaxTuneRuns);
    }
    if (!error.empty()) {
      if (first_error.empty())
        first_error =
            fmt::format("linear: every configuration offered failed; the first: {}: {}", candidates[i].name, error);
      lines += fmt::format("{}{}: failed", lines.empty() ? "" : ", ", candidates[i].name);
      continue;
    }
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    medians[i] = times[times.size() / 2];
    lines += fmt::format("{}{}: {:.1f} us", lines.empty() ? "" : ", ", candidates[i].name, 1e3f * medians[i]);
  }
  FK_CUDA_CHECK(cudaStreamSynchronize(stream));
  const size_t fastest = static_cast<size_t>(std::min_element(medians.begin(), medians.end()) - medians.begin());
  if (!std::isfinite(medians[fastest])) fail(ErrorKind::kRuntime, "{}", first_error);
  if (std::isfinite(medians[0]) && medians[fastest] >= (1 - kTuneMargin) * medians[0])
    return {0, fmt::format("the heuristic's first: none of {} configurations timed was {:.0f}% faster ({})",
                           candidates.size(), 100 * kTuneMargin, lines)};
  return {fastest, fmt::format("the fastest of {} configurations timed ({})", candidates.size(), lines)};
}

// The name of a cuBLASLt configuration in tuning lines.
std::string algo_name(const cublasLtMatmulAlgo_t& algo) {
  return fmt::format("algo {} tile {}", algo_attr<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
                     algo_attr<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
}

constexpr const char* kGemvName = "GEMV kernel";

// Index `index` of the candidates (the offered configurations, then the GEMV form when
// offered) becomes the problem's choice.
void settle(Choice& c, size_t index, std::string tuning) {
  c.gemv = c.gemv_offered && index == c.offered.size();
  const auto& r = c.offered.at(c.gemv ? 0 : index);
  c.algo = r.algo;
  c.workspace = r.workspaceSize;
  c.waves = r.wavesCount;
  c.tuning = std::move(tuning);
  c.tuned = true;
  c.offered.clear();
}

std::string describe_choice(const Key& key, const Choice& c) {
  if (c.gemv) return fmt::format("{} (linear_gemv.cu, align {} B): {}", kGemvName, key.align, c.tuning);
  return fmt::format(
      "cublasLt algo {} tile {} stages {} splitK {} reduction {} swizzle {} workspace {} B waves {:.2f} "
      "(align {} B): {}",
      algo_attr<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_ID), algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
      algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
      algo_attr<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
      algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
      algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), c.workspace, c.waves, key.align, c.tuning);
}

}  // namespace

struct LinearLt::State {
  mutable std::mutex mu;
  std::map<int, DeviceState> devices;
  std::map<Key, Choice> choices;
};

LinearLt::LinearLt() : state_(new State) {}

LinearLt& LinearLt::instance() {
  static LinearLt* one = new LinearLt;  // leaked on purpose: no teardown after the CUDA context
  return *one;
}

void LinearLt::matmul(void* out, const void* x, const void* w, const void* bias, launch::Elem elem, int64_t m,
                      int64_t n, int64_t k, cudaStream_t stream) {
  FK_ASSERT(m > 0 && n > 0 && k > 0);
  const uint32_t align = std::min({alignment_of(out), alignment_of(x), alignment_of(w)});
  run(Problem{out, x, w, bias, elem, m, n, k, false, 0, align}, stream);
}

bool LinearLt::matmul_batched(void* const* out, const void* const* x, const void* const* w, launch::Elem elem,
                              bool f32_out, int64_t m, int64_t n, int64_t k, int64_t batch, uint32_t align,
                              cudaStream_t stream) {
  FK_ASSERT(m > 0 && n > 0 && k > 0 && batch > 0 && batch <= 0x7fffffff);
  return run(Problem{const_cast<void**>(out), x, w, nullptr, elem, m, n, k, f32_out, batch, align}, stream);
}

bool LinearLt::run(const Problem& p, cudaStream_t stream) {
  // cuBLASLt is loaded by the first matmul, which may come inside a stream capture:
  // relaxed meanwhile, in case its initialisation calls the runtime. A failed load
  // throws here, and again at the next call.
  static const bool loaded = [] {
    const RelaxedCaptureMode relaxed;
    lt();
    return true;
  }();
  (void)loaded;
  const int device = current_device();
  const Key key{device,    p.m,
                p.n,       p.k,
                p.elem,    p.bias != nullptr,
                p.f32_out, p.batch,
                p.align,   p.bias != nullptr ? alignment_of(p.bias) : 0u};
  const Descriptors desc(p.elem, p.m, p.n, p.k, p.bias, p.f32_out, p.batch);
  DeviceState dev;
  Choice choice;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    DeviceState& ds = state_->devices[device];
    if (ds.workspace == nullptr) {  // first use on this device (or a retry after a failure)
      // The first call may come inside a stream capture (a graph captured before any
      // eager call): this thread's capture mode is relaxed meanwhile, so that the
      // handle and the workspace, which outlive the graph, can be made.
      const RelaxedCaptureMode relaxed;
      if (ds.handle == nullptr) FK_LT_CHECK(lt().create(&ds.handle));
      FK_CUDA_CHECK(cudaMalloc(&ds.workspace, kWorkspaceBytes));
    }
    dev = ds;
    auto it = state_->choices.find(key);
    if (it == state_->choices.end()) {
      const bool tune_on = autotune();
      Choice c;
      c.offered = offered(ds.handle, desc, p.align, p.batch > 0);
      // The GEMV form is a candidate for a plain matmul of a few rows; it runs only when
      // timed faster, so never untimed (autotuning off keeps cuBLASLt's first).
      c.gemv_offered = tune_on && !c.offered.empty() && p.batch == 0 && !p.f32_out && p.align >= 16 && gemv_allowed() &&
                       launch::linear_gemv_fits(p.elem, p.m, p.n, p.k, p.x, p.w);
      if (c.offered.empty()) {  // a batched problem no algorithm takes
        c.none = true;
        c.tuned = true;
        c.tuning = "no configuration offered for this pointer-array batch";
      } else {
        const auto& first = c.offered.front();
        c.algo = first.algo, c.workspace = first.workspaceSize, c.waves = first.wavesCount;
        if (c.offered.size() == 1 && !c.gemv_offered) {
          settle(c, 0, "the one configuration offered");
        } else if (!tune_on) {
          settle(c, 0, fmt::format("the heuristic's first of {} (FK_CUBLASLT_AUTOTUNE=0)", c.offered.size()));
        } else {
          c.tuning = fmt::format("the heuristic's first of {}, not yet timed (at the first call outside a capture)",
                                 c.offered.size() + (c.gemv_offered ? 1 : 0));
        }
      }
      it = state_->choices.emplace(key, std::move(c)).first;
    }
    choice = it->second;
  }
  if (choice.none) return false;
  // Tuned at the problem's first call outside a stream capture (a captured call keeps
  // the heuristic's first until then).
  const float alpha = 1.0f, beta = 0.0f;
  if (!choice.tuned && !capturing(stream)) {
    std::vector<Candidate> candidates;
    for (const auto& r : choice.offered)
      candidates.push_back({algo_name(r.algo), [&, algo = r.algo]() -> std::string {
                              const cublasStatus_t status =
                                  lt().matmul(dev.handle, desc.op, &alpha, p.w, desc.a, p.x, desc.b, &beta, p.out,
                                              desc.d, p.out, desc.d, &algo, dev.workspace, kWorkspaceBytes, stream);
                              if (status == CUBLAS_STATUS_SUCCESS) return {};
                              return fmt::format("{} ({})", lt().status_name(status), lt().status_string(status));
                            }});
    if (choice.gemv_offered)
      candidates.push_back({kGemvName, [&]() -> std::string {
                              const cudaError_t e =
                                  launch::linear_gemv(p.out, p.x, p.w, p.bias, p.elem, p.m, p.n, p.k, stream);
                              return e == cudaSuccess ? std::string() : cudaGetErrorString(e);
                            }});
    auto [best, tuning] = tune(candidates, device, stream);
    settle(choice, best, std::move(tuning));
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->choices[key] = choice;
  }
  if (choice.gemv) {
    const cudaError_t e = launch::linear_gemv(p.out, p.x, p.w, p.bias, p.elem, p.m, p.n, p.k, stream);
    if (e != cudaSuccess)
      fail(ErrorKind::kRuntime, "linear: the GEMV kernel's launch failed: {}", cudaGetErrorString(e));
    return true;
  }
  FK_LT_CHECK(lt().matmul(dev.handle, desc.op, &alpha, p.w, desc.a, p.x, desc.b, &beta, p.out, desc.d, p.out, desc.d,
                          &choice.algo, dev.workspace, kWorkspaceBytes, stream));
  return true;
}

std::string LinearLt::describe(launch::Elem elem, int64_t m, int64_t n, int64_t k, bool bias) const {
  const int device = current_device();
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [key, c] : state_->choices) {
    if (key.device != device || key.m != m || key.n != n || key.k != k || key.elem != elem || key.bias != bias ||
        key.batch != 0 || key.f32_out)
      continue;
    return describe_choice(key, c);
  }
  return "no cuBLASLt algorithm chosen yet";
}

std::vector<std::string> LinearLt::plans() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<std::string> out;
  for (const auto& [key, c] : state_->choices)
    out.push_back(fmt::format("cuda:{} {} m {} n {} k {}{}{}{}: {}", key.device, launch::elem_name(key.elem), key.m,
                              key.n, key.k, key.bias ? " +bias" : "", key.f32_out ? " fp32 out" : "",
                              key.batch > 0 ? fmt::format(" batch {} (pointer arrays)", key.batch) : "",
                              c.none ? c.tuning : describe_choice(key, c)));
  return out;
}

}  // namespace fk::cuda
