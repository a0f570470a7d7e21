#include "runner/model/weight_source.h"

#include "core/rng.h"

namespace fk::runner {

Tensor WeightSource::values(const WeightPiece& p) const {
  Tensor b = block(p.name, p.rows_total, p.cols_total, p.r0, p.nr, p.c0, p.nc, p.lo, p.hi);
  if (p.add != 0)
    for (float& v : b.span<float>()) v += p.add;
  return b;
}

void WeightSource::fill(kernels::Backend& backend, const Tensor& dst, const WeightPiece& p) const {
  const Tensor b = values(p);
  backend.upload(dst.reshape({dst.numel()}).slice(0, p.at, b.numel()),
                 dst.dtype() == DType::kF32 ? b.reshape({b.numel()}) : b.to_dtype(dst.dtype()).reshape({b.numel()}));
}

Tensor RandomWeights::block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                           int64_t nc, float lo, float hi) const {
  Tensor t = Tensor::empty(DType::kF32, {nr, nc});
  rng_fill_uniform(RngStream(seed_, name), ShardBox{{rows, cols}, {r0, c0}, {nr, nc}}, lo, hi, t.span<float>());
  return t;
}

void RandomWeights::fill(kernels::Backend& backend, const Tensor& dst, const WeightPiece& p) const {
  backend.fill_uniform(dst, p.at,
                       kernels::UniformBlock{RngStream(seed_, p.name).key(), p.cols_total, p.r0, p.nr, p.c0, p.nc, p.lo,
                                             p.hi, p.add});
}

}  // namespace fk::runner
