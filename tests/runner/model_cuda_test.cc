// The model stage on the CUDA backend (label gpu): for every shipped architecture at
// its tiny preset, the whole stack (prefill and decode steps, KV cache on the device)
// runs on the GPU and gives the CPU backend's results — the fp32 run's logits within
// 1e-4 relative L2 (TF32 off; only summation orders differ), the same greedy tokens,
// and a baseline run whose error against fp32 is of the CPU baseline's size. A run that
// silently stayed on the host, or moved a tensor wrongly between ops, fails here.
#include "core/error.h"
#include "core/spec/family.h"
#include "core/spec/spec_file.h"
#include "kernels/backends.h"
#include "model_fixtures.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

namespace fk::runner {
namespace {

using test_support::tiny;
using test_support::tiny_stage;

double rel_l2(const Tensor& a, const Tensor& b) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double d = static_cast<double>(a.data_as<float>()[i]) - b.data_as<float>()[i];
    num += d * d;
    den += static_cast<double>(b.data_as<float>()[i]) * b.data_as<float>()[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Last-layer residual-stream error of `run` against fp32 at `step`.
double last_layer_error(const ModelStageOutput& o, const std::string& run, const std::string& step) {
  int64_t last = -1;
  for (const auto& e : o.layers)
    if (e.run == run && e.step == step) last = std::max(last, e.layer);
  double err = 0, ref = 0;
  for (const auto& e : o.layers)
    if (e.run == run && e.step == step && e.layer == last) {
      err += e.err_vs_fp32;
      ref += e.ref_fp32;
    }
  return ref > 0 ? std::sqrt(err / ref) : std::nan("");
}

// Whether `a` has decode steps: a causal model whose family keeps a workload's decode
// steps. Encoders, vision encoders and conv nets run one pass (and may have no vocabulary).
bool decodes(const spec::Architecture& a) {
  spec::Workload w;
  w.name = "w";
  w.batch = 1;
  w.seq_len = 8;
  w.decode_steps = 1;
  return a.attention.causal && spec::family_workload(a, w).decode_steps > 0;
}

class CudaModelStage : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaModelStage, MatchesTheCpuBackend) {
  if (const std::string why = kernels::backend_unavailable(DeviceKind::kCuda, 0); !why.empty())
    FAIL() << "this gpu test needs a CUDA device: " << why;
  const auto cuda = kernels::backend_create(DeviceKind::kCuda, 0);
  ModelStageConfig c = tiny_stage(GetParam(), 3, 12, 0, 17);
  c.workload.decode_steps = decodes(c.arch) ? 2 : 0;
  c.workload.dtype = DType::kBF16;  // a bf16 baseline against the fp32 run, whatever the spec's dtype
  const ModelStageOutput host = model_stage_run(c);
  c.backend = cuda.get();
  const ModelStageOutput dev = model_stage_run(c);

