#include "runner/model/checkpoint_weights.h"

#include "core/error.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using spec::Architecture;

std::string shape_str(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// The shape without its interior dimensions of size 1: a depthwise conv's [C, 1, W]
// weight is the [C, W] matrix the model holds (a tensor is read as rows of its last
// dimension, core/safetensors.h).
std::vector<int64_t> squeezed(const std::vector<int64_t>& s) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.size(); ++i)
    if (i == 0 || i + 1 == s.size() || s[i] != 1) out.push_back(s[i]);
  return out;
}

// Rows [r0, r0 + nr) of an interleaved canonical tensor (TensorRef::group), each run
// of rows within one group read by read(fused first row, count) as [count, width]
// (width 1 with count elements for a vector), laid end to end.
template <typename Read>
Tensor interleaved(const TensorRef& ref, int64_t r0, int64_t nr, int64_t width, Read&& read) {
  Tensor out = Tensor::empty(DType::kF32, width == 1 ? Shape{nr} : Shape{nr, width});
  float* o = out.data_as<float>();
  for (int64_t r = r0; r < r0 + nr;) {
    const int64_t in_group = r % ref.group, n = std::min(ref.group - in_group, r0 + nr - r);
    const Tensor part = read((r / ref.group) * ref.stride + ref.offset + in_group, n);
    std::memcpy(o + (r - r0) * width, part.data(), part.nbytes());
    r += n;
  }
  return out;
}

}  // namespace

CheckpointWeights::CheckpointWeights(const std::string& path, const Architecture& arch, TensorMap map)
    : ckpt_(std::make_unique<Checkpoint>(path)), arch_(arch), map_(std::move(map)) {}

std::string CheckpointWeights::resolve(const std::string& canonical, const TensorRef& ref) const {
  std::vector<std::string> tried;
  for (const auto& p : map_.prefixes) {
    // GPT-2's lm_head sits outside "transformer."; try every prefix for every name.
    const std::string n = p + ref.name;
    if (ckpt_->has(n)) return n;
    tried.push_back("'" + n + "'");
  }
  fail(ErrorKind::kNotFound, "checkpoint {}: no tensor for {} of the {} model (looked for {})", ckpt_->path(), canonical,
       map_.model_type, fmt::join(tried, ", "));
}

Tensor CheckpointWeights::block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr,
                                int64_t c0, int64_t nc, float, float) const {
  const TensorRef ref = map_.locate(name, arch_);
  if (ref.per_row) return per_row_block(name, ref, cols, r0, nr, c0, nc);
  const std::string src = resolve(name, ref);
  const SafetensorsFile& f = ckpt_->file_of(src);
  const SafetensorsEntry& e = f.entry(src);
  auto mismatch = [&](const std::string& expected) {
    fail(ErrorKind::kInvalidArgument, "checkpoint {}: tensor '{}' (for {}) is {} {}, but the architecture ({}) needs {}",
         ckpt_->path(), src, name, shape_str(e.shape), safetensors_dtype_name(e.dtype),
         arch_.name.empty() ? arch_.model_type : arch_.name, expected);
  };
  if (!dtype_is_float(e.dtype)) mismatch("a float tensor (F32, F16 or BF16)");
  if (ref.stack > 0 && ((rows == 1 && e.shape.size() == 2) || ref.transpose))
    return stacked_block(name, src, ref, rows == 1, cols, r0, nr, c0, nc);
  if (rows == 1 && e.shape.size() == 1) {  // a vector (norm weight, bias)
    const int64_t want = ref.total > 0 ? ref.total : cols;
    if (e.shape.size() != 1 || e.shape[0] != want) mismatch(shape_str({want}));
    if (ref.group > 0)
      return interleaved(ref, c0, nc, 1, [&](int64_t at, int64_t n) { return f.read_block(src, 0, 1, at, n); });
    return f.read_block(src, 0, 1, ref.offset + c0, nc);
  }
  const int64_t out_rows = ref.total > 0 ? ref.total : rows;
  if (ref.reshaped) {  // the same elements in other dimensions, read as rows of the last
    int64_t numel = 1;
    for (int64_t d : e.shape) numel *= d;
    const int64_t last = e.shape.empty() ? 0 : e.shape.back();
    if (ref.total > 0 || ref.transpose || ref.group > 0 || numel != out_rows * cols || last <= 0 || cols % last != 0 ||
        (last != cols && (e.shape.front() != out_rows || c0 != 0 || nc != cols)))
      mismatch(fmt::format("{} elements, [{}, {}] in row-major order", out_rows * cols, out_rows, cols));
    if (last == cols) return f.read_block(src, r0, nr, c0, nc);
    const int64_t per = cols / last;  // stored rows of the last dimension in one of ours
    return f.read_block(src, r0 * per, nr * per, 0, last).reshape({nr, cols});
  }
  if (ref.stack > 0) {  // [stack, rows, cols] stored, read as [stack * rows, cols]
    const std::vector<int64_t> want = {ref.stack, out_rows / ref.stack, cols};
    if (ref.transpose || ref.group > 0 || out_rows % ref.stack != 0 || e.shape != want) mismatch(shape_str(want));
    return f.read_block(src, ref.offset + r0, nr, c0, nc);
  }
  if (!ref.transpose) {
    const std::vector<int64_t> shape = squeezed(e.shape);
    if (shape.size() != 2 || shape[0] != out_rows || shape[1] != cols) mismatch(shape_str({out_rows, cols}));
    if (ref.group > 0)
      return interleaved(ref, r0, nr, nc, [&](int64_t at, int64_t n) { return f.read_block(src, at, n, c0, nc); });
    return f.read_block(src, ref.offset + r0, nr, c0, nc);
  }
  if (ref.group > 0) mismatch("a fused tensor stored [out, in] (interleaved rows)");
  // Stored [in, out]: our rows are its columns.
  if (e.shape.size() != 2 || e.shape[0] != cols || e.shape[1] != out_rows)
    mismatch(shape_str({cols, out_rows}) + " (stored transposed, [in, out])");
  const Tensor t = f.read_block(src, c0, nc, ref.offset + r0, nr);  // [nc, nr]
  Tensor out = Tensor::empty(DType::kF32, {nr, nc});
  const float* in = t.data_as<float>();
  float* o = out.data_as<float>();
  for (int64_t i = 0; i < nc; ++i)
    for (int64_t j = 0; j < nr; ++j) o[j * nc + i] = in[i * nr + j];
  return out;
}

