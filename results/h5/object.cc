#include "results/h5/object.h"

#include <limits>

namespace fk::h5 {

Object::Object(Handle id, std::string file, std::string path)
    : id_(std::move(id)), file_(std::move(file)), path_(std::move(path)) {}

std::string path_join(std::string_view base, std::string_view relative) {
  if (relative.starts_with('/')) return std::string(relative);
  if (relative.empty() || relative == ".") return std::string(base);
  // Appended piece by piece: GCC 12 at -O3 warns (-Werror=restrict) on `"/" + string`.
  std::string out;
  out.reserve(base.size() + 1 + relative.size());
  if (base != "/") out.append(base);
  out.append("/").append(relative);
  return out;
}

std::string Object::child_path(std::string_view relative) const { return path_join(path_, relative); }

void Object::check_int64_range(std::string_view name, uint64_t value) const {
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail_at(ErrorKind::kInvalidArgument, where(), fmt::format("attribute '{}': {} does not fit in int64", name, value));
  }
}

}  // namespace fk::h5
