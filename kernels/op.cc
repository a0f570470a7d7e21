#include "kernels/op.h"

#include "core/error.h"
#include "core/spec/diagnostics.h"
#include "kernels/compare.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>
#include <mutex>

namespace fk::kernels {

Tolerance default_tolerance(DType dtype) {
  // FastKernels' kernel-level rule (arXiv 2605.23215): fp32 (1e-5, 1e-3),
  // fp16/bf16 (1e-2, 1e-2), at least 99% of elements inside.
  switch (dtype) {
    case DType::kF32: return {1e-5, 1e-3, 0.99};
    case DType::kF16:
    case DType::kBF16: return {1e-2, 1e-2, 0.99};
    default: return {0, 0, 1.0};
  }
}

int64_t OpShape::dim(const std::string& name) const {
  auto it = dims.find(name);
  if (it == dims.end()) fail(ErrorKind::kInvalidArgument, "op shape has no dimension '{}'", name);
  return it->second;
}

size_t OpDef::arg_index(const std::string& arg_name) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == arg_name) return i;
  fail(ErrorKind::kInternal, "op {} has no argument '{}'", name, arg_name);
}

OpRegistry& OpRegistry::global() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(OpDef def) {
  const std::string name = def.name;
  defs_[name] = std::move(def);
}

void OpRegistry::add_impl(OpImpl impl) {
  if (!defs_.count(impl.op)) fail(ErrorKind::kInternal, "implementation '{}' of unknown op '{}'", impl.name, impl.op);
  const std::string op = impl.op, name = impl.name;
  impls_[op][name] = std::move(impl);
}

const OpDef* OpRegistry::find(const std::string& name) const {
  auto it = defs_.find(name);
  return it == defs_.end() ? nullptr : &it->second;
}

const OpDef& OpRegistry::def(const std::string& name) const {
  if (const OpDef* d = find(name)) return *d;
  const std::string hint = spec::closest_match(name, op_names());
  fail(ErrorKind::kNotFound, "no op named '{}'{}", name, hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint));
}

const OpImpl* OpRegistry::find_impl(const std::string& op, const std::string& impl_name) const {
  auto it = impls_.find(op);
  if (it == impls_.end()) return nullptr;
  auto jt = it->second.find(impl_name);
  return jt == it->second.end() ? nullptr : &jt->second;
}

const OpImpl& OpRegistry::impl(const std::string& op, const std::string& impl_name) const {
  auto it = impls_.find(op);
  if (it != impls_.end()) {
    auto jt = it->second.find(impl_name);
    if (jt != it->second.end()) return jt->second;
  }
  fail(ErrorKind::kNotFound, "op '{}' has no implementation '{}'", op, impl_name);
}

std::vector<std::string> OpRegistry::op_names() const {
  std::vector<std::string> names;
  for (const auto& [n, _] : defs_) names.push_back(n);
  return names;
}

void register_builtin_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    OpRegistry& r = OpRegistry::global();
    register_embedding(r);
    register_rms_norm(r);
    register_fused_add_rms_norm(r);
    register_layer_norm(r);
    register_head_norm(r);
    register_rotary_embedding(r);
    register_linear(r);
    register_activations(r);
    register_attention(r);
    register_kv_cache_write(r);
    register_topk_softmax(r);
    register_fused_moe(r);
    register_elementwise(r);
    register_causal_conv1d(r);
    register_selective_scan(r);
    register_ssd_scan(r);
    register_grouped_topk(r);
    register_mla(r);
    register_vision(r);
    register_conv(r);
    register_cross_attention(r);
  });
}

std::map<size_t, Tensor> run_reference(const OpDef& def, const OpCall& call) {
  OpCall ref;
  ref.params = call.params;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor& t = call.args[i];
    if (!t.defined() || !def.args[i].float_typed) {
      // Integer tensors: inputs shared, outputs get their own buffer.
      ref.args.push_back(def.args[i].role == ArgRole::kIn || !t.defined() ? t : Tensor::empty(t.dtype(), t.shape()));
      continue;
    }
    if (def.args[i].role == ArgRole::kOut) {
      ref.args.push_back(Tensor::empty(DType::kF64, t.shape()));
    } else {
      ref.args.push_back(host_to_f64(t));
    }
  }
  def.reference(ref);
  std::map<size_t, Tensor> outs;
  for (size_t i = 0; i < def.args.size(); ++i)
    if (def.args[i].role != ArgRole::kIn && ref.args[i].defined()) outs[i] = ref.args[i];
  return outs;
}

}  // namespace fk::kernels