// A stacked tensor read through transposed or vector views (TensorRef::stack): canonical
// index i (a row of a matrix, an element of a vector) is fused index R (offset + i, or
// interleaved), which is element R % per of stack entry R / per. The indices of one
// entry are read as one block spanning their columns, then picked.
Tensor CheckpointWeights::stacked_block(const std::string& name, const std::string& src, const TensorRef& ref,
                                        bool vector, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                                        int64_t nc) const {
  const SafetensorsFile& f = ckpt_->file_of(src);
  const SafetensorsEntry& e = f.entry(src);
  const int64_t total = ref.total, per = ref.stack > 0 && total % ref.stack == 0 ? total / ref.stack : 0;
  const std::vector<int64_t> want =
      vector ? std::vector<int64_t>{ref.stack, per} : std::vector<int64_t>{ref.stack, cols, per};
  if (per == 0 || e.shape != want)
    fail(ErrorKind::kInvalidArgument, "checkpoint {}: tensor '{}' (for {}) is {}, but the architecture ({}) needs {}{}",
         ckpt_->path(), src, name, shape_str(e.shape), arch_.name.empty() ? arch_.model_type : arch_.name,
         shape_str(want), vector ? "" : " (stored transposed, [experts, in, out])");
  // The canonical indices asked for: elements c0.. of a vector, rows r0.. of a matrix.
  const int64_t first = vector ? c0 : r0, count = vector ? nc : nr, width = vector ? 1 : nc;
  std::vector<int64_t> fused(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = first + i;
    fused[static_cast<size_t>(i)] =
        ref.group > 0 ? (r / ref.group) * ref.stride + ref.offset + r % ref.group : ref.offset + r;
  }
  const auto at = [&](int64_t i) { return fused[static_cast<size_t>(i)]; };
  Tensor out = Tensor::empty(DType::kF32, vector ? Shape{count} : Shape{count, width});
  float* o = out.data_as<float>();
  for (int64_t i = 0; i < count;) {
    const int64_t x = at(i) / per;
    int64_t end = i, lo = per, hi = -1;
    for (; end < count && at(end) / per == x; ++end) {
      lo = std::min(lo, at(end) % per);
      hi = std::max(hi, at(end) % per);
    }
    const int64_t span = hi - lo + 1;
    // [1, span] of entry x, or [nc, span]: rows c0.. of entry x's [cols, per] matrix.
    const Tensor t = vector ? f.read_block(src, x, 1, lo, span) : f.read_block(src, x * cols + c0, nc, lo, span);
    const float* in = t.data_as<float>();
    for (int64_t k = i; k < end; ++k) {
      const int64_t j = at(k) % per - lo;
      for (int64_t c = 0; c < width; ++c) o[k * width + c] = in[c * span + j];
    }
    i = end;
  }
  return out;
}

Tensor CheckpointWeights::per_row_block(const std::string& name, const TensorRef& ref, int64_t cols, int64_t r0,
                                        int64_t nr, int64_t c0, int64_t nc) const {
  const size_t at = ref.name.find("{}");
  if (at == std::string::npos || ref.transpose || ref.group > 0 || ref.stack > 0 || ref.total > 0)
    fail(ErrorKind::kInternal, "checkpoint map of {}: a per-row tensor of {} must name '{{}}' and nothing else", name,
         map_.model_type);
  Tensor out = Tensor::empty(DType::kF32, {nr, nc});
  for (int64_t r = r0; r < r0 + nr; ++r) {
    TensorRef row = ref;
    row.name = ref.name.substr(0, at) + std::to_string(r) + ref.name.substr(at + 2);
    const std::string src = resolve(name, row);
    const SafetensorsEntry& e = ckpt_->file_of(src).entry(src);
    if (!dtype_is_float(e.dtype) || e.shape != std::vector<int64_t>{cols})
      fail(ErrorKind::kInvalidArgument,
           "checkpoint {}: tensor '{}' (row {} of {}) is {} {}, but the architecture ({}) needs {} (a float tensor)",
           ckpt_->path(), src, r, name, shape_str(e.shape), safetensors_dtype_name(e.dtype),
           arch_.name.empty() ? arch_.model_type : arch_.name, shape_str({cols}));
    const Tensor part = ckpt_->file_of(src).read_block(src, 0, 1, c0, nc);
    std::memcpy(out.data_as<float>() + (r - r0) * nc, part.data(), part.nbytes());
  }
  return out;
}

}  // namespace fk::runner
