// libfk_bench_shim.so: the CUDA baselines and a CUDA candidate of rms_norm and linear
// as plain C entry points, so that bench/gpu/do_bench.py can time the very same kernels
// with triton.testing.do_bench from torch tensors, and fk_bench_driver() times them with
// FastKernels' measurement driver (kernels/measure.h) in the same process, side by side.
// A benchmark tool, not part of the judge: it loads the candidate library itself.
#include "core/error.h"
#include "core/rng.h"
#include "core/stats.h"
#include "kernels/backends.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops/linear_lt.h"
#include "kernels/cuda/ops/rms_norm_launch.h"
#include "kernels/fk_kernel.h"
#include "kernels/measure.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using fk::cuda::launch::Elem;

fk_tensor describe(void* data, int dtype, std::initializer_list<int64_t> shape) {
  fk_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(shape.size());
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  int64_t stride = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.shape[d];
  }
  t.device = FK_DEVICE_CUDA;
  return t;
}

fk_rms_norm_fn candidate_entry(const std::string& lib, const std::string& entry) {
  static std::map<std::string, fk_rms_norm_fn> cache;
  const std::string key = lib + ":" + entry;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) fk::fail(fk::ErrorKind::kNotFound, "dlopen {}: {}", lib, dlerror());
  auto fn = reinterpret_cast<fk_rms_norm_fn>(dlsym(h, entry.c_str()));
  if (fn == nullptr) fk::fail(fk::ErrorKind::kNotFound, "{} has no symbol {}", lib, entry);
  return cache[key] = fn;
}

int rms_norm_candidate(const char* lib, const char* entry, void* out, const void* x, const void* w, int elem,
                       int64_t tokens, int64_t hidden, double eps, void* stream) {
  fk_tensor to = describe(out, elem, {tokens, hidden}), tx = describe(const_cast<void*>(x), elem, {tokens, hidden}),
            tw = describe(const_cast<void*>(w), elem, {hidden});
  char msg[256] = {};
  fk_context ctx{FK_KERNEL_ABI_VERSION, FK_DEVICE_CUDA, 0, 1, stream, msg, sizeof(msg)};
  return candidate_entry(lib, entry)(&ctx, &to, &tx, &tw, eps);
}

// Values uniform in [lo, hi), as bench/gpu/do_bench.py draws its torch tensors.
fk::Tensor random_device(fk::kernels::Backend& b, fk::DType dt, fk::Shape shape, const char* name, float lo = -2.0f,
                         float hi = 2.0f) {
  std::vector<float> v(static_cast<size_t>(fk::shape_numel(shape)));
  fk::rng_fill_uniform(fk::RngStream(11, name), fk::ShardBox::whole(shape), lo, hi, v);
  return b.to_device(fk::Tensor::borrow(v.data(), fk::DType::kF32, shape).to_dtype(dt));
}

fk::DType dtype_of(int elem) { return elem == 0 ? fk::DType::kF32 : elem == 1 ? fk::DType::kF16 : fk::DType::kBF16; }

}  // namespace

