#include "spec/spec_test_util.h"

#include "core/error.h"
#include "core/spec/architecture_write.h"
#include "core/spec/hf_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace fk::testing {
namespace fs = std::filesystem;

TempSpecs::TempSpecs() {
  std::random_device rd;
  root_ = (fs::temp_directory_path() / ("fk-spec-test-" + std::to_string(rd()))).string();
  for (const char* sub : {"architectures", "workloads", "campaigns"}) fs::create_directories(fs::path(root_) / sub);
}

TempSpecs::~TempSpecs() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string TempSpecs::write(const std::string& relative, const std::string& text) const {
  const fs::path p = fs::path(root_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p.string();
}

std::string base_architecture_yaml() {
  return "kind: architecture\n"
         "name: test-model\n"
         "model_type: llama\n"
         "source: unit test\n"
         "dtype: bf16\n"
         "hidden_size: 4096\n"
         "num_hidden_layers: 32\n"
         "num_attention_heads: 32\n"
         "num_key_value_heads: 8\n"
         "head_dim: 128\n"
         "intermediate_size: 14336\n"
         "vocab_size: 32000\n"
         "max_position_embeddings: 8192\n"
         "attention:\n"
         "  causal: true\n"
         "norm:\n"
         "  kind: rmsnorm\n"
         "  eps: 1.0e-05\n"
         "mlp:\n"
         "  activation: silu\n"
         "position:\n"
         "  kind: rope\n"
         "  rope_theta: 10000.0\n"
         "presets:\n"
         "  tiny:\n"
         "    hidden_size: 128\n"
         "    num_hidden_layers: 2\n"
         "    num_attention_heads: 8\n"
         "    num_key_value_heads: 2\n"
         "    head_dim: 16\n"
         "    intermediate_size: 256\n"
         "    vocab_size: 512\n";
}

std::string replace_line(const std::string& text, const std::string& prefix, const std::string& line) {
  std::istringstream in(text);
  std::string out, l;
  bool done = false;
  while (std::getline(in, l)) {
    const size_t indent = l.find_first_not_of(' ');
    if (!done && indent != std::string::npos && l.compare(indent, prefix.size(), prefix) == 0) {
      out += l.substr(0, indent) + line + "\n";
      done = true;
    } else {
      out += l + "\n";
    }
  }
  EXPECT_TRUE(done) << "no line starts with '" << prefix << "'";
  return out;
}

int line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    ++n;
    const size_t indent = l.find_first_not_of(' ');
    if (indent != std::string::npos && l.compare(indent, prefix.size(), prefix) == 0) return n;
  }
  ADD_FAILURE() << "no line starts with '" << prefix << "'";
  return -1;
}

spec::Diagnostics parse_errors(const std::string& text, const std::string& name) {
  spec::Diagnostics diags;
  spec::spec_load_string(text, name, diags);
  return diags;
}

std::string load_errors(const std::string& text, const std::string& name) {
  spec::Diagnostics diags;
  const auto doc = spec::spec_load_string(text, name, diags);
  return doc ? "" : diags.to_string();
}

spec::ArchitectureDoc shipped_architecture(const std::string& name) {
  spec::Diagnostics d;
  const auto doc = spec::spec_load_string(shipped_architecture_text(name), name + ".yaml", d);
  if (!doc) throw std::runtime_error(name + ": " + d.to_string());
  return std::get<spec::ArchitectureDoc>(*doc);
}

std::string shipped_architecture_text(const std::string& name) {
  const std::string path = std::string(FK_SOURCE_DIR) + "/specs/architectures/" + name + ".yaml";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "no shipped spec " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "not in the text: " << from;
  if (at == std::string::npos) return text;
  return text.replace(at, from.size(), to);
}

std::string expect_round_trip(const spec::Architecture& a) {
  const std::string written = spec::architecture_to_yaml(a);
  spec::Diagnostics d;
  const auto back = spec::spec_load_string(written, "w.yaml", d);
  EXPECT_TRUE(back.has_value()) << d.to_string() << written;
  if (back.has_value()) {
    EXPECT_EQ(std::get<spec::ArchitectureDoc>(*back).full, a);
  }
  return written;
}

spec::Workload test_workload(int64_t batch, int64_t seq_len) {
  spec::Workload w;
  w.name = "w";
  w.batch = batch;
  w.seq_len = seq_len;
  return w;
}

std::string hf_import_error(const nlohmann::json& config, const std::string& file) {
  try {
    spec::hf_config_import(config, file);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

void expect_hf_import_errors(const nlohmann::json& base, const std::vector<BadHfKey>& cases, const std::string& file) {
  for (const BadHfKey& c : cases) {
    nlohmann::json bad = base;
    bad[c.key] = c.value;
    const std::string e = hf_import_error(bad, file);
    EXPECT_NE(e.find(c.key), std::string::npos) << c.key << ": " << e;
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.key << ": " << e;
  }
}

void expect_same_model(const spec::Architecture& got, const spec::Architecture& want) {
  EXPECT_EQ(got.sections, want.sections);
  EXPECT_EQ(got.moe, want.moe);
  const auto attention = [](spec::AttentionSpec at) {
    if (at.layer_types == std::vector<spec::LayerType>{spec::LayerType::kFull}) at.layer_types.clear();
    return at;
  };
  EXPECT_EQ(attention(got.attention), attention(want.attention));
  EXPECT_EQ(got.position, want.position);
  EXPECT_EQ(got.norm, want.norm);
  EXPECT_EQ(got.mlp, want.mlp);
  EXPECT_EQ(got.head, want.head);
  EXPECT_EQ(got.embedding, want.embedding);
  for (auto [field, g, w] : {std::tuple{"hidden_size", got.hidden_size, want.hidden_size},
                             {"num_hidden_layers", got.num_hidden_layers, want.num_hidden_layers},
                             {"num_attention_heads", got.num_attention_heads, want.num_attention_heads},
                             {"num_key_value_heads", got.num_key_value_heads, want.num_key_value_heads},
                             {"head_dim", got.head_dim, want.head_dim},
                             {"intermediate_size", got.intermediate_size, want.intermediate_size},
                             {"vocab_size", got.vocab_size, want.vocab_size},
                             {"max_position_embeddings", got.max_position_embeddings, want.max_position_embeddings}})
    EXPECT_EQ(g, w) << field;
}

}  // namespace fk::testing
