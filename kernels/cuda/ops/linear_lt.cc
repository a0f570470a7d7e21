// cuBLASLt matmul of the CUDA linear baseline (see linear_lt.h). Row-major out[m, n] =
// x[m, k] @ w[n, k]^T is computed as the column-major out^T[n, m] = op_T(W) * x^T:
// A = w viewed as a k x n column-major matrix (ld k), transposed; B = x viewed as
// k x m (ld k); D = out as n x m (ld n). The bias epilogue adds bias[n] along D's rows.
#include "kernels/cuda/ops/linear_lt.h"

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <compare>
#include <map>
#include <mutex>

namespace fk::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

void lt_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(ErrorKind::kRuntime, "linear: cuBLASLt call {} failed: {} ({})", call, cublasLtGetStatusName(status),
         cublasLtGetStatusString(status));
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
  uint32_t align;       // least alignment of out, x and w (the heuristic's preference)
  uint32_t bias_align;  // the heuristic reads the bias pointer's alignment from its value
  auto operator<=>(const Key&) const = default;
};

struct Choice {
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
  float waves;
};

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

// The descriptors of one call (cheap host objects, made per call and destroyed).
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  Descriptors(launch::Elem elem, int64_t m, int64_t n, int64_t k, const void* bias) {
    const cudaDataType_t t = data_type(elem);
    FK_LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    FK_LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
    FK_LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
    if (bias != nullptr) {
      const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      const int32_t bias_type = t;  // the bias has the output's dtype (also cuBLASLt's default)
      FK_LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
      FK_LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      FK_LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)));
    }
    const auto um = static_cast<uint64_t>(m), un = static_cast<uint64_t>(n), uk = static_cast<uint64_t>(k);
    FK_LT_CHECK(cublasLtMatrixLayoutCreate(&a, t, uk, un, k));
    FK_LT_CHECK(cublasLtMatrixLayoutCreate(&b, t, uk, um, k));
    FK_LT_CHECK(cublasLtMatrixLayoutCreate(&d, t, un, um, n));
  }
  ~Descriptors() {
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

Choice choose(cublasLtHandle_t handle, const Descriptors& desc, uint32_t align) {
  cublasLtMatmulPreference_t pref = nullptr;
  FK_LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  struct Guard {
    cublasLtMatmulPreference_t p;
    ~Guard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{pref};
  const uint64_t workspace = kWorkspaceBytes;
  FK_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                   sizeof(workspace)));
  for (const auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    FK_LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof(align)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  FK_LT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc.op, desc.a, desc.b, desc.d, desc.d, pref, 1, &result, &found));
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS)
    fail(ErrorKind::kRuntime, "linear: cublasLtMatmulAlgoGetHeuristic found no algorithm");
  return {result.algo, result.workspaceSize, result.wavesCount};
}

template <typename V>
V algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  V v{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written) != CUBLAS_STATUS_SUCCESS) return V{};
  return v;
}

int current_device() {
  int device = 0;
  FK_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

}  // namespace

struct LinearLt::State {
  mutable std::mutex mu;
  std::map<int, DeviceState> devices;
  std::map<Key, Choice> choices;
};

LinearLt::LinearLt() : state_(new State) {}

LinearLt& LinearLt::instance() {
  static LinearLt* lt = new LinearLt;  // leaked on purpose: no teardown after the CUDA context
  return *lt;
}

void LinearLt::matmul(void* out, const void* x, const void* w, const void* bias, launch::Elem elem, int64_t m,
                      int64_t n, int64_t k, cudaStream_t stream) {
  FK_ASSERT(m > 0 && n > 0 && k > 0);
  const int device = current_device();
  const uint32_t align = std::min({alignment_of(out), alignment_of(x), alignment_of(w)});
  const Key key{device, m, n, k, elem, bias != nullptr, align, bias != nullptr ? alignment_of(bias) : 0u};
  const Descriptors desc(elem, m, n, k, bias);
  DeviceState dev;
  Choice choice;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    DeviceState& ds = state_->devices[device];
    if (ds.workspace == nullptr) {  // first use on this device (or a retry after a failure)
      if (ds.handle == nullptr) FK_LT_CHECK(cublasLtCreate(&ds.handle));
      FK_CUDA_CHECK(cudaMalloc(&ds.workspace, kWorkspaceBytes));
    }
    dev = ds;
    auto it = state_->choices.find(key);
    if (it == state_->choices.end()) it = state_->choices.emplace(key, choose(ds.handle, desc, align)).first;
    choice = it->second;
  }
  const float alpha = 1.0f, beta = 0.0f;
  FK_LT_CHECK(cublasLtMatmul(dev.handle, desc.op, &alpha, w, desc.a, x, desc.b, &beta, out, desc.d, out, desc.d,
                             &choice.algo, dev.workspace, kWorkspaceBytes, stream));
}

std::string LinearLt::describe(launch::Elem elem, int64_t m, int64_t n, int64_t k, bool bias) const {
  const int device = current_device();
  std::lock_guard<std::mutex> lock(state_->mu);
  for (const auto& [key, c] : state_->choices) {
    if (key.device != device || key.m != m || key.n != n || key.k != k || key.elem != elem || key.bias != bias) continue;
    return fmt::format("cublasLt algo {} tile {} stages {} splitK {} reduction {} swizzle {} workspace {} B waves {:.2f} "
                       "(align {} B)",
                       algo_attr<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_ID),
                       algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                       algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                       algo_attr<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                       algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                       algo_attr<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING), c.workspace, c.waves, key.align);
  }
  return "no cuBLASLt algorithm chosen yet";
}

}  // namespace fk::cuda
