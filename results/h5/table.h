// Table: a column-oriented set of records, built in memory and stored by Group as one
// HDF5 compound dataset (one member per column, one element per row).
//
// Column types and what they become on disk and in Python:
//   double      -> float64                      h5py/numpy: '<f8'
//   int64_t     -> int64                        '<i8'
//   int32_t     -> int32                        '<i4'
//   std::string -> variable-length UTF-8 string object (h5py gives bytes; decode utf-8)
//   bool        -> 8-bit enum FALSE/TRUE        '?' (numpy bool)
// Invariants: column names are unique and non-empty; every column has rows() values;
// columns keep the order they were added in (the compound's member order). A Table
// with no columns has no rows and cannot be written. No HDF5 here: a plain value.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fk::h5 {

enum class ColumnType { kF64, kI64, kI32, kString, kBool };

// "float64", "int64", "int32", "string", "bool".
std::string_view column_type_name(ColumnType type);

template <typename T>
concept ColumnElement = std::same_as<T, double> || std::same_as<T, int64_t> || std::same_as<T, int32_t> ||
    std::same_as<T, std::string> || std::same_as<T, bool>;

class Table {
 public:
  using Values = std::variant<std::vector<double>, std::vector<int64_t>, std::vector<int32_t>, std::vector<std::string>,
                              std::vector<bool>>;
  struct Column {
    std::string name;
    Values values;
    ColumnType type() const;
    size_t size() const;
  };

  // Appends a column. Throws fk::Error(kInvalidArgument) when `name` is empty or
  // already used, or when the table has columns and `values` has a different length.
  Table& add_column(std::string name, std::vector<double> values);
  Table& add_column(std::string name, std::vector<int64_t> values);
  Table& add_column(std::string name, std::vector<int32_t> values);
  Table& add_column(std::string name, std::vector<std::string> values);
  Table& add_column(std::string name, std::vector<bool> values);

  // Rows (0 when there are no columns) and columns.
  size_t rows() const { return columns_.empty() ? 0 : columns_.front().size(); }
  size_t num_columns() const { return columns_.size(); }
  const std::vector<Column>& columns() const { return columns_; }
  std::vector<std::string> column_names() const;
  bool has_column(std::string_view name) const;

  // Type of column `name`; kNotFound when there is none.
  ColumnType column_type(std::string_view name) const;
  // Values of column `name` as T. kNotFound when there is no such column;
  // kInvalidArgument (naming both types) when the column holds another type.
  template <ColumnElement T>
  const std::vector<T>& column(std::string_view name) const;

 private:
  const Column& find(std::string_view name) const;
  Table& add(std::string name, Values values);

  std::vector<Column> columns_;
};

// Defined in table.cc for exactly these types.
extern template const std::vector<double>& Table::column<double>(std::string_view) const;
extern template const std::vector<int64_t>& Table::column<int64_t>(std::string_view) const;
extern template const std::vector<int32_t>& Table::column<int32_t>(std::string_view) const;
extern template const std::vector<std::string>& Table::column<std::string>(std::string_view) const;
extern template const std::vector<bool>& Table::column<bool>(std::string_view) const;

}  // namespace fk::h5
