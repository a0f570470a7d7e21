#include "core/error.h"
#include "core/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fk {
namespace {

namespace fs = std::filesystem;

class Safetensors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fk_safetensors_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static Tensor iota(DType dtype, Shape shape) {
    Tensor f = Tensor::empty(DType::kF32, shape);
    for (int64_t i = 0; i < f.numel(); ++i) f.data_as<float>()[i] = static_cast<float>(i) * 0.5f - 3.0f;
    return f.to_dtype(dtype);
  }
  // Writes a file by hand: header text and `data_bytes` zero bytes.
  void write_raw(const std::string& file, const std::string& header, size_t data_bytes) const {
    std::ofstream out(path(file), std::ios::binary);
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << header << std::string(data_bytes, '\0');
  }
  std::string error_of(const std::string& file) const {
    try {
      SafetensorsFile f(path(file));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(Safetensors, RoundTripKeepsNamesDtypesShapesValuesAndMetadata) {
  Tensor ids = Tensor::empty(DType::kI64, {2, 3});
  for (int64_t i = 0; i < 6; ++i) ids.data_as<int64_t>()[i] = 100 + i;
  const std::vector<std::pair<std::string, Tensor>> in = {
      {"a.weight", iota(DType::kF32, {4, 5})}, {"b", iota(DType::kBF16, {7})}, {"c", iota(DType::kF16, {2, 2, 3})},
      {"input_ids", ids}};
  safetensors_write(path("x.safetensors"), in, {{"format", "pt"}});
  const SafetensorsFile f(path("x.safetensors"));
  EXPECT_EQ(f.names(), (std::vector<std::string>{"a.weight", "b", "c", "input_ids"}));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.entry("b").dtype, DType::kBF16);
  EXPECT_EQ(f.entry("c").shape, (std::vector<int64_t>{2, 2, 3}));
  for (const auto& [name, t] : in) {
    const Tensor back = f.read(name, t.dtype());
    ASSERT_EQ(back.nbytes(), t.nbytes()) << name;
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0) << name;
  }
  // The data section starts 8-byte aligned, as the format recommends.
  std::ifstream raw(path("x.safetensors"), std::ios::binary);
  uint64_t n = 0;
  raw.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);
  // Conversions: bf16 to fp32 exactly (these values are representable), int32 to int64.
  const Tensor b32 = f.read("b", DType::kF32);
  EXPECT_FLOAT_EQ(b32.data_as<float>()[3], -1.5f);
}

TEST_F(Safetensors, BlockReadsTheRowsAndColumnsAsked) {
  safetensors_write(path("m.safetensors"), {{"m", iota(DType::kF16, {6, 4})}, {"v", iota(DType::kF32, {10})}});
  const SafetensorsFile f(path("m.safetensors"));
  const Tensor b = f.read_block("m", 2, 3, 1, 2);  // rows 2..4, cols 1..2
  ASSERT_EQ(b.shape(), (Shape{3, 2}));
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c)
      EXPECT_FLOAT_EQ(b.data_as<float>()[r * 2 + c], static_cast<float>((2 + r) * 4 + 1 + c) * 0.5f - 3.0f);
  const Tensor v = f.read_block("v", 0, 1, 7, 3);
  EXPECT_FLOAT_EQ(v.data_as<float>()[0], 0.5f);
  try {
    (void)f.read_block("m", 5, 2, 0, 4);
    FAIL() << "a block outside the tensor must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'m' is [6, 4]"), std::string::npos) << e.what();
  }
}

TEST_F(Safetensors, TruncatedFileNamesTheTensorItCuts) {
  safetensors_write(path("t.safetensors"), {{"first", iota(DType::kF32, {4})}, {"second", iota(DType::kF32, {64})}});
  fs::resize_file(path("t.safetensors"), fs::file_size(path("t.safetensors")) - 10);
  const std::string e = error_of("t.safetensors");
  EXPECT_NE(e.find("tensor 'second'"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  fs::resize_file(path("t.safetensors"), 5);
  EXPECT_NE(error_of("t.safetensors").find("too short"), std::string::npos);
}

TEST_F(Safetensors, MislabelledEntriesAreErrorsNamingTheTensor) {
  // 6 floats declared, 20 bytes of offsets.
  write_raw("shape.safetensors", R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24);
  std::string e = error_of("shape.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 24"), std::string::npos) << e;
  write_raw("dtype.safetensors", R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2);
  e = error_of("dtype.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("F8_E4M3"), std::string::npos) << e;
  write_raw("json.safetensors", R"({"w":{"dtype":"F32",)", 0);
  EXPECT_NE(error_of("json.safetensors").find("not valid JSON"), std::string::npos);
  write_raw("offsets.safetensors", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4]}})", 8);
  EXPECT_NE(error_of("offsets.safetensors").find("data_offsets"), std::string::npos);
  {
    std::ofstream out(path("huge.safetensors"), std::ios::binary);
    out << std::string(8, '\xff') << "{}";
  }
  EXPECT_NE(error_of("huge.safetensors").find("not plausible"), std::string::npos);
  EXPECT_NE(error_of("missing.safetensors").find("cannot open"), std::string::npos);
}

