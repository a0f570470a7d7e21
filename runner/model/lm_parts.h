// Pieces every language-model family's forward pass shares (runner/model/family.h):
// the vocab-parallel embedding, each sequence's last rows, the vocab-parallel LM head,
// and the residual stream crossing pipeline stages. Each goes through the Runtime, so
// its ops are timed and swappable like the family's own.
//
// Tensor parallelism (Megatron): the embedding table and the LM head are split by
// vocabulary rows in ceil(V / tp)-row blocks (Placement::vocab_block); the lookup is
// all-reduced over the TP group ("tp.embed"), the logit blocks all-gathered
// ("tp.logits"). Pipeline parallelism: a stage sends (hidden, residual) to the next one
// with blocking point-to-point calls tagged by micro-batch, like vLLM's intermediate
// tensors.
#pragma once

#include "core/spec/architecture.h"
#include "runner/model/model_comms.h"
#include "runner/model/placement.h"
#include "runner/runtime.h"

#include <vector>

namespace fk::runner::lm {

// The embedding of `ids` ([rows] int64) from this rank's vocab block `table` of
// [vocab_block, H]: [rows, H] in `dtype`, all-reduced over TP ("embed").
Tensor embed_tokens(Runtime& rt, const ModelComms& comms, const spec::Architecture& a, const Placement& pl,
                    const Tensor& ids, const Tensor& table, DType dtype);

// Micro-batch i of a step's `batch` sequences split into `count` (GPipe over the
// pipeline stages: count = min(pp, batch)): its first sequence and how many, the first
// batch % count micro-batches one sequence larger.
struct SeqRange {
  int64_t begin = 0, count = 0;
};
SeqRange micro_batch(int64_t batch, int64_t count, int64_t i);

// One micro-batch of a split step (Model::prepare / forward / result): sequences
// [seq_begin, seq_begin + seqs), its staged inputs on the device and, on the last stage,
// its output in the activation dtype. A model keeps one vector of them per q_len, so
// the buffers a captured graph reads stay the same from step to step.
struct MicroBatch {
  int64_t seq_begin = 0, seqs = 0;
  Tensor ids;        // [seqs * q_len] token ids, or [seqs, C, H, W] images (first stage)
  Tensor positions;  // families that stage positions (the transformer's rope / learned)
  Tensor out;        // [seqs * q_len or seqs, out_width] (last stage)
};
// Splits the rank's `tokens` ([batch, q_len] int64, read on the first stage; or float
// images [batch, C, H, W], a vision encoder's, staged per sequence in `dtype`) into
// min(pp, batch) micro-batches in `mbs`: stages each one's ids and, on the last stage,
// keeps an output buffer of [rows, out_width] in `dtype` (rows: seqs * q_len when
// `per_row`, else seqs), made anew only when its shape changes.
void stage_micro_batches(Runtime& rt, const Placement& pl, std::vector<MicroBatch>& mbs, const Tensor& tokens,
                         int64_t batch, int64_t q_len, int64_t out_width, bool per_row, DType dtype);
// The micro-batches' outputs as one fp32 host tensor [batch * q_len or batch, width] on
// the last stage (undefined elsewhere); waits for the rank's work either way.
Tensor gather_outputs(Runtime& rt, const Placement& pl, const std::vector<MicroBatch>& mbs, int64_t batch,
                      int64_t q_len, bool per_row);

// Each sequence's last of every q_len rows of x ([seqs * q_len, W]) as [seqs, W], on the
// device; x itself when q_len is 1.
Tensor last_rows(Runtime& rt, const Tensor& x, int64_t q_len);

// The logits of rows x ([seqs, H]) through this rank's vocab block `lm_head`
// ([vocab_block, H], "lm_head") plus its block of `bias` ([vocab_block]; undefined: none),
// gathered over TP into `out` ([seqs, vocab_size]).
void logits(Runtime& rt, const ModelComms& comms, const spec::Architecture& a, const Placement& pl, const Tensor& x,
            const Tensor& lm_head, const Tensor& bias, const Tensor& out);

// The residual stream of one micro-batch between stages: `h`, and `residual` when the
// family keeps one (vLLM's fused add + norm).
struct StageStream {
  Tensor h;
  Tensor residual;  // undefined until the fused residual path has started
};
// Sends s to the next stage (tags 2 mb and 2 mb + 1).
void send_stream(Runtime& rt, const ModelComms& comms, const Placement& pl, const StageStream& s, int64_t mb,
                 bool with_residual);
// Receives micro-batch mb's [rows, H] stream in `dtype` from the previous stage.
StageStream recv_stream(Runtime& rt, const ModelComms& comms, const Placement& pl, int64_t mb, int64_t rows,
                        int64_t hidden, DType dtype, bool with_residual);

// a + b in fp32 on the host (b may be undefined): the residual stream a layer hook sees.
Tensor host_sum_f32(const Runtime& rt, const Tensor& a, const Tensor& b);

}  // namespace fk::runner::lm
