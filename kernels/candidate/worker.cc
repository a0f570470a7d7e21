#include "kernels/candidate/worker.h"

#include "core/error.h"
#include "core/subprocess.h"
#include "kernels/candidate/channel.h"
#include "kernels/fk_kernel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <thread>

namespace fk::kernels {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace sandbox {

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, double timeout_s) {
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout_s > 0) {
    ts.tv_sec = static_cast<time_t>(timeout_s);
    ts.tv_nsec = static_cast<long>((timeout_s - static_cast<double>(ts.tv_sec)) * 1e9);
    tp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, tp, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

}  // namespace sandbox

namespace {

// Virtual size of every arena: the memfd is sparse, so only the pages a check touches
// cost memory; the bump allocator restarts at the front after each reset.
constexpr size_t kArenaBytes = size_t{64} << 30;

sandbox::Channel* channel(unsigned char* base) { return reinterpret_cast<sandbox::Channel*>(base); }

std::string sanitize(const char* p, size_t cap) {
  std::string s;
  for (size_t i = 0; i < cap && p[i] != '\0'; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    s += (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? static_cast<char>(c) : '?';
  }
  return s;
}

std::vector<std::string> worker_environment(int threads) {
  const std::string n = std::to_string(std::max(1, threads));
  // OpenBLAS starts with one thread (a process must be single-threaded to enter a user
  // namespace); the baseline worker raises it after entering the sandbox.
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C", "OMP_NUM_THREADS=" + n, "OPENBLAS_NUM_THREADS=1",
                                  // Idle OpenMP threads sleep: CPU time after a call is then the candidate's own.
                                  "OMP_WAIT_POLICY=PASSIVE"};
  // LD_LIBRARY_PATH is the supervisor's own (where its libraries live, e.g. a packed
  // OpenBLAS); the worker grants itself read access to those folders only.
  for (const char* keep : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"})
    if (const char* v = std::getenv(keep)) env.push_back(fmt::format("{}={}", keep, v));
  return env;
}

// The fields of /proc/<pid>/stat after the command's name, from field 3 (state) on;
// empty when the process is gone.
std::vector<std::string> proc_stat_fields(int pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(f, line);
  const size_t close = line.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos || close + 2 > line.size()) return out;
  std::istringstream rest(line.substr(close + 2));
  for (std::string field; rest >> field;) out.push_back(field);
  return out;
}

// The sanitizer's child that is the worker: the pid the worker wrote, when its parent
// is the sanitizer (a pid the candidate could forge is believed only then), else the
// sanitizer's one child found in /proc, else the sanitizer itself.
int sanitized_child(int sanitizer, int claimed) {
  auto parent_of = [](int pid) {
    const std::vector<std::string> f = proc_stat_fields(pid);
    return f.size() > 1 ? std::atoi(f[1].c_str()) : -1;  // field 4, ppid
  };
  if (claimed > 0 && parent_of(claimed) == sanitizer) return claimed;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::end(it); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (parent_of(std::atoi(name.c_str())) == sanitizer) return std::atoi(name.c_str());
  }
  return sanitizer;
}

}  // namespace

