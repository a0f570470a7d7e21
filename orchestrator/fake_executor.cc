#include "orchestrator/fake_executor.h"

#include <boost/asio/post.hpp>

#include <fstream>

namespace fk::orchestrator {

FakeExecutor::FakeExecutor(boost::asio::io_context& io, int capacity,
                           std::function<FakeOutcome(const std::string&, int)> script)
    : io_(io), capacity_(capacity), script_(std::move(script)) {}

void FakeExecutor::launch(const LaunchRequest& request, Done done) {
  ++launches_;
  auto p = std::make_shared<Pending>();
  p->request = request;
  p->done = std::move(done);
  const std::string job = request.job_ids.empty() ? "" : request.job_ids.front();
  p->outcome = script_(job, attempts_[job]++);
  p->timer = std::make_unique<boost::asio::steady_timer>(io_);
  p->timer->expires_after(std::chrono::microseconds(static_cast<int64_t>(p->outcome.seconds * 1e6)));
  const std::string id = request.attempt_id;
  p->timer->async_wait([this, id](const boost::system::error_code& ec) {
    if (!ec) finish(id, false);
  });
  pending_[id] = p;
}

void FakeExecutor::finish(const std::string& attempt_id, bool cancelled) {
  auto it = pending_.find(attempt_id);
  if (it == pending_.end()) return;
  auto p = it->second;
  pending_.erase(it);
  AttemptResult r;
  r.attempt_id = attempt_id;
  r.native_id = "fake";
  r.end = cancelled ? AttemptEnd::kCancelled : p->outcome.end;
  r.exit_code = cancelled ? -1 : p->outcome.exit_code;
  r.seconds = p->outcome.seconds;
  r.reason = cancelled ? "cancelled" : std::string(attempt_end_name(r.end));
  if (r.end == AttemptEnd::kSucceeded || (cancelled && p->outcome.file_when_cancelled))
    for (const auto& job : p->request.job_ids) std::ofstream(p->request.results_dir + "/" + job + ".h5") << "fake\n";
  boost::asio::post(io_, [done = p->done, r] { done(r); });
}

void FakeExecutor::cancel(const std::string& attempt_id) {
  const auto it = pending_.find(attempt_id);
  if (it != pending_.end() && !it->second->outcome.ignores_cancel) finish(attempt_id, true);
}

std::vector<std::pair<std::string, std::string>> FakeExecutor::running() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [id, p] : pending_) out.emplace_back(id, "fake");
  return out;
}

}  // namespace fk::orchestrator
