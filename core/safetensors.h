// Safetensors files: the format HuggingFace checkpoints use.
//
// Layout (https://github.com/huggingface/safetensors, README "Format"): 8 bytes, a
// little-endian u64 N; N bytes of UTF-8 JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the byte after
// the header; an optional "__metadata__" maps strings to strings); then the raw data,
// row-major, little-endian.
//
// SafetensorsFile maps a file read-only (mmap) and checks the whole header when it
// opens: the JSON (no key twice in an object), every dtype, that each tensor's byte
// range matches its shape and dtype (sizes computed with overflow checks) and lies
// inside the file (a truncated file names the first tensor it cuts), and that no two
// tensors' ranges overlap.
// Reading a block of a tensor touches only that block's pages, so a TP rank reads
// only its slices. Checkpoint adds sharded checkpoints: a folder holding
// model.safetensors, or model.safetensors.index.json whose weight_map names the
// shard of every tensor (shards are opened on first use).
#pragma once

#include "core/dtype.h"
#include "core/tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fk {

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // data offsets, relative to the data section
  // Throws fk::Error when a dimension is negative or the count overflows int64_t
  // (never for an entry of an open SafetensorsFile: its header was checked).
  int64_t numel() const;
};

class SafetensorsFile {
 public:
  // Maps and checks `path`; throws fk::Error naming the file (and the tensor) on any problem.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  // Throws fk::Error naming the tensor and the file when it is missing.
  const SafetensorsEntry& entry(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The whole tensor, converted to `dtype` (a copy).
  Tensor read(const std::string& name, DType dtype) const;
  // Rows [r0, r0 + nr) x columns [c0, c0 + nc) of a tensor viewed as [rows, cols] with
  // cols = its last dimension (a 1-D tensor is one row), converted to fp32.
  Tensor read_block(const std::string& name, int64_t r0, int64_t nr, int64_t c0, int64_t nc) const;
  // Raw bytes of a tensor (valid while this file lives).
  const void* data(const std::string& name) const;

 private:
  std::string path_;
  int fd_ = -1;
  const uint8_t* map_ = nullptr;
  size_t size_ = 0;
  size_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Writes tensors (CPU, contiguous; fp32/fp16/bf16/fp64/int32/int64/uint8) to `path`
// atomically (temporary file + rename), in the given order.
void safetensors_write(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The safetensors dtype name of a DType ("F32", "BF16", ...) and back.
std::string safetensors_dtype_name(DType dtype);
std::optional<DType> safetensors_dtype_parse(const std::string& name);

// A checkpoint: one .safetensors file, or a folder with model.safetensors or
// model.safetensors.index.json (sharded).
class Checkpoint {
 public:
  // Throws fk::Error naming the path when it is none of these, or the index is bad.
  explicit Checkpoint(const std::string& path);
  const std::string& path() const { return path_; }
  bool has(const std::string& name) const;
  // The file holding a tensor (opened on first use); throws naming the tensor.
  const SafetensorsFile& file_of(const std::string& name) const;
  const SafetensorsEntry& entry(const std::string& name) const { return file_of(name).entry(name); }
  std::vector<std::string> names() const;

 private:
  std::string path_;
  std::string folder_;
  std::map<std::string, std::string> shard_of_;  // tensor -> shard file (sharded)
  mutable std::map<std::string, std::unique_ptr<SafetensorsFile>> open_;
  std::unique_ptr<SafetensorsFile> single_;
};

}  // namespace fk
