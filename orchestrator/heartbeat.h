// Heartbeats from fk-runner to the orchestrator: a TCP listener on the io_context
// that reads JSON lines ({"attempt": ..., "event": "alive" | "job_started" |
// "job_finished", "job": ..., "rank": ...}) and remembers, per attempt, when it last
// heard from it and which job it is on. fk-runner sends "alive" only while it makes
// progress (runner/heartbeat.h), so silence means a dead or hung attempt.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace fk::orchestrator {

// The interval fk-runner sends heartbeats at under a silence timeout of `timeout_s`:
// five chances per timeout window, at most every 2 s (its default), at least every 0.2 s;
// 0 (fk-runner's default) when there is no timeout. A busy node that delays one beat
// then does not stop a working attempt.
double heartbeat_interval_for(double timeout_s);

class HeartbeatServer {
 public:
  using Clock = std::chrono::steady_clock;
  // Listens on `bind_address` (e.g. "127.0.0.1", or "0.0.0.0" for remote nodes), on an
  // ephemeral port.
  HeartbeatServer(boost::asio::io_context& io, const std::string& bind_address);
  // "host:port" to give fk-runner (`host` is what remote ranks should connect to).
  std::string address(const std::string& host) const;
  // Starts the silence clock of an attempt (launch time counts as a heartbeat).
  void expect(const std::string& attempt);
  void forget(const std::string& attempt);
  // Seconds since the attempt was last heard from.
  double silence_s(const std::string& attempt) const;
  // Called for every event line (after the bookkeeping), e.g. to log progress.
  void on_event(std::function<void(const std::string& attempt, const std::string& event, const std::string& job)> f) {
    on_event_ = std::move(f);
  }
  int64_t events_received() const { return events_; }

 private:
  void accept();
  void read(std::shared_ptr<boost::asio::ip::tcp::socket> socket, std::shared_ptr<std::string> buffer);
  void handle_line(const std::string& line);

  boost::asio::ip::tcp::acceptor acceptor_;
  std::map<std::string, Clock::time_point> last_;
  std::function<void(const std::string&, const std::string&, const std::string&)> on_event_;
  int64_t events_ = 0;
};

}  // namespace fk::orchestrator
