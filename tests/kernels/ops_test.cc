// Every op x every shape below x fp32/fp16/bf16, on one backend: the backend's baseline
// against the fp64 reference, within the op's tolerance (FastKernels' rule: 99% of
// elements inside atol + rtol |ref|), with odd sizes and head_dim 64/80/128/256.
// Inputs are drawn on the host and uploaded (the same values on every backend); the
// outputs are downloaded and compared on the host. This file is built once per backend
// (FK_TEST_BACKEND: "cpu" in fk_kernel_tests, "cuda" in fk_kernel_cuda_tests, label gpu).
#include "core/error.h"
#include "core/hash.h"
#include "kernels/backends.h"
#include "kernels/test_backend.h"
#include "kernels/compare.h"
#include "kernels/op.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <tuple>

namespace fk::kernels {
namespace {

struct Case {
  std::string op;
  OpShape shape;
  std::string label;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  auto add = [&](std::string op, std::map<std::string, int64_t> dims, std::vector<double> params) {
    std::string label = op;
    for (const auto& [k, v] : dims) label += fmt::format("_{}{}", k, v);
    for (double p : params) label += fmt::format("_p{}", static_cast<int64_t>(p * 1000));
    c.push_back({op, OpShape{std::move(dims), std::move(params)}, label});
  };
  for (int64_t t : {1, 7, 33})
    for (int64_t h : {64, 4095, 4096}) {
      add("rms_norm", {{"tokens", t}, {"hidden", h}}, {1e-6});
      add("fused_add_rms_norm", {{"tokens", t}, {"hidden", h}}, {1e-5});
    }
  // CUDA: 2048 holds a 16-bit row in two packs a thread; 8193 (scalar packs) is too long
  // for registers and takes the looping kernel.
  for (int64_t h : {2048, 8193}) {
    add("rms_norm", {{"tokens", 3}, {"hidden", h}}, {1e-6});
    add("fused_add_rms_norm", {{"tokens", 3}, {"hidden", h}}, {1e-5});
  }
  for (int64_t h : {768, 1023}) add("layer_norm", {{"tokens", 5}, {"hidden", h}}, {1e-5});
  // head_norm: RMSNorm and LayerNorm (with and without a bias) per head, heads of 64 and
  // 128 (Cohere, StableLM) and an odd 24 (the scalar path), one and several tokens.
  for (int64_t t : {1, 9})
    for (int64_t hd : {24, 64, 128}) {
      add("head_norm", {{"tokens", t}, {"heads", 5}, {"head_dim", hd}, {"bias", 0}},
          {1e-5, static_cast<double>(hd), 0});
      add("head_norm", {{"tokens", t}, {"heads", 5}, {"head_dim", hd}, {"bias", 0}},
          {1e-5, static_cast<double>(hd), 1});
      add("head_norm", {{"tokens", t}, {"heads", 5}, {"head_dim", hd}, {"bias", 1}},
          {1e-5, static_cast<double>(hd), 1});
    }
  for (int64_t hs : {64, 80, 128, 256})
    for (int neox : {1, 0})
      add("rotary_embedding", {{"tokens", 17}, {"q_heads", 4}, {"kv_heads", 2}, {"max_positions", 64}, {"rot_dim", hs}},
          {static_cast<double>(hs), static_cast<double>(neox)});
  add("rotary_embedding", {{"tokens", 3}, {"q_heads", 2}, {"kv_heads", 1}, {"max_positions", 64}, {"rot_dim", 32}},
      {128, 1});  // partial rotary
  add("linear", {{"tokens", 1}, {"in", 64}, {"out", 96}, {"bias", 0}}, {});
  add("linear", {{"tokens", 7}, {"in", 129}, {"out", 33}, {"bias", 1}}, {});
  add("linear", {{"tokens", 33}, {"in", 256}, {"out", 512}, {"bias", 1}}, {});
  for (const char* op :
       {"silu_and_mul", "gelu_and_mul", "gelu_tanh_and_mul", "gelu", "gelu_new", "relu", "relu2", "silu"})
    for (int64_t d : {1, 63, 1024}) add(op, {{"tokens", 5}, {"d", d}}, {});
  for (int64_t hd : {64, 80, 128, 256}) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    // prefill (causal), decode, sliding window, soft-cap, bidirectional; GQA/MQA/MHA.
    add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", hd}, {"cache_len", 9}},
        {scale, 9, 0, 1, 0, 0});
    add("attention", {{"batch", 3}, {"q_heads", 4}, {"kv_heads", 1}, {"head_dim", hd}, {"cache_len", 32}},
        {scale, 1, 20, 1, 0, 0});
    // Several key tiles and a partial query tile (the tensor-core kernel's loop), and a
    // long decode split over the keys (split-KV with its merge).
    add("attention", {{"batch", 1}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", hd}, {"cache_len", 150}},
        {scale, 150, 0, 1, 0, 0});
    add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", hd}, {"cache_len", 520}},
        {scale, 1, 512, 1, 0, 0});
  }
  // Chunked prefill with a sliding window that starts inside a key tile.
  add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 1}, {"head_dim", 128}, {"cache_len", 300}},
      {1.0 / std::sqrt(128.0), 100, 190, 1, 70, 0});
  // Decode: a group of 8 heads (one block holds them all), of 16 (two blocks share the
  // K/V), a window and a soft-cap over a split context.
  add("attention", {{"batch", 2}, {"q_heads", 16}, {"kv_heads", 2}, {"head_dim", 128}, {"cache_len", 1000}},
      {1.0 / std::sqrt(128.0), 1, 900, 1, 0, 0});
  add("attention", {{"batch", 1}, {"q_heads", 32}, {"kv_heads", 2}, {"head_dim", 64}, {"cache_len", 700}},
      {0.125, 1, 650, 1, 300, 30});
  // Decode with enough blocks that a split streams more key tiles than the CUDA
  // kernel's shared-memory stages hold (its pipeline wraps): MHA with 512 blocks, and
  // a group of 4 whose keys split three ways.
  add("attention", {{"batch", 64}, {"q_heads", 8}, {"kv_heads", 8}, {"head_dim", 64}, {"cache_len", 300}},
      {0.125, 1, 299, 1, 0, 0});
  add("attention", {{"batch", 40}, {"q_heads", 16}, {"kv_heads", 4}, {"head_dim", 128}, {"cache_len", 400}},
      {1.0 / std::sqrt(128.0), 1, 390, 1, 0, 0});
  // Decode of a group of 32 heads: more than one tensor-core tile holds, so CUDA takes
  // its CUDA-core decode kernel in every dtype.
  add("attention", {{"batch", 2}, {"q_heads", 32}, {"kv_heads", 1}, {"head_dim", 64}, {"cache_len", 300}},
      {0.125, 1, 280, 1, 0, 0});
  // Bidirectional over several key tiles.
  add("attention", {{"batch", 1}, {"q_heads", 4}, {"kv_heads", 4}, {"head_dim", 64}, {"cache_len", 130}},
      {0.125, 130, 0, 0, 0, 0});
  add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 4}, {"head_dim", 64}, {"cache_len", 24}},
      {0.125, 11, 5, 1, 4, 0});
  add("attention", {{"batch", 2}, {"q_heads", 2}, {"kv_heads", 1}, {"head_dim", 128}, {"cache_len", 16}},
      {1.0 / 16, 16, 0, 1, 0, 50});
  add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 4}, {"head_dim", 64}, {"cache_len", 13}},
      {0.125, 13, 0, 0, 0, 0});
  // Bidirectional sliding windows (ModernBERT's local layers): a band of 33 over several
  // key tiles and query tiles, a narrow one with GQA, and one wider than the sequence.
  add("attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 4}, {"head_dim", 64}, {"cache_len", 150}},
      {0.125, 150, 0, 0, 33, 0});
  add("attention", {{"batch", 3}, {"q_heads", 8}, {"kv_heads", 2}, {"head_dim", 128}, {"cache_len", 70}},
      {1.0 / std::sqrt(128.0), 70, 0, 0, 5, 0});
  add("attention", {{"batch", 1}, {"q_heads", 2}, {"kv_heads", 1}, {"head_dim", 80}, {"cache_len", 20}},
      {1.0 / std::sqrt(80.0), 20, 0, 0, 64, 0});
  // Cross-attention (Whisper, T5): a decoder prefill shorter than the encoder over
  // several key tiles (MHA, Whisper's 64-wide heads), one longer than it (T5's decoder
  // may outrun a short input), decode steps split over 1,500 keys (Whisper's encoder
  // length) with GQA, and a decode group on CUDA cores.
  add("cross_attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 4}, {"head_dim", 64}, {"kv_len", 150}},
      {0.125, 7});
  add("cross_attention", {{"batch", 2}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", 128}, {"kv_len", 9}},
      {1.0 / std::sqrt(128.0), 40});
  add("cross_attention", {{"batch", 3}, {"q_heads", 8}, {"kv_heads", 2}, {"head_dim", 64}, {"kv_len", 1500}},
      {0.125, 1});
  add("cross_attention", {{"batch", 1}, {"q_heads", 32}, {"kv_heads", 1}, {"head_dim", 80}, {"kv_len", 300}},
      {1.0 / std::sqrt(80.0), 1});
  // gpt-oss' attention sinks: prefill with a sliding window (the tensor-core flash kernel
  // and cuDNN's refusal), decode split over the keys (the merge adds the sink), a decode
  // group on CUDA cores, bidirectional, and fp32's general kernel (every dtype runs).
  add("attention", {{"batch", 2}, {"q_heads", 8}, {"kv_heads", 1}, {"head_dim", 64}, {"cache_len", 150}, {"sinks", 1}},
      {0.125, 150, 0, 1, 37, 0});
  add("attention",
      {{"batch", 2}, {"q_heads", 16}, {"kv_heads", 2}, {"head_dim", 64}, {"cache_len", 1000}, {"sinks", 1}},
      {0.125, 1, 900, 1, 0, 0});
  add("attention", {{"batch", 1}, {"q_heads", 8}, {"kv_heads", 8}, {"head_dim", 64}, {"cache_len", 40}, {"sinks", 1}},
      {0.125, 1, 30, 1, 0, 0});
  add("attention", {{"batch", 2}, {"q_heads", 32}, {"kv_heads", 1}, {"head_dim", 64}, {"cache_len", 300}, {"sinks", 1}},
      {0.125, 1, 280, 1, 128, 0});
  add("attention", {{"batch", 1}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", 80}, {"cache_len", 70}, {"sinks", 1}},
      {1.0 / std::sqrt(80.0), 70, 0, 0, 0, 0});
  add("kv_cache_write", {{"batch", 2}, {"kv_heads", 2}, {"head_dim", 64}, {"cache_len", 16}}, {3, 5});
  add("topk_softmax", {{"tokens", 9}, {"experts", 8}, {"k", 2}}, {1});
  add("topk_softmax", {{"tokens", 5}, {"experts", 128}, {"k", 8}}, {0});
  add("fused_moe", {{"tokens", 7}, {"hidden", 64}, {"experts", 4}, {"inter", 48}, {"k", 2}}, {0, 0, 0});
  add("fused_moe", {{"tokens", 5}, {"hidden", 33}, {"experts", 8}, {"inter", 20}, {"k", 3}}, {1, 0, 0});
  // gpt-oss' experts: biases, the clamped SwiGLU (a limit the values reach), odd sizes
  // (SIMT kernels) and tensor-core sizes at decode and prefill tile heights.
  add("fused_moe", {{"tokens", 5}, {"hidden", 33}, {"experts", 8}, {"inter", 20}, {"k", 3}, {"bias", 1}},
      {3, 1.702, 0.5});
  add("fused_moe", {{"tokens", 3}, {"hidden", 256}, {"experts", 16}, {"inter", 512}, {"k", 4}, {"bias", 1}},
      {3, 1.702, 0.5});
  add("fused_moe", {{"tokens", 300}, {"hidden", 256}, {"experts", 8}, {"inter", 160}, {"k", 2}, {"bias", 1}},
      {3, 1.702, 0.5});
  // The CUDA tensor-core path (fp16/bf16, H and I multiples of 8) at each tile height:
  // 64-row tiles with partial gate/up and down column blocks; 128-row tiles over a K that
  // wraps the copy pipeline; 16-row decode tiles whose down GEMM splits K (its partial
  // sums added by the combine).
  add("fused_moe", {{"tokens", 300}, {"hidden", 256}, {"experts", 8}, {"inter", 160}, {"k", 2}}, {0, 0, 0});
  add("fused_moe", {{"tokens", 400}, {"hidden", 512}, {"experts", 4}, {"inter", 136}, {"k", 2}}, {2, 0, 0});
  add("fused_moe", {{"tokens", 3}, {"hidden", 256}, {"experts", 16}, {"inter", 2048}, {"k", 2}}, {1, 0, 0});
  add("add", {{"elements", 1001}}, {});
  add("scale", {{"elements", 517}}, {8.0});
  add("softcap", {{"elements", 517}}, {30.0});
  add("argmax", {{"tokens", 4}, {"vocab", 509}}, {});
  add("sigmoid_gate", {{"tokens", 7}, {"hidden", 96}}, {});
  add("sigmoid_gate", {{"tokens", 3}, {"hidden", 1001}}, {});
  add("embedding", {{"tokens", 9}, {"hidden", 64}, {"rows", 100}}, {100, 300});
  // Mamba: a prefill from a zero-free state, a decode step, odd channel counts, widths 2-4.
  add("causal_conv1d", {{"batch", 2}, {"len", 9}, {"channels", 67}, {"width", 4}, {"bias", 1}}, {1});
  add("causal_conv1d", {{"batch", 3}, {"len", 1}, {"channels", 130}, {"width", 4}, {"bias", 0}}, {1});
  add("causal_conv1d", {{"batch", 1}, {"len", 2}, {"channels", 33}, {"width", 3}, {"bias", 1}}, {0});
  add("causal_conv1d", {{"batch", 2}, {"len", 300}, {"channels", 16}, {"width", 2}, {"bias", 1}}, {1});
  add("selective_scan", {{"batch", 2}, {"len", 17}, {"channels", 70}, {"state", 16}, {"skip", 1}, {"gate", 1},
                         {"delta_bias", 0}}, {1});
  add("selective_scan", {{"batch", 3}, {"len", 1}, {"channels", 129}, {"state", 16}, {"skip", 1}, {"gate", 1},
                         {"delta_bias", 1}}, {1});
  add("selective_scan", {{"batch", 1}, {"len", 5}, {"channels", 9}, {"state", 7}, {"skip", 0}, {"gate", 0},
                         {"delta_bias", 0}}, {0});
  add("selective_scan", {{"batch", 1}, {"len", 200}, {"channels", 32}, {"state", 64}, {"skip", 1}, {"gate", 0},
                         {"delta_bias", 1}}, {1});
  // Mamba-2: grouped B and C, a prefill, a decode step, odd sizes without softplus, and
  // the time-step clamp biting at both ends over a long prefill.
  add("ssd_scan",
      {{"batch", 2},
       {"len", 17},
       {"heads", 6},
       {"head_dim", 8},
       {"groups", 2},
       {"state", 16},
       {"skip", 1},
       {"gate", 1},
       {"dt_bias", 1}},
      {1, 0, 0});
  add("ssd_scan",
      {{"batch", 3},
       {"len", 1},
       {"heads", 4},
       {"head_dim", 16},
       {"groups", 1},
       {"state", 32},
       {"skip", 1},
       {"gate", 0},
       {"dt_bias", 1}},
      {1, 0, 0});
  add("ssd_scan",
      {{"batch", 1},
       {"len", 5},
       {"heads", 3},
       {"head_dim", 5},
       {"groups", 3},
       {"state", 7},
       {"skip", 0},
       {"gate", 0},
       {"dt_bias", 0}},
      {0, 0, 0});
  add("ssd_scan",
      {{"batch", 1},
       {"len", 200},
       {"heads", 4},
       {"head_dim", 8},
       {"groups", 2},
       {"state", 64},
       {"skip", 1},
       {"gate", 0},
       {"dt_bias", 1}},
      {1, 0.05, 0.5});
  // DeepSeek routing: V3's (sigmoid, correction bias, 8 groups keep 4, scale 2.5), V2's
  // (softmax, no bias, no renormalisation, scale 16), groups of three and of one.
  add("grouped_topk", {{"tokens", 5}, {"experts", 256}, {"k", 8}, {"bias", 1}}, {8, 4, 1, 1, 2.5});
  add("grouped_topk", {{"tokens", 33}, {"experts", 64}, {"k", 6}, {"bias", 0}}, {8, 3, 0, 0, 16});
  add("grouped_topk", {{"tokens", 3}, {"experts", 12}, {"k", 3}, {"bias", 1}}, {4, 2, 1, 1, 1});
  add("grouped_topk", {{"tokens", 2}, {"experts", 8}, {"k", 2}, {"bias", 1}}, {8, 4, 1, 1, 1});
  // MLA: DeepSeek-V3's latent (512 + 64) at a prefill chunk and a decode step, odd sizes.
  add("mla_cache_write", {{"batch", 2}, {"kv_lora_rank", 512}, {"rope_dim", 64}, {"cache_len", 40}}, {7, 3});
  add("mla_cache_write", {{"batch", 3}, {"kv_lora_rank", 40}, {"rope_dim", 8}, {"cache_len", 30}}, {1, 20});
  add("head_linear", {{"tokens", 7}, {"heads", 5}, {"in", 24}, {"out", 40}}, {0});
  add("head_linear", {{"tokens", 7}, {"heads", 5}, {"in", 24}, {"out", 40}}, {1});
  add("head_linear", {{"tokens", 2}, {"heads", 16}, {"in", 128}, {"out", 512}}, {1});
  add("head_linear", {{"tokens", 33}, {"heads", 3}, {"in", 512}, {"out", 128}}, {0});
  add("mla_attention", {{"batch", 2}, {"heads", 4}, {"kv_lora_rank", 64}, {"rope_dim", 16}, {"cache_len", 20}},
      {0.125, 9, 0});
  add("mla_attention", {{"batch", 3}, {"heads", 16}, {"kv_lora_rank", 512}, {"rope_dim", 64}, {"cache_len", 300}},
      {0.0722, 1, 250});
  add("mla_attention", {{"batch", 1}, {"heads", 3}, {"kv_lora_rank", 40}, {"rope_dim", 8}, {"cache_len", 16}},
      {0.2, 5, 7});
  // Vision encoders: ViT-B/14's patches on a 28x42 image (a run of 14 takes the 2-element
  // CUDA packs), ViT-B/16's (full 16-byte packs in 16-bit types), odd channels with
  // patch 2; tokens with a CLS prefix (ViT, DINOv2) and without (SigLIP's 27x27 patches at
  // hidden 1152), odd hidden sizes; LayerScale over odd and round widths.
  add("patchify", {{"images", 2}, {"channels", 3}, {"height", 28}, {"width", 42}}, {14});
  add("patchify", {{"images", 1}, {"channels", 3}, {"height", 32}, {"width", 32}}, {16});
  add("patchify", {{"images", 3}, {"channels", 5}, {"height", 6}, {"width", 10}}, {2});
  // Pixels past the last whole patch are dropped (SigLIP's 384 px at patch 14): an odd
  // width also keeps CUDA's rows off pack alignment.
  add("patchify", {{"images", 2}, {"channels", 3}, {"height", 30}, {"width", 29}}, {14});
  add("patchify", {{"images", 1}, {"channels", 3}, {"height", 18}, {"width", 17}}, {4});
  for (int64_t prefix : {0, 1}) {
    add("patch_tokens", {{"images", 2}, {"patches", 4}, {"prefix", prefix}, {"hidden", 64}},
        {static_cast<double>(prefix)});
    add("patch_tokens", {{"images", 3}, {"patches", 4}, {"prefix", prefix}, {"hidden", 1023}},
        {static_cast<double>(prefix)});
    add("patch_tokens", {{"images", 2}, {"patches", 729}, {"prefix", prefix}, {"hidden", 1152}},
        {static_cast<double>(prefix)});
  }
  for (int64_t h : {1, 63, 1024, 4097}) add("channel_scale", {{"tokens", 7}, {"hidden", h}}, {});
  // ConvNeXt (channels last): its 7x7 depthwise conv at padding 3 on odd images, odd
  // channels (CUDA's scalar path) and round ones (16-byte packs), the last stage's 7x7 x
  // 768; a kernel wider than the image (taps clipped on both sides); 3x3 at padding 0
  // and 1, with and without a bias.
  for (int64_t ch : {5, 96})
    add("depthwise_conv2d", {{"images", 2}, {"height", 9}, {"width", 11}, {"channels", ch}, {"kernel", 7}, {"bias", 1}},
        {3});
  add("depthwise_conv2d", {{"images", 1}, {"height", 7}, {"width", 7}, {"channels", 768}, {"kernel", 7}, {"bias", 1}},
      {3});
  add("depthwise_conv2d", {{"images", 2}, {"height", 3}, {"width", 4}, {"channels", 8}, {"kernel", 7}, {"bias", 0}},
      {3});
  add("depthwise_conv2d", {{"images", 2}, {"height", 6}, {"width", 5}, {"channels", 33}, {"kernel", 3}, {"bias", 0}},
      {0});
  add("depthwise_conv2d", {{"images", 3}, {"height", 5}, {"width", 8}, {"channels", 64}, {"kernel", 3}, {"bias", 1}},
      {1});
  // GRN (ConvNeXt V2): one pixel, 7x7 at odd and round widths, 56x56 (CUDA splits the
  // pixels over blocks), 14x14 at a wide expansion.
  add("grn", {{"images", 2}, {"pixels", 1}, {"channels", 768}}, {1e-6});
  add("grn", {{"images", 3}, {"pixels", 49}, {"channels", 5}}, {1e-6});
  add("grn", {{"images", 2}, {"pixels", 49}, {"channels", 768}}, {1e-6});
  add("grn", {{"images", 1}, {"pixels", 3136}, {"channels", 96}}, {1e-6});
  add("grn", {{"images", 2}, {"pixels", 196}, {"channels", 1536}}, {1e-6});
  // The 2x2 stride-2 downsampling input on odd images (the last row and column dropped),
  // odd and round channels; patches of 4 and 3.
  add("patchify_channels_last", {{"images", 2}, {"height", 9}, {"width", 11}, {"channels", 5}}, {2});
  add("patchify_channels_last", {{"images", 1}, {"height", 8}, {"width", 8}, {"channels", 96}}, {2});
  add("patchify_channels_last", {{"images", 2}, {"height", 17}, {"width", 16}, {"channels", 3}}, {4});
  add("patchify_channels_last", {{"images", 1}, {"height", 7}, {"width", 10}, {"channels", 7}}, {3});
  // The pooling: one pixel, the last stage's 7x7, a 56x56 image (split over blocks).
  add("spatial_mean", {{"images", 2}, {"pixels", 1}, {"channels", 768}}, {});
  add("spatial_mean", {{"images", 3}, {"pixels", 49}, {"channels", 5}}, {});
  add("spatial_mean", {{"images", 4}, {"pixels", 49}, {"channels", 1024}}, {});
  add("spatial_mean", {{"images", 1}, {"pixels", 3136}, {"channels", 96}}, {});
  return c;
}

using test_support::test_backend;

class OpsVsReference : public ::testing::TestWithParam<std::tuple<Case, DType>> {};

TEST_P(OpsVsReference, BaselineMatchesFp64Reference) {
  const auto& [c, dtype] = GetParam();
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def(c.op);
  const RngStream rng(1234, c.label);
  OpCall call = def.make(c.shape, dtype, rng);
  ASSERT_EQ(def.check(call), "") << c.label;
  const auto ref = run_reference(def, call);
  OpCall dev = backend.to_device(call);
  const OpImpl* impl = backend.baseline(c.op);
  ASSERT_NE(impl, nullptr) << c.op << " has no " << backend.name() << " baseline";
  ASSERT_TRUE(backend.supports_op(def, dev)) << "the " << backend.name() << " baseline refuses " << c.label;
  backend.activate();
  impl->run(dev);
  for (const auto& [index, expected] : ref) call.args[index] = backend.to_host(dev.args[index]);
  ASSERT_EQ(backend.audit(), "");
  ASSERT_FALSE(ref.empty());
  for (const auto& [index, expected] : ref) {
    const Comparison cmp = compare(call.args[index], expected, def.tolerance_for(dtype));
    EXPECT_TRUE(cmp.passed) << c.label << " " << dtype_name(dtype) << " arg " << def.args[index].name
                            << ": matched " << cmp.matched_fraction << " rel_l2 " << cmp.rel_l2 << " max_abs "
                            << cmp.max_abs << " nan " << cmp.nan;
    // The relative L2 error stays near the element type's precision.
    const double bound = dtype == DType::kF32 ? 1e-5 : dtype == DType::kF16 ? 2e-3 : 1.6e-2;
    if (def.args[index].float_typed) {
      EXPECT_LT(cmp.rel_l2, bound) << c.label << " " << dtype_name(dtype);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsVsReference,
                         ::testing::Combine(::testing::ValuesIn(cases()),
                                            ::testing::Values(DType::kF32, DType::kF16, DType::kBF16)),
                         [](const ::testing::TestParamInfo<std::tuple<Case, DType>>& param_info) {
                           return std::get<0>(param_info.param).label + "_" +
                                  std::string(dtype_name(std::get<1>(param_info.param)));
                         });

TEST(OpsCoverage, EveryRegisteredOpIsTestedAndHasABaselineOnThisBackend) {
  Backend& backend = test_backend();
  std::set<std::string> tested;
  for (const auto& c : cases()) tested.insert(c.op);
  for (const auto& name : OpRegistry::global().op_names()) {
    EXPECT_TRUE(tested.count(name)) << name << " has no test case";
    EXPECT_NE(backend.baseline(name), nullptr) << name << " has no " << backend.name() << " baseline";
  }
}

TEST(OpsChecks, RejectBadShapes) {
  register_builtin_ops();
  const RngStream rng(1, "bad");
  const OpDef& rms = OpRegistry::global().def("rms_norm");
  OpCall call = rms.make(OpShape{{{"tokens", 3}, {"hidden", 8}}, {1e-6}}, DType::kF32, rng);
  call.args[2] = Tensor::zeros(DType::kF32, {7});
  EXPECT_NE(rms.check(call).find("hidden size"), std::string::npos) << rms.check(call);
  call.args[2] = Tensor::zeros(DType::kBF16, {8});
  EXPECT_NE(rms.check(call).find("bf16"), std::string::npos);
  const OpDef& lin = OpRegistry::global().def("linear");
  OpCall l = lin.make(OpShape{{{"tokens", 2}, {"in", 4}, {"out", 3}, {"bias", 0}}, {}}, DType::kF32, rng);
  l.args[2] = Tensor::zeros(DType::kF32, {3, 5});
  EXPECT_NE(lin.check(l).find("in_features"), std::string::npos) << lin.check(l);
  const OpDef& att = OpRegistry::global().def("attention");
  OpCall a = att.make(OpShape{{{"batch", 1}, {"q_heads", 2}, {"kv_heads", 1}, {"head_dim", 8}, {"cache_len", 4}},
                              {0.3, 4, 0, 1, 0, 0}},
                      DType::kF32, rng);
  a.params[2] = 2;  // q_start + q_len > cache
  EXPECT_NE(att.check(a).find("exceeds the cache length"), std::string::npos);
  EXPECT_THROW(OpRegistry::global().def("rms_nrom"), Error);
  try {
    OpRegistry::global().def("rms_nrom");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'rms_norm'"), std::string::npos);
  }
}

// A wrong result is caught: the comparison is not vacuous.
TEST(OpsCompare, DetectsWrongOutputs) {
  register_builtin_ops();
  const OpDef& def = OpRegistry::global().def("silu_and_mul");
  OpCall call = def.make(OpShape{{{"tokens", 4}, {"d", 64}}, {}}, DType::kBF16, RngStream(3, "x"));
  const auto ref = run_reference(def, call);
  OpRegistry::global().impl("silu_and_mul", "cpu").run(call);
  Tensor out = call.args[0];
  EXPECT_TRUE(compare(out, ref.at(0), def.tolerance_for(DType::kBF16)).passed);
  std::memset(out.data(), 0, out.nbytes());
  EXPECT_FALSE(compare(out, ref.at(0), def.tolerance_for(DType::kBF16)).passed);
  out.data_as<uint16_t>()[0] = 0x7fc0;  // NaN
  EXPECT_EQ(compare(out, ref.at(0), def.tolerance_for(DType::kBF16)).nan, 1);
}

// The check lets attention's sinks be fp32 or fp64: the CPU baseline reads either as it
// is (fp64 sinks once read as floats gave another output).
TEST(OpsSinks, CpuBaselineReadsFp64SinksAsFp32Ones) {
  register_builtin_ops();
  const OpDef& def = OpRegistry::global().def("attention");
  const OpShape shape{{{"batch", 1}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", 16}, {"cache_len", 9}, {"sinks", 1}},
                      {0.25, 9, 0, 1, 0, 0}};
  OpCall f32 = def.make(shape, DType::kBF16, RngStream(4, "sinks"));
  OpCall f64 = def.make(shape, DType::kBF16, RngStream(4, "sinks"));
  f64.args[4] = f32.args[4].to_dtype(DType::kF64);
  ASSERT_EQ(def.check(f64), "");
  OpRegistry::global().impl("attention", "cpu").run(f32);
  OpRegistry::global().impl("attention", "cpu").run(f64);
  ASSERT_EQ(f32.args[0].nbytes(), f64.args[0].nbytes());
  EXPECT_EQ(std::memcmp(f32.args[0].data(), f64.args[0].data(), f32.args[0].nbytes()), 0);
}

// A bidirectional window by hand: with every score equal (zero queries), a row's output
// is the mean of the values it sees, so v[j] = j gives the middle of its band: position
// p of n sees j with |p - j| < window, clipped to [0, n). Causal rows see
// [p - window + 1, p]. Every backend's baseline gives these (bf16 holds the means).
TEST(OpsAttentionWindow, BidirectionalBandIsWindowEachSideClipped) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("attention");
  const int64_t n = 12, w = 3, d = 64;
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (const bool causal : {false, true}) {
      Tensor q = Tensor::zeros(dt, {n, 1, d});
      Tensor k = Tensor::zeros(dt, {1, n, 1, d});
      Tensor v = Tensor::zeros(DType::kF32, {1, n, 1, d});
      for (int64_t j = 0; j < n; ++j)
        for (int64_t e = 0; e < d; ++e) v.span<float>()[static_cast<size_t>(j * d + e)] = static_cast<float>(j);
      OpCall c{{Tensor::empty(dt, {n, 1, d}), q, k, v.to_dtype(dt), Tensor()},
               {0.125, static_cast<double>(n), 0, causal ? 1.0 : 0.0, static_cast<double>(w), 0}};
      ASSERT_EQ(def.check(c), "");
      OpCall dev = backend.to_device(c);
      backend.activate();
      backend.baseline("attention")->run(dev);
      const Tensor got = backend.to_host(dev.args[0]).to_dtype(DType::kF32);
      for (int64_t p = 0; p < n; ++p) {
        const int64_t lo = std::max<int64_t>(0, p - w + 1), hi = causal ? p + 1 : std::min<int64_t>(n, p + w);
        const float want = static_cast<float>(lo + hi - 1) / 2;
        for (int64_t e = 0; e < d; e += 21)
          EXPECT_NEAR(got.span<float>()[static_cast<size_t>(p * d + e)], want, 1e-2)
              << dtype_name(dt) << (causal ? " causal" : " bidirectional") << " position " << p;
      }
    }
  }
  OpCall bad{{Tensor::empty(DType::kF32, {n, 1, d}), Tensor::zeros(DType::kF32, {n, 1, d}),
              Tensor::zeros(DType::kF32, {1, n, 1, d}), Tensor::zeros(DType::kF32, {1, n, 1, d}), Tensor()},
             {0.125, static_cast<double>(n), 0, 0, -1, 0}};
  EXPECT_NE(def.check(bad).find("window must be >= 0"), std::string::npos) << def.check(bad);
}

// cross_attention: every decoder row sees every encoder key, whatever its position and
// however many rows there are. With equal scores (zero queries) and v[j] = j, each
// row's output is the mean of 0 .. S - 1. Bad calls are refused by name.
TEST(OpsCrossAttention, EveryRowSeesEveryEncoderKey) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("cross_attention");
  const int64_t b = 2, s = 11, d = 64;
  for (const int64_t q_len : {int64_t{1}, int64_t{5}, int64_t{17}}) {
    for (DType dt : {DType::kF32, DType::kBF16}) {
      const int64_t t = b * q_len;
      Tensor v = Tensor::zeros(DType::kF32, {b, s, 2, d});
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < s; ++j)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t e = 0; e < d; ++e)
              v.span<float>()[static_cast<size_t>(((i * s + j) * 2 + h) * d + e)] = static_cast<float>(j + 100 * i);
      OpCall c{
          {Tensor::empty(dt, {t, 4, d}), Tensor::zeros(dt, {t, 4, d}), Tensor::zeros(dt, {b, s, 2, d}), v.to_dtype(dt)},
          {0.125, static_cast<double>(q_len)}};
      ASSERT_EQ(def.check(c), "");
      OpCall dev = backend.to_device(c);
      backend.activate();
      backend.baseline("cross_attention")->run(dev);
      const Tensor got = backend.to_host(dev.args[0]).to_dtype(DType::kF32);
      for (int64_t r = 0; r < t; ++r)
        for (int64_t h = 0; h < 4; ++h) {
          const float want = static_cast<float>(s - 1) / 2 + static_cast<float>(100 * (r / q_len));
          EXPECT_NEAR(got.span<float>()[static_cast<size_t>((r * 4 + h) * d + 7)], want, 0.5)
              << dtype_name(dt) << " q_len " << q_len << " row " << r << " head " << h;
        }
    }
  }
  const RngStream rng(3, "cross");
  const OpShape shape{{{"batch", 2}, {"q_heads", 4}, {"kv_heads", 2}, {"head_dim", 8}, {"kv_len", 5}}, {0.3, 3}};
  OpCall bad = def.make(shape, DType::kF32, rng);
  ASSERT_EQ(def.check(bad), "");
  bad.params[1] = 4;  // rows are batch x 3
  EXPECT_NE(def.check(bad).find("query rows must be batch x q_len"), std::string::npos) << def.check(bad);
  bad = def.make(shape, DType::kF32, rng);
  bad.args[3] = Tensor::zeros(DType::kF32, {2, 6, 2, 8});
  EXPECT_NE(def.check(bad).find("key and value shapes differ"), std::string::npos) << def.check(bad);
  bad = def.make(shape, DType::kF32, rng);
  bad.args[2] = Tensor::zeros(DType::kF32, {2, 5, 3, 8});
  bad.args[3] = Tensor::zeros(DType::kF32, {2, 5, 3, 8});
  EXPECT_NE(def.check(bad).find("kv heads must divide query heads"), std::string::npos) << def.check(bad);
  bad = def.make(shape, DType::kF32, rng);
  bad.params.pop_back();
  EXPECT_NE(def.check(bad).find("expects 2 parameters"), std::string::npos) << def.check(bad);
}

