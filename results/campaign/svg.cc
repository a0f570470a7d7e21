#include "results/campaign/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace fk::results {
namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kColors = sizeof(kPalette) / sizeof(kPalette[0]);

const char* color(size_t i) { return kPalette[i % kColors]; }

std::string open_svg(double w, double h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\"><title>{2}</title>"
      "<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\"/>"
      "<text x=\"{3:.0f}\" y=\"18\" font-size=\"14\" text-anchor=\"middle\" font-weight=\"bold\">{2}</text>",
      w, h, svg_escape(title), w / 2);
}

std::string text(double x, double y, const std::string& s, const char* anchor = "middle", const char* extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>", x, y, anchor, extra, svg_escape(s));
}

std::string legend(const std::vector<std::string>& names, double x, double y, bool lines = false,
                   const std::vector<bool>& dashed = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    const double yy = y + 14.0 * static_cast<double>(i);
    if (lines)
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                         x, yy - 4, x + 16, yy - 4, color(i),
                         i < dashed.size() && dashed[i] ? " stroke-dasharray=\"4 3\"" : "");
    else
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" height=\"10\" fill=\"{}\"/>", x, yy - 9, color(i));
    out += text(x + 20, yy, names[i], "start");
  }
  return out;
}

double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (m * p >= v) return m * p;
  return 10 * p;
}

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

}  // namespace

std::string svg_escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_bar_chart(const BarChart& c) {
  const double left = 60, right = 190, top = 34, bottom = 40;
  const double min_group_w = std::max(56.0, 16.0 * static_cast<double>(std::max<size_t>(1, c.series.size())) + 16);
  const double plot_w = std::max(360.0, min_group_w * static_cast<double>(c.groups.size()));
  const double group_w = plot_w / static_cast<double>(std::max<size_t>(1, c.groups.size()));
  const double plot_h = 220;
  const double w = left + plot_w + right, h = top + plot_h + bottom;
  double vmax = std::isfinite(c.reference) ? c.reference : 0;
  for (const auto& g : c.groups)
    for (double v : g.values)
      if (std::isfinite(v)) vmax = std::max(vmax, v);
  vmax = nice_max(vmax * 1.05);
  auto ypos = [&](double v) { return top + plot_h - plot_h * v / vmax; };
  std::string out = open_svg(w, h, c.title);
  for (int i = 0; i <= 5; ++i) {
    const double v = vmax * i / 5.0, y = ypos(v);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>", left, y,
                       left + plot_w, y);
    out += text(left - 6, y + 4, fmt::format("{:g}", v), "end");
  }
  const double bar_w = std::min(28.0, (group_w - 16) / static_cast<double>(std::max<size_t>(1, c.series.size())));
  const double bars_w = bar_w * static_cast<double>(std::max<size_t>(1, c.series.size()));
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const double x0 = left + group_w * static_cast<double>(g) + (group_w - bars_w) / 2;
    for (size_t s = 0; s < c.groups[g].values.size() && s < std::max<size_t>(1, c.series.size()); ++s) {
      const double v = c.groups[g].values[s];
      if (!std::isfinite(v) || v < 0) continue;
      const double x = x0 + bar_w * static_cast<double>(s), y = ypos(v);
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>",
                         x, y, std::max(1.0, bar_w - 2), top + plot_h - y, color(s),
                         svg_escape(fmt::format("{} {}: {:.3g}", c.groups[g].label,
                                                s < c.series.size() ? c.series[s] : "", v)));
    }
    out += text(x0 + bars_w / 2, top + plot_h + 16, shorten(c.groups[g].label, static_cast<size_t>(group_w / 7)));
  }
  if (std::isfinite(c.reference))
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333333\" stroke-dasharray=\"5 4\"/>",
                       left, ypos(c.reference), left + plot_w, ypos(c.reference));
  out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333333\"/>", left, top,
                     top + plot_h);
  out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333333\"/>", left,
                     top + plot_h, left + plot_w, top + plot_h);
  out += text(14, top + plot_h / 2, c.y_label, "middle",
              fmt::format(" transform=\"rotate(-90 14 {:.1f})\"", top + plot_h / 2).c_str());
  out += legend(c.series, left + plot_w + 14, top + 12);
  out += "</svg>";
  return out;
}

