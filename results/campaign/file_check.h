// Checking results files from elsewhere before this process reads them: every file is
// read in full (verify_file, results/h5/verify.h) by a child process with a time
// limit, so a damaged file that makes HDF5 crash or loop takes down the child, not
// fk collect / fk report / fk compare.
//
// The child is `fk _h5-check FILE...` (file_check_main). It prints, per file, a line
// "begin <i>" before reading file i and "ok <i>" or "bad <i> <reason>" after. When the
// child dies or goes silent for longer than the per-file limit, the file it was reading
// is blamed ("HDF5 crashed reading it (killed by SIGSEGV)" / "reading it took over
// N s"), and a new child checks the files after it. A file is only blamed for its own
// crash, never for another's.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fk::results {

struct FileCheckOptions {
  // The checker command; the files are appended. Empty: {this executable, "_h5-check"}.
  std::vector<std::string> command;
  // Longest time one file may take (no output from the child for this long). 0: the
  // FK_H5_CHECK_TIMEOUT_S environment variable, else 120 s.
  double per_file_timeout_s = 0;
};

// Problems by file: only files that failed appear ("checksum verification failed...").
// Throws fk::Error kIo when the checker cannot be started at all.
std::map<std::string, std::string> file_check(const std::vector<std::string>& files,
                                              const FileCheckOptions& options = {});

// The child's side: checks `files` in order, printing the lines above to stdout
// (flushed after each). Returns 0.
int file_check_main(const std::vector<std::string>& files);

// The name of the hidden fk subcommand that runs file_check_main.
inline constexpr const char* kFileCheckCommand = "_h5-check";

}  // namespace fk::results
