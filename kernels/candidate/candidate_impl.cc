#include "kernels/candidate/candidate_impl.h"

#include "core/error.h"
#include "kernels/fk_kernel.h"

#include <array>
#include <dlfcn.h>
#include <fmt/format.h>
#include <utility>

namespace fk::kernels {
namespace {

constexpr size_t kMaxArity = 13;  // calls of up to 12 tensors and 12 parameters
using Invoker = int (*)(void*, const fk_context*, const fk_tensor*, const double*);

template <size_t>
using TensorArg = const fk_tensor*;
template <size_t>
using ParamArg = double;

template <size_t... I, size_t... J>
int invoke_with(void* fn, const fk_context* ctx, const fk_tensor* t, const double* p, std::index_sequence<I...>,
                std::index_sequence<J...>) {
  using Fn = int (*)(const fk_context*, TensorArg<I>..., ParamArg<J>...);
  return reinterpret_cast<Fn>(fn)(ctx, &t[I]..., p[J]...);
}

template <size_t N, size_t M>
int invoke(void* fn, const fk_context* ctx, const fk_tensor* t, const double* p) {
  return invoke_with(fn, ctx, t, p, std::make_index_sequence<N>{}, std::make_index_sequence<M>{});
}

template <size_t... K>
constexpr std::array<Invoker, kMaxArity * kMaxArity> make_table(std::index_sequence<K...>) {
  return {&invoke<K / kMaxArity, K % kMaxArity>...};
}

constexpr auto kInvokers = make_table(std::make_index_sequence<kMaxArity * kMaxArity>{});

int32_t abi_dtype(DType d) {
  switch (d) {
    case DType::kF32: return FK_DTYPE_F32;
    case DType::kF16: return FK_DTYPE_F16;
    case DType::kBF16: return FK_DTYPE_BF16;
    case DType::kF64: return FK_DTYPE_F64;
    case DType::kI32: return FK_DTYPE_I32;
    case DType::kI64: return FK_DTYPE_I64;
    case DType::kU8: return FK_DTYPE_U8;
  }
  return -1;
}

fk_tensor describe(const Tensor& t) {
  fk_tensor d{};
  if (!t.defined() || (t.dim() == 1 && t.size(0) == 0)) {  // an absent optional argument
    d.data = nullptr;
    d.ndim = 0;
    d.dtype = t.defined() ? abi_dtype(t.dtype()) : FK_DTYPE_F32;
    return d;
  }
  if (t.dim() > FK_MAX_DIMS) fail(ErrorKind::kUnsupported, "tensor {} has more than {} dimensions", t.describe(), FK_MAX_DIMS);
  d.data = t.data();
  d.dtype = abi_dtype(t.dtype());
  d.ndim = static_cast<int32_t>(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i) {
    d.shape[i] = t.shape()[static_cast<size_t>(i)];
    d.strides[i] = t.strides()[static_cast<size_t>(i)];
  }
  d.device = t.device().kind == DeviceKind::kCpu ? FK_DEVICE_CPU : FK_DEVICE_CUDA;
  d.device_index = t.device().index;
  return d;
}

}  // namespace

std::shared_ptr<LoadedCandidate> candidate_load(const CandidateManifest& manifest, const std::string& library) {
  auto c = std::make_shared<LoadedCandidate>();
  c->manifest = manifest;
  c->library = library;
  c->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (c->handle == nullptr) fail(ErrorKind::kInvalidArgument, "cannot load {}: {}", library, dlerror());
  using VersionFn = uint32_t (*)();
  auto version = reinterpret_cast<VersionFn>(dlsym(c->handle, "fk_kernel_abi_version"));
  if (version == nullptr)
    fail(ErrorKind::kInvalidArgument,
         "{} does not export fk_kernel_abi_version(); write FK_KERNEL_DEFINE_ABI_VERSION() in one source file",
         manifest.name);
  const uint32_t v = version();
  if (v != FK_KERNEL_ABI_VERSION)
    fail(ErrorKind::kInvalidArgument, "{} was built for kernel ABI version {}, this FastKernels speaks version {}",
         manifest.name, v, FK_KERNEL_ABI_VERSION);
  c->entry = dlsym(c->handle, manifest.entry.c_str());
  if (c->entry == nullptr)
    fail(ErrorKind::kInvalidArgument,
         "{} does not export the entry '{}' named in kernel.yaml (is it declared extern \"C\"?)", manifest.name,
         manifest.entry);
  return c;
}

CandidateStatus candidate_invoke(const LoadedCandidate& c, const OpDef& def, const OpCall& call, int num_threads,
                                 void* stream) {
  if (call.args.size() >= kMaxArity || call.params.size() >= kMaxArity)
    fail(ErrorKind::kUnsupported, "op {} has more arguments than the ABI adapter handles", def.name);
  std::array<fk_tensor, kMaxArity> tensors{};
  for (size_t i = 0; i < call.args.size(); ++i) tensors[i] = describe(call.args[i]);
  std::array<double, kMaxArity> params{};
  for (size_t i = 0; i < call.params.size(); ++i) params[i] = call.params[i];
  thread_local char error[1024];
  error[0] = '\0';
  fk_context ctx{};
  ctx.abi_version = FK_KERNEL_ABI_VERSION;
  ctx.device = FK_DEVICE_CPU;
  for (const auto& t : call.args)
    if (t.defined() && t.device().kind == DeviceKind::kCuda) {
      ctx.device = FK_DEVICE_CUDA;
      ctx.device_index = t.device().index;
    }
  ctx.num_threads = std::max(1, num_threads);
  ctx.stream = stream;
  ctx.error = error;
  ctx.error_capacity = sizeof error;
  const int code = kInvokers[call.args.size() * kMaxArity + call.params.size()](c.entry, &ctx, tensors.data(),
                                                                                  params.data());
  error[sizeof error - 1] = '\0';
  return CandidateStatus{code, error};
}

}  // namespace fk::kernels
