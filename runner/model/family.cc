#include "runner/model/family.h"

#include "core/error.h"
#include "core/rng.h"

#include <mutex>

namespace fk::runner {

void Model::prepare(const Tensor&, int64_t, int64_t) {
  fail(ErrorKind::kInternal, "this model does not split its step (Model::splits_step)");
}
void Model::forward() { fail(ErrorKind::kInternal, "this model does not split its step (Model::splits_step)"); }
Tensor Model::result() { fail(ErrorKind::kInternal, "this model does not split its step (Model::splits_step)"); }

Tensor random_token_prompt(const spec::Architecture& a, const spec::Workload& w, const Placement& p, uint64_t seed) {
  const int64_t b = p.batch_size(w), b0 = p.batch_begin(w);
  const RngStream rng(seed, "inputs.prompt_ids");
  Tensor t = Tensor::empty(DType::kI64, {b, w.seq_len});
  for (int64_t s = 0; s < b; ++s)
    for (int64_t i = 0; i < w.seq_len; ++i) {
      const auto r = rng.raw(static_cast<uint64_t>((b0 + s) * w.seq_len + i));
      t.data_as<int64_t>()[s * w.seq_len + i] =
          static_cast<int64_t>(((static_cast<uint64_t>(r[0]) << 32) | r[1]) % static_cast<uint64_t>(a.vocab_size));
    }
  return t;
}

Tensor random_image_prompt(const spec::Workload& w, const Placement& p, int64_t channels, int64_t size, uint64_t seed) {
  const int64_t b = p.batch_size(w), b0 = p.batch_begin(w), per_image = channels * size * size;
  const RngStream rng(seed, "inputs.pixel_values");
  Tensor t = Tensor::empty(DType::kF32, {b, channels, size, size});
  float* px = t.data_as<float>();
  for (int64_t i = 0; i < b * per_image; ++i)
    px[i] = rng.uniform(static_cast<uint64_t>(b0 * per_image + i), -1.0f, 1.0f);
  return t;
}

std::string activation_op(spec::Activation a) {
  switch (a) {
    case spec::Activation::kSilu:
      return "silu";
    case spec::Activation::kGelu:
      return "gelu";
    case spec::Activation::kGeluTanh:
      return "gelu_new";
    case spec::Activation::kRelu:
      return "relu";
    case spec::Activation::kRelu2:
      return "relu2";
  }
  return "";
}

ModelFamilyRegistry& ModelFamilyRegistry::global() {
  static ModelFamilyRegistry r;
  return r;
}

void ModelFamilyRegistry::add(ModelFamily family) {
  const char* missing = family.build == nullptr                 ? "build"
                        : family.steps == nullptr                 ? "steps"
                        : family.output == nullptr                ? "output"
                        : family.master_weights == nullptr        ? "master_weights"
                        : family.load_weights == nullptr          ? "load_weights"
                        : family.placeholder_weights == nullptr   ? "placeholder_weights"
                        : family.checkpoint_names == nullptr      ? "checkpoint_names"
                                                                  : nullptr;
  if (!family.name.empty() && missing != nullptr)
    fail(ErrorKind::kInvalidArgument, "model family '{}' has no {} function", family.name, missing);
  table_.add(std::move(family));
}

void register_builtin_model_families() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_transformer_model_family(ModelFamilyRegistry::global());
    register_mamba_model_family(ModelFamilyRegistry::global());
    register_convnext_model_family(ModelFamilyRegistry::global());
  });
}

const ModelFamily& model_family_of(const spec::Architecture& arch) {
  register_builtin_model_families();
  return ModelFamilyRegistry::global().family(arch.model_family);
}

std::unique_ptr<Model> build_model(const ModelInputs& in) { return model_family_of(in.arch).build(in); }

}  // namespace fk::runner
