#include "core/spec/diagnostics.h"

#include <algorithm>
#include <fmt/format.h>

namespace fk::spec {

std::string SourcePos::to_string() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string Diagnostic::to_string() const {
  if (field.empty()) return fmt::format("{}: {}", pos.to_string(), message);
  return fmt::format("{}: {}: {}", pos.to_string(), field, message);
}

void Diagnostics::error(SourcePos pos, std::string field, std::string message) {
  items_.push_back({std::move(pos), std::move(field), std::move(message)});
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

std::string Diagnostics::to_string() const {
  std::string out;
  for (const auto& d : items_) {
    out += d.to_string();
    out += '\n';
  }
  return out;
}

SourcePos SourceMap::at(const std::string& field) const {
  std::string f = field;
  while (true) {
    auto it = pos_.find(f);
    if (it != pos_.end()) return it->second;
    const auto dot = f.find_last_of('.');
    if (dot == std::string::npos) break;
    f.resize(dot);
  }
  return SourcePos{file_, 0, 0};
}

int edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: insertions, deletions, substitutions and
  // transpositions of neighbours ("plna" -> "plan") each cost 1.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    const int d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A typo: at most a third of the word changed (at least 1, at most 4 edits), or one
  // name contains the other ("kv_heads" for "num_key_value_heads" is not caught: fine).
  const int limit = std::clamp(static_cast<int>(word.size()) / 3, 1, 4);
  if (best_d <= limit) return best;
  for (const auto& c : candidates) {
    if (word.size() >= 4 && (c.find(word) != std::string::npos || word.find(c) != std::string::npos))
      return c;
  }
  return {};
}

}  // namespace fk::spec
