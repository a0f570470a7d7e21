#include "core/spec/json_io.h"

#include "core/error.h"
#include "core/spec/family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

namespace fk::spec {
namespace {

Json opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
Json opt(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

template <typename E, typename NameFn>
E enum_from(const JsonIn& in, std::initializer_list<E> values, NameFn name) {
  const std::string s = in.str();
  for (E v : values)
    if (name(v) == s) return v;
  in.fail(fmt::format("unknown value '{}'", s));
}

std::optional<double> opt_f64(const JsonIn& in, const char* key) {
  if (!in.has(key) || in.at(key).is_null()) return std::nullopt;
  return in.at(key).f64();
}

std::optional<int64_t> opt_i64(const JsonIn& in, const char* key) {
  if (!in.has(key) || in.at(key).is_null()) return std::nullopt;
  return in.at(key).i64();
}

// Runs a validator of resolved values (a function of a ParseContext) and throws its
// first problem at the JSON path of the field: "norm.eps" under `path` is
// "<path>/norm/eps", "moe.dense_layers[2]" is "<path>/moe/dense_layers/2".
template <typename Validate>
void validate_at(const std::string& path, Validate&& validate) {
  Diagnostics diags;
  SourceMap where;
  const ParseContext ctx{"", &diags, &where, ""};
  validate(ctx);
  if (diags.ok()) return;
  const Diagnostic& d = diags.items().front();
  std::string pointer = path + "/";
  for (char c : d.field)
    if (c != ']') pointer += c == '.' || c == '[' ? '/' : c;
  throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", pointer, d.message));
}

DType dtype_from(const JsonIn& in) {
  auto d = dtype_parse(in.str());
  if (!d) in.fail(fmt::format("unknown dtype '{}'", in.str()));
  return *d;
}

}  // namespace

bool JsonIn::has(const char* key) const { return j_.is_object() && j_.contains(key); }

JsonIn JsonIn::at(const char* key) const {
  if (!j_.is_object()) fail("expected an object");
  auto it = j_.find(key);
  if (it == j_.end()) fail(fmt::format("missing field '{}'", key));
  return JsonIn(*it, path_ + "/" + key);
}

JsonIn JsonIn::at(size_t index) const {
  if (!j_.is_array()) fail("expected an array");
  if (index >= j_.size()) fail(fmt::format("index {} out of range", index));
  return JsonIn(j_[index], fmt::format("{}/{}", path_, index));
}

size_t JsonIn::size() const {
  if (!j_.is_array()) fail("expected an array");
  return j_.size();
}

int64_t JsonIn::i64(int64_t min, int64_t max) const {
  if (!j_.is_number_integer()) fail(fmt::format("expected an integer, found {}", j_.dump()));
  const int64_t v = j_.get<int64_t>();
  if (const IntRange range{min, max}; !range.contains(v))
    fail(fmt::format("{} is out of range, expected {}", v, range.describe()));
  return v;
}

double JsonIn::f64() const {
  if (!j_.is_number()) fail(fmt::format("expected a number, found {}", j_.dump()));
  return j_.get<double>();
}

double JsonIn::f64(RealRange range) const {
  const double v = f64();
  if (!range.contains(v)) fail(fmt::format("{} is out of range, expected {}", v, range.describe()));
  return v;
}

bool JsonIn::boolean() const {
  if (!j_.is_boolean()) fail(fmt::format("expected true or false, found {}", j_.dump()));
  return j_.get<bool>();
}

std::string JsonIn::str() const {
  if (!j_.is_string()) fail(fmt::format("expected a string, found {}", j_.dump()));
  return j_.get<std::string>();
}

void JsonIn::fail(const std::string& message) const {
  throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", path_.empty() ? "/" : path_, message));
}

Json to_json(const Architecture& a) {
  Json types = Json::array();
  for (auto t : a.attention.layer_types) types.push_back(layer_type_name(t));
  const auto& rs = a.position.rope_scaling;
  Json j{
      {"name", a.name},
      {"model_type", a.model_type},
      {"hf_id", a.hf_id},
      {"family", a.family},
      {"model_family", a.model_family},
      {"source", a.source},
      {"preset", a.preset},
      {"dtype", dtype_name(a.dtype)},
      {"hidden_size", a.hidden_size},
      {"num_hidden_layers", a.num_hidden_layers},
      {"num_attention_heads", a.num_attention_heads},
      {"num_key_value_heads", a.num_key_value_heads},
      {"head_dim", a.head_dim},
      {"intermediate_size", a.intermediate_size},
      {"vocab_size", a.vocab_size},
      {"max_position_embeddings", a.max_position_embeddings},
      {"attention",
       {{"causal", a.attention.causal},
        {"qkv_bias", a.attention.qkv_bias},
        {"out_bias", a.attention.out_bias},
        {"sliding_window", opt(a.attention.sliding_window)},
        {"layer_types", types},
        {"logit_softcap", opt(a.attention.logit_softcap)},
        {"qk_norm", a.attention.qk_norm},
        {"query_pre_attn_scalar", opt(a.attention.query_pre_attn_scalar)}}},
      {"norm",
       {{"kind", norm_kind_name(a.norm.kind)},
        {"eps", a.norm.eps},
        {"placement", norm_placement_name(a.norm.placement)},
        {"weight_offset", a.norm.weight_offset}}},
      {"mlp", {{"activation", activation_name(a.mlp.activation)}, {"gated", a.mlp.gated}, {"bias", a.mlp.bias}}},
      {"position",
       {{"kind", position_kind_name(a.position.kind)},
        {"rope_theta", a.position.rope_theta},
        {"local_rope_theta", opt(a.position.local_rope_theta)},
        {"rope_style", rope_style_name(a.position.rope_style)},
        {"partial_rotary_factor", a.position.partial_rotary_factor},
        {"rope_scaling",
         {{"type", rope_scaling_name(rs.type)},
          {"factor", rs.factor},
          {"low_freq_factor", rs.low_freq_factor},
          {"high_freq_factor", rs.high_freq_factor},
          {"original_max_position_embeddings", rs.original_max_position_embeddings},
          {"beta_fast", rs.beta_fast},
          {"beta_slow", rs.beta_slow},
          {"mscale", rs.mscale},
          {"mscale_all_dim", rs.mscale_all_dim},
          {"attention_factor", opt(rs.attention_factor)},
          {"truncate", rs.truncate}}}}},
      {"embedding",
       {{"tied", a.embedding.tied},
        {"scale_by_sqrt_hidden", a.embedding.scale_by_sqrt_hidden},
        {"type_vocab_size", a.embedding.type_vocab_size},
        {"norm", a.embedding.norm}}},
      {"head",
       {{"kind", head_kind_name(a.head.kind)},
        {"final_norm", a.head.final_norm},
        {"logit_softcap", opt(a.head.logit_softcap)}}},
      {"moe",
       {{"num_experts", a.moe.num_experts},
        {"experts_per_token", a.moe.experts_per_token},
        {"moe_intermediate_size", a.moe.moe_intermediate_size},
        {"renormalize", a.moe.renormalize},
        {"shared_experts", a.moe.shared_experts},
        {"shared_intermediate_size", a.moe.shared_intermediate_size},
        {"first_dense_layers", a.moe.first_dense_layers}}},
  };
  // Written only when set, so that the text (and the job ids hashed from it) of
  // architectures without them stays what it was before these fields existed.
  if (!a.moe.dense_layers.empty()) j["moe"]["dense_layers"] = a.moe.dense_layers;
  if (a.moe.shared_expert_gate) j["moe"]["shared_expert_gate"] = true;
  if (a.moe.router_bias) j["moe"]["router_bias"] = true;
  if (a.moe.expert_bias) j["moe"]["expert_bias"] = true;
  if (a.moe.grouped_routing()) {
    j["moe"]["scoring"] = std::string(moe_scoring_name(a.moe.scoring));
    j["moe"]["n_group"] = a.moe.n_group;
    j["moe"]["topk_group"] = a.moe.topk_group;
    j["moe"]["score_correction_bias"] = a.moe.score_correction_bias;
    j["moe"]["routed_scaling_factor"] = a.moe.routed_scaling_factor;
  }
  if (a.moe.swiglu_limit) {
    j["moe"]["swiglu_limit"] = *a.moe.swiglu_limit;
    j["moe"]["swiglu_alpha"] = a.moe.swiglu_alpha;
  }
  if (a.attention.sinks) j["attention"]["sinks"] = true;
  if (a.attention.qk_norm_full) j["attention"]["qk_norm_full"] = true;
  if (a.attention.qk_norm_per_head) j["attention"]["qk_norm_per_head"] = true;
  if (a.attention.qk_norm_bias) j["attention"]["qk_norm_bias"] = *a.attention.qk_norm_bias;
  if (a.head.bias) j["head"]["bias"] = true;
  if (a.head.logit_scale) j["head"]["logit_scale"] = *a.head.logit_scale;
  if (a.attention.scale) j["attention"]["scale"] = *a.attention.scale;
  if (a.norm.residual_multiplier) j["norm"]["residual_multiplier"] = *a.norm.residual_multiplier;
  if (!a.norm.bias) j["norm"]["bias"] = false;
  if (!a.norm.weight) j["norm"]["weight"] = false;
  if (!a.position.rope_layers.empty()) {
    Json kinds = Json::array();
    for (bool rope : a.position.rope_layers) kinds.push_back(rope ? "rope" : "nope");
    j["position"]["rope_layers"] = kinds;
  }
  if (a.embedding.multiplier) j["embedding"]["multiplier"] = *a.embedding.multiplier;
  // A family's own sections (core/spec/family_section.h), by its codecs.
  register_builtin_families();
  if (const FamilyRules* family = FamilyRegistry::global().find(a.model_family))
    for (const auto& section : family->sections)
      if (a.sections.has(section.key)) j[section.key] = section.to_json(a);
  if (!a.checkpoint.empty()) j["checkpoint"] = a.checkpoint;
  return j;
}

Architecture architecture_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  Architecture a;
  a.name = in.at("name").str();
  a.model_type = in.at("model_type").str();
  a.hf_id = in.at("hf_id").str();
  a.family = in.at("family").str();
  if (in.has("model_family")) a.model_family = in.at("model_family").str();  // job files before it: the default
  a.source = in.at("source").str();
  a.preset = in.at("preset").str();
  a.dtype = dtype_from(in.at("dtype"));
  // Types here; ranges and relations in architecture_validate below.
  a.hidden_size = in.at("hidden_size").i64();
  a.num_hidden_layers = in.at("num_hidden_layers").i64();
  a.num_attention_heads = in.at("num_attention_heads").i64();
  a.num_key_value_heads = in.at("num_key_value_heads").i64();
  a.head_dim = in.at("head_dim").i64();
  a.intermediate_size = in.at("intermediate_size").i64();
  a.vocab_size = in.at("vocab_size").i64();
  a.max_position_embeddings = in.at("max_position_embeddings").i64();
  const JsonIn at = in.at("attention");
  a.attention.causal = at.at("causal").boolean();
  a.attention.qkv_bias = at.at("qkv_bias").boolean();
  a.attention.out_bias = at.at("out_bias").boolean();
  a.attention.sliding_window = opt_i64(at, "sliding_window");
  const JsonIn lt = at.at("layer_types");
  for (size_t i = 0; i < lt.size(); ++i)
    a.attention.layer_types.push_back(
        enum_from(lt.at(i), {LayerType::kFull, LayerType::kSliding}, layer_type_name));
  a.attention.logit_softcap = opt_f64(at, "logit_softcap");
  a.attention.qk_norm = at.at("qk_norm").boolean();
  a.attention.qk_norm_full = at.has("qk_norm_full") && at.at("qk_norm_full").boolean();
  a.attention.qk_norm_per_head = at.has("qk_norm_per_head") && at.at("qk_norm_per_head").boolean();
  if (at.has("qk_norm_bias")) a.attention.qk_norm_bias = at.at("qk_norm_bias").boolean();
  a.attention.query_pre_attn_scalar = opt_f64(at, "query_pre_attn_scalar");
  a.attention.scale = opt_f64(at, "scale");
  const JsonIn n = in.at("norm");
  a.norm.kind = enum_from(n.at("kind"), {NormKind::kRmsNorm, NormKind::kLayerNorm}, norm_kind_name);
  a.norm.eps = n.at("eps").f64();
  a.norm.placement = enum_from(n.at("placement"),
                               {NormPlacement::kPre, NormPlacement::kPost, NormPlacement::kSandwich,
                                NormPlacement::kPostBranch, NormPlacement::kParallel, NormPlacement::kParallelShared},
                               norm_placement_name);
  a.norm.weight_offset = n.at("weight_offset").f64();
  a.norm.residual_multiplier = opt_f64(n, "residual_multiplier");
  a.norm.bias = !n.has("bias") || n.at("bias").boolean();
  a.norm.weight = !n.has("weight") || n.at("weight").boolean();
  const JsonIn m = in.at("mlp");
  a.mlp.activation =
      enum_from(m.at("activation"),
                {Activation::kSilu, Activation::kGelu, Activation::kGeluTanh, Activation::kRelu, Activation::kRelu2},
                activation_name);
  a.mlp.gated = m.at("gated").boolean();
  a.mlp.bias = m.at("bias").boolean();
  const JsonIn p = in.at("position");
  a.position.kind = enum_from(p.at("kind"), {PositionKind::kRope, PositionKind::kLearned, PositionKind::kNone},
                              position_kind_name);
  a.position.rope_theta = p.at("rope_theta").f64();
  a.position.local_rope_theta = opt_f64(p, "local_rope_theta");
  a.position.rope_style = enum_from(p.at("rope_style"), {RopeStyle::kNeox, RopeStyle::kGptj}, rope_style_name);
  a.position.partial_rotary_factor = p.at("partial_rotary_factor").f64();
  if (p.has("rope_layers")) {
    const JsonIn kinds = p.at("rope_layers");
    for (size_t i = 0; i < kinds.size(); ++i)
      a.position.rope_layers.push_back(
          enum_from(kinds.at(i), {true, false}, [](bool rope) { return std::string_view(rope ? "rope" : "nope"); }));
  }
  const JsonIn rs = p.at("rope_scaling");
  a.position.rope_scaling.type =
      enum_from(rs.at("type"),
                {RopeScalingType::kNone, RopeScalingType::kLinear, RopeScalingType::kLlama3, RopeScalingType::kYarn},
                rope_scaling_name);
  a.position.rope_scaling.factor = rs.at("factor").f64();
  a.position.rope_scaling.low_freq_factor = rs.at("low_freq_factor").f64();
  a.position.rope_scaling.high_freq_factor = rs.at("high_freq_factor").f64();
  a.position.rope_scaling.original_max_position_embeddings = rs.at("original_max_position_embeddings").i64();
  // Job files written before yarn have none of its keys: the defaults stand.
  if (rs.has("beta_fast")) {
    a.position.rope_scaling.beta_fast = rs.at("beta_fast").f64();
    a.position.rope_scaling.beta_slow = rs.at("beta_slow").f64();
    a.position.rope_scaling.mscale = rs.at("mscale").f64();
    a.position.rope_scaling.mscale_all_dim = rs.at("mscale_all_dim").f64();
    a.position.rope_scaling.attention_factor = opt_f64(rs, "attention_factor");
    a.position.rope_scaling.truncate = rs.at("truncate").boolean();
  }
  const JsonIn e = in.at("embedding");
  a.embedding.tied = e.at("tied").boolean();
  a.embedding.scale_by_sqrt_hidden = e.at("scale_by_sqrt_hidden").boolean();
  a.embedding.multiplier = opt_f64(e, "multiplier");
  a.embedding.type_vocab_size = e.at("type_vocab_size").i64();
  a.embedding.norm = e.at("norm").boolean();
  const JsonIn h = in.at("head");
  a.head.kind = enum_from(h.at("kind"), {HeadKind::kLm, HeadKind::kNone}, head_kind_name);
  a.head.final_norm = h.at("final_norm").boolean();
  a.head.bias = h.has("bias") && h.at("bias").boolean();
  a.head.logit_scale = opt_f64(h, "logit_scale");
  a.head.logit_softcap = opt_f64(h, "logit_softcap");
  const JsonIn mo = in.at("moe");
  a.moe.num_experts = mo.at("num_experts").i64(0);  // 0: a dense model
  a.moe.experts_per_token = mo.at("experts_per_token").i64(0);
  a.moe.moe_intermediate_size = mo.at("moe_intermediate_size").i64(0);
  a.moe.renormalize = mo.at("renormalize").boolean();
  a.moe.shared_experts = mo.at("shared_experts").i64(0);
  a.moe.shared_intermediate_size = mo.at("shared_intermediate_size").i64(0);
  a.moe.first_dense_layers = mo.at("first_dense_layers").i64(0);
  a.moe.shared_expert_gate = mo.has("shared_expert_gate") && mo.at("shared_expert_gate").boolean();
  a.moe.router_bias = mo.has("router_bias") && mo.at("router_bias").boolean();
  a.moe.expert_bias = mo.has("expert_bias") && mo.at("expert_bias").boolean();
  a.moe.swiglu_limit = opt_f64(mo, "swiglu_limit");
  if (mo.has("swiglu_alpha")) a.moe.swiglu_alpha = mo.at("swiglu_alpha").f64();
  if (mo.has("scoring")) {
    const std::string s = mo.at("scoring").str();
    if (s != "softmax" && s != "sigmoid") mo.at("scoring").fail("is not one of [softmax, sigmoid]");
    a.moe.scoring = s == "sigmoid" ? MoeScoring::kSigmoid : MoeScoring::kSoftmax;
  }
  if (mo.has("n_group")) a.moe.n_group = mo.at("n_group").i64(1);
  if (mo.has("topk_group")) a.moe.topk_group = mo.at("topk_group").i64(1);
  a.moe.score_correction_bias = mo.has("score_correction_bias") && mo.at("score_correction_bias").boolean();
  if (mo.has("routed_scaling_factor")) a.moe.routed_scaling_factor = mo.at("routed_scaling_factor").f64();
  a.attention.sinks = in.at("attention").has("sinks") && in.at("attention").at("sinks").boolean();
  if (mo.has("dense_layers")) {
    const JsonIn dl = mo.at("dense_layers");
    for (size_t i = 0; i < dl.size(); ++i) a.moe.dense_layers.push_back(dl.at(i).i64(0));
  }
  // A family's own sections; an unknown family is reported by architecture_validate.
  register_builtin_families();
  if (const FamilyRules* family = FamilyRegistry::global().find(a.model_family))
    for (const auto& section : family->sections)
      if (in.has(section.key.c_str())) section.from_json(in.at(section.key.c_str()), a);
  if (in.has("checkpoint")) a.checkpoint = in.at("checkpoint").str();
  validate_at(path, [&](const ParseContext& ctx) { architecture_validate(a, ctx); });
  return a;
}

Json to_json(const Workload& w) {
  return Json{{"name", w.name},
              {"preset", w.preset},
              {"phase", phase_name(w.phase)},
              {"batch", w.batch},
              {"seq_len", w.seq_len},
              {"decode_steps", w.decode_steps},
              {"dtype", w.dtype ? Json(dtype_name(*w.dtype)) : Json(nullptr)}};
}

Workload workload_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  Workload w;
  w.name = in.at("name").str();
  w.preset = in.at("preset").str();
  w.phase = enum_from(in.at("phase"), {Phase::kPrefill, Phase::kDecode}, phase_name);
  w.batch = in.at("batch").i64();
  w.seq_len = in.at("seq_len").i64();
  w.decode_steps = in.at("decode_steps").i64();
  if (!in.at("dtype").is_null()) w.dtype = dtype_from(in.at("dtype"));
  validate_at(path, [&](const ParseContext& ctx) { workload_validate(w, ctx); });
  return w;
}

