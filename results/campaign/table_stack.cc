#include "results/campaign/table_stack.h"

#include "core/error.h"

#include <limits>
#include <set>

namespace fk::results {
namespace {

h5::ColumnType stored_type(h5::ColumnType t) { return t == h5::ColumnType::kI32 ? h5::ColumnType::kI64 : t; }

h5::ColumnType value_type(const TableStack::Value& v) {
  switch (v.index()) {
    case 0:
      return h5::ColumnType::kF64;
    case 1:
      return h5::ColumnType::kI64;
    case 2:
      return h5::ColumnType::kString;
    default:
      return h5::ColumnType::kBool;
  }
}

}  // namespace

size_t TableStack::Column::size() const {
  switch (type) {
    case h5::ColumnType::kF64:
      return f64.size();
    case h5::ColumnType::kString:
      return str.size();
    case h5::ColumnType::kBool:
      return b.size();
    default:
      return i64.size();
  }
}

void TableStack::Column::fill_to(size_t n) {
  switch (type) {
    case h5::ColumnType::kF64:
      f64.resize(n, std::numeric_limits<double>::quiet_NaN());
      break;
    case h5::ColumnType::kString:
      str.resize(n);
      break;
    case h5::ColumnType::kBool:
      b.resize(n, false);
      break;
    default:
      i64.resize(n, 0);
  }
}

void TableStack::check_type(const std::string& name, h5::ColumnType type) const {
  auto it = index_.find(name);
  if (it == index_.end()) return;
  const h5::ColumnType have = columns_[it->second].type;
  if (have != stored_type(type))
    fail(ErrorKind::kInvalidArgument, "column '{}' is {} here but {} in earlier tables", name,
         h5::column_type_name(type), h5::column_type_name(have));
}

TableStack::Column& TableStack::column(const std::string& name, h5::ColumnType type) {
  auto it = index_.find(name);
  if (it != index_.end()) return columns_[it->second];
  index_[name] = columns_.size();
  Column c;
  c.name = name;
  c.type = stored_type(type);
  c.fill_to(rows_);
  columns_.push_back(std::move(c));
  return columns_.back();
}

void TableStack::pad() {
  for (Column& c : columns_) c.fill_to(rows_);
}

void TableStack::append(const std::vector<Key>& keys, const h5::Table& block) {
  std::set<std::string> key_names;
  for (const Key& k : keys) {
    key_names.insert(k.name);
    check_type(k.name, value_type(k.value));
  }
  for (const auto& c : block.columns()) {
    if (key_names.count(c.name))
      fail(ErrorKind::kInvalidArgument, "column '{}' is both a key and a column of the table", c.name);
    check_type(c.name, c.type());
  }
  const size_t n = block.rows();
  for (const Key& k : keys) {
    Column& c = column(k.name, value_type(k.value));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, double>)
            c.f64.insert(c.f64.end(), n, v);
          else if constexpr (std::is_same_v<T, int64_t>)
            c.i64.insert(c.i64.end(), n, v);
          else if constexpr (std::is_same_v<T, std::string>)
            c.str.insert(c.str.end(), n, v);
          else
            c.b.insert(c.b.end(), n, v);
        },
        k.value);
  }
  for (const auto& src : block.columns()) {
    Column& c = column(src.name, src.type());
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::vector<double>>)
            c.f64.insert(c.f64.end(), v.begin(), v.end());
          else if constexpr (std::is_same_v<V, std::vector<int64_t>> || std::is_same_v<V, std::vector<int32_t>>)
            c.i64.insert(c.i64.end(), v.begin(), v.end());
          else if constexpr (std::is_same_v<V, std::vector<std::string>>)
            c.str.insert(c.str.end(), v.begin(), v.end());
          else
            c.b.insert(c.b.end(), v.begin(), v.end());
        },
        src.values);
  }
  rows_ += n;
  pad();
}

void TableStack::append_row(const std::vector<Key>& values) {
  for (const Key& k : values) check_type(k.name, value_type(k.value));
  for (const Key& k : values) {
    Column& c = column(k.name, value_type(k.value));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, double>)
            c.f64.push_back(v);
          else if constexpr (std::is_same_v<T, int64_t>)
            c.i64.push_back(v);
          else if constexpr (std::is_same_v<T, std::string>)
            c.str.push_back(v);
          else
            c.b.push_back(v);
        },
        k.value);
  }
  ++rows_;
  pad();
}

h5::Table TableStack::take() {
  h5::Table t;
  if (columns_.empty()) t.add_column("none", std::vector<int64_t>{});
  for (Column& c : columns_) {
    switch (c.type) {
      case h5::ColumnType::kF64:
        t.add_column(c.name, std::move(c.f64));
        break;
      case h5::ColumnType::kString:
        t.add_column(c.name, std::move(c.str));
        break;
      case h5::ColumnType::kBool:
        t.add_column(c.name, std::move(c.b));
        break;
      default:
        t.add_column(c.name, std::move(c.i64));
    }
  }
  columns_.clear();
  index_.clear();
  rows_ = 0;
  return t;
}

}  // namespace fk::results
