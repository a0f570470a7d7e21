// `fk compare OLD NEW [--threshold 0.1] [--precision-factor 2] ...`: regressions in
// speed and precision between two runs of a campaign (campaign files or results
// folders) — the nightly gate (results/campaign/compare.h, docs/reports.md).
// Exit status: 0 no regression; 1 some regression; 2 bad input (unreadable source,
// no job in common, bad option, a damaged campaign file: each is read in full in a
// child process first, results/campaign/file_check.h).
#include "core/error.h"
#include "orchestrator/commands.h"
#include "results/campaign/compare.h"

#include <fmt/format.h>
#include <memory>

namespace fk::orchestrator {

void register_compare(CLI::App& app, int* status) {
  struct Options {
    std::string old_path, new_path;
    results::CompareOptions compare;
    bool verbose = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("compare", "List regressions of NEW against OLD (exit 1 when there is one)");
  sub->add_option("old", o->old_path, "Earlier campaign file or results folder")->required();
  sub->add_option("new", o->new_path, "Later campaign file or results folder")->required();
  sub->add_option("--threshold", o->compare.threshold, "Relative slowdown of the median that counts (default 0.1)")
      ->check(CLI::Range(0.0, 10.0));
  sub->add_option("--precision-factor", o->compare.precision_factor, "Error growth factor that counts (default 2)")
      ->check(CLI::Range(1.0, 1e6));
  sub->add_option("--precision-floor", o->compare.precision_floor,
                  "Absolute error growth below which nothing counts (default 1e-6)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--alpha", o->compare.alpha, "Significance level of the Mann-Whitney test (default 0.01)")
      ->check(CLI::Range(1e-12, 0.5));
  sub->add_option("--min-time", o->compare.min_time_s, "Timings with both medians below this many seconds are skipped (default 2e-6)")
      ->check(CLI::Range(0.0, 1e3));
  sub->add_option("--top1-drop", o->compare.top1_drop, "Drop of top-1 agreement that counts (default 0.1)")
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--noise-z", o->compare.noise_z, "Noise sigmas a timing must stand out of its pack by (default 4)")
      ->check(CLI::Range(0.0, 100.0));
  sub->add_flag("-v,--verbose", o->verbose, "Also list improvements");
  sub->callback([o, status] {
    try {
      results::SourceOptions so;
      so.check_files = true;  // a damaged file is named, never crashes or hangs fk compare
      const auto old_source = results::CampaignSource::open(o->old_path, so);
      const auto new_source = results::CampaignSource::open(o->new_path, so);
      for (const auto* s : {&old_source, &new_source})
        for (const std::string& p : s->problems()) fmt::print(stderr, "fk compare: left out {}\n", p);
      fmt::print("fk compare: OLD {} ({} jobs) vs NEW {} ({} jobs)\n", old_source.describe(), old_source.job_ids().size(),
                 new_source.describe(), new_source.job_ids().size());
      const results::CompareResult r = results::compare_campaigns(old_source, new_source, o->compare);
      fmt::print("{}", results::compare_format(r, o->compare, o->verbose));
      *status = r.regressions() > 0 ? 1 : 0;
    } catch (const Error& e) {
      fmt::print(stderr, "fk compare: {}\n", e.what());
      *status = 2;
    }
  });
}

}  // namespace fk::orchestrator
