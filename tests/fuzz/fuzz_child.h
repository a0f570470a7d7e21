// Running one fuzz input in a child process, for targets whose code drives a library
// that may itself crash on bad input (libhdf5 on a damaged file: the reason fk collect
// reads job files in a child). The fuzz target forks, the child runs the input with its
// stderr captured, and the parent judges how it ended:
//
//   kOk            the child returned: the parent may run the input again in process,
//                  so that libFuzzer sees its coverage (a child's is lost);
//   kLibraryCrash  the child died (sanitizer report, signal) and the innermost frame of
//                  the report's first stack that is not the sanitizer runtime or libc
//                  lies in one of `library_modules` (e.g. "libhdf5"): acceptable;
//   kOurCrash      it died anywhere else — our code, libstdc++ (an uncaught
//                  exception), or without a report to tell: a bug;
//   kLibraryHang   it ran longer than the limit, and the stack it printed when told to
//                  stop (SIGABRT, then SIGKILL 5 s later) has its innermost frame in one
//                  of `library_modules`: acceptable (fk collect's per-file time limit
//                  covers it, as its child covers a crash);
//   kHang          it ran longer than the limit anywhere else, or printed no stack: a bug.
//
// The report needs a symbolizer (ASAN_SYMBOLIZER_PATH or llvm-symbolizer on PATH) to
// name the sanitizer's own frames; without one a library crash reads as kOurCrash.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace fk::fuzz {

enum class ChildEnd { kOk, kLibraryCrash, kOurCrash, kLibraryHang, kHang };

struct ChildResult {
  ChildEnd end = ChildEnd::kOk;
  std::string culprit;  // the frame blamed ("#1 0x... in H5HG_read (/lib/.../libhdf5...)"), if any
  std::string report;   // the child's stderr
};

// Runs `body` in a forked child (stderr to `log_path`), waiting at most `limit_s`.
// `body` must not throw; the child leaves with _exit(0) after it (no atexit handlers,
// no leak check). Aborts the process when fork fails.
ChildResult fuzz_child_run(const std::function<void()>& body, double limit_s,
                           const std::vector<std::string>& library_modules, const std::string& log_path);

// The frame of `report` blamed for the crash (see above), or "" when the report holds
// no stack.
std::string fuzz_child_culprit(const std::string& report);

}  // namespace fk::fuzz
