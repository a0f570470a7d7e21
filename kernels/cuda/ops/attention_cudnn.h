// Prefill attention through cuDNN 9's fused flash attention (the graph API, the
// engine torch's SDPA uses on Hopper), the CUDA attention baseline's first choice for
// calls with more than one query position. The call is the attention op's (see
// kernels/ops/attention.cc): query and output [batch * q_len, q_heads, d], the KV cache
// [batch, cache_len, kv_heads, d], causal (with an optional sliding window) or
// bidirectional, queries at positions q_start .. q_start + q_len - 1. cuDNN reads the
// cache in place (strided views of its first q_start + q_len positions).
//
// Graph: S = scale * Q K^T (fp32), the causal band as index masks (row + q_start >= col;
// with a window also col + window - q_start > row), softmax (max, exp, sum, divide;
// fp32), O = P V with P in the data type. One execution plan per problem (shape,
// dtype, mask, device), the fastest of the configurations cuDNN's heuristics offer,
// timed at the problem's first call on its buffers (FK_CUDNN_AUTOTUNE=0: the first
// offered), and cached; the workspace,
// if any, is stream-ordered (scratch.h), so a planned call can be captured in a
// CUDA graph. A problem is planned only outside stream capture.
//
// attention_cudnn() declines (returns false with the reason) when cuDNN cannot take the
// call: no usable cuDNN (cudnn_status.h), fp32 data, soft-capping, head sizes that are
// not a multiple of 8 or above 256, unaligned tensors, q_len 1 (the decode kernels are
// faster), or no engine of this cuDNN supports the graph; the caller then runs its own
// kernel. Declines are remembered per problem, so a refused shape costs one lookup.
//
// The graph is tried with the row-statistics node (log-sum-exp, unused) first and
// without it second, since cuDNN versions differ in which form their engines match;
// FK_CUDNN_ATTENTION_FORM=plain reverses the order (benchmarks time both).
#pragma once

#include "kernels/cuda/ops/elem.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fk::cuda {

struct AttentionCudnnCall {
  void* out = nullptr;
  const void* query = nullptr;
  const void* key_cache = nullptr;
  const void* value_cache = nullptr;
  launch::Elem elem = launch::Elem::kF32;
  int64_t batch = 0, cache_len = 0, q_len = 0, q_start = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  float scale = 1.f;
  bool causal = true;
  int64_t window = 0;
  float softcap = 0.f;
};

struct AttentionCudnnOutcome {
  bool ran = false;    // the work is enqueued on the stream
  std::string reason;  // why cuDNN declined (empty when it ran)
};

// Enqueues the call on `stream` through cuDNN, or declines. Throws fk::Error(kRuntime)
// naming the cuDNN or CUDA call when a planned execution fails (then nothing else is
// tried: the stream may hold partial work).
AttentionCudnnOutcome attention_cudnn(const AttentionCudnnCall& call, cudaStream_t stream);

// One line per problem seen so far: "<problem>: cudnn engine <n>, workspace <b> B" or
// "<problem>: declined: <reason>" (for logs and the tests).
std::vector<std::string> attention_cudnn_plans();

}  // namespace fk::cuda