std::string svg_line_chart(const LineChart& c) {
  const double left = 70, right = 230, top = 34, bottom = 46, plot_w = 420, plot_h = 220;
  const double w = left + plot_w + right, h = top + plot_h + bottom;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  auto usable = [&](double x, double y) { return std::isfinite(x) && std::isfinite(y) && (!c.log_y || y > 0); };
  for (const auto& s : c.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (usable(s.x[i], s.y[i])) {
        xmin = std::min(xmin, s.x[i]);
        xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]);
        ymax = std::max(ymax, s.y[i]);
      }
  std::string out = open_svg(w, h, c.title);
  if (!std::isfinite(xmin)) {
    out += text(w / 2, h / 2, "no data");
    return out + "</svg>";
  }
  if (xmax == xmin) xmax = xmin + 1;
  double lo, hi;
  if (c.log_y) {
    lo = std::floor(std::log10(ymin));
    hi = std::ceil(std::log10(ymax));
    if (hi <= lo) hi = lo + 1;
  } else {
    lo = std::min(0.0, ymin);
    hi = nice_max(ymax * 1.05);
  }
  auto xpos = [&](double x) { return left + plot_w * (x - xmin) / (xmax - xmin); };
  auto ypos = [&](double y) {
    const double v = c.log_y ? std::log10(y) : y;
    return top + plot_h - plot_h * (v - lo) / (hi - lo);
  };
  const int yticks = c.log_y ? static_cast<int>(hi - lo) : 5;
  for (int i = 0; i <= yticks; ++i) {
    const double v = c.log_y ? std::pow(10.0, lo + i) : lo + (hi - lo) * i / yticks;
    const double y = ypos(v);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#dddddd\"/>", left, y,
                       left + plot_w, y);
    out += text(left - 6, y + 4, c.log_y ? fmt::format("1e{:d}", static_cast<int>(lo) + i) : fmt::format("{:g}", v), "end");
  }
  const int xticks = static_cast<int>(std::min(10.0, xmax - xmin));
  for (int i = 0; i <= xticks; ++i) {
    const double v = xmin + (xmax - xmin) * i / std::max(1, xticks);
    out += text(xpos(v), top + plot_h + 16, fmt::format("{:g}", std::round(v * 100) / 100));
  }
  std::vector<std::string> names;
  std::vector<bool> dashed;
  for (size_t s = 0; s < c.series.size(); ++s) {
    const LineSeries& ls = c.series[s];
    std::string points;
    for (size_t i = 0; i < ls.x.size() && i < ls.y.size(); ++i)
      if (usable(ls.x[i], ls.y[i])) points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", xpos(ls.x[i]), ypos(ls.y[i]));
    if (!points.empty())
      out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}><title>{}</title></polyline>",
                         points, color(s), ls.dashed ? " stroke-dasharray=\"4 3\"" : "", svg_escape(ls.name));
    names.push_back(shorten(ls.name, 32));
    dashed.push_back(ls.dashed);
  }
  out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333333\"/>", left, top,
                     top + plot_h);
  out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333333\"/>", left,
                     top + plot_h, left + plot_w, top + plot_h);
  out += text(left + plot_w / 2, top + plot_h + 36, c.x_label);
  out += text(14, top + plot_h / 2, c.y_label, "middle",
              fmt::format(" transform=\"rotate(-90 14 {:.1f})\"", top + plot_h / 2).c_str());
  out += legend(names, left + plot_w + 14, top + 12, true, dashed);
  return out + "</svg>";
}

std::string svg_stacked_bars(const StackChart& c) {
  const double label_w = 250, right = 130, top = 34, bottom = 40, row_h = 18, plot_w = 400;
  const double plot_h = row_h * static_cast<double>(std::max<size_t>(1, c.rows.size()));
  const double w = label_w + plot_w + right, h = top + plot_h + bottom;
  double vmax = 0;
  for (const auto& r : c.rows) {
    double sum = 0;
    for (double v : r.parts)
      if (std::isfinite(v) && v > 0) sum += v;
    vmax = std::max(vmax, sum);
  }
  vmax = nice_max(vmax);
  auto xpos = [&](double v) { return label_w + plot_w * v / vmax; };
  std::string out = open_svg(w, h, c.title);
  for (int i = 0; i <= 4; ++i) {
    const double v = vmax * i / 4.0;
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#dddddd\"/>", xpos(v), top,
                       top + plot_h);
    out += text(xpos(v), top + plot_h + 14, fmt::format("{:.3g}", v));
  }
  for (size_t r = 0; r < c.rows.size(); ++r) {
    const double y = top + row_h * static_cast<double>(r);
    out += text(label_w - 6, y + row_h - 5, shorten(c.rows[r].label, 40), "end");
    double acc = 0;
    for (size_t p = 0; p < c.rows[r].parts.size(); ++p) {
      const double v = c.rows[r].parts[p];
      if (!std::isfinite(v) || v <= 0) continue;
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>",
                         xpos(acc), y + 2, xpos(acc + v) - xpos(acc), row_h - 4, color(p),
                         svg_escape(fmt::format("{} {}: {:.3g}", c.rows[r].label, p < c.parts.size() ? c.parts[p] : "", v)));
      acc += v;
    }
  }
  out += text(label_w + plot_w / 2, top + plot_h + 32, c.x_label);
  out += legend(c.parts, label_w + plot_w + 14, top + 12);
  return out + "</svg>";
}

}  // namespace fk::results
