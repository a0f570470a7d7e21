// File helpers with clear errors. fs_write_file_atomic writes a temporary file in
// the target's folder, flushes it to disk and renames it over the target, so a
// reader (or a crash) never sees a half-written file.
#pragma once

#include <string>

namespace fk {

// Whole file as bytes; throws fk::Error (kNotFound / kIo) naming the path.
std::string fs_read_file(const std::string& path);
void fs_write_file_atomic(const std::string& path, const std::string& content);
// A unique temporary name next to `path` ("<path>.tmp.<pid>.<n>").
std::string fs_temp_sibling(const std::string& path);
// fsync() of a file and of its folder (so a rename is durable); throws on failure.
void fs_sync_file(const std::string& path);
void fs_sync_dir_of(const std::string& path);

}  // namespace fk
