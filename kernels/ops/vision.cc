// The memory-bound ops of a vision encoder (ViT, SigLIP, DINOv2) around its linear maps:
//   patchify(out, pixels; patch):   pixels [B, C, Hi, Wi] (NCHW) cut into p x p patches,
//       out [B*N, C*p*p] with N = (Hi/p)*(Wi/p), rounded down: row b*N + py*(Wi/p) + px
//       (patches in row-major order, HF's Conv2d(kernel=stride=p).flatten(2).transpose(1,
//       2); pixels past the last whole patch are dropped, as that conv drops them),
//       column c*p*p + ky*p + kx (a Conv2d weight [H, C, p, p] flattened), so the patch
//       embedding is `linear` over out. A pure copy: every backend is exact.
//   patch_tokens(out, patches, prefix, positions; prefix_rows):   each image's token
//       sequence: the P prefix tokens (ViT's CLS; absent when P = 0, SigLIP) then its N
//       patch embeddings, plus the learned positions [P+N, H]:
//         out[b*(P+N) + j]     = prefix[j] + positions[j]               (j < P)
//         out[b*(P+N) + P + i] = patches[b*N + i] + positions[P + i]    (i < N)
//       each sum in fp32, rounded once (HF: torch.cat, then one add in the dtype).
//   channel_scale(x, gamma):   x [T, H] in place, x[t, j] *= gamma[j] (DINOv2's
//       LayerScale), fp32 math, one rounding.
// Every float argument shares one dtype; all tensors are contiguous.
#include "kernels/cpu/elem.h"
#include "kernels/ops/op_util.h"
#include "kernels/ops/ops.h"

#include <fmt/format.h>
#include <cstring>

