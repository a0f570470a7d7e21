// Operators: one definition per op (signature, shape rules, tolerance, fp64
// reference, input generator) and implementations per backend, registered by name.
//
// Shape of the design (nccl-tests' `struct testColl`, ggml's backend vtables): every
// op is one file under kernels/ops/ that fills an OpDef and registers it; the kernel
// stage, the model stage and candidate kernels reach ops only through the registry,
// so an implementation can be swapped per op without touching model code.
//
// An OpCall holds tensors in the order of OpDef::args and scalar parameters in the
// order of OpDef::params. Argument roles: kIn is read only, kOut is fully written,
// kInOut is read then overwritten. Semantics and names follow vLLM's custom ops
// (csrc/ops.h) where one exists; docs/kernel-abi.md lists them.
#pragma once

#include "core/rng.h"
#include "core/tensor.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace fk::kernels {

enum class ArgRole { kIn, kOut, kInOut };

struct ArgSpec {
  std::string name;
  ArgRole role;
  bool float_typed = true;  // false: integer tensor (token ids, positions, indices)
  bool optional = false;    // may be an undefined/empty tensor (e.g. a bias)
  bool own_dtype = false;   // a float tensor whose dtype need not match the others (fp32 router weights)
};

struct OpCall {
  std::vector<Tensor> args;
  std::vector<double> params;
  const Tensor& arg(size_t i) const { return args[i]; }
  double param(size_t i) const { return params[i]; }
  int64_t iparam(size_t i) const { return static_cast<int64_t>(params[i]); }
};

// Per-dtype tolerance: |got - ref| <= atol + rtol * |ref| must hold for at least
// `min_matched` of the elements (FastKernels' rule: 99%).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double min_matched = 0.99;
};
Tolerance default_tolerance(DType dtype);

// The sizes that describe one instance of an op ("tokens" -> 512, "hidden" -> 4096)
// plus its scalar parameters; the OpDef turns it into tensors.
struct OpShape {
  std::map<std::string, int64_t> dims;
  std::vector<double> params;
  int64_t dim(const std::string& name) const;
};

struct OpDef {
  std::string name;
  std::string summary;                // one line for docs and reports
  std::vector<ArgSpec> args;
  std::vector<std::string> params;
  // Checks dtypes and shapes of a call; returns "" or what is wrong.
  std::function<std::string(const OpCall&)> check;
  // fp64 reference. Every tensor of the call is fp64 (kInOut tensors hold copies of
  // the inputs and are overwritten); integer tensors keep their type.
  std::function<void(const OpCall&)> reference;
  // A fresh call for `shape` in `dtype`: inputs drawn from `rng` (index-addressable,
  // so any rank regenerates them), outputs allocated (contents unspecified).
  std::function<OpCall(const OpShape&, DType, const RngStream&)> make;
  // The OpShape of a call (inverse of make, used to replay model calls).
  std::function<OpShape(const OpCall&)> shape_of;
  // Work and traffic of a call, for roofline figures.
  std::function<double(const OpCall&)> flops;
  std::function<double(const OpCall&)> bytes;
  // Per-op tolerance override (default_tolerance when empty).
  std::function<Tolerance(DType)> tolerance;

  Tolerance tolerance_for(DType d) const { return tolerance ? tolerance(d) : default_tolerance(d); }
  size_t arg_index(const std::string& arg_name) const;
};

// An implementation of one op on one backend.
struct OpImpl {
  std::string op;
  std::string name;  // "cpu" (baseline), "cuda", or a candidate's name
  DeviceKind device = DeviceKind::kCpu;
  // Capability query: can this implementation run this call (dtype, shape)?
  std::function<bool(const OpCall&)> supports;
  std::function<void(const OpCall&)> run;
};

class OpRegistry {
 public:
  static OpRegistry& global();
  void add(OpDef def);
  void add_impl(OpImpl impl);
  const OpDef& def(const std::string& name) const;  // throws kNotFound with a hint
  const OpDef* find(const std::string& name) const;
  const OpImpl& impl(const std::string& op, const std::string& impl_name) const;
  const OpImpl* find_impl(const std::string& op, const std::string& impl_name) const;  // nullptr when absent
  std::vector<std::string> op_names() const;

 private:
  std::map<std::string, OpDef> defs_;
  std::map<std::string, std::map<std::string, OpImpl>> impls_;
};

// Registers all ops and their CPU baselines once (idempotent). Static registration
// inside a static library is dropped by the linker, so registration is explicit.
void register_builtin_ops();

// Runs the fp64 reference of `def` on `call` (any float dtypes) and returns the fp64
// values of every kOut/kInOut argument, by argument index.
std::map<size_t, Tensor> run_reference(const OpDef& def, const OpCall& call);

}  // namespace fk::kernels
