// Handle: the RAII owner of one HDF5 identifier (file, group, dataset, attribute,
// datatype, dataspace or property list), without exposing hdf5.h.
//
// hid_t is int64_t in every HDF5 we build against (1.10 and later; handle.cc checks
// it at compile time), so the id is stored as int64_t and public headers stay free of
// HDF5. Invariants: a handle owns at most one reference to its id and drops it
// exactly once (destructor, reset() or move-assignment); a negative id means "none".
// Ids that HDF5 already invalidated (a file closed with H5F_CLOSE_STRONG closes every
// object in it) are recognised and not released twice. Never throws.
//
// A close that fails (HDF5 1.10: a file whose last flush hit a full disk) leaves an id
// that looks valid but points at freed memory. Such an id is dropped, never released
// again — and HDF5's own clean-up at process exit, which would release it and crash,
// is replaced by the layer's (handle.cc): H5close at exit unless a close has failed.
#pragma once

#include <cstdint>
#include <utility>

namespace fk::h5 {

class Handle {
 public:
  Handle() = default;
  // Takes ownership of `id` (one reference). A negative id gives an empty handle.
  explicit Handle(int64_t id) noexcept : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)) {}
  Handle& operator=(Handle&& other) noexcept;
  ~Handle() { reset(); }

  int64_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Drops the reference (if any, and if HDF5 still knows the id); the handle is empty after.
  void reset() noexcept;
  // Gives up ownership without releasing; the caller closes the returned id.
  int64_t release() noexcept { return std::exchange(id_, -1); }

 private:
  int64_t id_ = -1;
};

// Records that HDF5 failed to close an id (see above): the process's exit then skips
// HDF5's clean-up. Called by Handle::reset and h5_close_file; idempotent, never throws.
void handle_note_failed_close() noexcept;

}  // namespace fk::h5
