#include "results/h5/table.h"

#include "core/error.h"

namespace fk::h5 {

std::string_view column_type_name(ColumnType type) {
  switch (type) {
    case ColumnType::kF64:
      return "float64";
    case ColumnType::kI64:
      return "int64";
    case ColumnType::kI32:
      return "int32";
    case ColumnType::kString:
      return "string";
    case ColumnType::kBool:
      return "bool";
  }
  return "unknown";
}

ColumnType Table::Column::type() const {
  // The variant's alternatives are in ColumnType's order.
  return static_cast<ColumnType>(values.index());
}

size_t Table::Column::size() const {
  return std::visit([](const auto& v) { return v.size(); }, values);
}

Table& Table::add(std::string name, Values values) {
  if (name.empty()) fail(ErrorKind::kInvalidArgument, "table column names must not be empty");
  if (has_column(name)) fail(ErrorKind::kInvalidArgument, "table column '{}' is added twice", name);
  Column column{std::move(name), std::move(values)};
  if (!columns_.empty() && column.size() != rows()) {
    fail(ErrorKind::kInvalidArgument, "table column '{}' has {} values but the table has {} rows", column.name,
         column.size(), rows());
  }
  columns_.push_back(std::move(column));
  return *this;
}

Table& Table::add_column(std::string name, std::vector<double> values) {
  return add(std::move(name), std::move(values));
}
Table& Table::add_column(std::string name, std::vector<int64_t> values) {
  return add(std::move(name), std::move(values));
}
Table& Table::add_column(std::string name, std::vector<int32_t> values) {
  return add(std::move(name), std::move(values));
}
Table& Table::add_column(std::string name, std::vector<std::string> values) {
  return add(std::move(name), std::move(values));
}
Table& Table::add_column(std::string name, std::vector<bool> values) { return add(std::move(name), std::move(values)); }

std::vector<std::string> Table::column_names() const {
  std::vector<std::string> names;
  names.reserve(columns_.size());
  for (const Column& c : columns_) names.push_back(c.name);
  return names;
}

bool Table::has_column(std::string_view name) const {
  for (const Column& c : columns_) {
    if (c.name == name) return true;
  }
  return false;
}

const Table::Column& Table::find(std::string_view name) const {
  for (const Column& c : columns_) {
    if (c.name == name) return c;
  }
  fail(ErrorKind::kNotFound, "table has no column '{}'", name);
}

ColumnType Table::column_type(std::string_view name) const { return find(name).type(); }

template <ColumnElement T>
const std::vector<T>& Table::column(std::string_view name) const {
  const Column& c = find(name);
  if (const auto* values = std::get_if<std::vector<T>>(&c.values)) return *values;
  const ColumnType wanted = Column{"", std::vector<T>{}}.type();
  fail(ErrorKind::kInvalidArgument, "table column '{}' holds {}, not {}", name, column_type_name(c.type()),
       column_type_name(wanted));
}

template const std::vector<double>& Table::column<double>(std::string_view) const;
template const std::vector<int64_t>& Table::column<int64_t>(std::string_view) const;
template const std::vector<int32_t>& Table::column<int32_t>(std::string_view) const;
template const std::vector<std::string>& Table::column<std::string>(std::string_view) const;
template const std::vector<bool>& Table::column<bool>(std::string_view) const;

}  // namespace fk::h5
