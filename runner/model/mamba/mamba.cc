#include "runner/model/mamba/mamba.h"

#include "core/error.h"
#include "runner/model/mamba/ssm_mixers.h"

#include <algorithm>
#include <cstring>

namespace fk::runner {
namespace {

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

}  // namespace

Mamba::Mamba(const spec::Architecture& arch, const spec::Workload& workload, const Placement& placement,
             ModelComms comms, const MambaWeights& weights, Runtime& runtime)
    : a_(arch),
      ssm_(arch.sections.get<spec::SsmSpec>()),
      w_(workload),
      pl_(placement),
      comms_(comms),
      weights_(weights),
      rt_(runtime),
      dtype_(weights.dtype) {
  reset();
}

void Mamba::reset() {
  position_ = 0;
  if (!conv_state_.empty()) {
    for (Tensor& t : conv_state_) rt_.zero(t);
    for (Tensor& t : ssm_state_) rt_.zero(t);
    return;
  }
  const int64_t b = pl_.batch_size(w_), il = a_.intermediate_size / pl_.tp;
  // Mamba-2's conv window spans x, B and C; its scan state, [b, heads, head_dim, N], has
  // as many elements as [b, I, N].
  const int64_t conv_channels = ssm_.mamba2() ? ssm_.conv_dim(a_.intermediate_size, pl_.tp) : il;
  for (size_t i = 0; i < weights_.layers.size(); ++i) {
    conv_state_.push_back(rt_.zeros(dtype_, {b, ssm_.conv_kernel - 1, conv_channels}));
    ssm_state_.push_back(rt_.zeros(DType::kF32, {b, il, ssm_.state_size}));
  }
}

Tensor Mamba::traced(const Tensor& t, int64_t q_len) const {
  if (!trace_last_ || !t.defined()) return t;
  return lm::last_rows(rt_, t, q_len);
}

Tensor Mamba::mixer(const MambaLayerWeights& w, int64_t local, const Tensor& x, int64_t seq_begin, int64_t seqs,
                    int64_t q_len) {
  const SelectiveMixerShape shape{a_.intermediate_size / pl_.tp, ssm_.state_size, ssm_.time_step_rank, 0.0};
  const auto l = static_cast<size_t>(local);
  return selective_mixer(rt_, comms_, pl_.tp_rank, dtype_, shape, w.selective, x,
                         conv_state_[l].slice(0, seq_begin, seqs), ssm_state_[l].slice(0, seq_begin, seqs), seqs,
                         q_len);
}

Tensor Mamba::mixer2(const MambaLayerWeights& w, int64_t local, const Tensor& x, int64_t seq_begin, int64_t seqs,
                     int64_t q_len) {
  const SsdMixerShape shape{
      pl_.tp,        pl_.tp_rank,     a_.intermediate_size, ssm_.num_heads,           ssm_.n_groups,
      ssm_.head_dim, ssm_.state_size, a_.norm.eps,          ssm_.time_step_limit_min, ssm_.time_step_limit_max};
  const auto l = static_cast<size_t>(local);
  return ssd_mixer(rt_, comms_, dtype_, shape, w.ssd, x, conv_state_[l].slice(0, seq_begin, seqs),
                   ssm_state_[l].slice(0, seq_begin, seqs), seqs, q_len);
}

Tensor Mamba::step(const Tensor& tokens, int64_t q_len, int64_t q_start) {
  prepare(tokens, q_len, q_start);
  forward();
  return result();
}

void Mamba::prepare(const Tensor& tokens, int64_t q_len, int64_t q_start) {
  if (q_start != position_)
    fail(ErrorKind::kInternal, "a Mamba model continues its sequences in order: a step at position {} after {}",
         q_start, position_);
  mbs_ = &staged_[q_len];
  lm::stage_micro_batches(rt_, pl_, *mbs_, tokens, pl_.batch_size(w_), q_len, a_.vocab_size, all_logits_, dtype_);
  q_len_ = q_len;
  position_ += q_len;
}

void Mamba::forward() {
  if (mbs_ == nullptr) fail(ErrorKind::kInternal, "Mamba::forward before prepare");
  const int64_t q_len = q_len_, h = a_.hidden_size;
  const double eps = a_.norm.eps;
  for (size_t i = 0; i < mbs_->size(); ++i) {
    const MicroBatch& mb = (*mbs_)[i];
    const auto m = static_cast<int64_t>(i);
    const int64_t rows = mb.seqs * q_len;
    lm::StageStream s;
    if (pl_.first_stage()) {
      s.h = lm::embed_tokens(rt_, comms_, a_, pl_, mb.ids, weights_.embed, dtype_);
      if (hook_) hook_(-1, mb.seq_begin, rt_.host_f32(traced(s.h, q_len)));
    } else {
      s = lm::recv_stream(rt_, comms_, pl_, m, rows, h, dtype_, true);
    }
    for (size_t l = 0; l < weights_.layers.size(); ++l) {
      const MambaLayerWeights& w = weights_.layers[l];
      rt_.set_layer(w.index);
      if (!s.residual.defined()) {
        s.residual = s.h;
        s.h = rt_.empty(dtype_, {rows, h});
        rt_.run("rms_norm", "mixer.norm", call({s.h, s.residual, w.norm_w}, {eps}));
      } else {
        rt_.run("fused_add_rms_norm", "mixer.norm", call({s.h, s.residual, w.norm_w}, {eps}));
      }
      s.h = ssm_.mamba2() ? mixer2(w, static_cast<int64_t>(l), s.h, mb.seq_begin, mb.seqs, q_len)
                          : mixer(w, static_cast<int64_t>(l), s.h, mb.seq_begin, mb.seqs, q_len);
      if (hook_) hook_(w.index, mb.seq_begin, lm::host_sum_f32(rt_, traced(s.h, q_len), traced(s.residual, q_len)));
      rt_.set_layer(-1);
    }
    if (pl_.last_stage()) {
      rt_.run("fused_add_rms_norm", "final.norm", call({s.h, s.residual, weights_.final_norm_w}, {eps}));
      if (hook_) hook_(a_.num_hidden_layers, mb.seq_begin, rt_.host_f32(traced(s.h, q_len)));
      lm::logits(rt_, comms_, a_, pl_, all_logits_ ? s.h : lm::last_rows(rt_, s.h, q_len), weights_.lm_head, Tensor(), mb.out);
    } else {
      lm::send_stream(rt_, comms_, pl_, s, m, true);
    }
  }
}

Tensor Mamba::result() {
  if (mbs_ == nullptr) fail(ErrorKind::kInternal, "Mamba::result before prepare");
  return lm::gather_outputs(rt_, pl_, *mbs_, pl_.batch_size(w_), q_len_, all_logits_);
}

}  // namespace fk::runner
