#include "results/campaign/file_check.h"

#include "core/error.h"
#include "core/subprocess.h"
#include "results/h5/verify.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

namespace fk::results {

namespace {

double per_file_limit(const FileCheckOptions& o) {
  if (o.per_file_timeout_s > 0) return o.per_file_timeout_s;
  if (const char* env = std::getenv("FK_H5_CHECK_TIMEOUT_S")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end != env && v > 0) return v;
  }
  return 120;
}

std::vector<std::string> checker_command(const FileCheckOptions& o) {
  if (!o.command.empty()) return o.command;
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) fail(ErrorKind::kIo, "cannot find this executable to check files with: {}", ec.message());
  return {self, kFileCheckCommand};
}

}  // namespace

std::map<std::string, std::string> file_check(const std::vector<std::string>& files, const FileCheckOptions& o) {
  std::map<std::string, std::string> problems;
  const std::vector<std::string> base = checker_command(o);
  const double limit = per_file_limit(o);
  size_t next = 0;  // first file not yet decided
  while (next < files.size()) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), files.begin() + static_cast<std::ptrdiff_t>(next), files.end());
    std::vector<bool> decided(files.size() - next, false);
    long current = -1;  // file (relative to next) the child is reading
    SubprocessOptions so;
    so.idle_timeout_s = limit;
    so.merge_stderr = false;
    so.on_line = [&](const std::string& line) {
      std::istringstream in(line);
      std::string word;
      long i = -1;
      if (!(in >> word >> i) || i < 0 || static_cast<size_t>(i) >= decided.size()) return;
      if (word == "begin") {
        current = i;
      } else if (word == "ok" || word == "bad") {
        decided[static_cast<size_t>(i)] = true;
        if (word == "bad") {
          std::string reason;
          std::getline(in >> std::ws, reason);
          problems[files[next + static_cast<size_t>(i)]] = reason.empty() ? "cannot be read" : reason;
        }
        current = -1;
      }
    };
    const SubprocessResult r = subprocess_run(argv, so);
    if (!r.started) fail(ErrorKind::kIo, "cannot start the file checker {}: {}", argv[0], r.error);
    const size_t done = static_cast<size_t>(std::find(decided.begin(), decided.end(), false) - decided.begin());
    if (done == decided.size()) break;  // every file decided (whatever the exit status)
    // The child ended early: blame the file it was reading (or, when it died before
    // beginning any, the first undecided one), then go on after it.
    const size_t blamed = current >= 0 ? static_cast<size_t>(current) : done;
    for (size_t i = done; i < blamed; ++i)  // undecided files before it (not expected)
      if (!decided[i]) problems[files[next + i]] = fmt::format("the file checker stopped ({})", r.describe());
    problems[files[next + blamed]] = r.timed_out || r.idle_timeout
                                         ? fmt::format("reading it took over {:g} s (damaged file?)", limit)
                                         : fmt::format("HDF5 failed reading it ({}; damaged file?)", r.describe());
    // Files after the blamed one that the child already decided keep their verdicts.
    size_t resume = blamed + 1;
    while (resume < decided.size() && decided[resume]) ++resume;
    next += resume;
  }
  return problems;
}

int file_check_main(const std::vector<std::string>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    std::printf("begin %zu\n", i);
    std::fflush(stdout);
    const h5::VerifyResult r = h5::verify_file(files[i]);
    if (r.ok) {
      std::printf("ok %zu\n", i);
    } else {
      std::string reason = r.problem;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      std::printf("bad %zu %s\n", i, reason.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace fk::results
