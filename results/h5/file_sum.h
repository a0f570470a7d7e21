// Whole-file checksums of the results files this layer writes.
//
// HDF5's own checksums (1.10-format metadata, and Fletcher32 on the chunks of chunked
// datasets: detail/dcpl.h) leave the raw data of contiguous datasets and the global
// heap (variable-length strings) unchecked, so Writer also reserves a 512-byte HDF5
// user block at the start of each file (HDF5 and every reader skip it: the superblock
// follows at offset 512) and, once the file is closed, writes into it:
//
//   bytes 0..7    "FKSUM01\n"
//   bytes 8..15   file size, little-endian uint64
//   bytes 16..23  FNV-1a 64 (core/hash.h) of the whole file with these 8 bytes zeroed
//   bytes 24..511 zero
//
// A file that starts with the HDF5 signature has no user block (written before this
// format, or by another program) and cannot be checked this way.
//
// The content hash of a file, "fnv1a64:<16 hex digits>", is what fk run's journal
// records when it accepts a job file and what the campaign file keeps of each job's
// source (docs/results-schema.md): FNV-1a 64 of the file's bytes, computed afresh,
// with bytes 16..23 zeroed when the file has the user block above — so for an intact
// file fk wrote it equals the sum its user block records, and any other file (a
// different job file put in its place, a damaged copy) has another one.
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
  bool summed = false;  // the file starts with the user block above (state is then by its sum)
  std::string hash;     // the content hash (above); "" when the file cannot be read
};

// Checks the file at `path` (reads it whole, in 64 KiB blocks, once: the hash comes
// from the same pass). kNone: no user block (a file starting with the HDF5
// signature). Unreadable files, and files that are neither HDF5 nor start with the
// user block, are kMismatch (`summed` false; `hash` set when the file could be read).
FileSumCheck file_sum_check(const std::string& path);

// "" when `expected` is "" or `check.hash`; else the problem, naming both hashes: the
// file is no longer the one whose hash was recorded (replaced, or damaged since).
std::string file_sum_expect(const FileSumCheck& check, const std::string& expected);

// The content hash (above) of a digest: "fnv1a64:" and 16 lower-case hex digits.
std::string file_sum_hash_text(uint64_t digest);

}  // namespace fk::h5
