#include "results/h5/verify.h"

#include "results/h5/detail/call.h"
#include "results/h5/detail/types.h"
#include "results/h5/object.h"
#include "results/h5/file_sum.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fk::h5 {
using namespace detail;

namespace {

constexpr uint64_t kSlabBytes = uint64_t{64} << 20;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// RAII for ids this file opens itself (Handle's closer is generic: H5Idec_ref).
struct Id {
  hid_t id = -1;
  explicit Id(hid_t i) : id(i) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() {
    if (id >= 0) H5Idec_ref(id);
  }
};

[[noreturn]] void failure(const std::string& where, const std::string& what) {
  std::string reason = take_error_message();
  std::string message = where + ": " + what;
  if (!reason.empty()) message += ": " + reason;
  std::replace(message.begin(), message.end(), '\n', ' ');
  throw Failure(message);
}

hid_t checked(hid_t id, const std::string& where, const char* what) {
  if (id < 0) failure(where, what);
  return id;
}

struct Walker {
  VerifyResult* result;
  std::set<std::string> seen;  // objects walked, by file and address

  // Reads `count` elements of `type` (file type) selected by `file_space` from `dataset`
  // or, when dataset < 0, attribute `attr` (whole).
  void read_values(hid_t dataset, hid_t attr, hid_t file_type, const std::string& where) {
    Id mem_type(checked(H5Tget_native_type(file_type, H5T_DIR_ASCEND), where, "cannot map the element type"));
    const size_t element = H5Tget_size(mem_type.id);
    if (element == 0) failure(where, "element size 0");
    const bool has_vlen = h5_type_has_vlen(mem_type.id);
    Id space(checked(dataset >= 0 ? H5Dget_space(dataset) : H5Aget_space(attr), where, "cannot read dataspace"));
    const int rank = H5Sget_simple_extent_ndims(space.id);
    if (rank < 0) failure(where, "cannot read dataspace rank");
    const hssize_t points = H5Sget_simple_extent_npoints(space.id);
    if (points < 0) failure(where, "cannot read dataspace size");
    if (points == 0) return;
    if (dataset < 0 || rank == 0) {
      if (static_cast<uint64_t>(points) > kSlabBytes / element && dataset < 0) failure(where, "attribute too large");
      std::vector<unsigned char> buf(static_cast<size_t>(points) * element);
      const herr_t rc = dataset >= 0 ? H5Dread(dataset, mem_type.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data())
                                     : H5Aread(attr, mem_type.id, buf.data());
      if (rc < 0) failure(where, dataset >= 0 ? "cannot read dataset" : "cannot read attribute");
      if (has_vlen) h5_reclaim_vlen(mem_type.id, space.id, buf.data());
      result->bytes += buf.size();
      return;
    }
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    if (H5Sget_simple_extent_dims(space.id, dims.data(), nullptr) < 0) failure(where, "cannot read dimensions");
    uint64_t row_bytes = element;
    for (size_t i = 1; i < dims.size(); ++i) row_bytes *= std::max<hsize_t>(dims[i], 1);
    const hsize_t rows_per_slab = std::max<hsize_t>(1, kSlabBytes / std::max<uint64_t>(row_bytes, 1));
    for (hsize_t first = 0; first < dims[0]; first += rows_per_slab) {
      std::vector<hsize_t> start(dims.size(), 0), count = dims;
      start[0] = first;
      count[0] = std::min(rows_per_slab, dims[0] - first);
      if (H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
        failure(where, "cannot select rows");
      Id mem_space(checked(H5Screate_simple(rank, count.data(), nullptr), where, "cannot create dataspace"));
      uint64_t n = 1;
      for (hsize_t c : count) n *= c;
      std::vector<unsigned char> buf(static_cast<size_t>(n * element));
      if (H5Dread(dataset, mem_type.id, mem_space.id, space.id, H5P_DEFAULT, buf.data()) < 0)
        failure(where, "cannot read dataset");
      if (has_vlen) h5_reclaim_vlen(mem_type.id, mem_space.id, buf.data());
      result->bytes += buf.size();
    }
  }

  struct AttrContext {
    Walker* walker;
    std::string where;
    std::string failure;
  };

  static herr_t attr_cb(hid_t obj, const char* name, const H5A_info_t*, void* data) {
    auto* ctx = static_cast<AttrContext*>(data);
    const std::string where = ctx->where + "@" + name;
    try {
      Id attr(checked(H5Aopen(obj, name, H5P_DEFAULT), where, "cannot open attribute"));
      Id type(checked(H5Aget_type(attr.id), where, "cannot read attribute type"));
      ctx->walker->read_values(-1, attr.id, type.id, where);
      ++ctx->walker->result->attributes;
    } catch (const Failure& e) {
      ctx->failure = e.what();
      return -1;
    }
    return 0;
  }

  void attributes(hid_t obj, const std::string& where) {
    AttrContext ctx{this, where, ""};
    hsize_t idx = 0;
    const herr_t rc = H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &idx, attr_cb, &ctx);
    if (!ctx.failure.empty()) throw Failure(ctx.failure);
    if (rc < 0) failure(where, "cannot list attributes");
  }

  void object(hid_t obj, const std::string& where) {
    const std::string key = h5_object_key(obj);
    if (key.empty()) failure(where, "cannot read object header");
    if (!seen.insert(key).second) return;
    ++result->objects;
    attributes(obj, where);
    const H5I_type_t kind = H5Iget_type(obj);
    if (kind == H5I_DATASET) {
      Id type(checked(H5Dget_type(obj), where, "cannot read datatype"));
      read_values(obj, -1, type.id, where);
    } else if (kind == H5I_GROUP) {
      H5G_info_t g;
      if (H5Gget_info(obj, &g) < 0) failure(where, "cannot read group");
      for (hsize_t i = 0; i < g.nlinks; ++i) {
        const ssize_t len = H5Lget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
        if (len < 0) failure(where, "cannot read link name");
        std::string name(static_cast<size_t>(len) + 1, '\0');
        if (H5Lget_name_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0)
          failure(where, "cannot read link name");
        name.resize(static_cast<size_t>(len));
        const std::string child = path_join(where, name);
        H5L_info_t link;
        if (H5Lget_info(obj, name.c_str(), &link, H5P_DEFAULT) < 0) failure(child, "cannot read link");
        if (link.type != H5L_TYPE_HARD) failure(child, "is not a hard link (results files hold none)");
        Id c(checked(H5Oopen(obj, name.c_str(), H5P_DEFAULT), child, "cannot open object"));
        object(c.id, child);
      }
    } else if (kind != H5I_DATATYPE) {
      failure(where, "unexpected object type");
    }
  }
};

}  // namespace

VerifyResult verify_file(const std::string& path) {
  quiet_errors();
  VerifyResult r;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    r.problem = "no such file";
    return r;
  }
  const FileSumCheck sum = file_sum_check(path);
  if (sum.state == FileSum::kMismatch) {
    r.problem = sum.problem;
    return r;
  }
  try {
    Id fapl(checked(H5Pcreate(H5P_FILE_ACCESS), path, "cannot create property list"));
    H5Pset_fclose_degree(fapl.id, H5F_CLOSE_STRONG);
    Id file(checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id), "/", "cannot open HDF5 file"));
    Id root(checked(H5Oopen(file.id, "/", H5P_DEFAULT), "/", "cannot open root group"));
    Walker w{&r, {}};
    w.object(root.id, "/");
    r.ok = true;
  } catch (const Failure& e) {
    r.problem = e.what();
  }
  return r;
}

}  // namespace fk::h5
