#include "core/hash.h"

#include <bit>
#include <fmt/format.h>

namespace fk {

Hasher& Hasher::bytes(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    state_ ^= p[i];
    state_ *= 1099511628211ull;
  }
  return *this;
}

Hasher& Hasher::str(std::string_view s) {
  u64(s.size());
  return bytes(s.data(), s.size());
}

Hasher& Hasher::u64(uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  return bytes(b, 8);
}

Hasher& Hasher::f64(double v) { return u64(std::bit_cast<uint64_t>(v)); }

std::string Hasher::hex(int digits) const {
  std::string full = fmt::format("{:016x}", state_);
  if (digits >= 16 || digits <= 0) return full;
  return full.substr(0, static_cast<size_t>(digits));
}

}  // namespace fk
