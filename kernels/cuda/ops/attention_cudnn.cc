// cuDNN fused attention for the CUDA attention baseline (see attention_cudnn.h).
//
// The operation graph follows the composite form cuDNN's fused-attention engines
// recognise (the one cudnn-frontend's SDPA node lowers to for cuDNN 9 before its
// single-node forms): bmm1 -> scale -> masks (GEN_INDEX / CMP / BINARY_SELECT) ->
// softmax (reduce max, sub, exp, reduce add, log + add for the row statistics, div)
// -> bmm2. Tensors are 4-d [b, h, s, d] strided views of the op's buffers:
//   Q, O  [b, hq, sq, d]   strides [sq*hq*d, d, hq*d, 1]
//   K^T   [b, hk, d, skv]  strides [L*hk*d, d, 1, hk*d]  (L = cache_len)
//   V     [b, hk, skv, d]  strides [L*hk*d, d, hk*d, 1]
// and the scores [b, hq, sq, skv] are virtual (never in memory).
//
// State: one cudnnHandle_t per device and one cache of problems (plans or the reason
// they were declined), behind one mutex held for the whole call; never destroyed (the
// plans refer to the handles, which must outlive them, and destruction at exit would
// race the CUDA context's teardown).
#include "kernels/cuda/ops/attention_cudnn.h"

#include "core/error.h"
#include "kernels/cuda/cudnn_api.h"
#include "kernels/cuda/env_switch.h"
#include "kernels/cuda/event_pair.h"
#include "kernels/cuda/ops/scratch.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>

