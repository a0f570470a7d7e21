// fk-runner's side of the orchestrator's heartbeats (orchestrator/heartbeat.h): a TCP
// connection to --heartbeat host:port carrying JSON lines. A background thread sends
// {"event": "alive"} every interval, but only while the runner makes progress (some
// op or collective completed since the last one), so a hung job falls silent and the
// orchestrator can stop and retry it. Failures to connect or send are ignored: the
// heartbeat must never fail a job.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace fk::runner {

// Counts completed ops and collectives (the Runtime bumps it); cheap, lock-free.
void progress_tick();
uint64_t progress_count();
// One line on stderr (the attempt's log): "fk-runner: 12:03:41 <message>", flushed, so a
// long job's log says what it is doing (stage boundaries, each kernel-stage instance).
// Callers print from one rank of a group.
void progress_note(const std::string& message);

class Heartbeat {
 public:
  Heartbeat(const std::string& address, std::string attempt, int rank, double interval_s = 2.0);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void event(const std::string& name, const std::string& job);

 private:
  void send_line(const std::string& line);
  void loop();

  std::string attempt_;
  int rank_;
  double interval_s_;
  int fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace fk::runner
