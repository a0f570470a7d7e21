#include "runner/model/transformer/mixer.h"

#include "core/error.h"

#include <mutex>

namespace fk::runner {

Tensor LayerContext::linear(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) const {
  Tensor out = rt.empty(x.dtype(), {x.size(0), w.size(0)});
  rt.run("linear", role, kernels::OpCall{{out, x, w, b}, {}});
  return out;
}

Tensor LayerContext::norm(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& role) const {
  Tensor out = rt.empty(x.dtype(), x.shape());
  if (arch.norm.kind == spec::NormKind::kRmsNorm) {
    rt.run("rms_norm", role, kernels::OpCall{{out, x, w}, {arch.norm.eps}});
  } else {
    rt.run("layer_norm", role, kernels::OpCall{{out, x, w, b}, {arch.norm.eps}});
  }
  return out;
}

Tensor LayerContext::rms_norm(const Tensor& x, const Tensor& w, double eps, const std::string& role) const {
  Tensor out = rt.empty(x.dtype(), x.shape());
  rt.run("rms_norm", role, kernels::OpCall{{out, x, w}, {eps}});
  return out;
}

MixerRegistry& MixerRegistry::global() {
  static MixerRegistry r;
  return r;
}

void MixerRegistry::add(MixerKind kind) {
  const char* missing = !kind.is_default && kind.serves == nullptr ? "serves"
                        : kind.weights == nullptr                  ? "weights"
                        : kind.make == nullptr                     ? "make"
                                                                   : nullptr;
  if (!kind.name.empty() && missing != nullptr)
    fail(ErrorKind::kInvalidArgument, "transformer mixer '{}' has no {} function", kind.name, missing);
  if (kind.is_default)
    for (const std::string& name : table_.names())
      if (table_.get(name).is_default)
        fail(ErrorKind::kInvalidArgument, "transformer mixers '{}' and '{}' are both the default", name, kind.name);
  table_.add(std::move(kind));
}

namespace {

void register_builtin_mixers() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_attention_mixer(MixerRegistry::global());
    register_mla_mixer(MixerRegistry::global());
    register_mamba_mixer(MixerRegistry::global());
  });
}

}  // namespace

const MixerKind& mixer_of(const spec::Architecture& a, int64_t layer) {
  register_builtin_mixers();
  const MixerRegistry& r = MixerRegistry::global();
  const MixerKind* found = nullptr;
  const MixerKind* fallback = nullptr;
  for (const std::string& name : r.names()) {
    const MixerKind& k = r.get(name);
    if (k.is_default) {
      fallback = &k;
      continue;
    }
    if (!k.serves(a, layer)) continue;
    if (found != nullptr)
      fail(ErrorKind::kInternal, "layer {} of {} is taken by two transformer mixers, '{}' and '{}'", layer, a.name,
           found->name, k.name);
    found = &k;
  }
  if (found != nullptr) return *found;
  if (fallback == nullptr) fail(ErrorKind::kInternal, "no default transformer mixer is registered");
  return *fallback;
}

}  // namespace fk::runner
