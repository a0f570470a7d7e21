// Model families, runner side: the plug-in that builds one rank's part of a model
// from (architecture, workload, placement, communicators, weights, runtime). Each
// family fills a ModelFamily (like kernels::OpDef) and is listed in
// register_builtin_model_families(); model_family_of() is the one door `fk forward`,
// the model stage, its shape pass and the job's fp32 logits go through (build_model()
// for a model alone). The spec side of a family (layout
// misfits, memory estimate) is core/spec/family.h, keyed by the same name: the
// architecture's `model_family`.
//
// A Model's contract: step() runs positions [q_start, q_start + q_len) of the rank's
// sequences and keeps what later steps need (a KV cache, a recurrent state); reset()
// forgets it. The family's step plan says which steps the model stage runs; a step
// after the first feeds each sequence the previous step's greedy token (q_len 1).
#pragma once

#include "core/error.h"
#include "core/named_registry.h"
#include "core/spec/architecture.h"
#include "core/spec/workload.h"
#include "runner/model/checkpoint_weights.h"
#include "runner/model/model_comms.h"
#include "runner/model/placement.h"
#include "runner/model/weight_source.h"
#include "runner/runtime.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fk::runner {

class Model {
 public:
  // Called after each local layer with the residual stream of one micro-batch
  // ([rows, H], fp32; rows = sequences x q_len, in sequence order from `seq_begin`).
  // Also with the embedding output (layer -1, first stage) and the final norm's output
  // (layer num_hidden_layers, last stage, when the model has one): with the layer
  // outputs, HF's output_hidden_states.
  using LayerHook = std::function<void(int64_t layer, int64_t seq_begin, const Tensor& stream)>;

  virtual ~Model() = default;
  virtual void set_layer_hook(LayerHook hook) = 0;
  // With `last` true the hook sees only each sequence's last position of a step
  // ([sequences, H]; one row each at decode).
  virtual void set_trace_last_rows(bool last) = 0;
  // Outputs for every position ([batch_size * q_len, width]) instead of each
  // sequence's last one (fk forward).
  virtual void set_all_logits(bool all) = 0;
  // Forgets every cached key/value or state (a new batch of sequences).
  virtual void reset() = 0;
  // `tokens` is [batch_size, q_len] int64 (read on the first stage only). Returns on the
  // last stage what the family's `output` says, fp32: logits [batch_size, width] of each
  // sequence's last position, or features [batch_size * q_len, width]; an undefined
  // tensor on other stages.
  virtual Tensor step(const Tensor& tokens, int64_t q_len, int64_t q_start) = 0;

  // Steps as CUDA graphs (optional). A family whose model splits its step says so here;
  // step() is then prepare(), forward(), result():
  //   prepare  writes the step's inputs (token ids, positions) into buffers the model
  //            keeps (Runtime::stage), the same buffers for every step of one shape;
  //   forward  only enqueues device work: no copy to or from the host, no wait, and
  //            every tensor it reads that outlives it is one the model keeps (weights,
  //            caches, prepare's buffers), so that the model stage can capture it once
  //            per step (Backend::capture) and replay it after each later prepare();
  //   result   waits and returns what step() returns.
  // Families that do not split keep these defaults, and their steps run eagerly.
  virtual bool splits_step() const { return false; }
  virtual void prepare(const Tensor& tokens, int64_t q_len, int64_t q_start);
  virtual void forward();
  virtual Tensor result();
};

// What a family builds a model from. The references outlive the model; `weights` were
// made by the same family.
struct ModelInputs {
  const spec::Architecture& arch;
  const spec::Workload& workload;
  const Placement& placement;
  ModelComms comms;
  const Weights& weights;
  Runtime& runtime;
};

// What the last stage's step() returns, and so how the model stage compares two runs.
enum class OutputKind {
  kLogits,    // [sequences, width]: each sequence's last position; top-1 agreement and KL,
              // and the fp32 run's greedy token feeds the next step
  kFeatures,  // [sequences x q_len, width]: every position; relative L2, recorded as the
              // layer error of layer num_hidden_layers
};
// Which residual streams HF's output_hidden_states lists (fk forward writes them in
// the same order, as hidden_states.0..L of a model of L layers).
enum class HiddenStates {
  kEmbeddingsFirst,      // the embedding output, every layer's output but the last, then the
                         // final norm's output (the last layer's without one): HF transformers
  kLayerOutputs,         // every layer's output, then the final norm's output: HF Mamba
  kEmbeddingsAndLayers,  // the embedding output and every layer's output, the final norm's
                         // only as the output itself: HF's vision encoders (ViT, DINOv2, SigLIP)
};
struct ModelOutput {
  ModelOutput() = default;
  ModelOutput(OutputKind k, int64_t w, HiddenStates hs = HiddenStates::kEmbeddingsFirst)
      : kind(k), width(w), hidden_states(hs) {}
  OutputKind kind = OutputKind::kLogits;
  int64_t width = 0;  // vocabulary or feature size
  HiddenStates hidden_states = HiddenStates::kEmbeddingsFirst;
  // What fk forward names the output ("": "logits", or "last_hidden_state" for features).
  std::string name;
  // Each hidden state's rows a sequence and width, in hidden_states' order (a ConvNeXt's
  // stages differ in both). Empty: every one is [seq_len, hidden_size].
  struct Shape {
    int64_t rows = 0, width = 0;
  };
  std::vector<Shape> hidden_shapes;
};

// One step of the model stage: positions [q_start, q_start + q_len) of every sequence.
struct ModelStep {
  std::string name;  // "prefill", "decode.0", ... (the job file's step names)
  int64_t q_len = 0, q_start = 0;
};

