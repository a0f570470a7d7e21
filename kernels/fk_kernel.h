/* fk_kernel.h — the FastKernels kernel ABI, version 2 (docs/kernel-abi.md lists the changes).
 *
 * A candidate kernel is a shared library (built by FastKernels from a candidate
 * folder, see docs/writing-kernels.md) that exports
 *   - uint32_t fk_kernel_abi_version(void), returning FK_KERNEL_ABI_VERSION
 *     (write FK_KERNEL_DEFINE_ABI_VERSION() once in one source file), and
 *   - one entry point for its operator, named in kernel.yaml (`entry`), with the
 *     operator's signature below: the context first, then the operator's tensors in
 *     the operator registry's order (docs/kernel-abi.md), then its scalar parameters
 *     as doubles. Integer-valued parameters (head_size, is_neox, q_len...) are exact
 *     in a double.
 *
 * Rules of the contract:
 *   - Return FK_OK on success. FK_ERROR_UNSUPPORTED means "this dtype or shape is not
 *     handled" (the verdict is UNSUPPORTED, not a failure of the run); any other code is
 *     a runtime error. A message may be written to ctx->error (NUL-terminated, at most
 *     ctx->error_capacity bytes).
 *   - Write every element of every output (and in/out) tensor; write nothing else:
 *     not an input, not outside a tensor's elements. Inputs are const.
 *   - Compute from the inputs of this call only: no caching of results across calls,
 *     no work left running after returning (CPU: every thread joined; CUDA: all work
 *     enqueued on ctx->stream, nothing on other streams, no host synchronisation needed
 *     by the caller beyond that stream). FastKernels checks each of these.
 *   - Never throw across this boundary (C++ candidates catch everything); never call
 *     exit/abort on bad input: return an error code.
 *   - Tensors are contiguous, row-major; strides are given (in elements) for
 *     completeness. fp16 is IEEE binary16, bf16 is bfloat16; both 16-bit patterns.
 *   - CPU kernels may use up to ctx->num_threads threads.
 */
#ifndef FK_KERNEL_H_
#define FK_KERNEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FK_KERNEL_ABI_VERSION 2u
#define FK_MAX_DIMS 8

typedef enum fk_dtype {
  FK_DTYPE_F32 = 0,
  FK_DTYPE_F16 = 1,
  FK_DTYPE_BF16 = 2,
  FK_DTYPE_F64 = 3,
  FK_DTYPE_I32 = 4,
  FK_DTYPE_I64 = 5,
  FK_DTYPE_U8 = 6
} fk_dtype;

typedef enum fk_device { FK_DEVICE_CPU = 0, FK_DEVICE_CUDA = 1 } fk_device;

typedef struct fk_tensor {
  void* data;                    /* NULL for an absent optional argument (e.g. no bias) */
  int32_t dtype;                 /* fk_dtype */
  int32_t ndim;                  /* 0 for an absent optional argument */
  int64_t shape[FK_MAX_DIMS];
  int64_t strides[FK_MAX_DIMS];  /* in elements */
  int32_t device;                /* fk_device */
  int32_t device_index;
} fk_tensor;

typedef struct fk_context {
  uint32_t abi_version;  /* FK_KERNEL_ABI_VERSION of the caller */
  int32_t device;        /* fk_device the tensors live on */
  int32_t device_index;
  int32_t num_threads;   /* CPU: threads the kernel may use (>= 1) */
  void* stream;          /* CUDA: the cudaStream_t to enqueue all work on */
  char* error;           /* optional message buffer */
  int32_t error_capacity;
} fk_context;

#define FK_OK 0
#define FK_ERROR_UNSUPPORTED 1
#define FK_ERROR_INVALID 2
#define FK_ERROR_RUNTIME 3

#define FK_KERNEL_DEFINE_ABI_VERSION() \
  uint32_t fk_kernel_abi_version(void) { return FK_KERNEL_ABI_VERSION; }

typedef const fk_tensor* fk_t; /* shorthand used in the signatures below */

