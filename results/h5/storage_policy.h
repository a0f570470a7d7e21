// How fk::h5 lays datasets out on disk: when to chunk and compress, and chunk sizes.
//
// N-D arrays: stored contiguous (uncompressed) below kCompressMinBytes (64 KiB) of
// raw data, so small arrays cost nothing to write or read; at or above it they are
// chunked, byte-shuffled and gzip-compressed (level kDeflateLevel), with chunks of
// about kChunkTargetBytes (256 KiB, under HDF5's default 1 MiB chunk cache) made by
// halving the longest dimension. Zero-element arrays are always contiguous.
// Tables: always chunked with an unlimited row dimension (so rows can be appended),
// shuffled and gzip-compressed; a chunk holds about kTableChunkBytes (64 KiB) of rows,
// at least one, and no more than max(rows, kTableMinChunkRows) so small tables stay small.
// gzip is used only where the HDF5 library has the deflate filter (Debian's does);
// without it the same layouts are written uncompressed. Every chunked dataset also
// carries the Fletcher32 checksum filter (detail/dcpl.h). Pure functions: no HDF5.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fk::h5 {

inline constexpr size_t kCompressMinBytes = size_t{64} << 10;
inline constexpr size_t kChunkTargetBytes = size_t{256} << 10;
inline constexpr size_t kTableChunkBytes = size_t{64} << 10;
inline constexpr uint64_t kTableMinChunkRows = 64;
inline constexpr unsigned kDeflateLevel = 4;

// True when an array of `bytes` raw bytes is chunked and compressed.
bool storage_compress_array(size_t bytes);

// Chunk dimensions for a chunked array of `shape` (all > 0) and `element_size` bytes:
// each chunk dimension is in [1, shape[i]] and the chunk holds at most
// kChunkTargetBytes unless a single element is larger.
std::vector<uint64_t> storage_array_chunk(const std::vector<uint64_t>& shape, size_t element_size);

// Rows per chunk of a table with `rows` rows of `row_size` bytes (row_size > 0); >= 1.
uint64_t storage_table_chunk_rows(uint64_t rows, size_t row_size);

}  // namespace fk::h5
