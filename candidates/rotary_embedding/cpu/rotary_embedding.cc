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

// ---- 16-bit element patterns ------------------------------------------------------

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// bf16 is the upper half of an fp32 pattern.
inline float bf16_to_f32(uint16_t b) { return float_of(static_cast<uint32_t>(b) << 16); }
inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN stays a (quiet) NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                  // nearest, ties to even
}

// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Both directions pick between
// cases with bit masks rather than branches, so that loops over them vectorise.
inline uint32_t mask_if(bool c) { return 0u - static_cast<uint32_t>(c); }  // all ones when c
inline uint32_t pick(uint32_t mask, uint32_t yes, uint32_t no) { return (yes & mask) | (no & ~mask); }

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t t = static_cast<uint32_t>(h & 0x7fffu) << 13;  // exponent and mantissa in fp32 position
  // Scaling by 2^(127-15) rebiases the exponent; it is exact for subnormals too.
  const uint32_t finite = bits_of(float_of(t) * 0x1p112f);
  return float_of(sign | pick(mask_if((h & 0x7c00u) == 0x7c00u), t | 0x7f800000u, finite));  // Inf, NaN
}
inline uint16_t f32_to_f16(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  // Normal results: round the 13 dropped bits to nearest even, then rebias 127 -> 15.
  const uint32_t normal = (a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  // Below 2^-14 results are subnormal (steps of 2^-24). Adding 0.5 puts the value in
  // [0.5, 1), whose fp32 spacing is also 2^-24, so the fp32 adder rounds it to nearest
  // even; the mantissa bits above 0.5 are the fp16 pattern (0x400 is 2^-14).
  const uint32_t subnormal = bits_of(float_of(a) + 0.5f) - 0x3f000000u;
  uint32_t r = pick(mask_if(a < 0x38800000u), subnormal, normal);
  r = pick(mask_if(a >= 0x477ff000u), 0x7c00u, r);                        // >= 65520 rounds to Inf
  r = pick(mask_if(a > 0x7f800000u), 0x7e00u | ((a >> 13) & 0x3ffu), r);  // NaN stays a (quiet) NaN
  return static_cast<uint16_t>(sign | r);
}

// Element types: the stored type T, load to float, round once back.
struct F32 {
  using T = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct F16 {
  using T = uint16_t;
  static float load(uint16_t v) { return f16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_f16(v); }
};
struct BF16 {
  using T = uint16_t;
  static float load(uint16_t v) { return bf16_to_f32(v); }
  static uint16_t store(float v) { return f32_to_bf16(v); }
};

// ---- threads ----------------------------------------------------------------------

// Calls body(begin, end) on contiguous row ranges covering [0, rows), on at most
// max_threads threads (the caller's included). Problems too small to repay starting
// threads (some 30 us each) stay on the calling thread. Every thread is joined before
// returning; a thread that cannot be started has its range run here. body must not
// throw.
template <typename Body>
void for_rows(int32_t max_threads, int64_t rows, int64_t elems_per_row, const Body& body) {
  constexpr int64_t kMinElemsPerThread = 1 << 18;  // ~0.3 ms of work: 10x a thread start
  const int64_t n = std::min<int64_t>({max_threads, rows, rows * elems_per_row / kMinElemsPerThread});
  if (n <= 1) {
    body(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(n - 1));
  int64_t started = 1;
  try {
    for (; started < n; ++started) pool.emplace_back(body, rows * started / n, rows * (started + 1) / n);
  } catch (...) {
  }
  for (int64_t k = started; k < n; ++k) body(rows * k / n, rows * (k + 1) / n);
  body(0, rows / n);
  for (auto& t : pool) t.join();
}

// ---- arguments ----------------------------------------------------------------------

inline int fail(const fk_context* ctx, int code, const char* message) {
  if (ctx != nullptr && ctx->error != nullptr && ctx->error_capacity > 0)
    std::snprintf(ctx->error, static_cast<size_t>(ctx->error_capacity), "%s", message);
  return code;
}

inline int64_t numel(fk_t t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

inline bool same_shape(fk_t a, fk_t b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; ++d)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

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
