#include "core/subprocess.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fk {
namespace {

using Clock = std::chrono::steady_clock;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

pid_t subprocess_fork(void (*after_fork)()) {
  sigset_t all, caller;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &caller);
  const pid_t pid = fork();
  const int fork_errno = errno;
  if (pid == 0) {
    if (after_fork != nullptr) after_fork();
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction sa = {};
      if (sigaction(sig, nullptr, &sa) != 0 || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
      sa = {};
      sa.sa_handler = SIG_DFL;
      sigemptyset(&sa.sa_mask);
      sigaction(sig, &sa, nullptr);
    }
  }
  pthread_sigmask(SIG_SETMASK, &caller, nullptr);
  errno = fork_errno;
  return pid;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGSYS: return "SIGSYS";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    case SIGTRAP: return "SIGTRAP";
    default: return fmt::format("signal {}", sig);
  }
}

std::string SubprocessResult::describe() const {
  if (!started) return fmt::format("could not start: {}", error);
  if (idle_timeout) return fmt::format("no output for the idle time limit after {:.1f} s", seconds);
  if (timed_out) return fmt::format("time limit reached after {:.1f} s", seconds);
  if (stopped) return fmt::format("stopped after {:.1f} s", seconds);
  if (signal != 0) return fmt::format("killed by {}", signal_name(signal));
  return fmt::format("exit status {}", exit_code);
}

SubprocessResult subprocess_run(const std::vector<std::string>& argv, const SubprocessOptions& o) {
  SubprocessResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int in[2], out[2], err[2], status_pipe[2];
  if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0 || pipe(status_pipe) != 0) {
    r.error = std::strerror(errno);
    return r;
  }
  fcntl(status_pipe[1], F_SETFD, FD_CLOEXEC);
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) env_store.emplace_back(*e);
  for (const auto& e : o.extra_env) env_store.push_back(e);
  std::vector<char*> envp, args;
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = argv;
  for (auto& a : argv_store) args.push_back(a.data());
  args.push_back(nullptr);
  const auto t0 = Clock::now();
  const pid_t pid = subprocess_fork(o.test_after_fork);
  if (pid < 0) {
    r.error = std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], status_pipe[0], status_pipe[1]}) close(fd);
    return r;
  }
  if (pid == 0) {  // child: own process group so a timeout kills everything it started
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(o.merge_stderr ? out[1] : err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], status_pipe[0]}) close(fd);
    if (!o.working_dir.empty() && chdir(o.working_dir.c_str()) != 0) {
      const int e = errno;
      (void)!write(status_pipe[1], &e, sizeof e);
      _exit(127);
    }
    execvpe(args[0], args.data(), envp.data());
    const int e = errno;
    (void)!write(status_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);
  for (int fd : {in[0], out[1], err[1], status_pipe[1]}) close(fd);
  int exec_errno = 0;
  if (read(status_pipe[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
    close(status_pipe[0]);
    waitpid(pid, nullptr, 0);
    for (int fd : {in[1], out[0], err[0]}) close(fd);
    r.error = fmt::format("{}: {}", argv[0], std::strerror(exec_errno));
    return r;
  }
  close(status_pipe[0]);
  r.started = true;
  set_nonblocking(in[1]);
  set_nonblocking(out[0]);
  set_nonblocking(err[0]);
  size_t written = 0;
  if (o.input.empty()) {
    close(in[1]);
    in[1] = -1;
  }
  std::string line;
  auto last_output = Clock::now();
  int out_fd = out[0];
  int err_fd = o.merge_stderr ? -1 : err[0];
  if (o.merge_stderr) close(err[0]);
  int status = 0;
  bool exited = false, killed = false;
  Clock::time_point kill_time, exit_time;
  char buf[65536];
  auto drain = [&](int& fd, bool is_out) {
    while (fd >= 0) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        last_output = Clock::now();
        std::string& dst = is_out ? r.output : r.error_output;
        if (dst.size() < o.max_output_bytes) dst.append(buf, static_cast<size_t>(n));
        if (is_out && o.on_line) {
          line.append(buf, static_cast<size_t>(n));
          for (size_t nl; (nl = line.find('\n')) != std::string::npos; line.erase(0, nl + 1))
            o.on_line(line.substr(0, nl));
        }
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        fd = -1;
      }
      break;
    }
  };
  while (true) {
    std::vector<pollfd> fds;
    if (out_fd >= 0) fds.push_back({out_fd, POLLIN, 0});
    if (err_fd >= 0) fds.push_back({err_fd, POLLIN, 0});
    if (in[1] >= 0) fds.push_back({in[1], POLLOUT, 0});
    if (!fds.empty()) poll(fds.data(), fds.size(), 50);
    else usleep(20000);
    if (in[1] >= 0) {
      const ssize_t n = write(in[1], o.input.data() + written, o.input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (written >= o.input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close(in[1]);
        in[1] = -1;
      }
    }
    drain(out_fd, true);
    drain(err_fd, false);
    const auto now = Clock::now();
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      exit_time = now;
    }
    if (exited) {
      if (out_fd < 0 && err_fd < 0) break;
      // Something the child started still holds the pipes: give it a moment, then end it.
      if (now - exit_time > std::chrono::seconds(1)) {
        kill(-pid, SIGKILL);
        break;
      }
      continue;
    }
    const double elapsed = std::chrono::duration<double>(now - t0).count();
    const double idle = std::chrono::duration<double>(now - last_output).count();
    const bool over_total = o.timeout_s > 0 && elapsed > o.timeout_s;
    const bool over_idle = o.idle_timeout_s > 0 && idle > o.idle_timeout_s;
    const int stop = o.stop != nullptr ? o.stop->load() : 0;
    if (stop >= 2) {
      r.stopped = true;
      kill(-pid, SIGKILL);
    } else if (!killed && (over_total || over_idle || stop == 1)) {
      r.timed_out = stop == 0;
      r.idle_timeout = stop == 0 && !over_total;
      r.stopped = stop != 0;
      kill(-pid, SIGTERM);
      killed = true;
      kill_time = now;
    } else if (killed && now - kill_time > std::chrono::seconds(2)) {
      kill(-pid, SIGKILL);
    }
  }
  if (!line.empty() && o.on_line) o.on_line(line);
  for (int fd : {in[1], out_fd, err_fd})
    if (fd >= 0) close(fd);
  if (!exited) waitpid(pid, &status, 0);
  kill(-pid, SIGKILL);  // nothing of the child's group outlives the call
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !r.timed_out && !r.stopped) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace fk