namespace fk::cuda {
namespace {

// Thrown while building a graph: the problem is declined with this message.
struct Declined {
  std::string reason;
};

void check(cudnnStatus_t s, std::string_view call) {
  if (s != CUDNN_STATUS_SUCCESS) throw Declined{cudnn_describe(s, call)};
}

// One backend descriptor (RAII). Setters throw Declined naming the attribute.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    check(cudnn_api().create_descriptor(type, &d_), fmt::format("cudnnBackendCreateDescriptor({})", int(type)));
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  ~Desc() {
    if (d_ != nullptr) cudnn_api().destroy_descriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }

  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values, int64_t n) {
    check(cudnn_api().set_attribute(d_, name, type, n, values), fmt::format("cudnnBackendSetAttribute({})", int(name)));
    return *this;
  }
  template <typename T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
    return set(name, type, &value, 1);
  }
  Desc& set(cudnnBackendAttributeName_t name, const Desc& d) {
    const cudnnBackendDescriptor_t raw = d.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw);
  }
  Desc& finalize(std::string_view what) {
    check(cudnn_api().finalize(d_), fmt::format("cudnnBackendFinalize({})", what));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::array<int64_t, 4>;

// Unique ids of the tensors bound at execution; virtual tensors count up from kVirtual.
enum : int64_t { kQ = 1, kK, kV, kO, kScale, kNegInf, kShift, kLeft, kVirtual = 100 };

constexpr int64_t kMaxCandidates = 8;

cudnnDataType_t data_type(launch::Elem e) { return e == launch::Elem::kBF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

// The problem: everything the plan depends on (pointers only through their alignment,
// which attention_cudnn() requires to be 16 bytes).
struct Problem {
  int device;
  launch::Elem elem;
  int64_t batch, cache_len, q_len, q_start, q_heads, kv_heads, d;
  bool causal;
  int64_t window;
  auto key() const {
    return std::tuple(device, int(elem), batch, cache_len, q_len, q_start, q_heads, kv_heads, d, causal, window);
  }
  bool operator<(const Problem& o) const { return key() < o.key(); }
  std::string describe() const {
    return fmt::format("{} b {} sq {} (from {}) skv {} hq {} hk {} d {} {}{}", launch::elem_name(elem), batch, q_len,
                       q_start, q_start + q_len, q_heads, kv_heads, d, causal ? "causal" : "bidirectional",
                       window > 0 ? fmt::format(" window {}", window) : "");
  }
};

// An execution plan cuDNN finalized for the graph.
struct Candidate {
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
  int64_t engine = -1;
};

struct Plan {
  // Every descriptor the plan was made from (declared first: destroyed after it).
  std::vector<std::unique_ptr<Desc>> owned;
  std::unique_ptr<Desc> plan;
  int64_t workspace = 0;
  int64_t engine = -1;
  // Before the first call: every configuration the heuristics offered that finalized
  // (at most kMaxCandidates, best first); the call times them and keeps the fastest.
  std::vector<Candidate> candidates;
  std::string tuning;  // what the timing found, for attention_cudnn_plans()
  bool masks_shift = false, masks_left = false;
  bool stats = false;  // the graph has the row-statistics node
  std::vector<int64_t> uids;  // bound tensors, in variant-pack order
};

// Builds the operation graph of `p` and finalizes the engine configurations of the
// first heuristics mode that offers any (Plan::candidates). `with_stats` adds the row statistics (log-sum-exp) node the training
// form has; some cuDNN versions only match the graph with it, others without.
class GraphBuilder {
 public:
  GraphBuilder(const Problem& p, cudnnHandle_t handle) : p_(p), handle_(handle) {}

  std::unique_ptr<Plan> build(bool with_stats) {
    const int64_t b = p_.batch, hq = p_.q_heads, hk = p_.kv_heads, sq = p_.q_len, skv = p_.q_start + p_.q_len;
    const int64_t d = p_.d, L = p_.cache_len;
    const cudnnDataType_t io = data_type(p_.elem);
    auto plan = std::make_unique<Plan>();
    plan->stats = with_stats;

    const Desc& q = tensor(kQ, io, {b, hq, sq, d}, {sq * hq * d, d, hq * d, 1});
    const Desc& kt = tensor(kK, io, {b, hk, d, skv}, {L * hk * d, d, 1, hk * d});
    const Desc& v = tensor(kV, io, {b, hk, skv, d}, {L * hk * d, d, hk * d, 1});
    const Desc& o = tensor(kO, io, {b, hq, sq, d}, {sq * hq * d, d, hq * d, 1});
    const Desc& scale = scalar(kScale, CUDNN_DATA_FLOAT);
    plan->uids = {kQ, kK, kV, kO, kScale};

    const Dims s_dims{b, hq, sq, skv}, s_strides{hq * sq * skv, sq * skv, skv, 1};
    const Dims r_dims{b, hq, sq, 1}, r_strides{hq * sq, sq, 1, 1};
    const auto scores = [&](cudnnDataType_t t) -> const Desc& { return tensor(next_virtual(), t, s_dims, s_strides, true); };
    const auto rows = [&]() -> const Desc& { return tensor(next_virtual(), CUDNN_DATA_FLOAT, r_dims, r_strides, true); };

    const Desc& s0 = scores(CUDNN_DATA_FLOAT);
    matmul(q, kt, s0);
    const Desc* s = &pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, s0, &scale, scores(CUDNN_DATA_FLOAT));

    if (p_.causal) {
      const Desc& neg_inf = scalar(kNegInf, CUDNN_DATA_FLOAT);
      plan->uids.push_back(kNegInf);
      // Right bound: row + q_start >= col.
      const Desc* row = &gen_index(*s, 2, scores(CUDNN_DATA_INT32));
      const Desc& col = gen_index(*s, 3, scores(CUDNN_DATA_INT32));
      if (p_.q_start > 0) {
        const Desc& shift = scalar(kShift, CUDNN_DATA_INT32);
        plan->uids.push_back(kShift);
        plan->masks_shift = true;
        row = &pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, *row, &shift, scores(CUDNN_DATA_INT32), 3);
      }
      const Desc& keep = pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *row, &col, scores(CUDNN_DATA_BOOLEAN));
      s = &select(*s, neg_inf, keep, scores(CUDNN_DATA_FLOAT));
      if (p_.window > 0 && p_.window < skv) {
        // Left bound: col + (window - q_start) > row.
        const Desc& left = scalar(kLeft, CUDNN_DATA_INT32);
        plan->uids.push_back(kLeft);
        plan->masks_left = true;
        const Desc& row2 = gen_index(*s, 2, scores(CUDNN_DATA_INT32));
        const Desc& col2 = gen_index(*s, 3, scores(CUDNN_DATA_INT32));
        const Desc& shifted = pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, col2, &left, scores(CUDNN_DATA_INT32), 3);
        const Desc& keep2 =
            pointwise(CUDNN_POINTWISE_CMP_GT, CUDNN_DATA_BOOLEAN, shifted, &row2, scores(CUDNN_DATA_BOOLEAN));
        s = &select(*s, neg_inf, keep2, scores(CUDNN_DATA_FLOAT));
      }
    }

    const Desc& mx = rows();
    reduce(CUDNN_REDUCE_TENSOR_MAX, *s, mx);
    const Desc& centred = pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, *s, &mx, scores(CUDNN_DATA_FLOAT));
    const Desc& e = pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, centred, nullptr, scores(CUDNN_DATA_FLOAT));
    const Desc& sum = rows();
    reduce(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    if (with_stats) {
      const Desc& log_sum = pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, sum, nullptr, rows());
      pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, mx, &log_sum, rows());
    }
    // bmm2 takes P in the data type (cuDNN's fused engines require it).
    const Desc& prob = pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, &sum, scores(io));
    matmul(prob, v, o);

    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const Desc& op : ops_) ops.push_back(op.get());
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops.data(), static_cast<int64_t>(ops.size()))
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle_)
        .finalize("operation graph");

    std::string tried;
    for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      try {
        if (finalize_configs(graph, mode, *plan)) {
          for (auto& t : tensors_) plan->owned.push_back(std::move(t));
          for (Desc& op : ops_) plan->owned.push_back(std::make_unique<Desc>(std::move(op)));
          for (Desc& k : keep_) plan->owned.push_back(std::make_unique<Desc>(std::move(k)));
          plan->owned.push_back(std::make_unique<Desc>(std::move(graph)));
          return plan;
        }
        tried += fmt::format("{}heuristics mode {}: no engine configuration finalized", tried.empty() ? "" : "; ",
                             int(mode));
      } catch (const Declined& why) {
        tried += fmt::format("{}heuristics mode {}: {}", tried.empty() ? "" : "; ", int(mode), why.reason);
      }
    }
    throw Declined{"no cuDNN engine supports the graph (" + tried + ")"};
  }

 private:
  int64_t next_virtual() { return kVirtual + static_cast<int64_t>(tensors_.size()); }

  const Desc& tensor(int64_t uid, cudnnDataType_t type, const Dims& dims, const Dims& strides, bool is_virtual = false,
                     bool by_value = false) {
    Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t alignment = 16;
    t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment);
    if (is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, true);
    if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, true);
    t.finalize(fmt::format("tensor {}", uid));
    tensors_.push_back(std::make_unique<Desc>(std::move(t)));
    return *tensors_.back();
  }

  const Desc& scalar(int64_t uid, cudnnDataType_t type) { return tensor(uid, type, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true); }

  void matmul(const Desc& a, const Desc& b, const Desc& c) {
    Desc mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT).finalize("matmul");
    Desc op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm)
        .finalize("matmul operation");
    keep(std::move(mm));
    ops_.push_back(std::move(op));
  }

  // y = mode(x, b) (b null for unary modes; t the condition of BINARY_SELECT); returns y.
  const Desc& pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t math, const Desc& x, const Desc* b, const Desc& y,
                        int64_t axis = -1, const Desc* t = nullptr) {
    Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, math);
    if (axis >= 0) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw.finalize(fmt::format("pointwise mode {}", int(mode)));
    Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw).set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t != nullptr) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).finalize(fmt::format("pointwise operation {}", int(mode)));
    keep(std::move(pw));
    ops_.push_back(std::move(op));
    return y;
  }

  const Desc& gen_index(const Desc& x, int64_t axis, const Desc& y) {
    return pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, x, nullptr, y, axis);
  }

  // y = t ? x : b.
  const Desc& select(const Desc& x, const Desc& b, const Desc& t, const Desc& y) {
    return pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, x, &b, y, -1, &t);
  }

  void reduce(cudnnReduceTensorOp_t mode, const Desc& x, const Desc& y) {
    Desc r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT)
        .finalize("reduction");
    Desc op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)
        .finalize("reduction operation");
    keep(std::move(r));
    ops_.push_back(std::move(op));
  }

  void keep(Desc&& d) { keep_.push_back(std::move(d)); }

  bool finalize_configs(const Desc& graph, cudnnBackendHeurMode_t mode, Plan& plan) {
    const CudnnApi& api = cudnn_api();
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode)
        .finalize("engine heuristics");
    int64_t count = 0;
    check(api.get_attribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
          "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS count)");
    if (count <= 0) return false;
    std::vector<Desc> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(configs.back().get());
    }
    int64_t returned = 0;
    check(api.get_attribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                            raw.data()),
          "cudnnBackendGetAttribute(ENGINEHEUR_RESULTS)");
    for (int64_t i = 0; i < returned && static_cast<int64_t>(plan.candidates.size()) < kMaxCandidates; ++i) {
      Candidate c;
      c.plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      c.plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle_)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[static_cast<size_t>(i)]);
      if (api.finalize(c.plan->get()) != CUDNN_STATUS_SUCCESS) continue;
      int64_t n = 0;
      check(api.get_attribute(c.plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                              &c.workspace),
            "cudnnBackendGetAttribute(EXECUTION_PLAN_WORKSPACE_SIZE)");
      c.engine = engine_index(configs[static_cast<size_t>(i)]);
      plan.candidates.push_back(std::move(c));
    }
    if (plan.candidates.empty()) return false;
    for (Desc& cfg : configs) plan.owned.push_back(std::make_unique<Desc>(std::move(cfg)));
    plan.owned.push_back(std::make_unique<Desc>(std::move(heur)));
    return true;
  }

  // The global index of the engine behind `config`, or -1 when cuDNN does not say.
  static int64_t engine_index(const Desc& config) {
    const CudnnApi& api = cudnn_api();
    try {
      Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      cudnnBackendDescriptor_t raw = engine.get();
      int64_t n = 0, index = -1;
      if (api.get_attribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &raw) !=
          CUDNN_STATUS_SUCCESS)
        return -1;
      if (api.get_attribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index) != CUDNN_STATUS_SUCCESS)
        return -1;
      return index;
    } catch (const Declined&) {
      return -1;
    }
  }

  const Problem& p_;
  cudnnHandle_t handle_;
  std::vector<std::unique_ptr<Desc>> tensors_;  // stable addresses: ops refer to them
  std::vector<Desc> ops_;
  std::vector<Desc> keep_;  // the ops' pointwise, matmul and reduction descriptors
};

