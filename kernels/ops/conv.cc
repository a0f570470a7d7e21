// The ops of a ConvNeXt image backbone (V1 and V2, HF's ConvNextModel / ConvNextV2Model)
// around its linear maps, on channels-last activations (NHWC: rows [B*H*W, C]):
//   depthwise_conv2d(out, x, weight, bias; padding):   x [B, H, W, C], weight [C, k, k]
//       (HF's Conv2d(C, C, k, padding, groups=C) weight [C, 1, k, k] reshaped), bias [C]
//       (optional), stride 1, zero padding: out [B, Ho, Wo, C] with Ho = H + 2*padding -
//       k + 1 (Wo alike, both >= 1),
//         out[b, y, x, c] = bias[c] + sum_{ky, kx} weight[c, ky, kx] *
//                           x[b, y + ky - padding, x + kx - padding, c]
//       (taps outside the image contribute 0), the bias then the taps in (ky, kx) order,
//       fp32 sums rounded once.
//   grn(out, x, gamma, beta; eps):   ConvNeXt V2's Global Response Normalization over
//       x [B, N, C] (N = H*W pixels an image), out [B, N, C] (not in place):
//         Gx[b, c] = sqrt(sum_n x[b, n, c]^2),  Nx[b, c] = Gx[b, c] / (mean_c Gx[b, c] + eps)
//         out[b, n, c] = gamma[c] * (x[b, n, c] * Nx[b, c]) + beta[c] + x[b, n, c]
//       (HF: vector_norm over dims (1, 2) of NHWC x, its mean over channels, eps 1e-6);
//       fp32 math, one rounding.
//   patchify_channels_last(out, x; patch):   patchify (kernels/ops/vision.cc) of NHWC
//       images x [B, H, W, C]: out [B*N, C*p*p] with N = (H/p)*(W/p), rounded down: row
//       b*N + py*(W/p) + px, column c*p*p + ky*p + kx (a Conv2d weight [O, C, p, p]
//       flattened), so `linear` over out is HF's Conv2d(kernel=stride=p) (ConvNeXt's 2x2
//       stride-2 downsampling); pixels past the last whole patch are dropped. A pure
//       copy: every backend is exact.
//   spatial_mean(out, x):   out [B, C], x [B, N, C]: out[b, c] = mean_n x[b, n, c], an
//       fp32 sum divided by N, rounded once (HF's hidden.mean([-2, -1]) before the pooler).
// Every float argument shares one dtype; all tensors are contiguous.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <vector>

