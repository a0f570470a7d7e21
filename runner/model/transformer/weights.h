// The weights one rank holds: its TP shard of every tensor of its pipeline stage.
//
// Values come from the counter-based RNG keyed by (seed, HF-style global tensor name),
// drawn at each element's index in the *global* tensor, so every rank generates only
// its shard and any layout sees the same model. Fused tensors (q/k/v, gate/up, the
// experts' w13) are assembled from the global per-projection tensors. Initialisation
// (docs/runner.md): linear weights U(-a, a) with a = sqrt(3 / fan_in) (unit variance
// preserving), embeddings U(-sqrt(3), sqrt(3)), norm weights U(0.8, 1.2) (U(-0.2, 0.2)
// with Gemma's (1 + w)), biases U(-0.1, 0.1).
#pragma once

#include "core/spec/architecture.h"
#include "core/tensor.h"
#include "kernels/backend.h"
#include "runner/model/placement.h"
#include "runner/model/weight_source.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fk::runner {

struct LayerWeights {
  int64_t index = 0;            // global layer index
  Tensor qkv_w, qkv_b;          // [(Hq_l + 2 Hk_l) D, H], bias or undefined
  Tensor o_w, o_b;              // [H, Hq_l D]; bias (full) or undefined
  Tensor sinks;                 // [Hq_l] fp32 (values of the workload dtype): attention sinks (gpt-oss)
  Tensor q_norm, k_norm;        // [D] (QK-norm), [heads x D] (qk_norm_full: q and kv heads) or undefined
  Tensor q_norm_b, k_norm_b;    // [D]: the q/k LayerNorms' biases (norm.kind layer_norm with norm.bias)
  Tensor attn_norm_w, attn_norm_b;  // input norm (pre, parallel) / attention output norm (post)
  Tensor mlp_norm_w, mlp_norm_b;    // pre-MLP norm (pre, parallel) / MLP output norm (post);
                                    // undefined with parallel_shared (the input norm serves both)
  Tensor post_attn_norm_w, post_mlp_norm_w;  // sandwich norms
  // Dense MLP: gate_up [2 I_l, H] when gated, else fc1 [I_l, H]; down [H, I_l].
  Tensor up_w, up_b, down_w, down_b;
  // MoE: router [E, H], experts w13 [E, 2 Im_l, H], w2 [E, H, Im_l]; shared experts as a
  // dense gated MLP of width S * Is (shared_up_w [2 S Is_l, H], shared_down_w [H, S Is_l]).
  Tensor router_w, w13, w2, shared_up_w, shared_down_w;
  Tensor shared_gate_w;  // [1, H], replicated: the shared experts' sigmoid gate (Qwen2-MoE)
  // gpt-oss: the router's bias [E] (replicated), the experts' gate/up biases [E, 2 Im_l]
  // (each expert's gate then up block of this rank) and output biases [E, H] (replicated;
  // rank 0 of the TP group adds them).
  Tensor router_b, w13_b, w2_b;
  // DeepSeek's router: e_score_correction_bias [E] (fp32 storage with the dtype's values).
  Tensor score_bias;
  // A vision encoder's LayerScale (DINOv2): [H] vectors scaling the attention and MLP
  // branch outputs (replicated), or undefined.
  Tensor attn_scale, mlp_scale;
  // The layer's tensors of a mixer other than the built-in attention (mixer.h), in the
  // order the mixer made them: named "layers.<i>.<name>" by named_tensors(). How each
  // is kept when the weights are rounded to a dtype:
  enum class Storage {
    kDtype,        // rounded with the weights
    kFp32Rounded,  // fp32 storage holding the dtype's values (as `sinks`)
    kFp32,         // fp32 values in every run (a scan's A, D and dt bias: vLLM keeps them so)
  };
  struct MixerTensor {
    std::string name;
    Tensor tensor;
    Storage storage = Storage::kDtype;
  };
  std::vector<MixerTensor> mixer;
  // Adds a mixer tensor; names are unique within a layer (kInternal otherwise).
  void add_mixer(std::string name, Tensor t, Storage storage = Storage::kDtype);
  // The mixer tensor `name`; an undefined tensor when the layer has none so named (an
  // optional one, such as MLA's q_a_w without q compression).
  Tensor mixer_tensor(const std::string& name) const;
};

