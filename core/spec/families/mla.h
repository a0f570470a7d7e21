// Multi-head latent attention (MLA: DeepSeek-V2/V3, Kimi K2), the transformer family's
// own `mla:` section (core/spec/family_section.h), with HF DeepseekV3Config's names.
// With it, a layer's attention is MLA's: the query from q_a_proj, an RMSNorm and q_b_proj
// (q_proj alone when q_lora_rank is 0), split per head into qk_nope_head_dim values and
// head_dim rotated ones; keys and values from one compressed vector per token
// (kv_a_proj_with_mqa: kv_lora_rank values, RMS-normalised, plus head_dim rotated values
// shared by every head) that kv_b_proj expands per head into qk_nope_head_dim key and
// v_head_dim value channels. head_dim is the rotary part (HF's qk_rope_head_dim; its
// config sets head_dim so). The runner caches the compressed vector and attends in the
// absorbed form (kernels/ops/mla.cc). Rules: mla.cc.
#pragma once

#include "core/spec/architecture.h"
#include "core/spec/limits.h"

#include <cstdint>

namespace fk::spec {

struct ParseContext;
struct SectionCodec;

struct MlaSpec {
  static constexpr const char* kKey = "mla";
  int64_t q_lora_rank = 0;       // 0: no query compression (q_proj; DeepSeek-V2-Lite)
  int64_t kv_lora_rank = 0;      // the compressed KV's width (required)
  int64_t qk_nope_head_dim = 0;  // a head's query/key channels without rotation (required)
  int64_t v_head_dim = 0;        // a head's value channels (required)
  bool operator==(const MlaSpec&) const = default;
};

namespace limits {
inline constexpr IntRange kMlaRank{1, kMaxDim};     // mla.kv_lora_rank, mla.q_lora_rank (0: none)
inline constexpr IntRange kMlaHeadDim{1, 1 << 16};  // mla.qk_nope_head_dim, mla.v_head_dim
}  // namespace limits

// The transformer family's `mla:` section codec (registered in transformer.cc).
const SectionCodec& mla_section();
// MLA's rules against the rest of the architecture (transformer_validate calls it).
void mla_validate(const Architecture& a, const ParseContext& ctx);
// HF DeepseekV3Attention's softmax scale: (qk_nope_head_dim + head_dim)^-1/2, times
// mscale^2 with yarn scaling's mscale_all_dim (mscale = 0.1 mscale_all_dim ln(factor) + 1
// for factor > 1); attention.scale when given.
double mla_softmax_scale(const Architecture& a, const MlaSpec& m);
// Values a cached token holds: kv_lora_rank + head_dim (every TP rank holds them all).
int64_t mla_cache_row(const Architecture& a, const MlaSpec& m);
// The attention parameters of one layer on one TP rank (its num_attention_heads / tp heads).
int64_t mla_attention_parameters(const Architecture& a, const MlaSpec& m, int64_t tp);

}  // namespace fk::spec