// fused_moe's bytes are those a call must move: the weights of the experts its tokens
// chose, not every expert's (the floor of a decode step).
TEST(OpsBytes, FusedMoeCountsTheChosenExpertsOnly) {
  register_builtin_ops();
  const OpDef& def = OpRegistry::global().def("fused_moe");
  const OpShape shape{{{"tokens", 2}, {"hidden", 16}, {"experts", 8}, {"inter", 8}, {"k", 2}}, {0, 0, 0}};
  OpCall call = def.make(shape, DType::kF32, RngStream(5, "moe"));
  std::set<int32_t> chosen;
  for (int64_t i = 0; i < call.args[5].numel(); ++i) chosen.insert(call.args[5].data_as<int32_t>()[i]);
  ASSERT_GE(chosen.size(), 2u);
  double all = 0;
  for (const auto& t : call.args)  // absent optional tensors (the biases) move nothing
    if (t.defined()) all += static_cast<double>(t.nbytes());
  const double per_expert = static_cast<double>(2 * 8 * 16 + 16 * 8) * 4;
  EXPECT_DOUBLE_EQ(def.bytes(call), all - static_cast<double>(8 - chosen.size()) * per_expert);
  // Every token choosing the same two experts: six experts' weights are not read.
  for (int64_t i = 0; i < call.args[5].numel(); ++i) call.args[5].data_as<int32_t>()[i] = static_cast<int32_t>(i % 2);
  EXPECT_DOUBLE_EQ(def.bytes(call), all - 6 * per_expert);
}

