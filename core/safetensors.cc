// Safetensors reading and writing (core/safetensors.h has the format).
//
// Every number in a header is checked before it is used: dimensions are non-negative
// and fit in int64_t, element counts and byte sizes are computed with overflow checks,
// each tensor's data_offsets are ordered, lie inside the data section and hold exactly
// its bytes, no two tensors share a byte, and no JSON object holds a key twice
// (nlohmann::json would keep the last one silently). So a file that opens can be read
// without further bounds checks.
#include "core/safetensors.h"

#include "core/error.h"
#include "core/fs_util.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Safetensors dtype names (the format's README) we read and write.
const std::pair<const char*, DType> kDtypes[] = {
    {"F32", DType::kF32}, {"F16", DType::kF16}, {"BF16", DType::kBF16}, {"F64", DType::kF64},
    {"I32", DType::kI32}, {"I64", DType::kI64}, {"U8", DType::kU8},
};

// The largest header we accept (the format's reference implementation caps it at 100 MB).
constexpr uint64_t kMaxHeader = 100ull << 20;

// The element count of `shape`; nullopt when a dimension is negative or the product
// does not fit in int64_t.
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

// Parses JSON text and fails, naming `file` and the key, when an object holds a key
// twice: nlohmann::json keeps the last value without a word, and a reader must not
// guess which one the writer meant. `what` names the text in messages ("header").
json parse_json_unique_keys(const char* begin, const char* end, const std::string& file, const char* what) {
  struct Level {
    bool array;
    std::string path;  // dotted path of this object or array, "" at the top
    std::set<std::string> keys;
  };
  std::vector<Level> levels;
  std::string last_key;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string path;
        if (!levels.empty()) {
          const Level& up = levels.back();
          path = up.array ? up.path + "[]" : (up.path.empty() ? last_key : up.path + "." + last_key);
        }
        levels.push_back({event == json::parse_event_t::array_start, std::move(path), {}});
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!levels.empty()) levels.pop_back();
        break;
      case json::parse_event_t::key:
        last_key = parsed.get<std::string>();
        if (!levels.empty() && !levels.back().keys.insert(last_key).second)
          fail(ErrorKind::kInvalidArgument, "{}: {}: key '{}' appears twice{} (which one is meant?)", file, what,
               last_key, levels.back().path.empty() ? "" : fmt::format(" in '{}'", levels.back().path));
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(begin, end, check);
  } catch (const json::exception& e) {
    fail(ErrorKind::kInvalidArgument, "{}: {} is not valid JSON: {}", file, what, e.what());
  }
}

}  // namespace

int64_t SafetensorsEntry::numel() const {
  const auto n = checked_numel(shape);
  if (!n)
    fail(ErrorKind::kInvalidArgument, "tensor '{}': shape {} has a negative dimension or more elements than fit in 64 bits",
         name, shape_string(shape));
  return *n;
}

std::string safetensors_dtype_name(DType dtype) {
  for (const auto& [name, d] : kDtypes)
    if (d == dtype) return name;
  fail(ErrorKind::kUnsupported, "safetensors: no dtype name for {}", dtype_name(dtype));
}

