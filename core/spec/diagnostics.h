// Diagnostics: what is wrong with a spec, and exactly where.
//
// Every message reads "file:line:column: field: message", the form editors and CI
// logs turn into links. Lines and columns are 1-based; 0 means unknown (the field
// is then reported against the file). Loaders collect all errors of a file instead
// of stopping at the first one.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fk::spec {

struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
  std::string to_string() const;
};

struct Diagnostic {
  SourcePos pos;
  std::string field;    // dotted path, e.g. "attention.sliding_window"
  std::string message;  // what was found and what was expected
  std::string to_string() const;
};

class Diagnostics {
 public:
  void error(SourcePos pos, std::string field, std::string message);
  bool ok() const { return items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  void append(const Diagnostics& other);
  // All messages, one per line.
  std::string to_string() const;

 private:
  std::vector<Diagnostic> items_;
};

// Where each field of a parsed spec was written (dotted path -> position).
class SourceMap {
 public:
  explicit SourceMap(std::string file = {}) : file_(std::move(file)) {}
  void set(const std::string& field, SourcePos pos) { pos_[field] = std::move(pos); }
  // The field's position, else the nearest enclosing field's, else the file itself.
  SourcePos at(const std::string& field) const;
  bool has(const std::string& field) const { return pos_.count(field) != 0; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, SourcePos> pos_;
};

// Edit distance (Levenshtein with transpositions) for "did you mean" hints.
int edit_distance(const std::string& a, const std::string& b);
// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fk::spec
