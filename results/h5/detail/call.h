// Internal to fk::h5: checked HDF5 calls. Includes hdf5.h, so only .cc files of this
// layer include it; public headers never do.
//
// h5_own() wraps a freshly created id in a Handle or throws fail_io() when the call
// returned a negative id; h5_check() does the same for herr_t; h5_test() for htri_t.
// The error stack is read inside these helpers, right after the failing call and before
// any destructor can run another HDF5 call, so the innermost message is never lost.
#pragma once

#include "results/h5/error.h"
#include "results/h5/handle.h"

#include <hdf5.h>

#include <string>

namespace fk::h5::detail {

inline Handle h5_own(hid_t id, Where where, std::string_view action,
                     std::source_location loc = std::source_location::current()) {
  if (id < 0) fail_io(where, action, loc);
  return Handle(id);
}

inline void h5_check(herr_t status, Where where, std::string_view action,
                     std::source_location loc = std::source_location::current()) {
  if (status < 0) fail_io(where, action, loc);
}

inline bool h5_test(htri_t result, Where where, std::string_view action,
                    std::source_location loc = std::source_location::current()) {
  if (result < 0) fail_io(where, action, loc);
  return result > 0;
}

}  // namespace fk::h5::detail

namespace fk::h5::detail {

// Keeps an object's attributes in its header ("compact" storage) however many there
// are, on an object-creation list (file, group or dataset creation). With 1.10-format
// files HDF5 moves more than 8 attributes into "dense" storage (a fractal heap and a
// B-tree per object): compact storage keeps small objects small and one read away, and
// older readers' copies of dense variable-length-string attributes (H5Ocopy in HDF5
// 1.10.8 crashes in H5T__conv_vlen on them) never meet one.
inline void h5_compact_attributes(hid_t ocpl, Where where) {
  h5_check(H5Pset_attr_phase_change(ocpl, 65535, 0), where, "cannot set attribute storage");
}

// A key naming the object `obj` within the open files ("<file number>:<address>", the
// address as a token from HDF5 1.12 on), to recognise an object reached by a second
// hard link. "" when HDF5 cannot read the object header (the error stack says why).
// Never throws.
inline std::string h5_object_key(hid_t obj) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  if (H5Oget_info3(obj, &info, H5O_INFO_BASIC) < 0) return "";
  char* token = nullptr;
  if (H5Otoken_to_str(obj, &info.token, &token) < 0) return "";
  std::string key = std::to_string(info.fileno) + ":" + token;
  H5free_memory(token);
  return key;
#else
  H5O_info_t info;
  if (H5Oget_info2(obj, &info, H5O_INFO_BASIC) < 0) return "";
  return std::to_string(info.fileno) + ":" + std::to_string(info.addr);
#endif
}

// Link-creation property list that creates missing intermediate groups.
inline Handle h5_intermediate_lcpl(Where where) {
  Handle lcpl = h5_own(H5Pcreate(H5P_LINK_CREATE), where, "cannot create property list");
  h5_check(H5Pset_create_intermediate_group(lcpl.get(), 1), where, "cannot create property list");
  return lcpl;
}

// File-access property list used for every file this layer opens: closing the file
// closes every object still open in it (H5F_CLOSE_STRONG), so a commit or close never
// waits on handles the caller still holds. For files being created (`create`), the
// library-version bounds are [1.10, latest]: superblock v3, object headers v2 and the
// 1.10 B-trees, heaps and indexes, every piece of which carries a checksum that HDF5
// verifies on each read, so a damaged file fails with "checksum verification failed"
// instead of being parsed (docs/results-schema.md, "Checksums").
inline Handle h5_file_access(Where where, bool create = false) {
  Handle fapl = h5_own(H5Pcreate(H5P_FILE_ACCESS), where, "cannot create property list");
  h5_check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), where, "cannot create property list");
  if (create) {
    h5_check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_LATEST), where,
             "cannot set library-version bounds");
  }
  return fapl;
}

// Closes a file id with H5Fclose (flushing it; with H5F_CLOSE_STRONG also every
// object open in it). On failure (a flush that hit a full disk) kIo is thrown and the
// id is never touched again: HDF5 has already freed the file behind it although the
// id still looks valid, so releasing it once more would crash (handle_note_failed_close
// says why the process's exit skips it too). An empty handle is a no-op.
inline void h5_close_file(Handle file, Where where) {
  const hid_t id = file.release();
  if (id < 0) return;
  if (H5Fclose(id) < 0) {
    std::string message = take_error_message();
    handle_note_failed_close();
    fail_io_with(where, "cannot close file", std::move(message));
  }
}

}  // namespace fk::h5::detail
