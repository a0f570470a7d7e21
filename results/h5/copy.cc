// copy_object (copy.h): checks, intermediate-group creation and named errors around
// the recursive copy of detail/copy_tree.h; remove_object.
#include "results/h5/copy.h"

#include "results/h5/detail/call.h"
#include "results/h5/detail/copy_tree.h"

namespace fk::h5 {
using namespace detail;

void copy_object(const Group& from, std::string_view from_path, Group& to, std::string_view to_path) {
  const bool whole = from_path.empty() || from_path == ".";
  const std::string src = whole ? std::string(".") : std::string(from_path);
  const std::string src_full = path_join(from.path(), from_path);
  const std::string dst_full = path_join(to.path(), to_path);
  const Where src_at{from.file_path(), src_full};
  const Where dst_at{to.file_path(), dst_full};
  if (!whole && !from.exists(from_path)) fail_at(ErrorKind::kNotFound, src_at, "cannot copy: no such object");
  if (to_path.empty() || to_path == "." || to_path == "/")
    fail_at(ErrorKind::kInvalidArgument, dst_at, "cannot copy: name a destination below the group");
  if (to.exists(to_path)) fail_at(ErrorKind::kInvalidArgument, dst_at, "cannot copy: destination already exists");
  Handle lcpl = h5_intermediate_lcpl(dst_at);
  const std::string dst(to_path);
  try {
    Handle object = h5_own(H5Oopen(from.native_id(), src.c_str(), H5P_DEFAULT), src_at, "cannot open object");
    h5_copy_tree(object.get(), src_at, to.native_id(), dst, lcpl.get(), dst_at);
  } catch (const Error& e) {
    // Leave nothing half-copied behind: unlink whatever part of the copy was made.
    if (H5Lexists(to.native_id(), dst.c_str(), H5P_DEFAULT) > 0) H5Ldelete(to.native_id(), dst.c_str(), H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    // The inner error names the place that failed first (the source object for a read,
    // e.g. a damaged chunk; the destination for a write); both ends follow.
    throw Error(e.kind(), fmt::format("{} (copying {}:{} to {}:{})", e.what(), from.file_path(), src_full,
                                      to.file_path(), dst_full));
  }
}

void remove_object(Group& group, std::string_view path) {
  const std::string full = path_join(group.path(), path);
  const Where at{group.file_path(), full};
  if (path.empty() || path == "." || path == "/") fail_at(ErrorKind::kInvalidArgument, at, "cannot remove a group from itself");
  if (!group.exists(path)) fail_at(ErrorKind::kNotFound, at, "cannot remove: no such object");
  const std::string name(path);
  h5_check(H5Ldelete(group.native_id(), name.c_str(), H5P_DEFAULT), at, "cannot remove");
}

}  // namespace fk::h5
