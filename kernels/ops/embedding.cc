// embedding (vocab-parallel, as vLLM's VocabParallelEmbedding): this rank holds rows
// [vocab_start, vocab_start + rows) of the table; out[t] = weight[ids[t] - vocab_start]
// when the id falls in that range, else zeros. Summing over TP ranks (all-reduce)
// gives the full lookup. Also used for learned positions and token types (one rank,
// vocab_start 0).
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <cstring>

namespace fk::kernels {
namespace {

enum { kOut, kIds, kWeight };

template <typename T>
void embedding_cpu(const OpCall& c) {
  const Tensor& ids = c.arg(kIds);
  const int64_t t = ids.numel(), h = c.arg(kWeight).size(1), rows = c.arg(kWeight).size(0);
  const int64_t start = c.iparam(0);
  const T* w = c.arg(kWeight).data_as<T>();
  T* out = c.arg(kOut).data_as<T>();
#pragma omp parallel for schedule(static) if (t * h > 65536)
  for (int64_t i = 0; i < t; ++i) {
    const int64_t id = cpu::load_index(ids.data(), ids.dtype(), i) - start;
    if (id >= 0 && id < rows) {
      std::memcpy(out + i * h, w + id * h, static_cast<size_t>(h) * sizeof(T));
    } else {
      for (int64_t j = 0; j < h; ++j) out[i * h + j] = cpu::store<T>(0.0f);
    }
  }
}

}  // namespace

void register_embedding(OpRegistry& reg) {
  OpDef d;
  d.name = "embedding";
  d.summary = "vocab-parallel embedding lookup (rows outside this rank's range give zeros)";
  d.args = {{"out", ArgRole::kOut}, {"ids", ArgRole::kIn, false}, {"weight", ArgRole::kIn}};
  d.params = {"vocab_start", "vocab_size"};  // vocab_size: the full table (range of ids)
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error({util::check_tensor(c, d, kIds, 1, {DType::kI64, DType::kI32}),
                                       util::check_tensor(c, d, kWeight, 2), util::check_tensor(c, d, kOut, 2),
                                       util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    return util::first_error({util::check_dim(c, d, kOut, 0, c.arg(kIds).size(0), "tokens"),
                              util::check_dim(c, d, kOut, 1, c.arg(kWeight).size(1), "hidden")});
  };
  d.reference = [](const OpCall& c) {
    const Tensor& ids = c.arg(kIds);
    const int64_t h = c.arg(kWeight).size(1), rows = c.arg(kWeight).size(0);
    const double* w = util::f64(c.arg(kWeight));
    double* out = util::f64(c.arg(kOut));
    for (int64_t i = 0; i < ids.numel(); ++i) {
      const int64_t id = cpu::load_index(ids.data(), ids.dtype(), i) - c.iparam(0);
      for (int64_t j = 0; j < h; ++j) out[i * h + j] = (id >= 0 && id < rows) ? w[id * h + j] : 0.0;
    }
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden"), rows = s.dim("rows");
    const auto vocab = static_cast<int64_t>(s.params.at(1));
    return OpCall{{util::output(dt, {t, h}), util::uniform_ints({t}, rng, "ids", 0, vocab),
                   util::uniform(dt, {rows, h}, rng, "weight", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kIds).numel()}, {"hidden", c.arg(kWeight).size(1)}, {"rows", c.arg(kWeight).size(0)}},
                   c.params};
  };
  d.flops = [](const OpCall&) { return 0.0; };
  d.bytes = [](const OpCall& c) {
    return 2.0 * static_cast<double>(c.arg(kOut).nbytes()) + static_cast<double>(c.arg(kIds).nbytes());
  };
  reg.add(d);
  reg.add_impl({"embedding", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kOut).dtype(), [&](auto tag) { embedding_cpu<decltype(tag)>(c); });
                }});
}

}  // namespace fk::kernels
