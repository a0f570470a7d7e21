#include "core/spec/workload.h"

#include "core/spec/family.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace fk::spec {
namespace {

const std::vector<std::pair<std::string, Phase>> kPhases = {{"prefill", Phase::kPrefill},
                                                            {"decode", Phase::kDecode}};
const std::vector<std::pair<std::string, DType>> kDtypes = {
    {"fp32", DType::kF32}, {"fp16", DType::kF16}, {"bf16", DType::kBF16}};

void read_workload_fields(MapReader& r, Workload& w) {
  r.choice("phase", w.phase, Need::kRequired, kPhases);
  r.integer("batch", w.batch, Need::kRequired, limits::kBatch);
  r.integer("seq_len", w.seq_len, Need::kRequired, limits::kSeqLen);
  r.integer("decode_steps", w.decode_steps, Need::kOptional, limits::kDecodeSteps);
  DType d = DType::kBF16;
  if (r.choice("dtype", d, Need::kOptional, kDtypes)) w.dtype = d;
}

std::optional<WorkloadDoc> parse_body(MapReader& r, const ParseContext& ctx, YAML::Node root, bool need_kind) {
  WorkloadDoc doc;
  doc.file = ctx.file;
  const size_t before = ctx.diags->items().size();
  std::string kind;
  if (r.string("kind", kind, need_kind ? Need::kRequired : Need::kOptional) && kind != "workload")
    ctx.error(r.key_pos("kind"), r.path("kind"), fmt::format("'{}' where a workload was expected", kind));
  if (r.string("name", doc.full.name, Need::kRequired) &&
      !std::regex_match(doc.full.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*")))
    ctx.error(r.key_pos("name"), r.path("name"),
              fmt::format("'{}' must hold only letters, digits, '.', '_', '-'", doc.full.name));
  read_workload_fields(r, doc.full);
  YAML::Node presets = r.child("presets");
  r.finish();
  if (ctx.diags->items().size() == before) workload_validate(doc.full, ctx);
  if (presets.IsDefined()) {
    MapReader pr(ctx, presets, r.path("presets"));
    if (pr.valid()) {
      for (auto it = presets.begin(); it != presets.end(); ++it) {
        if (!it->first.IsScalar()) continue;
        const std::string pname = it->first.Scalar();
        pr.has(pname);
        Workload p = doc.full;
        p.preset = pname;
        SourceMap pw = *ctx.where;
        ParseContext pctx{ctx.file, ctx.diags, &pw, ctx.display(r.path("presets." + pname))};
        MapReader o(pctx, it->second, "", true);
        if (!o.valid()) continue;
        const size_t b = ctx.diags->items().size();
        read_workload_fields(o, p);
        o.finish();
        if (ctx.diags->items().size() != b) continue;
        workload_validate(p, pctx);
        doc.presets.emplace(pname, std::move(p));
        doc.preset_where.emplace(pname, std::move(pw));
      }
    }
  }
  (void)root;
  doc.where = *ctx.where;
  if (ctx.diags->items().size() != before) return std::nullopt;
  return doc;
}

}  // namespace

std::string_view phase_name(Phase p) { return p == Phase::kPrefill ? "prefill" : "decode"; }

void workload_validate(const Workload& w, const ParseContext& ctx) {
  bool ok = ctx.check_range("batch", w.batch, limits::kBatch);
  ok &= ctx.check_range("seq_len", w.seq_len, limits::kSeqLen);
  ok &= ctx.check_range("decode_steps", w.decode_steps, limits::kDecodeSteps);
  if (w.dtype && std::none_of(kDtypes.begin(), kDtypes.end(), [&](const auto& d) { return d.second == *w.dtype; })) {
    ctx.error(ctx.where->at("dtype"), "dtype", fmt::format("'{}' is not one of [fp32, fp16, bf16]", dtype_name(*w.dtype)));
    ok = false;
  }
  if (ok && w.phase == Phase::kDecode && w.decode_steps < 1)
    ctx.error(ctx.where->at("decode_steps"), "decode_steps",
              "a decode workload needs decode_steps >= 1 (the steps the kernel stage measures)");
}

bool layout_validate(const Layout& l, const ParseContext& ctx, const std::string& path) {
  const std::string prefix = path.empty() ? "" : path + ".";
  bool ok = ctx.check_range(prefix + "tp", l.tp, limits::kParallel);
  ok &= ctx.check_range(prefix + "pp", l.pp, limits::kParallel);
  ok &= ctx.check_range(prefix + "dp", l.dp, limits::kParallel);
  return ok;
}

std::optional<WorkloadDoc> workload_parse(const YAML::Node& root, const std::string& file, Diagnostics& diags) {
  SourceMap where(file);
  ParseContext ctx{file, &diags, &where, ""};
  MapReader r(ctx, root, "");
  if (!r.valid()) return std::nullopt;
  return parse_body(r, ctx, root, true);
}

std::optional<WorkloadDoc> workload_parse_inline(const YAML::Node& node, const ParseContext& ctx,
                                                 const std::string& path) {
  SourceMap where(ctx.file);
  ParseContext inner{ctx.file, ctx.diags, &where, ctx.display(path)};
  MapReader r(inner, node, "");
  if (!r.valid()) return std::nullopt;
  return parse_body(r, inner, node, false);
}

std::string Layout::name() const { return fmt::format("tp{}pp{}dp{}", tp, pp, dp); }

std::optional<Layout> layout_parse(const std::string& text) {
  static const std::regex part("(tp|pp|dp)([0-9]{1,5})");
  Layout l;
  bool seen[3] = {false, false, false};
  size_t pos = 0;
  if (text.empty()) return std::nullopt;
  while (pos < text.size()) {
    std::smatch m;
    const std::string rest = text.substr(pos);
    if (!std::regex_search(rest, m, part, std::regex_constants::match_continuous)) return std::nullopt;
    const std::string kind = m[1];
    const int64_t v = std::stoll(m[2]);
    if (v < 1) return std::nullopt;
    const int idx = kind == "tp" ? 0 : kind == "pp" ? 1 : 2;
    if (seen[idx]) return std::nullopt;
    seen[idx] = true;
    (idx == 0 ? l.tp : idx == 1 ? l.pp : l.dp) = v;
    pos += static_cast<size_t>(m.length(0));
  }
  return l;
}

std::optional<Layout> layout_read(const YAML::Node& node, const ParseContext& ctx, const std::string& path) {
  if (node.IsScalar()) {
    auto l = layout_parse(node.Scalar());
    if (!l) {
      ctx.error(node, path,
                fmt::format("'{}' is not a layout; write e.g. tp2, tp2pp2 or tp1pp2dp2 (or a map {{tp: 2, pp: 2}})",
                            node.Scalar()));
      return l;
    }
    SourceMap at(ctx.file);
    at.set(path, ctx.pos_of(node));
    const ParseContext located{ctx.file, ctx.diags, &at, ctx.display_prefix};
    if (!layout_validate(*l, located, path)) return std::nullopt;
    return l;
  }
  SourceMap where(ctx.file);
  ParseContext inner{ctx.file, ctx.diags, &where, ctx.display(path)};
  MapReader r(inner, node, "");
  if (!r.valid()) return std::nullopt;
  Layout l;
  const size_t before = ctx.diags->items().size();
  r.integer("tp", l.tp, Need::kOptional, limits::kParallel);
  r.integer("pp", l.pp, Need::kOptional, limits::kParallel);
  r.integer("dp", l.dp, Need::kOptional, limits::kParallel);
  r.finish();
  if (ctx.diags->items().size() != before) return std::nullopt;
  return l;
}

std::vector<std::string> layout_misfits(const Architecture& a, const Workload& w, const Layout& l) {
  const FamilyRules& rules = family_rules(a);
  std::vector<std::string> out;
  if (l.tp > 1 && !rules.not_tensor_parallel.empty())
    out.push_back(fmt::format("tp ({}): {}", l.tp, rules.not_tensor_parallel));
  for (std::string& m : rules.layout_misfits(a, w, l)) out.push_back(std::move(m));
  if (w.batch % l.dp != 0) out.push_back(fmt::format("dp ({}) does not divide the batch ({})", l.dp, w.batch));
  return out;
}

}  // namespace fk::spec
