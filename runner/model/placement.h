// Where one rank sits in its job's layout, as the model needs it: its TP slice, its
// pipeline stage (a contiguous layer range) and its DP replica (a contiguous range
// of the batch). A plain value derived from the layout grid.
#pragma once

#include "collectives/grid.h"
#include "core/spec/architecture.h"
#include "core/spec/memory.h"
#include "core/spec/workload.h"

#include <cstdint>

namespace fk::runner {

struct Placement {
  int64_t tp = 1, tp_rank = 0;
  int64_t pp = 1, pp_rank = 0;
  int64_t dp = 1, dp_rank = 0;

  bool first_stage() const { return pp_rank == 0; }
  bool last_stage() const { return pp_rank == pp - 1; }
  int64_t first_layer(const spec::Architecture& a) const {
    return spec::stage_first_layer(a.num_hidden_layers, pp, pp_rank);
  }
  int64_t layer_count(const spec::Architecture& a) const {
    return spec::stage_layer_count(a.num_hidden_layers, pp, pp_rank);
  }
  // Sequences of this DP replica: [batch_begin, batch_begin + batch_size).
  int64_t batch_size(const spec::Workload& w) const { return w.batch / dp; }
  int64_t batch_begin(const spec::Workload& w) const { return dp_rank * batch_size(w); }
  // Vocabulary rows of this TP rank: [vocab_begin, vocab_begin + vocab_rows) of
  // ceil(V / tp)-row blocks; the last block may be shorter (padded with zero rows).
  int64_t vocab_block(const spec::Architecture& a) const { return (a.vocab_size + tp - 1) / tp; }
  int64_t vocab_begin(const spec::Architecture& a) const { return tp_rank * vocab_block(a); }
  int64_t vocab_rows(const spec::Architecture& a) const;
  // Heads on this rank; kv heads fewer than tp are replicated (one per rank).
  int64_t q_heads(const spec::Architecture& a) const { return a.num_attention_heads / tp; }
  int64_t kv_heads(const spec::Architecture& a) const { return spec::kv_heads_per_rank(a, tp); }
  // Index of this rank's first kv head in the global kv heads.
  int64_t kv_head_begin(const spec::Architecture& a) const;
};

// The placement of a grid's rank.
inline Placement placement_of(const collectives::Grid& g) {
  Placement p;
  p.tp = g.tp();
  p.tp_rank = g.tp_rank();
  p.pp = g.pp();
  p.pp_rank = g.pp_rank();
  p.dp = g.dp();
  p.dp_rank = g.dp_rank();
  return p;
}

inline int64_t Placement::vocab_rows(const spec::Architecture& a) const {
  const int64_t begin = vocab_begin(a);
  return begin >= a.vocab_size ? 0 : std::min(vocab_block(a), a.vocab_size - begin);
}

inline int64_t Placement::kv_head_begin(const spec::Architecture& a) const {
  if (a.num_key_value_heads >= tp) return tp_rank * kv_heads(a);
  return tp_rank / (tp / a.num_key_value_heads);  // replicated: ranks share a kv head
}

}  // namespace fk::runner
