#include "orchestrator/slurm/attempt_files.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace fk::orchestrator {
namespace {

std::optional<std::string> read_small(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::vector<std::string> words(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<int> to_int(const std::string& s) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<ExitRecord> exit_record_parse(std::string_view text) {
  const auto w = words(text.substr(0, text.find('\n')));
  if (w.size() < 3) return std::nullopt;
  ExitRecord r;
  const auto code = to_int(w[0]), restarts = to_int(w[1]);
  if (!code || !restarts) return std::nullopt;
  r.exit_code = *code;
  r.restarts = *restarts;
  r.job_id = w[2];
  r.terminated = w.size() > 3 && w[3] == "1";
  return r;
}

std::optional<StartRecord> start_record_parse(std::string_view text) {
  std::optional<StartRecord> last;
  int runs = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    const auto w = words(line);
    if (w.size() < 2) continue;
    const auto restarts = to_int(w[1]);
    if (!restarts) continue;
    StartRecord r;
    r.job_id = w[0];
    r.restarts = *restarts;
    if (w.size() > 2) r.host = w[2];
    if (w.size() > 3) r.epoch_s = std::atof(w[3].c_str());
    last = r;
    ++runs;
  }
  if (last) last->runs = runs;
  return last;
}

std::optional<ExitRecord> exit_record_read(const AttemptFiles& files) {
  const auto text = read_small(files.exit_code());
  return text ? exit_record_parse(*text) : std::nullopt;
}

std::optional<StartRecord> start_record_read(const AttemptFiles& files) {
  std::ifstream in(files.started(), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream all;
  all << in.rdbuf();
  return start_record_parse(all.str());
}

std::string exit_record_format(const ExitRecord& r) {
  return fmt::format("{} {} {} {}\n", r.exit_code, r.restarts, r.job_id, r.terminated ? 1 : 0);
}

}  // namespace fk::orchestrator
