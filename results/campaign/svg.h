// Hand-written SVG charts for the HTML report: grouped bars, lines (log or linear y)
// and horizontal stacked bars. Each function returns one self-contained <svg>
// element (no scripts, no external fonts or styles, XML-escaped text), so the page
// works offline and parses as XML. NaN, infinite and (on log axes) non-positive
// values are skipped, never drawn at 0. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fk::results {

// Escapes &, <, >, " and ' for XML text and attribute values.
std::string svg_escape(std::string_view text);

struct BarGroup {
  std::string label;
  std::vector<double> values;  // one per series (NaN: no bar)
};
struct BarChart {
  std::string title, y_label;
  std::vector<std::string> series;
  std::vector<BarGroup> groups;
  double reference = 1.0;  // dashed horizontal line (NaN: none)
};
std::string svg_bar_chart(const BarChart& chart);

struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;
};
struct LineChart {
  std::string title, x_label, y_label;
  std::vector<LineSeries> series;
  bool log_y = true;
};
std::string svg_line_chart(const LineChart& chart);

struct StackRow {
  std::string label;
  std::vector<double> parts;  // one per part name, >= 0
};
struct StackChart {
  std::string title, x_label;
  std::vector<std::string> parts;
  std::vector<StackRow> rows;
};
std::string svg_stacked_bars(const StackChart& chart);

}  // namespace fk::results
