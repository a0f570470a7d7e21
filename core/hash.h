// Stable content hashes for ids and cache keys.
//
// FNV-1a (64-bit; offset basis 14695981039346656037, prime 1099511628211, as
// published by Fowler, Noll and Vo). The value depends only on the bytes given, so
// ids derived from it are stable across runs, hosts and builds. Not cryptographic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fk {

class Hasher {
 public:
  Hasher& bytes(const void* data, size_t n);
  Hasher& str(std::string_view s);  // length-prefixed, so ("ab","c") != ("a","bc")
  Hasher& u64(uint64_t v);
  Hasher& f64(double v);
  uint64_t digest() const { return state_; }
  // Lower-case hex of the digest, `digits` long (<= 16).
  std::string hex(int digits = 16) const;

 private:
  uint64_t state_ = 14695981039346656037ull;
};

inline uint64_t hash_string(std::string_view s) { return Hasher().str(s).digest(); }

// splitmix64 finaliser (Steele, Lea, Flood 2014): mixes a 64-bit value.
inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace fk
