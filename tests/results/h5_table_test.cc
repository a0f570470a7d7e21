// Tables: the builder's rules, round trips of every column type as one compound
// dataset, zero-row tables, non-ASCII strings, and appending rows.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <hdf5.h>

namespace fk::h5 {
namespace {

using testing::expect_error;

const std::string kUnicode = "\u00b5s \u2192 \u03a9 \u65e5\u672c \U0001F680";

Table sample(int64_t first, size_t rows) {
  std::vector<double> ms;
  std::vector<int64_t> id;
  std::vector<int32_t> tp;
  std::vector<std::string> op;
  std::vector<bool> passed;
  for (size_t r = 0; r < rows; ++r) {
    const int64_t k = first + static_cast<int64_t>(r);
    ms.push_back(0.5 * static_cast<double>(k));
    id.push_back(k * 1000000007LL);
    tp.push_back(static_cast<int32_t>(k % 8));
    op.push_back(k % 3 == 0 ? kUnicode : "op_" + std::to_string(k));
    passed.push_back(k % 2 == 0);
  }
  Table t;
  t.add_column("median_ms", ms).add_column("id", id).add_column("tp", tp);
  t.add_column("op", op).add_column("passed", passed);
  return t;
}

void expect_same(const Table& a, const Table& b) {
  ASSERT_EQ(a.column_names(), b.column_names());
  ASSERT_EQ(a.rows(), b.rows());
  for (const std::string& name : a.column_names()) {
    ASSERT_EQ(a.column_type(name), b.column_type(name)) << name;
  }
  EXPECT_EQ(a.column<double>("median_ms"), b.column<double>("median_ms"));
  EXPECT_EQ(a.column<int64_t>("id"), b.column<int64_t>("id"));
  EXPECT_EQ(a.column<int32_t>("tp"), b.column<int32_t>("tp"));
  EXPECT_EQ(a.column<std::string>("op"), b.column<std::string>("op"));
  EXPECT_EQ(a.column<bool>("passed"), b.column<bool>("passed"));
}

TEST(TableBuilder, EnforcesItsInvariants) {
  Table t;
  EXPECT_EQ(t.rows(), 0u);
  t.add_column("a", std::vector<double>{1, 2});
  EXPECT_EQ(t.rows(), 2u);
  std::string what;
  try {
    t.add_column("b", std::vector<int64_t>{1});
  } catch (const Error& e) {
    what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
  EXPECT_NE(what.find("'b' has 1 values but the table has 2 rows"), std::string::npos) << what;
  EXPECT_THROW(t.add_column("a", std::vector<int32_t>{1, 2}), Error);
  EXPECT_THROW(t.add_column("", std::vector<int32_t>{1, 2}), Error);
  EXPECT_EQ(t.num_columns(), 1u);
  EXPECT_EQ(t.column_type("a"), ColumnType::kF64);
  try {
    (void)t.column<int64_t>("a");
    ADD_FAILURE() << "reading a float64 column as int64 must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("float64, not int64"), std::string::npos) << e.what();
  }
  try {
    (void)t.column<double>("zz");
    ADD_FAILURE() << "a missing column must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
  }
}

class TableTest : public testing::H5Test {};

TEST_F(TableTest, RoundTripOfEveryColumnType) {
  const std::string target = path("table.h5");
  const Table written = sample(0, 10);
  {
    Writer w(target);
    Dataset d = w.write_table("kernel_stage/timings/ops", written);
    EXPECT_TRUE(d.is_table());
    d.set_attr("unit", "ms");
    w.commit();
  }
  File f = File::open_read(target);
  const Table read = f.read_table("kernel_stage/timings/ops");
  expect_same(written, read);
  EXPECT_EQ(read.column<std::string>("op")[0], kUnicode);
  Dataset d = f.open_dataset("kernel_stage/timings/ops");
  EXPECT_EQ(d.attr<std::string>("unit"), "ms");
  EXPECT_EQ(d.shape(), Shape{10});
  EXPECT_TRUE(d.storage().chunked);
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)d.dtype(); });
}

TEST_F(TableTest, ZeroRowTableKeepsItsColumns) {
  const std::string target = path("empty.h5");
  const Table written = sample(0, 0);
  {
    Writer w(target);
    w.write_table("empty", written);
    w.commit();
  }
  const Table read = File::open_read(target).read_table("empty");
  EXPECT_EQ(read.rows(), 0u);
  expect_same(written, read);
}

TEST_F(TableTest, TableWithoutColumnsIsRejected) {
  Writer w(path("none.h5"));
  const std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { w.write_table("t", Table()); });
  EXPECT_NE(what.find("/t"), std::string::npos) << what;
  EXPECT_FALSE(w.exists("t"));
}

TEST_F(TableTest, StringsWithNulAreRejected) {
  Writer w(path("nul.h5"));
  Table t;
  t.add_column("s", std::vector<std::string>{"ok", std::string("a\0b", 3)});
  const std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { w.write_table("t", t); });
  EXPECT_NE(what.find("column 's' row 1"), std::string::npos) << what;
}

