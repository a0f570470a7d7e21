#include "runner/model/weight_plan.h"

#include "runner/heartbeat.h"

#include <cmath>
#include <cstring>

namespace fk::runner {

Planned plan_block(const std::string& name, int64_t rows_total, int64_t cols_total, int64_t r0, int64_t nr, int64_t c0,
                   int64_t nc, float lo, float hi, float add) {
  return Planned{{nr, nc}, {WeightPiece{name, rows_total, cols_total, r0, nr, c0, nc, lo, hi, add, 0}}};
}

Planned plan_vector(const std::string& name, int64_t total, int64_t begin, int64_t count, float lo, float hi,
                    float add) {
  Planned p = plan_block(name, 1, total, 0, 1, begin, count, lo, hi, add);
  p.shape = {count};
  return p;
}

Planned plan_concat(const std::vector<Planned>& parts, Shape shape) {
  Planned out{std::move(shape), {}};
  int64_t at = 0;
  for (const auto& p : parts) {
    for (WeightPiece piece : p.pieces) {
      piece.at += at;
      out.pieces.push_back(std::move(piece));
    }
    at += p.numel();
  }
  return out;
}

Planned plan_concat_rows(const std::vector<Planned>& parts) {
  int64_t rows = 0;
  for (const auto& p : parts) rows += p.shape[0];
  return plan_concat(parts, {rows, parts.empty() ? 0 : parts[0].shape[1]});
}

Planned plan_concat_vectors(const std::vector<Planned>& parts) {
  int64_t n = 0;
  for (const auto& p : parts) n += p.numel();
  return plan_concat(parts, {n});
}

Planned plan_vocab_block(const spec::Architecture& a, const Placement& pl, const std::string& name, float bound) {
  const int64_t n = pl.vocab_rows(a), h = a.hidden_size;
  Planned p{{pl.vocab_block(a), h}, {}};
  if (n > 0) p.pieces = plan_block(name, a.vocab_size, h, pl.vocab_begin(a), n, 0, h, -bound, bound).pieces;
  return p;
}

Planned plan_vocab_vector(const spec::Architecture& a, const Placement& pl, const std::string& name, float lo,
                          float hi) {
  const int64_t n = pl.vocab_rows(a);
  Planned p{{pl.vocab_block(a)}, {}};
  if (n > 0) p.pieces = plan_vector(name, a.vocab_size, pl.vocab_begin(a), n, lo, hi).pieces;
  return p;
}

float linear_bound(int64_t fan_in) { return static_cast<float>(std::sqrt(3.0 / static_cast<double>(fan_in))); }

namespace {

int64_t covered(const Planned& p) {
  int64_t n = 0;
  for (const auto& piece : p.pieces) n += piece.nr * piece.nc;
  return n;
}

Tensor host_values(const WeightSource& src, const Planned& p) {
  Tensor t = covered(p) < p.numel() ? Tensor::zeros(DType::kF32, p.shape) : Tensor::empty(DType::kF32, p.shape);
  if (p.fill != 0 && covered(p) < p.numel())
    for (float& v : t.span<float>()) v = p.fill;
  for (const auto& piece : p.pieces) {
    const Tensor b = src.values(piece);
    std::memcpy(t.data_as<float>() + piece.at, b.data(), b.nbytes());
  }
  return t;
}

}  // namespace

Tensor WeightMaker::operator()(const Planned& p) const {
  progress_tick();  // a large model's weights take a while to read
  if (src == nullptr) return Tensor::empty(dtype, p.shape);
  if (backend == nullptr) return host_values(*src, p);
  Tensor t = backend->empty(dtype, p.shape);
  if (covered(p) < p.numel()) {
    if (p.fill == 0) {
      backend->memset(t, 0);
    } else {  // a constant (a unit norm weight): small, made on the host
      Tensor c = Tensor::empty(DType::kF32, p.shape);
      for (float& v : c.span<float>()) v = p.fill;
      backend->upload(t, c.to_dtype(dtype));
    }
  }
  for (const auto& piece : p.pieces) src->fill(*backend, t, piece);
  return t;
}

namespace {

// `p`'s values in fp32, `transform` applied on the host first (when given), and rounded
// to `round_to` (when not fp32) before the upload to m's backend (none: the host tensor).
Tensor fp32_made(const WeightMaker& m, const Planned& p, float (*transform)(float), DType round_to) {
  progress_tick();
  if (m.src == nullptr) return Tensor::empty(DType::kF32, p.shape);
  Tensor t = host_values(*m.src, p);
  if (transform != nullptr)
    for (float& v : t.span<float>()) v = transform(v);
  if (m.backend == nullptr) return t;
  if (round_to != DType::kF32) t = t.to_dtype(round_to).to_dtype(DType::kF32);
  Tensor d = m.backend->empty(DType::kF32, p.shape);
  m.backend->upload(d, t);
  return d;
}

}  // namespace

Tensor WeightMaker::fp32_in_dtype(const Planned& p) const { return fp32_made(*this, p, nullptr, dtype); }

Tensor WeightMaker::fp32(const Planned& p, float (*transform)(float)) const {
  return fp32_made(*this, p, transform, DType::kF32);
}

}  // namespace fk::runner
