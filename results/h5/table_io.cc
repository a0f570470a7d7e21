// Tables on disk: Group::write_table / append_table / read_table and Dataset's
// read_table / append_rows. A table is one 1-D compound dataset, chunked with an
// unlimited row dimension (storage_policy.h), so rows can be appended later.
#include "results/h5/detail/compound.h"
#include "results/h5/detail/dcpl.h"
#include "results/h5/detail/types.h"
#include "results/h5/group.h"
#include "results/h5/storage_policy.h"

namespace fk::h5 {
using namespace detail;

namespace {

// The stored compound type; kInvalidArgument unless this is a 1-D compound dataset.
Handle table_type(hid_t dataset, Where at) {
  Handle type = h5_own(H5Dget_type(dataset), at, "cannot read datatype");
  Handle space = h5_own(H5Dget_space(dataset), at, "cannot read dataspace");
  if (H5Tget_class(type.get()) != H5T_COMPOUND || H5Sget_simple_extent_ndims(space.get()) != 1) {
    fail_at(ErrorKind::kInvalidArgument, at, "is not a table (a 1-D compound dataset)");
  }
  return type;
}

// kInvalidArgument unless `rows` has exactly the stored columns with the same types.
void require_same_columns(hid_t stored, const Table& rows, Where at) {
  const CompoundLayout layout = h5_layout_of_stored(stored, at);
  for (const CompoundMember& m : layout.members) {
    if (!rows.has_column(m.name)) {
      fail_at(ErrorKind::kInvalidArgument, at, fmt::format("cannot append: the rows lack column '{}'", m.name));
    }
    const ColumnType given = rows.column_type(m.name);
    if (given != m.type) {
      fail_at(ErrorKind::kInvalidArgument, at,
              fmt::format("cannot append: column '{}' is stored as {}, the rows hold {}", m.name,
                          column_type_name(m.type), column_type_name(given)));
    }
  }
  for (const std::string& name : rows.column_names()) {
    if (H5Tget_member_index(stored, name.c_str()) < 0) {
      H5Eclear2(H5E_DEFAULT);
      fail_at(ErrorKind::kInvalidArgument, at, fmt::format("cannot append: the table has no column '{}'", name));
    }
  }
}

}  // namespace

Dataset Group::write_table(std::string_view path, const Table& table) {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  if (table.num_columns() == 0) fail_at(ErrorKind::kInvalidArgument, at, "a table needs at least one column");
  if (exists(path)) fail_at(ErrorKind::kInvalidArgument, at, "cannot create table: already exists");

  const CompoundLayout layout = h5_layout_of_table(table, at);
  const std::vector<std::byte> rows = h5_pack_rows(table, layout, at);
  const hsize_t dims[1] = {table.rows()};
  const hsize_t max_dims[1] = {H5S_UNLIMITED};
  Handle space = h5_own(H5Screate_simple(1, dims, max_dims), at, "cannot create dataspace");
  Handle dcpl = h5_chunked_dcpl({storage_table_chunk_rows(table.rows(), layout.row_size)}, at);
  Handle lcpl = h5_intermediate_lcpl(at);
  Handle dataset = h5_own(
      H5Dcreate2(native_id(), full.c_str(), layout.file_type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
      at, "cannot create table");
  if (table.rows() != 0) {
    h5_check(H5Dwrite(dataset.get(), layout.mem_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), at,
             "cannot write table");
  }
  return Dataset(std::move(dataset), file_path(), full);
}

uint64_t Group::append_table(std::string_view path, const Table& rows) { return open_dataset(path).append_rows(rows); }

Table Group::read_table(std::string_view path) const { return open_dataset(path).read_table(); }

Table Dataset::read_table() const {
  Handle stored = table_type(native_id(), where());
  const CompoundLayout layout = h5_layout_of_stored(stored.get(), where());
  const size_t rows = static_cast<size_t>(size());
  std::vector<std::byte> buffer(rows * layout.row_size);  // zero-filled: vlen pointers start null
  if (rows != 0) {
    Handle space = h5_own(H5Dget_space(native_id()), where(), "cannot read dataspace");
    const VlenReclaimer reclaim(layout.mem_type.get(), space.get(), buffer.data());
    h5_check(H5Dread(native_id(), layout.mem_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), where(),
             "cannot read table");
    return h5_unpack_rows(buffer, rows, layout);
  }
  return h5_unpack_rows(buffer, 0, layout);
}

uint64_t Dataset::append_rows(const Table& rows) {
  Handle stored = table_type(native_id(), where());
  require_same_columns(stored.get(), rows, where());
  const uint64_t old_rows = static_cast<uint64_t>(size());
  const uint64_t added = rows.rows();
  if (added == 0) return old_rows;

  const CompoundLayout layout = h5_layout_of_table(rows, where());
  const std::vector<std::byte> buffer = h5_pack_rows(rows, layout, where());
  const hsize_t new_dims[1] = {old_rows + added};
  h5_check(H5Dset_extent(native_id(), new_dims), where(), "cannot extend table");
  Handle file_space = h5_own(H5Dget_space(native_id()), where(), "cannot read dataspace");
  const hsize_t start[1] = {old_rows};
  const hsize_t count[1] = {added};
  h5_check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), where(),
           "cannot select appended rows");
  Handle mem_space = h5_own(H5Screate_simple(1, count, nullptr), where(), "cannot create dataspace");
  if (H5Dwrite(native_id(), layout.mem_type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, buffer.data()) < 0) {
    std::string message = take_error_message();
    const hsize_t old_dims[1] = {old_rows};
    H5Dset_extent(native_id(), old_dims);  // best effort: do not leave fill rows behind
    H5Eclear2(H5E_DEFAULT);
    fail_io_with(where(), "cannot append rows", std::move(message));
  }
  return old_rows + added;
}

}  // namespace fk::h5