// ssd_scan is selective_scan over each group's channels, with every head's dt, A, D and
// dt_bias spread over its head_dim channels and A over the states (the fp64 references,
// from the same fp32 inputs): the head and group indexing, checked against Mamba's.
TEST(OpsSsdScan, IsSelectiveScanOverEachGroupWithTheHeadsValuesSpread) {
  register_builtin_ops();
  const OpDef& ssd = OpRegistry::global().def("ssd_scan");
  const OpDef& sel = OpRegistry::global().def("selective_scan");
  const int64_t b = 2, len = 9, heads = 4, p = 3, groups = 2, n = 5, hg = heads / groups, gc = hg * p;
  const OpShape shape{{{"batch", b},
                       {"len", len},
                       {"heads", heads},
                       {"head_dim", p},
                       {"groups", groups},
                       {"state", n},
                       {"skip", 1},
                       {"gate", 1},
                       {"dt_bias", 1}},
                      {1, 0, 0}};
  const OpCall call = ssd.make(shape, DType::kF32, RngStream(12, "ssd"));
  ASSERT_EQ(ssd.check(call), "");
  const auto want = run_reference(ssd, call);
  const auto in = [&](size_t i) { return call.args[i].data_as<float>(); };
  const double* want_out = want.at(0).data_as<double>();
  const double* want_state = want.at(9).data_as<double>();
  for (int64_t g = 0; g < groups; ++g) {
    Tensor u = Tensor::empty(DType::kF32, {b, len, gc}), delta = Tensor::empty(DType::kF32, {b, len, gc});
    Tensor z = Tensor::empty(DType::kF32, {b, len, gc}), a = Tensor::empty(DType::kF32, {gc, n});
    Tensor bm = Tensor::empty(DType::kF32, {b, len, n}), cm = Tensor::empty(DType::kF32, {b, len, n});
    Tensor d = Tensor::empty(DType::kF32, {gc}), bias = Tensor::empty(DType::kF32, {gc});
    Tensor state = Tensor::empty(DType::kF32, {b, gc, n});
    for (int64_t j = 0; j < gc; ++j) {
      const int64_t h = g * hg + j / p;
      d.data_as<float>()[j] = in(6)[h];
      bias.data_as<float>()[j] = in(8)[h];
      for (int64_t k = 0; k < n; ++k) a.data_as<float>()[j * n + k] = in(3)[h];
    }
    for (int64_t row = 0; row < b * len; ++row) {
      for (int64_t j = 0; j < gc; ++j) {
        const int64_t h = g * hg + j / p, src = (row * heads + h) * p + j % p;
        u.data_as<float>()[row * gc + j] = in(1)[src];
        z.data_as<float>()[row * gc + j] = in(7)[src];
        delta.data_as<float>()[row * gc + j] = in(2)[row * heads + h];
      }
      for (int64_t k = 0; k < n; ++k) {
        bm.data_as<float>()[row * n + k] = in(4)[(row * groups + g) * n + k];
        cm.data_as<float>()[row * n + k] = in(5)[(row * groups + g) * n + k];
      }
    }
    for (int64_t s = 0; s < b; ++s)
      for (int64_t j = 0; j < gc; ++j)
        for (int64_t k = 0; k < n; ++k)
          state.data_as<float>()[(s * gc + j) * n + k] = in(9)[((s * heads + g * hg) * p + j) * n + k];
    const OpCall mamba{{Tensor::empty(DType::kF32, {b, len, gc}), u, delta, a, bm, cm, d, z, bias, state}, {1}};
    ASSERT_EQ(sel.check(mamba), "");
    const auto got = run_reference(sel, mamba);
    for (int64_t row = 0; row < b * len; ++row)
      for (int64_t j = 0; j < gc; ++j)
        EXPECT_NEAR(got.at(0).data_as<double>()[row * gc + j], want_out[row * heads * p + g * gc + j], 1e-12)
            << "group " << g << " row " << row << " channel " << j;
    for (int64_t s = 0; s < b; ++s)
      for (int64_t j = 0; j < gc * n; ++j)
        EXPECT_NEAR(got.at(9).data_as<double>()[s * gc * n + j], want_state[(s * heads + g * hg) * p * n + j], 1e-12);
  }
}