  ASSERT_EQ(dev.steps.size(), host.steps.size());
  ASSERT_EQ(dev.layers.size(), host.layers.size());
  ASSERT_FALSE(dev.ops.empty());
  // Peak memory is the device's (the caching allocator's), not the host's.
  ASSERT_EQ(dev.memory.size(), host.memory.size());
  for (const auto& m : dev.memory) {
    EXPECT_EQ(m.device, "cuda:0") << m.run;
    EXPECT_GT(m.peak_in_use_bytes, 0) << m.run;
    EXPECT_LE(m.peak_in_use_bytes, m.peak_reserved_bytes) << m.run;
  }
  for (const auto& op : dev.ops) EXPECT_GE(op.seconds, 0) << op.op << " " << op.role;
  if (c.arch.head.kind == spec::HeadKind::kLm) {
    ASSERT_TRUE(dev.fp32_logits.defined());
    ASSERT_EQ(dev.fp32_logits.shape(), host.fp32_logits.shape());
    EXPECT_LT(rel_l2(dev.fp32_logits, host.fp32_logits), 1e-4);
    ASSERT_EQ(dev.logits.size(), host.logits.size());
    for (size_t i = 0; i < dev.logits.size(); ++i) {
      EXPECT_TRUE(std::isfinite(dev.logits[i].kl_sum_fp32)) << dev.logits[i].step;
      EXPECT_LT(dev.logits[i].kl_sum_fp32, 4 * host.logits[i].kl_sum_fp32 + 1e-3) << dev.logits[i].step;
    }
  }
  for (const std::string step : {"prefill", "decode.1"}) {
    const double h = last_layer_error(host, "baseline", step), d = last_layer_error(dev, "baseline", step);
    if (std::isnan(h)) continue;
    ASSERT_TRUE(std::isfinite(d)) << step;
    EXPECT_GT(d, 0) << step << ": the bf16 baseline matched fp32 exactly (did it run in fp32?)";
    EXPECT_LT(d, std::max(4 * h, 1e-2)) << step << ": cpu baseline " << h;
    EXPECT_GT(d, h / 4) << step << ": cpu baseline " << h;
  }
}

// Random weights drawn on the device (ModelWeights::load) are the host master's bits
// rounded once, for a whole model and for a TP x PP shard.
TEST_P(CudaModelStage, WeightsMadeOnTheDeviceAreTheHostsBits) {
  if (const std::string why = kernels::backend_unavailable(DeviceKind::kCuda, 0); !why.empty())
    FAIL() << "this gpu test needs a CUDA device: " << why;
  const auto cuda = kernels::backend_create(DeviceKind::kCuda, 0);
  const spec::Architecture a = tiny(GetParam());
  const ModelFamily& family = model_family_of(a);
  const RandomWeights source(33);
  for (const Placement& pl : test_support::weight_test_placements()) {
    for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
      const std::unique_ptr<Weights> want = family.master_weights(a, pl, source)->rounded(dt);
      const std::unique_ptr<Weights> got = family.load_weights(a, pl, source, dt, *cuda);
      test_support::expect_same_weights(*got, *cuda, *want,
                                        GetParam() + " tp rank " + std::to_string(pl.tp_rank) + " " + std::string(dtype_name(dt)));
    }
  }
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// A step captured as a graph (Model::prepare / forward / result, Backend::capture) and
// replayed gives the eager step's output bit for bit, again after a reset and a fresh
// prefill (the graph reads the caches and the staged inputs it captured, not copies).
// Decoders replay a decode step; encoders, which have none, their one step.
TEST_P(CudaModelStage, ReplayedStepsAreTheEagerStepsBits) {
  if (const std::string why = kernels::backend_unavailable(DeviceKind::kCuda, 0); !why.empty())
    FAIL() << "this gpu test needs a CUDA device: " << why;
  const auto cuda = kernels::backend_create(DeviceKind::kCuda, 0);
  const spec::Architecture a = tiny(GetParam());
  spec::Workload w;
  w.name = "w";
  w.batch = 3;
  w.seq_len = 12;
  w.decode_steps = 2;
  w = spec::family_workload(a, w);  // a vision encoder's: its images' tokens, no decode
  const Placement pl;
  const ModelFamily& family = model_family_of(a);
  const RandomWeights source(5);
  const std::unique_ptr<Weights> weights = family.load_weights(a, pl, source, DType::kBF16, *cuda);
  Runtime rt(ImplSet::baseline(DeviceKind::kCuda), *cuda);
  const std::unique_ptr<Model> model = build_model({a, w, pl, {}, *weights, rt});
  ASSERT_TRUE(model->splits_step());
  const Tensor prompt = model_stage_prompt(a, w, pl, 9);
  Tensor next = Tensor::empty(DType::kI64, {w.batch, 1});
  const bool decoder = decodes(a);
  for (int64_t i = 0; decoder && i < w.batch; ++i) next.data_as<int64_t>()[i] = (7 * i + 3) % a.vocab_size;
  // The step under test, after its prefill (decoders), run eagerly or replayed.
  auto before = [&] {
    model->reset();
    if (decoder) model->step(prompt, w.seq_len, 0);
  };
  auto prepare = [&] { decoder ? model->prepare(next, 1, w.seq_len) : model->prepare(prompt, w.seq_len, 0); };
  before();
  const Tensor eager = decoder ? model->step(next, 1, w.seq_len) : model->step(prompt, w.seq_len, 0);
  before();
  prepare();
  rt.set_timed(false);
  const std::unique_ptr<kernels::Graph> graph = cuda->capture([&] { model->forward(); });
  rt.set_timed(true);
  ASSERT_NE(graph, nullptr);
  graph->replay();
  const Tensor first = model->result();
  EXPECT_TRUE(same_bytes(first, eager)) << "rel L2 " << rel_l2(first, eager);
  before();
  prepare();
  graph->replay();
  const Tensor again = model->result();
  EXPECT_TRUE(same_bytes(again, eager)) << "rel L2 " << rel_l2(again, eager);
}

// The model stage replays decode steps as graphs after iteration 0 (baseline run only:
// the fp32 reference runs once), with the step's device time; graphs: false keeps them
// eager. Iteration 0 (the traced one) and every prefill stay eager.
TEST_P(CudaModelStage, LaterIterationsReplayDecodeGraphs) {
  if (const std::string why = kernels::backend_unavailable(DeviceKind::kCuda, 0); !why.empty())
    FAIL() << "this gpu test needs a CUDA device: " << why;
  const auto cuda = kernels::backend_create(DeviceKind::kCuda, 0);
  ModelStageConfig c = tiny_stage(GetParam(), 2, 8, 0, 3);
  c.workload.decode_steps = decodes(c.arch) ? 3 : 0;
  c.iterations = 3;
  c.backend = cuda.get();
  const ModelStageOutput out = model_stage_run(c);
  int64_t replayed = 0;
  for (const auto& s : out.steps) {
    const bool decode = s.step.rfind("decode", 0) == 0;
    EXPECT_EQ(s.graph, s.run == "baseline" && s.iteration >= 1 && decode) << s.run << " " << s.iteration << " " << s.step;
    if (!s.graph) continue;
    ++replayed;
    EXPECT_GT(s.compute_s, 0) << s.step;
    EXPECT_GE(s.total_s, s.compute_s * 0.5) << s.step;
    EXPECT_EQ(s.comm_s, 0) << s.step;
  }
  EXPECT_EQ(replayed, decodes(c.arch) ? 2 * 3 : 0);
  for (const auto& op : out.ops)
    EXPECT_FALSE(op.iteration >= 1 && op.step.rfind("decode", 0) == 0) << "a replayed step has op timings: " << op.role;
  c.graphs = false;
  for (const auto& s : model_stage_run(c).steps) EXPECT_FALSE(s.graph) << s.step;
}

// With the reference streamed on the device (each layer's fp32 weights drawn there when
// the run reaches it), the fp32 logits and the precision trace are the resident run's
// bit for bit, and the fp32 run's peak memory is lower. Families that cannot stream
// (Mamba) keep their weights resident under auto and say why they refuse streamed.
TEST_P(CudaModelStage, StreamedReferenceIsTheResidentRunsBits) {
  if (const std::string why = kernels::backend_unavailable(DeviceKind::kCuda, 0); !why.empty())
    FAIL() << "this gpu test needs a CUDA device: " << why;
  const auto cuda = kernels::backend_create(DeviceKind::kCuda, 0);
  ModelStageConfig c = tiny_stage(GetParam(), 2, 8, 0, 9);
  c.workload.decode_steps = decodes(c.arch) ? 2 : 0;
  c.record_instances = false;
  c.backend = cuda.get();
  if (model_family_of(c.arch).streamed_weights == nullptr) {
    c.reference = spec::ReferenceWeights::kStreamed;
    EXPECT_THROW(model_stage_run(c), Error);
    return;
  }
  c.reference = spec::ReferenceWeights::kResident;
  const ModelStageOutput resident = model_stage_run(c);
  c.reference = spec::ReferenceWeights::kStreamed;
  const ModelStageOutput streamed = model_stage_run(c);
  EXPECT_EQ(streamed.reference, spec::ReferenceWeights::kStreamed);
  if (resident.fp32_logits.defined()) {
    EXPECT_TRUE(same_bytes(streamed.fp32_logits, resident.fp32_logits));
  }
  ASSERT_EQ(streamed.layers.size(), resident.layers.size());
  for (size_t i = 0; i < resident.layers.size(); ++i) {
    EXPECT_EQ(streamed.layers[i].err_vs_fp32, resident.layers[i].err_vs_fp32)
        << resident.layers[i].run << " " << resident.layers[i].step << " layer " << resident.layers[i].layer;
    EXPECT_EQ(streamed.layers[i].ref_fp32, resident.layers[i].ref_fp32) << resident.layers[i].layer;
  }
  const auto fp32_peak = [](const ModelStageOutput& o) {
    for (const auto& m : o.memory)
      if (m.run == "fp32") return m.peak_in_use_bytes;
    return int64_t{-1};
  };
  EXPECT_GT(fp32_peak(streamed), 0);
  EXPECT_LT(fp32_peak(streamed), fp32_peak(resident));
}

INSTANTIATE_TEST_SUITE_P(Shipped, CudaModelStage, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const auto& f : std::filesystem::directory_iterator(std::string(FK_SOURCE_DIR) +
                                                                                    "/specs/architectures"))
                             names.push_back(f.path().stem().string());
                           std::sort(names.begin(), names.end());
                           return names;
                         }()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace fk::runner
