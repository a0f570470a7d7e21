// `fk report SOURCE [--html FILE] [--quiet]`: verdicts, speedups, precision, family
// geometric means and the campaign score of a campaign file or results folder, as
// text on stdout and optionally an HTML page with SVG charts (docs/reports.md).
// Exit status: 0 report written; 1 some job could not be read (left out, named) or
// the HTML file cannot be written; 2 bad input (a damaged campaign file among them:
// it is read in full in a child process first, results/campaign/file_check.h).
#include "core/error.h"
#include "core/fs_util.h"
#include "orchestrator/commands.h"
#include "results/campaign/report_data.h"
#include "results/campaign/report_html.h"
#include "results/campaign/report_text.h"

#include <fmt/format.h>
#include <memory>

namespace fk::orchestrator {

void register_report(CLI::App& app, int* status) {
  struct Options {
    std::string source;
    std::string html;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("report", "Report a campaign: verdicts, speedups, precision, score, charts");
  sub->add_option("source", o->source, "Campaign file (fk collect) or results folder")->required();
  sub->add_option("--html", o->html, "Also write an HTML page with SVG charts to this file");
  sub->add_flag("-q,--quiet", o->quiet, "Do not print the text report (with --html)");
  sub->callback([o, status] {
    results::ReportData data;
    try {
      results::SourceOptions so;
      so.check_files = true;  // a damaged file is named, never crashes or hangs fk report
      data = results::report_data_read(results::CampaignSource::open(o->source, so));
    } catch (const Error& e) {
      fmt::print(stderr, "fk report: {}\n", e.what());
      *status = 2;
      return;
    }
    if (!o->quiet || o->html.empty()) fmt::print("{}", results::report_text(data));
    *status = data.problems.empty() ? 0 : 1;
    if (!o->html.empty()) {
      try {
        fs_write_file_atomic(o->html, results::report_html(data));
        fmt::print("fk report: HTML written to {}\n", o->html);
      } catch (const Error& e) {
        fmt::print(stderr, "fk report: {}\n", e.what());
        *status = 1;
      }
    }
  });
}

}  // namespace fk::orchestrator
