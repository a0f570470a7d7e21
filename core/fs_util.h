// File helpers with clear errors. fs_write_file_atomic (and FsAtomicWriter, for a
// file written piece by piece) writes a temporary file in the target's folder,
// flushes it to disk and renames it over the target, so a reader (or a crash) never
// sees a half-written file.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace fk {

// Whole file as bytes; throws fk::Error (kNotFound / kIo) naming the path.
std::string fs_read_file(const std::string& path);
void fs_write_file_atomic(const std::string& path, const std::string& content);

// A file written atomically in pieces, so that a large file never has to be held in
// memory: write() appends to a temporary sibling (fs_temp_sibling), commit() flushes
// it to disk and renames it over `path`. Destroyed without commit() (an error on the
// way), it removes the temporary and leaves `path` as it was. Every failure throws
// fk::Error (kIo) naming the path.
class FsAtomicWriter {
 public:
  explicit FsAtomicWriter(std::string path);
  ~FsAtomicWriter();
  FsAtomicWriter(const FsAtomicWriter&) = delete;
  FsAtomicWriter& operator=(const FsAtomicWriter&) = delete;
  void write(std::string_view bytes);
  void commit();

 private:
  void abandon();
  std::string path_;
  std::string tmp_;
  std::FILE* f_ = nullptr;
};

// A unique temporary name next to `path` ("<path>.tmp.<pid>.<n>").
std::string fs_temp_sibling(const std::string& path);
// fsync() of a file and of its folder (so a rename is durable); throws on failure.
void fs_sync_file(const std::string& path);
void fs_sync_dir_of(const std::string& path);

}  // namespace fk