Json to_json(const Layout& l) { return Json{{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}}; }

Layout layout_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  const Layout l{in.at("tp").i64(), in.at("pp").i64(), in.at("dp").i64()};
  validate_at(path, [&](const ParseContext& ctx) { layout_validate(l, ctx, ""); });
  return l;
}

Json to_json(const CandidateSet& c) { return Json{{"name", c.name}, {"ops", c.ops}}; }

CandidateSet candidate_set_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  CandidateSet c;
  c.name = in.at("name").str();
  const JsonIn ops = in.at("ops");
  if (!ops.json().is_object()) ops.fail("expected an object of op -> folder");
  for (auto it = ops.json().begin(); it != ops.json().end(); ++it)
    c.ops[it.key()] = JsonIn(it.value(), ops.path() + "/" + it.key()).str();
  return c;
}

Json to_json(const KernelStageSpec& k) {
  return Json{{"enabled", k.enabled},
              {"warmup", k.warmup},
              {"iterations", k.iterations},
              {"rounds", k.rounds},
              {"instance_time_limit_s", k.instance_time_limit_s},
              {"sanitize", k.sanitize}};
}

KernelStageSpec kernel_stage_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  KernelStageSpec k{in.at("enabled").boolean(), in.at("warmup").i64(limits::kWarmup),
                    in.at("iterations").i64(limits::kKernelIterations), in.at("rounds").i64(limits::kRounds),
                    in.at("instance_time_limit_s").f64(limits::kDuration), ""};
  if (in.has("sanitize")) {  // absent in job files written before it existed
    const JsonIn t = in.at("sanitize");
    k.sanitize = t.str();
    if (!k.sanitize.empty() && !sanitizer_tool_known(k.sanitize))
      t.fail(fmt::format("'{}' is not a compute-sanitizer tool ({})", k.sanitize, fmt::join(sanitizer_tools(), ", ")));
  }
  return k;
}

Json to_json(const ModelStageSpec& m) {
  Json j{{"enabled", m.enabled}, {"iterations", m.iterations}};
  // Written only when off, so that a job's id (a hash of this form) is what it was
  // before the field existed.
  if (!m.graphs) j["graphs"] = false;
  if (m.reference != ReferenceWeights::kAuto) j["reference"] = reference_weights_name(m.reference);
  return j;
}

ModelStageSpec model_stage_from_json(const Json& j, const std::string& path) {
  JsonIn in(j, path);
  ModelStageSpec m{in.at("enabled").boolean(), in.at("iterations").i64(limits::kModelIterations)};
  if (in.has("graphs")) m.graphs = in.at("graphs").boolean();  // job files before it: the default
  if (in.has("reference")) {
    const std::string r = in.at("reference").str();
    const auto& all = reference_weights_choices();
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.first == r; });
    if (it == all.end()) in.at("reference").fail(fmt::format("'{}' is not auto, resident or streamed", r));
    m.reference = it->second;
  }
  return m;
}

}  // namespace fk::spec
