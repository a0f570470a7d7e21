// CUDA attention baselines. attention unpacks the call (out, query, key_cache,
// value_cache, sinks; scale, q_len, q_start, causal, window, softcap), offers it to
// cuDNN's fused attention (attention_cudnn.h: prefill, fp16/bf16, no soft-capping, no
// sinks) and otherwise runs the launcher in attention.cu (decode, split-KV, flash and
// general kernels); cross_attention runs that launcher over every key. supports()
// refuses head_dim above launch::kAttentionMaxHeadDim, more than 65535 KV heads (the
// grid's y dimension) and sinks other than fp32.
#include "kernels/cuda/ops/attention_cudnn.h"
#include "kernels/cuda/ops/attention_launch.h"
#include "kernels/cuda/ops/cuda_ops.h"
#include "kernels/cuda/ops/host.h"

namespace fk::cuda {

void register_cuda_attention(kernels::OpRegistry& reg) {
  enum { kOut, kQuery, kKeyCache, kValueCache, kSinks };
  enum { kScale, kQLen, kQStart, kCausal, kWindow, kSoftcap };
  reg.add_impl({"attention", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kQuery).dtype()).has_value() &&
                         c.params.size() == 6 && c.arg(kQuery).size(2) <= launch::kAttentionMaxHeadDim &&
                         c.arg(kKeyCache).size(2) <= 65535 &&
                         (!c.arg(kSinks).defined() || c.arg(kSinks).numel() == 0 ||
                          c.arg(kSinks).dtype() == DType::kF32);
                },
                [](const kernels::OpCall& c) {
                  const Tensor& q = c.arg(kQuery);
                  const Tensor& kc = c.arg(kKeyCache);
                  AttentionCudnnCall call;
                  call.out = c.arg(kOut).data();
                  call.query = q.data();
                  call.key_cache = kc.data();
                  call.value_cache = c.arg(kValueCache).data();
                  call.elem = host::elem(q, "attention");
                  call.batch = kc.size(0);
                  call.cache_len = kc.size(1);
                  call.q_len = c.iparam(kQLen);
                  call.q_start = c.iparam(kQStart);
                  call.q_heads = q.size(1);
                  call.kv_heads = kc.size(2);
                  call.head_dim = q.size(2);
                  call.scale = static_cast<float>(c.param(kScale));
                  call.causal = c.iparam(kCausal) != 0;
                  call.window = c.iparam(kWindow);
                  call.softcap = static_cast<float>(c.param(kSoftcap));
                  const Tensor& sinks = c.arg(kSinks);
                  const float* sink_data = sinks.defined() && sinks.numel() > 0 ? sinks.data_as<float>() : nullptr;
                  if (sink_data == nullptr && call.q_len >= 1 && call.q_start >= 0 &&
                      call.q_start + call.q_len <= call.cache_len && attention_cudnn(call, current_stream()).ran)
                    return;
                  host::check_launch(
                      launch::attention(c.arg(kOut).data(), q.data(), kc.data(), c.arg(kValueCache).data(),
                                        host::elem(q, "attention"), kc.size(0), kc.size(1), c.iparam(kQLen),
                                        c.iparam(kQStart), q.size(1), kc.size(2), q.size(2),
                                        static_cast<float>(c.param(kScale)), c.iparam(kCausal) != 0, c.iparam(kWindow),
                                        static_cast<float>(c.param(kSoftcap)), sink_data, current_stream()),
                      "attention");
                }});
  // cross_attention (out, query, key, value; scale, q_len): the same kernels, every query
  // row seeing all of its sequence's keys (kv_len = key.size(1)). cuDNN is not offered
  // it: its masks place the queries at the end of the keys.
  reg.add_impl({"cross_attention", "cuda", DeviceKind::kCuda,
                [](const kernels::OpCall& c) {
                  return host::device_contiguous(c) && host::elem_of(c.arg(kQuery).dtype()).has_value() &&
                         c.params.size() == 2 && c.arg(kQuery).size(2) <= launch::kAttentionMaxHeadDim &&
                         c.arg(kKeyCache).size(2) <= 65535;
                },
                [](const kernels::OpCall& c) {
                  const Tensor& q = c.arg(kQuery);
                  const Tensor& k = c.arg(kKeyCache);
                  host::check_launch(
                      launch::attention(c.arg(kOut).data(), q.data(), k.data(), c.arg(kValueCache).data(),
                                        host::elem(q, "cross_attention"), k.size(0), k.size(1), c.iparam(kQLen), 0,
                                        q.size(1), k.size(2), q.size(2), static_cast<float>(c.param(kScale)), false, 0,
                                        0.0f, nullptr, current_stream(), k.size(1)),
                      "cross_attention");
                }});
}

}  // namespace fk::cuda