std::optional<DType> safetensors_dtype_parse(const std::string& name) {
  for (const auto& [n, d] : kDtypes)
    if (name == n) return d;
  return std::nullopt;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(ErrorKind::kIo, "{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) fail(ErrorKind::kIo, "{}: cannot stat: {}", path, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(ErrorKind::kInvalidArgument, "{}: not a regular file", path);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) fail(ErrorKind::kInvalidArgument, "{}: {} bytes: too short for a safetensors file (truncated?)", path, size_);
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (m == MAP_FAILED) fail(ErrorKind::kIo, "{}: cannot map: {}", path, std::strerror(errno));
  map_ = static_cast<const uint8_t*>(m);

  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | map_[i];
  if (n > kMaxHeader) fail(ErrorKind::kInvalidArgument, "{}: header length {} is not plausible (not a safetensors file?)", path, n);
  if (8 + n > size_)
    fail(ErrorKind::kInvalidArgument, "{}: header of {} bytes runs past the end of the {}-byte file (truncated?)", path, n, size_);
  data_start_ = 8 + static_cast<size_t>(n);
  const json header = parse_json_unique_keys(reinterpret_cast<const char*>(map_ + 8),
                                             reinterpret_cast<const char*>(map_ + 8 + n), path, "header");
  if (!header.is_object()) fail(ErrorKind::kInvalidArgument, "{}: header is not a JSON object", path);
  const uint64_t data_size = size_ - data_start_;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) fail(ErrorKind::kInvalidArgument, "{}: __metadata__ is not an object", path);
      for (const auto& [k, s] : v.items())
        if (s.is_string()) metadata_[k] = s.get<std::string>();
      continue;
    }
    auto bad = [&](const std::string& what) {
      fail(ErrorKind::kInvalidArgument, "{}: tensor '{}': {}", path, name, what);
    };
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      bad("header entry needs dtype, shape and data_offsets");
    SafetensorsEntry e;
    e.name = name;
    if (!v["dtype"].is_string()) bad("dtype is not a string");
    const auto d = safetensors_dtype_parse(v["dtype"].get<std::string>());
    if (!d) bad(fmt::format("dtype {} is not supported (F32, F16, BF16, F64, I32, I64, U8)", v["dtype"].dump()));
    e.dtype = *d;
    if (!v["shape"].is_array()) bad("shape is not an array");
    for (const auto& s : v["shape"]) {
      if (!s.is_number_unsigned()) bad(fmt::format("shape {} is not a list of non-negative integers", v["shape"].dump()));
      if (s.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        bad(fmt::format("shape {}: dimension {} does not fit in 64 bits", v["shape"].dump(), s.dump()));
      e.shape.push_back(s.get<int64_t>());
    }
    const auto numel = checked_numel(e.shape);
    uint64_t want = 0;
    if (!numel || __builtin_mul_overflow(static_cast<uint64_t>(*numel), dtype_size(e.dtype), &want))
      bad(fmt::format("shape {} of {} has more bytes than fit in 64 bits", v["shape"].dump(),
                      v["dtype"].get<std::string>()));
    const auto& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      bad("data_offsets is not [begin, end] (two non-negative integers)");
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    if (e.end < e.begin) bad(fmt::format("data_offsets [{}, {}] end before they begin", e.begin, e.end));
    if (e.end - e.begin != want)
      bad(fmt::format("data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {} (mislabelled?)", e.begin, e.end,
                      e.end - e.begin, v["shape"].dump(), v["dtype"].get<std::string>(), want));
    if (e.end > data_size)
      bad(fmt::format("data ends at byte {} of the data section, which has only {} bytes (truncated file)", e.end,
                      data_size));
    entries_.emplace(name, std::move(e));
  }
  // No two tensors may share a byte: in begin order, each non-empty range must start
  // at or after the furthest end so far.
  std::vector<const SafetensorsEntry*> order;
  for (const auto& [name, e] : entries_)
    if (e.end > e.begin) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  const SafetensorsEntry* furthest = nullptr;
  for (const SafetensorsEntry* e : order) {
    if (furthest != nullptr && e->begin < furthest->end)
      fail(ErrorKind::kInvalidArgument,
           "{}: tensors '{}' (data_offsets [{}, {}]) and '{}' (data_offsets [{}, {}]) overlap (a corrupt header?)",
           path, furthest->name, furthest->begin, furthest->end, e->name, e->begin, e->end);
    if (furthest == nullptr || e->end > furthest->end) furthest = e;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) ::munmap(const_cast<uint8_t*>(map_), size_);
  if (fd_ >= 0) ::close(fd_);
}

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) fail(ErrorKind::kInvalidArgument, "{}: no tensor '{}'", path_, name);
  return it->second;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [n, e] : entries_) out.push_back(n);
  return out;
}

const void* SafetensorsFile::data(const std::string& name) const { return map_ + data_start_ + entry(name).begin; }

Tensor SafetensorsFile::read(const std::string& name, DType dtype) const {
  const SafetensorsEntry& e = entry(name);
  Tensor t = Tensor::empty(dtype, e.shape);
  const size_t n = static_cast<size_t>(e.numel());
  if (e.dtype == dtype) {
    std::memcpy(t.data(), data(name), t.nbytes());
  } else if (dtype_is_float(e.dtype) && dtype_is_float(dtype)) {
    dtype_convert(data(name), e.dtype, t.data(), dtype, n);
  } else if (e.dtype == DType::kI32 && dtype == DType::kI64) {
    const auto* src = static_cast<const int32_t*>(data(name));
    for (size_t i = 0; i < n; ++i) t.data_as<int64_t>()[i] = src[i];
  } else {
    fail(ErrorKind::kInvalidArgument, "{}: tensor '{}' is {}; cannot read it as {}", path_, name,
         safetensors_dtype_name(e.dtype), dtype_name(dtype));
  }
  return t;
}