namespace fk::kernels {
namespace {

// ---- patchify -------------------------------------------------------------------

enum { kPatchOut, kPixels };

// The sizes of a patchify call: images, channels, image height and width, patch.
struct Patching {
  int64_t b, c, h, w, p;
  int64_t per_row() const { return w / p; }
  int64_t patches() const { return (h / p) * (w / p); }
  int64_t cols() const { return c * p * p; }
};

Patching patching(const OpCall& c) {
  const Tensor& x = c.arg(kPixels);
  return Patching{x.size(0), x.size(1), x.size(2), x.size(3), c.iparam(0)};
}

// Copies each patch's p-element runs (one per channel and patch row) to its output row;
// T is any element type (the fp64 reference too): the copy is exact.
template <typename T>
void patchify_rows(const Patching& s, const T* px, T* out) {
  const int64_t n = s.patches(), rows = s.b * n, p = s.p;
#pragma omp parallel for schedule(static) if (rows * s.cols() > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / n, y0 = (r % n) / s.per_row() * p, x0 = (r % n) % s.per_row() * p;
    T* dst = out + r * s.cols();
    for (int64_t ch = 0; ch < s.c; ++ch)
      for (int64_t ky = 0; ky < p; ++ky)
        std::memcpy(dst + (ch * p + ky) * p, px + ((b * s.c + ch) * s.h + y0 + ky) * s.w + x0,
                    static_cast<size_t>(p) * sizeof(T));
  }
}

std::string check_patchify(const OpDef& d, const OpCall& c) {
  std::string e = util::first_error(
      {util::check_tensor(c, d, kPatchOut, 2), util::check_tensor(c, d, kPixels, 4), util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 1) return fmt::format("patchify: takes 1 parameter (patch), got {}", c.params.size());
  const Patching s = patching(c);
  if (s.p < 1 || c.param(0) != static_cast<double>(s.p))
    return fmt::format("patchify: patch {} must be a positive integer", c.param(0));
  if (s.h < s.p || s.w < s.p)
    return fmt::format("patchify: image height {} and width {} must both hold one patch at least (patch size {})", s.h,
                       s.w, s.p);
  const Tensor& out = c.arg(kPatchOut);
  if (out.size(0) != s.b * s.patches() || out.size(1) != s.cols())
    return fmt::format(
        "patchify: 'out' has shape {}, expected [{}, {}] (images {} x patches {}, channels {} x patch {} x patch)",
        shape_string(out.shape()), s.b * s.patches(), s.cols(), s.b, s.patches(), s.c, s.p);
  return std::string();
}

void register_patchify(OpRegistry& reg) {
  OpDef d;
  d.name = "patchify";
  d.summary = "cut NCHW images into p x p patches, one row per patch (a ViT's patch embedding input)";
  d.args = {{"out", ArgRole::kOut}, {"pixels", ArgRole::kIn}};
  d.params = {"patch"};
  d.check = [d](const OpCall& c) { return check_patchify(d, c); };
  d.reference = [](const OpCall& c) {
    patchify_rows(patching(c), util::f64(c.arg(kPixels)), util::f64(c.arg(kPatchOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), ch = s.dim("channels"), h = s.dim("height"), w = s.dim("width");
    const auto p = static_cast<int64_t>(s.params.at(0));
    const int64_t rows = p > 0 ? b * (h / p) * (w / p) : 0;
    return OpCall{{util::output(dt, {rows, ch * p * p}), util::uniform(dt, {b, ch, h, w}, rng, "pixels", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tensor& x = c.arg(kPixels);
    return OpShape{{{"images", x.size(0)}, {"channels", x.size(1)}, {"height", x.size(2)}, {"width", x.size(3)}},
                   c.params};
  };
  d.flops = [](const OpCall&) { return 0.0; };
  d.bytes = util::bytes_of;
  d.tolerance = [](DType) { return Tolerance{0, 0, 1.0}; };  // a copy: every element exact
  reg.add(d);
  reg.add_impl({"patchify", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kPixels).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    patchify_rows(patching(c), c.arg(kPixels).data_as<T>(), c.arg(kPatchOut).data_as<T>());
                  });
                }});
}

// ---- patch_tokens ---------------------------------------------------------------

enum { kTokOut, kPatches, kPrefix, kPositions };

// The sizes of a patch_tokens call: images, patches an image, prefix tokens, hidden.
struct Tokens {
  int64_t b, n, p, h;
  int64_t seq() const { return p + n; }
};

Tokens tokens_of(const OpCall& c) {
  const Tensor& pos = c.arg(kPositions);
  const int64_t p = util::present(c.arg(kPrefix)) ? c.arg(kPrefix).size(0) : 0, n = pos.size(0) - p;
  return Tokens{n > 0 ? c.arg(kPatches).size(0) / n : 0, n, p, pos.size(1)};
}

// out row by row: `A` is the arithmetic type (float in the baseline, double in the
// reference), each sum rounded once to T.
template <typename T, typename A>
void patch_tokens_rows(const Tokens& s, const T* patches, const T* prefix, const T* pos, T* out) {
  const int64_t rows = s.b * s.seq(), h = s.h;
#pragma omp parallel for schedule(static) if (rows * h > 262144)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / s.seq(), j = r % s.seq();
    const T* src = j < s.p ? prefix + j * h : patches + (b * s.n + j - s.p) * h;
    const T* add = pos + j * h;
    T* dst = out + r * h;
    for (int64_t k = 0; k < h; ++k)
      dst[k] = cpu::put<T>(static_cast<A>(cpu::load(src[k])) + static_cast<A>(cpu::load(add[k])));
  }
}

std::string check_patch_tokens(const OpDef& d, const OpCall& c) {
  std::string e = util::first_error({util::check_tensor(c, d, kTokOut, 2), util::check_tensor(c, d, kPatches, 2),
                                     util::check_tensor(c, d, kPrefix, 2), util::check_tensor(c, d, kPositions, 2),
                                     util::check_same_dtype(c, d)});
  if (!e.empty()) return e;
  if (c.params.size() != 1)
    return fmt::format("patch_tokens: takes 1 parameter (prefix_rows), got {}", c.params.size());
  const Tokens s = tokens_of(c);
  if (c.param(0) != static_cast<double>(s.p))
    return fmt::format("patch_tokens: prefix_rows is {} but 'prefix' has {} rows (an absent prefix has 0)", c.param(0),
                       s.p);
  const int64_t pos_rows = c.arg(kPositions).size(0), patch_rows = c.arg(kPatches).size(0);
  if (s.n < 1)
    return fmt::format(
        "patch_tokens: 'positions' has {} rows, needs more than prefix_rows = {} (one a prefix token, then one "
        "a patch)",
        pos_rows, s.p);
  if (patch_rows % s.n != 0)
    return fmt::format(
        "patch_tokens: 'patches' has {} rows, not a multiple of the {} patches an image ('positions' rows {} - "
        "prefix_rows {})",
        patch_rows, s.n, pos_rows, s.p);
  const int64_t h = s.h;
  for (size_t i : {kTokOut, kPatches, kPrefix}) {
    const Tensor& t = c.arg(i);
    if (util::present(t) && t.size(1) != h)
      return fmt::format("patch_tokens: '{}' has hidden size {} but 'positions' has {}", d.args[i].name, t.size(1), h);
  }
  return util::check_dim(c, d, kTokOut, 0, s.b * s.seq(), "images x (prefix_rows + patches an image)");
}

void register_patch_tokens(OpRegistry& reg) {
  OpDef d;
  d.name = "patch_tokens";
  d.summary = "each image's tokens: prefix (CLS) then its patch embeddings, plus learned positions";
  d.args = {{"out", ArgRole::kOut},
            {"patches", ArgRole::kIn},
            {"prefix", ArgRole::kIn, true, true},
            {"positions", ArgRole::kIn}};
  d.params = {"prefix_rows"};
  d.check = [d](const OpCall& c) { return check_patch_tokens(d, c); };
  d.reference = [](const OpCall& c) {
    const Tokens s = tokens_of(c);
    patch_tokens_rows<double, double>(s, util::f64(c.arg(kPatches)), s.p > 0 ? util::f64(c.arg(kPrefix)) : nullptr,
                                      util::f64(c.arg(kPositions)), util::f64(c.arg(kTokOut)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t b = s.dim("images"), n = s.dim("patches"), p = s.dim("prefix"), h = s.dim("hidden");
    return OpCall{{util::output(dt, {b * (p + n), h}), util::uniform(dt, {b * n, h}, rng, "patches", -2, 2),
                   p > 0 ? util::uniform(dt, {p, h}, rng, "prefix", -1, 1) : util::none(),
                   util::uniform(dt, {p + n, h}, rng, "positions", -1, 1)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    const Tokens s = tokens_of(c);
    return OpShape{{{"images", s.b}, {"patches", s.n}, {"prefix", s.p}, {"hidden", s.h}}, c.params};
  };
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(kTokOut).numel()); };
  d.bytes = util::bytes_of;
  reg.add(d);
  reg.add_impl({"patch_tokens", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kTokOut).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const Tokens s = tokens_of(c);
                    patch_tokens_rows<T, float>(s, c.arg(kPatches).data_as<T>(),
                                                s.p > 0 ? c.arg(kPrefix).data_as<T>() : nullptr,
                                                c.arg(kPositions).data_as<T>(), c.arg(kTokOut).data_as<T>());
                  });
                }});
}

