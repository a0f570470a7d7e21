// Internal to fk::h5: dataset-creation property lists for chunked, compressed storage.
#pragma once

#include "results/h5/detail/call.h"

#include <vector>

namespace fk::h5::detail {

// True when this HDF5 library can both encode and decode gzip (deflate).
bool h5_deflate_available();

// A dataset-creation property list with `chunk` dimensions, plus byte-shuffle and
// gzip (storage_policy.h's kDeflateLevel) where h5_deflate_available(), and always the
// Fletcher32 checksum filter (built into every HDF5), applied last: a damaged chunk
// fails to read ("data error detected by Fletcher32 checksum"). Attributes stay
// compact (h5_compact_attributes).
Handle h5_chunked_dcpl(const std::vector<hsize_t>& chunk, Where where);

}  // namespace fk::h5::detail
