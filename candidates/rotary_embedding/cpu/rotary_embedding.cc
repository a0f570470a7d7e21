// rotary_embedding, CPU candidate (vLLM's rotary_embedding(positions, query, key,
// head_size, cos_sin_cache, is_neox)): rotates, in place, the first rot_dim =
// cos_sin_cache.shape[1] dimensions of every head of query [T, Hq * head_size] and
// key [T, Hk * head_size] by the angles of row positions[t] of cos_sin_cache
// [max_positions, rot_dim] (cos in its first half, sin in its second). neox style
// pairs dimension i with i + rot_dim/2; gpt-j style pairs 2i with 2i + 1. Dimensions
// past rot_dim are left as they are. positions are int32 or int64 and are checked to
// lie in [0, max_positions) before anything is written. fp32 arithmetic, one rounding
// per store, fp16/bf16 as raw 16-bit patterns with round-to-nearest-even; tokens are
// split over at most ctx->num_threads std::threads, all joined before returning.
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

// ---- the operator -----------------------------------------------------------------

constexpr int64_t kMaxRotDim = 1024;

int64_t position_at(fk_t positions, int64_t t) {
  return positions->dtype == FK_DTYPE_I64 ? static_cast<const int64_t*>(positions->data)[t]
                                          : static_cast<const int32_t*>(positions->data)[t];
}

// Rotates the first rot dims of every head of tokens [begin, end) of x [T, heads * hs].
template <typename E>
void rotate_tokens(typename E::T* x, int64_t heads, int64_t hs, const typename E::T* cache, int64_t rot, bool neox,
                   fk_t positions, int64_t begin, int64_t end) {
  const int64_t half = rot / 2;
  float cs[kMaxRotDim];
  for (int64_t t = begin; t < end; ++t) {
    const typename E::T* row = cache + position_at(positions, t) * rot;
    for (int64_t j = 0; j < rot; ++j) cs[j] = E::load(row[j]);
    const float* cos = cs;
    const float* sin = cs + half;
    for (int64_t h = 0; h < heads; ++h) {
      typename E::T* head = x + (t * heads + h) * hs;
      if (neox) {
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = E::load(head[i]), x2 = E::load(head[half + i]);
          head[i] = E::store(x1 * cos[i] - x2 * sin[i]);
          head[half + i] = E::store(x2 * cos[i] + x1 * sin[i]);
        }
      } else {
        for (int64_t i = 0; i < half; ++i) {
          const float x1 = E::load(head[2 * i]), x2 = E::load(head[2 * i + 1]);
          head[2 * i] = E::store(x1 * cos[i] - x2 * sin[i]);
          head[2 * i + 1] = E::store(x2 * cos[i] + x1 * sin[i]);
        }
      }
    }
  }
}

template <typename E>
void rotary_run(const fk_context* ctx, fk_t positions, fk_t query, fk_t key, fk_t cache, int64_t hs, bool neox) {
  const int64_t tokens = positions->shape[0], rot = cache->shape[1];
  const auto* cs = static_cast<const typename E::T*>(cache->data);
  auto* q = static_cast<typename E::T*>(query->data);
  auto* k = key != nullptr ? static_cast<typename E::T*>(key->data) : nullptr;
  const int64_t q_heads = query->shape[1] / hs, k_heads = k != nullptr ? key->shape[1] / hs : 0;
  for_rows(ctx->num_threads, tokens, (q_heads + k_heads) * rot, [=](int64_t begin, int64_t end) {
    rotate_tokens<E>(q, q_heads, hs, cs, rot, neox, positions, begin, end);
    if (k != nullptr) rotate_tokens<E>(k, k_heads, hs, cs, rot, neox, positions, begin, end);
  });
}

}  // namespace

extern "C" int fk_candidate_rotary_embedding(const fk_context* ctx, fk_t positions, fk_t query, fk_t key,
                                             fk_t cos_sin_cache, double head_size, double is_neox) {
  if (ctx == nullptr || positions == nullptr || query == nullptr || cos_sin_cache == nullptr) return FK_ERROR_INVALID;
  if (ctx->device != FK_DEVICE_CPU)
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: this candidate runs on the CPU");
  if (key != nullptr && (key->data == nullptr || key->ndim == 0)) key = nullptr;  // absent key: rotate query only
  if (positions->ndim != 1 || (positions->dtype != FK_DTYPE_I32 && positions->dtype != FK_DTYPE_I64))
    return fail(ctx, FK_ERROR_INVALID, "rotary_embedding: positions must be a 1-d int32 or int64 tensor");
  const int64_t tokens = positions->shape[0];
  const int64_t hs = static_cast<int64_t>(head_size);
  if (query->ndim != 2 || query->shape[0] != tokens ||
      (key != nullptr && (key->ndim != 2 || key->shape[0] != tokens)) || cos_sin_cache->ndim != 2 ||
      static_cast<double>(hs) != head_size || hs <= 0 || query->shape[1] % hs != 0 ||
      (key != nullptr && key->shape[1] % hs != 0))
    return fail(ctx, FK_ERROR_INVALID,
                "rotary_embedding: expected positions [T], query [T, Hq*head_size], key [T, Hk*head_size], "
                "cos_sin_cache [P, rot_dim]");
  const int64_t max_pos = cos_sin_cache->shape[0], rot = cos_sin_cache->shape[1];
  if (rot % 2 != 0 || rot > hs)
    return fail(ctx, FK_ERROR_INVALID, "rotary_embedding: rot_dim must be even and at most head_size");
  if (rot > kMaxRotDim) return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: rot_dim above 1024");
  if (query->dtype != cos_sin_cache->dtype || (key != nullptr && key->dtype != query->dtype))
    return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: query, key and cos_sin_cache must share one dtype");
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t p = position_at(positions, t);
    if (p < 0 || p >= max_pos) return fail(ctx, FK_ERROR_INVALID, "rotary_embedding: a position is outside the cache");
  }
  if (tokens == 0 || rot == 0) return FK_OK;
  const bool neox = is_neox != 0.0;
  try {
    switch (query->dtype) {
      case FK_DTYPE_F32:
        rotary_run<F32>(ctx, positions, query, key, cos_sin_cache, hs, neox);
        return FK_OK;
      case FK_DTYPE_F16:
        rotary_run<F16>(ctx, positions, query, key, cos_sin_cache, hs, neox);
        return FK_OK;
      case FK_DTYPE_BF16:
        rotary_run<BF16>(ctx, positions, query, key, cos_sin_cache, hs, neox);
        return FK_OK;
      default:
        return fail(ctx, FK_ERROR_UNSUPPORTED, "rotary_embedding: dtype must be fp32, fp16 or bf16");
    }
  } catch (...) {
    return fail(ctx, FK_ERROR_RUNTIME, "rotary_embedding: out of memory starting worker threads");
  }
}

// The entry must have the operator's exact signature.
static_assert(std::is_same_v<decltype(&fk_candidate_rotary_embedding), fk_rotary_embedding_fn>,
              "signature of rotary_embedding");
