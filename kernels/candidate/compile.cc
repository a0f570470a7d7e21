#include "kernels/candidate/compile.h"

#include "core/fs_util.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "kernels/candidate/worker.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <set>

#ifndef FK_CXX_COMPILER
#define FK_CXX_COMPILER "c++"
#endif
#ifndef FK_NVCC
#define FK_NVCC "nvcc"
#endif
#ifndef FK_KERNEL_INCLUDE_DIR
#define FK_KERNEL_INCLUDE_DIR "."
#endif

namespace fk::kernels {
namespace fs = std::filesystem;

namespace {

std::string compiler_version(const std::string& compiler) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(compiler);
  if (it != cache.end()) return it->second;
  SubprocessOptions o;
  o.timeout_s = 30;
  const auto r = subprocess_run({compiler, "--version"}, o);
  const std::string v = r.ok() ? r.output : "unknown";
  cache[compiler] = v;
  return v;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// The first lines of a compiler log, for one-line reasons.
std::string first_error_line(const std::string& log) {
  for (const char* marker : {"error:", "error"}) {
    const size_t at = log.find(marker);
    if (at == std::string::npos) continue;
    const size_t begin = log.rfind('\n', at);
    const size_t end = log.find('\n', at);
    return log.substr(begin == std::string::npos ? 0 : begin + 1,
                      end == std::string::npos ? std::string::npos : end - (begin == std::string::npos ? 0 : begin + 1));
  }
  size_t pos = 0;
  while (pos < log.size()) {
    const size_t nl = log.find('\n', pos);
    const std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find("error") != std::string::npos) return line;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return log.substr(0, log.find('\n'));
}

}  // namespace

CompileOptions CompileOptions::defaults() {
  CompileOptions o;
  o.cxx = env_or("FK_CANDIDATE_CXX", FK_CXX_COMPILER);
  o.nvcc = env_or("FK_CANDIDATE_NVCC", FK_NVCC);
  o.include_dir = env_or("FK_KERNEL_INCLUDE", FK_KERNEL_INCLUDE_DIR);
  const char* home = std::getenv("HOME");
  const std::string xdg = env_or("XDG_CACHE_HOME", home ? std::string(home) + "/.cache" : "/tmp");
  o.cache_dir = env_or("FK_CACHE_DIR", xdg + "/fastkernels") + "/candidates";
  o.sandbox_exec = worker_executable_path();
  return o;
}

std::vector<std::string> candidate_compile_command(const CandidateManifest& m, const CompileOptions& o,
                                                   const std::string& output) {
  std::vector<std::string> cmd;
  if (m.backend == DeviceKind::kCpu) {
    cmd = {o.cxx, "-std=c++17", "-O3", "-fPIC", "-shared", "-pthread", "-I" + o.include_dir};
  } else {
    cmd = {o.nvcc,
           "-std=c++17",
           "-O3",
           "-gencode",
           fmt::format("arch=compute_{},code=sm_{}", o.cuda_arch, o.cuda_arch),
           "--expt-relaxed-constexpr",
           "--expt-extended-lambda",
           "-D__CUDA_NO_HALF_OPERATORS__",
           "-D__CUDA_NO_HALF_CONVERSIONS__",
           "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
           "-D__CUDA_NO_HALF2_OPERATORS__",
           "-Xcompiler",
           "-fPIC",
           "-shared",
           "-I" + o.include_dir};
  }
  for (const auto& f : m.flags) cmd.push_back(f);
  for (const auto& s : m.sources) cmd.push_back((fs::path(m.folder) / s).string());
  cmd.push_back("-o");
  cmd.push_back(output);
  if (m.backend == DeviceKind::kCuda) cmd.push_back("-lcudart");
  return cmd;
}

CompileResult candidate_compile(const CandidateManifest& m, const CompileOptions& o) {
  CompileResult r;
  const std::string compiler = m.backend == DeviceKind::kCpu ? o.cxx : o.nvcc;
  Hasher h;
  h.str("fk-candidate-build-v1").str(device_kind_name(m.backend)).str(m.op).str(m.entry);
  for (const auto& f : m.flags) h.str(f);
  try {
    // Every file of the folder (sources, headers they include, the manifest), in a
    // stable order, so that editing any of them rebuilds.
    static const std::set<std::string> kinds = {".h", ".hh", ".hpp", ".cuh", ".inl", ".c", ".cc",
                                                ".cpp", ".cxx", ".cu", ".yaml"};
    const std::string cache = fs::absolute(o.cache_dir).lexically_normal().string();
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(m.folder)) {
      const std::string p = e.path().lexically_normal().string();
      if (p.rfind(cache, 0) == 0) continue;  // a build cache kept inside the folder
      if (e.is_regular_file() && kinds.count(e.path().extension().string()) && e.file_size() < (size_t{8} << 20))
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) h.str(fs::relative(f, m.folder).string()).str(fs_read_file(f.string()));
    for (const char* header : {"fk_kernel.h", "fk_kernel_util.h"})
      h.str(fs_read_file((fs::path(o.include_dir) / header).string()));
  } catch (const std::exception& e) {
    r.reason = e.what();
    r.log = e.what();
    return r;
  }
  h.str(fmt::format("{}", fmt::join(candidate_compile_command(m, o, "OUT"), " "))).str(compiler_version(compiler));
  r.key = h.hex(16);
  const fs::path dir = fs::path(o.cache_dir) / r.key;
  const fs::path lib = dir / "candidate.so";
  r.library = lib.string();
  if (fs::exists(lib)) {
    r.ok = true;
    r.cached = true;
    try {
      r.log = fs_read_file((dir / "compile.log").string());
    } catch (...) {
    }
    r.command = candidate_compile_command(m, o, lib.string());
    return r;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    r.reason = fmt::format("cannot create the build cache folder {}: {}", dir.string(), ec.message());
    return r;
  }
  const std::string tmp = fs_temp_sibling(lib.string()) + ".so";
  r.command = candidate_compile_command(m, o, tmp);
  std::vector<std::string> argv = r.command;
  // The compiler's own scratch folder, one per build: two processes that build the same
  // candidate at once (two fk checks sharing a cache) must not remove each other's.
  const fs::path scratch = fs_temp_sibling((dir / "tmp").string());
  if (!o.sandbox_exec.empty()) {
    fs::create_directories(scratch, ec);
    // The scratch folder comes first: the sandbox makes it TMPDIR and HOME.
    std::vector<std::string> wrap = {o.sandbox_exec, "--exec", "--write", scratch.string(), "--write", dir.string(),
                                     "--read", m.folder, "--read", o.include_dir};
    // The compiler's installation (e.g. /usr/local/cuda for .../bin/nvcc).
    if (const fs::path t(compiler); t.is_absolute())
      wrap.insert(wrap.end(), {"--read", t.parent_path().parent_path().string()});
    wrap.push_back("--");
    argv.insert(argv.begin(), wrap.begin(), wrap.end());
  }
  SubprocessOptions so;
  so.timeout_s = o.timeout_s;
  so.working_dir = m.folder;
  const SubprocessResult run = subprocess_run(argv, so);
  fs::remove_all(scratch, ec);
  r.seconds = run.seconds;
  r.log = run.output;
  if (!run.ok()) {
    fs::remove(tmp, ec);
    r.reason = !run.started  ? fmt::format("compiler could not start: {}", run.error)
               : run.timed_out ? fmt::format("compilation exceeded its time limit of {:.0f} s", o.timeout_s)
                               : fmt::format("{}: {}", run.describe(), first_error_line(run.output));
    return r;
  }
  fs_write_file_atomic((dir / "compile.log").string(), run.output);
  fs::rename(tmp, lib, ec);
  if (ec) {
    r.reason = fmt::format("cannot place the library in the cache: {}", ec.message());
    return r;
  }
  r.command = candidate_compile_command(m, o, lib.string());
  r.ok = true;
  return r;
}

}  // namespace fk::kernels
