// Group: an HDF5 group (or a file's root) — navigation, datasets and tables under it.
//
// Paths are relative to this group ("kernel_stage/timings") or absolute ("/a/b") and
// use '/' between names. Creating anything creates the missing intermediate groups.
// Creating a dataset or group where a link of that name exists throws
// kInvalidArgument; opening a missing one throws kNotFound; both name the file and
// the full object path. Structure is in group.cc, arrays in dataset.cc, tables in
// table_io.cc.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"
#include "results/h5/dataset.h"
#include "results/h5/object.h"
#include "results/h5/table.h"

#include <string>
#include <string_view>
#include <vector>

namespace fk::h5 {

class Group : public Object {
 public:
  using Object::Object;

  // --- structure -------------------------------------------------------------------
  // True when `path` names a link that resolves to an object; false when any
  // component is missing or an intermediate component is not a group. Never throws
  // for a missing path (only for a broken file).
  bool exists(std::string_view path) const;
  // Kind of the object at `path`; kNotFound when it does not exist.
  ObjectKind kind(std::string_view path) const;
  // Names of the direct children of this group, ascending byte order.
  std::vector<std::string> children() const;

  // Opens an existing group (kNotFound; kInvalidArgument if `path` is not a group).
  Group open_group(std::string_view path) const;
  // Creates a group and missing parents; kInvalidArgument if `path` exists.
  Group create_group(std::string_view path);
  // Opens `path` if it is a group, else creates it (and parents).
  Group require_group(std::string_view path);

  // --- arrays ----------------------------------------------------------------------
  // Creates dataset `path` of `dtype` and `shape` (row-major, every dim >= 0) from
  // `count` elements at `data`; count must be the product of shape (kInvalidArgument).
  // Zero-element arrays are allowed (data may be null). Layout: storage_policy.h.
  Dataset write_array(std::string_view path, DType dtype, const Shape& shape, const void* data, size_t count);
  template <ArrayElement T>
  Dataset write_array(std::string_view path, const std::vector<T>& values, const Shape& shape) {
    return write_array(path, array_dtype<T>(), shape, values.data(), values.size());
  }
  // 1-D array of values.size() elements.
  template <ArrayElement T>
  Dataset write_array(std::string_view path, const std::vector<T>& values) {
    return write_array(path, values, Shape{static_cast<int64_t>(values.size())});
  }

  // Opens an existing dataset (kNotFound; kInvalidArgument if `path` is a group).
  Dataset open_dataset(std::string_view path) const;
  template <ArrayElement T>
  std::vector<T> read_array(std::string_view path) const {
    return open_dataset(path).read<T>();
  }

  // --- tables ----------------------------------------------------------------------
  // Writes `table` as one 1-D compound dataset at `path` (chunked, extensible,
  // compressed: storage_policy.h). Zero-row tables are fine; a table without columns
  // is kInvalidArgument. String values must not hold NUL bytes.
  Dataset write_table(std::string_view path, const Table& table);
  // Appends rows to the table at `path` (see Dataset::append_rows); returns the new
  // row count.
  uint64_t append_table(std::string_view path, const Table& rows);
  // Reads the table at `path` (see Dataset::read_table).
  Table read_table(std::string_view path) const;
};

}  // namespace fk::h5
