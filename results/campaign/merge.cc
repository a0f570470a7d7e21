#include "results/campaign/merge.h"

#include "core/clock.h"
#include "core/error.h"
#include "results/campaign/job_files.h"
#include "results/campaign/source.h"
#include "results/campaign/summary_tables.h"
#include "results/h5/file_sum.h"
#include "results/h5/h5.h"

#include <hdf5.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>

#ifndef FK_VERSION
#define FK_VERSION "unknown"
#endif

namespace fk::results {
namespace fs = std::filesystem;
namespace {

std::string hdf5_version() {
  unsigned maj = 0, min = 0, rel = 0;
  H5get_libversion(&maj, &min, &rel);
  return fmt::format("{}.{}.{}", maj, min, rel);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

}  // namespace

std::string campaign_default_output(const std::string& results_dir) {
  return (fs::path(results_dir) / "campaign.h5").string();
}

MergeResult campaign_merge(const MergeOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  MergeResult r;
  r.output = o.output.empty() ? campaign_default_output(o.results_dir) : o.output;
  const JobFileScan scan = job_files_scan(o.results_dir);
  r.skipped = scan.temporary;
  std::vector<std::string> files;
  for (const std::string& f : scan.files) {
    if (same_file(f, r.output)) {
      r.skipped.push_back(f);
      continue;
    }
    files.push_back(f);
  }
  if (files.empty()) fail(ErrorKind::kInvalidArgument, "{}: no job files (*.h5) to merge", o.results_dir);

  h5::Writer w(r.output);
  SummaryTables summary;
  std::map<std::string, std::string> seen;  // job id -> file
  std::set<std::string> campaigns, versions;
  for (const std::string& file : files) {
    std::string problem;
    if (auto bad = o.damaged.find(file); bad != o.damaged.end()) {
      problem = fmt::format("{}: {}", file, bad->second);
      r.problems.push_back(problem);
      if (o.on_file) o.on_file(file, problem);
      continue;
    }
    try {
      // Whole-file checksum and content hash first (no HDF5 parsing): a damaged or
      // replaced file is never opened.
      const std::string stem = fs::path(file).stem().string();
      const h5::FileSumCheck sum = h5::file_sum_check(file);
      if (sum.state == h5::FileSum::kMismatch) fail(ErrorKind::kIo, "{}: {}", file, sum.problem);
      if (const auto want = o.expected_hashes.find(stem); want != o.expected_hashes.end())
        if (const std::string differs = h5::file_sum_expect(sum, want->second); !differs.empty())
          fail(ErrorKind::kIo, "{}: {} (fk run --resume runs the job again)", file, differs);
      h5::File f = h5::File::open_read(file);
      const std::string format = f.has_attr("format") ? f.attr<std::string>("format") : "";
      if (format == kCampaignFormat) {
        r.skipped.push_back(file);
        if (o.on_file) o.on_file(file, "");
        continue;
      }
      if (format != kJobFormat) fail(ErrorKind::kInvalidArgument, "{}: not a FastKernels job file (format '{}')", file, format);
      const JobDigest d = job_digest_read(f, fs::path(file).stem().string());
      if (d.keys.job_id.empty() || d.keys.job_id.find('/') != std::string::npos)
        fail(ErrorKind::kInvalidArgument, "{}: unusable job id '{}'", file, d.keys.job_id);
      if (auto it = seen.find(d.keys.job_id); it != seen.end())
        fail(ErrorKind::kInvalidArgument, "{}: job {} is already merged from {}", file, d.keys.job_id, it->second);
      if (stem != d.keys.job_id)
        fail(ErrorKind::kInvalidArgument, "{}: holds job {}, not job {} as its name says (renamed or swapped?)", file,
             d.keys.job_id, stem);
      const std::string dest = "jobs/" + d.keys.job_id;
      if (o.copy_jobs) h5::copy_object(f, ".", w, dest);
      try {
        if (o.copy_jobs) w.open_group(dest).set_attr("source_hash", sum.hash);
        summary.add_job(d, f, fs::path(file).filename().string());
      } catch (...) {
        if (o.copy_jobs) h5::remove_object(w, dest);  // a job is in both places or in neither
        throw;
      }
      seen[d.keys.job_id] = file;
      campaigns.insert(d.keys.campaign);
      if (!d.fk_version.empty()) versions.insert(d.fk_version);
      ++r.jobs;
      (d.status == "completed" ? r.completed : r.failed) += 1;
    } catch (const Error& e) {
      problem = e.what();
      r.problems.push_back(problem);
    }
    if (o.on_file) o.on_file(file, problem);
  }
  r.kernel_rows = static_cast<int64_t>(summary.kernel_rows());
  r.candidate_rows = static_cast<int64_t>(summary.candidate_rows());
  h5::Group sg = w.require_group("summary");
  summary.write(sg);
  w.require_group("jobs");
  w.set_attr("format", kCampaignFormat);
  w.set_attr("schema_version", kCampaignSchemaVersion);
  w.set_attr("campaign", fmt::format("{}", fmt::join(campaigns, ",")));
  w.set_attr("created_at", utc_now_iso());
  w.set_attr("jobs", r.jobs);
  w.set_attr("jobs_completed", r.completed);
  w.set_attr("jobs_failed", r.failed);
  w.set_attr("files_left_out", static_cast<int64_t>(r.problems.size()));
  w.set_attr("results_dir", fs::absolute(o.results_dir).lexically_normal().string());
  w.set_attr("fk_version", o.fk_version.empty() ? std::string(FK_VERSION) : o.fk_version);
  w.set_attr("job_fk_versions", std::vector<std::string>(versions.begin(), versions.end()));
  w.set_attr("hdf5_version", hdf5_version());
  w.set_attr("jobs_copied", o.copy_jobs);
  w.commit();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace fk::results
