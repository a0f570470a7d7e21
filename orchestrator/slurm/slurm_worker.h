// The Slurm executor's command thread: Slurm commands block (sbatch on a busy
// controller takes seconds), so they run here, one at a time and in order, never on
// the io_context. Each task returns a continuation that is posted back to the
// io_context; while any task is queued or running, the io_context has work (run()
// does not return early).
//
// Destruction waits for the task in flight (its commands have time limits) and drops
// the queued ones; continuations already posted must guard themselves (the executor
// gives them a weak liveness token).
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace fk::orchestrator {

class SlurmWorker {
 public:
  using Continuation = std::function<void()>;
  using Task = std::function<Continuation()>;  // runs on the worker thread

  explicit SlurmWorker(boost::asio::io_context& io);
  ~SlurmWorker();
  SlurmWorker(const SlurmWorker&) = delete;
  SlurmWorker& operator=(const SlurmWorker&) = delete;

  // Queues `task`; its continuation (if not empty) runs on the io_context.
  void post(Task task);
  // Tasks queued or running.
  size_t pending() const;

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  struct Item {
    Task task;
    Guard guard;
  };
  void loop();

  boost::asio::io_context& io_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace fk::orchestrator
