#include "orchestrator/heartbeat.h"

#include <fmt/format.h>
#include <algorithm>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <nlohmann/json.hpp>

namespace fk::orchestrator {

namespace asio = boost::asio;
using asio::ip::tcp;

double heartbeat_interval_for(double timeout_s) {
  if (timeout_s <= 0) return 0;
  return std::clamp(timeout_s / 5, 0.2, 2.0);
}

HeartbeatServer::HeartbeatServer(asio::io_context& io, const std::string& bind_address)
    : acceptor_(io, tcp::endpoint(asio::ip::make_address(bind_address), 0)) {
  accept();
}

std::string HeartbeatServer::address(const std::string& host) const {
  return fmt::format("{}:{}", host, acceptor_.local_endpoint().port());
}

void HeartbeatServer::expect(const std::string& attempt) { last_[attempt] = Clock::now(); }

void HeartbeatServer::forget(const std::string& attempt) { last_.erase(attempt); }

double HeartbeatServer::silence_s(const std::string& attempt) const {
  auto it = last_.find(attempt);
  if (it == last_.end()) return 0;
  return std::chrono::duration<double>(Clock::now() - it->second).count();
}

void HeartbeatServer::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec) return;  // the acceptor closed
    read(std::make_shared<tcp::socket>(std::move(socket)), std::make_shared<std::string>());
    accept();
  });
}

void HeartbeatServer::read(std::shared_ptr<tcp::socket> socket, std::shared_ptr<std::string> buffer) {
  asio::async_read_until(*socket, asio::dynamic_buffer(*buffer), '\n',
                         [this, socket, buffer](const boost::system::error_code& ec, size_t n) {
                           if (ec) return;  // the runner closed or died: silence does the rest
                           handle_line(buffer->substr(0, n - 1));
                           buffer->erase(0, n);
                           read(socket, buffer);
                         });
}

void HeartbeatServer::handle_line(const std::string& line) {
  try {
    const auto j = nlohmann::json::parse(line);
    const std::string attempt = j.value("attempt", "");
    if (attempt.empty() || !last_.count(attempt)) return;  // not one we are waiting for
    last_[attempt] = Clock::now();
    ++events_;
    if (on_event_) on_event_(attempt, j.value("event", ""), j.value("job", ""));
  } catch (const nlohmann::json::exception&) {
    // Not a heartbeat line: ignore it.
  }
}

}  // namespace fk::orchestrator
