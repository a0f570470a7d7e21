// Multi-head latent attention, the transformer's mixer (mixer.h) for architectures with
// an `mla:` section (DeepSeek-V3; core/spec/families/mla.h), in the absorbed form of vLLM's MLA
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
#include "runner/model/transformer/mixer.h"

namespace fk::runner {
namespace {

constexpr double kMlaNormEps = 1e-6;

kernels::OpCall call(std::vector<Tensor> args, std::vector<double> params = {}) {
  return kernels::OpCall{std::move(args), std::move(params)};
}

bool mla_serves(const spec::Architecture& a, int64_t) { return a.sections.find<spec::MlaSpec>() != nullptr; }

// The heads [h0, h0 + hl) of this rank (LayerWeights::mixer): q_a_w [Qr, H] and
// q_a_norm [Qr], then q_b_w [hl (nope + rope), Qr] (without q compression, q_b_w is
// q_proj's rows [.., H]); kv_a_w [Dc + rope, H] and kv_a_norm [Dc], replicated; this
// rank's heads of kv_b_proj split as w_uk [hl, nope, Dc] and w_uv [hl, v, Dc] (the
// checkpoint's rows, no transpose); o_w [H, hl v].
void mla_weights(const LayerGen& g, int64_t l, LayerWeights& w) {
  const spec::Architecture& a = g.a;
  const spec::MlaSpec& m = a.sections.get<spec::MlaSpec>();
  const int64_t h = a.hidden_size, rope = a.head_dim, heads = a.num_attention_heads;
  const int64_t hl = g.pl.q_heads(a), h0 = g.pl.tp_rank * hl;
  const int64_t qk = m.qk_nope_head_dim + rope, kvb = m.qk_nope_head_dim + m.v_head_dim;
  if (m.q_lora_rank > 0) {
    w.add_mixer("q_a_w",
                g.make(g.rows(g.layer_name(l, "self_attn.q_a_proj.weight"), m.q_lora_rank, 0, m.q_lora_rank, h)));
    w.add_mixer("q_a_norm", g.make(g.scale(g.layer_name(l, "self_attn.q_a_layernorm.weight"), m.q_lora_rank)));
    w.add_mixer("q_b_w", g.make(g.rows(g.layer_name(l, "self_attn.q_b_proj.weight"), heads * qk, h0 * qk, hl * qk,
                                       m.q_lora_rank)));
  } else {
    w.add_mixer("q_b_w", g.make(g.rows(g.layer_name(l, "self_attn.q_proj.weight"), heads * qk, h0 * qk, hl * qk, h)));
  }
  const int64_t row = spec::mla_cache_row(a, m);
  w.add_mixer("kv_a_w", g.make(g.rows(g.layer_name(l, "self_attn.kv_a_proj_with_mqa.weight"), row, 0, row, h)));
  w.add_mixer("kv_a_norm", g.make(g.scale(g.layer_name(l, "self_attn.kv_a_layernorm.weight"), m.kv_lora_rank)));
  // kv_b_proj [heads (nope + v), Dc]: each head's nope key rows, then its value rows.
  const std::string kv_b = g.layer_name(l, "self_attn.kv_b_proj.weight");
  std::vector<Planned> uk, uv;
  for (int64_t i = h0; i < h0 + hl; ++i) {
    uk.push_back(g.rows(kv_b, heads * kvb, i * kvb, m.qk_nope_head_dim, m.kv_lora_rank));
    uv.push_back(g.rows(kv_b, heads * kvb, i * kvb + m.qk_nope_head_dim, m.v_head_dim, m.kv_lora_rank));
  }
  w.add_mixer("w_uk", g.make(plan_concat(uk, {hl, m.qk_nope_head_dim, m.kv_lora_rank})));
  w.add_mixer("w_uv", g.make(plan_concat(uv, {hl, m.v_head_dim, m.kv_lora_rank})));
  w.add_mixer("o_w", g.make(g.cols(g.layer_name(l, "self_attn.o_proj.weight"), heads * m.v_head_dim, h0 * m.v_head_dim,
                                   hl * m.v_head_dim)));
}

class Mla final : public Mixer {
 public:
  Mla(const LayerContext& ctx, int64_t) : c_(ctx), m_(ctx.arch.sections.get<spec::MlaSpec>()) {
    // One latent row a token, shared by the heads.
    cache_ = c_.rt.zeros(c_.dtype, {c_.batch, c_.max_positions, spec::mla_cache_row(c_.arch, m_)});
  }

  void reset() override { c_.rt.zero(cache_); }

