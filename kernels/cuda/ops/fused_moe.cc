// CUDA fused_moe baseline: unpacks the call (out, hidden_states, w13, w2, topk_weights
// fp32, topk_ids int32, w13_bias and w2_bias optional; activation, swiglu_alpha,
// swiglu_limit) for the launchers in fused_moe.cu, and owns its
// scratch (scratch.h: stream-ordered on current_stream(), allocated before the launch
// and freed after it, so the memory lives exactly as long as the enqueued work).
//
// At prefill sizes (launch::fused_moe_tiled_fits: fp16/bf16, more than 96 rows an expert)
// both expert GEMMs are cuBLASLt pointer-array batched GEMMs over 128-row expert tiles
// (LinearLt::matmul_batched, fp32 outputs, the CPU baseline's rounding points kept;
// 256-row tiles with 512+ rows an expert, else 128; FK_MOE_TILE_ROWS=128/256/512
// overrides);
// FK_MOE_CUBLASLT=0, or cuBLASLt offering no configuration for the batch, leaves them to
// the own grouped GEMM kernels of fused_moe.cu (which every other size takes). A few
// pairs (a decode step) take the GEMV form of fused_moe_gemv.cu; FK_MOE_GEMV=0 leaves
// them to the grouped GEMMs too.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/env_switch.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/fused_moe_launch.h"
#include "kernels/cuda/ops/host.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/cuda/ops/scratch.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace fk::cuda {
namespace {

enum { kOut, kHidden, kW13, kW2, kWeights, kIds, kB13, kB2 };

const void* optional_data(const Tensor& t) { return t.defined() && t.numel() > 0 ? t.data() : nullptr; }

launch::MoeActivation activation_of(const kernels::OpCall& c) {
  return {static_cast<int>(c.iparam(0)), static_cast<float>(c.param(1)), static_cast<float>(c.param(2))};
}

// Frees a scratch allocation on the stream when it goes out of scope (an exception
// thrown after the allocation included).
struct Scratch {
  void* p = nullptr;
  cudaStream_t stream;
  Scratch(size_t bytes, cudaStream_t s) : stream(s) {
    if (bytes > 0) FK_CUDA_CHECK(scratch_alloc(&p, bytes, stream));
  }
  ~Scratch() {
    if (p != nullptr) scratch_free(p, stream);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// The tiled path: true when it ran, false when cuBLASLt offers no configuration for
// the gate/up batch (nothing but routing was enqueued then; the caller runs the own
// kernels on its own workspace).
bool run_tiled(const kernels::OpCall& c, launch::Elem elem, int64_t tokens, int64_t hidden, int64_t experts,
               int64_t inter, int64_t topk, int64_t tile, const launch::MoeActivation& activation, void* workspace,
               cudaStream_t stream) {
  host::check_launch(launch::fused_moe_tiled_prepare(c.arg(kHidden).data(), c.arg(kW13).data(), c.arg(kW2).data(),
                                                     c.arg(kIds).data_as<int32_t>(), elem, tokens, hidden, experts,
                                                     inter, topk, tile, workspace, stream),
                     "fused_moe");
  const launch::MoeTiled v = launch::fused_moe_tiled_views(elem, tokens, hidden, experts, inter, topk, tile, workspace);
  LinearLt& lt = LinearLt::instance();
  constexpr uint32_t kAlign = 16;  // every slot and expert matrix: sizes are multiples of 8 elements
  if (!lt.matmul_batched(v.gate_up.out, v.gate_up.x, v.gate_up.w, elem, true, v.rows, 2 * inter, hidden, v.max_tiles,
                         kAlign, stream))
    return false;
  host::check_launch(launch::fused_moe_tiled_act(elem, tokens, hidden, experts, inter, topk, tile, activation,
                                                 optional_data(c.arg(kB13)), workspace, stream),
                     "fused_moe");
  if (!lt.matmul_batched(v.down.out, v.down.x, v.down.w, elem, true, v.rows, hidden, inter, v.max_tiles, kAlign,
                         stream))
    fail(ErrorKind::kRuntime,
         "fused_moe: cuBLASLt took the gate/up batch but offers no configuration for the down "
         "batch ({} tiles of {} x {} x {})",
         v.max_tiles, v.rows, hidden, inter);
  host::check_launch(launch::fused_moe_tiled_combine(c.arg(kOut).data(), c.arg(kWeights).data_as<float>(),
                                                     c.arg(kIds).data_as<int32_t>(), optional_data(c.arg(kB2)), elem,
                                                     tokens, hidden, experts, inter, topk, tile, workspace, stream),
                     "fused_moe");
  return true;
}

// The tiled path's tile height: FK_MOE_TILE_ROWS (128, 256 or 512) when set, else
// launch::fused_moe_tiled_rows' choice for the sizes.
int64_t tile_rows(int64_t tokens, int64_t experts, int64_t topk) {
  const char* v = std::getenv("FK_MOE_TILE_ROWS");
  if (v == nullptr || *v == '\0') return launch::fused_moe_tiled_rows(tokens, experts, topk);
  const std::string_view s(v);
  if (s == "128") return 128;
  if (s == "256") return 256;
  if (s == "512") return 512;
  fail(ErrorKind::kInvalidArgument, "FK_MOE_TILE_ROWS={}: not 128, 256 or 512", v);
}

}  // namespace

void register_cuda_fused_moe(kernels::OpRegistry& reg) {
  reg.add_impl({"fused_moe", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kHidden).dtype()).has_value() &&
                         c.arg(kWeights).dtype() == DType::kF32 && c.arg(kIds).dtype() == DType::kI32 &&
                         c.params.size() == 3 && c.arg(kIds).numel() <= 0x7fffffff;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& x = c.arg(kHidden);
                  const launch::Elem elem = host::elem(x, "fused_moe");
                  const int64_t tokens = x.size(0), hidden = x.size(1), experts = c.arg(kW13).size(0);
                  const int64_t inter = c.arg(kW13).size(1) / 2, topk = c.arg(kIds).size(1);
                  const launch::MoeActivation activation = activation_of(c);
                  const cudaStream_t stream = current_stream();
                  const int64_t tile = tile_rows(tokens, experts, topk);
                  // The gather copies 16 bytes at a time; cuBLASLt is told 16-byte alignment.
                  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
                  const bool tiled = launch::fused_moe_tiled_fits(elem, tokens, hidden, experts, inter, topk, tile) &&
                                     aligned(x.data()) && aligned(c.arg(kW13).data()) && aligned(c.arg(kW2).data()) &&
                                     env_switch("FK_MOE_CUBLASLT", "1", "0");
                  const size_t own = launch::fused_moe_workspace_bytes(elem, tokens, hidden, experts, inter, topk);
                  const size_t bytes = std::max(own, tiled ? launch::fused_moe_tiled_workspace_bytes(
                                                                 elem, tokens, hidden, experts, inter, topk, tile)
                                                           : size_t{0});
                  const Scratch workspace(bytes, stream);
                  if (tiled &&
                      run_tiled(c, elem, tokens, hidden, experts, inter, topk, tile, activation, workspace.p, stream))
                    return;
                  host::check_launch(
                      launch::fused_moe(c.arg(kOut).data(), x.data(), c.arg(kW13).data(), c.arg(kW2).data(),
                                        c.arg(kWeights).data_as<float>(), c.arg(kIds).data_as<int32_t>(),
                                        optional_data(c.arg(kB13)), optional_data(c.arg(kB2)), elem, tokens, hidden,
                                        experts, inter, topk, activation, env_switch("FK_MOE_GEMV", "1", "0"),
                                        workspace.p, stream),
                      "fused_moe");
                }});
}

}  // namespace fk::cuda