namespace fk::kernels {
namespace {

// Channels a CPU task of the per-(image, channel) sums takes: a run of each pixel row.
constexpr int64_t kChannelChunk = 64;

// ---- depthwise_conv2d -----------------------------------------------------------

enum { kConvOut, kConvX, kConvWeight, kConvBias };

// The sizes of a depthwise_conv2d call: images, image height and width, channels, kernel
// side, padding.
struct Depthwise {
  int64_t b, h, w, c, k, pad;
  int64_t out_h() const { return h + 2 * pad - k + 1; }
  int64_t out_w() const { return w + 2 * pad - k + 1; }
};

Depthwise depthwise(const OpCall& c) {
  const Tensor& x = c.arg(kConvX);
  return Depthwise{x.size(0), x.size(1), x.size(2), x.size(3), c.arg(kConvWeight).size(1), c.iparam(0)};
}

// out pixel row by pixel row: `A` is the arithmetic type (float in the baseline, double
// in the reference), each output the bias plus the in-image taps in (ky, kx) order,
// rounded once to T. The weight is first laid out [k, k, C] in A, a run a tap.
template <typename T, typename A>
void depthwise_rows(const Depthwise& s, const T* x, const T* weight, const T* bias, T* out) {
  const int64_t ho = s.out_h(), wo = s.out_w(), k = s.k, ch = s.c, rows = s.b * ho;
  std::vector<A> wt(static_cast<size_t>(k * k * ch));
  for (int64_t j = 0; j < ch; ++j)
    for (int64_t t = 0; t < k * k; ++t)
      wt[static_cast<size_t>(t * ch + j)] = static_cast<A>(cpu::load(weight[j * k * k + t]));
#pragma omp parallel for schedule(static) if (rows * wo * ch * k * k > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / ho, y = r % ho;
    std::vector<A> acc(static_cast<size_t>(ch));
    for (int64_t ox = 0; ox < wo; ++ox) {
      for (int64_t j = 0; j < ch; ++j)
        acc[static_cast<size_t>(j)] = bias != nullptr ? static_cast<A>(cpu::load(bias[j])) : A(0);
      for (int64_t ky = 0; ky < k; ++ky) {
        const int64_t iy = y + ky - s.pad;
        if (iy < 0 || iy >= s.h) continue;
        for (int64_t kx = 0; kx < k; ++kx) {
          const int64_t ix = ox + kx - s.pad;
          if (ix < 0 || ix >= s.w) continue;
          const T* src = x + ((b * s.h + iy) * s.w + ix) * ch;
          const A* tap = wt.data() + (ky * k + kx) * ch;
          for (int64_t j = 0; j < ch; ++j) acc[static_cast<size_t>(j)] += tap[j] * static_cast<A>(cpu::load(src[j]));
        }
      }
      T* dst = out + (r * wo + ox) * ch;
      for (int64_t j = 0; j < ch; ++j) dst[j] = cpu::put<T>(acc[static_cast<size_t>(j)]);
    }
  }
}

std::string check_depthwise(const OpDef& d, const OpCall& c) {
  std::string e = util::first_error({util::check_tensor(c, d, kConvOut, 4), util::check_tensor(c, d, kConvX, 4),
                                     util::check_tensor(c, d, kConvWeight, 3), util::check_tensor(c, d, kConvBias, 1),
                                     util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 1)
    return fmt::format("depthwise_conv2d: takes 1 parameter (padding), got {}", c.params.size());
  const Depthwise s = depthwise(c);
  if (s.pad < 0 || c.param(0) != static_cast<double>(s.pad))
    return fmt::format("depthwise_conv2d: padding {} must be an integer >= 0", c.param(0));
  const Tensor& w = c.arg(kConvWeight);
  if (w.size(0) != s.c || w.size(1) != w.size(2) || s.k < 1)
    return fmt::format(
        "depthwise_conv2d: 'weight' has shape {}, expected [{}, k, k] (one square kernel a channel of 'x' {})",
        shape_string(w.shape()), s.c, shape_string(c.arg(kConvX).shape()));
  if (s.out_h() < 1 || s.out_w() < 1)
    return fmt::format(
        "depthwise_conv2d: image height {} and width {} with padding {} must hold the {}x{} kernel once at least", s.h,
        s.w, s.pad, s.k, s.k);
  const Tensor& out = c.arg(kConvOut);
  if (out.shape() != Shape{s.b, s.out_h(), s.out_w(), s.c})
    return fmt::format(
        "depthwise_conv2d: 'out' has shape {}, expected [{}, {}, {}, {}] (images, height + 2 x padding - k + 1, "
        "width + 2 x padding - k + 1, channels)",
        shape_string(out.shape()), s.b, s.out_h(), s.out_w(), s.c);
  return util::present(c.arg(kConvBias)) ? util::check_dim(c, d, kConvBias, 0, s.c, "channels: one bias a channel")
                                         : std::string();
}

void register_depthwise_conv2d(OpRegistry& reg) {
  OpDef d;
  d.name = "depthwise_conv2d";
  d.summary = "depthwise 2-D convolution of NHWC images, stride 1, zero padding (ConvNeXt's 7x7)";
  d.args = {{"out", ArgRole::kOut}, {"x", ArgRole::kIn}, {"weight", ArgRole::kIn}, {"bias", ArgRole::kIn, true, true}};
  d.params = {"padding"};
  d.check = [d](const OpCall& c) { return check_depthwise(d, c); };
  d.reference = [](const OpCall& c) {
    depthwise_rows<double, double>(depthwise(c), util::f64(c.arg(kConvX)), util::f64(c.arg(kConvWeight)),
                                   util::present(c.arg(kConvBias)) ? util::f64(c.arg(kConvBias)) : nullptr,
                                   util::f64(c.arg(kConvOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), h = s.dim("height"), w = s.dim("width"), ch = s.dim("channels"),
                  k = s.dim("kernel");
    const auto pad = static_cast<int64_t>(s.params.at(0));
    const float bound = 1.0f / static_cast<float>(k);  // PyTorch's Conv2d init: 1 / sqrt(fan_in)
    return OpCall{
        {util::output(dt, {b, h + 2 * pad - k + 1, w + 2 * pad - k + 1, ch}),
         util::uniform(dt, {b, h, w, ch}, rng, "x", -2, 2), util::uniform(dt, {ch, k, k}, rng, "weight", -bound, bound),
         s.dim("bias") != 0 ? util::uniform(dt, {ch}, rng, "bias", -0.5f, 0.5f) : util::none()},
        s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Depthwise s = depthwise(c);
    return OpShape{{{"images", s.b},
                    {"height", s.h},
                    {"width", s.w},
                    {"channels", s.c},
                    {"kernel", s.k},
                    {"bias", util::present(c.arg(kConvBias)) ? 1 : 0}},
                   c.params};
  };
  d.flops = [](const OpCall& c) {
    const int64_t k = c.arg(kConvWeight).size(1);
    return 2.0 * static_cast<double>(c.arg(kConvOut).numel() * k * k);
  };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"depthwise_conv2d", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kConvX).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* bias = util::present(c.arg(kConvBias)) ? c.arg(kConvBias).data_as<T>() : nullptr;
                    depthwise_rows<T, float>(depthwise(c), c.arg(kConvX).data_as<T>(), c.arg(kConvWeight).data_as<T>(),
                                             bias, c.arg(kConvOut).data_as<T>());
                  });
                }});
}

