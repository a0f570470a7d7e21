// Weights from a HuggingFace safetensors checkpoint.
//
// The model code asks for canonical names (the transformer's: HF Llama-style,
// transformer/weights.h); a TensorMap, from the model family, says where each lives in
// the checkpoint: under which name (with which
// optional prefixes, e.g. "transformer." for GPT-2, "bert." for BERT), at which offset
// inside a fused tensor (Phi-3's qkv_proj and gate_up_proj, GPT-2's c_attn), and
// whether it is stored transposed (GPT-2's Conv1D weights are [in, out]). Each rank
// reads only the block it holds (the file is memory-mapped). A tensor that is missing,
// has the wrong shape, or is not a float tensor is an fk::Error naming the checkpoint,
// the tensor, what was found and what the architecture expects.
//
// docs/checkpoints.md lists the transformer family's mapping of every supported
// model_type (transformer/checkpoint_names.h).
#pragma once

#include "core/safetensors.h"
#include "core/spec/architecture.h"
#include "runner/model/weight_source.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fk::runner {

// Where one canonical tensor lives in a checkpoint.
struct TensorRef {
  std::string name;        // checkpoint name, without prefix
  int64_t offset = 0;      // first row (matrix) or element (vector) inside a fused tensor
  int64_t total = 0;       // the fused tensor's length along that dimension (0: not fused)
  bool transpose = false;  // stored as [in, out] (Conv1D)
  // Interleaved fusion (GPT-NeoX's query_key_value, [heads, 3, head_dim] rows): row r of
  // the canonical tensor is row (r / group) * stride + offset + r % group of the fused
  // one. 0: contiguous (row offset + r).
  int64_t group = 0;
  int64_t stride = 0;
  // The fused tensor is stored as `stack` matrices, [stack, total / stack, cols]
  // (GraniteMoe's experts), and read as the [total, cols] they make. 0: stored 2-D.
  // With transpose each is stored [cols, total / stack] (gpt-oss' [experts, in, out]
  // expert weights), and a vector's fused tensor is stored [stack, total / stack]
  // (gpt-oss' per-expert biases); either may be interleaved (group, stride).
  int64_t stack = 0;
  // One tensor per row: `name` holds "{}" where the row's index goes, and each is a
  // vector of the canonical tensor's columns (StableLM's per-head q/k LayerNorms,
  // q_layernorm.norms.<h>.weight, make the [heads, head_dim] weight).
  bool per_row = false;
  // Stored in other dimensions holding the same elements in the same order: a Conv2d's
  // weight [out, in, kh, kw] is the [out, in kh kw] matrix of the patch map, a position
  // table [1, tokens, H] the [tokens, H] matrix (ViT).
  bool reshaped = false;
};

struct TensorMap {
  std::string model_type;
  std::vector<std::string> prefixes;  // tried in order ("" = none)
  // Canonical name -> checkpoint location; the architecture gives fused sizes.
  std::function<TensorRef(const std::string& canonical, const spec::Architecture& a)> locate;
};

class CheckpointWeights final : public WeightSource {
 public:
  // Opens the checkpoint (a .safetensors file, or a folder: core/safetensors.h).
  // `map` is the family's (ModelFamily::checkpoint_names).
  CheckpointWeights(const std::string& path, const spec::Architecture& arch, TensorMap map);
  Tensor block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
               float lo, float hi) const override;
  const Checkpoint& checkpoint() const { return *ckpt_; }

 private:
  std::string resolve(const std::string& canonical, const TensorRef& ref) const;
  Tensor stacked_block(const std::string& name, const std::string& src, const TensorRef& ref, bool vector, int64_t cols,
                       int64_t r0, int64_t nr, int64_t c0, int64_t nc) const;
  Tensor per_row_block(const std::string& name, const TensorRef& ref, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                       int64_t nc) const;
  std::unique_ptr<Checkpoint> ckpt_;
  const spec::Architecture& arch_;
  TensorMap map_;
};

}  // namespace fk::runner
