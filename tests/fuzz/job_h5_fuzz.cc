// libFuzzer entry for the reader of results files (job files, HDF5): any bytes, as a
// job file in a results folder, must be judged by the check fk collect runs on every
// job file — verify_file (results/h5/verify.h), what `fk _h5-check` runs per file —
// and, when it passes, merged by campaign_merge (what fk collect's own process then
// does with the file) or refused with fk::Error; never a crash, a hang, an overflow or
// a sanitizer report in our code.
//
// Each input is written to a scratch folder twice: as it is, for the whole-file
// checksum's parser (file_sum_check), then with its first 512 bytes cleared and the
// checksum written again (file_sum_write), so that mutated files get past the
// checksum and reach HDF5's parser — the checksum would otherwise refuse nearly every
// mutation before HDF5 sees it. What is left to HDF5 is what its own checks cover (the
// 1.10-format metadata checksums, Fletcher32 on chunks) and the parsing of what they
// do not (contiguous raw data, the global heap of variable-length strings).
//
// One child process per input (fuzz_child.h). libhdf5 1.10.8 itself does crash on
// such files — the seed corpus's own damaged copies make H5HG_read memcpy gigabytes
// out of a global heap object whose length is damaged — and some damaged global heaps
// keep it busy in H5HG_read well past any sane limit; which is why fk collect reads
// every file in a child with a time limit. So does this target. The input runs in a
// forked child with a 10 s limit. A child that dies with the innermost non-sanitizer
// frame of its report in libhdf5 (or the compression libraries it calls) is an
// accepted libhdf5 crash; a child past the limit is told to stop (SIGABRT), prints
// where it was, and is an accepted libhdf5 hang when that is inside libhdf5; both are
// counted and printed at exit, not failures. A child that dies anywhere else, or hangs
// anywhere else, fails the target with the child's report (libFuzzer keeps the input
// as crash-*). An input whose child ended cleanly is run again in process, so that
// libFuzzer sees its coverage (a child's is lost). scripts/fuzz.sh runs this target
// with -timeout=20, so the 10 s limit is the one that ends a hang, and with a
// symbolizer, which the blame needs. Leaks of memory libhdf5 allocated are not ours to
// fix (its metadata cache loses 56 bytes opening some of the seeds): LeakSanitizer
// leaves out allocations with libhdf5 in their stack. Seeds: fk_fuzz_job_h5_seeds
// (job_h5_seeds.cc).
#include "core/error.h"
#include "fuzz_child.h"
#include "results/campaign/merge.h"
#include "results/h5/file_sum.h"
#include "results/h5/verify.h"

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

// Every seed holds this job (job_h5_seeds.cc), so the scratch file's name matches the
// job id inside and the merge gets past its name check to the copy.
constexpr const char* kJobId = "f0220bb0f022";
constexpr double kChildLimitS = 10;

struct Scratch {
  std::string dir, file, log;
};

int64_t g_library_crashes = 0, g_library_hangs = 0;

// Made once and never destroyed: the exit handler below still uses it.
const Scratch& scratch() {
  static const Scratch* s = new Scratch([] {
    // tmpfs where there is one: the merge fsyncs its output.
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm", ec) ? "/dev/shm" : std::filesystem::temp_directory_path();
    // Folders of earlier runs that ended without their exit handler (a crash found).
    for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("fk-fuzz-job-h5-", 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + 15, nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove_all(e, ec);
    }
    Scratch out;
    out.dir = (base / ("fk-fuzz-job-h5-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(out.dir, ec);
    std::filesystem::create_directories(out.dir);
    out.file = out.dir + "/" + kJobId + ".h5";
    out.log = out.dir + "/child.log";
    std::atexit([] {
      if (g_library_crashes > 0)
        std::fprintf(stderr, "fk_fuzz_job_h5: %lld input(s) crashed libhdf5 in the child (accepted)\n",
                     static_cast<long long>(g_library_crashes));
      if (g_library_hangs > 0)
        std::fprintf(stderr, "fk_fuzz_job_h5: %lld input(s) kept libhdf5 busy past the limit (accepted)\n",
                     static_cast<long long>(g_library_hangs));
      std::error_code ignored;
      std::filesystem::remove_all(scratch().dir, ignored);
    });
    return out;
  }());
  return *s;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  if (std::fclose(f) != 0) std::abort();
}

// What fk collect does with one job file: the checksum's parser on the bytes as they
// are, then (past a fresh checksum) the child's check and the merge.
void check(const Scratch& s, const uint8_t* data, size_t size) {
  write_file(s.file, data, size);
  (void)fk::h5::file_sum_check(s.file);  // never throws
  if (size <= fk::h5::kFileSumBlock) return;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  std::fill(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(fk::h5::kFileSumBlock), '\0');
  write_file(s.file, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  try {
    fk::h5::file_sum_write(s.file);
    const fk::h5::VerifyResult v = fk::h5::verify_file(s.file);
    if (!v.ok) return;  // left out by fk collect, as a damaged file
    fk::results::MergeOptions o;
    o.results_dir = s.dir;
    o.output = s.dir + "/campaign.h5";
    (void)fk::results::campaign_merge(o);  // per-file problems are returned, not thrown
  } catch (const fk::Error&) {
    // A refused file or an output that cannot be written: expected outcomes.
  } catch (...) {
    std::abort();  // only fk::Error may leave the readers
  }
}

}  // namespace

extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5\n"; }
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Scratch& s = scratch();
  const fk::fuzz::ChildResult r = fk::fuzz::fuzz_child_run([&] { check(s, data, size); }, kChildLimitS,
                                                           {"libhdf5", "libz.so", "libsz.so", "libaec.so"}, s.log);
  switch (r.end) {
    case fk::fuzz::ChildEnd::kOk:
      check(s, data, size);  // known not to crash: again, for the coverage
      return 0;
    case fk::fuzz::ChildEnd::kLibraryCrash:
      if (++g_library_crashes <= 3)
        std::fprintf(stderr, "fk_fuzz_job_h5: libhdf5 crashed (accepted): %s\n", r.culprit.c_str());
      return 0;
    case fk::fuzz::ChildEnd::kLibraryHang:
      if (++g_library_hangs <= 3)
        std::fprintf(stderr, "fk_fuzz_job_h5: libhdf5 ran past %.0f s (accepted): %s\n", kChildLimitS,
                     r.culprit.c_str());
      return 0;
    case fk::fuzz::ChildEnd::kHang:
      std::fprintf(stderr, "fk_fuzz_job_h5: the check ran past %.0f s (a hang; blamed: %s)\n%s", kChildLimitS,
                   r.culprit.empty() ? "no stack in the report" : r.culprit.c_str(), r.report.c_str());
      std::abort();
    case fk::fuzz::ChildEnd::kOurCrash:
      std::fprintf(stderr, "fk_fuzz_job_h5: the check crashed outside libhdf5 (blamed: %s)\n%s",
                   r.culprit.empty() ? "no stack in the report" : r.culprit.c_str(), r.report.c_str());
      if (!r.culprit.empty() && r.culprit.find(" in ") == std::string::npos)
        std::fprintf(stderr, "fk_fuzz_job_h5: the report names no functions, so the blame cannot tell the "
                             "sanitizer's own frames from ours: run with llvm-symbolizer on PATH or "
                             "ASAN_SYMBOLIZER_PATH set (scripts/fuzz.sh does)\n");
      std::abort();
  }
  return 0;
}
