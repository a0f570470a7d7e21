#include "results/h5/handle.h"

#include <hdf5.h>

#include <type_traits>

namespace fk::h5 {

static_assert(std::is_same_v<hid_t, int64_t>, "fk::h5 stores hid_t as int64_t (HDF5 >= 1.10)");

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, -1);
  }
  return *this;
}

void Handle::reset() noexcept {
  const hid_t id = std::exchange(id_, -1);
  if (id < 0) return;
  // A strong file close may already have invalidated the id: releasing it again would
  // only push an error onto the stack. H5Idec_ref closes any kind of id at zero.
  if (H5Iis_valid(id) > 0) H5Idec_ref(id);
  H5Eclear2(H5E_DEFAULT);
}

}  // namespace fk::h5