TEST_F(TableTest, AppendRowsInAnyColumnOrder) {
  const std::string target = path("append.h5");
  {
    Writer w(target);
    w.write_table("t", sample(0, 3));
    EXPECT_EQ(w.append_table("t", sample(3, 2)), 5u);
    // Same columns, other order.
    const Table more = sample(5, 4);
    Table reordered;
    reordered.add_column("passed", more.column<bool>("passed"))
        .add_column("op", more.column<std::string>("op"))
        .add_column("tp", more.column<int32_t>("tp"))
        .add_column("id", more.column<int64_t>("id"))
        .add_column("median_ms", more.column<double>("median_ms"));
    EXPECT_EQ(w.append_table("t", reordered), 9u);
    EXPECT_EQ(w.append_table("t", sample(9, 0)), 9u);
    w.commit();
  }
  expect_same(File::open_read(target).read_table("t"), sample(0, 9));
}

TEST_F(TableTest, AppendToZeroRowTableAndAfterReopening) {
  const std::string target = path("grow.h5");
  {
    Writer w(target);
    w.write_table("t", sample(0, 0));
    w.append_table("t", sample(0, 1));
    w.commit();
  }
  {
    File f = File::open_update(target);
    EXPECT_EQ(f.append_table("t", sample(1, 200)), 201u);
  }
  expect_same(File::open_read(target).read_table("t"), sample(0, 201));
}

TEST_F(TableTest, AppendWithOtherColumnsIsRejectedAndChangesNothing) {
  const std::string target = path("mismatch.h5");
  Writer w(target);
  Table base;
  base.add_column("a", std::vector<double>{1}).add_column("b", std::vector<int64_t>{2});
  w.write_table("t", base);

  Table missing;
  missing.add_column("a", std::vector<double>{3});
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { w.append_table("t", missing); });
  EXPECT_NE(what.find("lack column 'b'"), std::string::npos) << what;

  Table extra = base;
  extra.add_column("c", std::vector<bool>{true});
  what = expect_error(ErrorKind::kInvalidArgument, [&] { w.append_table("t", extra); });
  EXPECT_NE(what.find("no column 'c'"), std::string::npos) << what;

  Table retyped;
  retyped.add_column("a", std::vector<double>{3}).add_column("b", std::vector<int32_t>{4});
  what = expect_error(ErrorKind::kInvalidArgument, [&] { w.append_table("t", retyped); });
  EXPECT_NE(what.find("'b' is stored as int64, the rows hold int32"), std::string::npos) << what;
  EXPECT_NE(what.find(target), std::string::npos) << what;

  EXPECT_EQ(w.read_table("t").rows(), 1u);
}

TEST_F(TableTest, LargeTableRoundTrips) {
  const std::string target = path("large.h5");
  const Table written = sample(0, 100000);
  {
    Writer w(target);
    w.write_table("big", written);
    w.commit();
  }
  File f = File::open_read(target);
  expect_same(written, f.read_table("big"));
  const StorageInfo info = f.open_dataset("big").storage();
  EXPECT_TRUE(info.compressed);
  ASSERT_EQ(info.chunk.size(), 1u);
  EXPECT_GT(info.chunk[0], kTableMinChunkRows);
}

TEST_F(TableTest, NonTablesAreNotReadAsTables) {
  Writer w(path("not.h5"));
  w.write_array("a", std::vector<double>{1});
  w.create_group("g");
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_table("a"); });
  EXPECT_NE(what.find("not a table"), std::string::npos) << what;
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_table("g"); });
  expect_error(ErrorKind::kNotFound, [&] { (void)w.read_table("none"); });
}

// A table written by another tool with fixed-length strings and small integers reads.
TEST_F(TableTest, ReadsForeignMemberTypes) {
  const std::string target = path("foreign.h5");
  {
    Writer w(target);
    w.commit();
  }
  {
    hid_t file = H5Fopen(target.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    struct Row {
      char name[6];
      int16_t small;
      uint8_t flag;
      float value;
    };
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 6);
    hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(type, "name", HOFFSET(Row, name), str);
    H5Tinsert(type, "small", HOFFSET(Row, small), H5T_NATIVE_INT16);
    H5Tinsert(type, "flag", HOFFSET(Row, flag), H5T_NATIVE_UINT8);
    H5Tinsert(type, "value", HOFFSET(Row, value), H5T_NATIVE_FLOAT);
    const hsize_t dims[1] = {2};
    hid_t space = H5Screate_simple(1, dims, nullptr);
    hid_t dataset = H5Dcreate2(file, "foreign", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const Row rows[2] = {{"ab", -3, 1, 0.5f}, {"xyzzy", 7, 0, 2.0f}};
    EXPECT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Tclose(type);
    H5Tclose(str);
    H5Fclose(file);
  }
  const Table t = File::open_read(target).read_table("foreign");
  EXPECT_EQ(t.column<std::string>("name"), (std::vector<std::string>{"ab", "xyzzy"}));
  EXPECT_EQ(t.column<int32_t>("small"), (std::vector<int32_t>{-3, 7}));
  EXPECT_EQ(t.column<int32_t>("flag"), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(t.column<double>("value"), (std::vector<double>{0.5, 2.0}));
}

}  // namespace
}  // namespace fk::h5
