#include "runner/forward.h"

#include "collectives/grid.h"
#include "core/error.h"
#include "core/safetensors.h"
#include "core/spec/family.h"
#include "core/spec/spec_file.h"
#include "kernels/backends.h"
#include "runner/model/checkpoint_weights.h"
#include "runner/model/family.h"
#include "runner/model/model_comms.h"
#include "runner/runtime.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

namespace fk::runner {
namespace {

namespace fs = std::filesystem;

Tensor read_input_ids(const std::string& path) {
  const SafetensorsFile f(path);
  if (!f.has("input_ids"))
    fail(ErrorKind::kInvalidArgument, "--inputs {}: no tensor 'input_ids' (found: {})", path, fmt::join(f.names(), ", "));
  const SafetensorsEntry& e = f.entry("input_ids");
  if (e.dtype != DType::kI64 && e.dtype != DType::kI32)
    fail(ErrorKind::kInvalidArgument, "--inputs {}: input_ids is {}, expected I64 (or I32)", path,
         safetensors_dtype_name(e.dtype));
  if (e.shape.size() != 2 || e.shape[0] < 1 || e.shape[1] < 1)
    fail(ErrorKind::kInvalidArgument, "--inputs {}: input_ids has shape [{}], expected [batch, seq] with both >= 1", path,
         fmt::join(e.shape, ", "));
  return f.read("input_ids", DType::kI64);
}

// An image model's images: pixel_values [batch, channels, size, size].
Tensor read_pixel_values(const std::string& path, const spec::ImageInput& v, const std::string& arch) {
  const SafetensorsFile f(path);
  if (!f.has("pixel_values"))
    fail(ErrorKind::kInvalidArgument, "--inputs {}: no tensor 'pixel_values' ({} takes images; found: {})", path, arch,
         fmt::join(f.names(), ", "));
  const SafetensorsEntry& e = f.entry("pixel_values");
  if (!dtype_is_float(e.dtype))
    fail(ErrorKind::kInvalidArgument, "--inputs {}: pixel_values is {}, expected F32, F16 or BF16", path,
         safetensors_dtype_name(e.dtype));
  const std::vector<int64_t> want = {v.channels, v.size, v.size};
  if (e.shape.size() != 4 || e.shape[0] < 1 || std::vector<int64_t>(e.shape.begin() + 1, e.shape.end()) != want)
    fail(ErrorKind::kInvalidArgument,
         "--inputs {}: pixel_values has shape [{}], but {} takes [batch, {}, {}, {}] (its num_channels and "
         "image_size)",
         path, fmt::join(e.shape, ", "), arch, v.channels, v.size, v.size);
  return f.read("pixel_values", DType::kF32);
}

}  // namespace

ForwardPlan forward_prepare(const ForwardOptions& o, int world_size) {
  ForwardPlan p;
  if (o.spec_file.empty()) fail(ErrorKind::kInvalidArgument, "the architecture spec is required");
  if (o.output.empty()) fail(ErrorKind::kInvalidArgument, "-o/--output is required (a .safetensors file to write)");
  if (o.inputs.empty()) fail(ErrorKind::kInvalidArgument, "--inputs is required (a .safetensors file with input_ids)");
  spec::Diagnostics diags;
  const auto doc = spec::architecture_load_file(o.spec_file, diags);
  if (!doc) fail(ErrorKind::kInvalidArgument, "{}", diags.to_string());
  const auto arch = doc->select(o.preset);
  if (!arch)
    fail(ErrorKind::kInvalidArgument, "--preset {}: {} has no such preset (has: {})", o.preset, o.spec_file,
         fmt::join(doc->preset_names(), ", "));
  p.arch = *arch;
  const auto layout = spec::layout_parse(o.layout);
  if (!layout) fail(ErrorKind::kInvalidArgument, "--layout {}: expected e.g. tp1, tp2, pp2, tp2pp2, tp2dp2", o.layout);
  p.layout = *layout;
  const auto dt = dtype_parse(o.dtype);
  if (!dt || !dtype_is_float(*dt) || *dt == DType::kF64)
    fail(ErrorKind::kInvalidArgument, "--dtype {}: expected fp32, bf16 or fp16", o.dtype);
  const auto backend = device_kind_parse(o.backend);
  if (!backend)
    fail(ErrorKind::kInvalidArgument, "--backend {}: expected cpu or cuda", o.backend);
  p.backend = *backend;
  if (const std::string why = kernels::backend_unavailable(p.backend); !why.empty())
    fail(ErrorKind::kUnsupported, "--backend {}: {}", o.backend, why);
  if (p.layout.ranks() != world_size)
    fail(ErrorKind::kInvalidArgument, "--layout {} needs {} ranks, but {} were started", o.layout, p.layout.ranks(),
         world_size);
  const auto image = spec::architecture_image_input(p.arch);
  p.input_ids = image ? read_pixel_values(o.inputs, *image, p.arch.name) : read_input_ids(o.inputs);
  const int64_t batch = p.input_ids.size(0);
  // An image model's sequences are its images: the family says how many rows each makes.
  spec::Workload images;
  images.batch = batch;
  const int64_t seq = image ? spec::family_workload(p.arch, images).seq_len : p.input_ids.size(1);
  for (int64_t i = 0; !image && i < p.input_ids.numel(); ++i) {
    const int64_t id = p.input_ids.data_as<int64_t>()[i];
    if (id < 0 || id >= p.arch.vocab_size)
      fail(ErrorKind::kInvalidArgument, "--inputs {}: input_ids[{}][{}] = {} is outside the vocabulary [0, {})", o.inputs,
           i / seq, i % seq, id, p.arch.vocab_size);
  }
  if (p.arch.position.kind == spec::PositionKind::kLearned && seq > p.arch.max_position_embeddings)
    fail(ErrorKind::kInvalidArgument, "--inputs {}: {} positions, but {} has {} learned positions", o.inputs, seq,
         p.arch.name, p.arch.max_position_embeddings);
  p.workload.name = "forward";
  p.workload.phase = spec::Phase::kPrefill;
  p.workload.batch = batch;
  p.workload.seq_len = seq;
  p.workload.dtype = *dt;
  const auto misfits = spec::layout_misfits(p.arch, p.workload, p.layout);
  if (!misfits.empty())
    fail(ErrorKind::kInvalidArgument, "--layout {} does not fit {} with batch {}: {}", o.layout, p.arch.name, batch,
         misfits[0]);
  p.weights = !o.weights.empty() ? o.weights : p.arch.checkpoint;
  p.seed = o.seed;
  p.output = o.output;
  const fs::path parent = fs::path(o.output).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    fail(ErrorKind::kInvalidArgument, "-o {}: folder {} does not exist", o.output, parent.string());
  return p;
}

std::string forward_execute(const ForwardPlan& p, collectives::Communicator& world, const Agree& agree) {
  const auto t0 = std::chrono::steady_clock::now();
  const collectives::Grid grid(p.layout, world.rank());
  collectives::GroupComms groups = collectives::grid_split(world, grid);
  const Placement pl = placement_of(grid);
  const spec::Architecture& a = p.arch;
  const DType dtype = p.workload.dtype_for(a);

  // Each rank reads its shard; a bad checkpoint fails on some ranks only, so agree
  // before the first collective of the model.
  // A rank without a device of its own fails the same way.
  std::unique_ptr<kernels::Backend> backend;
  const ModelFamily& family = model_family_of(p.arch);
  std::unique_ptr<Weights> weights;
  std::string problem;
  try {
    backend = kernels::backend_create(p.backend, kernels::node_local_rank());
    std::unique_ptr<WeightSource> source;
    if (p.weights.empty()) {
      source = std::make_unique<RandomWeights>(p.seed);
    } else {
      source = std::make_unique<CheckpointWeights>(p.weights, a, family.checkpoint_names(a));
    }
    weights = family.load_weights(a, pl, *source, dtype, *backend);
  } catch (const Error& e) {
    problem = e.what();
  }
  agree(problem);
  const ModelCommunicators comms(*backend, groups);

  const int64_t batch = p.workload.batch, seq = p.workload.seq_len, h = a.hidden_size, layers = a.num_hidden_layers;
  const int64_t b0 = pl.batch_begin(p.workload), nb = pl.batch_size(p.workload);
  const ModelOutput output = family.output(a);
  const bool encoder = output.kind == OutputKind::kFeatures;
  const bool final_norm = a.head.final_norm;
  // hidden_states.0..L, then the output, each [batch, rows a sequence, width] (every
  // hidden state [batch, seq, h] unless the family says otherwise): filled where computed.
  std::vector<ModelOutput::Shape> shapes = output.hidden_shapes;
  if (shapes.empty()) shapes.assign(static_cast<size_t>(layers + 1), ModelOutput::Shape{seq, h});
  if (static_cast<int64_t>(shapes.size()) != layers + 1)
    fail(ErrorKind::kInternal, "model family '{}' gives {} hidden-state shapes for {} layers", family.name,
         shapes.size(), layers);
  std::vector<int64_t> offsets = {0};
  for (const auto& sh : shapes) offsets.push_back(offsets.back() + batch * sh.rows * sh.width);
  const int64_t hs_size = offsets.back();
  const int64_t out_width = output.width;
  std::vector<float> buf(static_cast<size_t>(hs_size + batch * seq * out_width), 0.0f);
  const bool writer = pl.tp_rank == 0;  // TP ranks hold the same stream: one writes it
  auto put = [&](int64_t index, int64_t seq_begin, const Tensor& stream) {
    if (!writer) return;
    const ModelOutput::Shape& sh = shapes[static_cast<size_t>(index)];
    if (stream.size(1) != sh.width || stream.size(0) % sh.rows != 0)
      fail(ErrorKind::kInternal, "hidden state {} has shape [{}, {}], expected rows of {} a sequence x {}", index,
           stream.size(0), stream.size(1), sh.rows, sh.width);
    float* dst = buf.data() + offsets[static_cast<size_t>(index)] + (b0 + seq_begin) * sh.rows * sh.width;
    std::memcpy(dst, stream.data(), static_cast<size_t>(stream.numel()) * sizeof(float));
  };

  Tensor tokens = p.input_ids.slice(0, b0, nb).contiguous_copy();
  Runtime rt(ImplSet::baseline(p.backend), *backend);
  const std::unique_ptr<Model> model = family.build({a, p.workload, pl, comms.comms(), *weights, rt});
  model->set_all_logits(true);
  model->set_layer_hook([&](int64_t layer, int64_t seq_begin, const Tensor& stream) {
    if (output.hidden_states == HiddenStates::kLayerOutputs) {  // layer l at l, the final norm at L
      if (layer >= 0 && (layer < layers || final_norm)) put(layer, seq_begin, stream);
      return;
    }
    if (output.hidden_states == HiddenStates::kEmbeddingsAndLayers) {  // layer l at l + 1; the norm is the output
      if (layer < layers) put(layer + 1, seq_begin, stream);
      return;
    }
    if (layer < 0) {
      put(0, seq_begin, stream);
    } else if (layer < layers - 1 || (layer == layers - 1 && !final_norm)) {
      put(layer + 1, seq_begin, stream);
    } else if (layer == layers && final_norm) {
      put(layers, seq_begin, stream);
    }
  });
  const Tensor out = model->step(tokens, seq, 0);
  if (pl.last_stage() && writer)
    std::memcpy(buf.data() + hs_size + b0 * seq * out_width, out.data(), out.nbytes());

  std::vector<float> all(buf.size());
  world.all_reduce(buf.data(), all.data(), buf.size(), DType::kF32, collectives::ReduceOp::kSum);
  if (world.rank() != 0) return "";

  std::vector<std::pair<std::string, Tensor>> tensors;
  Tensor o = Tensor::empty(DType::kF32, {batch, seq, out_width});
  std::memcpy(o.data(), all.data() + hs_size, o.nbytes());
  const std::string out_name = !output.name.empty() ? output.name : encoder ? "last_hidden_state" : "logits";
  tensors.emplace_back(out_name, o);
  for (int64_t i = 0; i <= layers; ++i) {
    const ModelOutput::Shape& sh = shapes[static_cast<size_t>(i)];
    Tensor t = Tensor::empty(DType::kF32, {batch, sh.rows, sh.width});
    std::memcpy(t.data(), all.data() + offsets[static_cast<size_t>(i)], t.nbytes());
    tensors.emplace_back(fmt::format("hidden_states.{}", i), t);
  }
  safetensors_write(p.output, tensors,
                    {{"format", "fk forward"},
                     {"architecture", a.name},
                     {"model_type", a.model_type},
                     {"layout", p.layout.name()},
                     {"dtype", std::string(dtype_name(dtype))},
                    {"backend", std::string(device_kind_name(p.backend))},
                     {"weights", p.weights.empty() ? fmt::format("random (seed {})", p.seed) : p.weights}});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return fmt::format("fk forward: {} {} {} on {} batch {} x {} positions in {:.2f} s -> {} ({} + hidden_states.0..{})",
                     a.name, p.layout.name(), dtype_name(dtype), device_kind_name(p.backend), batch, seq, s, p.output,
                     out_name, layers);
}

}  // namespace fk::runner
