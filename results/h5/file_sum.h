// Whole-file checksums of the results files this layer writes.
//
// HDF5's own checksums (1.10-format metadata) leave raw data and the global heap
// (variable-length strings) unchecked (Fletcher32 is not used: dcpl.cc says why), so
// Writer also reserves a 512-byte HDF5 user block at the start of each file (HDF5
// and every reader skip it: the superblock follows at offset 512) and, once the file
// is closed, writes into it:
//
//   bytes 0..7    "FKSUM01\n"
//   bytes 8..15   file size, little-endian uint64
//   bytes 16..23  FNV-1a 64 (core/hash.h) of the whole file with these 8 bytes zeroed
//   bytes 24..511 zero
//
// A file that starts with the HDF5 signature has no user block (written before this
// format, or by another program) and cannot be checked this way.
#pragma once

#include <cstdint>
#include <string>

namespace fk::h5 {

inline constexpr uint64_t kFileSumBlock = 512;

// Writes the sum into the user block of the closed file at `path`. kIo on failure.
void file_sum_write(const std::string& path);

enum class FileSum { kMatches, kNone, kMismatch };

struct FileSumCheck {
  FileSum state = FileSum::kNone;
  std::string problem;  // for kMismatch: what is wrong ("file size 1234, recorded 5678")
};

// Checks the file at `path` (reads it whole, in 1 MiB blocks). kNone: no user block
// (a file starting with the HDF5 signature). Unreadable files are kMismatch.
FileSumCheck file_sum_check(const std::string& path);

}  // namespace fk::h5
