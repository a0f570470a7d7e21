#include "orchestrator/local_executor.h"

#include "core/error.h"
#include "core/subprocess.h"
#include "orchestrator/launch.h"

#include <boost/asio/post.hpp>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fk::orchestrator {

LocalExecutor::LocalExecutor(boost::asio::io_context& io, int slots) : io_(io), slots_(slots), sigchld_(io, SIGCHLD) {
  watch_children();
}

LocalExecutor::~LocalExecutor() {
  for (auto& [id, c] : children_)
    if (c->pid > 0) kill(-c->pid, SIGKILL);
}

std::vector<std::string> LocalExecutor::command(const LaunchRequest& r) {
  LaunchOptions o;
  o.ranks = r.ranks;
  o.jobs_file = r.jobs_file;
  o.results_dir = r.results_dir;
  o.runner_args = r.runner_args;
  o.unbound = r.unbound;
  std::string ids;
  for (const auto& id : r.job_ids) ids += (ids.empty() ? "" : ",") + id;
  o.runner_args.insert(o.runner_args.begin(), {"--only", ids, "--attempt", r.attempt_id});
  if (!r.heartbeat.empty()) o.runner_args.insert(o.runner_args.end(), {"--heartbeat", r.heartbeat});
  if (!r.heartbeat.empty() && r.heartbeat_interval_s > 0)
    o.runner_args.insert(o.runner_args.end(), {"--heartbeat-interval", fmt::format("{:g}", r.heartbeat_interval_s)});
  return launch_command(o);
}

void LocalExecutor::watch_children() {
  sigchld_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    reap();
    watch_children();
  });
}

void LocalExecutor::reap() {
  for (auto it = children_.begin(); it != children_.end();) {
    auto c = it->second;
    int status = 0;
    const pid_t w = waitpid(c->pid, &status, WNOHANG);
    if (w != c->pid) {
      ++it;
      continue;
    }
    kill(-c->pid, SIGKILL);  // anything the attempt left behind in its group
    if (c->timer) c->timer->cancel();
    AttemptResult r;
    r.attempt_id = c->request.attempt_id;
    r.native_id = std::to_string(c->pid);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c->started).count();
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    if (c->timed_out) {
      r.end = AttemptEnd::kTimedOut;
      r.reason = fmt::format("time limit of {:.0f} s reached", c->request.time_limit_s);
    } else if (c->cancelled) {
      r.end = AttemptEnd::kCancelled;
      r.reason = "cancelled";
    } else if (r.exit_code == 0) {
      r.end = AttemptEnd::kSucceeded;
    } else {
      r.end = AttemptEnd::kFailed;
      r.reason = r.signal != 0 ? fmt::format("mpirun killed by {}", signal_name(r.signal))
                               : fmt::format("fk-runner exited {}", r.exit_code);
    }
    it = children_.erase(it);
    boost::asio::post(io_, [done = c->done, r] { done(r); });
  }
}

void LocalExecutor::launch(const LaunchRequest& request, Done done) {
  auto c = std::make_shared<Child>();
  c->request = request;
  c->done = std::move(done);
  c->started = std::chrono::steady_clock::now();
  const std::vector<std::string> cmd = command(request);
  std::vector<std::string> args_store = cmd;
  std::vector<char*> argv;
  for (auto& a : args_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log = ::open(request.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) fail(ErrorKind::kIo, "{}: cannot open the attempt log: {}", request.log_file, std::strerror(errno));
  const std::string header = fmt::format("# attempt {}: {}\n", request.attempt_id, fmt::join(cmd, " "));
  (void)!write(log, header.data(), header.size());
  const pid_t pid = subprocess_fork();  // no handler of ours (Asio's) runs in the child
  if (pid < 0) {
    ::close(log);
    fail(ErrorKind::kRuntime, "cannot start attempt {}: fork failed: {}", request.attempt_id, std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a time limit or cancel stops mpirun and its ranks
    dup2(log, 1);
    dup2(log, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    signal(SIGPIPE, SIG_DFL);
    if (geteuid() == 0) {
      setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
      setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    execvp(argv[0], argv.data());
    const std::string err = fmt::format("cannot run {}: {}\n", argv[0], std::strerror(errno));
    (void)!write(2, err.data(), err.size());
    _exit(127);
  }
  setpgid(pid, pid);
  ::close(log);
  c->pid = pid;
  if (request.time_limit_s > 0) {
    c->timer = std::make_unique<boost::asio::steady_timer>(io_);
    c->timer->expires_after(std::chrono::milliseconds(static_cast<int64_t>(request.time_limit_s * 1000)));
    std::weak_ptr<Child> weak = c;
    c->timer->async_wait([this, weak](const boost::system::error_code& ec) {
      if (ec) return;
      if (auto child = weak.lock()) stop(*child, true);
    });
  }
  children_[request.attempt_id] = c;
  reap();  // it may already have ended
}

void LocalExecutor::stop(Child& c, bool timed_out) {
  (timed_out ? c.timed_out : c.cancelled) = true;
  kill(-c.pid, SIGTERM);
  auto grace = std::make_shared<boost::asio::steady_timer>(io_, std::chrono::seconds(5));
  const pid_t pid = c.pid;
  grace->async_wait([grace, pid](const boost::system::error_code&) { kill(-pid, SIGKILL); });
}

void LocalExecutor::cancel(const std::string& attempt_id) {
  auto it = children_.find(attempt_id);
  if (it != children_.end()) stop(*it->second, false);
}

std::vector<std::pair<std::string, std::string>> LocalExecutor::running() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [id, c] : children_) out.emplace_back(id, std::to_string(c->pid));
  return out;
}

bool LocalExecutor::kill_stale(const std::string& native_id) {
  const pid_t pid = static_cast<pid_t>(std::atol(native_id.c_str()));
  if (pid <= 1) return false;
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid));
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (cmdline.find("mpirun") == std::string::npos && cmdline.find("fk-runner") == std::string::npos) return false;
  kill(-pid, SIGKILL);
  return true;
}

}  // namespace fk::orchestrator
