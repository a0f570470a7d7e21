// The Mamba family on one rank (CPU backend): weight shards are slices of the full
// model with A, D and dt_proj's bias kept in fp32; loading in place equals the host
// master rounded; the recurrent state carries a sequence from one step to the next
// exactly (a prefill then decode steps gives a longer prefill's logits); reset()
// starts over and steps out of order are refused.
#include "core/spec/families/mamba.h"
#include "kernels/backends.h"
#include "model_fixtures.h"
#include "runner/model/family.h"
#include "runner/model/mamba/weights.h"
#include "runner/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace fk::runner {
namespace {

using test_support::tiny;

float at(const Tensor& t, int64_t r, int64_t c) { return t.data_as<float>()[r * t.size(1) + c]; }

TEST(MambaWeights, ShardsAreSlicesOfTheFullModel) {
  const spec::Architecture a = tiny("mamba-2.8b");
  const RandomWeights src(5);
  const MambaWeights full = MambaWeights::build(a, Placement{}, src);
  const spec::SsmSpec& ssm = a.sections.get<spec::SsmSpec>();
  const int64_t i = a.intermediate_size, n = ssm.state_size, r = ssm.time_step_rank;
  ASSERT_EQ(full.layers.size(), static_cast<size_t>(a.num_hidden_layers));
  const SelectiveMixerWeights& f = full.layers[1].selective;
  EXPECT_EQ(f.in_proj_w.shape(), (Shape{2 * i, a.hidden_size}));
  EXPECT_EQ(f.x_proj_w.shape(), (Shape{r + 2 * n, i}));
  for (float v : f.a.span<float>()) {  // A = -exp(A_log), A_log in [0, ln N)
    ASSERT_LE(v, -1.0f);
    ASSERT_GE(v, -static_cast<float>(n));
  }
  for (int64_t tp : {2, 4}) {
    for (int64_t rank = 0; rank < tp; ++rank) {
      Placement p;
      p.tp = tp;
      p.tp_rank = rank;
      const MambaWeights part = MambaWeights::build(a, p, src);
      const SelectiveMixerWeights& s = part.layers[1].selective;
      const int64_t il = i / tp, i0 = rank * il;
      for (int64_t c = 0; c < il; ++c) {
        ASSERT_EQ(at(s.in_proj_w, c, 3), at(f.in_proj_w, i0 + c, 3));            // x rows
        ASSERT_EQ(at(s.in_proj_w, il + c, 3), at(f.in_proj_w, i + i0 + c, 3));   // gate rows
        ASSERT_EQ(at(s.conv_w, c, 2), at(f.conv_w, i0 + c, 2));
        ASSERT_EQ(s.conv_b.span<float>()[c], f.conv_b.span<float>()[i0 + c]);
        ASSERT_EQ(at(s.x_proj_w, r + 1, c), at(f.x_proj_w, r + 1, i0 + c));       // x_proj columns
        ASSERT_EQ(at(s.dt_proj_w, c, r - 1), at(f.dt_proj_w, i0 + c, r - 1));
        ASSERT_EQ(s.dt_bias.span<float>()[c], f.dt_bias.span<float>()[i0 + c]);
        ASSERT_EQ(at(s.a, c, n - 1), at(f.a, i0 + c, n - 1));
        ASSERT_EQ(s.d.span<float>()[c], f.d.span<float>()[i0 + c]);
        ASSERT_EQ(at(s.out_proj_w, 7, c), at(f.out_proj_w, 7, i0 + c));           // out_proj columns
      }
      EXPECT_EQ(part.layers[1].norm_w.span<float>()[9], full.layers[1].norm_w.span<float>()[9]);  // replicated
    }
  }
}

// Mamba-2: a rank holds its heads (their gate and x channels, dt, A, D) and its groups'
// B and C, in the order the mixer splits them; the gated norm's weight whole.
TEST(Mamba2Weights, ShardsAreTheRanksHeadsAndGroups) {
  const spec::Architecture a = tiny("mamba-codestral-7b");
  const RandomWeights src(5);
  const spec::SsmSpec& ssm = a.sections.get<spec::SsmSpec>();
  const int64_t i = a.intermediate_size, gn = ssm.n_groups * ssm.state_size, cd = ssm.conv_dim(i);
  const SsdMixerWeights f = MambaWeights::build(a, Placement{}, src).layers[1].ssd;
  ASSERT_EQ(f.in_proj_w.shape(), (Shape{i + cd + ssm.num_heads, a.hidden_size}));
  for (int64_t tp : {2}) {
    for (int64_t rank = 0; rank < tp; ++rank) {
      Placement p;
      p.tp = tp;
      p.tp_rank = rank;
      const SsdMixerWeights s = MambaWeights::build(a, p, src).layers[1].ssd;
      const int64_t il = i / tp, i0 = rank * il, gl = gn / tp, g0 = rank * gl, hl = ssm.num_heads / tp;
      const int64_t h0 = rank * hl, cdl = ssm.conv_dim(i, tp);
      ASSERT_EQ(cdl, il + 2 * gl);
      ASSERT_EQ(s.in_proj_w.shape(), (Shape{il + cdl + hl, a.hidden_size}));
      ASSERT_EQ(s.conv_w.shape(), (Shape{cdl, ssm.conv_kernel}));
      // Local row -> global row of in_proj: z, x, B, C, dt.
      const auto global_in = [&](int64_t r) {
        if (r < il) return i0 + r;
        r -= il;
        if (r < il) return i + i0 + r;
        r -= il;
        if (r < gl) return 2 * i + g0 + r;
        r -= gl;
        if (r < gl) return 2 * i + gn + g0 + r;
        return i + cd + h0 + (r - gl);
      };
      for (int64_t r = 0; r < il + cdl + hl; ++r)
        ASSERT_EQ(at(s.in_proj_w, r, 5), at(f.in_proj_w, global_in(r), 5)) << "tp " << tp << " row " << r;
      for (int64_t r = 0; r < cdl; ++r)  // the conv's rows: in_proj's x B C rows less the z block
        ASSERT_EQ(at(s.conv_w, r, 1), at(f.conv_w, global_in(il + r) - i, 1)) << "conv row " << r;
      for (int64_t h = 0; h < hl; ++h) {
        ASSERT_EQ(s.a.span<float>()[h], f.a.span<float>()[h0 + h]);
        ASSERT_EQ(s.dt_bias.span<float>()[h], f.dt_bias.span<float>()[h0 + h]);
      }
      ASSERT_EQ(s.gate_norm_w.numel(), i) << "the gated norm's weight is whole";
      EXPECT_EQ(at(s.out_proj_w, 3, 2), at(f.out_proj_w, 3, i0 + 2));
    }
  }
}

TEST(MambaWeights, LoadedInPlaceEqualsTheHostMasterRoundedAndKeepsItsFp32Parameters) {
  const auto cpu = kernels::backend_create(DeviceKind::kCpu, 0);
  const RandomWeights src(21);
  const spec::Architecture a = tiny("mamba-2.8b");
  for (const Placement& pl : test_support::weight_test_placements()) {
    for (DType dt : {DType::kF32, DType::kBF16}) {
      const MambaWeights want = MambaWeights::build(a, pl, src).to_dtype(dt);
      const MambaWeights got = MambaWeights::load(a, pl, src, dt, *cpu);
      const auto g = got.named_tensors(), w = want.named_tensors();
      ASSERT_EQ(g.size(), w.size());
      for (size_t k = 0; k < g.size(); ++k) {
        SCOPED_TRACE(fmt::format("tp rank {} {} {}", pl.tp_rank, dtype_name(dt), g[k].first));
        ASSERT_EQ(g[k].first, w[k].first);
        ASSERT_EQ(g[k].second.shape(), w[k].second.shape());
        ASSERT_EQ(g[k].second.dtype(), w[k].second.dtype());
        EXPECT_EQ(std::memcmp(g[k].second.data(), w[k].second.data(), g[k].second.nbytes()), 0);
        const bool fp32 = g[k].first.ends_with(".a") || g[k].first.ends_with(".d") || g[k].first.ends_with(".dt_bias");
        EXPECT_EQ(g[k].second.dtype(), fp32 ? DType::kF32 : dt);
      }
      if (pl.first_stage() && pl.last_stage()) {
        EXPECT_EQ(got.lm_head.data(), got.embed.data()) << "tied: one tensor";
      }
    }
  }
}

// One rank's Mamba model with random weights over `batch` sequences.
struct Fixture : test_support::OneRankModel {
  Fixture(int64_t batch, int64_t positions) : OneRankModel("mamba-2.8b", batch, positions) {}
};
using test_support::rel_l2;
using test_support::tokens;

TEST(MambaModel, PrefillThenDecodeStepsEqualOneLongerPrefill) {
  const int64_t batch = 3, prompt = 7, steps = 3;
  Fixture whole(batch, prompt + steps);
  const Tensor all = tokens(batch, prompt + steps, 0);
  const Tensor want = whole.model->step(all, prompt + steps, 0);  // the last position's logits
  ASSERT_EQ(want.shape(), (Shape{batch, whole.arch.vocab_size}));
  Fixture split(batch, prompt + steps);
  Tensor got = split.model->step(tokens(batch, prompt, 0), prompt, 0);
  for (int64_t j = 0; j < steps; ++j) got = split.model->step(tokens(batch, 1, prompt + j), 1, prompt + j);
  EXPECT_LT(rel_l2(got, want), 1e-6) << "the conv window and scan state carry each sequence";
  // A state that is not carried (a fresh model decoding the last token alone) differs.
  Fixture fresh(batch, prompt + steps);
  EXPECT_GT(rel_l2(fresh.model->step(tokens(batch, 1, prompt + steps - 1), 1, 0), want), 1e-2);
}

TEST(MambaModel, ResetStartsOverAndStepsComeInOrder) {
  Fixture f(2, 8);
  const Tensor first = f.model->step(tokens(2, 5, 0), 5, 0);
  (void)f.model->step(tokens(2, 1, 5), 1, 5);
  f.model->reset();
  const Tensor again = f.model->step(tokens(2, 5, 0), 5, 0);
  EXPECT_EQ(std::memcmp(first.data(), again.data(), first.nbytes()), 0);
  try {
    (void)f.model->step(tokens(2, 1, 9), 1, 9);  // skips positions 5..8
    FAIL() << "a step out of order ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in order: a step at position 9 after 5"), std::string::npos) << e.what();
  }
}

TEST(MambaModel, AllLogitsGivesEveryPositionAndTheLastMatchesTheDefault) {
  Fixture a(2, 6), b(2, 6);
  const Tensor last = a.model->step(tokens(2, 6, 0), 6, 0);
  b.model->set_all_logits(true);
  const Tensor every = b.model->step(tokens(2, 6, 0), 6, 0);
  const int64_t v = a.arch.vocab_size;
  ASSERT_EQ(every.shape(), (Shape{12, v}));
  Tensor picked = Tensor::empty(DType::kF32, {2, v});  // rows 5 and 11 (the LM head's matmul may block rows apart)
  for (int64_t s = 0; s < 2; ++s)
    std::memcpy(picked.data_as<float>() + s * v, every.data_as<float>() + (s * 6 + 5) * v, static_cast<size_t>(v) * 4);
  EXPECT_LT(rel_l2(picked, last), 1e-6);
}

}  // namespace
}  // namespace fk::runner
