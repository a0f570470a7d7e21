// copy_object / remove_object: whole files copied into a group of another file keep
// every group, dataset (with its storage: chunks, gzip, Fletcher32), table, link and
// attribute (variable-length strings, compounds, many of them); failures name the
// places and leave nothing half-copied.
#include "h5_test_util.h"
#include "results/h5/detail/call.h"
#include "results/h5/h5.h"

#include <hdf5.h>

#include <cstring>
#include <fstream>

namespace fk::h5 {
namespace {

using testing::expect_error;

class CopyTest : public testing::H5Test {
 protected:
  // A small "job file": root attributes, a nested table, a compressed array.
  std::string write_source(const std::string& name) {
    const std::string p = path(name);
    Writer w(p);
    w.set_attr("format", "fastkernels-job");
    w.set_attr("ranks", 4);
    w.set_attr("complete", true);
    w.set_attr("hosts", std::vector<std::string>{"a", "b"});
    Group ks = w.require_group("kernel_stage");
    ks.set_attr("iterations", 20);
    ks.write_table("instances", Table()
                                    .add_column("op", std::vector<std::string>{"rms_norm", "linear"})
                                    .add_column("median_s", std::vector<double>{1e-5, 2e-4})
                                    .add_column("passed", std::vector<bool>{true, false}));
    std::vector<double> big(20000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i % 97);
    w.write_array("kernel_stage/timings/0000", big, Shape{4, 5000});
    w.commit();
    return p;
  }
};

TEST_F(CopyTest, WholeFileBecomesAGroupWithEverything) {
  const std::string src = write_source("job.h5");
  const std::string dst = path("campaign.h5");
  {
    File in = File::open_read(src);
    Writer w(dst);
    copy_object(in, ".", w, "jobs/abc");
    copy_object(in, "kernel_stage/instances", w, "tables/instances");
    w.commit();
  }
  File f = File::open_read(dst);
  const Group job = f.open_group("jobs/abc");
  EXPECT_EQ(job.attr<std::string>("format"), "fastkernels-job");
  EXPECT_EQ(job.attr<int64_t>("ranks"), 4);
  EXPECT_TRUE(job.attr<bool>("complete"));
  EXPECT_EQ(job.attr<std::vector<std::string>>("hosts"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(job.open_group("kernel_stage").attr<int64_t>("iterations"), 20);
  const Table t = job.read_table("kernel_stage/instances");
  EXPECT_EQ(t.column<std::string>("op"), (std::vector<std::string>{"rms_norm", "linear"}));
  EXPECT_EQ(t.column<bool>("passed"), (std::vector<bool>{true, false}));
  const Dataset d = job.open_dataset("kernel_stage/timings/0000");
  EXPECT_EQ(d.shape(), (Shape{4, 5000}));
  EXPECT_TRUE(d.storage().compressed);  // copied as stored
  const std::vector<double> v = d.read<double>();
  EXPECT_EQ(v[96], 96.0);
  EXPECT_EQ(v[97], 0.0);
  EXPECT_EQ(f.read_table("tables/instances").column<double>("median_s"), (std::vector<double>{1e-5, 2e-4}));
}

// What fk::h5 does not write itself but a job file from elsewhere may hold, added with
// the HDF5 API: a compound attribute with a string member, dense attribute storage
// (more than 8 variable-length-string attributes), a soft link, a second hard link, an
// extensible dataset with no rows yet, a committed datatype.
void add_raw_objects(hid_t file) {
  struct Pair {
    int64_t n;
    char* name;
  };
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  H5Tset_cset(str, H5T_CSET_UTF8);
  hid_t pair = H5Tcreate(H5T_COMPOUND, sizeof(Pair));
  H5Tinsert(pair, "n", HOFFSET(Pair, n), H5T_NATIVE_INT64);
  H5Tinsert(pair, "name", HOFFSET(Pair, name), str);
  const hsize_t two[1] = {2};
  hid_t space2 = H5Screate_simple(1, two, nullptr);
  std::string a = "alpha", b = "beta";
  Pair values[2] = {{1, a.data()}, {2, b.data()}};
  hid_t attr = H5Acreate2(file, "pairs", pair, space2, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, pair, values);
  H5Aclose(attr);

  hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_attr_phase_change(gcpl, 0, 0);  // dense from the first attribute
  hid_t dense = H5Gcreate2(file, "dense", H5P_DEFAULT, gcpl, H5P_DEFAULT);
  hid_t scalar = H5Screate(H5S_SCALAR);
  for (int i = 0; i < 12; ++i) {
    std::string value = "value " + std::to_string(i);
    const char* p = value.c_str();
    hid_t s = H5Acreate2(dense, ("s" + std::to_string(i)).c_str(), str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(s, str, &p);
    H5Aclose(s);
  }
  H5Lcreate_hard(file, "/kernel_stage/timings/0000", dense, "timings_hard", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_soft("timings_hard", dense, "timings_soft", H5P_DEFAULT, H5P_DEFAULT);
  hid_t named = H5Tcopy(H5T_STD_I32LE);
  H5Tcommit2(dense, "int32", named, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

  const hsize_t zero[1] = {0}, unlimited[1] = {H5S_UNLIMITED}, chunk[1] = {16};
  hid_t space0 = H5Screate_simple(1, zero, unlimited);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  H5Pset_fletcher32(dcpl);
  H5Pset_attr_phase_change(dcpl, 0, 0);  // a dataset with dense attributes too
  hid_t empty = H5Dcreate2(dense, "empty", named, space0, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  for (int i = 0; i < 10; ++i) {
    const int64_t v = i;
    hid_t n = H5Acreate2(empty, ("a" + std::to_string(i)).c_str(), H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(n, H5T_NATIVE_INT64, &v);
    H5Aclose(n);
  }
  for (hid_t id : {empty, named, dense}) H5Oclose(id);
  for (hid_t id : {space0, space2, scalar}) H5Sclose(id);
  for (hid_t id : {dcpl, gcpl}) H5Pclose(id);
  for (hid_t id : {pair, str}) H5Tclose(id);
}

TEST_F(CopyTest, KeepsStorageLinksAndEveryAttributeType) {
  const std::string src = path("job.h5");
  {
    Writer w(src);
    w.set_attr("format", "fastkernels-job");
    w.write_table("kernel_stage/instances", Table().add_column("op", std::vector<std::string>{"rms_norm", "linear"}));
    w.write_array("kernel_stage/timings/0000", std::vector<double>{1, 2, 3});
    std::vector<float> big(size_t{5} << 20);  // 20 MiB: copied in slabs
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1013);
    w.write_array("big", big, Shape{5120, 1024});
    for (int i = 0; i < 12; ++i)  // more than 8 links: dense link storage (a fractal heap)
      w.write_array(fmt::format("many/{:02}", i), std::vector<int64_t>{i});
    add_raw_objects(w.native_id());
    w.commit();
  }
  const std::string dst = path("campaign.h5");
  {
    File in = File::open_read(src);
    Writer w(dst);
    copy_object(in, ".", w, "jobs/abc");
    w.commit();
  }
  File f = File::open_read(dst);
  const Group job = f.open_group("jobs/abc");
  EXPECT_EQ(job.attr<std::string>("format"), "fastkernels-job");
  const StorageInfo table = job.open_dataset("kernel_stage/instances").storage();
  EXPECT_TRUE(table.chunked);
  EXPECT_TRUE(table.checksummed) << "Fletcher32 kept";
  const Dataset big = job.open_dataset("big");
  EXPECT_EQ(big.storage().chunk, File::open_read(src).open_dataset("big").storage().chunk);
  EXPECT_TRUE(big.storage().compressed && big.storage().checksummed);
  const std::vector<float> v = big.read<float>();
  ASSERT_EQ(v.size(), size_t{5} << 20);
  EXPECT_EQ(v[1013 * 3000 + 7], 7.0f);
  EXPECT_EQ(v.back(), static_cast<float>((v.size() - 1) % 1013));
  EXPECT_EQ(job.open_group("many").children().size(), 12u);
  EXPECT_EQ(job.read_array<int64_t>("many/11"), std::vector<int64_t>{11});
  EXPECT_EQ(job.read_table("kernel_stage/instances").column<std::string>("op"),
            (std::vector<std::string>{"rms_norm", "linear"}));
  const Group dense = job.open_group("dense");
  EXPECT_EQ(dense.attr_names().size(), 12u);
  EXPECT_EQ(dense.attr<std::string>("s11"), "value 11");
  EXPECT_EQ(dense.read_array<double>("timings_soft"), (std::vector<double>{1, 2, 3})) << "the soft link resolves";
  EXPECT_EQ(dense.read_array<double>("timings_hard"), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(dense.open_dataset("empty").size(), 0);
  EXPECT_EQ(dense.open_dataset("empty").attr<int64_t>("a9"), 9);
  EXPECT_TRUE(dense.open_dataset("empty").storage().checksummed);

  // The raw view: the compound attribute's strings, the second hard link, the link kinds.
  hid_t g = job.native_id();
  hid_t attr = H5Aopen(g, "pairs", H5P_DEFAULT);
  hid_t type = H5Aget_type(attr);
  ASSERT_EQ(H5Tget_class(type), H5T_COMPOUND);
  struct Pair {
    int64_t n;
    char* name;
  } values[2] = {};
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  hid_t mem = H5Tcreate(H5T_COMPOUND, sizeof(Pair));
  H5Tinsert(mem, "n", HOFFSET(Pair, n), H5T_NATIVE_INT64);
  H5Tinsert(mem, "name", HOFFSET(Pair, name), str);
  ASSERT_GE(H5Aread(attr, mem, values), 0);
  EXPECT_EQ(values[1].n, 2);
  EXPECT_STREQ(values[0].name, "alpha");
  EXPECT_STREQ(values[1].name, "beta");
  hid_t space = H5Aget_space(attr);
  H5Dvlen_reclaim(mem, space, H5P_DEFAULT, values);
  H5L_info_t link;
  ASSERT_GE(H5Lget_info(g, "dense/timings_soft", &link, H5P_DEFAULT), 0);
  EXPECT_EQ(link.type, H5L_TYPE_SOFT);
  hid_t hard = H5Oopen(g, "dense/timings_hard", H5P_DEFAULT);
  hid_t first = H5Oopen(g, "kernel_stage/timings/0000", H5P_DEFAULT);
  EXPECT_EQ(detail::h5_object_key(hard), detail::h5_object_key(first)) << "one dataset with two links, not two copies";
  for (hid_t id : {hard, first}) H5Oclose(id);
  H5Sclose(space);
  for (hid_t id : {mem, str, type}) H5Tclose(id);
  H5Aclose(attr);
}

TEST_F(CopyTest, RefusesExistingDestinationAndMissingSource) {
  const std::string src = write_source("job.h5");
  File in = File::open_read(src);
  Writer w(path("out.h5"));
  copy_object(in, ".", w, "jobs/a");
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { copy_object(in, ".", w, "jobs/a"); });
  EXPECT_NE(what.find("/jobs/a"), std::string::npos) << what;
  EXPECT_NE(what.find("already exists"), std::string::npos) << what;
  what = expect_error(ErrorKind::kNotFound, [&] { copy_object(in, "model_stage", w, "jobs/b"); });
  EXPECT_NE(what.find("/model_stage"), std::string::npos) << what;
  EXPECT_FALSE(w.exists("jobs/b"));
  expect_error(ErrorKind::kInvalidArgument, [&] { copy_object(in, ".", w, ""); });
}

TEST_F(CopyTest, RemoveObjectUnlinksAGroup) {
  const std::string src = write_source("job.h5");
  File in = File::open_read(src);
  Writer w(path("out.h5"));
  copy_object(in, ".", w, "jobs/a");
  copy_object(in, ".", w, "jobs/b");
  remove_object(w, "jobs/a");
  EXPECT_EQ(w.open_group("jobs").children(), std::vector<std::string>{"b"});
  expect_error(ErrorKind::kNotFound, [&] { remove_object(w, "jobs/a"); });
  expect_error(ErrorKind::kInvalidArgument, [&] { remove_object(w, ""); });
}

}  // namespace
}  // namespace fk::h5