/* ---- operator entry signatures (registry order; docs/kernel-abi.md) -------------- */
/* out[T,H]; ids[T] int32/int64; weight[Vb,H] */
typedef int (*fk_embedding_fn)(const fk_context*, fk_t out, fk_t ids, fk_t weight, double vocab_start,
                               double vocab_size);
/* result = input / sqrt(mean(input^2) + epsilon) * weight */
typedef int (*fk_rms_norm_fn)(const fk_context*, fk_t result, fk_t input, fk_t weight, double epsilon);
/* residual = input + residual (rounded to dtype); input = rms_norm(residual) * weight */
typedef int (*fk_fused_add_rms_norm_fn)(const fk_context*, fk_t input, fk_t residual, fk_t weight, double epsilon);
typedef int (*fk_layer_norm_fn)(const fk_context*, fk_t result, fk_t input, fk_t weight, fk_t bias, double epsilon);
/* positions[T] int; query[T,Hq*D] and key[T,Hk*D] rotated in place; cos_sin_cache[P,rot] */
typedef int (*fk_rotary_embedding_fn)(const fk_context*, fk_t positions, fk_t query, fk_t key, fk_t cos_sin_cache,
                                      double head_size, double is_neox);
/* out[T,N] = input[T,K] @ weight[N,K]^T + bias[N] (bias may be absent) */
typedef int (*fk_linear_fn)(const fk_context*, fk_t out, fk_t input, fk_t weight, fk_t bias);
/* out[T,d] = act(input[T,:d]) * input[T,d:] — silu_and_mul, gelu_and_mul, gelu_tanh_and_mul */
typedef int (*fk_act_and_mul_fn)(const fk_context*, fk_t out, fk_t input);
/* out = act(input) — gelu, gelu_new, relu, relu2, silu */
typedef int (*fk_activation_fn)(const fk_context*, fk_t out, fk_t input);
/* out[T,Hq,D]; query[T,Hq,D]; key_cache/value_cache[B,L,Hk,D]; sinks[Hq] fp32 (may be absent) */
typedef int (*fk_attention_fn)(const fk_context*, fk_t out, fk_t query, fk_t key_cache, fk_t value_cache, fk_t sinks,
                               double scale, double q_len, double q_start, double causal, double window,
                               double softcap);
typedef int (*fk_kv_cache_write_fn)(const fk_context*, fk_t key, fk_t value, fk_t key_cache, fk_t value_cache,
                                    double q_len, double q_start);
/* topk_weights[T,k] fp32, topk_ids[T,k] int32, gating_output[T,E] */
typedef int (*fk_topk_softmax_fn)(const fk_context*, fk_t topk_weights, fk_t topk_ids, fk_t gating_output,
                                  double renormalize);
/* w13_bias[E,2I], w2_bias[E,H] may be absent; activation 3 uses swiglu_alpha, swiglu_limit */
typedef int (*fk_fused_moe_fn)(const fk_context*, fk_t out, fk_t hidden_states, fk_t w13, fk_t w2, fk_t topk_weights,
                               fk_t topk_ids, fk_t w13_bias, fk_t w2_bias, double activation, double swiglu_alpha,
                               double swiglu_limit);
typedef int (*fk_add_fn)(const fk_context*, fk_t out, fk_t a, fk_t b);
typedef int (*fk_scale_fn)(const fk_context*, fk_t x, double factor);
typedef int (*fk_softcap_fn)(const fk_context*, fk_t x, double cap);
typedef int (*fk_argmax_fn)(const fk_context*, fk_t ids, fk_t input);
/* out[T,Hq,D]; query[T,Hq,D]; key/value[B,S,Hk,D]: every row sees all S keys of its sequence */
typedef int (*fk_cross_attention_fn)(const fk_context*, fk_t out, fk_t query, fk_t key, fk_t value, double scale,
                                     double q_len);

/* Every candidate library exports this (FK_KERNEL_DEFINE_ABI_VERSION). */
uint32_t fk_kernel_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* FK_KERNEL_H_ */