// dt clamped to [0.25, 0.25] is a step size of 0.25 whatever dt and dt_bias say: the same
// as dt = 0.25 given without softplus, bias or clamp, on this backend's baseline.
TEST(OpsSsdScan, ClampedTimeStepIsTheClampsValue) {
  register_builtin_ops();
  Backend& backend = test_backend();
  const OpDef& ssd = OpRegistry::global().def("ssd_scan");
  const OpShape shape{{{"batch", 2},
                       {"len", 6},
                       {"heads", 4},
                       {"head_dim", 8},
                       {"groups", 2},
                       {"state", 16},
                       {"skip", 1},
                       {"gate", 0},
                       {"dt_bias", 1}},
                      {1, 0.25, 0.25}};
  OpCall clamped = ssd.make(shape, DType::kF32, RngStream(13, "ssd-clamp"));
  OpCall fixed = clamped;
  fixed.params = {0, 0, 0};
  fixed.args[2] = Tensor::empty(DType::kF32, clamped.args[2].shape());
  for (float& v : fixed.args[2].span<float>()) v = 0.25f;
  fixed.args[8] = Tensor();
  fixed.args[0] = Tensor::empty(DType::kF32, clamped.args[0].shape());
  fixed.args[9] = clamped.args[9].contiguous_copy();
  const auto run = [&](const OpCall& c) {
    OpCall dev = backend.to_device(c);
    backend.activate();
    backend.baseline("ssd_scan")->run(dev);
    return std::make_pair(backend.to_host(dev.args[0]), backend.to_host(dev.args[9]));
  };
  const auto [out_a, state_a] = run(clamped);
  const auto [out_b, state_b] = run(fixed);
  EXPECT_EQ(std::memcmp(out_a.data(), out_b.data(), out_a.nbytes()), 0);
  EXPECT_EQ(std::memcmp(state_a.data(), state_b.data(), state_a.nbytes()), 0);
  // And the clamp changed something: without it the step sizes differ.
  OpCall free = clamped;
  free.params = {1, 0, 0};
  free.args[0] = Tensor::empty(DType::kF32, clamped.args[0].shape());
  free.args[9] = clamped.args[9].contiguous_copy();
  const auto [out_c, state_c] = run(free);
  EXPECT_NE(std::memcmp(out_a.data(), out_c.data(), out_a.nbytes()), 0);
}

