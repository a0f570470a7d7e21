// h5_copy_tree (copy_tree.h): groups, links, attributes and datasets rebuilt one by one.
#include "results/h5/detail/copy_tree.h"

#include "results/h5/detail/types.h"
#include "results/h5/object.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace fk::h5::detail {

namespace {

// Datasets are copied in slabs of at most this many bytes (in memory form), each a
// whole number of chunks along the first dimension.
constexpr uint64_t kSlabBytes = uint64_t{16} << 20;


// The stored type of a dataset or attribute, usable as the memory type of a copy
// (HDF5 hands it out marked as in memory: no conversion, variable-length data as
// pointers). A committed (named) type is copied to a transient one, which another
// file can use.
Handle copy_type(Handle stored, Where at) {
  if (!h5_test(H5Tcommitted(stored.get()), at, "cannot read datatype")) return stored;
  return h5_own(H5Tcopy(stored.get()), at, "cannot copy datatype");
}

void require_copyable_type(hid_t type, Where at) {
  if (H5Tdetect_class(type, H5T_REFERENCE) > 0)
    fail_at(ErrorKind::kUnsupported, at, "holds object or region references, which cannot be copied to another file");
}

// A fresh group-creation list with the settings of group `src`: how its links and
// attributes are stored (compact/dense thresholds, creation-order tracking) and sized.
// Not H5Gget_create_plist's list itself: in HDF5 1.10 that carries the source's link
// info message, heap addresses included, and a group created with it in another file
// points at the wrong fractal heap once it holds more than 8 links.
Handle group_creation(hid_t src, Where at) {
  Handle from = h5_own(H5Gget_create_plist(src), at, "cannot read group properties");
  Handle gcpl = h5_own(H5Pcreate(H5P_GROUP_CREATE), at, "cannot create property list");
  unsigned max_compact = 0, min_dense = 0, order = 0, est_entries = 0, est_name = 0;
  size_t heap_hint = 0;
  hbool_t track_times = 1;
  h5_check(H5Pget_link_phase_change(from.get(), &max_compact, &min_dense), at, "cannot read group properties");
  h5_check(H5Pset_link_phase_change(gcpl.get(), max_compact, min_dense), at, "cannot set group properties");
  h5_check(H5Pget_est_link_info(from.get(), &est_entries, &est_name), at, "cannot read group properties");
  h5_check(H5Pset_est_link_info(gcpl.get(), est_entries, est_name), at, "cannot set group properties");
  h5_check(H5Pget_link_creation_order(from.get(), &order), at, "cannot read group properties");
  h5_check(H5Pset_link_creation_order(gcpl.get(), order), at, "cannot set group properties");
  h5_check(H5Pget_local_heap_size_hint(from.get(), &heap_hint), at, "cannot read group properties");
  h5_check(H5Pset_local_heap_size_hint(gcpl.get(), heap_hint), at, "cannot set group properties");
  h5_check(H5Pget_attr_phase_change(from.get(), &max_compact, &min_dense), at, "cannot read group properties");
  h5_check(H5Pset_attr_phase_change(gcpl.get(), max_compact, min_dense), at, "cannot set group properties");
  h5_check(H5Pget_attr_creation_order(from.get(), &order), at, "cannot read group properties");
  h5_check(H5Pset_attr_creation_order(gcpl.get(), order), at, "cannot set group properties");
  h5_check(H5Pget_obj_track_times(from.get(), &track_times), at, "cannot read group properties");
  h5_check(H5Pset_obj_track_times(gcpl.get(), track_times), at, "cannot set group properties");
  return gcpl;
}

// The names of `group`'s links in ascending byte order.
std::vector<std::string> link_names(hid_t group, Where at) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  h5_check(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names), at, "cannot list group");
  return names;
}

// The names of `object`'s attributes in ascending byte order.
std::vector<std::string> attribute_names(hid_t object, Where at) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  hsize_t index = 0;
  h5_check(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &index, collect, &names), at, "cannot list attributes");
  return names;
}

// Zero-filled room for `points` values of `type` (zero: variable-length pointers
// start null, so a failed read reclaims nothing it did not allocate).
std::vector<unsigned char> value_buffer(hid_t type, uint64_t points, Where at) {
  const size_t element = H5Tget_size(type);
  if (element == 0) fail_io(at, "cannot read the element size");
  return std::vector<unsigned char>(static_cast<size_t>(points) * element);
}

