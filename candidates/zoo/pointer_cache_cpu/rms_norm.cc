// Zoo (bad on purpose): a correct rms_norm that remembers the buffers of its last call
// and returns at once when called again with the same pointers and shape — its output
// buffer still holds the previous result, so every answer is right, but a benchmark
// that reuses buffers times nothing. FastKernels must report REWARD_HACK.
#include "fk_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstring>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

const void* g_last_in = nullptr;
const void* g_last_out = nullptr;
int64_t g_last_rows = -1;

float to_float(const void* p, int32_t dtype, int64_t i) {
  if (dtype == FK_DTYPE_F32) return static_cast<const float*>(p)[i];
  uint16_t h = static_cast<const uint16_t*>(p)[i];
  if (dtype == FK_DTYPE_BF16) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e == 0) {
    if (m == 0) {
      u = sign;
    } else {
      e = 1;
      while ((m & 0x400u) == 0) {
        m <<= 1;
        --e;
      }
      u = sign | ((e + 112u) << 23) | ((m & 0x3ffu) << 13);
    }
  } else {
    u = sign | ((e + 112u) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

void from_float(void* p, int32_t dtype, int64_t i, float v) {
  if (dtype == FK_DTYPE_F32) {
    static_cast<float*>(p)[i] = v;
    return;
  }
  uint32_t x;
  std::memcpy(&x, &v, 4);
  uint16_t out;
  if (dtype == FK_DTYPE_BF16) {
    out = (x & 0x7fffffffu) > 0x7f800000u ? static_cast<uint16_t>((x >> 16) | 0x40u)
                                          : static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
  } else {
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {
      out = static_cast<uint16_t>(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    } else if (ax >= 0x477ff000u) {
      out = static_cast<uint16_t>(sign | 0x7c00u);
    } else if (ax < 0x38800000u) {
      const float scaled = std::fabs(v) * 16777216.0f;  // units of 2^-24, exact
      out = static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
    } else {
      out = static_cast<uint16_t>(sign | ((ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u) >> 13));
    }
  }
  static_cast<uint16_t*>(p)[i] = out;
}

}  // namespace

extern "C" int fk_candidate_rms_norm(const fk_context*, fk_t result, fk_t input, fk_t weight, double epsilon) {
  const int64_t h = input->shape[input->ndim - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < input->ndim; ++d) rows *= input->shape[d];
  if (input->data == g_last_in && result->data == g_last_out && rows == g_last_rows) return FK_OK;  // the cheat
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0;
    for (int64_t i = 0; i < h; ++i) {
      const float x = to_float(input->data, input->dtype, r * h + i);
      ss += x * x;
    }
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + static_cast<float>(epsilon));
    for (int64_t i = 0; i < h; ++i)
      from_float(result->data, result->dtype, r * h + i,
                 to_float(input->data, input->dtype, r * h + i) * inv * to_float(weight->data, weight->dtype, i));
  }
  g_last_in = input->data;
  g_last_out = result->data;
  g_last_rows = rows;
  return FK_OK;
}
