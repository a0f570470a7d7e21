// TableStack: stacks many small tables into one flat table (the campaign summaries),
// each block of rows prefixed with constant key columns (the job's id, architecture,
// layout...), so a reader gets one row per job x item in a single read.
//
// Invariants: every column has rows() values; columns keep the order they first
// appeared in (keys first); a column absent from some block holds the fill value in
// that block's rows (NaN, 0, "", false) — a reader cannot tell it from a stored one,
// which is why fills only arise for files of older schemas. int32 columns are stored
// as int64. No HDF5 here: take() hands back an h5::Table value.
#pragma once

#include "results/h5/table.h"

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace fk::results {

class TableStack {
 public:
  using Value = std::variant<double, int64_t, std::string, bool>;
  struct Key {
    std::string name;
    Value value;
  };

  // Appends `block`'s rows, each prefixed with `keys`. kInvalidArgument when a block
  // column is named like a key or when a column's type differs from the type it had
  // in earlier blocks (both named in the message); nothing is appended then.
  void append(const std::vector<Key>& keys, const h5::Table& block);
  // Appends one row made of `values` only (other columns filled).
  void append_row(const std::vector<Key>& values);

  size_t rows() const { return rows_; }
  // The stacked table; the stack is empty afterwards. A stack that never received a
  // column gives a table with one int64 column "none" and no rows (HDF5 tables need
  // a column).
  h5::Table take();

 private:
  struct Column {
    std::string name;
    h5::ColumnType type;
    std::vector<double> f64;
    std::vector<int64_t> i64;
    std::vector<std::string> str;
    std::vector<bool> b;
    size_t size() const;
    void fill_to(size_t n);
  };
  Column& column(const std::string& name, h5::ColumnType type);
  void check_type(const std::string& name, h5::ColumnType type) const;
  void pad();

  std::vector<Column> columns_;
  std::map<std::string, size_t> index_;
  size_t rows_ = 0;
};

}  // namespace fk::results
