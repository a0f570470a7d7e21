// `fk collect --results DIR [-o FILE]`: merges the job files of a results folder into
// one campaign file (results/campaign/merge.h; docs/results-schema.md).
// Exit status: 0 every job file merged; 1 some file left out (named; the campaign
// file is written without it) or the output cannot be written; 2 bad input.
// Every job file is first read in full by `fk _h5-check` in a child process with a
// time limit (results/campaign/file_check.h): a damaged file that would crash or hang
// HDF5 is named and left out, and the merge goes on without it. When the folder holds
// fk run's journal, each job file's content hash must also be the one fk run recorded
// when it accepted the job (orchestrator/journal.h): a file replaced or damaged since
// is left out the same way (fk run --resume runs its job again).
//
// `fk _h5-check FILE...` (hidden) is that child; fk report and fk compare use it too.
#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/journal.h"
#include "results/campaign/file_check.h"
#include "results/campaign/job_files.h"
#include "results/campaign/merge.h"

#include <filesystem>
#include <fmt/format.h>
#include <memory>

namespace fk::orchestrator {

void register_collect(CLI::App& app, int* status) {
  struct Options {
    std::string results;
    std::string output;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("collect", "Merge a results folder's job files into one campaign file");
  sub->add_option("--results", o->results, "Results folder (fk-runner --results)")->required();
  sub->add_option("-o,--output", o->output, "Campaign file to write (default: <results>/campaign.h5)");
  sub->add_flag("-q,--quiet", o->quiet, "Print only problems and the final line");
  sub->callback([o, status] {
    results::MergeOptions mo;
    mo.results_dir = o->results;
    mo.output = o->output;
    mo.on_file = [&](const std::string& file, const std::string& problem) {
      if (!problem.empty()) fmt::print(stderr, "fk collect: left out {}\n", problem);
      (void)file;
    };
    try {
      // The output of an earlier run is replaced, not read: it is not checked.
      const std::string output = o->output.empty() ? results::campaign_default_output(o->results) : o->output;
      std::vector<std::string> files;
      for (const std::string& f : results::job_files_scan(o->results).files) {
        std::error_code ec;
        if (!std::filesystem::equivalent(f, output, ec)) files.push_back(f);
      }
      mo.expected_hashes = Journal::job_hashes(Journal::read(o->results + "/.fk-journal.jsonl"));
      mo.damaged = results::file_check(files);
      const results::MergeResult r = results::campaign_merge(mo);
      if (!o->quiet && !r.skipped.empty())
        fmt::print("fk collect: skipped {} temporary or campaign file(s)\n", r.skipped.size());
      fmt::print("fk collect: {} job(s) ({} completed, {} failed), {} kernel rows, {} candidate rows -> {} in {:.2f} s{}\n",
                 r.jobs, r.completed, r.failed, r.kernel_rows, r.candidate_rows, r.output, r.seconds,
                 r.problems.empty() ? "" : fmt::format("; {} file(s) left out", r.problems.size()));
      *status = r.problems.empty() ? 0 : 1;
    } catch (const Error& e) {
      fmt::print(stderr, "fk collect: {}\n", e.what());
      *status = e.kind() == ErrorKind::kNotFound || e.kind() == ErrorKind::kInvalidArgument ? 2 : 1;
    }
  });

  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* check = app.add_subcommand(results::kFileCheckCommand, "Read results files in full (internal)");
  check->group("");  // hidden: the child process of collect, report and compare
  check->add_option("files", *files, "HDF5 files")->required();
  check->callback([files, status] { *status = results::file_check_main(*files); });
}

}  // namespace fk::orchestrator