// ---- grn --------------------------------------------------------------------------

enum { kGrnOut, kGrnX, kGrnGamma, kGrnBeta };

// Sums over the pixels of each (image, channel) of x [b, n, ch], of the squares when
// `squares`: sums[i * ch + j], accumulated in A in pixel order.
template <typename T, typename A>
void channel_sums(int64_t b, int64_t n, int64_t ch, const T* x, bool squares, A* sums) {
  const int64_t chunks = (ch + kChannelChunk - 1) / kChannelChunk;
#pragma omp parallel for schedule(static) if (b * n * ch > 262144)
  for (int64_t task = 0; task < b * chunks; ++task) {
    const int64_t i = task / chunks, c0 = task % chunks * kChannelChunk, c1 = std::min(c0 + kChannelChunk, ch);
    A* s = sums + i * ch;
    for (int64_t j = c0; j < c1; ++j) s[j] = A(0);
    for (int64_t p = 0; p < n; ++p) {
      const T* row = x + (i * n + p) * ch;
      for (int64_t j = c0; j < c1; ++j) {
        const auto v = static_cast<A>(cpu::load(row[j]));
        s[j] += squares ? v * v : v;
      }
    }
  }
}

template <typename T, typename A>
void grn_rows(int64_t b, int64_t n, int64_t ch, const T* x, const T* gamma, const T* beta, A eps, T* out) {
  std::vector<A> nx(static_cast<size_t>(b * ch));  // Gx, then Nx
  channel_sums<T, A>(b, n, ch, x, true, nx.data());
  for (int64_t i = 0; i < b; ++i) {
    A* g = nx.data() + i * ch;
    A total = 0;
    for (int64_t j = 0; j < ch; ++j) {
      g[j] = std::sqrt(g[j]);
      total += g[j];
    }
    const A denom = total / static_cast<A>(ch) + eps;
    for (int64_t j = 0; j < ch; ++j) g[j] = g[j] / denom;
  }
  const int64_t rows = b * n;
#pragma omp parallel for schedule(static) if (rows * ch > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const A* g = nx.data() + r / n * ch;
    for (int64_t j = 0; j < ch; ++j) {
      const auto v = static_cast<A>(cpu::load(x[r * ch + j]));
      out[r * ch + j] =
          cpu::put<T>(static_cast<A>(cpu::load(gamma[j])) * (v * g[j]) + static_cast<A>(cpu::load(beta[j])) + v);
    }
  }
}

