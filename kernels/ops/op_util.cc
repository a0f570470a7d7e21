#include "kernels/ops/op_util.h"

#include "core/hash.h"

#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace fk::kernels::util {

std::string check_tensor(const OpCall& call, const OpDef& def, size_t index, int64_t rank,
                         std::initializer_list<DType> dtypes) {
  if (index >= call.args.size()) return fmt::format("{}: missing argument {}", def.name, index);
  const Tensor& t = call.args[index];
  const ArgSpec& spec = def.args[index];
  if (!t.defined()) return spec.optional ? "" : fmt::format("{}: argument '{}' is missing", def.name, spec.name);
  if (spec.optional && t.numel() == 0) return "";
  if (t.dim() != rank)
    return fmt::format("{}: '{}' has shape {}, expected {} dimensions", def.name, spec.name, shape_string(t.shape()),
                       rank);
  bool ok = false;
  for (DType d : dtypes) ok |= d == t.dtype();
  if (!ok) return fmt::format("{}: '{}' has dtype {}", def.name, spec.name, dtype_name(t.dtype()));
  if (!t.is_contiguous()) return fmt::format("{}: '{}' must be contiguous", def.name, spec.name);
  return "";
}

std::string check_dim(const OpCall& call, const OpDef& def, size_t a, int64_t d, int64_t expected, const char* what) {
  const Tensor& t = call.args[a];
  if (t.size(d) == expected) return "";
  return fmt::format("{}: '{}' dimension {} is {}, expected {} ({})", def.name, def.args[a].name, d, t.size(d),
                     expected, what);
}

std::string check_same_dtype(const OpCall& call, const OpDef& def) {
  std::optional<DType> seen;
  for (size_t i = 0; i < call.args.size() && i < def.args.size(); ++i) {
    if (!def.args[i].float_typed || def.args[i].own_dtype || !present(call.args[i])) continue;
    if (!seen) seen = call.args[i].dtype();
    else if (*seen != call.args[i].dtype())
      return fmt::format("{}: '{}' is {} but other arguments are {}", def.name, def.args[i].name,
                         dtype_name(call.args[i].dtype()), dtype_name(*seen));
  }
  return "";
}

std::string first_error(std::initializer_list<std::string> messages) {
  for (const auto& m : messages)
    if (!m.empty()) return m;
  return "";
}

Tensor uniform(DType dtype, Shape shape, const RngStream& rng, const std::string& name, float lo, float hi) {
  const RngStream sub(mix64(rng.key() ^ hash_string(name)));
  Tensor out = Tensor::empty(dtype, shape);
  // Element i is sub.uniform(i) rounded once to dtype (rng_fill_uniform's values),
  // drawn in parallel chunks: a full-size weight (500M elements) is a second, not a minute.
  constexpr int64_t kChunk = int64_t{1} << 16;
  const int64_t n = out.numel(), chunks = (n + kChunk - 1) / kChunk;
  const size_t es = dtype_size(dtype);
  char* dst = static_cast<char*>(out.data());
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) v[static_cast<size_t>(i)] = sub.uniform(static_cast<uint64_t>(begin + i), lo, hi);
    dtype_convert(v.data(), DType::kF32, dst + static_cast<size_t>(begin) * es, dtype, static_cast<size_t>(count));
  }
  return out;
}

Tensor uniform_ints(Shape shape, const RngStream& rng, const std::string& name, int64_t lo, int64_t hi) {
  const RngStream sub(mix64(rng.key() ^ hash_string(name)));
  Tensor t = Tensor::empty(DType::kI64, shape);
  auto* p = t.data_as<int64_t>();
  const uint64_t span = static_cast<uint64_t>(hi - lo);
#pragma omp parallel for schedule(static) if (t.numel() > 65536)
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto r = sub.raw(static_cast<uint64_t>(i));
    const uint64_t v = (static_cast<uint64_t>(r[0]) << 32) | r[1];
    p[i] = lo + static_cast<int64_t>(v % span);
  }
  return t;
}

double bytes_of(const OpCall& call) {
  double b = 0;
  for (const auto& t : call.args)
    if (t.defined()) b += static_cast<double>(t.nbytes());
  return b;
}

}  // namespace fk::kernels::util
