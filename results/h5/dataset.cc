// Arrays: Group::write_array / open_dataset and Dataset's shape, type, layout and
// element reads.
#include "results/h5/detail/dcpl.h"
#include "results/h5/detail/types.h"
#include "results/h5/group.h"
#include "results/h5/storage_policy.h"

#include <limits>

namespace fk::h5 {
using namespace detail;

namespace {

Handle dataspace_of(const Shape& shape, Where at) {
  if (shape.empty()) return h5_own(H5Screate(H5S_SCALAR), at, "cannot create dataspace");
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return h5_own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), at, "cannot create dataspace");
}

// Product of `shape`, checked (dims >= 0, no overflow).
uint64_t element_count(const Shape& shape, Where at) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      fail_at(ErrorKind::kInvalidArgument, at, fmt::format("negative dimension in shape {}", shape_string(shape)));
    if (d != 0 && count > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
      fail_at(ErrorKind::kInvalidArgument, at, fmt::format("shape {} is too large", shape_string(shape)));
    }
    count *= static_cast<uint64_t>(d);
  }
  return count;
}

Handle array_dcpl(const Shape& shape, DType dtype, uint64_t count, Where at) {
  const size_t bytes = count * dtype_size(dtype);
  if (count == 0 || shape.empty() || !storage_compress_array(bytes)) {
    Handle dcpl = h5_own(H5Pcreate(H5P_DATASET_CREATE), at, "cannot create property list");
    h5_compact_attributes(dcpl.get(), at);
    return dcpl;
  }
  const std::vector<uint64_t> chunk =
      storage_array_chunk(std::vector<uint64_t>(shape.begin(), shape.end()), dtype_size(dtype));
  return h5_chunked_dcpl(std::vector<hsize_t>(chunk.begin(), chunk.end()), at);
}

}  // namespace

Dataset Group::write_array(std::string_view path, DType dtype, const Shape& shape, const void* data, size_t count) {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  const uint64_t expected = element_count(shape, at);
  if (expected != count) {
    fail_at(ErrorKind::kInvalidArgument, at,
            fmt::format("shape {} needs {} elements, got {}", shape_string(shape), expected, count));
  }
  if (count != 0 && data == nullptr) fail_at(ErrorKind::kInvalidArgument, at, "no data to write");
  const hid_t mem_type = h5_native_type(dtype, at);
  const hid_t file_type = h5_file_type(dtype, at);
  if (exists(path)) fail_at(ErrorKind::kInvalidArgument, at, "cannot create dataset: already exists");

  Handle space = dataspace_of(shape, at);
  Handle dcpl = array_dcpl(shape, dtype, count, at);
  Handle lcpl = h5_intermediate_lcpl(at);
  Handle dataset =
      h5_own(H5Dcreate2(native_id(), full.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), at,
             "cannot create dataset");
  if (count != 0) {
    h5_check(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), at, "cannot write dataset");
  }
  return Dataset(std::move(dataset), file_path(), full);
}

Dataset Group::open_dataset(std::string_view path) const {
  const std::string full = child_path(path);
  const Where at{file_path(), full};
  if (!exists(path)) fail_at(ErrorKind::kNotFound, at, "no such dataset");
  if (kind(path) != ObjectKind::kDataset) fail_at(ErrorKind::kInvalidArgument, at, "is not a dataset");
  return Dataset(h5_own(H5Dopen2(native_id(), full.c_str(), H5P_DEFAULT), at, "cannot open dataset"), file_path(),
                 full);
}

Shape Dataset::shape() const {
  Handle space = h5_own(H5Dget_space(native_id()), where(), "cannot read dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail_io(where(), "cannot read dataspace rank");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) {
    h5_check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), where(), "cannot read dataspace dimensions");
  }
  return Shape(dims.begin(), dims.end());
}

int64_t Dataset::size() const {
  Handle space = h5_own(H5Dget_space(native_id()), where(), "cannot read dataspace");
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points < 0) fail_io(where(), "cannot read dataspace size");
  return static_cast<int64_t>(points);
}

bool Dataset::is_table() const {
  Handle type = h5_own(H5Dget_type(native_id()), where(), "cannot read datatype");
  return H5Tget_class(type.get()) == H5T_COMPOUND;
}

DType Dataset::dtype() const {
  Handle type = h5_own(H5Dget_type(native_id()), where(), "cannot read datatype");
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
    fail_at(ErrorKind::kInvalidArgument, where(), fmt::format("holds {}, not numbers", h5_describe_type(type.get())));
  }
  const std::optional<DType> dtype = h5_dtype_of(type.get());
  if (!dtype) {
    fail_at(ErrorKind::kUnsupported, where(),
            fmt::format("element type {} has no fk::DType", h5_describe_type(type.get())));
  }
  return *dtype;
}

StorageInfo Dataset::storage() const {
  Handle dcpl = h5_own(H5Dget_create_plist(native_id()), where(), "cannot read creation properties");
  StorageInfo info;
  info.chunked = H5Pget_layout(dcpl.get()) == H5D_CHUNKED;
  if (info.chunked) {
    std::vector<hsize_t> chunk(H5S_MAX_RANK);
    const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data());
    if (rank < 0) fail_io(where(), "cannot read chunk size");
    info.chunk.assign(chunk.begin(), chunk.begin() + rank);
  }
  const int filters = H5Pget_nfilters(dcpl.get());
  if (filters < 0) fail_io(where(), "cannot read filters");
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    size_t n_values = 0;
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &n_values, nullptr, 0, nullptr, nullptr);
    if (id == H5Z_FILTER_DEFLATE) info.compressed = true;
    if (id == H5Z_FILTER_FLETCHER32) info.checksummed = true;
  }
  return info;
}

void Dataset::read_raw(DType as, void* out, size_t count) const {
  const int64_t stored = size();
  if (static_cast<uint64_t>(stored) != count) {
    fail_at(ErrorKind::kInvalidArgument, where(),
            fmt::format("holds {} elements; the read buffer has room for {}", stored, count));
  }
  const DType kind = dtype();
  if (dtype_is_float(kind) != dtype_is_float(as)) {
    fail_at(
        ErrorKind::kInvalidArgument, where(),
        fmt::format("holds {} values; reading them as {} would change their class", dtype_name(kind), dtype_name(as)));
  }
  const hid_t mem_type = h5_native_type(as, where());
  if (count == 0) return;
  h5_check(H5Dread(native_id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), where(), "cannot read dataset");
}

}  // namespace fk::h5
