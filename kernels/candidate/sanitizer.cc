#include "kernels/candidate/sanitizer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

namespace fk::kernels {
namespace {

constexpr std::string_view kPrefix = "=========";
constexpr size_t kMaxDetails = 4;
constexpr size_t kMaxText = 480;

bool executable(const std::string& p) { return !p.empty() && access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// nullopt-like: false when the headline is not an error record.
bool classify(std::string_view headline, SanitizerFindingKind& kind) {
  const std::string h = lower(headline);
  if (h.rfind("compute-sanitizer", 0) == 0 || h.rfind("program hit", 0) == 0 || h.rfind("warning", 0) == 0 ||
      h.rfind("target application", 0) == 0 || has(h, "summary") || has(h, "leaked"))
    return false;
  if (has(h, "race")) kind = SanitizerFindingKind::kRace;
  else if (has(h, "uninitialized")) kind = SanitizerFindingKind::kUninitialized;
  else if (has(h, "barrier") || has(h, "divergent") || has(h, "synccheck")) kind = SanitizerFindingKind::kSync;
  else if (has(h, "invalid") || has(h, "misaligned") || has(h, "out of bounds") || has(h, "out-of-range") ||
           has(h, "malloc") || has(h, "free") || has(h, "address"))
    kind = SanitizerFindingKind::kMemory;
  else
    kind = SanitizerFindingKind::kOther;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f ? c : '?';
  }
  if (out.size() > kMaxText) out = out.substr(0, kMaxText - 3) + "...";
  return out;
}

int severity(SanitizerFindingKind k) {
  switch (k) {
    case SanitizerFindingKind::kMemory: return 4;
    case SanitizerFindingKind::kRace: return 3;
    case SanitizerFindingKind::kUninitialized: return 2;
    case SanitizerFindingKind::kSync: return 1;
    case SanitizerFindingKind::kOther: return 0;
  }
  return 0;
}

std::string_view kind_name(SanitizerFindingKind k) {
  switch (k) {
    case SanitizerFindingKind::kMemory: return "memory error";
    case SanitizerFindingKind::kRace: return "race";
    case SanitizerFindingKind::kUninitialized: return "read of uninitialised memory";
    case SanitizerFindingKind::kSync: return "synchronisation error";
    case SanitizerFindingKind::kOther: return "error";
  }
  return "error";
}

}  // namespace

std::string compute_sanitizer_path(std::string* why) {
  if (const char* env = std::getenv("FK_COMPUTE_SANITIZER"); env && *env) {
    if (executable(env)) return env;
    if (why) *why = fmt::format("FK_COMPUTE_SANITIZER={} is not an executable file", env);
    return "";
  }
  std::vector<std::string> places;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) places.push_back(std::string(home) + "/bin");
  places.push_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH")) {
    std::string_view p(path);
    while (!p.empty()) {
      const size_t colon = p.find(':');
      places.emplace_back(p.substr(0, colon));
      if (colon == std::string_view::npos) break;
      p.remove_prefix(colon + 1);
    }
  }
  for (const auto& dir : places) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/compute-sanitizer";
    if (executable(candidate)) return candidate;
  }
  if (why) *why = "compute-sanitizer was not found (FK_COMPUTE_SANITIZER, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH)";
  return "";
}

std::vector<SanitizerFinding> sanitizer_findings(std::string_view log, bool complete) {
  std::vector<SanitizerFinding> out;
  bool open = false;      // a record is being read
  bool counts = false;    // ... and it is an error record
  size_t details = 0;
  SanitizerFinding current;
  auto close = [&] {
    if (open && counts) out.push_back(current);
    open = counts = false;
  };
  while (!log.empty()) {
    const size_t nl = log.find('\n');
    const bool whole_line = nl != std::string_view::npos;
    std::string_view line = log.substr(0, nl);
    log.remove_prefix(whole_line ? nl + 1 : log.size());
    if (!whole_line && !complete) break;  // a line still being written
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    std::string_view content = line.substr(kPrefix.size());
    if (!content.empty() && content.front() == ' ') content.remove_prefix(1);
    if (trim(content).empty()) {
      close();  // the blank line that ends a record
      continue;
    }
    if (content.front() != ' ' && content.front() != '\t') {
      close();
      open = true;
      details = 0;
      current = SanitizerFinding{};
      counts = classify(trim(content), current.kind);
      current.text = printable(trim(content));
      continue;
    }
    if (!open || !counts || details >= kMaxDetails) continue;
    const std::string_view d = trim(content);
    if (d.rfind("Saved host backtrace", 0) == 0 || d.rfind("Host Frame", 0) == 0 || d.rfind("Device Frame", 0) == 0)
      continue;
    current.text = printable(current.text + "; " + std::string(d));
    ++details;
  }
  if (complete) close();
  return out;
}

VerdictReason sanitizer_verdict(const std::string& tool, const std::vector<SanitizerFinding>& findings) {
  VerdictReason v;
  if (findings.empty()) return v;
  size_t worst = 0;
  for (size_t i = 1; i < findings.size(); ++i)
    if (severity(findings[i].kind) > severity(findings[worst].kind)) worst = i;
  const SanitizerFindingKind k = findings[worst].kind;
  const Verdict verdict = k == SanitizerFindingKind::kMemory  ? Verdict::kIncorrectShape
                          : k == SanitizerFindingKind::kOther ? Verdict::kRuntimeError
                                                              : Verdict::kIncorrectNumerical;
  v.merge(verdict, fmt::format("compute-sanitizer {} reported {} finding(s); the first {}: {}", tool, findings.size(),
                               kind_name(k), findings[worst].text));
  return v;
}

}  // namespace fk::kernels
