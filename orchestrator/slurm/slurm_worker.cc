#include "orchestrator/slurm/slurm_worker.h"

#include <boost/asio/post.hpp>

#include <exception>

namespace fk::orchestrator {

SlurmWorker::SlurmWorker(boost::asio::io_context& io) : io_(io), thread_([this] { loop(); }) {}

SlurmWorker::~SlurmWorker() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    queue_.clear();  // their guards go: the io_context may finish
  }
  cv_.notify_all();
  thread_.join();
}

void SlurmWorker::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Item{std::move(task), boost::asio::make_work_guard(io_)});
  }
  cv_.notify_one();
}

size_t SlurmWorker::pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + (busy_ ? 1 : 0);
}

void SlurmWorker::loop() {
  while (true) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Continuation then;
    try {
      then = item.task();
    } catch (...) {  // tasks report failures as values; anything else is a bug: raise it on the io_context
      then = [e = std::current_exception()] { std::rethrow_exception(e); };
    }
    if (then) boost::asio::post(io_, std::move(then));
    item.guard.reset();  // after the post: the io_context never runs dry in between
    lock.lock();
    busy_ = false;
  }
}

}  // namespace fk::orchestrator
