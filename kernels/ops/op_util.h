// Helpers shared by the op definitions: argument checks with readable messages,
// input generation from the counter-based RNG, fp64 element access for references.
#pragma once

#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/op.h"

#include <initializer_list>
#include <string>

namespace fk::kernels::util {

// "" when `t` has `rank` dims, one of `dtypes`, and is contiguous; else the problem.
std::string check_tensor(const OpCall& call, const OpDef& def, size_t index, int64_t rank,
                         std::initializer_list<DType> dtypes = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64});
// "" when dimension d of arg a equals `expected`.
std::string check_dim(const OpCall& call, const OpDef& def, size_t a, int64_t d, int64_t expected,
                      const char* what);
// "" when the float args (non-optional or defined) share one dtype.
std::string check_same_dtype(const OpCall& call, const OpDef& def);
// Joins the first non-empty message.
std::string first_error(std::initializer_list<std::string> messages);

// A tensor of `dtype` with values uniform in [lo, hi) drawn from a stream derived from
// (rng, name); fp32 values rounded once to `dtype`.
Tensor uniform(DType dtype, Shape shape, const RngStream& rng, const std::string& name, float lo, float hi);
// int64 tensor with values uniform in [lo, hi).
Tensor uniform_ints(Shape shape, const RngStream& rng, const std::string& name, int64_t lo, int64_t hi);
// Allocates an output of `dtype` and shape.
inline Tensor output(DType dtype, Shape shape) { return Tensor::empty(dtype, std::move(shape)); }
// An undefined tensor standing for an absent optional argument.
inline Tensor none() { return Tensor(); }
inline bool present(const Tensor& t) { return t.defined() && t.numel() > 0; }

// fp64 data of a reference call's tensor.
inline double* f64(const Tensor& t) { return t.data_as<double>(); }
inline int64_t rows(const Tensor& t) { return t.numel() / t.size(-1); }
double bytes_of(const OpCall& call);  // sum of all tensor sizes (read + written once)

}  // namespace fk::kernels::util
