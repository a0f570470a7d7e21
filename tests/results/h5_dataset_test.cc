// N-D numeric datasets: every element type round-trips with its shape; zero-element
// and scalar arrays work; large arrays are chunked and gzip-compressed, small ones not;
// reads never change class silently.
#include "h5_test_util.h"
#include "results/h5/h5.h"

#include <filesystem>
#include <numeric>

namespace fk::h5 {
namespace {

using testing::expect_error;

class DatasetTest : public testing::H5Test {};

template <typename T>
std::vector<T> iota_values(size_t n, T start) {
  std::vector<T> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST_F(DatasetTest, EveryElementTypeRoundTripsWithShape) {
  const std::string target = path("arrays.h5");
  const auto f64 = iota_values<double>(24, -3.5);
  const auto f32 = iota_values<float>(6, 0.25f);
  const auto i64 = std::vector<int64_t>{INT64_MIN, -1, 0, INT64_MAX};
  const auto i32 = iota_values<int32_t>(12, -6);
  const auto u8 = iota_values<uint8_t>(256, 0);
  {
    Writer w(target);
    w.write_array("f64", f64, Shape{2, 3, 4});
    w.write_array("nested/f32", f32, Shape{3, 2});
    w.write_array("i64", i64);
    w.write_array("i32", i32, Shape{12});
    w.write_array("u8", u8, Shape{16, 16});
    w.commit();
  }
  File f = File::open_read(target);
  EXPECT_EQ(f.read_array<double>("f64"), f64);
  EXPECT_EQ(f.read_array<float>("nested/f32"), f32);
  EXPECT_EQ(f.read_array<int64_t>("i64"), i64);
  EXPECT_EQ(f.read_array<int32_t>("i32"), i32);
  EXPECT_EQ(f.read_array<uint8_t>("u8"), u8);
  EXPECT_EQ(f.open_dataset("f64").shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(f.open_dataset("nested/f32").shape(), (Shape{3, 2}));
  EXPECT_EQ(f.open_dataset("u8").shape(), (Shape{16, 16}));
  EXPECT_EQ(f.open_dataset("f64").size(), 24);
  EXPECT_EQ(f.open_dataset("f64").dtype(), DType::kF64);
  EXPECT_EQ(f.open_dataset("nested/f32").dtype(), DType::kF32);
  EXPECT_EQ(f.open_dataset("i64").dtype(), DType::kI64);
  EXPECT_EQ(f.open_dataset("i32").dtype(), DType::kI32);
  EXPECT_EQ(f.open_dataset("u8").dtype(), DType::kU8);
  EXPECT_FALSE(f.open_dataset("u8").is_table());
}

TEST_F(DatasetTest, ConvertsWithinAClassOnly) {
  Writer w(path("convert.h5"));
  w.write_array("i32", std::vector<int32_t>{-5, 6});
  w.write_array("f32", std::vector<float>{0.5f, -2.0f});
  EXPECT_EQ(w.read_array<int64_t>("i32"), (std::vector<int64_t>{-5, 6}));
  EXPECT_EQ(w.read_array<double>("f32"), (std::vector<double>{0.5, -2.0}));
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_array<int64_t>("f32"); });
  EXPECT_NE(what.find("/f32"), std::string::npos) << what;
  expect_error(ErrorKind::kInvalidArgument, [&] { (void)w.read_array<double>("i32"); });
  std::vector<double> small(1);
  expect_error(ErrorKind::kInvalidArgument,
               [&] { w.open_dataset("f32").read_raw(DType::kF64, small.data(), small.size()); });
}

TEST_F(DatasetTest, ZeroElementAndScalarArrays) {
  const std::string target = path("empty.h5");
  {
    Writer w(target);
    w.write_array("empty", std::vector<double>{});
    w.write_array("empty_2d", std::vector<int32_t>{}, Shape{3, 0});
    w.write_array("scalar", std::vector<int64_t>{9}, Shape{});
    w.write_array("raw_empty", DType::kU8, Shape{0}, nullptr, 0);
    w.commit();
  }
  File f = File::open_read(target);
  EXPECT_TRUE(f.read_array<double>("empty").empty());
  EXPECT_EQ(f.open_dataset("empty").shape(), (Shape{0}));
  EXPECT_TRUE(f.read_array<int32_t>("empty_2d").empty());
  EXPECT_EQ(f.open_dataset("empty_2d").shape(), (Shape{3, 0}));
  EXPECT_EQ(f.open_dataset("scalar").shape(), Shape{});
  EXPECT_EQ(f.read_array<int64_t>("scalar"), std::vector<int64_t>{9});
  EXPECT_EQ(f.open_dataset("raw_empty").size(), 0);
  EXPECT_FALSE(f.open_dataset("empty").storage().chunked);
}

TEST_F(DatasetTest, SmallArraysAreContiguousLargeOnesChunkedAndCompressed) {
  const std::string small_file = path("small.h5");
  const std::string large_file = path("large.h5");
  const size_t small_n = kCompressMinBytes / sizeof(double) - 1;
  const size_t large_n = 1 << 20;  // 8 MiB of doubles, very compressible
  std::vector<double> large(large_n);
  for (size_t i = 0; i < large_n; ++i) large[i] = static_cast<double>(i % 100);
  {
    Writer w(small_file);
    Dataset d = w.write_array("small", std::vector<double>(small_n, 1.0));
    EXPECT_FALSE(d.storage().chunked);
    EXPECT_FALSE(d.storage().compressed);
    w.commit();
  }
  {
    Writer w(large_file);
    w.write_array("large", large, Shape{1024, 1024});
    w.commit();
  }
  File f = File::open_read(large_file);
  const StorageInfo info = f.open_dataset("large").storage();
  EXPECT_TRUE(info.chunked);
  EXPECT_TRUE(info.compressed);
  ASSERT_EQ(info.chunk.size(), 2u);
  EXPECT_LE(info.chunk[0] * info.chunk[1] * sizeof(double), kChunkTargetBytes);
  EXPECT_EQ(f.read_array<double>("large"), large);
  EXPECT_LT(std::filesystem::file_size(large_file), large_n * sizeof(double) / 4);
}

TEST_F(DatasetTest, BadRequestsAreRejected) {
  const std::string target = path("bad.h5");
  Writer w(target);
  std::string what = expect_error(ErrorKind::kInvalidArgument, [&] {
    w.write_array("x", std::vector<double>(5), Shape{2, 3});
  });
  EXPECT_NE(what.find("needs 6 elements"), std::string::npos) << what;
  expect_error(ErrorKind::kInvalidArgument, [&] { w.write_array("x", std::vector<double>{}, Shape{-1}); });
  expect_error(ErrorKind::kUnsupported, [&] {
    const uint16_t half[1] = {0};
    w.write_array("half", DType::kF16, Shape{1}, half, 1);
  });
  w.write_array("once", std::vector<double>{1});
  what = expect_error(ErrorKind::kInvalidArgument, [&] { w.write_array("once", std::vector<double>{2}); });
  EXPECT_NE(what.find("already exists"), std::string::npos) << what;
  EXPECT_NE(what.find(target), std::string::npos) << what;
  EXPECT_EQ(w.read_array<double>("once"), std::vector<double>{1});
  EXPECT_FALSE(w.exists("x"));
  EXPECT_FALSE(w.exists("half"));
}

TEST_F(DatasetTest, StorageChunkPolicy) {
  const std::vector<uint64_t> chunk = storage_array_chunk({1000, 1000}, 8);
  EXPECT_LE(chunk[0] * chunk[1] * 8, kChunkTargetBytes);
  EXPECT_GE(chunk[0] * chunk[1] * 8, kChunkTargetBytes / 4);
  EXPECT_EQ(storage_array_chunk({10, 10}, 8), (std::vector<uint64_t>{10, 10}));
  EXPECT_EQ(storage_array_chunk({1}, 1 << 20), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(storage_compress_array(kCompressMinBytes - 1));
  EXPECT_TRUE(storage_compress_array(kCompressMinBytes));
  EXPECT_EQ(storage_table_chunk_rows(0, 40), kTableMinChunkRows);
  EXPECT_EQ(storage_table_chunk_rows(10, 40), kTableMinChunkRows);
  EXPECT_EQ(storage_table_chunk_rows(1000000, 64), kTableChunkBytes / 64);
  EXPECT_EQ(storage_table_chunk_rows(1000000, 1 << 20), 1u);
}

}  // namespace
}  // namespace fk::h5
