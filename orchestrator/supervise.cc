#include "orchestrator/supervise.h"

#include "orchestrator/heartbeat.h"
#include "orchestrator/local_executor.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <fmt/format.h>
#include <algorithm>
#include <csignal>
#include <fstream>
#include <iterator>
#include <optional>

namespace fk::orchestrator {
namespace asio = boost::asio;
namespace {

// Hands the lines appended to the attempt's log file to `on_line` (the local executor
// writes the attempt's output there), without the executor's "# attempt" header.
class LogTail {
 public:
  LogTail(std::string path, std::function<void(const std::string&)> on_line)
      : path_(std::move(path)), on_line_(std::move(on_line)) {}
  void poll() {
    if (!on_line_) return;
    std::ifstream in(path_, std::ios::binary);
    if (!in || !in.seekg(static_cast<std::streamoff>(offset_))) return;
    const std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos; partial_.erase(0, nl + 1))
      emit(partial_.substr(0, nl));
  }
  void finish() {
    poll();
    if (!partial_.empty()) emit(partial_);
    partial_.clear();
  }

 private:
  void emit(const std::string& line) {
    if (line.rfind("# attempt ", 0) != 0) on_line_(line);
  }
  std::string path_;
  std::function<void(const std::string&)> on_line_;
  size_t offset_ = 0;
  std::string partial_;
};

}  // namespace

SupervisedAttempt supervise_local(LaunchRequest request, const SuperviseOptions& o) {
  asio::io_context io;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  LocalExecutor executor(io, std::max(1, request.ranks));
  HeartbeatServer heartbeat(io, "127.0.0.1");
  request.heartbeat = heartbeat.address("127.0.0.1");
  request.heartbeat_interval_s = heartbeat_interval_for(o.heartbeat_timeout_s);
  SupervisedAttempt out;
  std::optional<AttemptResult> ended;
  std::string hung;
  LogTail tail(request.log_file, o.on_line);

  // The first signal stops the attempt (its process group); a second stops waiting, and
  // the executor kills the group with SIGKILL as it goes.
  std::function<void()> wait_for_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (out.signal != 0) {
        io.stop();
        return;
      }
      out.signal = sig;
      executor.cancel(request.attempt_id);
      wait_for_signal();
    });
  };
  // Five times a second: new output lines; silence beyond the heartbeat timeout.
  asio::steady_timer watchdog(io);
  std::function<void()> watch = [&] {
    watchdog.expires_after(std::chrono::milliseconds(200));
    watchdog.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      tail.poll();
      const double silent = heartbeat.silence_s(request.attempt_id);
      if (o.heartbeat_timeout_s > 0 && silent > o.heartbeat_timeout_s && hung.empty()) {
        hung = fmt::format("no heartbeat for {:.0f} s: hung, stopped", silent);
        executor.cancel(request.attempt_id);
      }
      watch();
    });
  };

  heartbeat.expect(request.attempt_id);
  executor.launch(request, [&](const AttemptResult& r) {
    ended = r;
    io.stop();
  });
  wait_for_signal();
  watch();
  io.run();
  tail.finish();
  if (ended) {
    out.result = *ended;
  } else {  // a second signal: the executor's destructor kills the group below
    out.result.attempt_id = request.attempt_id;
    out.result.end = AttemptEnd::kCancelled;
    out.result.native_id = executor.native_id(request.attempt_id);
    out.result.reason = "killed: a second signal";
  }
  if (!hung.empty() && out.signal == 0) {
    out.result.end = AttemptEnd::kTimedOut;
    out.result.reason = hung;
  }
  return out;
}

}  // namespace fk::orchestrator
