// The import driver: JSON text, gemma3's text_config, dtype, name, provenance, and
// the final validation. The per-model_type mappings are in hf_models*.cc.
#include "core/spec/hf_config.h"

#include "core/fs_util.h"
#include "core/spec/architecture_load.h"
#include "core/spec/hf_config_reader.h"
#include "core/spec/hf_models.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <string_view>

namespace fk::spec {
namespace {

namespace fs = std::filesystem;
using hf::ConfigReader;
using hf::Json;

// torch_dtype (4.x) / dtype (5.x).
std::optional<DType> read_dtype(ConfigReader& r) {
  std::optional<DType> out;
  for (const char* key : {"torch_dtype", "dtype"}) {
    const Json* v = r.get(key);
    if (v == nullptr || v->is_null()) continue;
    DType d = DType::kF32;
    if (*v == "float32") {
      d = DType::kF32;
    } else if (*v == "float16") {
      d = DType::kF16;
    } else if (*v == "bfloat16") {
      d = DType::kBF16;
    } else {
      r.fail_value(key, *v, "\"float32\", \"float16\" or \"bfloat16\"");
    }
    if (out && *out != d) r.fail_value(key, *v, fmt::format("the same dtype as torch_dtype ({})", dtype_name(*out)));
    out = d;
  }
  return out;
}

std::string name_from(const std::string& name_or_path, const std::string& file, const std::string& model_type) {
  std::string n;
  if (!name_or_path.empty()) n = hf_spec_name(fs::path(name_or_path).filename().string());
  if (n.empty()) {
    std::error_code ec;
    fs::path folder = fs::absolute(fs::path(file), ec).lexically_normal().parent_path();
    n = hf_spec_name(folder.filename().string());
  }
  if (n.empty()) n = hf_spec_name(model_type);
  return n;
}

bool looks_like_hub_id(const std::string& s) {
  static const std::regex hub("[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*");
  return std::regex_match(s, hub);
}

// "line:column" (1-based) of byte `offset` of `text`.
std::string line_column(const std::string& text, size_t offset) {
  int line = 1, column = 1;
  const size_t end = std::min(offset, text.size());
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

// A SAX pass that only follows the key path ("rope_parameters.factor",
// "layer_types[3]") and stops at the first error, recording where: nlohmann's
// out_of_range exception for a number no double holds (1e400) carries neither.
class JsonErrorLocator : public nlohmann::json_sax<Json> {
 public:
  size_t offset = 0;  // byte where the failing token starts
  std::string token;  // the failing token's text
  std::string field;  // the key path open at the error

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(size_t) override { return open(false); }
  bool key(string_t& k) override {
    levels_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(size_t position, const std::string& last_token, const nlohmann::detail::exception&) override {
    token = last_token;
    offset = position >= last_token.size() ? position - last_token.size() : 0;
    for (const Level& l : levels_) {
      if (l.array) {
        field += fmt::format("[{}]", l.index);
      } else if (!l.key.empty()) {
        field += (field.empty() ? "" : ".") + l.key;
      }
    }
    return false;
  }

 private:
  struct Level {
    bool array = false;
    size_t index = 0;  // arrays: values completed so far
    std::string key;   // objects: the key being read
  };
  bool value() {
    if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
    return true;
  }
  bool open(bool array) {
    levels_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return value();
  }
  std::vector<Level> levels_;
};

// Throws the first problem architecture_validate finds, naming the spec field.
void validate(const Architecture& a, const std::string& file) {
  Diagnostics diags;
  SourceMap where(file);
  ParseContext ctx{file, &diags, &where, ""};
  architecture_validate(a, ctx);
  if (diags.ok()) return;
  const Diagnostic& d = diags.items().front();
  hf::fail_field(file, d.field, fmt::format("{} (in the spec imported from this config)", d.message));
}

}  // namespace

std::vector<std::string> hf_supported_model_types() {
  std::vector<std::string> out;
  for (const auto& m : hf::model_importers()) out.emplace_back(m.model_type);
  out.emplace_back("gemma3");
  std::sort(out.begin(), out.end());
  return out;
}

std::string hf_spec_name(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (out.empty() && !std::isalnum(static_cast<unsigned char>(c))) continue;
    out += ok ? c : '-';
  }
  return out;
}

HfImport hf_config_import(const Json& config, const std::string& file, const HfImportOptions& options) {
  if (!config.is_object())
    hf::fail_field(file, "(top level)", fmt::format("found {}, expected a JSON object", hf::describe(config)));
  ConfigReader top(config, file, "", "PretrainedConfig");
  const Json* mt = top.get("model_type");
  if (mt == nullptr)
    top.fail("model_type", fmt::format("missing, expected one of [{}]", fmt::join(hf_supported_model_types(), ", ")));
  if (!mt->is_string())
    top.fail_value("model_type", *mt, fmt::format("one of [{}]", fmt::join(hf_supported_model_types(), ", ")));
  std::string model_type = mt->get<std::string>();

  HfImport out;
  Architecture& a = out.arch;
  std::string name_or_path;
  if (const Json* n = top.get("_name_or_path"); n != nullptr && n->is_string()) name_or_path = n->get<std::string>();
  if (const Json* v = top.get("transformers_version"); v != nullptr && v->is_string())
    out.transformers_version = v->get<std::string>();
  std::optional<DType> dtype = read_dtype(top);

  // gemma3 (Gemma3ForConditionalGeneration) wraps the text model in text_config; the
  // vision tower and the image-token plumbing are not part of the text model.
  const Json* text_config = nullptr;
  const Json* outer_tie = nullptr;
  std::string prefix;
  if (model_type == "gemma3") {
    text_config = top.get("text_config");
    if (text_config == nullptr || !text_config->is_object())
      top.fail("text_config", fmt::format("found {}, expected the text model's config (an object)",
                                          text_config ? hf::describe(*text_config) : "nothing"));
    hf::ignore_common(top);
    top.ignore({"vision_config", "mm_tokens_per_image", "boi_token_index", "eoi_token_index", "image_token_index",
                "image_token_id", "boi_token_id", "eoi_token_id"});
    outer_tie = top.get("tie_word_embeddings");  // checked against the text model's below
    top.finish();
    prefix = "text_config.";
    model_type = "gemma3_text";
  }
  const hf::ModelImporter* importer = hf::find_importer(model_type);
  if (importer == nullptr && hf::unsupported_reason(model_type) != nullptr)
    top.fail("model_type",
             fmt::format("\"{}\" cannot be imported: {}", model_type, hf::unsupported_reason(model_type)));
  if (importer == nullptr)
    top.fail_value("model_type", *mt,
                   fmt::format("one of [{}] (the model types fk import-hf maps exactly)",
                               fmt::join(hf_supported_model_types(), ", ")));

  ConfigReader r(text_config ? *text_config : config, file, prefix, importer->config_class);
  if (text_config) {
    if (const Json* tmt = r.get("model_type"); tmt != nullptr && *tmt != "gemma3_text")
      r.fail_value("model_type", *tmt, "\"gemma3_text\"");
    if (const auto inner = read_dtype(r)) dtype = inner;
  } else {
    r.ignore({"model_type", "_name_or_path", "transformers_version", "torch_dtype", "dtype"});
  }
  hf::ignore_common(r);
  a.model_type = model_type;
  a.family = importer->family;
  importer->fill(r, a);
  if (outer_tie != nullptr && !outer_tie->is_null() && *outer_tie != a.embedding.tied)
    top.fail_value("tie_word_embeddings", *outer_tie,
                   fmt::format("{} as text_config's (the wrapper and the text model must agree)", a.embedding.tied));
  if (a.model_family == "transformer")
    hf::check_heads(r, a, model_type == "gpt2" || model_type == "gptj" ? "n_head" : "num_attention_heads",
                    model_type == "gpt2" || model_type == "gptj" ? "n_head" : "num_key_value_heads");
  r.finish();

  out.defaults_used = top.defaults_used();
  for (const auto& d : r.defaults_used()) out.defaults_used.push_back(d);
  if (options.dtype) {
    a.dtype = *options.dtype;
  } else if (dtype) {
    a.dtype = *dtype;
  } else {
    a.dtype = DType::kF32;
    out.defaults_used.emplace_back("dtype=fp32 (none recorded; transformers loads float32)");
  }

  if (!options.name.empty()) {
    if (!std::regex_match(options.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*")))
      hf::fail_field(file, "--name",
                     fmt::format("found '{}', expected a name of letters, digits, '.', '_', '-' "
                                 "starting with a letter or digit",
                                 options.name));
    a.name = options.name;
  } else {
    a.name = name_from(name_or_path, file, model_type);
  }
  if (looks_like_hub_id(name_or_path)) a.hf_id = name_or_path;
  a.source = fmt::format("{}{} (HF config.json, model_type {}{}), imported by fk import-hf",
                         text_config ? "text_config of " : "", file, config.at("model_type").get<std::string>(),
                         out.transformers_version.empty() ? "" : ", transformers " + out.transformers_version);
  if (!out.defaults_used.empty())
    a.source +=
        fmt::format("; absent keys took {} defaults: {}", importer->config_class, fmt::join(out.defaults_used, ", "));
  a.checkpoint = options.checkpoint;
  a.preset = "full";
  validate(a, file);
  return out;
}

namespace {

// Python's json writes float('inf') and nan as the bare words Infinity, -Infinity and
// NaN, which JSON has not (Mamba2Config's time_step_limit: [0.0, Infinity]). They are
// read as the strings "Infinity", "-Infinity" and "NaN": a key that needs a number then
// says what it found, and an importer that takes an infinity reads the string. Lines
// stay where they were (columns after such a word move by 2).
std::string quote_nonfinite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (ch == '"') {
        in_string = false;
      }
      continue;
    }
    if (ch == '"') in_string = true;
    bool word = false;
    for (const std::string_view w : {"-Infinity", "Infinity", "NaN"}) {
      if (text.compare(i, w.size(), w) == 0) {
        out += '"';
        out += w;
        out += '"';
        i += w.size() - 1;
        word = true;
        break;
      }
    }
    if (!word) out += ch;
  }
  return out;
}

}  // namespace

HfImport hf_config_import_file(const std::string& file, const HfImportOptions& options) {
  const std::string text = quote_nonfinite(fs_read_file(file));
  Json config;
  try {
    config = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based: the byte where parsing stopped.
    std::string what = e.what();
    if (const auto at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}:{}: not valid JSON: {}", file,
                                                         line_column(text, e.byte > 0 ? e.byte - 1 : 0), what));
  } catch (const Json::exception& e) {
    // A number out of a double's range (nlohmann's out_of_range 406); find where.
    JsonErrorLocator where;
    Json::sax_parse(text, &where);
    throw Error(ErrorKind::kInvalidArgument,
                fmt::format("{}:{}: {}: found {}, expected a number a double can hold (magnitude below 1.8e308)", file,
                            line_column(text, where.offset), where.field.empty() ? "(top level)" : where.field,
                            where.token.empty() ? e.what() : where.token));
  }
  return hf_config_import(config, file, options);
}

std::string hf_checkpoint_beside(const std::string& config_file) {
  std::error_code ec;
  const fs::path folder = fs::absolute(fs::path(config_file), ec).lexically_normal().parent_path();
  if (fs::exists(folder / "model.safetensors.index.json", ec)) return folder.string();
  if (fs::exists(folder / "model.safetensors", ec)) return (folder / "model.safetensors").string();
  return "";
}

}  // namespace fk::spec