Tensor SafetensorsFile::read_block(const std::string& name, int64_t r0, int64_t nr, int64_t c0, int64_t nc) const {
  const SafetensorsEntry& e = entry(name);
  const int64_t cols = e.shape.empty() ? 1 : e.shape.back();
  const int64_t rows = cols == 0 ? 0 : e.numel() / cols;
  // Written so that no sum can overflow, whatever the caller passes.
  if (r0 < 0 || nr < 0 || c0 < 0 || nc < 0 || r0 > rows || nr > rows - r0 || c0 > cols || nc > cols - c0)
    fail(ErrorKind::kInvalidArgument,
         "{}: tensor '{}' is [{}, {}]: block of {} rows from row {} x {} cols from col {} is outside it", path_, name,
         rows, cols, nr, r0, nc, c0);
  Tensor t = Tensor::empty(DType::kF32, {nr, nc});
  const size_t es = dtype_size(e.dtype);
  const uint8_t* base = static_cast<const uint8_t*>(data(name));
  float* out = t.data_as<float>();
  for (int64_t r = 0; r < nr; ++r)
    dtype_convert(base + (static_cast<size_t>((r0 + r) * cols + c0)) * es, e.dtype, out + r * nc, DType::kF32,
                  static_cast<size_t>(nc));
  return t;
}

void safetensors_write(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__") fail(ErrorKind::kInvalidArgument, "{}: bad tensor name '{}'", path, name);
    if (header.contains(name)) fail(ErrorKind::kInvalidArgument, "{}: tensor '{}' given twice", path, name);
    if (!t.defined() || t.device().kind != DeviceKind::kCpu || !t.is_contiguous())
      fail(ErrorKind::kInvalidArgument, "{}: tensor '{}' must be a defined, contiguous CPU tensor", path, name);
    const uint64_t n = t.nbytes();
    header[name] = {{"dtype", safetensors_dtype_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');  // align the data section to 8 bytes (spaces are valid JSON)
  std::string out;
  out.reserve(8 + h.size() + offset);
  const uint64_t hn = h.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((hn >> (8 * i)) & 0xff));
  out += h;
  for (const auto& [name, t] : tensors) out.append(static_cast<const char*>(t.data()), t.nbytes());
  fs_write_file_atomic(path, out);
}

Checkpoint::Checkpoint(const std::string& path) : path_(path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    folder_ = path;
    const std::string index = (fs::path(path) / "model.safetensors.index.json").string();
    const std::string single = (fs::path(path) / "model.safetensors").string();
    if (fs::exists(index)) {
      const std::string text = fs_read_file(index);
      const json j = parse_json_unique_keys(text.data(), text.data() + text.size(), index, "index");
      if (!j.contains("weight_map") || !j["weight_map"].is_object())
        fail(ErrorKind::kInvalidArgument, "{}: weight_map: missing or not an object", index);
      for (const auto& [name, file] : j["weight_map"].items()) {
        if (!file.is_string()) fail(ErrorKind::kInvalidArgument, "{}: weight_map.{}: not a file name", index, name);
        const std::string f = file.get<std::string>();
        if (f.find('/') != std::string::npos || f == "..")
          fail(ErrorKind::kInvalidArgument, "{}: weight_map.{}: '{}' is not a file in the checkpoint folder", index, name, f);
        shard_of_[name] = f;
      }
      return;
    }
    if (fs::exists(single)) {
      single_ = std::make_unique<SafetensorsFile>(single);
      return;
    }
    fail(ErrorKind::kInvalidArgument, "{}: the folder holds neither model.safetensors nor model.safetensors.index.json", path);
  }
  if (!fs::exists(path, ec)) fail(ErrorKind::kInvalidArgument, "{}: no such checkpoint file or folder", path);
  single_ = std::make_unique<SafetensorsFile>(path);
}

bool Checkpoint::has(const std::string& name) const { return single_ ? single_->has(name) : shard_of_.count(name) > 0; }

const SafetensorsFile& Checkpoint::file_of(const std::string& name) const {
  if (single_) {
    single_->entry(name);  // throws naming the tensor when it is missing
    return *single_;
  }
  const auto it = shard_of_.find(name);
  if (it == shard_of_.end()) fail(ErrorKind::kInvalidArgument, "{}: no tensor '{}' in the index's weight_map", path_, name);
  auto& f = open_[it->second];
  if (!f) f = std::make_unique<SafetensorsFile>((fs::path(folder_) / it->second).string());
  f->entry(name);
  return *f;
}

std::vector<std::string> Checkpoint::names() const {
  if (single_) return single_->names();
  std::vector<std::string> out;
  for (const auto& [n, f] : shard_of_) out.push_back(n);
  return out;
}

}  // namespace fk