std::string check_grn(const OpDef& d, const OpCall& c) {
  std::string e = util::first_error({util::check_tensor(c, d, kGrnOut, 3), util::check_tensor(c, d, kGrnX, 3),
                                     util::check_tensor(c, d, kGrnGamma, 1), util::check_tensor(c, d, kGrnBeta, 1),
                                     util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 1) return fmt::format("grn: takes 1 parameter (eps), got {}", c.params.size());
  if (!(c.param(0) > 0) || !std::isfinite(c.param(0)))
    return fmt::format("grn: eps {} must be positive and finite", c.param(0));
  const Tensor &x = c.arg(kGrnX), &out = c.arg(kGrnOut);
  if (x.size(1) < 1 || x.size(2) < 1)
    return fmt::format("grn: 'x' has shape {}, expected [images, pixels >= 1, channels >= 1]", shape_string(x.shape()));
  if (out.shape() != x.shape())
    return fmt::format("grn: 'out' has shape {}, expected {} (the shape of 'x')", shape_string(out.shape()),
                       shape_string(x.shape()));
  return util::first_error({util::check_dim(c, d, kGrnGamma, 0, x.size(2), "channels: one gamma a channel of x"),
                            util::check_dim(c, d, kGrnBeta, 0, x.size(2), "channels: one beta a channel of x")});
}

void register_grn(OpRegistry& reg) {
  OpDef d;
  d.name = "grn";
  d.summary = "ConvNeXt V2's Global Response Normalization of NHWC images [B, H*W, C]";
  d.args = {{"out", ArgRole::kOut}, {"x", ArgRole::kIn}, {"gamma", ArgRole::kIn}, {"beta", ArgRole::kIn}};
  d.params = {"eps"};
  d.check = [d](const OpCall& c) { return check_grn(d, c); };
  d.reference = [](const OpCall& c) {
    const Tensor& x = c.arg(kGrnX);
    grn_rows<double, double>(x.size(0), x.size(1), x.size(2), util::f64(x), util::f64(c.arg(kGrnGamma)),
                             util::f64(c.arg(kGrnBeta)), c.param(0), util::f64(c.arg(kGrnOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), n = s.dim("pixels"), ch = s.dim("channels");
    return OpCall{{util::output(dt, {b, n, ch}), util::uniform(dt, {b, n, ch}, rng, "x", -2, 2),
                   util::uniform(dt, {ch}, rng, "gamma", -1, 1), util::uniform(dt, {ch}, rng, "beta", -0.5f, 0.5f)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tensor& x = c.arg(kGrnX);
    return OpShape{{{"images", x.size(0)}, {"pixels", x.size(1)}, {"channels", x.size(2)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return 6.0 * static_cast<double>(c.arg(kGrnX).numel()); };
  d.bytes = util::bytes_of;  // x counted once: a lower bound (a kernel that cannot hold x reads it twice)
  reg.add(d);
  reg.add_impl({"grn", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kGrnX).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const Tensor& x = c.arg(kGrnX);
                    grn_rows<T, float>(x.size(0), x.size(1), x.size(2), x.data_as<T>(), c.arg(kGrnGamma).data_as<T>(),
                                       c.arg(kGrnBeta).data_as<T>(), static_cast<float>(c.param(0)),
                                       c.arg(kGrnOut).data_as<T>());
                  });
                }});
}

// ---- patchify_channels_last ---------------------------------------------------------

enum { kPatchOut, kPatchX };

// The sizes of a patchify_channels_last call: images, image height and width, channels,
// patch.
struct Patching {
  int64_t b, h, w, c, p;
  int64_t per_row() const { return w / p; }
  int64_t patches() const { return (h / p) * (w / p); }
  int64_t cols() const { return c * p * p; }
};

Patching patching(const OpCall& c) {
  const Tensor& x = c.arg(kPatchX);
  return Patching{x.size(0), x.size(1), x.size(2), x.size(3), c.iparam(0)};
}

// Copies each patch's pixels (a run of channels each) to its output row, channel-major;
// T is any element type (the fp64 reference too): the copy is exact.
template <typename T>
void patchify_cl_rows(const Patching& s, const T* x, T* out) {
  const int64_t n = s.patches(), rows = s.b * n, p = s.p;
#pragma omp parallel for schedule(static) if (rows * s.cols() > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / n, y0 = (r % n) / s.per_row() * p, x0 = (r % n) % s.per_row() * p;
    T* dst = out + r * s.cols();
    for (int64_t ky = 0; ky < p; ++ky)
      for (int64_t kx = 0; kx < p; ++kx) {
        const T* src = x + ((b * s.h + y0 + ky) * s.w + x0 + kx) * s.c;
        for (int64_t ch = 0; ch < s.c; ++ch) dst[(ch * p + ky) * p + kx] = src[ch];
      }
  }
}

std::string check_patchify_cl(const OpDef& d, const OpCall& c) {
  std::string e = util::first_error(
      {util::check_tensor(c, d, kPatchOut, 2), util::check_tensor(c, d, kPatchX, 4), util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 1)
    return fmt::format("patchify_channels_last: takes 1 parameter (patch), got {}", c.params.size());
  const Patching s = patching(c);
  if (s.p < 1 || c.param(0) != static_cast<double>(s.p))
    return fmt::format("patchify_channels_last: patch {} must be a positive integer", c.param(0));
  if (s.h < s.p || s.w < s.p)
    return fmt::format(
        "patchify_channels_last: image height {} and width {} must both hold one patch at least (patch size {})", s.h,
        s.w, s.p);
  const Tensor& out = c.arg(kPatchOut);
  if (out.size(0) != s.b * s.patches() || out.size(1) != s.cols())
    return fmt::format(
        "patchify_channels_last: 'out' has shape {}, expected [{}, {}] (images {} x patches {}, channels {} x patch {} "
        "x patch)",
        shape_string(out.shape()), s.b * s.patches(), s.cols(), s.b, s.patches(), s.c, s.p);
  return std::string();
}

void register_patchify_channels_last(OpRegistry& reg) {
  OpDef d;
  d.name = "patchify_channels_last";
  d.summary = "cut NHWC images into p x p patches, one row per patch (ConvNeXt's stride-p downsampling input)";
  d.args = {{"out", ArgRole::kOut}, {"x", ArgRole::kIn}};
  d.params = {"patch"};
  d.check = [d](const OpCall& c) { return check_patchify_cl(d, c); };
  d.reference = [](const OpCall& c) {
    patchify_cl_rows(patching(c), util::f64(c.arg(kPatchX)), util::f64(c.arg(kPatchOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), h = s.dim("height"), w = s.dim("width"), ch = s.dim("channels");
    const auto p = static_cast<int64_t>(s.params.at(0));
    const int64_t rows = p > 0 ? b * (h / p) * (w / p) : 0;
    return OpCall{{util::output(dt, {rows, ch * p * p}), util::uniform(dt, {b, h, w, ch}, rng, "x", -1, 1)}, s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tensor& x = c.arg(kPatchX);
    return OpShape{{{"images", x.size(0)}, {"height", x.size(1)}, {"width", x.size(2)}, {"channels", x.size(3)}},
                   c.params};
  };
  d.flops = [](const OpCall&) { return 0.0; };
  d.bytes = util::bytes_of;
  d.tolerance = [](DType) { return Tolerance{0, 0, 1.0}; };  // a copy: every element exact
  reg.add(d);
  reg.add_impl({"patchify_channels_last", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kPatchX).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    patchify_cl_rows(patching(c), c.arg(kPatchX).data_as<T>(), c.arg(kPatchOut).data_as<T>());
                  });
                }});
}

// ---- spatial_mean -------------------------------------------------------------------

enum { kMeanOut, kMeanX };

template <typename T, typename A>
void spatial_mean_rows(int64_t b, int64_t n, int64_t ch, const T* x, T* out) {
  std::vector<A> sums(static_cast<size_t>(b * ch));
  channel_sums<T, A>(b, n, ch, x, false, sums.data());
  for (int64_t i = 0; i < b * ch; ++i) out[i] = cpu::put<T>(sums[static_cast<size_t>(i)] / static_cast<A>(n));
}

void register_spatial_mean(OpRegistry& reg) {
  OpDef d;
  d.name = "spatial_mean";
  d.summary = "out[b, c] = mean over the pixels of x[b, :, c] (ConvNeXt's pooling of NHWC images)";
  d.args = {{"out", ArgRole::kOut}, {"x", ArgRole::kIn}};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error(
        {util::check_tensor(c, d, kMeanOut, 2), util::check_tensor(c, d, kMeanX, 3), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (!c.params.empty()) return fmt::format("spatial_mean: takes no parameters, got {}", c.params.size());
    const Tensor &x = c.arg(kMeanX), &out = c.arg(kMeanOut);
    if (x.size(1) < 1)
      return fmt::format("spatial_mean: 'x' has shape {}, expected [images, pixels >= 1, channels]",
                         shape_string(x.shape()));
    if (out.size(0) != x.size(0) || out.size(1) != x.size(2))
      return fmt::format("spatial_mean: 'out' has shape {}, expected [{}, {}] (images, channels of 'x' {})",
                         shape_string(out.shape()), x.size(0), x.size(2), shape_string(x.shape()));
    return std::string();
  };
  d.reference = [](const OpCall& c) {
    const Tensor& x = c.arg(kMeanX);
    spatial_mean_rows<double, double>(x.size(0), x.size(1), x.size(2), util::f64(x), util::f64(c.arg(kMeanOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), n = s.dim("pixels"), ch = s.dim("channels");
    return OpCall{{util::output(dt, {b, ch}), util::uniform(dt, {b, n, ch}, rng, "x", -2, 2)}, s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tensor& x = c.arg(kMeanX);
    return OpShape{{{"images", x.size(0)}, {"pixels", x.size(1)}, {"channels", x.size(2)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(kMeanX).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"spatial_mean", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kMeanX).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const Tensor& x = c.arg(kMeanX);
                    spatial_mean_rows<T, float>(x.size(0), x.size(1), x.size(2), x.data_as<T>(),
                                                c.arg(kMeanOut).data_as<T>());
                  });
                }});
}

}  // namespace

void register_conv(OpRegistry& reg) {
  register_depthwise_conv2d(reg);
  register_grn(reg);
  register_patchify_channels_last(reg);
  register_spatial_mean(reg);
}

}  // namespace fk::kernels