void copy_attributes(hid_t src, Where src_at, hid_t dst, Where dst_at) {
  for (const std::string& name : attribute_names(src, src_at)) {
    const std::string label = fmt::format("{} (attribute '{}')", src_at.object, name);
    const Where at{src_at.file, label};
    Handle attr = h5_own(H5Aopen(src, name.c_str(), H5P_DEFAULT), at, "cannot open attribute");
    Handle type = copy_type(h5_own(H5Aget_type(attr.get()), at, "cannot read attribute type"), at);
    require_copyable_type(type.get(), at);
    Handle space = h5_own(H5Aget_space(attr.get()), at, "cannot read attribute dataspace");
    Handle acpl = h5_own(H5Aget_create_plist(attr.get()), at, "cannot read attribute properties");
    const hssize_t points = H5Sget_simple_extent_npoints(space.get());
    if (points < 0) fail_io(at, "cannot read attribute size");
    Handle copy = h5_own(H5Acreate2(dst, name.c_str(), type.get(), space.get(), acpl.get(), H5P_DEFAULT), dst_at,
                         fmt::format("cannot create attribute '{}'", name));
    if (points == 0) continue;
    std::vector<unsigned char> buffer = value_buffer(type.get(), static_cast<uint64_t>(points), at);
    std::optional<VlenReclaimer> reclaim;  // frees the strings read, after the write
    if (h5_type_has_vlen(type.get())) reclaim.emplace(type.get(), space.get(), buffer.data());
    h5_check(H5Aread(attr.get(), type.get(), buffer.data()), at, "cannot read attribute");
    h5_check(H5Awrite(copy.get(), type.get(), buffer.data()), dst_at, fmt::format("cannot write attribute '{}'", name));
  }
}

// Reads the selection `file_space` (all of it when H5S_ALL) of `src` into memory laid
// out as `mem_space` and writes it to the same selection of `dst`.
void copy_selection(hid_t src, hid_t dst, hid_t type, hid_t mem_space, hid_t file_space, uint64_t points, bool has_vlen,
                    Where src_at, Where dst_at) {
  std::vector<unsigned char> buffer = value_buffer(type, points, src_at);
  Handle own;  // the reclaimer needs the memory layout's space; H5S_ALL means the dataset's own
  std::optional<VlenReclaimer> reclaim;  // frees the strings read, after the write
  if (has_vlen) {
    if (mem_space == H5S_ALL) own = h5_own(H5Dget_space(src), src_at, "cannot read dataspace");
    reclaim.emplace(type, mem_space == H5S_ALL ? own.get() : mem_space, buffer.data());
  }
  h5_check(H5Dread(src, type, mem_space, file_space, H5P_DEFAULT, buffer.data()), src_at, "cannot read dataset");
  h5_check(H5Dwrite(dst, type, mem_space, file_space, H5P_DEFAULT, buffer.data()), dst_at, "cannot write dataset");
}

// Copies every element of `src` to `dst` (same type and extent): whole when it fits in
// one slab, else in slabs of whole chunks (or rows) along the first dimension.
void copy_elements(hid_t src, hid_t dst, hid_t type, hid_t dcpl, Where src_at, Where dst_at) {
  Handle space = h5_own(H5Dget_space(src), src_at, "cannot read dataspace");
  const hssize_t points = H5Sget_simple_extent_npoints(space.get());
  if (points < 0) fail_io(src_at, "cannot read dataspace size");
  if (points == 0) return;
  const bool has_vlen = h5_type_has_vlen(type);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail_io(src_at, "cannot read dataspace rank");
  const uint64_t element = H5Tget_size(type);
  if (rank == 0 || static_cast<uint64_t>(points) * element <= kSlabBytes) {
    copy_selection(src, dst, type, H5S_ALL, H5S_ALL, static_cast<uint64_t>(points), has_vlen, src_at, dst_at);
    return;
  }
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  h5_check(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), src_at, "cannot read dataspace dimensions");
  uint64_t row_elements = 1;
  for (size_t i = 1; i < dims.size(); ++i) row_elements *= dims[i];
  hsize_t step = std::max<hsize_t>(1, kSlabBytes / std::max<uint64_t>(1, row_elements * element));
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(static_cast<size_t>(rank));
    if (H5Pget_chunk(dcpl, rank, chunk.data()) != rank) fail_io(src_at, "cannot read chunk size");
    step = std::max<hsize_t>(chunk[0], step / chunk[0] * chunk[0]);
  }
  for (hsize_t first = 0; first < dims[0]; first += step) {
    std::vector<hsize_t> start(dims.size(), 0), count = dims;
    start[0] = first;
    count[0] = std::min(step, dims[0] - first);
    h5_check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), src_at,
             "cannot select rows");
    Handle mem = h5_own(H5Screate_simple(rank, count.data(), nullptr), src_at, "cannot create dataspace");
    copy_selection(src, dst, type, mem.get(), space.get(), count[0] * row_elements, has_vlen, src_at, dst_at);
  }
}

class TreeCopy {
 public:
  TreeCopy(std::string_view src_file, std::string_view dst_file) : src_file_(src_file), dst_file_(dst_file) {}

