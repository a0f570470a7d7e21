#include "results/h5/error.h"

#include <hdf5.h>

namespace fk::h5 {
namespace {

struct Innermost {
  bool found = false;
  std::string desc;
  std::string func;
  hid_t minor = -1;
};

herr_t keep_innermost(unsigned /*depth*/, const H5E_error2_t* entry, void* data) {
  auto* out = static_cast<Innermost*>(data);
  if (!out->found) {  // walking upward: the first entry is the most specific one
    out->found = true;
    out->desc = entry->desc != nullptr ? entry->desc : "";
    out->func = entry->func_name != nullptr ? entry->func_name : "";
    out->minor = entry->min_num;
  }
  return 0;
}

}  // namespace

void quiet_errors() {
  thread_local bool quiet = false;
  if (quiet) return;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  quiet = true;
}

std::string take_error_message() {
  Innermost inner;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &inner);
  std::string text = inner.desc.empty() ? inner.func : inner.desc;
  if (inner.found && inner.minor >= 0) {
    char minor[256] = {};
    if (H5Eget_msg(inner.minor, nullptr, minor, sizeof minor) > 0) {
      text += text.empty() ? "" : " ";
      text += fmt::format("[{}]", minor);
    }
  }
  H5Eclear2(H5E_DEFAULT);
  return text;
}

void fail_io(Where where, std::string_view action, std::source_location loc) {
  fail_io_with(where, action, take_error_message(), loc);
}

void fail_io_with(Where where, std::string_view action, std::string hdf5, std::source_location loc) {
  if (hdf5.empty()) hdf5 = "no HDF5 error recorded";
  throw Error(ErrorKind::kIo, fmt::format("{}: {}: {} (HDF5: {})", where.file, where.object, action, hdf5), loc);
}

void fail_at(ErrorKind kind, Where where, std::string_view message, std::source_location loc) {
  throw Error(kind, fmt::format("{}: {}: {}", where.file, where.object, message), loc);
}

}  // namespace fk::h5
