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
  });
}

const ModelFamily& model_family_of(const spec::Architecture& arch) {
  register_builtin_model_families();
  return ModelFamilyRegistry::global().family(arch.model_family);
}

std::unique_ptr<Model> build_model(const ModelInputs& in) { return model_family_of(in.arch).build(in); }

}  // namespace fk::runner
