// Groups: nested creation, existence checks, kinds, listing, and opening files for
// read or update.
#include "h5_test_util.h"
#include "results/h5/h5.h"

namespace fk::h5 {
namespace {

using testing::expect_error;

class GroupTest : public testing::H5Test {};

TEST_F(GroupTest, NestedGroupsExistenceAndKinds) {
  Writer w(path("groups.h5"));
  Group timings = w.create_group("kernel_stage/timings");
  EXPECT_EQ(timings.path(), "/kernel_stage/timings");
  timings.write_array("t", std::vector<double>{1});
  EXPECT_TRUE(w.exists("kernel_stage"));
  EXPECT_TRUE(w.exists("kernel_stage/timings"));
  EXPECT_TRUE(w.exists("/kernel_stage/timings/t"));
  EXPECT_TRUE(w.exists("kernel_stage/timings/t/"));
  EXPECT_TRUE(w.exists("/"));
  EXPECT_TRUE(timings.exists("t"));
  EXPECT_FALSE(w.exists("t"));
  EXPECT_FALSE(w.exists("model_stage/x/y"));                // missing intermediate
  EXPECT_FALSE(w.exists("kernel_stage/timings/t/inside"));  // below a dataset
  EXPECT_EQ(w.kind("kernel_stage"), ObjectKind::kGroup);
  EXPECT_EQ(w.kind("kernel_stage/timings/t"), ObjectKind::kDataset);
  const std::string what = expect_error(ErrorKind::kNotFound, [&] { (void)w.kind("nope/deeper"); });
  EXPECT_NE(what.find("/nope/deeper"), std::string::npos) << what;
}

TEST_F(GroupTest, ChildrenAreSortedByName) {
  Writer w(path("children.h5"));
  w.create_group("zeta");
  w.create_group("alpha/inner");
  w.write_array("Mid", std::vector<int32_t>{1});
  w.write_table("beta", Table().add_column("x", std::vector<double>{1}));
  EXPECT_EQ(w.children(), (std::vector<std::string>{"Mid", "alpha", "beta", "zeta"}));
  EXPECT_EQ(w.open_group("alpha").children(), std::vector<std::string>{"inner"});
  EXPECT_TRUE(w.open_group("alpha/inner").children().empty());
}

TEST_F(GroupTest, CreateOpenAndRequire) {
  const std::string target = path("require.h5");
  Writer w(target);
  Group a = w.require_group("a/b");
  a.set_attr("mark", 1);
  Group again = w.require_group("a/b");
  EXPECT_EQ(again.attr<int64_t>("mark"), 1);
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { w.create_group("a/b"); });
  EXPECT_NE(what.find("already exists"), std::string::npos) << what;
  w.write_array("a/data", std::vector<double>{1});
  what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.open_group("a/data"); });
  EXPECT_NE(what.find("not a group"), std::string::npos) << what;
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.require_group("a/data"); });
  what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.open_dataset("a/b"); });
  EXPECT_NE(what.find("not a dataset"), std::string::npos) << what;
  what = expect_error(ErrorKind::kNotFound, [&] { (void)w.open_group("a/missing"); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_NE(what.find("/a/missing"), std::string::npos) << what;
}

TEST_F(GroupTest, FileOpenUpdateAddsInPlace) {
  const std::string target = path("update.h5");
  {
    Writer w(target);
    w.create_group("g");
    w.commit();
  }
  {
    File f = File::open_update(target);
    f.open_group("g").set_attr("added", "later");
    f.write_array("g/x", std::vector<int64_t>{3});
    f.close();
    expect_error(ErrorKind::kIo, [&] { (void)f.children(); });
  }
  File f = File::open_read(target);
  EXPECT_EQ(f.open_group("g").attr<std::string>("added"), "later");
  EXPECT_EQ(f.read_array<int64_t>("g/x"), std::vector<int64_t>{3});
  // Read-only files refuse writes with an HDF5 reason.
  const std::string what = expect_error(ErrorKind::kIo, [&] { f.set_attr("nope", 1); });
  EXPECT_NE(what.find(target), std::string::npos) << what;
}

}  // namespace
}  // namespace fk::h5
