// fuzz_child_run (fuzz_child.h): fork, time limit, and the blame read off the child's
// sanitizer report.
#include "fuzz_child.h"

#include <sanitizer/common_interface_defs.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace fk::fuzz {

namespace {

// In the child: an abort (libstdc++'s terminate, a library's own) prints a stack like
// the sanitizers' reports, so that it can be blamed too.
void child_on_abort(int) {
  static const char marker[] = "==fuzz-child== SIGABRT\n";
  (void)!::write(2, marker, sizeof marker - 1);
  __sanitizer_print_stack_trace();
  ::_exit(128 + SIGABRT);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Frames of the sanitizer runtime and libFuzzer, of the abort machinery and of libc
// (interceptors included, whatever name they are symbolized by), skipped when
// looking for the culprit.
bool runtime_frame(const std::string& frame) {
  const size_t in = frame.find(" in ");
  const std::string function = in == std::string::npos ? "" : frame.substr(in + 4, frame.find(' ', in + 4) - in - 4);
  for (const char* p : {"__interceptor_", "___interceptor_", "__asan", "__sanitizer", "__ubsan", "__lsan", "fuzzer::"})
    if (starts_with(function, p)) return true;
  if (frame.find(" in fk::fuzz::(anonymous namespace)::child_on_abort") != std::string::npos) return true;
  for (const char* f : {"abort", "raise", "gsignal", "__GI_raise", "__GI_abort", "__pthread_kill_implementation",
                        "__pthread_kill_internal", "pthread_kill", "malloc", "calloc", "realloc", "free", "memcpy",
                        "memmove", "memset"})
    if (function == f) return true;
  return frame.find("compiler-rt/") != std::string::npos || frame.find("/libc.so") != std::string::npos;
}

}  // namespace

std::string fuzz_child_culprit(const std::string& report) {
  std::istringstream in(report);
  std::string line;
  bool in_stack = false;
  while (std::getline(in, line)) {
    const size_t hash = line.find_first_not_of(' ');
    const bool frame = hash != std::string::npos && line[hash] == '#' && line.find(" 0x") != std::string::npos;
    if (!frame) {
      if (in_stack) return "";  // the first stack ended without a frame of ours or a library's
      continue;
    }
    in_stack = true;
    if (!runtime_frame(line)) return line.substr(hash);
  }
  return "";
}

ChildResult fuzz_child_run(const std::function<void()>& body, double limit_s,
                           const std::vector<std::string>& library_modules, const std::string& log_path) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) std::abort();
  if (pid == 0) {
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) ::dup2(log, 2);
    std::signal(SIGABRT, child_on_abort);
    // libFuzzer's death callback would save the input as a crash of the whole target:
    // the parent decides that.
    __sanitizer_set_death_callback(nullptr);
    body();
    ::_exit(0);
  }
  ChildResult r;
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s) {
      // Asked to stop first, so that its abort handler prints where it hung.
      ::kill(pid, SIGABRT);
      const auto asked = std::chrono::steady_clock::now();
      while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() - asked > std::chrono::seconds(5)) {  // symbolizing takes a while
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      r.end = ChildEnd::kHang;
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  std::ifstream log(log_path, std::ios::binary);
  r.report.assign(std::istreambuf_iterator<char>(log), {});
  if (r.end == ChildEnd::kHang) {
    r.culprit = fuzz_child_culprit(r.report);
    for (const std::string& module : library_modules)
      if (!r.culprit.empty() && r.culprit.find(module) != std::string::npos) r.end = ChildEnd::kLibraryHang;
    return r;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return r;
  r.culprit = fuzz_child_culprit(r.report);
  r.end = ChildEnd::kOurCrash;
  for (const std::string& module : library_modules)
    if (!r.culprit.empty() && r.culprit.find(module) != std::string::npos) r.end = ChildEnd::kLibraryCrash;
  return r;
}

}  // namespace fk::fuzz