extern "C" {

int fk_bench_rms_norm(void* out, const void* x, const void* w, int elem, int64_t tokens, int64_t hidden, double eps,
                      void* stream) {
  return static_cast<int>(fk::cuda::launch::rms_norm(out, x, w, static_cast<Elem>(elem), tokens, hidden,
                                                     static_cast<float>(eps), static_cast<cudaStream_t>(stream)));
}

int fk_bench_linear(void* out, const void* x, const void* w, int elem, int64_t m, int64_t n, int64_t k, void* stream) {
  try {
    fk::cuda::LinearLt::instance().matmul(out, x, w, nullptr, static_cast<Elem>(elem), m, n, k,
                                          static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk_bench_linear: %s\n", e.what());
    return -1;
  }
}

int fk_bench_rms_norm_candidate(const char* lib, const char* entry, void* out, const void* x, const void* w, int elem,
                                int64_t tokens, int64_t hidden, double eps, void* stream) {
  try {
    return rms_norm_candidate(lib, entry, out, x, w, elem, tokens, hidden, eps, stream);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk_bench_rms_norm_candidate: %s\n", e.what());
    return -1;
  }
}

}  // extern "C"

namespace {

// out[0..3] = median, p10, p90, noise.
void write_summary(const fk::stats::Summary& s, double* out) {
  out[0] = s.median;
  out[1] = s.p10;
  out[2] = s.p90;
  out[3] = s.noise;
}

// replica: 0 the driver; > 0 do_bench's sequence, waiting after every `replica` calls
// (a number above `iterations`: only at the end, as do_bench does).
int bench(int replica, const char* what, int elem, int64_t a, int64_t b, int64_t c, int warmup, int iterations,
          double* out) {
  try {
    static std::unique_ptr<fk::kernels::Backend> backend = fk::kernels::backend_create(fk::DeviceKind::kCuda, 0);
    fk::kernels::Backend& be = *backend;
    const fk::DType dt = dtype_of(elem);
    const std::string w(what);
    fk::Tensor t_out, t_x, t_w;
    fk::kernels::Subject s;
    s.name = w;
    if (w == "linear") {
      t_out = be.empty(dt, {a, b});
      t_x = random_device(be, dt, {a, c}, "x");
      t_w = random_device(be, dt, {b, c}, "w");
      s.run = [&](int64_t) {
        fk::cuda::LinearLt::instance().matmul(t_out.data(), t_x.data(), t_w.data(), nullptr, static_cast<Elem>(elem),
                                              a, b, c, static_cast<cudaStream_t>(be.stream()));
      };
    } else {
      t_out = be.empty(dt, {a, b});
      t_x = random_device(be, dt, {a, b}, "x");
      t_w = random_device(be, dt, {b}, "w", 0.5f, 1.5f);
      if (w == "rms_norm") {
        s.run = [&](int64_t) {
          fk::cuda::launch::rms_norm(t_out.data(), t_x.data(), t_w.data(), static_cast<Elem>(elem), a, b, 1e-6f,
                                     static_cast<cudaStream_t>(be.stream()));
        };
      } else if (w.rfind("candidate:", 0) == 0) {
        const std::string rest = w.substr(10);
        const size_t colon = rest.rfind(':');
        const std::string lib = rest.substr(0, colon), entry = rest.substr(colon + 1);
        s.run = [&, lib, entry](int64_t) {
          if (rms_norm_candidate(lib.c_str(), entry.c_str(), t_out.data(), t_x.data(), t_w.data(), elem, a, b, 1e-6,
                                 be.stream()) != FK_OK)
            fk::fail(fk::ErrorKind::kRuntime, "the candidate failed");
        };
      } else {
        fk::fail(fk::ErrorKind::kInvalidArgument, "unknown subject '{}'", w);
      }
    }
    if (replica > 0) {
      // do_bench's sequence, in C++ on the backend's stream: every call's clear, start
      // event, call and stop event queued, a synchronise after every `replica` calls.
      for (int i = 0; i < warmup; ++i) s.run(0);
      be.synchronize();
      std::vector<cudaEvent_t> ev(2 * static_cast<size_t>(iterations));
      for (auto& e : ev) FK_CUDA_CHECK(cudaEventCreate(&e));
      const auto stream = static_cast<cudaStream_t>(be.stream());
      for (int i = 0; i < iterations; ++i) {
        be.flush_cache();
        FK_CUDA_CHECK(cudaEventRecord(ev[2 * static_cast<size_t>(i)], stream));
        s.run(0);
        FK_CUDA_CHECK(cudaEventRecord(ev[2 * static_cast<size_t>(i) + 1], stream));
        if ((i + 1) % replica == 0) be.synchronize();
      }
      be.synchronize();
      std::vector<double> t;
      for (int i = 0; i < iterations; ++i) {
        float ms = 0;
        FK_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * static_cast<size_t>(i)], ev[2 * static_cast<size_t>(i) + 1]));
        t.push_back(ms * 1e-3);
      }
      for (auto& e : ev) cudaEventDestroy(e);
      write_summary(fk::stats::summarize(t), out);
      return 0;
    }
    fk::kernels::MeasureOptions o;
    o.warmup = warmup;
    o.iterations = iterations;
    const auto r = fk::kernels::measure(be, std::span(&s, 1), fk::kernels::RotationPlan{1, true}, o);
    write_summary(r.subjects[0].summary, out);
    return r.audit.empty() ? 0 : (std::fprintf(stderr, "audit: %s\n", r.audit.c_str()), -1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk_bench_driver: %s\n", e.what());
    return -1;
  }
}

}  // namespace

extern "C" {

// Times `what` ("rms_norm", "linear" or "candidate:<library>:<entry>" for rms_norm) at
// sizes (a, b[, c]) = (tokens, hidden) or (m, n, k) with the measurement driver on
// cuda:0: the L2 flushed before every call (as do_bench does), `iterations` samples
// after `warmup` untimed calls. out[0..3] = median, p10, p90, noise. Returns 0, or -1
// with a message on stderr.
int fk_bench_driver(const char* what, int elem, int64_t a, int64_t b, int64_t c, int warmup, int iterations,
                    double* out) {
  return bench(0, what, elem, a, b, c, warmup, iterations, out);
}

// The same subject timed with triton.testing.do_bench's sequence instead of the driver's
// (no wait between calls): where the two differ, this tells whether the sequence or
// the Python side is why.
int fk_bench_replica(const char* what, int elem, int64_t a, int64_t b, int64_t c, int warmup, int iterations,
                     double* out) {
  return bench(iterations + 1, what, elem, a, b, c, warmup, iterations, out);
}

// do_bench's sequence with a wait after every call, as the driver waits: where this
// reads the driver's figure and fk_bench_replica do_bench's, how deep the queue is
// decides the difference.
int fk_bench_replica_waiting(const char* what, int elem, int64_t a, int64_t b, int64_t c, int warmup, int iterations,
                             double* out) {
  return bench(1, what, elem, a, b, c, warmup, iterations, out);
}

}  // extern "C"
