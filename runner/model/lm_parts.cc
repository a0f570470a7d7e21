#include "runner/model/lm_parts.h"

#include <algorithm>
#include <cstring>

namespace fk::runner::lm {

Tensor embed_tokens(Runtime& rt, const ModelComms& comms, const spec::Architecture& a, const Placement& pl,
                    const Tensor& ids, const Tensor& table, DType dtype) {
  Tensor x = rt.empty(dtype, {ids.numel(), a.hidden_size});
  rt.run("embedding", "embed",
         kernels::OpCall{{x, ids, table},
                         {static_cast<double>(pl.vocab_begin(a)), static_cast<double>(a.vocab_size)}});
  rt.all_reduce(comms.tp, x, "tp.embed");
  return x;
}

SeqRange micro_batch(int64_t batch, int64_t count, int64_t i) {
  const int64_t base = batch / count, extra = batch % count;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

void stage_micro_batches(Runtime& rt, const Placement& pl, std::vector<MicroBatch>& mbs, const Tensor& tokens,
                         int64_t batch, int64_t q_len, int64_t out_width, bool per_row, DType dtype) {
  const int64_t m = std::min<int64_t>(pl.pp, batch);
  mbs.resize(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    MicroBatch& mb = mbs[static_cast<size_t>(i)];
    const SeqRange range = micro_batch(batch, m, i);
    mb.seq_begin = range.begin;
    mb.seqs = range.count;
    if (pl.first_stage()) {
      const Tensor mine = tokens.slice(0, mb.seq_begin, mb.seqs).contiguous_copy();
      if (dtype_is_float(tokens.dtype()))  // images, staged as they are in the activation dtype
        rt.stage(mb.ids, mine.to_dtype(dtype));
      else
        rt.stage(mb.ids, mine.reshape({mb.seqs * q_len}));
    }
    if (pl.last_stage()) {
      const Shape out{per_row ? mb.seqs * q_len : mb.seqs, out_width};
      if (!mb.out.defined() || mb.out.shape() != out) mb.out = rt.empty(dtype, out);
    }
  }
}

Tensor gather_outputs(Runtime& rt, const Placement& pl, const std::vector<MicroBatch>& mbs, int64_t batch,
                      int64_t q_len, bool per_row) {
  Tensor result;
  if (pl.last_stage() && !mbs.empty()) {
    const int64_t width = mbs.front().out.size(1);
    result = Tensor::empty(DType::kF32, {per_row ? batch * q_len : batch, width});
    for (const MicroBatch& mb : mbs) {
      const Tensor host = rt.host_f32(mb.out);
      const int64_t row0 = per_row ? mb.seq_begin * q_len : mb.seq_begin;
      std::memcpy(result.data_as<float>() + row0 * width, host.data(), host.nbytes());
    }
  }
  rt.flush();
  return result;
}

Tensor last_rows(Runtime& rt, const Tensor& x, int64_t q_len) {
  if (q_len == 1) return x;
  const int64_t seqs = x.size(0) / q_len, w = x.size(1);
  Tensor last = rt.empty(x.dtype(), {seqs, w});
  rt.copy_rows(last, x.reshape({seqs, q_len * w}).slice(1, (q_len - 1) * w, w));
  return last;
}

void logits(Runtime& rt, const ModelComms& comms, const spec::Architecture& a, const Placement& pl, const Tensor& x,
            const Tensor& lm_head, const Tensor& bias, const Tensor& out) {
  const int64_t seqs = x.size(0), block = pl.vocab_block(a);
  Tensor local = rt.empty(x.dtype(), {seqs, lm_head.size(0)});
  rt.run("linear", "lm_head", kernels::OpCall{{local, x, lm_head, bias}, {}});
  Tensor gathered = rt.empty(x.dtype(), {pl.tp, seqs, block});
  rt.all_gather(comms.tp, local, gathered, "tp.logits");
  for (int64_t r = 0; r < pl.tp; ++r) {  // rank r's block holds vocab rows [r * block, ...), zero-padded
    const int64_t begin = r * block, n = std::min(block, a.vocab_size - begin);
    if (n <= 0) continue;
    rt.copy_rows(out.slice(1, begin, n), gathered.slice(0, r, 1).reshape({seqs, block}).slice(1, 0, n));
  }
}

void send_stream(Runtime& rt, const ModelComms& comms, const Placement& pl, const StageStream& s, int64_t mb,
                 bool with_residual) {
  const int next = static_cast<int>(pl.pp_rank + 1);
  rt.send(comms.pp, s.h, next, static_cast<int>(2 * mb), "pp.send");
  if (with_residual) rt.send(comms.pp, s.residual, next, static_cast<int>(2 * mb + 1), "pp.send");
}

StageStream recv_stream(Runtime& rt, const ModelComms& comms, const Placement& pl, int64_t mb, int64_t rows,
                        int64_t hidden, DType dtype, bool with_residual) {
  const int prev = static_cast<int>(pl.pp_rank - 1);
  StageStream s{rt.empty(dtype, {rows, hidden}), Tensor()};
  rt.recv(comms.pp, s.h, prev, static_cast<int>(2 * mb), "pp.recv");
  if (with_residual) {
    s.residual = rt.empty(dtype, {rows, hidden});
    rt.recv(comms.pp, s.residual, prev, static_cast<int>(2 * mb + 1), "pp.recv");
  }
  return s;
}

Tensor host_sum_f32(const Runtime& rt, const Tensor& a, const Tensor& b) {
  Tensor x = rt.host_f32(a);
  if (!b.defined()) return x;
  const Tensor y = rt.host_f32(b);
  float* px = x.data_as<float>();
  const float* py = y.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) px[i] += py[i];
  return x;
}

}  // namespace fk::runner::lm
