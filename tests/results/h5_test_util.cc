#include "h5_test_util.h"

#include "results/h5/object.h"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>

namespace fk::h5::testing {

namespace {

hid_t probe(hid_t id) {
  H5Idec_ref(id);
  return id;
}

// Ids strictly between `from` and `to` that are still open.
int64_t still_open_between(hid_t from, hid_t to) {
  int64_t open = 0;
  for (hid_t id = from + 1; id < to; ++id) open += H5Iis_valid(id) > 0 ? 1 : 0;
  return open;
}

}  // namespace

IdMark id_mark() {
  IdMark mark;
  mark.file_objects = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  mark.dataspace = probe(H5Screate(H5S_SCALAR));
  mark.plist = probe(H5Pcreate(H5P_DATASET_XFER));
  mark.datatype = probe(H5Tcopy(H5T_NATIVE_INT));
  return mark;
}

std::string id_leaks_since(const IdMark& since) {
  const IdMark now = id_mark();
  std::string leaks;
  if (now.file_objects != since.file_objects) {
    leaks += fmt::format("files/objects/datatypes open: {} -> {}; ", since.file_objects, now.file_objects);
  }
  const int64_t spaces = still_open_between(since.dataspace, now.dataspace);
  const int64_t plists = still_open_between(since.plist, now.plist);
  const int64_t types = still_open_between(since.datatype, now.datatype);
  if (spaces != 0) leaks += fmt::format("{} dataspace(s); ", spaces);
  if (plists != 0) leaks += fmt::format("{} property list(s); ", plists);
  if (types != 0) leaks += fmt::format("{} datatype(s); ", types);
  return leaks;
}

int64_t open_objects_in(const Object& object) {
  return H5Fget_obj_count(object.native_id(), H5F_OBJ_GROUP | H5F_OBJ_DATASET | H5F_OBJ_ATTR | H5F_OBJ_DATATYPE);
}

void H5Test::SetUp() {
  H5open();
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = std::filesystem::temp_directory_path() /
         fmt::format("fk_h5_{}_{}_{}", info->test_suite_name(), info->name(), ::getpid());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
  mark_ = id_mark();
}

void H5Test::TearDown() {
  EXPECT_EQ(id_leaks_since(mark_), "") << "HDF5 ids leaked";
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<std::string> H5Test::dir_entries() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string expect_error(ErrorKind kind, const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_EQ(error_kind_name(e.kind()), error_kind_name(kind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected fk::Error (" << error_kind_name(kind) << "), nothing was thrown";
  return {};
}

}  // namespace fk::h5::testing
