// Dataset-creation property lists (dcpl.h): chunking, shuffle + gzip where available,
// and the Fletcher32 checksum on every chunk.
#include "results/h5/detail/dcpl.h"

#include "results/h5/storage_policy.h"

namespace fk::h5::detail {

bool h5_deflate_available() {
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  unsigned flags = 0;
  if (H5Zget_filter_info(H5Z_FILTER_DEFLATE, &flags) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return (flags & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0 && (flags & H5Z_FILTER_CONFIG_DECODE_ENABLED) != 0;
}

Handle h5_chunked_dcpl(const std::vector<hsize_t>& chunk, Where where) {
  Handle dcpl = h5_own(H5Pcreate(H5P_DATASET_CREATE), where, "cannot create property list");
  h5_compact_attributes(dcpl.get(), where);
  h5_check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), where, "cannot set chunk size");
  if (h5_deflate_available()) {
    h5_check(H5Pset_shuffle(dcpl.get()), where, "cannot set shuffle filter");
    h5_check(H5Pset_deflate(dcpl.get(), kDeflateLevel), where, "cannot set gzip filter");
  }
  // Fletcher32 last, so it sums the chunk as stored (compressed): every read of a
  // chunk verifies it. (fk collect copies job files with copy_tree.h, not H5Ocopy,
  // which aborts on Fletcher32 chunks in HDF5 1.10.8.)
  h5_check(H5Pset_fletcher32(dcpl.get()), where, "cannot set Fletcher32 filter");
  return dcpl;
}

}  // namespace fk::h5::detail