// DeepSeek-V3's routing by hand: 8 experts in 4 groups of 2, the best 2 groups compete
// for 2 experts. Expert 0 scores highest alone, but its group's top-2 sum (0.95 + 0.05)
// loses to groups 1 (0.6 + 0.6) and 2 (0.55 + 0.55); a correction bias on expert 5 then
// moves group 2 first and picks expert 5, yet weighs it by its score, not the biased one.
TEST(OpsGroupedTopk, GroupsCompeteByTheirTopTwoAndTheBiasSteersWithoutWeighing) {
  Backend& backend = test_backend();
  const auto logit = [](double p) { return static_cast<float>(std::log(p / (1 - p))); };
  const std::vector<double> scores = {0.95, 0.05, 0.6, 0.6, 0.55, 0.55, 0.1, 0.1};
  const auto route = [&](float bias5) {
    OpCall c;
    c.args = {Tensor::empty(DType::kF32, {1, 2}), Tensor::empty(DType::kI32, {1, 2}),
              Tensor::empty(DType::kF32, {1, 8}), Tensor::zeros(DType::kF32, {8})};
    for (int j = 0; j < 8; ++j) c.args[2].span<float>()[j] = logit(scores[j]);
    c.args[3].span<float>()[5] = bias5;
    c.params = {4, 2, 1, 1, 2.5};
    EXPECT_EQ(OpRegistry::global().def("grouped_topk").check(c), "");
    OpCall dev = backend.to_device(c);
    backend.activate();
    backend.baseline("grouped_topk")->run(dev);
    return std::make_pair(backend.to_host(dev.args[0]), backend.to_host(dev.args[1]));
  };
  auto [w, ids] = route(0.0f);
  EXPECT_EQ(ids.span<int32_t>()[0], 2);
  EXPECT_EQ(ids.span<int32_t>()[1], 3) << "a tie goes to the lower id";
  EXPECT_NEAR(w.span<float>()[0], 1.25, 1e-5) << "renormalised (0.5) times routed_scaling_factor 2.5";
  std::tie(w, ids) = route(0.2f);
  EXPECT_EQ(ids.span<int32_t>()[0], 5);
  EXPECT_EQ(ids.span<int32_t>()[1], 2);
  EXPECT_NEAR(w.span<float>()[0], 2.5 * 0.55 / 1.15, 1e-5) << "the score, not score + bias";
  EXPECT_NEAR(w.span<float>()[1], 2.5 * 0.6 / 1.15, 1e-5);
}

