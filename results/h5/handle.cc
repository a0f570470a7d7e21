#include "results/h5/handle.h"

#include <hdf5.h>

#include <atomic>
#include <cstdlib>
#include <type_traits>

namespace fk::h5 {

static_assert(std::is_same_v<hid_t, int64_t>, "fk::h5 stores hid_t as int64_t (HDF5 >= 1.10)");

namespace {

std::atomic<bool> g_close_failed{false};

void close_library_at_exit() {
  if (!g_close_failed.load()) H5close();
}

// Before main, so before the first HDF5 call: HDF5 registers its own exit-time H5close
// when it initialises unless told not to. If something initialised it earlier anyway,
// H5dont_atexit fails and HDF5's clean-up stays.
[[maybe_unused]] const bool g_exit_hook = [] {
  if (H5dont_atexit() >= 0) std::atexit(close_library_at_exit);
  return true;
}();

}  // namespace

void handle_note_failed_close() noexcept { g_close_failed.store(true); }

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
  // A failed release (a file's final flush failed) may leave the id dangling.
  if (H5Iis_valid(id) > 0 && H5Idec_ref(id) < 0) handle_note_failed_close();
  H5Eclear2(H5E_DEFAULT);
}

}  // namespace fk::h5