  void object(hid_t src, const std::string& src_path, hid_t dst_loc, const std::string& name, hid_t lcpl,
              const std::string& dst_path) {
    const Where src_at{src_file_, src_path};
    const Where dst_at{dst_file_, dst_path};
    const std::string key = h5_object_key(src);
    if (key.empty()) fail_io(src_at, "cannot read object header");
    if (const auto it = copied_.find(key); it != copied_.end()) {  // a second hard link
      h5_check(H5Lcreate_hard(dst_loc, it->second.c_str(), dst_loc, name.c_str(), lcpl, H5P_DEFAULT), dst_at,
               "cannot create link");
      return;
    }
    switch (H5Iget_type(src)) {
      case H5I_GROUP: {
        // Members listed before the copy exists: a group copied into itself (same file)
        // does not copy its own copy.
        const std::vector<std::string> names = link_names(src, src_at);
        Handle gcpl = group_creation(src, src_at);
        Handle copy =
            h5_own(H5Gcreate2(dst_loc, name.c_str(), lcpl, gcpl.get(), H5P_DEFAULT), dst_at, "cannot create group");
        copied_[key] = dst_path;
        copy_attributes(src, src_at, copy.get(), dst_at);
        members(src, src_path, names, copy.get(), dst_path);
        return;
      }
      case H5I_DATASET:
        dataset(src, src_at, dst_loc, name, lcpl, dst_at);
        copied_[key] = dst_path;
        return;
      case H5I_DATATYPE: {
        Handle type = h5_own(H5Tcopy(src), src_at, "cannot copy datatype");
        Handle tcpl = h5_own(H5Tget_create_plist(src), src_at, "cannot read datatype properties");
        h5_check(H5Tcommit2(dst_loc, name.c_str(), type.get(), lcpl, tcpl.get(), H5P_DEFAULT), dst_at,
                 "cannot commit datatype");
        copied_[key] = dst_path;
        copy_attributes(src, src_at, type.get(), dst_at);
        return;
      }
      default:
        fail_at(ErrorKind::kUnsupported, src_at, "is neither a group, a dataset nor a datatype: cannot copy it");
    }
  }

 private:
  void members(hid_t src, const std::string& src_path, const std::vector<std::string>& names, hid_t dst,
               const std::string& dst_path) {
    for (const std::string& name : names) {
      const std::string child_src = path_join(src_path, name);
      const std::string child_dst = path_join(dst_path, name);
      const Where at{src_file_, child_src};
      H5L_info_t link;
      h5_check(H5Lget_info(src, name.c_str(), &link, H5P_DEFAULT), at, "cannot read link");
      Handle lcpl = h5_own(H5Pcreate(H5P_LINK_CREATE), at, "cannot create property list");
      h5_check(H5Pset_char_encoding(lcpl.get(), link.cset), at, "cannot create property list");
      if (link.type == H5L_TYPE_HARD) {
        Handle child = h5_own(H5Oopen(src, name.c_str(), H5P_DEFAULT), at, "cannot open object");
        object(child.get(), child_src, dst, name, lcpl.get(), child_dst);
      } else if (link.type == H5L_TYPE_SOFT) {
        std::string target(link.u.val_size, '\0');
        h5_check(H5Lget_val(src, name.c_str(), target.data(), target.size(), H5P_DEFAULT), at, "cannot read link");
        target.resize(std::min(target.size(), target.find('\0')));
        h5_check(H5Lcreate_soft(target.c_str(), dst, name.c_str(), lcpl.get(), H5P_DEFAULT),
                 Where{dst_file_, child_dst}, "cannot create link");
      } else {
        fail_at(ErrorKind::kUnsupported, at, "is an external or user-defined link: cannot copy it");
      }
    }
  }

  void dataset(hid_t src, Where src_at, hid_t dst_loc, const std::string& name, hid_t lcpl, Where dst_at) {
    Handle type = copy_type(h5_own(H5Dget_type(src), src_at, "cannot read datatype"), src_at);
    require_copyable_type(type.get(), src_at);
    Handle space = h5_own(H5Dget_space(src), src_at, "cannot read dataspace");
    Handle dcpl = h5_own(H5Dget_create_plist(src), src_at, "cannot read creation properties");
    if (H5Pget_layout(dcpl.get()) == H5D_VIRTUAL)
      fail_at(ErrorKind::kUnsupported, src_at, "is a virtual dataset: cannot copy it");
    if (H5Pget_external_count(dcpl.get()) > 0)
      fail_at(ErrorKind::kUnsupported, src_at, "keeps its data in external files: cannot copy it");
    Handle copy = h5_own(H5Dcreate2(dst_loc, name.c_str(), type.get(), space.get(), lcpl, dcpl.get(), H5P_DEFAULT),
                         dst_at, "cannot create dataset");
    copy_elements(src, copy.get(), type.get(), dcpl.get(), src_at, dst_at);
    copy_attributes(src, src_at, copy.get(), dst_at);
  }

  std::string_view src_file_, dst_file_;
  std::map<std::string, std::string> copied_;  // source object key -> absolute path of its copy
};

}  // namespace

void h5_copy_tree(hid_t src, Where src_at, hid_t dst_loc, const std::string& name, hid_t lcpl, Where dst_at) {
  TreeCopy(src_at.file, dst_at.file)
      .object(src, std::string(src_at.object), dst_loc, name, lcpl, std::string(dst_at.object));
}

}  // namespace fk::h5::detail