  Tensor forward(const LayerWeights& lw, const Tensor& x, const MixerStep& st) override {
    if (made_from_ != &lw) resolve(lw);
    const spec::Architecture& a = c_.arch;
    Runtime& rt = c_.rt;
    const DType dt = c_.dtype;
    const int64_t rows = x.size(0), hl = c_.placement.q_heads(a), rope = a.head_dim, nope = m_.qk_nope_head_dim;
    const int64_t dc = m_.kv_lora_rank, qk = nope + rope;
    Tensor q;
    if (w_.q_a_w.defined()) {
      const Tensor qa = c_.linear(x, w_.q_a_w, Tensor(), "attn.q_a_proj");
      const Tensor qn = c_.rms_norm(qa, w_.q_a_norm, kMlaNormEps, "attn.q_a_norm");
      q = c_.linear(qn, w_.q_b_w, Tensor(), "attn.q_b_proj");
    } else {
      q = c_.linear(x, w_.q_b_w, Tensor(), "attn.q_proj");
    }
    // Each head's channels apart: q_nope [rows, hl, nope] and q_pe [rows, hl, rope].
    const Tensor q_heads = q.reshape({rows * hl, qk});
    Tensor q_nope = rt.empty(dt, {rows * hl, nope});
    Tensor q_pe = rt.empty(dt, {rows * hl, rope});
    rt.copy_rows(q_nope, q_heads.slice(1, 0, nope));
    rt.copy_rows(q_pe, q_heads.slice(1, nope, rope));

    const Tensor kv = c_.linear(x, w_.kv_a_w, Tensor(), "attn.kv_a_proj");
    Tensor c = rt.empty(dt, {rows, dc});
    Tensor k_pe = rt.empty(dt, {rows, rope});
    rt.copy_rows(c, kv.slice(1, 0, dc));
    rt.copy_rows(k_pe, kv.slice(1, dc, rope));
    const Tensor cn = c_.rms_norm(c, w_.kv_a_norm, kMlaNormEps, "attn.kv_a_norm");

    rt.run("rotary_embedding", "attn.rotary",
           call({c_.positions, q_pe.reshape({rows, hl * rope}), k_pe, c_.rope.at(spec::LayerType::kFull)},
                {static_cast<double>(rope), a.position.rope_style == spec::RopeStyle::kNeox ? 1.0 : 0.0}));
    const Tensor cache = cache_.slice(0, st.seq_begin, st.seqs);
    rt.run("mla_cache_write", "attn.mla_cache_write",
           call({cn, k_pe, cache}, {static_cast<double>(st.q_len), static_cast<double>(st.q_start)}));

    Tensor q_lat = rt.empty(dt, {rows, hl, dc});
    rt.run("head_linear", "attn.q_absorb", call({q_lat, q_nope.reshape({rows, hl, nope}), w_.w_uk}, {1.0}));
    Tensor o_lat = rt.empty(dt, {rows, hl, dc});
    rt.run("mla_attention", "attn.mla_attention",
           call({o_lat, q_lat, q_pe.reshape({rows, hl, rope}), cache},
                {spec::mla_softmax_scale(a, m_), static_cast<double>(st.q_len), static_cast<double>(st.q_start)}));
    Tensor o = rt.empty(dt, {rows, hl, m_.v_head_dim});
    rt.run("head_linear", "attn.v_up", call({o, o_lat, w_.w_uv}, {0.0}));
    Tensor out = c_.linear(o.reshape({rows, hl * m_.v_head_dim}), w_.o_w, Tensor(), "attn.o_proj");
    rt.all_reduce(c_.comms.tp, out, "tp.attn_out");
    return out;
  }

 private:
  // The layer's tensors (mla_weights), looked up once (a layer's weights outlive its model).
  struct Named {
    Tensor q_a_w, q_a_norm, q_b_w, kv_a_w, kv_a_norm, w_uk, w_uv, o_w;
  };
  void resolve(const LayerWeights& lw) {
    w_ = {lw.mixer_tensor("q_a_w"),  lw.mixer_tensor("q_a_norm"),  lw.mixer_tensor("q_b_w"),
          lw.mixer_tensor("kv_a_w"), lw.mixer_tensor("kv_a_norm"), lw.mixer_tensor("w_uk"),
          lw.mixer_tensor("w_uv"),   lw.mixer_tensor("o_w")};
    made_from_ = &lw;
  }

  const LayerContext& c_;
  const spec::MlaSpec& m_;
  Tensor cache_;  // [batch, L, Dc + rope]: the normalised latent, then the rotated shared key
  Named w_;
  const LayerWeights* made_from_ = nullptr;
};

std::unique_ptr<Mixer> make_mla(const LayerContext& ctx, int64_t layer) { return std::make_unique<Mla>(ctx, layer); }

}  // namespace

void register_mla_mixer(MixerRegistry& r) {
  MixerKind k;
  k.name = "mla";
  k.serves = mla_serves;
  k.weights = mla_weights;
  k.make = make_mla;
  r.add(std::move(k));
}

}  // namespace fk::runner
