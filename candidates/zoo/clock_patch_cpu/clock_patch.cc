// Test zoo — clock_patch (CPU, hostile): a correct rms_norm whose library constructor overwrites the first
// bytes of libc's clock_gettime with a jump to its own version, which reports time
// passing 20 times slower than it does: an in-process timer would report a huge
// speedup. The judge's clock is in another process. Expected verdict: PASSED, with a
// kernel speedup below 3x (the manifest's expect_speedup_below).
#include "fk_kernel.h"
#include "fk_kernel_util.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

FK_KERNEL_DEFINE_ABI_VERSION()

namespace {

using namespace fk_util;

// A plain, correct rms_norm (fp32 sums, one rounding per output).
template <typename E>
void rms_norm_rows(fk_t result, fk_t input, fk_t weight, int64_t rows, int64_t h, float eps) {
  auto* out = static_cast<typename E::T*>(result->data);
  const auto* x = static_cast<const typename E::T*>(input->data);
  const auto* w = static_cast<const typename E::T*>(weight->data);
  for (int64_t r = 0; r < rows; ++r) {
    float ss = 0.0f;
    for (int64_t i = 0; i < h; ++i) ss += E::load(x[r * h + i]) * E::load(x[r * h + i]);
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(h) + eps);
    for (int64_t i = 0; i < h; ++i) out[r * h + i] = E::store(E::load(x[r * h + i]) * inv * E::load(w[i]));
  }
}

int rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double epsilon) {
  if (ctx == nullptr || result == nullptr || input == nullptr || weight == nullptr || input->ndim < 1 ||
      !same_shape(result, input) || weight->ndim != 1 || weight->shape[0] != input->shape[input->ndim - 1])
    return FK_ERROR_INVALID;
  const int64_t h = input->shape[input->ndim - 1], rows = h > 0 ? numel(input) / h : 0;
  const float eps = static_cast<float>(epsilon);
  switch (input->dtype) {
    case FK_DTYPE_F32: rms_norm_rows<F32>(result, input, weight, rows, h, eps); return FK_OK;
    case FK_DTYPE_F16: rms_norm_rows<F16>(result, input, weight, rows, h, eps); return FK_OK;
    case FK_DTYPE_BF16: rms_norm_rows<BF16>(result, input, weight, rows, h, eps); return FK_OK;
    default: return fail(ctx, FK_ERROR_UNSUPPORTED, "rms_norm: fp32, fp16 or bf16 only");
  }
}

}  // namespace

int slow_clock(clockid_t id, timespec* ts) {
  timespec real{};
  syscall(SYS_clock_gettime, id, &real);
  const long double ns = (static_cast<long double>(real.tv_sec) * 1e9L + real.tv_nsec) / 20.0L;
  ts->tv_sec = static_cast<time_t>(ns / 1e9L);
  ts->tv_nsec = static_cast<long>(ns - static_cast<long double>(ts->tv_sec) * 1e9L);
  return 0;
}

__attribute__((constructor)) void patch_clock() {
#if defined(__x86_64__)
  void* target = dlsym(RTLD_DEFAULT, "clock_gettime");
  if (target == nullptr) return;
  const long page = sysconf(_SC_PAGESIZE);
  auto* start = reinterpret_cast<unsigned char*>(reinterpret_cast<uintptr_t>(target) & ~static_cast<uintptr_t>(page - 1));
  if (mprotect(start, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
  unsigned char jump[12] = {0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xe0};  // movabs rax, addr; jmp rax
  const uintptr_t to = reinterpret_cast<uintptr_t>(&slow_clock);
  std::memcpy(jump + 2, &to, sizeof to);
  std::memcpy(target, jump, sizeof jump);
  mprotect(start, static_cast<size_t>(2 * page), PROT_READ | PROT_EXEC);
#endif
}

extern "C" int fk_candidate_rms_norm(const fk_context* ctx, fk_t result, fk_t input, fk_t weight, double eps) {
  return rms_norm(ctx, result, input, weight, eps);
}
