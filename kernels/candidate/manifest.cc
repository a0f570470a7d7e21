#include "kernels/candidate/manifest.h"

#include "core/spec/yaml_reader.h"
#include "kernels/op.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <regex>

namespace fk::kernels {
namespace fs = std::filesystem;

bool CandidateManifest::handles(DType d) const { return std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end(); }

bool candidate_flag_allowed(DeviceKind backend, const std::string& flag) {
  static const std::regex macro("-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?");
  if (std::regex_match(flag, macro)) return true;
  if (backend == DeviceKind::kCpu) {
    for (const char* f : {"-fopenmp", "-funroll-loops", "-fno-math-errno", "-ffp-contract=fast", "-ffp-contract=off"})
      if (flag == f) return true;
    return false;
  }
  static const std::regex regs("-maxrregcount=[0-9]{1,3}");
  for (const char* f : {"--use_fast_math", "-lineinfo", "--ftz=true", "--ftz=false"})
    if (flag == f) return true;
  return std::regex_match(flag, regs);
}

std::optional<CandidateManifest> candidate_manifest_load(const std::string& folder_arg, spec::Diagnostics& diags) {
  register_builtin_ops();
  const size_t before = diags.items().size();
  const fs::path folder = fs::absolute(folder_arg).lexically_normal();
  const std::string file = (folder / "kernel.yaml").string();
  if (!fs::is_directory(folder)) {
    diags.error({folder_arg, 0, 0}, "", "candidate folder does not exist");
    return std::nullopt;
  }
  auto root = spec::yaml_load_file(file, diags);
  if (!root) return std::nullopt;
  spec::SourceMap where(file);
  spec::ParseContext ctx{file, &diags, &where, ""};
  spec::MapReader r(ctx, *root, "");
  if (!r.valid()) return std::nullopt;
  CandidateManifest m;
  m.folder = folder.string();
  m.name = folder.filename().string();
  r.string("name", m.name, spec::Need::kOptional);
  if (r.string("op", m.op, spec::Need::kRequired) && OpRegistry::global().find(m.op) == nullptr) {
    const std::string hint = spec::closest_match(m.op, OpRegistry::global().op_names());
    ctx.error(r.key_pos("op"), "op",
              fmt::format("'{}' is not an operator FastKernels knows{}; see docs/kernel-abi.md", m.op,
                          hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
  r.choice("backend", m.backend, spec::Need::kRequired,
           device_kind_choices());
  if (r.string_list("sources", m.sources, spec::Need::kRequired)) {
    if (m.sources.empty()) ctx.error(r.key_pos("sources"), "sources", "the list is empty");
    for (size_t i = 0; i < m.sources.size(); ++i) {
      const std::string field = fmt::format("sources[{}]", i);
      const fs::path p = (folder / m.sources[i]).lexically_normal();
      const std::string ext = p.extension().string();
      const bool inside = p.string().rfind(folder.string() + "/", 0) == 0;
      std::error_code ec;
      const fs::path real = fs::weakly_canonical(p, ec);
      const fs::path real_folder = fs::weakly_canonical(folder, ec);
      if (!inside) {
        ctx.error(r.key_pos("sources"), field, fmt::format("'{}' is outside the candidate folder", m.sources[i]));
      } else if (fs::is_symlink(fs::symlink_status(p, ec)) ||
                 real.string().rfind(real_folder.string() + "/", 0) != 0) {
        ctx.error(r.key_pos("sources"), field,
                  fmt::format("'{}' is a symbolic link or lies behind one: sources must be regular files inside the "
                              "candidate folder",
                              m.sources[i]));
      } else if (!fs::is_regular_file(p)) {
        ctx.error(r.key_pos("sources"), field, fmt::format("'{}' does not exist", m.sources[i]));
      } else if (ext != ".cc" && ext != ".cpp" && ext != ".cxx" && ext != ".c" &&
                 !(m.backend == DeviceKind::kCuda && ext == ".cu")) {
        ctx.error(r.key_pos("sources"), field,
                  fmt::format("'{}': expected .cc, .cpp, .c{}", m.sources[i],
                              m.backend == DeviceKind::kCuda ? " or .cu" : " (.cu needs backend cuda)"));
      }
    }
  }
  if (r.string("entry", m.entry, spec::Need::kRequired) &&
      !std::regex_match(m.entry, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
    ctx.error(r.key_pos("entry"), "entry", fmt::format("'{}' is not a C identifier", m.entry));
  std::vector<std::string> dtypes;
  if (r.string_list("dtypes", dtypes, spec::Need::kRequired)) {
    for (const auto& d : dtypes) {
      auto parsed = dtype_parse(d);
      if (!parsed || (*parsed != DType::kF32 && *parsed != DType::kF16 && *parsed != DType::kBF16)) {
        ctx.error(r.key_pos("dtypes"), "dtypes", fmt::format("'{}' is not one of [fp32, fp16, bf16]", d));
        continue;
      }
      m.dtypes.push_back(*parsed);
    }
    if (dtypes.empty()) ctx.error(r.key_pos("dtypes"), "dtypes", "the list is empty");
  }
  if (r.string_list("flags", m.flags, spec::Need::kOptional)) {
    for (const auto& f : m.flags)
      if (!candidate_flag_allowed(m.backend, f))
        ctx.error(r.key_pos("flags"), "flags",
                  fmt::format("'{}' is not an allowed {} flag (see docs/writing-kernels.md)", f,
                              device_kind_name(m.backend)));
  }
  r.string("description", m.description, spec::Need::kOptional);
  r.string("expect", m.expect, spec::Need::kOptional);
  r.string("expect_reason", m.expect_reason, spec::Need::kOptional);
  r.string("expect_workload", m.expect_workload, spec::Need::kOptional);
  r.string("expect_arch", m.expect_arch, spec::Need::kOptional);
  r.number("expect_speedup_below", m.expect_speedup_below, spec::Need::kOptional, 0, 1e6);
  r.string("expect_sanitized", m.expect_sanitized, spec::Need::kOptional);
  r.string("expect_sanitized_reason", m.expect_sanitized_reason, spec::Need::kOptional);
  r.finish();
  if (diags.items().size() != before) return std::nullopt;
  return m;
}

}  // namespace fk::kernels
