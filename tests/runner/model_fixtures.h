// Shared by the model tests: the shipped architectures at their tiny preset, and a
// byte comparison of two sets of weights tensor by tensor (on any backend).
#pragma once

#include "core/spec/spec_file.h"
#include "kernels/backend.h"
#include "kernels/backends.h"
#include "runner/model/family.h"
#include "runner/model/transformer/weights.h"
#include "runner/model/weight_source.h"
#include "runner/model_stage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace fk::runner::test_support {

// specs/architectures/<name>.yaml at its "tiny" preset.
inline spec::Architecture tiny(const std::string& name) {
  spec::Diagnostics d;
  auto doc = spec::architecture_load_file(std::string(FK_SOURCE_DIR) + "/specs/architectures/" + name + ".yaml", d);
  EXPECT_TRUE(doc.has_value()) << d.to_string();
  return *doc->select("tiny");
}

// The model stage of `name`'s tiny preset over workload "w": `batch` sequences of
// `seq_len` prompt tokens, then `decode_steps` decode steps, weights from `seed`.
inline ModelStageConfig tiny_stage(const std::string& name, int64_t batch, int64_t seq_len, int64_t decode_steps,
                                   uint64_t seed) {
  ModelStageConfig c;
  c.arch = tiny(name);
  c.workload.name = "w";
  c.workload.batch = batch;
  c.workload.seq_len = seq_len;
  c.workload.decode_steps = decode_steps;
  c.seed = seed;
  return c;
}

// A whole model and a TP x PP shard (TP rank 1 of 2, the last of 2 stages): the
// layouts the weight tests compare.
inline std::vector<Placement> weight_test_placements() {
  Placement part;
  part.tp = 2;
  part.tp_rank = 1;
  part.pp = 2;
  part.pp_rank = 1;
  return {Placement{}, part};
}

// Every tensor of `got` (on `backend`) has the name, shape, dtype and bytes of `want`'s
// (any family's weights).
inline void expect_same_weights(const Weights& got, kernels::Backend& backend, const Weights& want,
                                const std::string& what) {
  const auto g = got.named_tensors(), w = want.named_tensors();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_EQ(g[i].first, w[i].first) << what;
    const Tensor host = backend.to_host(g[i].second);
    ASSERT_EQ(host.shape(), w[i].second.shape()) << what << " " << g[i].first;
    ASSERT_EQ(host.dtype(), w[i].second.dtype()) << what << " " << g[i].first;
    const Tensor ref = w[i].second.contiguous_copy();
    EXPECT_EQ(std::memcmp(host.data(), ref.data(), host.nbytes()), 0) << what << ": " << g[i].first << " differs";
  }
}

// One rank's model of `name`'s tiny preset (any family) with random weights (seed 9) on
// the CPU backend, over `batch` sequences of up to `positions` positions.
struct OneRankModel {
  spec::Architecture arch;
  spec::Workload workload;
  Placement placement;
  std::unique_ptr<kernels::Backend> cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Weights> weights;
  std::unique_ptr<Model> model;

  OneRankModel(const std::string& name, int64_t batch, int64_t positions) : arch(tiny(name)) {
    workload.name = "w";
    workload.batch = batch;
    workload.seq_len = positions;
    rt = std::make_unique<Runtime>(ImplSet::baseline(DeviceKind::kCpu), *cpu);
    const ModelFamily& f = model_family_of(arch);
    weights = f.master_weights(arch, placement, RandomWeights(9));
    model = f.build({arch, workload, placement, {}, *weights, *rt});
  }
};

// Token ids [batch, len] of positions [from, from + len), the same at a position in any call.
inline Tensor tokens(int64_t batch, int64_t len, int64_t from) {
  Tensor t = Tensor::empty(DType::kI64, {batch, len});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < len; ++j) t.data_as<int64_t>()[b * len + j] = (37 * (b + 1) + 11 * (from + j)) % 500;
  return t;
}

// ||x - y|| / ||y|| of two fp32 tensors of one size.
inline double rel_l2(const Tensor& x, const Tensor& y) {
  double num = 0, den = 0;
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double d = static_cast<double>(x.data_as<float>()[k]) - y.data_as<float>()[k];
    num += d * d;
    den += static_cast<double>(y.data_as<float>()[k]) * y.data_as<float>()[k];
  }
  return std::sqrt(num / den);
}

}  // namespace fk::runner::test_support