struct ModelFamily {
  std::string name;  // the architecture's model_family
  std::unique_ptr<Model> (*build)(const ModelInputs& in) = nullptr;
  // The model stage's steps for a workload, in order; the first takes the prompt
  // (q_start 0, q_len seq_len). Required.
  std::vector<ModelStep> (*steps)(const spec::Architecture& arch, const spec::Workload& workload) = nullptr;
  // What the models of `arch` return (required).
  ModelOutput (*output)(const spec::Architecture& arch) = nullptr;
  // The rank's weights, by the family's layout, with values from `source` (random by
  // seed or a checkpoint; weights.h). All three required.
  //   master:       fp32 on the host (the CPU's runs; rounded() for the others);
  //   load:         on `backend` in `dtype`, made there block by block, never a whole
  //                 host copy; bit for bit master(...)->rounded(dtype);
  //   placeholders: the shapes in `dtype`, values unspecified, taking no memory until
  //                 written (the shape pass).
  std::unique_ptr<Weights> (*master_weights)(const spec::Architecture& arch, const Placement& placement,
                                             const WeightSource& source) = nullptr;
  std::unique_ptr<Weights> (*load_weights)(const spec::Architecture& arch, const Placement& placement,
                                           const WeightSource& source, DType dtype,
                                           kernels::Backend& backend) = nullptr;
  std::unique_ptr<Weights> (*placeholder_weights)(const spec::Architecture& arch, const Placement& placement,
                                                  DType dtype) = nullptr;
  // Optional: like load, except that only the weights outside the layers are resident
  // and each layer's are made when the model reaches it, giving back the layer before
  // (the fp32 reference of a model too large to hold: model_stage.reference, "streamed").
  // The weights keep pointers to `source` and `backend`. Null: the family's weights are
  // always resident (auto then keeps them so; streamed is refused naming the family).
  std::unique_ptr<Weights> (*streamed_weights)(const spec::Architecture& arch, const Placement& placement,
                                               const WeightSource& source, DType dtype,
                                               kernels::Backend& backend) = nullptr;
  // Where the family's tensors live in a HuggingFace checkpoint of arch.model_type
  // (checkpoint_weights.h); throws kUnsupported naming the model_types it maps.
  TensorMap (*checkpoint_names)(const spec::Architecture& arch) = nullptr;
  // Optional: the rank's inputs of the model stage's first step (its sequences
  // [placement.batch_begin, + batch_size) of the workload), drawn by `seed`, as step()
  // takes them. Null: token ids (random_token_prompt).
  Tensor (*prompt)(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
                   uint64_t seed) = nullptr;
};

// Fills f's master_weights, load_weights and placeholder_weights from a family's
// Weights type W, whose static build(arch, placement, source), load(arch, placement,
// source, dtype, backend) and placeholders(arch, placement, dtype) make them.
template <typename W>
void set_weight_functions(ModelFamily& f) {
  f.master_weights = [](const spec::Architecture& a, const Placement& p,
                        const WeightSource& s) -> std::unique_ptr<Weights> {
    return std::make_unique<W>(W::build(a, p, s));
  };
  f.load_weights = [](const spec::Architecture& a, const Placement& p, const WeightSource& s, DType dtype,
                      kernels::Backend& backend) -> std::unique_ptr<Weights> {
    return std::make_unique<W>(W::load(a, p, s, dtype, backend));
  };
  f.placeholder_weights = [](const spec::Architecture& a, const Placement& p, DType dtype) -> std::unique_ptr<Weights> {
    return std::make_unique<W>(W::placeholders(a, p, dtype));
  };
}

// in.weights as the family's own Weights type W (a family's build function; `family`
// names it in the error when another family made them).
template <typename W>
const W& family_weights(const ModelInputs& in, const char* family) {
  const auto* w = dynamic_cast<const W*>(&in.weights);
  if (w == nullptr) fail(ErrorKind::kInternal, "the {} family was given weights another family made", family);
  return *w;
}

// Token ids [batch_size, seq_len] of the rank's sequences, uniform over the vocabulary,
// each drawn at its global (sequence, position) index: any layout sees the same prompt.
Tensor random_token_prompt(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
                           uint64_t seed);

// Images [batch_size, channels, size, size] of the rank's sequences, pixel values
// uniform in [-1, 1] (the range of HF image processors' normalised pixels), each drawn at
// its global index: any layout sees the same images.
Tensor random_image_prompt(const spec::Workload& workload, const Placement& placement, int64_t channels, int64_t size,
                           uint64_t seed);

// The op of an activation applied alone ("gelu", "silu", ...; kernels/ops).
std::string activation_op(spec::Activation a);

class ModelFamilyRegistry {
 public:
  static ModelFamilyRegistry& global();
  // Throws kInvalidArgument for an empty name, a missing function or a second family
  // of the same name.
  void add(ModelFamily family);
  const ModelFamily* find(const std::string& name) const { return table_.find(name); }
  // Throws kNotFound naming the families this program has.
  const ModelFamily& family(const std::string& name) const { return table_.get(name); }
  std::vector<std::string> names() const { return table_.names(); }

 private:
  NamedRegistry<ModelFamily> table_{"model family in fk-runner"};
};

// Registers every shipped family once (idempotent, thread-safe).
void register_builtin_model_families();

// The family of arch.model_family (registers the shipped families first). Throws
// kNotFound for a family the runner does not have.
const ModelFamily& model_family_of(const spec::Architecture& arch);

// The model of in.arch.model_family (model_family_of(in.arch).build).
std::unique_ptr<Model> build_model(const ModelInputs& in);

// One registration function per shipped family.
void register_transformer_model_family(ModelFamilyRegistry& r);
void register_mamba_model_family(ModelFamilyRegistry& r);
void register_convnext_model_family(ModelFamilyRegistry& r);

}  // namespace fk::runner