// patchify's layout by hand: a 2-channel 5x5 image, patches of 2 (the last row and
// column are past the last whole patch and dropped, as a stride-2 Conv2d drops them).
// Every pixel is placed by its own coordinates (the inverse of the op's formula): patch
// (y/2, x/2) in row-major order, column c*4 + (y%2)*2 + x%2; the baseline and the
// reference must match exactly.
TEST(OpsPatchify, PatchesInRowMajorOrderWithConvWeightColumns) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("patchify");
  const int64_t chans = 2, side = 5, p = 2, per_row = side / p, cols = chans * p * p;
  OpCall c{{Tensor::empty(DType::kF32, {per_row * per_row, cols}), Tensor::empty(DType::kF32, {1, chans, side, side})},
           {static_cast<double>(p)}};
  const auto pixel = [](int64_t ch, int64_t y, int64_t x) { return static_cast<float>(ch * 100 + y * 10 + x); };
  std::vector<float> want(static_cast<size_t>(per_row * per_row * cols), -1.0f);
  for (int64_t ch = 0; ch < chans; ++ch)
    for (int64_t y = 0; y < side; ++y)
      for (int64_t x = 0; x < side; ++x) {
        c.args[1].span<float>()[static_cast<size_t>((ch * side + y) * side + x)] = pixel(ch, y, x);
        if (y >= per_row * p || x >= per_row * p) continue;  // dropped
        const int64_t row = (y / p) * per_row + x / p, col = ch * p * p + (y % p) * p + x % p;
        want[static_cast<size_t>(row * cols + col)] = pixel(ch, y, x);
      }
  ASSERT_EQ(def.check(c), "");
  OpCall dev = backend.to_device(c);
  backend.activate();
  backend.baseline("patchify")->run(dev);
  const Tensor got = backend.to_host(dev.args[0]);
  const Tensor ref = run_reference(def, c).at(0);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.span<float>()[i], want[i]) << "element " << i;
    EXPECT_EQ(ref.span<double>()[i], static_cast<double>(want[i])) << "reference element " << i;
  }
  // Patch (0, 1) and patch (1, 0), spelled out.
  const std::vector<float> right = {2, 3, 12, 13, 102, 103, 112, 113}, below = {20, 21, 30, 31, 120, 121, 130, 131};
  for (int64_t j = 0; j < cols; ++j) {
    EXPECT_EQ(got.span<float>()[static_cast<size_t>(cols + j)], right[static_cast<size_t>(j)]);
    EXPECT_EQ(got.span<float>()[static_cast<size_t>(2 * cols + j)], below[static_cast<size_t>(j)]);
  }
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NE(want[i], -1.0f) << "every output element has its pixel";
  // The check names an image smaller than one patch.
  OpCall bad{{Tensor::empty(DType::kF32, {0, 588}), Tensor::empty(DType::kF32, {1, 3, 10, 42})}, {14}};
  const std::string e = def.check(bad);
  EXPECT_NE(e.find("height 10"), std::string::npos) << e;
  EXPECT_NE(e.find("patch size 14"), std::string::npos) << e;
}

