// The transformer's mixers. A layer is a list of blocks, each a residual branch
// (transformer.cc): a mixer, which mixes the tokens of a sequence, then a feed-forward
// (a dense MLP or an MoE). Mixers are plug-ins: each fills a MixerKind (like
// kernels::OpDef and ModelFamily) in its own file, listed in register_builtin_mixers()
// (mixer.cc), and a layer runs the kind whose `serves` takes it, else the default
// (attention). So a hybrid model (attention in some layers, a state-space mixer in the
// others) is a per-layer choice of the new kind alone, and the next mixer is one file
// plus its ops and a registration line. Built in: "attention" (multi-head,
// grouped-query and multi-query attention over a KV cache; attention.cc), "mla"
// (multi-head latent attention; mla.cc) and "mamba" (Jamba's Mamba layers, a recurrent
// state; mamba_mixer.cc).
//
// A mixer owns what it keeps between steps (a KV cache, a latent cache, a recurrent
// state), made once for the model's life: a captured decode step (Model::forward)
// replays against the same buffers. Its tensors are the layer's (LayerWeights): the
// built-in attention's are typed fields; any other kind's are LayerWeights::mixer,
// by name.
#pragma once

#include "core/named_registry.h"
#include "core/spec/architecture.h"
#include "core/tensor.h"
#include "runner/model/model_comms.h"
#include "runner/model/placement.h"
#include "runner/model/transformer/layer_gen.h"
#include "runner/model/transformer/weights.h"
#include "runner/runtime.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fk::runner {

// What a mixer sees of its model. The references outlive the mixer.
struct LayerContext {
  const spec::Architecture& arch;
  const Placement& placement;
  ModelComms comms;
  Runtime& rt;
  DType dtype;                                    // the activations' and caches'
  int64_t batch = 0;                              // the rank's sequences: a cache's first dimension
  int64_t max_positions = 0;                      // a cache's length
  const std::map<spec::LayerType, Tensor>& rope;  // cos/sin tables by layer type (rope models)
  const Tensor& positions;                        // the running micro-batch's positions [rows] (int64)

  // x [rows, K] times w [N, K]^T plus b (undefined: none): [rows, N].
  Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) const;
  // The architecture's norm (norm.kind, norm.eps) over the last dimension.
  Tensor norm(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) const;
  // An RMSNorm with its own eps (a mixer's inner norms).
  Tensor rms_norm(const Tensor& x, const Tensor& w, double eps, const std::string& role) const;
};

// The sequences and positions one forward() covers: sequences [seq_begin, seq_begin +
// seqs) of the rank's batch, positions [q_start, q_start + q_len) of each; x holds
// seqs x q_len rows in sequence order.
struct MixerStep {
  int64_t seq_begin = 0, seqs = 0, q_len = 0, q_start = 0;
};

class Mixer {
 public:
  virtual ~Mixer() = default;
  // Forgets the cached keys, values or state (a new batch of sequences).
  virtual void reset() = 0;
  // The branch output [rows, H] of x [rows, H] (the normalised stream), TP-reduced;
  // w is the layer's tensors. Only enqueues device work (Model::forward's rule).
  virtual Tensor forward(const LayerWeights& w, const Tensor& x, const MixerStep& step) = 0;
};

struct MixerKind {
  std::string name;
  // The kind that takes every layer no other kind takes (the built-in attention); one
  // kind is. The others say which layers are theirs with `serves`.
  bool is_default = false;
  // Whether layer `layer` (global index) of `a` runs this kind (not for the default).
  // At most one kind may take a layer.
  bool (*serves)(const spec::Architecture& a, int64_t layer) = nullptr;
  // Makes the layer's tensors of this mixer on g's rank into w (layer_gen.h).
  void (*weights)(const LayerGen& g, int64_t layer, LayerWeights& w) = nullptr;
  // The mixer of local layer `layer` (global index), its caches made.
  std::unique_ptr<Mixer> (*make)(const LayerContext& ctx, int64_t layer) = nullptr;
};

class MixerRegistry {
 public:
  static MixerRegistry& global();
  // Throws kInvalidArgument for a kind without a name or a function, a name taken, or
  // a second default kind.
  void add(MixerKind kind);
  std::vector<std::string> names() const { return table_.names(); }
  const MixerKind& get(const std::string& name) const { return table_.get(name); }

 private:
  NamedRegistry<MixerKind> table_{"transformer mixer"};
};

// The kind that takes layer `layer` of `a`: the one non-default kind whose `serves` takes
// it, else the default (registers the built-in kinds first). Throws kInternal naming
// both when two kinds take the layer.
const MixerKind& mixer_of(const spec::Architecture& a, int64_t layer);

// One registration function per built-in kind.
void register_attention_mixer(MixerRegistry& r);
void register_mla_mixer(MixerRegistry& r);
void register_mamba_mixer(MixerRegistry& r);

}  // namespace fk::runner