std::string worker_executable_path() {
  if (const char* env = std::getenv("FK_CANDIDATE_WORKER"); env && *env) return env;
  char buf[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  const fs::path self = n > 0 ? fs::path(std::string(buf, static_cast<size_t>(n))) : fs::path("fk");
  for (const auto& p : {self.parent_path() / "fk-candidate-worker",
                        self.parent_path().parent_path() / "runner" / "fk-candidate-worker"})
    if (fs::exists(p)) return p.string();
#ifdef FK_CANDIDATE_WORKER_PATH
  if (fs::exists(FK_CANDIDATE_WORKER_PATH)) return FK_CANDIDATE_WORKER_PATH;  // this build tree's
#endif
  return "fk-candidate-worker";
}

Worker::Worker(WorkerConfig config) : config_(std::move(config)) { spawn(); }

Worker::~Worker() {
  kill();
  if (config_.device != nullptr && device_arena_.data != nullptr) config_.device->free_shared_memory(device_arena_);
  if (base_ != nullptr) munmap(base_, size_);
  if (memfd_ >= 0) close(memfd_);
  std::error_code ec;
  if (!scratch_.empty()) fs::remove_all(scratch_, ec);
  if (!sanitizer_dir_.empty()) fs::remove_all(sanitizer_dir_, ec);
}

void Worker::spawn() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = fmt::format("{}/fk-worker-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(tmpl.data()) == nullptr)
    fail(ErrorKind::kRuntime, "cannot create a scratch folder for the candidate worker ({}): {}", tmpl,
         std::strerror(errno));
  scratch_ = tmpl;
  log_ = scratch_ + "/worker.log";
  memfd_ = static_cast<int>(syscall(SYS_memfd_create, "fk-arena", MFD_CLOEXEC));
  if (memfd_ < 0 || ftruncate(memfd_, static_cast<off_t>(kArenaBytes)) != 0)
    fail(ErrorKind::kRuntime, "cannot create the candidate worker's arena: {}", std::strerror(errno));
  void* p = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd_, 0);
  if (p == MAP_FAILED) fail(ErrorKind::kRuntime, "cannot map the candidate worker's arena: {}", std::strerror(errno));
  base_ = static_cast<unsigned char*>(p);
  size_ = kArenaBytes;
  used_ = sandbox::kChannelBytes;
  auto* ch = new (base_) sandbox::Channel();
  ch->magic = sandbox::kChannelMagic;
  if (config_.device != nullptr && config_.device->kind() != DeviceKind::kCpu) {
    size_t bytes = config_.device_arena_bytes;
    if (bytes == 0)
      bytes = std::min(size_t{8} << 30,
                       std::max(size_t{1} << 30, static_cast<size_t>(config_.device->facts().memory_bytes) / 8));
    device_arena_ = config_.device->share_memory(bytes);
    device_base_ = static_cast<unsigned char*>(device_arena_.data);
    if (device_arena_.handle.size() > sizeof ch->device_handle)
      fail(ErrorKind::kInternal, "backend {}: a shared-memory handle of {} bytes does not fit the worker channel",
           config_.device->name(), device_arena_.handle.size());
    ch->device_kind = static_cast<int32_t>(config_.device->kind());
    ch->device_index = config_.device->device().index;
    ch->device_bytes = device_arena_.bytes;
    ch->device_handle_bytes = static_cast<uint32_t>(device_arena_.handle.size());
    std::memcpy(ch->device_handle, device_arena_.handle.data(), device_arena_.handle.size());
    used_ = 0;
  }

  std::vector<std::string> args;
  if (sanitized()) {
    // The sanitizer's log goes to a folder of ours, outside the worker's scratch (which
    // the worker may write); the worker may read the sanitizer's own files, which its
    // library loads into the worker as it runs.
    std::string dir = fmt::format("{}/fk-sanitizer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir.data()) == nullptr)
      fail(ErrorKind::kRuntime, "cannot create a folder for compute-sanitizer's log ({}): {}", dir,
           std::strerror(errno));
    sanitizer_dir_ = dir;
    sanitizer_log_ = dir + "/compute-sanitizer.log";
    std::error_code ec;
    const fs::path tool = fs::canonical(config_.sanitizer, ec);
    args = {config_.sanitizer, "--tool", config_.sanitizer_tool, "--log-file", sanitizer_log_, "--print-limit", "20",
            "--target-processes", "application-only"};
    // CUPTI takes no second subscriber besides the sanitizer: the worker runs untraced.
    args.insert(args.end(), {config_.executable, "--untraced", "--read-also",
                             (ec ? fs::path(config_.sanitizer) : tool).parent_path().string()});
  } else {
    args = {config_.executable};
  }
  args.insert(args.end(), {"--arena-bytes", std::to_string(size_), "--scratch", scratch_, "--threads",
                           std::to_string(std::max(1, config_.threads))});
  if (config_.library.empty()) {
    args.insert(args.end(), {"--baseline"});
  } else {
    args.insert(args.end(), {"--library", config_.library, "--name", config_.name, "--op", config_.op, "--entry",
                             config_.entry});
  }
  std::vector<std::string> env = worker_environment(config_.threads);
  env.push_back("HOME=" + scratch_);
  env.push_back("TMPDIR=" + scratch_);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int logfd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (logfd < 0 || nullfd < 0) fail(ErrorKind::kRuntime, "cannot open {}: {}", log_, std::strerror(errno));

  // Signals stay blocked from fork to exec, so that no handler of this process (Asio's
  // SIGTERM/SIGINT relay) ever runs in the child.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = fork();
  if (pid == 0) {
    for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
    setpgid(0, 0);
    dup2(nullfd, 0);
    dup2(logfd, 1);
    dup2(logfd, 2);
    if (memfd_ == 3) {
      fcntl(3, F_SETFD, 0);  // already in place: keep it across exec
    } else {
      dup2(memfd_, 3);  // dup2 clears close-on-exec on the new descriptor
    }
    syscall(SYS_close_range, 4u, ~0u, 0u);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  close(logfd);
  close(nullfd);
  if (pid < 0) fail(ErrorKind::kRuntime, "cannot start {}: {}", config_.executable, std::strerror(fork_errno));
  setpgid(pid, pid);
  pid_ = pid;
  // The worker's first answer carries its sandbox report, before any candidate code exists.
  ch->kind = sandbox::RequestKind::kHello;
  if (auto r = request("starting")) {
    if (r->code != FK_OK) {
      kill();
      fail(ErrorKind::kRuntime, "the candidate worker could not enter its sandbox: {}", r->message);
    }
    sandbox_ = r->message;
    cpu_pid_ = pid_;
    if (sanitized()) cpu_pid_ = sanitized_child(pid_, static_cast<int>(ch->worker_pid));
  } else {
    fail(ErrorKind::kRuntime, "the candidate worker did not start: {}", failure());
  }
}

std::optional<WorkerReply> Worker::request(const std::string& what) {
  if (!alive()) return std::nullopt;
  doing_ = what;
  auto* ch = channel(base_);
  const uint32_t want = ++seq_;
  const auto t0 = Clock::now();
  ch->request_seq.store(want);
  if (ch->worker_sleeping.load()) sandbox::futex_wake(&ch->request_seq);
  auto last_tick = t0;
  uint64_t spins = 0;
  while (ch->reply_seq.load() != want) {
    ++spins;
    if ((spins & 0x3ff) != 0) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - t0).count();
    if (elapsed < 2e-3) continue;
    reap(false);
    if (!alive()) return std::nullopt;
    if (elapsed > config_.time_limit_s) {
      kill();
      end_ = WorkerEnd::kTimedOut;
      return std::nullopt;
    }
    if (config_.on_wait && now - last_tick > std::chrono::seconds(1)) {
      config_.on_wait();
      last_tick = now;
    }
    if (elapsed < 50e-3) {
      sched_yield();
      continue;
    }
    ch->supervisor_sleeping.store(1);
    const uint32_t cur = ch->reply_seq.load();
    if (cur != want) sandbox::futex_wait(&ch->reply_seq, cur, 0.02);
    ch->supervisor_sleeping.store(0);
  }
  const auto t1 = Clock::now();
  WorkerReply r;
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.code = ch->reply_code;
  r.message = sanitize(ch->reply_message, sandbox::kChannelMessage);
  if (on_device()) {
    r.traced = ch->work_traced != 0;
    r.work.span_s = static_cast<double>(ch->work_span_ns) * 1e-9;
    r.work.activities = ch->work_activities;
    r.work.off_stream = ch->work_off_stream;
    r.work.late = ch->work_late;
    r.work.dropped = ch->work_dropped;
    r.work.example = sanitize(ch->work_note, sandbox::kChannelNote);
    r.between = ch->work_between;
    r.audit = sanitize(ch->work_audit, sandbox::kChannelNote);
  }
  if (r.code == sandbox::kReplyDeviceFault) {
    // Its context is lost: nothing more can run in it.
    device_fault_ = r.message;
    kill();
    end_ = WorkerEnd::kDeviceFault;
  }
  return r;
}

std::optional<WorkerReply> Worker::load() {
  channel(base_)->kind = sandbox::RequestKind::kLoad;
  return request(config_.library.empty() ? "starting the baseline" : "loading the library (its constructors)");
}

std::optional<WorkerReply> Worker::ping() {
  channel(base_)->kind = sandbox::RequestKind::kPing;
  return request("waking up");
}

std::optional<WorkerReply> Worker::call(const std::string& op, const OpCall& call) {
  auto* ch = channel(base_);
  if (call.args.size() > sandbox::kChannelArgs || call.params.size() > sandbox::kChannelArgs || op.size() >= sizeof ch->op)
    fail(ErrorKind::kUnsupported, "op {} has more arguments than the worker channel carries", op);
  ch->kind = sandbox::RequestKind::kCall;
  std::memset(ch->op, 0, sizeof ch->op);
  std::memcpy(ch->op, op.data(), op.size());
  ch->nargs = static_cast<uint32_t>(call.args.size());
  ch->nparams = static_cast<uint32_t>(call.params.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor& t = call.args[i];
    sandbox::ArgDesc d{};
    if (t.defined()) {
      if (!t.is_contiguous() || !in_arena(t.data(), t.nbytes()) || t.dim() > static_cast<int64_t>(sandbox::kChannelDims))
        fail(ErrorKind::kInternal, "argument {} of {} is not a contiguous tensor in the worker's arena", i, op);
      d.defined = 1;
      d.offset = static_cast<uint64_t>(static_cast<unsigned char*>(t.data()) - (on_device() ? device_base_ : base_));
      d.bytes = t.nbytes();
      d.dtype = static_cast<int32_t>(t.dtype());
      d.ndim = static_cast<int32_t>(t.dim());
      for (int64_t k = 0; k < t.dim(); ++k) d.shape[k] = t.shape()[static_cast<size_t>(k)];
    }
    ch->args[i] = d;
  }
  for (size_t i = 0; i < call.params.size(); ++i) ch->params[i] = call.params[i];
  return request(fmt::format("calling {}", op));
}


WorkerCpu Worker::cpu() const {
  WorkerCpu t;
  if (pid_ <= 0 || !alive()) return t;
  const int pid = cpu_pid_ > 0 ? cpu_pid_ : pid_;
  std::error_code ec;
  const fs::path tasks = fmt::format("/proc/{}/task", pid);
  for (auto it = fs::directory_iterator(tasks, ec); !ec && it != fs::end(it); it.increment(ec)) {
    std::ifstream f(it->path() / "schedstat");
    double ns = 0;
    if (f >> ns) {
      t.live_threads_s += ns * 1e-9;
      if (it->path().filename() == std::to_string(pid)) t.main_thread_s = ns * 1e-9;
    }
    ++t.threads;
  }
  // utime and stime: fields 14 and 15, in clock ticks.
  if (const std::vector<std::string> f = proc_stat_fields(pid); f.size() > 12)
    t.process_s = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return t;
}

double WorkerCpu::used(const WorkerCpu& before, const WorkerCpu& after) {
  return std::max(after.live_threads_s - before.live_threads_s, after.process_s - before.process_s);
}

double WorkerCpu::used_off_main(const WorkerCpu& before, const WorkerCpu& after) {
  const double main = after.main_thread_s - before.main_thread_s;
  // The live threads' nanosecond counts; and, for threads that ended between the
  // readings (gone from the live sum), the process's time, less the two readings'
  // clock-tick rounding (10 ms each at 100 Hz), which would otherwise read as work.
  const double ticks = 2.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  const double live = (after.live_threads_s - before.live_threads_s) - main;
  const double process = (after.process_s - before.process_s) - main - ticks;
  return std::max({0.0, live, process});
}

void Worker::reap(bool block) {
  if (pid_ <= 0 || !alive()) return;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r != pid_) {
    if (r < 0 && errno == ECHILD) end_ = WorkerEnd::kLost;
    return;
  }
  if (WIFSIGNALED(status)) {
    end_ = WorkerEnd::kSignaled;
    signal_ = WTERMSIG(status);
  } else {
    end_ = WorkerEnd::kExited;
    exit_code_ = WEXITSTATUS(status);
  }
  ::kill(-pid_, SIGKILL);  // nothing of its group outlives it
}