// patch_tokens puts each image's prefix (+ position 0) first, then its patches (+ the
// following positions); without a prefix the patches take every position. Small
// integers and halves: every sum is exact in fp32.
TEST(OpsPatchTokens, EachImageStartsWithThePrefixThenItsPatches) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("patch_tokens");
  const int64_t images = 2, n = 2, h = 3;
  const auto fill = [](Tensor t, float base) {
    for (int64_t i = 0; i < t.numel(); ++i) t.span<float>()[static_cast<size_t>(i)] = base + static_cast<float>(i);
    return t;
  };
  const Tensor patches = fill(Tensor::empty(DType::kF32, {images * n, h}), 10);  // row r: 10 + 3r + k
  const Tensor prefix = fill(Tensor::empty(DType::kF32, {1, h}), 100);
  const auto run = [&](int64_t p) {
    OpCall c{{Tensor::empty(DType::kF32, {images * (p + n), h}), patches, p > 0 ? prefix : Tensor(),
              fill(Tensor::empty(DType::kF32, {p + n, h}), 0.5f)},
             {static_cast<double>(p)}};
    EXPECT_EQ(def.check(c), "");
    OpCall dev = backend.to_device(c);
    backend.activate();
    backend.baseline("patch_tokens")->run(dev);
    return backend.to_host(dev.args[0]);
  };
  const auto row = [&](const Tensor& t, int64_t r) {
    return std::vector<float>(t.span<float>().begin() + r * h, t.span<float>().begin() + (r + 1) * h);
  };
  const auto sum = [&](float a, float b) {
    return std::vector<float>{a + b, a + b + 2, a + b + 4};  // both rows step by 1 along k
  };
  const Tensor with = run(1);
  // positions row j starts at 0.5 + 3j; patches row r at 10 + 3r; the prefix at 100.
  EXPECT_EQ(row(with, 0), sum(100, 0.5f)) << "image 0 starts with prefix + positions[0]";
  EXPECT_EQ(row(with, 1), sum(10, 3.5f)) << "then patch 0 + positions[1]";
  EXPECT_EQ(row(with, 2), sum(13, 6.5f));
  EXPECT_EQ(row(with, 3), sum(100, 0.5f)) << "image 1 starts with the prefix again";
  EXPECT_EQ(row(with, 4), sum(16, 3.5f)) << "then its own first patch + positions[1]";
  EXPECT_EQ(row(with, 5), sum(19, 6.5f));
  const Tensor without = run(0);
  EXPECT_EQ(row(without, 0), sum(10, 0.5f)) << "no prefix: patch 0 takes positions[0]";
  EXPECT_EQ(row(without, 1), sum(13, 3.5f));
  EXPECT_EQ(row(without, 2), sum(16, 0.5f)) << "image 1's first patch takes positions[0]";
  EXPECT_EQ(row(without, 3), sum(19, 3.5f));
  // A prefix_rows that disagrees with the prefix is refused by name.
  OpCall bad{{Tensor::empty(DType::kF32, {6, h}), patches, prefix, Tensor::empty(DType::kF32, {3, h})}, {0}};
  EXPECT_NE(def.check(bad).find("prefix_rows"), std::string::npos) << def.check(bad);
}

