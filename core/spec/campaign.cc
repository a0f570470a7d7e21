#include "core/spec/campaign.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <regex>
#include <set>

namespace fk::spec {
namespace fs = std::filesystem;
namespace {

const std::vector<std::pair<std::string, UnfitPolicy>> kUnfit = {{"error", UnfitPolicy::kError},
                                                                 {"skip", UnfitPolicy::kSkip}};

std::vector<std::string> yaml_names_in(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  return names;
}

// Resolves a reference to a file: a path (has '/' or ends in .yaml) relative to the
// campaign file, or a name in <specs_dir>/<sub>/.
std::optional<std::string> find_spec_file(const std::string& ref, const Campaign& c, const std::string& sub,
                                          std::string& why) {
  const bool is_path = ref.find('/') != std::string::npos || ref.ends_with(".yaml");
  if (is_path) {
    fs::path p = fs::path(ref).is_absolute() ? fs::path(ref) : fs::path(c.file).parent_path() / ref;
    if (fs::is_regular_file(p)) return p.lexically_normal().string();
    why = fmt::format("no such file '{}'", p.lexically_normal().string());
    return std::nullopt;
  }
  const fs::path dir = fs::path(c.specs_dir) / sub;
  const fs::path p = dir / (ref + ".yaml");
  if (fs::is_regular_file(p)) return p.lexically_normal().string();
  const std::string hint = closest_match(ref, yaml_names_in(dir));
  why = fmt::format("no {} named '{}' in {}{}", sub == "architectures" ? "architecture" : "workload", ref,
                    dir.lexically_normal().string(), hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint));
  // A campaign copied out of specs/campaigns/ looks for names beside a folder that is not
  // there: say where the folder comes from and how to point it elsewhere.
  if (!fs::is_directory(dir))
    why += fmt::format(
        "; that folder does not exist: names are looked up in specs_dir ({}, by default the campaign "
        "folder's parent); set specs_dir in the campaign, or give the spec's path",
        fs::path(c.specs_dir).lexically_normal().string());
  return std::nullopt;
}

template <typename Doc>
bool check_preset(const Doc& doc, const std::string& scale, const std::string& what, const SourcePos& pos,
                  const std::string& field, Diagnostics& diags) {
  if (doc.select(scale)) return true;
  diags.error(pos, field,
              fmt::format("{} '{}' has no preset '{}' (it has: {})", what, doc.full.name, scale,
                          fmt::join(doc.preset_names(), ", ")));
  return false;
}

void read_duration(MapReader& r, const std::string& key, double& out) {
  YAML::Node v = r.child(key);
  if (!v.IsDefined()) return;
  std::optional<double> d;
  if (v.IsScalar()) d = duration_parse(v.Scalar());
  if (!d || *d <= 0)
    r.ctx().error(r.key_pos(key), r.path(key),
                  fmt::format("found {}, expected a positive duration such as 600, \"90s\", \"10m\" or \"1h30m\"",
                              yaml_describe(v)));
  else if (!limits::kDuration.contains(*d))
    r.ctx().error(r.key_pos(key), r.path(key), duration_too_long(yaml_describe(v)));
  else
    out = *d;
}

}  // namespace

const std::vector<std::string>& sanitizer_tools() {
  static const std::vector<std::string> tools = {"memcheck", "racecheck", "initcheck", "synccheck"};
  return tools;
}

bool sanitizer_tool_known(const std::string& tool) {
  const auto& tools = sanitizer_tools();
  return std::find(tools.begin(), tools.end(), tool) != tools.end();
}

