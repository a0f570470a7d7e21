// Dataset: an open HDF5 dataset — an N-D numeric array or a table (compound).
//
// Numeric element types are fk::DType's fp64, fp32, int64, int32 and uint8 (fp16/bf16
// have no HDF5 1.10 type: convert to fp32 first). Arrays are row-major, as in numpy.
// Reading converts within a class (an int32 dataset reads as int64_t; fp32 as double)
// but never across classes: a float dataset read as an integer type, or an integer one
// read as a float type, throws kInvalidArgument instead of rounding silently.
// Narrowing within a class (int64 read as int32_t) is HDF5's conversion: it clamps.
// Layout (chunking, gzip, Fletcher32) follows storage_policy.h; storage() reports
// what was used.
// Tables: read_table() and append_rows() live in table_io.cc.
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"
#include "results/h5/object.h"
#include "results/h5/table.h"

#include <concepts>
#include <cstdint>
#include <vector>

namespace fk::h5 {

template <typename T>
concept ArrayElement = std::same_as<T, double> || std::same_as<T, float> || std::same_as<T, int64_t> ||
    std::same_as<T, int32_t> || std::same_as<T, uint8_t>;

template <ArrayElement T>
constexpr DType array_dtype() {
  if constexpr (std::same_as<T, double>)
    return DType::kF64;
  else if constexpr (std::same_as<T, float>)
    return DType::kF32;
  else if constexpr (std::same_as<T, int64_t>)
    return DType::kI64;
  else if constexpr (std::same_as<T, int32_t>)
    return DType::kI32;
  else
    return DType::kU8;
}

// How a dataset is stored (for tests and for users checking file sizes).
struct StorageInfo {
  bool chunked = false;
  bool compressed = false;  // gzip (deflate) filter present
  bool checksummed = false; // Fletcher32 filter present (each chunk's checksum is verified when read)
  Shape chunk;              // chunk dimensions when chunked, else empty
};

class Dataset : public Object {
 public:
  using Object::Object;

  // Dimensions ({} for a scalar dataset); number of elements (rows for a table).
  Shape shape() const;
  int64_t size() const;
  // True for a compound dataset (a table).
  bool is_table() const;
  // Stored element type; kInvalidArgument for tables, strings and other non-numeric
  // types, kUnsupported for numeric types outside the five (e.g. uint64, fp16).
  DType dtype() const;
  StorageInfo storage() const;

  // Reads every element, converted to `as`, into `out` (room for `count` elements;
  // `count` must equal size(), else kInvalidArgument).
  void read_raw(DType as, void* out, size_t count) const;
  template <ArrayElement T>
  std::vector<T> read() const {
    std::vector<T> out(static_cast<size_t>(size()));
    read_raw(array_dtype<T>(), out.data(), out.size());
    return out;
  }

  // --- tables (table_io.cc) ------------------------------------------------------
  // The whole table: one column per compound member, in member order, typed as in
  // table.h (any float member reads as double, integers of up to 32 bits as int32_t,
  // wider ones as int64_t, FALSE/TRUE enums as bool, fixed- or variable-length
  // strings as std::string). kInvalidArgument if this is not a 1-D compound dataset;
  // kUnsupported for members of other types.
  Table read_table() const;
  // Appends the rows of `rows` (H5Dset_extent on the unlimited row dimension) and
  // returns the new row count. `rows` must have exactly the stored columns (any
  // order) with the same types, else kInvalidArgument naming the difference; a table
  // with no rows changes nothing.
  uint64_t append_rows(const Table& rows);
};

}  // namespace fk::h5