// depthwise_conv2d by hand: one 3x3 image of 2 channels (NHWC), kernel 3. Channel 0's
// kernel is all ones (each output is its 3x3 neighbourhood's sum, zeros past the
// border), channel 1's holds 2 at (ky, kx) = (1, 2) only (twice the right neighbour: a
// cross-correlation, as PyTorch's Conv2d, not a flipped kernel); biases 0.5 and -1.
// Every value is exact in fp32.
TEST(OpsDepthwiseConv2d, NeighbourhoodSumsAndAnUnflippedKernel) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("depthwise_conv2d");
  const int64_t side = 3, chans = 2;
  Tensor x = Tensor::empty(DType::kF32, {1, side, side, chans});
  for (int64_t y = 0; y < side; ++y)
    for (int64_t i = 0; i < side; ++i) {
      const auto v = static_cast<float>(y * side + i + 1);  // 1..9 in row-major order
      x.span<float>()[static_cast<size_t>((y * side + i) * chans)] = v;
      x.span<float>()[static_cast<size_t>((y * side + i) * chans + 1)] = 10 * v;
    }
  Tensor w = Tensor::zeros(DType::kF32, {chans, 3, 3});
  for (size_t t = 0; t < 9; ++t) w.span<float>()[t] = 1;
  w.span<float>()[9 + 1 * 3 + 2] = 2;
  Tensor bias = Tensor::empty(DType::kF32, {chans});
  bias.span<float>()[0] = 0.5f;
  bias.span<float>()[1] = -1;
  const auto run = [&](int64_t pad, int64_t out_side) {
    OpCall c{{Tensor::empty(DType::kF32, {1, out_side, out_side, chans}), x, w, bias}, {static_cast<double>(pad)}};
    EXPECT_EQ(def.check(c), "");
    OpCall dev = backend.to_device(c);
    backend.activate();
    backend.baseline("depthwise_conv2d")->run(dev);
    const Tensor got = backend.to_host(dev.args[0]);
    const Tensor ref = run_reference(def, c).at(0);
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_EQ(ref.span<double>()[static_cast<size_t>(i)],
                static_cast<double>(got.span<float>()[static_cast<size_t>(i)]))
          << "reference element " << i;
    return got;
  };
  const Tensor same = run(1, 3);
  const std::vector<float> sums = {12.5f, 21.5f, 16.5f, 27.5f, 45.5f, 33.5f, 24.5f, 39.5f, 28.5f};
  const std::vector<float> right = {39, 59, -1, 99, 119, -1, 159, 179, -1};
  for (size_t p = 0; p < 9; ++p) {
    EXPECT_EQ(same.span<float>()[p * 2], sums[p]) << "channel 0, pixel " << p;
    EXPECT_EQ(same.span<float>()[p * 2 + 1], right[p]) << "channel 1, pixel " << p;
  }
  const Tensor valid = run(0, 1);  // no padding: the centre pixel only
  EXPECT_EQ(valid.span<float>()[0], 45.5f);
  EXPECT_EQ(valid.span<float>()[1], 119.0f);
  // The check names a kernel that is not square and an output of the wrong size.
  OpCall bad{{Tensor::empty(DType::kF32, {1, 3, 3, chans}), x, Tensor::zeros(DType::kF32, {chans, 3, 2}), bias}, {1}};
  EXPECT_NE(def.check(bad).find("'weight' has shape [2, 3, 2], expected [2, k, k]"), std::string::npos)
      << def.check(bad);
  bad.args[2] = w;
  bad.args[0] = Tensor::empty(DType::kF32, {1, 3, 3, chans});
  bad.params = {0};
  EXPECT_NE(def.check(bad).find("expected [1, 1, 1, 2]"), std::string::npos) << def.check(bad);
}

// grn by hand: image 0 has channel 0 = (3, 4) over its two pixels and channel 1 = (0, 1),
// so Gx = (5, 1), their mean 3, Nx = (5/3, 1/3) (eps 1e-6 aside); gamma (1, 2), beta
// (0.5, -1). Image 1 is all zeros: its Gx and Nx are 0 (eps keeps 0/0 away), so its
// output is beta. The norm is per image: image 1 does not see image 0.
TEST(OpsGrn, NormalisesEachChannelByItsImagesMeanNorm) {
  Backend& backend = test_backend();
  const OpDef& def = OpRegistry::global().def("grn");
  const auto tensor = [](Shape shape, std::vector<float> v) {
    Tensor t = Tensor::empty(DType::kF32, std::move(shape));
    std::copy(v.begin(), v.end(), t.span<float>().begin());
    return t;
  };
  OpCall c{{Tensor::empty(DType::kF32, {2, 2, 2}), tensor({2, 2, 2}, {3, 0, 4, 1, 0, 0, 0, 0}), tensor({2}, {1, 2}),
            tensor({2}, {0.5f, -1})},
           {1e-6}};
  ASSERT_EQ(def.check(c), "");
  OpCall dev = backend.to_device(c);
  backend.activate();
  backend.baseline("grn")->run(dev);
  const Tensor got = backend.to_host(dev.args[0]);
  const Tensor ref = run_reference(def, c).at(0);
  const double mean = 3 + 1e-6;
  const std::vector<double> want = {1 * (3 * 5 / mean) + 0.5 + 3,
                                    2 * (0 / mean) - 1 + 0,
                                    1 * (4 * 5 / mean) + 0.5 + 4,
                                    2 * (1 / mean) - 1 + 1,
                                    0.5,
                                    -1,
                                    0.5,
                                    -1};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.span<float>()[i], want[i], 1e-5) << "element " << i;
    EXPECT_NEAR(ref.span<double>()[i], want[i], 1e-12) << "reference element " << i;
  }
  // The check names gamma's size and a non-positive eps.
  OpCall bad = c;
  bad.args[2] = tensor({3}, {1, 1, 1});
  EXPECT_NE(def.check(bad).find("'gamma' dimension 0 is 3, expected 2"), std::string::npos) << def.check(bad);
  bad = c;
  bad.params = {0};
  EXPECT_NE(def.check(bad).find("eps 0 must be positive"), std::string::npos) << def.check(bad);
}

// patchify_channels_last is patchify of the same images stored NCHW: odd 5x7 images of 3
// channels, patches of 2 (the last row and column dropped), bitwise equal.
TEST(OpsPatchifyChannelsLast, EqualsPatchifyOfTheNchwImages) {
  Backend& backend = test_backend();
  const int64_t b = 2, h = 5, w = 7, ch = 3, p = 2, rows = b * (h / p) * (w / p);
  Tensor nhwc = Tensor::empty(DType::kF32, {b, h, w, ch}), nchw = Tensor::empty(DType::kF32, {b, ch, h, w});
  for (int64_t i = 0; i < b; ++i)
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const auto v = static_cast<float>(i * 1000 + c * 100 + y * 10 + x);
          nhwc.span<float>()[static_cast<size_t>(((i * h + y) * w + x) * ch + c)] = v;
          nchw.span<float>()[static_cast<size_t>(((i * ch + c) * h + y) * w + x)] = v;
        }
  const auto run = [&](const char* op, const Tensor& images) {
    OpCall c{{Tensor::empty(DType::kF32, {rows, ch * p * p}), images}, {static_cast<double>(p)}};
    EXPECT_EQ(OpRegistry::global().def(op).check(c), "") << op;
    OpCall dev = backend.to_device(c);
    backend.activate();
    backend.baseline(op)->run(dev);
    return backend.to_host(dev.args[0]);
  };
  const Tensor got = run("patchify_channels_last", nhwc), want = run("patchify", nchw);
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.nbytes()), 0);
  // Row 1 is patch (0, 1): pixels (0..1, 2..3) of image 0, channel-major.
  EXPECT_EQ(got.span<float>()[static_cast<size_t>(ch * p * p)], 2.0f);
  EXPECT_EQ(got.span<float>()[static_cast<size_t>(ch * p * p + 5)], 103.0f) << "channel 1, ky 0, kx 1";
  // spatial_mean's check names an output that is not [images, channels].
  const OpDef& mean = OpRegistry::global().def("spatial_mean");
  OpCall bad{{Tensor::empty(DType::kF32, {b, ch + 1}), Tensor::empty(DType::kF32, {b, h * w, ch})}, {}};
  EXPECT_NE(mean.check(bad).find("'out' has shape [2, 4], expected [2, 3]"), std::string::npos) << mean.check(bad);
}

}  // namespace
}  // namespace fk::kernels