struct Entry {
  std::unique_ptr<Plan> plan;  // null when declined
  std::string reason;
};

struct State {
  std::mutex mu;
  std::map<int, cudnnHandle_t> handles;
  std::map<Problem, Entry> problems;
};

State& state() {
  static State* s = new State;
  return *s;
}

cudnnHandle_t handle_for(State& st, int device) {
  auto it = st.handles.find(device);
  if (it != st.handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  if (const cudnnStatus_t s = cudnn_api().create(&h); s != CUDNN_STATUS_SUCCESS) throw Declined{cudnn_describe(s, "cudnnCreate")};
  st.handles.emplace(device, h);
  return h;
}

// Which graph form is tried first: FK_CUDNN_ATTENTION_FORM=plain (no row statistics) or
// stats (the default); the other is the fallback. Read once.
bool stats_form_first() {
  static const bool first = env_switch("FK_CUDNN_ATTENTION_FORM", "stats", "plain");
  return first;
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// Why cuDNN does not take `c` whatever its engines support, or "" when it may.
std::string static_decline(const AttentionCudnnCall& c) {
  const CudnnLibrary& lib = cudnn_library();
  if (!lib.usable()) return lib.error;
  if (c.elem == launch::Elem::kF32) return "fp32 data (cuDNN's fused attention takes fp16 and bf16)";
  if (c.softcap > 0.f) return "soft-capping is not in the cuDNN graph";
  if (!c.causal && c.window > 0) return "a bidirectional sliding window (the cuDNN graph's band is causal)";
  if (c.q_len < 2) return "a single query position (the decode kernels take it)";
  if (c.head_dim % 8 != 0 || c.head_dim > 256) return fmt::format("head size {} (needs a multiple of 8, <= 256)", c.head_dim);
  if (!aligned16(c.out) || !aligned16(c.query) || !aligned16(c.key_cache) || !aligned16(c.value_cache))
    return "a tensor is not 16-byte aligned";
  if (c.q_heads % c.kv_heads != 0) return "query heads are not a multiple of KV heads";
  const int64_t skv = c.q_start + c.q_len;
  if (c.batch * c.q_heads * c.q_len > std::numeric_limits<int32_t>::max() || skv > std::numeric_limits<int32_t>::max())
    return "the problem exceeds 32-bit indices";
  return "";
}

void cuda_check(cudaError_t e, std::string_view call) {
  if (e != cudaSuccess)
    fail(ErrorKind::kRuntime, "attention (cuDNN): {} failed: {} ({})", call, cudaGetErrorName(e), cudaGetErrorString(e));
}

// Enqueues one execution of `exec` on `stream`, its workspace stream-ordered around it.
// Throws fk::Error(kRuntime) naming the failed call.
void execute(cudnnHandle_t handle, const Desc& exec, int64_t workspace_bytes, const std::vector<int64_t>& uids,
             std::vector<void*>& pointers, cudaStream_t stream) {
  const CudnnApi& api = cudnn_api();
  const auto runtime_check = [](cudnnStatus_t s, std::string_view call) {
    if (s != CUDNN_STATUS_SUCCESS) fail(ErrorKind::kRuntime, "attention (cuDNN): {}", cudnn_describe(s, call));
  };
  void* workspace = nullptr;
  if (workspace_bytes > 0) cuda_check(scratch_alloc(&workspace, static_cast<size_t>(workspace_bytes), stream), "cudaMallocAsync");
  try {
    Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(), static_cast<int64_t>(uids.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
             static_cast<int64_t>(pointers.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace)
        .finalize("variant pack");
    runtime_check(api.set_stream(handle, stream), "cudnnSetStream");
    runtime_check(api.execute(handle, exec.get(), pack.get()), "cudnnBackendExecute");
  } catch (const Declined& e) {
    if (workspace != nullptr) scratch_free(workspace, stream);
    fail(ErrorKind::kRuntime, "attention (cuDNN): {}", e.reason);
  } catch (...) {
    if (workspace != nullptr) scratch_free(workspace, stream);
    throw;
  }
  if (workspace != nullptr) cuda_check(scratch_free(workspace, stream), "cudaFreeAsync");
}

// FK_CUDNN_AUTOTUNE=0 takes the heuristics' first configuration without timing. Read once.
bool autotune() {
  static const bool on = env_switch("FK_CUDNN_AUTOTUNE", "1", "0");
  return on;
}

// Sets plan.plan to the fastest of plan.candidates on this call's buffers: each runs
// once, then kTuneRuns times between two events on `stream` (the output is written,
// the inputs only read; the call's own execution follows). One candidate, or
// FK_CUDNN_AUTOTUNE=0: the first. A candidate whose execution fails is left out; when
// all fail, the first one's error is thrown. Outside stream capture only (a problem is
// planned only there).
void choose(Plan& plan, cudnnHandle_t handle, std::vector<void*>& pointers, cudaStream_t stream) {
  constexpr int kTuneRuns = 3;
  size_t best = 0;
  std::string tuning;
  if (plan.candidates.size() > 1 && autotune()) {
    const EventPair ev;
    float best_ms = std::numeric_limits<float>::infinity();
    std::string first_error;
    for (size_t i = 0; i < plan.candidates.size(); ++i) {
      const Candidate& cand = plan.candidates[i];
      float ms = 0;
      try {
        execute(handle, *cand.plan, cand.workspace, plan.uids, pointers, stream);
        cuda_check(cudaEventRecord(ev.start, stream), "cudaEventRecord");
        for (int r = 0; r < kTuneRuns; ++r) execute(handle, *cand.plan, cand.workspace, plan.uids, pointers, stream);
        cuda_check(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
        ms = ev.elapsed_ms();
      } catch (const Error& e) {
        if (first_error.empty()) first_error = e.what();
        tuning += fmt::format("{}engine {}: failed", tuning.empty() ? "" : ", ", cand.engine);
        continue;
      }
      ms /= kTuneRuns;
      tuning += fmt::format("{}engine {}: {:.1f} us", tuning.empty() ? "" : ", ", cand.engine, 1e3 * ms);
      if (ms < best_ms) best_ms = ms, best = i;
    }
    if (!std::isfinite(best_ms)) fail(ErrorKind::kRuntime, "{}", first_error);
    tuning = fmt::format("fastest of {} configurations ({})", plan.candidates.size(), tuning);
  } else {
    tuning = plan.candidates.size() == 1 ? "the one configuration offered"
                                         : fmt::format("the first of {} configurations (FK_CUDNN_AUTOTUNE=0)",
                                                       plan.candidates.size());
  }
  Candidate& chosen = plan.candidates[best];
  plan.plan = std::move(chosen.plan);
  plan.workspace = chosen.workspace;
  plan.engine = chosen.engine;
  plan.tuning = std::move(tuning);
  plan.candidates.clear();
}

}  // namespace

AttentionCudnnOutcome attention_cudnn(const AttentionCudnnCall& c, cudaStream_t stream) {
  if (c.batch == 0 || c.q_heads == 0) return {false, "empty problem"};
  if (std::string why = static_decline(c); !why.empty()) return {false, std::move(why)};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return {false, "no current CUDA device"};
  }
  const Problem p{device,      c.elem,   c.batch,    c.cache_len, c.q_len, c.q_start,
                  c.q_heads,   c.kv_heads, c.head_dim, c.causal,  c.causal ? c.window : 0};

  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.problems.find(p);
  if (it == st.problems.end()) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
      cudaGetLastError();
      return {false, "cannot query the stream's capture status"};
    }
    if (capture != cudaStreamCaptureStatusNone) return {false, "first seen during stream capture (not planned)"};
    Entry entry;
    try {
      const bool stats_first = stats_form_first();
      GraphBuilder builder(p, handle_for(st, device));
      std::string first;
      try {
        entry.plan = builder.build(stats_first);
      } catch (const Declined& e) {
        first = e.reason;
      }
      if (!entry.plan) {
        GraphBuilder other(p, handle_for(st, device));
        try {
          entry.plan = other.build(!stats_first);
        } catch (const Declined& e) {
          entry.reason = stats_first ? fmt::format("with row statistics: {}; without: {}", first, e.reason)
                                     : fmt::format("without row statistics: {}; with: {}", first, e.reason);
        }
      }
    } catch (const Declined& e) {
      entry.reason = e.reason;
    }
    it = st.problems.emplace(p, std::move(entry)).first;
  }
  Entry& entry = it->second;
  if (!entry.plan) return {false, entry.reason};
  Plan& plan = *entry.plan;

  const float scale = c.scale;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int32_t shift = static_cast<int32_t>(c.q_start);
  const int32_t left = static_cast<int32_t>(c.window - c.q_start);
  std::vector<void*> pointers;
  for (const int64_t uid : plan.uids) {
    switch (uid) {
      case kQ: pointers.push_back(const_cast<void*>(c.query)); break;
      case kK: pointers.push_back(const_cast<void*>(c.key_cache)); break;
      case kV: pointers.push_back(const_cast<void*>(c.value_cache)); break;
      case kO: pointers.push_back(c.out); break;
      case kScale: pointers.push_back(const_cast<float*>(&scale)); break;
      case kNegInf: pointers.push_back(const_cast<float*>(&neg_inf)); break;
      case kShift: pointers.push_back(const_cast<int32_t*>(&shift)); break;
      case kLeft: pointers.push_back(const_cast<int32_t*>(&left)); break;
      default: fail(ErrorKind::kInternal, "attention (cuDNN): unbound tensor uid {}", uid);
    }
  }
  const cudnnHandle_t handle = handle_for(st, device);
  if (!plan.plan) {  // the problem's first call (outside capture: planned just now)
    try {
      choose(plan, handle, pointers, stream);
    } catch (const Error& e) {
      entry.reason = fmt::format("no configuration ran: {}", e.what());
      entry.plan.reset();  // later calls decline with the reason
      throw;
    }
  }
  execute(handle, *plan.plan, plan.workspace, plan.uids, pointers, stream);
  return {true, ""};
}

std::vector<std::string> attention_cudnn_plans() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  std::vector<std::string> out;
  for (const auto& [p, e] : st.problems) {
    if (e.plan)
      out.push_back(fmt::format("{}: cudnn engine {} ({} row statistics), workspace {} B, {}", p.describe(),
                                e.plan->engine, e.plan->stats ? "with" : "without", e.plan->workspace,
                                e.plan->plan ? e.plan->tuning : "not yet chosen"));
    else
      out.push_back(fmt::format("{}: declined: {}", p.describe(), e.reason));
  }
  return out;
}

}  // namespace fk::cuda