// Sizes that overflow 64 bits used to wrap to a small count that matched the offsets
// (fk-runner then read past the map). Each must be an error naming the tensor.
TEST_F(Safetensors, SizesThatOverflowAreErrorsNamingTheTensor) {
  // 2^62 x 4 elements wrap to 0, matching data_offsets [0, 0] and an empty data section.
  write_raw("numel.safetensors", R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", 0);
  std::string e = error_of("numel.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("more bytes than fit in 64 bits"), std::string::npos) << e;
  // 2^61 F64 elements fit in int64_t, their 2^64 bytes do not.
  write_raw("bytes.safetensors", R"({"w":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", 0);
  e = error_of("bytes.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("fit in 64 bits"), std::string::npos) << e;
  // A dimension of 2^63 reads as a negative int64_t.
  write_raw("dim.safetensors", R"({"w":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,0]}})", 0);
  e = error_of("dim.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("dimension 9223372036854775808 does not fit"), std::string::npos) << e;
  // Reversed offsets.
  write_raw("order.safetensors", R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8);
  e = error_of("order.safetensors");
  EXPECT_NE(e.find("tensor 'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("end before they begin"), std::string::npos) << e;
  // An entry whose shape overflows cannot report a wrapped count either.
  SafetensorsEntry big{"big", DType::kF32, {int64_t{1} << 62, 4}, 0, 0};
  EXPECT_THROW((void)big.numel(), Error);
}

TEST_F(Safetensors, OverlappingTensorsAreAnErrorNamingBoth) {
  write_raw("overlap.safetensors",
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},)"
            R"("c":{"dtype":"F32","shape":[3],"data_offsets":[4,16]}})",
            20);
  const std::string e = error_of("overlap.safetensors");
  EXPECT_NE(e.find("'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("'c'"), std::string::npos) << e;
  EXPECT_NE(e.find("overlap"), std::string::npos) << e;
  // Adjacent ranges and empty tensors anywhere are fine.
  write_raw("adjacent.safetensors",
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("e":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
            R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
            12);
  EXPECT_EQ(error_of("adjacent.safetensors"), "");
}

TEST_F(Safetensors, DuplicateKeysAreAnErrorNamingTheKey) {
  write_raw("twice.safetensors",
            R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            8);
  std::string e = error_of("twice.safetensors");
  EXPECT_NE(e.find("key 'w' appears twice"), std::string::npos) << e;
  write_raw("field.safetensors", R"({"w":{"dtype":"F32","dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 16);
  e = error_of("field.safetensors");
  EXPECT_NE(e.find("key 'dtype' appears twice in 'w'"), std::string::npos) << e;
  // The same in a sharded checkpoint's index.
  fs::create_directories(dir_ / "sharded");
  {
    std::ofstream idx(path("sharded/model.safetensors.index.json"));
    idx << R"({"weight_map":{"a":"one.safetensors","a":"two.safetensors"}})";
  }
  try {
    Checkpoint c(path("sharded"));
    FAIL() << "a duplicate weight_map key must fail";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("key 'a' appears twice in 'weight_map'"), std::string::npos) << err.what();
  }
}

TEST_F(Safetensors, BlockBoundsDoNotOverflow) {
  safetensors_write(path("m.safetensors"), {{"m", iota(DType::kF32, {6, 4})}});
  const SafetensorsFile f(path("m.safetensors"));
  EXPECT_THROW((void)f.read_block("m", 1, INT64_MAX, 0, 4), Error);
  EXPECT_THROW((void)f.read_block("m", 0, 1, 2, INT64_MAX), Error);
  EXPECT_THROW((void)f.read_block("m", INT64_MAX, 1, 0, 1), Error);
}

TEST_F(Safetensors, MissingTensorIsNamed) {
  safetensors_write(path("a.safetensors"), {{"x", iota(DType::kF32, {2})}});
  const SafetensorsFile f(path("a.safetensors"));
  try {
    (void)f.entry("y");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor 'y'"), std::string::npos) << e.what();
  }
}

TEST_F(Safetensors, CheckpointFolderSingleOrShardedByIndex) {
  fs::create_directories(dir_ / "single");
  safetensors_write(path("single/model.safetensors"), {{"a", iota(DType::kF32, {3})}});
  const Checkpoint one(path("single"));
  EXPECT_TRUE(one.has("a"));
  EXPECT_EQ(one.names(), (std::vector<std::string>{"a"}));

  fs::create_directories(dir_ / "sharded");
  safetensors_write(path("sharded/model-00001-of-00002.safetensors"), {{"a", iota(DType::kF32, {3})}});
  safetensors_write(path("sharded/model-00002-of-00002.safetensors"), {{"b", iota(DType::kBF16, {2, 2})}});
  {
    std::ofstream idx(path("sharded/model.safetensors.index.json"));
    idx << R"({"metadata":{"total_size":20},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
        << R"("b":"model-00002-of-00002.safetensors","c":"model-00003-of-00002.safetensors"}})";
  }
  const Checkpoint sh(path("sharded"));
  EXPECT_TRUE(sh.has("b"));
  EXPECT_EQ(sh.entry("b").dtype, DType::kBF16);
  EXPECT_EQ(sh.file_of("a").path(), path("sharded/model-00001-of-00002.safetensors"));
  // A shard the index names but that is not there: the error names the file.
  try {
    (void)sh.entry("c");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model-00003-of-00002.safetensors"), std::string::npos) << e.what();
  }
  try {
    (void)sh.entry("zz");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor 'zz'"), std::string::npos) << e.what();
  }
  fs::create_directories(dir_ / "empty");
  EXPECT_THROW(Checkpoint(path("empty")), Error);
  EXPECT_THROW(Checkpoint(path("nowhere")), Error);
}

}  // namespace
}  // namespace fk
