// TextTable: left-aligned columns for terminal reports (a header row, then rows),
// separated by two spaces, trailing blanks trimmed. Plain value; no I/O.
#pragma once

#include <string>
#include <vector>

namespace fk::results {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t rows() const { return rows_.size() - 1; }
  // The table, one line per row, each line indented by `indent` spaces.
  std::string str(size_t indent = 2) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// Number formats shared by the reporters. All print "-" for NaN or infinity.
std::string fmt_sci(double v);           // 1.2e-03
std::string fmt_speedup(double v);       // 1.23x
std::string fmt_percent(double v);       // 97%  (v in [0, 1])
std::string fmt_seconds(double v);       // 12.3 us, 4.56 ms, 1.23 s
std::string fmt_fixed(double v, int decimals);

}  // namespace fk::results