struct LayerStream;  // weights.cc: how streamed weights make their layers

// The transformer family's weights.
struct ModelWeights final : Weights {
  DType dtype = DType::kF32;
  Tensor embed;                     // [Vb, H] this rank's vocab block (zero-padded), first stage or tied head
  Tensor pos_embed, type_embed;     // learned positions [P, H], token types [T, H] (first stage)
  Tensor embed_norm_w, embed_norm_b;
  // A vision encoder's front (first stage; replicated over TP): the patch map [H, C p p]
  // and its bias [H], the class token [1, H] (or undefined). `embed` is then undefined.
  Tensor patch_w, patch_b, prefix;
  std::vector<LayerWeights> layers; // this stage's layers, in order
  Tensor final_norm_w, final_norm_b;
  Tensor lm_head;                   // [Vb, H] (the embedding block when tied)
  Tensor lm_head_b;                 // [Vb] (zero-padded) or undefined (head.bias)
  // Set on streamed weights (streamed()): `layers` then hold only their index.
  std::shared_ptr<LayerStream> stream;

  // Layer `i` of the stage (layers[i]). Streamed weights make its tensors here, after
  // giving back those of the layer made before, so the reference is valid only until
  // the next call; asking for the same layer again returns it without remaking it.
  const LayerWeights& layer(size_t i) const;

  // Generates the fp32 master weights of `placement`'s shard.
  static ModelWeights generate(const spec::Architecture& a, const Placement& placement, uint64_t seed);
  // The fp32 master weights of `placement`'s shard, from any source (a checkpoint:
  // runner/model/checkpoint_weights.h).
  static ModelWeights build(const spec::Architecture& a, const Placement& placement, const WeightSource& source);
  // `placement`'s shard on `backend` in `dtype`, each tensor made there block by block
  // (random weights drawn on the device; a checkpoint's blocks staged through the host
  // one at a time), never a whole host copy; the values are those of
  // build(...).to_dtype(dtype), bit for bit, on every backend.
  static ModelWeights load(const spec::Architecture& a, const Placement& placement, const WeightSource& source,
                           DType dtype, kernels::Backend& backend);
  // Like load(), except that the layers' tensors are made one layer at a time by
  // layer(), each time the model reaches a layer it does not hold: the weights outside
  // the layers plus one layer's are resident (the fp32 reference of a model too large to
  // hold, model_stage.reference). The values are load()'s, bit for bit. The weights
  // keep pointers to `source` and `backend`, which must outlive them.
  static ModelWeights streamed(const spec::Architecture& a, const Placement& placement, const WeightSource& source,
                               DType dtype, kernels::Backend& backend);
  // Tensors of the shard's shapes in `dtype` whose values are unspecified: allocated,
  // never written (large ones take no memory), for the shape pass of a model too
  // large to compute here (Runtime::set_shapes_only).
  static ModelWeights placeholders(const spec::Architecture& a, const Placement& placement, DType dtype);
  // A copy with every tensor rounded to `dtype`.
  ModelWeights to_dtype(DType dtype) const;
  // Every defined tensor with a stable name ("embed", "lm_head", "layers.3.qkv_w"); a
  // tied LM head is the embedding and is not listed twice. Streamed weights list those
  // outside the layers only (and count every layer's parameters).
  std::vector<std::pair<std::string, Tensor>> named_tensors() const override;
  int64_t parameter_count() const override;
  std::unique_ptr<Weights> rounded(DType dtype) const override;
};

}  // namespace fk::runner
