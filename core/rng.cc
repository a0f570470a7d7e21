#include "core/rng.h"

#include "core/error.h"
#include "core/hash.h"

#include <cmath>
#include <numbers>

namespace fk {
namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

}  // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kPhiloxM0, c[0], hi0, lo0);
    mulhilo(kPhiloxM1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kPhiloxW0;
    k[1] += kPhiloxW1;
  }
  return c;
}

RngStream::RngStream(uint64_t seed, std::string_view name)
    : key_(mix64(seed ^ mix64(hash_string(name)))) {}

std::array<uint32_t, 4> RngStream::raw(uint64_t index, uint32_t lane) const {
  return philox4x32({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), lane, 0u},
                    {static_cast<uint32_t>(key_), static_cast<uint32_t>(key_ >> 32)});
}

float RngStream::uniform01(uint64_t index) const {
  return static_cast<float>(raw(index)[0] >> 8) * 0x1.0p-24f;
}

float RngStream::uniform(uint64_t index, float lo, float hi) const {
  return lo + (hi - lo) * uniform01(index);
}

double RngStream::normal(uint64_t index) const {
  const auto r = raw(index);
  const double u1 = (static_cast<double>(r[0]) + 1.0) * 0x1.0p-32;  // (0, 1]
  const double u2 = static_cast<double>(r[1]) * 0x1.0p-32;          // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

ShardBox ShardBox::whole(std::vector<int64_t> shape) {
  ShardBox box;
  box.offset.assign(shape.size(), 0);
  box.extent = shape;
  box.global_shape = std::move(shape);
  return box;
}

int64_t ShardBox::numel() const {
  int64_t n = 1;
  for (int64_t e : extent) n *= e;
  return n;
}

void rng_fill_uniform(const RngStream& rng, const ShardBox& box, float lo, float hi,
                      std::span<float> out) {
  const size_t rank = box.global_shape.size();
  FK_ASSERT(box.offset.size() == rank && box.extent.size() == rank);
  FK_ASSERT(static_cast<int64_t>(out.size()) == box.numel());
  if (out.empty()) return;
  for (size_t d = 0; d < rank; ++d) {
    if (box.offset[d] < 0 || box.extent[d] < 0 || box.offset[d] + box.extent[d] > box.global_shape[d])
      fail(ErrorKind::kInternal, "shard box out of range in dimension {}", d);
  }
  std::vector<int64_t> gstride(rank, 1);
  for (size_t d = rank; d-- > 1;) gstride[d - 1] = gstride[d] * box.global_shape[d];
  if (rank == 0) {
    out[0] = rng.uniform(0, lo, hi);
    return;
  }
  // Walk the shard row by row: the last dimension is contiguous in the global index.
  const int64_t row = box.extent[rank - 1];
  const int64_t rows = box.numel() / row;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;
    for (size_t d = 0; d < rank; ++d) base += (box.offset[d] + idx[d]) * gstride[d];
    float* dst = out.data() + r * row;
    for (int64_t i = 0; i < row; ++i) dst[i] = rng.uniform(static_cast<uint64_t>(base + i), lo, hi);
    for (size_t d = rank - 1; d-- > 0;) {  // increment the row index over dims [0, rank-1)
      if (++idx[d] < box.extent[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace fk