void Worker::kill() {
  if (pid_ <= 0) return;
  if (alive() && sanitized() && cpu_pid_ > 0 && cpu_pid_ != pid_) {
    // The worker first; the sanitizer then writes the rest of its log and ends by
    // itself (given 5 s), so that its last record is not lost.
    ::kill(cpu_pid_, SIGKILL);
    const auto t0 = Clock::now();
    while (alive() && Clock::now() - t0 < std::chrono::seconds(5)) {
      reap(false);
      if (alive()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (alive()) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  ::kill(-pid_, SIGKILL);
  pid_ = -1;
}

std::vector<SanitizerFinding> Worker::sanitizer_findings() {
  if (!sanitized() || sanitizer_log_.empty()) return {};
  std::ifstream f(sanitizer_log_, std::ios::binary);
  std::string text;
  if (f) {
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  std::vector<SanitizerFinding> all = kernels::sanitizer_findings(text, !alive());
  if (all.size() <= findings_seen_) return {};
  std::vector<SanitizerFinding> fresh(all.begin() + static_cast<std::ptrdiff_t>(findings_seen_), all.end());
  findings_seen_ = all.size();
  return fresh;
}

std::string Worker::log_tail(const std::string& path, size_t bytes) const {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  f.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(0, f.tellg()));
  const size_t from = size > bytes ? size - bytes : 0;
  f.seekg(static_cast<std::streamoff>(from));
  std::string s(size - from, '\0');
  f.read(s.data(), static_cast<std::streamsize>(s.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return sanitize(s.c_str(), s.size());
}

std::string Worker::failure() const {
  std::string how;
  switch (end_) {
    case WorkerEnd::kRunning: return "";
    case WorkerEnd::kTimedOut: how = fmt::format("exceeded the time limit of {:g} s", config_.time_limit_s); break;
    case WorkerEnd::kSignaled: how = fmt::format("killed by {}", signal_name(signal_)); break;
    case WorkerEnd::kExited: how = fmt::format("ended (exit status {}) without answering", exit_code_); break;
    case WorkerEnd::kLost: how = "was lost (not a child any more)"; break;
    case WorkerEnd::kDeviceFault: how = fmt::format("hit a device fault ({})", device_fault_); break;
  }
  std::string s = doing_.empty() ? how : fmt::format("{} while {}", how, doing_);
  const std::string tail = log_tail(log_, 300);
  if (!tail.empty() && end_ != WorkerEnd::kTimedOut) s += fmt::format("; its output ends: {}", tail);
  if (sanitized()) {
    const std::string st = log_tail(sanitizer_log_, 300);
    if (!st.empty()) s += fmt::format("; compute-sanitizer's log ends: {}", st);
  }
  return s;
}

RemoteFailure worker_failure_verdict(const Worker& w, const std::string& what) {
  const std::string where = what.empty() ? "" : " on " + what;
  switch (w.end()) {
    case WorkerEnd::kTimedOut: return {"TIMEOUT", fmt::format("{}{}", w.failure(), where)};
    case WorkerEnd::kSignaled:
      if (w.signal() == SIGSYS && !w.sanitized())
        return {"REWARD_HACK", fmt::format("made a system call the sandbox forbids (a new process or program, "
                                           "network, ptrace, signalling another process...): {}{}",
                                           w.failure(), where)};
      if (w.signal() == SIGSYS)  // compute-sanitizer's library runs in the worker too: it may have made the call
        return {"CRASHED", fmt::format("made a system call the sandbox forbids, under compute-sanitizer (whose "
                                       "library in the worker may have made it; run without --sanitize to tell): "
                                       "{}{}",
                                       w.failure(), where)};
      return {"CRASHED", fmt::format("{}{}", w.failure(), where)};
    case WorkerEnd::kDeviceFault: return {"CRASHED", fmt::format("{}{}", w.failure(), where)};
    default: return {"CRASHED", fmt::format("the candidate's worker {}{}", w.failure(), where)};
  }
}


}  // namespace fk::kernels