// ---- channel_scale --------------------------------------------------------------

enum { kX, kGamma };

template <typename T, typename A>
void channel_scale_rows(int64_t t, int64_t h, T* x, const T* gamma) {
#pragma omp parallel for schedule(static) if (t * h > 262144)
  for (int64_t r = 0; r < t; ++r)
    for (int64_t j = 0; j < h; ++j)
      x[r * h + j] = cpu::put<T>(static_cast<A>(cpu::load(x[r * h + j])) * static_cast<A>(cpu::load(gamma[j])));
}

void register_channel_scale(OpRegistry& reg) {
  OpDef d;
  d.name = "channel_scale";
  d.summary = "x[t, j] = x[t, j] * gamma[j], in place (DINOv2's LayerScale)";
  d.args = {{"x", ArgRole::kInOut}, {"gamma", ArgRole::kIn}};
  d.check = [d](const OpCall& c) {
    std::string e = util::first_error(
        {util::check_tensor(c, d, kX, 2), util::check_tensor(c, d, kGamma, 1), util::check_same_dtype(c, d)});
    if (!e.empty()) return e;
    if (!c.params.empty()) return fmt::format("channel_scale: takes no parameters, got {}", c.params.size());
    return util::check_dim(c, d, kGamma, 0, c.arg(kX).size(1), "hidden: one scale a channel of x");
  };
  d.reference = [](const OpCall& c) {
    channel_scale_rows<double, double>(c.arg(kX).size(0), c.arg(kX).size(1), util::f64(c.arg(kX)),
                                       util::f64(c.arg(kGamma)));
  };
  d.make = [](const OpShape& s, DType dt, const RngStream& rng) {
    const int64_t t = s.dim("tokens"), h = s.dim("hidden");
    return OpCall{{util::uniform(dt, {t, h}, rng, "x", -4, 4), util::uniform(dt, {h}, rng, "gamma", 0.5f, 1.5f)},
                  s.params};
  };
  d.shape_of = [](const OpCall& c) {
    return OpShape{{{"tokens", c.arg(kX).size(0)}, {"hidden", c.arg(kX).size(1)}}, c.params};
  };
  d.flops = [](const OpCall& c) { return static_cast<double>(c.arg(kX).numel()); };
  d.bytes = [](const OpCall& c) {
    return 2.0 * static_cast<double>(c.arg(kX).nbytes()) + static_cast<double>(c.arg(kGamma).nbytes());
  };
  reg.add(d);
  reg.add_impl({"channel_scale", "cpu", DeviceKind::kCpu, nullptr, [](const OpCall& c) {
                  cpu::dispatch_float(c.arg(kX).dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    channel_scale_rows<T, float>(c.arg(kX).size(0), c.arg(kX).size(1), c.arg(kX).data_as<T>(),
                                                 c.arg(kGamma).data_as<T>());
                  });
                }});
}

}  // namespace

void register_vision(OpRegistry& reg) {
  register_patchify(reg);
  register_patch_tokens(reg);
  register_channel_scale(reg);
}

}  // namespace fk::kernels
