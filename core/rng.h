// Counter-based random numbers: a value depends only on (seed, stream name, index).
//
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel Random Numbers: As Easy as
// 1, 2, 3", SC'11). The 64-bit key comes from the seed and the tensor's name; the
// counter is the element's index in the *global* (unsharded) tensor. So any rank,
// in any order, on any backend, regenerates exactly the same values, and a tensor-
// parallel shard is generated without materialising the full tensor.
//
// uniform() is computed with integer arithmetic and one exact scaling, so it is
// bit-identical everywhere (host or device). normal() uses Box-Muller and so depends
// on the platform's log/cos to the last bit; weights and inputs use uniform().
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace fk {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

class RngStream {
 public:
  RngStream(uint64_t seed, std::string_view name);
  explicit RngStream(uint64_t key) : key_(key) {}

  uint64_t key() const { return key_; }
  // Four raw 32-bit words for element `index` (lane = which sub-stream).
  std::array<uint32_t, 4> raw(uint64_t index, uint32_t lane = 0) const;
  // Uniform in [0, 1) with 24 random bits (exactly representable in fp32).
  float uniform01(uint64_t index) const;
  // Uniform in [lo, hi): lo + (hi - lo) * uniform01, in fp32.
  float uniform(uint64_t index, float lo, float hi) const;
  // Standard normal (Box-Muller on two 32-bit words). Platform-dependent last bits.
  double normal(uint64_t index) const;

 private:
  uint64_t key_;
};

// Describes where a shard sits inside its global tensor (row-major, per dimension).
struct ShardBox {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offset;  // start of the shard in each dimension
  std::vector<int64_t> extent;  // shard size in each dimension
  static ShardBox whole(std::vector<int64_t> shape);
  int64_t numel() const;
};

// Fills `out` (row-major, box.numel() elements) with uniform values in [lo, hi)
// drawn at the global indices of the box's elements.
void rng_fill_uniform(const RngStream& rng, const ShardBox& box, float lo, float hi,
                      std::span<float> out);

}  // namespace fk
