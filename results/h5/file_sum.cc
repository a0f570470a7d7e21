#include "results/h5/file_sum.h"

#include "core/error.h"
#include "core/hash.h"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <vector>

namespace fk::h5 {

namespace {

constexpr char kMagic[8] = {'F', 'K', 'S', 'U', 'M', '0', '1', '\n'};
constexpr unsigned char kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

struct Closer {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, Closer>;

void put_u64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
uint64_t get_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// FNV-1a of the file from its current position to the end, after the `head_size`
// bytes at `head` (the user block with the sum field zeroed, or the first bytes of a
// file without one). Sets *size to the bytes summed in all.
bool sum_rest(std::FILE* f, const unsigned char* head, size_t head_size, uint64_t* digest, uint64_t* size) {
  Hasher h;
  h.bytes(head, head_size);
  uint64_t total = head_size;
  std::vector<unsigned char> buf(size_t{64} << 10);  // under malloc's mmap threshold: no page faults per call
  for (;;) {
    const size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n > 0) {
      h.bytes(buf.data(), n);
      total += n;
    }
    if (n < buf.size()) {
      if (std::ferror(f)) return false;
      break;
    }
  }
  *digest = h.digest();
  *size = total;
  return true;
}

}  // namespace

void file_sum_write(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "r+b"));
  if (!f) fail(ErrorKind::kIo, "{}: cannot open to write its checksum: {}", path, std::strerror(errno));
  std::array<unsigned char, kFileSumBlock> head{};
  if (std::fread(head.data(), 1, head.size(), f.get()) != head.size())
    fail(ErrorKind::kIo, "{}: shorter than its user block", path);
  for (unsigned char c : head)
    if (c != 0) fail(ErrorKind::kIo, "{}: its user block is not empty", path);
  std::memcpy(head.data(), kMagic, sizeof kMagic);
  uint64_t digest = 0, size = 0;
  // The size field is part of what is summed, so it is set first (the size is known).
  std::fseek(f.get(), 0, SEEK_END);
  const long end = std::ftell(f.get());
  if (end < 0) fail(ErrorKind::kIo, "{}: cannot read its size", path);
  put_u64(head.data() + 8, static_cast<uint64_t>(end));
  std::fseek(f.get(), static_cast<long>(kFileSumBlock), SEEK_SET);
  if (!sum_rest(f.get(), head.data(), head.size(), &digest, &size))
    fail(ErrorKind::kIo, "{}: cannot read it back", path);
  put_u64(head.data() + 16, digest);
  std::fseek(f.get(), 0, SEEK_SET);
  if (std::fwrite(head.data(), 1, head.size(), f.get()) != head.size() || std::fflush(f.get()) != 0)
    fail(ErrorKind::kIo, "{}: cannot write its checksum: {}", path, std::strerror(errno));
  std::FILE* raw = f.release();
  if (std::fclose(raw) != 0) fail(ErrorKind::kIo, "{}: cannot write its checksum: {}", path, std::strerror(errno));
}

std::string file_sum_hash_text(uint64_t digest) { return fmt::format("fnv1a64:{:016x}", digest); }

std::string file_sum_expect(const FileSumCheck& check, const std::string& expected) {
  if (expected.empty() || check.hash == expected) return "";
  return fmt::format("content hash {} is not {}, the hash recorded when the file was accepted: the file was "
                     "replaced or damaged since",
                     check.hash.empty() ? "unknown" : check.hash, expected);
}

FileSumCheck file_sum_check(const std::string& path) {
  FileSumCheck r;
  r.state = FileSum::kMismatch;
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    r.problem = fmt::format("cannot open: {}", std::strerror(errno));
    return r;
  }
  std::array<unsigned char, kFileSumBlock> head{};
  const size_t got = std::fread(head.data(), 1, head.size(), f.get());
  if (std::ferror(f.get())) {
    r.problem = fmt::format("read error: {}", std::strerror(errno));
    return r;
  }
  r.summed = got == head.size() && std::memcmp(head.data(), kMagic, sizeof kMagic) == 0;
  const uint64_t recorded_size = r.summed ? get_u64(head.data() + 8) : 0;
  const uint64_t recorded = r.summed ? get_u64(head.data() + 16) : 0;
  if (r.summed) put_u64(head.data() + 16, 0);
  // Files without the user block are hashed whole: `head` holds their first `got`
  // bytes (the rest of it zero), and what follows is summed after them.
  uint64_t digest = 0, size = 0;
  if (!sum_rest(f.get(), head.data(), got, &digest, &size)) {
    r.problem = fmt::format("read error: {}", std::strerror(errno));
    return r;
  }
  r.hash = file_sum_hash_text(digest);
  if (!r.summed) {
    if (got >= sizeof kHdf5Signature && std::memcmp(head.data(), kHdf5Signature, sizeof kHdf5Signature) == 0) {
      r.state = FileSum::kNone;
      r.problem.clear();
    } else {
      r.problem = "not an HDF5 file, nor a FastKernels results file with a checksum (damaged start?)";
    }
    return r;
  }
  if (size != recorded_size) {
    r.problem = fmt::format("file size {} bytes, {} when written (truncated or extended)", size, recorded_size);
    return r;
  }
  if (digest != recorded) {
    r.problem = fmt::format("file checksum mismatch ({:016x}, {:016x} when written): the file is damaged", digest,
                            recorded);
    return r;
  }
  r.state = FileSum::kMatches;
  return r;
}

}  // namespace fk::h5
