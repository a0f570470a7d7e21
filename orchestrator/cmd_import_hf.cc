// `fk import-hf <config.json> [-o spec.yaml] [--name NAME] [--dtype D] [--checkpoint PATH]`
//
// Writes the architecture spec of a HuggingFace config.json (core/spec/hf_config.h
// says what is imported and what is refused). The spec goes to -o (written
// atomically) or to stdout. `checkpoint:` is written when --checkpoint is given or
// the config's folder holds model.safetensors or model.safetensors.index.json; with
// -o the path is relative to the spec's folder, on stdout it is absolute. The text
// is loaded back with the spec loader before it is written, so what fk writes, fk
// reads. Exit status: 0 written, 2 the config (or an argument) cannot be imported,
// with "fk import-hf: <file>: <field>: <found>, <expected>" on stderr.
#include "core/error.h"
#include "core/fs_util.h"
#include "core/spec/architecture_load.h"
#include "core/spec/hf_config.h"
#include "core/spec/yaml_reader.h"
#include "orchestrator/commands.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

namespace fk::orchestrator {
namespace {

namespace fs = std::filesystem;

struct ImportArgs {
  std::string config, output, name, dtype, checkpoint;
};

// `target` as written into the spec file `spec_file`: relative to its folder, or
// absolute on stdout ("") and when the two share no folder below the root.
std::string checkpoint_text(const std::string& target, const std::string& spec_file) {
  const fs::path abs = fs::absolute(target).lexically_normal();
  if (spec_file.empty()) return abs.string();
  const fs::path folder = fs::absolute(spec_file).lexically_normal().parent_path();
  auto a = abs.begin(), f = folder.begin();
  int common = 0;
  for (; a != abs.end() && f != folder.end() && *a == *f; ++a, ++f) ++common;
  const fs::path rel = abs.lexically_relative(folder);
  return rel.empty() || common <= 1 ? abs.string() : rel.string();
}

int import_main(const ImportArgs& args) {
  spec::HfImportOptions o;
  o.name = args.name;
  if (!args.dtype.empty()) {
    const auto d = dtype_parse(args.dtype);
    if (!d || (*d != DType::kF32 && *d != DType::kF16 && *d != DType::kBF16)) {
      fmt::print(stderr, "fk import-hf: --dtype: found '{}', expected fp32, fp16 or bf16\n", args.dtype);
      return 2;
    }
    o.dtype = d;
  }
  std::string target = args.checkpoint;
  if (!target.empty() && !fs::exists(target)) {
    fmt::print(stderr, "fk import-hf: --checkpoint: found '{}', expected an existing .safetensors file or folder\n",
               target);
    return 2;
  }
  if (target.empty()) target = spec::hf_checkpoint_beside(args.config);
  if (!target.empty()) o.checkpoint = checkpoint_text(target, args.output);

  spec::HfImport imported;
  try {
    imported = spec::hf_config_import_file(args.config, o);
  } catch (const Error& e) {
    fmt::print(stderr, "fk import-hf: {}\n", e.what());
    return 2;
  }
  const spec::Architecture& a = imported.arch;
  std::vector<std::string> header = {
      fmt::format("Imported by `fk import-hf` from {}.", args.config),
      "Every field is explicit; edit with care (a checkpoint must keep matching these sizes)."};
  const std::string text = spec::architecture_to_yaml(a, header);

  // What fk writes, fk must read: load the text back as the file it will become.
  const std::string as_file = args.output.empty() ? "<stdout>" : args.output;
  spec::Diagnostics diags;
  const auto root = spec::yaml_load_string(text, as_file, diags);
  if (!root || !spec::architecture_parse(*root, as_file, diags)) {
    fmt::print(stderr, "fk import-hf: internal error: the written spec does not load:\n{}{}", diags.to_string(), text);
    return 1;
  }
  if (args.output.empty()) {
    fmt::print("{}", text);
  } else {
    try {
      const fs::path folder = fs::path(args.output).parent_path();
      std::error_code ec;
      if (!folder.empty()) fs::create_directories(folder, ec);  // a failure shows in the write
      fs_write_file_atomic(args.output, text);
    } catch (const Error& e) {
      fmt::print(stderr, "fk import-hf: {}\n", e.what());
      return 2;
    }
    fmt::print(stderr, "fk import-hf: wrote {} ({}, {} layers{}{})\n", args.output, a.model_type, a.num_hidden_layers,
               a.moe.enabled() ? ", MoE" : "", a.checkpoint.empty() ? "" : ", checkpoint " + a.checkpoint);
  }
  if (!imported.defaults_used.empty())
    fmt::print(stderr, "fk import-hf: note: {} absent keys took the transformers class defaults (listed in source)\n",
               imported.defaults_used.size());
  return 0;
}

}  // namespace

void register_import_hf(CLI::App& app, int* status) {
  auto a = std::make_shared<ImportArgs>();
  CLI::App* sub = app.add_subcommand("import-hf", "Write the architecture spec of a HuggingFace config.json");
  sub->add_option("config", a->config, "config.json (transformers 4.x or 5.x)")->required();
  sub->add_option("-o,--output", a->output, "Spec file to write (default: stdout)");
  sub->add_option("--name", a->name, "Spec name (default: from _name_or_path, else the config's folder)");
  sub->add_option("--dtype", a->dtype, "fp32, fp16 or bf16 (default: the config's torch_dtype / dtype)");
  sub->add_option("--checkpoint", a->checkpoint,
                  "Checkpoint to name in the spec (default: the config's folder when it holds model.safetensors "
                  "or model.safetensors.index.json)");
  sub->callback([a, status] { *status = import_main(*a); });
}

}  // namespace fk::orchestrator
