#include "results/h5/storage_policy.h"

#include <algorithm>

namespace fk::h5 {

bool storage_compress_array(size_t bytes) { return bytes >= kCompressMinBytes; }

std::vector<uint64_t> storage_array_chunk(const std::vector<uint64_t>& shape, size_t element_size) {
  std::vector<uint64_t> chunk = shape;
  auto bytes = [&] {
    uint64_t total = element_size;
    for (uint64_t d : chunk) total *= d;
    return total;
  };
  while (bytes() > kChunkTargetBytes) {
    auto longest = std::max_element(chunk.begin(), chunk.end());
    if (longest == chunk.end() || *longest <= 1) break;
    *longest = (*longest + 1) / 2;
  }
  return chunk;
}

uint64_t storage_table_chunk_rows(uint64_t rows, size_t row_size) {
  const uint64_t by_bytes = std::max<uint64_t>(1, kTableChunkBytes / std::max<size_t>(row_size, 1));
  return std::max<uint64_t>(1, std::min(by_bytes, std::max(rows, kTableMinChunkRows)));
}

}  // namespace fk::h5
