// Multi-head latent attention, the transformer's mixer for architectures with an `mla:`
// section (DeepSeek-V3; core/spec/families/mla.h), in the absorbed form of vLLM's MLA
// backends, for prefill and decode alike:
//   q      = q_b_proj(rms_norm(q_a_proj(x)))  (q_proj(x) without q compression)
//            split per head into q_nope [nope] and q_pe [rope]
//   kv_a   = kv_a_proj_with_mqa(x) = [c | k_pe]; c = rms_norm(c)
//   rotary_embedding(q_pe, k_pe); mla_cache_write(c, k_pe) into the latent cache
//   q_lat  = head_linear(q_nope, W_UK)   (the keys' up-projection absorbed into q)
//   o_lat  = mla_attention(q_lat, q_pe, cache)
//   o      = head_linear(o_lat, W_UV)    (the values' up-projection)
//   out    = o_proj(o), all-reduced over TP
// TP splits the heads (q_b_proj, kv_b_proj's heads, o_proj's columns); every rank
// computes the shared compressed KV and holds the whole latent cache. HF's q_a_layernorm
// and kv_a_layernorm use their class default eps, 1e-6, not rms_norm_eps.
#include "core/spec/families/mla.h"
#include "runner/model/transformer/transformer.h"

namespace fk::runner {
namespace {

constexpr double kMlaNormEps = 1e-6;

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

}  // namespace

Tensor Transformer::mla_attention(const LayerWeights& w, int64_t local, const Tensor& x, int64_t seq_begin,
                                  int64_t seqs, int64_t q_len, int64_t q_start) {
  const spec::MlaSpec& m = *mla_;
  const int64_t rows = x.size(0), hl = pl_.q_heads(a_), rope = a_.head_dim, nope = m.qk_nope_head_dim;
  const int64_t dc = m.kv_lora_rank, qk = nope + rope;
  Tensor q;
  if (w.q_a_w.defined()) {
    Tensor qa = linear(x, w.q_a_w, Tensor(), "attn.q_a_proj");
    Tensor qn = rt_.empty(dtype_, qa.shape());
    rt_.run("rms_norm", "attn.q_a_norm", call({qn, qa, w.q_a_norm}, {kMlaNormEps}));
    q = linear(qn, w.q_b_w, Tensor(), "attn.q_b_proj");
  } else {
    q = linear(x, w.q_b_w, Tensor(), "attn.q_proj");
  }
  // Each head's channels apart: q_nope [rows, hl, nope] and q_pe [rows, hl, rope].
  const Tensor q_heads = q.reshape({rows * hl, qk});
  Tensor q_nope = rt_.empty(dtype_, {rows * hl, nope});
  Tensor q_pe = rt_.empty(dtype_, {rows * hl, rope});
  rt_.copy_rows(q_nope, q_heads.slice(1, 0, nope));
  rt_.copy_rows(q_pe, q_heads.slice(1, nope, rope));

  const Tensor kv = linear(x, w.kv_a_w, Tensor(), "attn.kv_a_proj");
  Tensor c = rt_.empty(dtype_, {rows, dc});
  Tensor k_pe = rt_.empty(dtype_, {rows, rope});
  rt_.copy_rows(c, kv.slice(1, 0, dc));
  rt_.copy_rows(k_pe, kv.slice(1, dc, rope));
  Tensor cn = rt_.empty(dtype_, c.shape());
  rt_.run("rms_norm", "attn.kv_a_norm", call({cn, c, w.kv_a_norm}, {kMlaNormEps}));

  rt_.run("rotary_embedding", "attn.rotary",
          call({positions_, q_pe.reshape({rows, hl * rope}), k_pe, rope_.at(spec::LayerType::kFull)},
               {static_cast<double>(rope), a_.position.rope_style == spec::RopeStyle::kNeox ? 1.0 : 0.0}));
  const Tensor cache = k_cache_[static_cast<size_t>(local)].slice(0, seq_begin, seqs);
  rt_.run("mla_cache_write", "attn.mla_cache_write",
          call({cn, k_pe, cache}, {static_cast<double>(q_len), static_cast<double>(q_start)}));

  Tensor q_lat = rt_.empty(dtype_, {rows, hl, dc});
  rt_.run("head_linear", "attn.q_absorb", call({q_lat, q_nope.reshape({rows, hl, nope}), w.w_uk}, {1.0}));
  Tensor o_lat = rt_.empty(dtype_, {rows, hl, dc});
  rt_.run("mla_attention", "attn.mla_attention",
          call({o_lat, q_lat, q_pe.reshape({rows, hl, rope}), cache},
               {spec::mla_softmax_scale(a_, m), static_cast<double>(q_len), static_cast<double>(q_start)}));
  Tensor o = rt_.empty(dtype_, {rows, hl, m.v_head_dim});
  rt_.run("head_linear", "attn.v_up", call({o, o_lat, w.w_uv}, {0.0}));
  Tensor out = linear(o.reshape({rows, hl * m.v_head_dim}), w.o_w, Tensor(), "attn.o_proj");
  rt_.all_reduce(comms_.tp, out, "tp.attn_out");
  return out;
}

}  // namespace fk::runner
