// No HDF5 id outlives the object that owns it, on success and on every failure path.
// First proves the fixture's detector sees each kind of leak, then drives the layer
// through its error paths with a file open and counts what is still open in it.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <hdf5.h>

namespace fk::h5 {
namespace {

using testing::expect_error;
using testing::id_leaks_since;
using testing::id_mark;
using testing::open_objects_in;

class LeakTest : public testing::H5Test {};

TEST_F(LeakTest, DetectorSeesLeakedDataspacesPlistsTypesAndObjects) {
  const testing::IdMark mark = id_mark();
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t plist = H5Pcreate(H5P_LINK_CREATE);
  const hid_t type = H5Tcopy(H5T_NATIVE_DOUBLE);
  const std::string leaks = id_leaks_since(mark);
  EXPECT_NE(leaks.find("1 dataspace(s)"), std::string::npos) << leaks;
  EXPECT_NE(leaks.find("1 property list(s)"), std::string::npos) << leaks;
  EXPECT_NE(leaks.find("1 datatype(s)"), std::string::npos) << leaks;
  H5Sclose(space);
  H5Pclose(plist);
  H5Tclose(type);
  EXPECT_EQ(id_leaks_since(mark), "");

  Writer w(path("leak.h5"));
  const hid_t group = H5Gcreate2(w.native_id(), "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  EXPECT_EQ(open_objects_in(w), 1);
  H5Gclose(group);
  EXPECT_EQ(open_objects_in(w), 0);
}

TEST_F(LeakTest, HandleReleasesItsIdOnceAndSurvivesStaleIds) {
  hid_t id = H5Tcopy(H5T_NATIVE_INT);
  {
    Handle h(id);
    Handle moved(std::move(h));
    EXPECT_FALSE(h.valid());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(moved.get(), id);
  }
  EXPECT_LE(H5Iis_valid(id), 0);
  id = H5Tcopy(H5T_NATIVE_INT);
  Handle stale(id);
  H5Tclose(id);  // closed behind the handle's back: reset must not fail or double-close
  stale.reset();
  EXPECT_FALSE(stale.valid());
}

TEST_F(LeakTest, FailurePathsLeaveNothingOpenInTheFile) {
  Writer w(path("paths.h5"));
  w.set_attr("s", "text");
  w.write_array("a/data", std::vector<double>{1, 2});
  Table t;
  t.add_column("x", std::vector<double>{1}).add_column("s", std::vector<std::string>{"v"});
  w.write_table("a/table", t);
  EXPECT_EQ(open_objects_in(w), 0);

  for (int round = 0; round < 3; ++round) {
    expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.attr<double>("s"); });
    expect_error(ErrorKind::kNotFound, [&] { (void)w.attr<double>("missing"); });
    expect_error(ErrorKind::kNotFound, [&] { (void)w.read_array<double>("a/missing"); });
    expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_array<int64_t>("a/data"); });
    expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_table("a/data"); });
    expect_error(ErrorKind::kIo, [&] { w.create_group("a/data/below"); });
    expect_error(ErrorKind::kInvalidArgument, [&] { w.write_array("a/data", std::vector<double>{1}); });
    Table wrong;
    wrong.add_column("x", std::vector<int64_t>{1}).add_column("s", std::vector<std::string>{"v"});
    expect_error(ErrorKind::kInvalidArgument, [&] { w.append_table("a/table", wrong); });
    Table nul;
    nul.add_column("x", std::vector<double>{1}).add_column("s", std::vector<std::string>{std::string(1, '\0')});
    expect_error(ErrorKind::kInvalidArgument, [&] { w.append_table("a/table", nul); });
    // Successful reads and appends in between.
    EXPECT_EQ(w.read_table("a/table").rows(), static_cast<size_t>(round + 1));
    w.append_table("a/table", t);
    EXPECT_EQ(w.attr<std::string>("s"), "text");
    EXPECT_EQ(w.children(), (std::vector<std::string>{"a"}));
    EXPECT_EQ(open_objects_in(w), 0) << "round " << round;
  }
  {
    Group g = w.open_group("a");
    Dataset d = g.open_dataset("data");
    EXPECT_EQ(open_objects_in(w), 2);
  }
  EXPECT_EQ(open_objects_in(w), 0);
}

}  // namespace
}  // namespace fk::h5
