// Shared fixture for the fk::h5 tests: a fresh folder per test and a leak check.
//
// H5Test::TearDown fails the test when an HDF5 identifier opened during the test is
// still open, on every path including those that threw. HDF5 1.10 cannot count ids of
// its own types (H5Inmembers refuses them), so the check combines two probes:
//  - H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL): open files and the groups, datasets,
//    attributes and datatypes (transient ones too) still open;
//  - id ranges: ids of one type are numbered consecutively, so the dataspace, property
//    list and datatype ids issued between SetUp and TearDown are probed one by one with
//    H5Iis_valid.
// Objects of a file closed with H5F_CLOSE_STRONG are closed with it; tests that care
// about ids held while a file is open use open_objects_in().
#pragma once

#include "core/error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fk::h5 {
class Object;
}

namespace fk::h5::testing {

// A point in HDF5's id sequences, to compare against later.
struct IdMark {
  int64_t file_objects = 0;  // H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL)
  int64_t dataspace = 0;     // a freshly issued (and closed) id of each type
  int64_t plist = 0;
  int64_t datatype = 0;
};
IdMark id_mark();
// "" when nothing opened after `since` is still open; else what leaked.
std::string id_leaks_since(const IdMark& since);

// Groups, datasets, attributes and named datatypes open in the file of `object`
// (the file id itself not counted).
int64_t open_objects_in(const Object& object);

class H5Test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // A path inside this test's folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Names of the entries of this test's folder, sorted.
  std::vector<std::string> dir_entries() const;

  std::filesystem::path dir_;

 private:
  IdMark mark_;
};

// Runs `body`, expects it to throw fk::Error of `kind`, and returns what().
std::string expect_error(ErrorKind kind, const std::function<void()>& body);

}  // namespace fk::h5::testing