namespace {

void read_stages(MapReader& r, Campaign& c) {
  YAML::Node ks = r.child("kernel_stage");
  if (ks.IsDefined()) {
    MapReader s(r.ctx(), ks, "kernel_stage");
    s.boolean("enabled", c.kernel_stage.enabled, Need::kOptional);
    s.integer("warmup", c.kernel_stage.warmup, Need::kOptional, limits::kWarmup);
    s.integer("iterations", c.kernel_stage.iterations, Need::kOptional, limits::kKernelIterations);
    s.integer("rounds", c.kernel_stage.rounds, Need::kOptional, limits::kRounds);
    read_duration(s, "instance_time_limit", c.kernel_stage.instance_time_limit_s);
    std::vector<std::pair<std::string, std::string>> tools = {{"none", ""}};
    for (const auto& t : sanitizer_tools()) tools.emplace_back(t, t);
    s.choice("sanitize", c.kernel_stage.sanitize, Need::kOptional, tools);
    s.finish();
  }
  YAML::Node ms = r.child("model_stage");
  if (ms.IsDefined()) {
    MapReader s(r.ctx(), ms, "model_stage");
    s.boolean("enabled", c.model_stage.enabled, Need::kOptional);
    s.integer("iterations", c.model_stage.iterations, Need::kOptional, limits::kModelIterations);
    s.boolean("graphs", c.model_stage.graphs, Need::kOptional);
    s.choice("reference", c.model_stage.reference, Need::kOptional, reference_weights_choices());
    s.finish();
  }
}

void read_executor(MapReader& r, ExecutorSpec& e) {
  r.choice("kind", e.kind, Need::kOptional,
           std::vector<std::pair<std::string, std::string>>{{"local", "local"}, {"slurm", "slurm"}});
  r.integer("slots", e.slots, Need::kOptional, 0, 1 << 20);
  read_duration(r, "time_limit", e.time_limit_s);
  read_duration(r, "heartbeat_timeout", e.heartbeat_timeout_s);
  r.integer("retries", e.retries, Need::kOptional, 0, 100);
  YAML::Node sl = r.child("slurm");
  if (sl.IsDefined()) {
    MapReader s(r.ctx(), sl, r.path("slurm"));
    s.string("partition", e.slurm.partition, Need::kOptional);
    s.string("account", e.slurm.account, Need::kOptional);
    s.string("qos", e.slurm.qos, Need::kOptional);
    s.integer("nodes", e.slurm.nodes, Need::kOptional, 1, 100000);
    s.integer("gpus_per_node", e.slurm.gpus_per_node, Need::kOptional, 0, 64);
    s.string_list("sbatch_args", e.slurm.sbatch_args, Need::kOptional);
    s.finish();
  }
}

void read_candidate_sets(MapReader& r, Campaign& c) {
  YAML::Node sets = r.child("candidate_sets");
  if (!sets.IsDefined()) {
    c.candidate_sets.push_back({"baseline", {}});
    return;
  }
  MapReader sr(r.ctx(), sets, "candidate_sets");
  if (!sr.valid()) return;
  static const std::regex op_name("[a-z][a-z0-9_]*");
  for (auto it = sets.begin(); it != sets.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    CandidateSet cs;
    cs.name = it->first.Scalar();
    sr.has(cs.name);
    const std::string path = "candidate_sets." + cs.name;
    if (!std::regex_match(cs.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*")))
      r.ctx().error(it->first, path, "a candidate set name holds only letters, digits, '.', '_', '-'");
    const YAML::Node body = it->second;
    if (body.IsNull() || (body.IsMap() && body.size() == 0)) {
      c.candidate_sets.push_back(cs);
      continue;
    }
    if (!body.IsMap()) {
      r.ctx().error(body, path, fmt::format("found {}, expected a map from op name to candidate folder",
                                            yaml_describe(body)));
      continue;
    }
    for (auto op = body.begin(); op != body.end(); ++op) {
      const std::string op_path = path + "." + op->first.as<std::string>("?");
      if (!op->first.IsScalar() || !std::regex_match(op->first.Scalar(), op_name)) {
        r.ctx().error(op->first, op_path, "an op name is lower_case_with_underscores");
        continue;
      }
      if (!op->second.IsScalar() || op->second.IsNull()) {
        r.ctx().error(op->second, op_path, fmt::format("found {}, expected a candidate folder path",
                                                        yaml_describe(op->second)));
        continue;
      }
      fs::path folder = op->second.Scalar();
      if (folder.is_relative()) folder = fs::path(c.file).parent_path() / folder;
      folder = folder.lexically_normal();
      if (!fs::is_directory(folder)) {
        r.ctx().error(op->second, op_path, fmt::format("candidate folder '{}' does not exist", folder.string()));
        continue;
      }
      cs.ops[op->first.Scalar()] = folder.string();
    }
    c.candidate_sets.push_back(cs);
  }
}

}  // namespace


std::string duration_too_long(const std::string& found) {
  return fmt::format("found {}, expected a duration of at most one year ({:.0f} s)", found, limits::kDuration.max);
}

std::optional<double> duration_parse(const std::string& text) {
  static const std::regex plain("[0-9]+(\\.[0-9]+)?");
  static const std::regex parts("(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?");
  // strtod, not std::stod: a number too large for a double is +inf here, not an
  // exception, and the caller's limit rejects it.
  auto number = [](const std::string& digits) { return std::strtod(digits.c_str(), nullptr); };
  if (std::regex_match(text, plain)) return number(text);
  std::smatch m;
  if (text.empty() || !std::regex_match(text, m, parts)) return std::nullopt;
  double s = 0;
  if (m[2].matched) s += 3600.0 * number(m[2]);
  if (m[4].matched) s += 60.0 * number(m[4]);
  if (m[6].matched) s += number(m[6]);
  return s;
}

std::optional<Campaign> campaign_parse(const YAML::Node& root, const std::string& file, Diagnostics& diags) {
  const size_t before = diags.items().size();
  SourceMap where(file);
  ParseContext ctx{file, &diags, &where, ""};
  MapReader r(ctx, root, "");
  if (!r.valid()) return std::nullopt;
  Campaign c;
  c.file = file;
  std::string kind;
  if (r.string("kind", kind, Need::kRequired) && kind != "campaign")
    ctx.error(r.key_pos("kind"), "kind", fmt::format("'{}' where a campaign file was expected", kind));
  if (r.string("name", c.name, Need::kRequired) &&
      !std::regex_match(c.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*")))
    ctx.error(r.key_pos("name"), "name", fmt::format("'{}' must hold only letters, digits, '.', '_', '-'", c.name));
  r.string("description", c.description, Need::kOptional);
  r.string("scale", c.scale, Need::kOptional);
  r.choice("backend", c.backend, Need::kOptional, device_kind_choices());
  int64_t seed = 0;
  if (r.integer("seed", seed, Need::kOptional, 0)) c.seed = static_cast<uint64_t>(seed);
  r.integer("repetitions", c.repetitions, Need::kOptional, limits::kRepetitions);
  c.specs_dir = (fs::path(file).parent_path() / "..").lexically_normal().string();
  if (r.string("specs_dir", c.specs_dir, Need::kOptional) && fs::path(c.specs_dir).is_relative())
    c.specs_dir = (fs::path(file).parent_path() / c.specs_dir).lexically_normal().string();
  r.choice("unfit_layouts", c.unfit_layouts, Need::kOptional, kUnfit);
  read_stages(r, c);
  YAML::Node ex = r.child("executor");
  if (ex.IsDefined()) {
    MapReader er(ctx, ex, "executor");
    read_executor(er, c.executor);
    er.finish();
  }
  read_candidate_sets(r, c);

  // Architectures.
  YAML::Node archs = r.child("architectures");
  if (!archs.IsDefined()) {
    ctx.error(r.pos(), "architectures", "required field is missing (a list of architecture names or paths)");
  } else if (!archs.IsSequence() || archs.size() == 0) {
    ctx.error(r.key_pos("architectures"), "architectures",
              fmt::format("found {}, expected a non-empty list of architecture names or paths", yaml_describe(archs)));
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < archs.size(); ++i) {
      const std::string field = fmt::format("architectures[{}]", i);
      const YAML::Node item = archs[i];
      if (!item.IsScalar()) {
        ctx.error(item, field, fmt::format("found {}, expected an architecture name or path", yaml_describe(item)));
        continue;
      }
      std::string why;
      auto path = find_spec_file(item.Scalar(), c, "architectures", why);
      if (!path) {
        ctx.error(item, field, why);
        continue;
      }
      auto node = yaml_load_file(*path, diags);
      if (!node) continue;
      auto doc = architecture_parse(*node, *path, diags);
      if (!doc) continue;
      if (!seen.insert(doc->full.name).second) {
        ctx.error(item, field, fmt::format("architecture '{}' is listed twice", doc->full.name));
        continue;
      }
      if (!check_preset(*doc, c.scale, "architecture", ctx.pos_of(item), field, diags)) continue;
      c.architectures.push_back({item.Scalar(), ctx.pos_of(item), std::move(*doc)});
    }
  }

  // Workloads: names, paths or inline maps.
  YAML::Node wls = r.child("workloads");
  if (!wls.IsDefined()) {
    ctx.error(r.pos(), "workloads", "required field is missing (a list of workload names, paths or maps)");
  } else if (!wls.IsSequence() || wls.size() == 0) {
    ctx.error(r.key_pos("workloads"), "workloads",
              fmt::format("found {}, expected a non-empty list of workloads", yaml_describe(wls)));
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < wls.size(); ++i) {
      const std::string field = fmt::format("workloads[{}]", i);
      const YAML::Node item = wls[i];
      std::optional<WorkloadDoc> doc;
      std::string text;
      if (item.IsMap()) {
        doc = workload_parse_inline(item, ctx, field);
        text = doc ? doc->full.name : "";
      } else if (item.IsScalar()) {
        text = item.Scalar();
        std::string why;
        auto path = find_spec_file(text, c, "workloads", why);
        if (!path) {
          ctx.error(item, field, why);
          continue;
        }
        auto node = yaml_load_file(*path, diags);
        if (!node) continue;
        doc = workload_parse(*node, *path, diags);
      } else {
        ctx.error(item, field, fmt::format("found {}, expected a workload name, path or map", yaml_describe(item)));
        continue;
      }
      if (!doc) continue;
      if (!seen.insert(doc->full.name).second) {
        ctx.error(item, field, fmt::format("workload '{}' is listed twice", doc->full.name));
        continue;
      }
      c.workloads.push_back({text, ctx.pos_of(item), std::move(*doc)});
    }
  }

  // Layouts.
  YAML::Node lays = r.child("layouts");
  if (!lays.IsDefined()) {
    c.layouts.push_back({Layout{}, r.pos()});
  } else if (!lays.IsSequence() || lays.size() == 0) {
    ctx.error(r.key_pos("layouts"), "layouts",
              fmt::format("found {}, expected a non-empty list of layouts such as [tp1, tp2, tp2pp2]",
                          yaml_describe(lays)));
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < lays.size(); ++i) {
      const std::string field = fmt::format("layouts[{}]", i);
      auto l = layout_read(lays[i], ctx, field);
      if (!l) continue;
      if (!seen.insert(l->name()).second) {
        ctx.error(lays[i], field, fmt::format("layout {} is listed twice", l->name()));
        continue;
      }
      c.layouts.push_back({*l, ctx.pos_of(lays[i])});
    }
  }
  r.finish();
  if (diags.items().size() != before) return std::nullopt;
  return c;
}

}  // namespace fk::spec
