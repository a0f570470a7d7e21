// Internal to fk::h5: tables <-> HDF5 compound types and packed row buffers.
//
// A table row is a packed compound, one member per column in column order:
// float64 / int64 / int32 / variable-length UTF-8 string (char* in memory) / bool enum.
// The memory type uses native types, the file type explicit little-endian ones, with
// the same member names and offsets; HDF5 converts member by member, matching names.
// Rows built by h5_pack_rows() point into the Table's strings: the Table must outlive
// the H5Dwrite that uses them.
#pragma once

#include "results/h5/detail/call.h"
#include "results/h5/table.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fk::h5::detail {

struct CompoundMember {
  std::string name;
  ColumnType type = ColumnType::kF64;
  size_t offset = 0;       // in the packed memory row
  size_t size = 0;         // bytes in the packed memory row
  size_t fixed_width = 0;  // reading a fixed-length string member: its width; else 0
  bool space_padded = false;
};

struct CompoundLayout {
  std::vector<CompoundMember> members;
  size_t row_size = 0;
  Handle mem_type;   // packed native compound
  Handle file_type;  // packed little-endian compound (only from h5_layout_of_table)
  bool has_vlen = false;
};

// Column type that holds a stored compound member of type `member_type`, or nullopt.
std::optional<ColumnType> h5_column_type_of(hid_t member_type);

// Layout for writing `table` (needs at least one column).
CompoundLayout h5_layout_of_table(const Table& table, Where where);
// Layout for reading a stored compound type; kUnsupported names a member we cannot map.
CompoundLayout h5_layout_of_stored(hid_t stored_type, Where where);

// Packs the rows of `table` (laid out by h5_layout_of_table). Strings with NUL bytes
// throw kInvalidArgument naming the column and row.
std::vector<std::byte> h5_pack_rows(const Table& table, const CompoundLayout& layout, Where where);
// Builds a Table from `rows` packed rows read with `layout.mem_type`. Copies strings;
// the caller reclaims the variable-length data afterwards.
Table h5_unpack_rows(const std::vector<std::byte>& buffer, size_t rows, const CompoundLayout& layout);

}  // namespace fk::h5::detail
