// CUDA baseline of causal_conv1d: one thread per (sequence, channel, chunk of kChunk
// tokens), threads of a block on consecutive channels (so every row access is
// coalesced), the width-W window and the channel's weights in fp32 registers (W is a
// template argument), x read kBatch rows at a time so that the loads overlap. A chunk's window starts from the W - 1 rows before it: the
// conv_state rows for chunk 0, x rows for the others (kChunk >= W - 1, so those are
// all x rows). Only the chunk-0 thread of a (sequence, channel) reads or writes its
// conv_state, so the update needs no grid-wide ordering: with one chunk it stores its
// final window (right for any len, also len < W - 1, where old state rows remain);
// with several it stores x's last W - 1 rows, read after its own reads of the state.
// Accumulation is fp32 in the CPU baseline's order (bias, then k = 0..W-1); the
// window goes T -> fp32 -> T, so copied state rows are bit-exact.
#include "kernels/cuda/ops/causal_conv1d_launch.h"
#include "kernels/cuda/ops/row.cuh"

namespace fk::cuda {
namespace {

constexpr int kThreads = 128;  // channels per block
constexpr int64_t kChunk = 64;  // tokens per thread; >= kCausalConv1dMaxWidth - 1
constexpr int kBatch = 8;       // rows of x a thread loads at once (in flight together)
static_assert(kChunk >= launch::kCausalConv1dMaxWidth - 1 && kChunk % kBatch == 0);

template <typename T, int W>
__global__ void causal_conv1d_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ weight,
                                     const T* __restrict__ bias, T* __restrict__ state, int64_t len,
                                     int64_t channels, int64_t chunks, int64_t channel_blocks, int64_t tiles,
                                     bool silu) {
  constexpr int keep = W - 1;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t c = (tile % channel_blocks) * kThreads + threadIdx.x;
    const int64_t chunk = tile / channel_blocks % chunks, b = tile / channel_blocks / chunks;
    if (c >= channels) continue;
    float w[W];
#pragma unroll
    for (int k = 0; k < W; ++k) w[k] = dev::to_f32(weight[c * W + k]);
    const float b0 = bias != nullptr ? dev::to_f32(bias[c]) : 0.f;
    const T* xs = x + b * len * channels + c;  // x[b, t, c] = xs[t * channels]
    T* st = state + b * keep * channels + c;   // conv_state[b, i, c] = st[i * channels]
    const int64_t t0 = chunk * kChunk, t1 = t0 + kChunk < len ? t0 + kChunk : len;
    float win[W];
#pragma unroll
    for (int i = 0; i < keep; ++i) win[i] = dev::to_f32(chunk == 0 ? st[i * channels] : xs[(t0 - keep + i) * channels]);
    T* os = out + b * len * channels + c;
    for (int64_t t = t0; t < t1; t += kBatch) {  // kBatch rows loaded before any is used
      T rows[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        if (t + j < t1) rows[j] = xs[(t + j) * channels];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (t + j >= t1) break;
        win[keep] = dev::to_f32(rows[j]);
        float acc = b0;
#pragma unroll
        for (int k = 0; k < W; ++k) acc += w[k] * win[k];
        if (silu) acc = acc / (1.f + expf(-acc));
        os[(t + j) * channels] = dev::from_f32<T>(acc);
#pragma unroll
        for (int k = 0; k < keep; ++k) win[k] = win[k + 1];
      }
    }
    if (chunk != 0) continue;
    if (chunks == 1) {
#pragma unroll
      for (int i = 0; i < keep; ++i) st[i * channels] = dev::from_f32<T>(win[i]);
    } else {  // len > kChunk >= keep: the new state is x's last `keep` rows
#pragma unroll
      for (int i = 0; i < keep; ++i) st[i * channels] = xs[(len - keep + i) * channels];
    }
  }
}

template <typename T, int W>
cudaError_t launch_width(void* out, const void* x, const void* weight, const void* bias, void* state, int64_t batch,
                         int64_t len, int64_t channels, bool silu, cudaStream_t stream) {
  const int64_t chunks = (len + kChunk - 1) / kChunk, channel_blocks = (channels + kThreads - 1) / kThreads;
  const int64_t tiles = batch * chunks * channel_blocks;
  causal_conv1d_kernel<T, W><<<dev::row_blocks(tiles), kThreads, 0, stream>>>(
      static_cast<T*>(out), static_cast<const T*>(x), static_cast<const T*>(weight), static_cast<const T*>(bias),
      static_cast<T*>(state), len, channels, chunks, channel_blocks, tiles, silu);
  return cudaGetLastError();
}

template <typename T>
struct CausalConv1d {
  static cudaError_t run(void* out, const void* x, const void* weight, const void* bias, void* state, int64_t batch,
                         int64_t len, int64_t channels, int64_t width, bool silu, cudaStream_t stream) {
    if (width < launch::kCausalConv1dMinWidth || width > launch::kCausalConv1dMaxWidth) return cudaErrorInvalidValue;
    if (batch <= 0 || len <= 0 || channels <= 0) return cudaSuccess;
    switch (width) {
      case 2: return launch_width<T, 2>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      case 3: return launch_width<T, 3>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      case 4: return launch_width<T, 4>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      case 5: return launch_width<T, 5>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      case 6: return launch_width<T, 6>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      case 7: return launch_width<T, 7>(out, x, weight, bias, state, batch, len, channels, silu, stream);
      default: return launch_width<T, 8>(out, x, weight, bias, state, batch, len, channels, silu, stream);
    }
  }
};

}  // namespace

cudaError_t launch::causal_conv1d(void* out, const void* x, const void* weight, const void* bias, void* conv_state,
                                  Elem elem, int64_t batch, int64_t len, int64_t channels, int64_t width, bool silu,
                                  cudaStream_t stream) {
  return FK_CUDA_DISPATCH_ELEM(elem, CausalConv1d, out, x, weight, bias, conv_state, batch, len, channels, width, silu,
                               stream);
}

}  // namespace fk::cuda
