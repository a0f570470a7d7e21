#include "results/h5/detail/compound.h"

#include "results/h5/detail/types.h"

#include <cstring>
#include <type_traits>
#include <variant>

namespace fk::h5::detail {

std::optional<ColumnType> h5_column_type_of(hid_t member_type) {
  if (h5_is_bool_type(member_type)) return ColumnType::kBool;
  switch (H5Tget_class(member_type)) {
    case H5T_STRING:
      return ColumnType::kString;
    case H5T_FLOAT:
      return ColumnType::kF64;
    case H5T_INTEGER: {
      const std::optional<DType> dtype = h5_dtype_of(member_type);
      if (!dtype) return std::nullopt;
      return *dtype == DType::kI64 ? ColumnType::kI64 : ColumnType::kI32;
    }
    default:
      return std::nullopt;
  }
}

namespace {

// Predefined memory and file types of the numeric column types.
hid_t numeric_mem_type(ColumnType type) {
  switch (type) {
    case ColumnType::kF64:
      return H5T_NATIVE_DOUBLE;
    case ColumnType::kI64:
      return H5T_NATIVE_INT64;
    case ColumnType::kI32:
      return H5T_NATIVE_INT32;
    default:
      return -1;
  }
}

hid_t numeric_file_type(ColumnType type) {
  switch (type) {
    case ColumnType::kF64:
      return H5T_IEEE_F64LE;
    case ColumnType::kI64:
      return H5T_STD_I64LE;
    case ColumnType::kI32:
      return H5T_STD_I32LE;
    default:
      return -1;
  }
}

// Appends one member at the end of the packed row; its size is that of `mem_member`.
void insert_member(CompoundLayout& layout, CompoundMember member, hid_t mem_member, Where where) {
  member.offset = layout.row_size;
  member.size = H5Tget_size(mem_member);
  if (member.size == 0) fail_io(where, "cannot size table member");
  layout.row_size += member.size;
  layout.members.push_back(std::move(member));
}

// Creates the compound types once offsets are known.
void build_compounds(CompoundLayout& layout, const std::vector<hid_t>& mem_members,
                     const std::vector<hid_t>& file_members, Where where) {
  layout.mem_type = h5_own(H5Tcreate(H5T_COMPOUND, layout.row_size), where, "cannot create table type");
  if (!file_members.empty()) {
    layout.file_type = h5_own(H5Tcreate(H5T_COMPOUND, layout.row_size), where, "cannot create table type");
  }
  for (size_t i = 0; i < layout.members.size(); ++i) {
    const CompoundMember& m = layout.members[i];
    h5_check(H5Tinsert(layout.mem_type.get(), m.name.c_str(), m.offset, mem_members[i]), where,
             "cannot add table column");
    if (!file_members.empty()) {
      h5_check(H5Tinsert(layout.file_type.get(), m.name.c_str(), m.offset, file_members[i]), where,
               "cannot add table column");
    }
  }
}

}  // namespace

CompoundLayout h5_layout_of_table(const Table& table, Where where) {
  FK_ASSERT(table.num_columns() > 0);
  CompoundLayout layout;
  Handle string_type = h5_string_type(where);
  Handle bool_type = h5_bool_type(where);
  std::vector<hid_t> mem_members;
  std::vector<hid_t> file_members;
  for (const Table::Column& column : table.columns()) {
    const ColumnType type = column.type();
    hid_t mem = numeric_mem_type(type);
    hid_t file = numeric_file_type(type);
    if (type == ColumnType::kString) mem = file = string_type.get();
    if (type == ColumnType::kBool) mem = file = bool_type.get();
    layout.has_vlen = layout.has_vlen || type == ColumnType::kString;
    insert_member(layout, CompoundMember{column.name, type}, mem, where);
    mem_members.push_back(mem);
    file_members.push_back(file);
  }
  build_compounds(layout, mem_members, file_members, where);
  return layout;
}

CompoundLayout h5_layout_of_stored(hid_t stored_type, Where where) {
  CompoundLayout layout;
  const int count = H5Tget_nmembers(stored_type);
  if (count < 0) fail_io(where, "cannot read table columns");
  Handle string_type = h5_string_type(where);
  Handle bool_type = h5_bool_type(where);
  std::vector<Handle> owned;  // fixed-length string members and UTF-8/ASCII variants
  std::vector<hid_t> mem_members;
  for (int i = 0; i < count; ++i) {
    const unsigned index = static_cast<unsigned>(i);
    char* raw_name = H5Tget_member_name(stored_type, index);
    if (raw_name == nullptr) fail_io(where, "cannot read table column name");
    const std::string name(raw_name);
    H5free_memory(raw_name);
    Handle member = h5_own(H5Tget_member_type(stored_type, index), where, "cannot read table column type");
    const std::optional<ColumnType> type = h5_column_type_of(member.get());
    if (!type) {
      fail_at(ErrorKind::kUnsupported, where,
              fmt::format("table column '{}' holds {}, which fk::h5 tables cannot read", name,
                          h5_describe_type(member.get())));
    }
    CompoundMember m{name, *type};
    hid_t mem = numeric_mem_type(*type);
    if (*type == ColumnType::kBool) mem = bool_type.get();
    if (*type == ColumnType::kString) {
      if (h5_test(H5Tis_variable_str(member.get()), where, "cannot inspect string column")) {
        Handle vlen = h5_own(H5Tcopy(string_type.get()), where, "cannot create string type");
        h5_check(H5Tset_cset(vlen.get(), H5Tget_cset(member.get())), where, "cannot create string type");
        mem = vlen.get();
        owned.push_back(std::move(vlen));
        layout.has_vlen = true;
      } else {
        m.fixed_width = H5Tget_size(member.get());
        m.space_padded = H5Tget_strpad(member.get()) == H5T_STR_SPACEPAD;
        Handle fixed = h5_own(H5Tcopy(member.get()), where, "cannot create string type");
        mem = fixed.get();
        owned.push_back(std::move(fixed));
      }
    }
    insert_member(layout, std::move(m), mem, where);
    mem_members.push_back(mem);
  }
  build_compounds(layout, mem_members, {}, where);
  return layout;
}

std::vector<std::byte> h5_pack_rows(const Table& table, const CompoundLayout& layout, Where where) {
  const size_t rows = table.rows();
  std::vector<std::byte> buffer(rows * layout.row_size);
  for (size_t c = 0; c < table.columns().size(); ++c) {
    const Table::Column& column = table.columns()[c];
    const size_t offset = layout.members[c].offset;
    auto cell = [&](size_t row) { return buffer.data() + row * layout.row_size + offset; };
    std::visit(
        [&](const auto& values) {
          using Values = std::decay_t<decltype(values)>;
          for (size_t r = 0; r < rows; ++r) {
            if constexpr (std::is_same_v<Values, std::vector<std::string>>) {
              if (values[r].find('\0') != std::string::npos) {
                fail_at(ErrorKind::kInvalidArgument, where,
                        fmt::format("table column '{}' row {} contains a NUL byte", column.name, r));
              }
              const char* pointer = values[r].c_str();
              std::memcpy(cell(r), &pointer, sizeof pointer);
            } else if constexpr (std::is_same_v<Values, std::vector<bool>>) {
              const int8_t byte = values[r] ? 1 : 0;
              std::memcpy(cell(r), &byte, 1);
            } else {
              std::memcpy(cell(r), &values[r], sizeof values[r]);
            }
          }
        },
        column.values);
  }
  return buffer;
}

namespace {

template <typename T>
std::vector<T> unpack_numbers(const std::vector<std::byte>& buffer, size_t rows, size_t row_size, size_t offset) {
  std::vector<T> out(rows);
  for (size_t r = 0; r < rows; ++r) std::memcpy(&out[r], buffer.data() + r * row_size + offset, sizeof(T));
  return out;
}

std::vector<std::string> unpack_strings(const std::vector<std::byte>& buffer, size_t rows, size_t row_size,
                                        const CompoundMember& m) {
  std::vector<std::string> out;
  out.reserve(rows);
  for (size_t r = 0; r < rows; ++r) {
    const std::byte* cell = buffer.data() + r * row_size + m.offset;
    if (m.fixed_width == 0) {
      const char* pointer = nullptr;
      std::memcpy(&pointer, cell, sizeof pointer);
      out.emplace_back(pointer != nullptr ? pointer : "");
    } else {
      std::string_view text(reinterpret_cast<const char*>(cell), m.fixed_width);
      text = text.substr(0, text.find('\0'));
      if (m.space_padded) text = text.substr(0, text.find_last_not_of(' ') + 1);
      out.emplace_back(text);
    }
  }
  return out;
}

}  // namespace

Table h5_unpack_rows(const std::vector<std::byte>& buffer, size_t rows, const CompoundLayout& layout) {
  Table table;
  const size_t row_size = layout.row_size;
  for (const CompoundMember& m : layout.members) {
    switch (m.type) {
      case ColumnType::kF64:
        table.add_column(m.name, unpack_numbers<double>(buffer, rows, row_size, m.offset));
        break;
      case ColumnType::kI64:
        table.add_column(m.name, unpack_numbers<int64_t>(buffer, rows, row_size, m.offset));
        break;
      case ColumnType::kI32:
        table.add_column(m.name, unpack_numbers<int32_t>(buffer, rows, row_size, m.offset));
        break;
      case ColumnType::kString:
        table.add_column(m.name, unpack_strings(buffer, rows, row_size, m));
        break;
      case ColumnType::kBool: {
        const std::vector<int8_t> bytes = unpack_numbers<int8_t>(buffer, rows, row_size, m.offset);
        table.add_column(m.name, std::vector<bool>(bytes.begin(), bytes.end()));
        break;
      }
    }
  }
  return table;
}

}  // namespace fk::h5::detail
