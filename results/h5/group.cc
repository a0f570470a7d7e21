// Group structure: existence, kinds, listing, opening and creating groups.
#include "results/h5/group.h"

#include "results/h5/detail/call.h"

#include <algorithm>

namespace fk::h5 {
using namespace detail;

namespace {

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

ObjectKind kind_at(hid_t loc, const std::string& full, Where at) {
  Handle object = h5_own(H5Oopen(loc, full.c_str(), H5P_DEFAULT), at, "cannot open object");
  switch (H5Iget_type(object.get())) {
    case H5I_GROUP:
      return ObjectKind::kGroup;
    case H5I_DATASET:
      return ObjectKind::kDataset;
    default:
      return ObjectKind::kOther;
  }
}

}  // namespace

bool Group::exists(std::string_view path) const {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  const std::vector<std::string_view> parts = split_path(full);
  std::string prefix;
  for (size_t i = 0; i < parts.size(); ++i) {
    prefix += '/';
    prefix += parts[i];
    if (!h5_test(H5Lexists(native_id(), prefix.c_str(), H5P_DEFAULT), at, "cannot look up link")) {
      return false;
    }
    const bool last = i + 1 == parts.size();
    if (last) break;
    // A link below a non-group (or a dangling link) cannot exist; HDF5 would fail here.
    if (!h5_test(H5Oexists_by_name(native_id(), prefix.c_str(), H5P_DEFAULT), at, "cannot look up object") ||
        kind_at(native_id(), prefix, at) != ObjectKind::kGroup) {
      return false;
    }
  }
  return h5_test(H5Oexists_by_name(native_id(), full.c_str(), H5P_DEFAULT), at, "cannot look up object");
}

ObjectKind Group::kind(std::string_view path) const {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  if (!exists(path)) fail_at(ErrorKind::kNotFound, at, "no such object");
  return kind_at(native_id(), full, at);
}

std::vector<std::string> Group::children() const {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  h5_check(H5Literate(native_id(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names), where(), "cannot list group");
  std::sort(names.begin(), names.end());
  return names;
}

Group Group::open_group(std::string_view path) const {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  if (!exists(path)) fail_at(ErrorKind::kNotFound, at, "no such group");
  if (kind(path) != ObjectKind::kGroup) fail_at(ErrorKind::kInvalidArgument, at, "is not a group");
  return Group(h5_own(H5Gopen2(native_id(), full.c_str(), H5P_DEFAULT), at, "cannot open group"), file_path(), full);
}

Group Group::create_group(std::string_view path) {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  if (exists(path)) fail_at(ErrorKind::kInvalidArgument, at, "cannot create group: already exists");
  Handle lcpl = h5_intermediate_lcpl(at);
  Handle gcpl = h5_own(H5Pcreate(H5P_GROUP_CREATE), at, "cannot create property list");
  h5_compact_attributes(gcpl.get(), at);
  return Group(
      h5_own(H5Gcreate2(native_id(), full.c_str(), lcpl.get(), gcpl.get(), H5P_DEFAULT), at, "cannot create group"),
      file_path(), full);
}

Group Group::require_group(std::string_view path) { return exists(path) ? open_group(path) : create_group(path); }

}  // namespace fk::h5
