// Internal to fk::h5: the HDF5 datatypes this layer writes and how it reads types back.
//
// Written files use explicit little-endian standard types (H5T_IEEE_F64LE, H5T_STD_I64LE,
// ...) so a file reads the same on every machine; memory types are the native ones and
// HDF5 converts between them. Strings are variable-length, NUL-terminated, UTF-8.
// Booleans are an 8-bit enum {FALSE = 0, TRUE = 1}: the type h5py itself writes for
// numpy bool, so h5py, pandas and HDFView show True/False.
#pragma once

#include "core/dtype.h"
#include "results/h5/detail/call.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fk::h5::detail {

// Predefined (not owned) memory and file types of a numeric DType. fp16/bf16 have no
// predefined HDF5 type in 1.10: kUnsupported.
hid_t h5_native_type(DType dtype, Where where);
hid_t h5_file_type(DType dtype, Where where);

// The DType that holds every value of a stored integer or float type, or nullopt
// (strings, compounds, 64-bit unsigned, 16-bit floats, ...).
std::optional<DType> h5_dtype_of(hid_t type);

// New variable-length UTF-8 string type.
Handle h5_string_type(Where where);
// New boolean type (8-bit enum FALSE/TRUE).
Handle h5_bool_type(Where where);
// True for an enum over a 1-byte integer whose only members are FALSE=0 and TRUE=1.
bool h5_is_bool_type(hid_t type);

// Short description of a stored type for error messages: "string", "integer",
// "float", "bool", "compound", "enum", ...
std::string h5_describe_type(hid_t type);

// Throws kInvalidArgument when `value` holds a NUL byte (a C string would cut it there).
void h5_require_no_nul(std::string_view value, Where where, std::string_view what);

// True when values of `type` hold variable-length data (variable-length strings or
// sequences, at any depth of compounds and arrays): reading them allocates memory that
// h5_reclaim_vlen must free.
bool h5_type_has_vlen(hid_t type);

// Frees the variable-length data HDF5 allocated while reading `buffer` (H5Dvlen_reclaim
// in 1.10, H5Treclaim from 1.12 on).
herr_t h5_reclaim_vlen(hid_t mem_type, hid_t space, void* buffer);

// Scope guard: reclaims the variable-length data in `buffer` (read with `mem_type`
// over `space`) when it goes out of scope, on success and failure alike. The
// buffer must be zero-filled before the read so unread entries are null.
class VlenReclaimer {
 public:
  VlenReclaimer(hid_t mem_type, hid_t space, void* buffer) : type_(mem_type), space_(space), buffer_(buffer) {}
  VlenReclaimer(const VlenReclaimer&) = delete;
  VlenReclaimer& operator=(const VlenReclaimer&) = delete;
  ~VlenReclaimer() {
    h5_reclaim_vlen(type_, space_, buffer_);
    H5Eclear2(H5E_DEFAULT);
  }

 private:
  hid_t type_;
  hid_t space_;
  void* buffer_;
};

// Reads all `count` strings of an attribute or dataset whose stored type `file_type` is
// a string (variable- or fixed-length). Fixed-length values lose their padding.
enum class Source { kAttribute, kDataset };
std::vector<std::string> h5_read_strings(hid_t object, Source source, hid_t file_type, size_t count, Where where);

}  // namespace fk::h5::detail
