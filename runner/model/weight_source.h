// Where a model's weight values come from, and what every family's weights are to
// the code that holds them (runner/model/family.h). A source answers blocks of global
// tensors by the model family's canonical names (below), fp32, so a rank reads or draws only
// its shard: RandomWeights from the counter-based RNG by (seed, name), CheckpointWeights
// (checkpoint_weights.h) from safetensors.
#pragma once

#include "core/tensor.h"
#include "kernels/backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fk::runner {

// One block of a source tensor placed inside a model tensor: rows [r0, r0 + nr) x
// columns [c0, c0 + nc) of the global [rows_total, cols_total] tensor `name`, plus `add`
// when not 0 (Gemma's folded norm offset), written row-major at element `at`.
struct WeightPiece {
  std::string name;
  int64_t rows_total = 0, cols_total = 0, r0 = 0, nr = 0, c0 = 0, nc = 0;
  float lo = 0, hi = 0;  // the range a random source draws from
  float add = 0;
  int64_t at = 0;
};

// Where weight values come from, by canonical tensor name, each family's own: the
// transformer's are HF Llama-style ("model.layers.3.self_attn.q_proj.weight",
// "model.embed_tokens.weight", "lm_head.weight"; MLPs without a gate use
// "mlp.fc1"/"mlp.fc2"; BERT's and GPT-2's extra tensors are "model.embed_positions.weight",
// "model.embed_token_types.weight", "model.embed_norm.*"); Mamba's are HF
// MambaForCausalLM's ("backbone.layers.3.mixer.in_proj.weight", mamba/weights.h).
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Rows [r0, r0 + nr) x columns [c0, c0 + nc) of the global [rows, cols] tensor `name`
  // (a vector is one row), fp32. [lo, hi) is the range a random source draws from;
  // norm weights are asked for as stored in HF checkpoints (Gemma's zero-centred).
  virtual Tensor block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr, int64_t c0,
                       int64_t nc, float lo, float hi) const = 0;
  // Writes piece `p` into `dst` (contiguous, on `backend`, in its dtype); enqueued. The
  // default reads block() on the host and uploads it; a source that can make its values
  // on the device (RandomWeights) does so.
  virtual void fill(kernels::Backend& backend, const Tensor& dst, const WeightPiece& p) const;
  // Piece `p`'s values on the host, fp32 [nr, nc]: block() plus p.add.
  Tensor values(const WeightPiece& p) const;
};

// Values from the counter-based RNG keyed by (seed, name) at each element's global index.
class RandomWeights final : public WeightSource {
 public:
  explicit RandomWeights(uint64_t seed) : seed_(seed) {}
  Tensor block(const std::string& name, int64_t rows, int64_t cols, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
               float lo, float hi) const override;
  // On the device itself (Backend::fill_uniform): the same bits as block().
  void fill(kernels::Backend& backend, const Tensor& dst, const WeightPiece& p) const override;

 private:
  uint64_t seed_;
};

// One rank's weights as its model family lays them out (runner/model/family.h): the
// model stage and fk forward only make, hold, count and round them; the family's
// models read them.
class Weights {
 public:
  virtual ~Weights() = default;
  virtual int64_t parameter_count() const = 0;
  // Every defined tensor by a stable name, in a fixed order (a tensor shared by two
  // roles, such as a tied LM head, once): what tests compare across backends.
  virtual std::vector<std::pair<std::string, Tensor>> named_tensors() const = 0;
  // A copy with every tensor rounded to `dtype`; host tensors only (on the CPU the model
  // stage rounds the fp32 master once for the low-precision runs).
  virtual std::unique_ptr<Weights> rounded(DType dtype) const = 0;
};

}  // namespace fk::runner
