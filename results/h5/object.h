// Object: what files, groups and datasets share — an open HDF5 object, the names
// errors use, and attributes.
//
// An Object owns one HDF5 id (Handle) and knows the file path the user gave (for a
// Writer: the target, not the temporary file) and its absolute path in the file
// ("/" for the root). Objects are move-only and close themselves; an object whose file
// was closed (Writer::commit(), File::close()) is stale and every call on it throws
// fk::Error(kIo). Attributes (implemented in attributes.cc):
//   scalar string  -> variable-length UTF-8 string (h5py: str)
//   scalar integer -> int64                        (h5py: numpy.int64)
//   double         -> float64                      (h5py: numpy.float64)
//   bool           -> 8-bit enum FALSE/TRUE        (h5py: numpy.bool_)
//   vector of int64 / double / string -> 1-D array of the same element type
// set_attr() replaces an attribute of the same name. Attributes are for metadata:
// HDF5 keeps them in the object header, which caps one attribute at 64 KiB; store
// anything larger as a dataset.
#pragma once

#include "results/h5/error.h"
#include "results/h5/handle.h"

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fk::h5 {

enum class ObjectKind { kGroup, kDataset, kOther };

class Object {
 public:
  // Takes ownership of an open object id. `file`: the path errors name; `path`: the
  // object's absolute path in the file. Used by this layer (File, Writer, Group).
  Object(Handle id, std::string file, std::string path);
  Object(Object&&) noexcept = default;
  Object& operator=(Object&&) noexcept = default;

  const std::string& file_path() const { return file_; }
  const std::string& path() const { return path_; }
  bool is_open() const { return id_.valid(); }
  // Escape hatch: the underlying hid_t, borrowed (do not close it).
  int64_t native_id() const { return id_.get(); }

  // --- attributes --------------------------------------------------------------
  bool has_attr(std::string_view name) const;
  // Names of this object's attributes in ascending byte order.
  std::vector<std::string> attr_names() const;

  // Creates or replaces attribute `name`. Strings must be valid UTF-8 without NUL
  // bytes (a NUL throws kInvalidArgument). Integers are stored as int64 (unsigned
  // values above INT64_MAX are not representable: kInvalidArgument).
  void set_attr(std::string_view name, std::string_view value);
  void set_attr(std::string_view name, const char* value) { set_attr(name, std::string_view(value)); }
  void set_attr(std::string_view name, const std::string& value) { set_attr(name, std::string_view(value)); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) void set_attr(std::string_view name, T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) check_int64_range(name, value);
    set_attr_int64(name, static_cast<int64_t>(value));
  }
  void set_attr(std::string_view name, double value);
  void set_attr(std::string_view name, bool value);
  void set_attr(std::string_view name, const std::vector<int64_t>& values);
  void set_attr(std::string_view name, const std::vector<double>& values);
  void set_attr(std::string_view name, const std::vector<std::string>& values);

  // Reads attribute `name` as T: std::string, int64_t, double, bool,
  // std::vector<int64_t>, std::vector<double> or std::vector<std::string>.
  // Missing: kNotFound. Stored class differs (e.g. a string read as int64_t, a float
  // read as int64_t) or a scalar asked of a multi-element attribute: kInvalidArgument.
  // Within a class HDF5 converts (int32 reads as int64_t; fixed-length strings read
  // too); bool also reads from an integer attribute (non-zero is true).
  template <typename T>
  T attr(std::string_view name) const;

 protected:
  Where where() const { return {file_, path_}; }
  // Moves the id out (this object becomes stale); for File::close and Writer::commit.
  Handle release_handle() { return std::move(id_); }
  // Absolute path of `relative` below this object ("/" joins; absolute paths stay).
  std::string child_path(std::string_view relative) const;

 private:
  void set_attr_int64(std::string_view name, int64_t value);
  void check_int64_range(std::string_view name, uint64_t value) const;

  Handle id_;
  std::string file_;
  std::string path_;
};

template <>
std::string Object::attr<std::string>(std::string_view name) const;
template <>
int64_t Object::attr<int64_t>(std::string_view name) const;
template <>
double Object::attr<double>(std::string_view name) const;
template <>
bool Object::attr<bool>(std::string_view name) const;
template <>
std::vector<int64_t> Object::attr<std::vector<int64_t>>(std::string_view name) const;
template <>
std::vector<double> Object::attr<std::vector<double>>(std::string_view name) const;
template <>
std::vector<std::string> Object::attr<std::vector<std::string>>(std::string_view name) const;

// `relative` below the absolute path `base`: "/" + "a" is "/a", "/g" + "a" is "/g/a";
// an absolute `relative` stands alone, "" and "." name `base` itself. The one
// definition of HDF5 path joining in this layer.
std::string path_join(std::string_view base, std::string_view relative);

}  // namespace fk::h5
