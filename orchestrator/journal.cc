// Journal (journal.h): appending, syncing and reading events; the job-file hashes they record.
#include "orchestrator/journal.h"

#include "core/error.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace fk::orchestrator {

Journal::Journal(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "a");
  if (file_ == nullptr) fail(ErrorKind::kIo, "{}: cannot open the journal: {}", path_, std::strerror(errno));
}

Journal::~Journal() {
  if (file_ != nullptr) {
    ::fsync(::fileno(file_));
    std::fclose(file_);
  }
}

void Journal::append(const std::string& event, nlohmann::json fields, bool durable) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  fields["event"] = event;
  fields["t"] = now;
  const std::string line = fields.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    fail(ErrorKind::kIo, "{}: cannot write the journal: {}", path_, std::strerror(errno));
  if (durable || now - last_sync_ > sync_interval_s_) {
    sync();
    last_sync_ = now;
  }
}

void Journal::sync() {
  if (::fsync(::fileno(file_)) != 0)
    fail(ErrorKind::kIo, "{}: cannot sync the journal: {}", path_, std::strerror(errno));
}

std::vector<nlohmann::json> Journal::read(const std::string& path) {
  std::vector<nlohmann::json> events;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      events.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::parse_error&) {
      // A torn line from a crash mid-write: everything before it stands.
    }
  }
  return events;
}

std::map<std::string, std::string> Journal::job_hashes(const std::vector<nlohmann::json>& events) {
  std::map<std::string, std::string> hashes;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    auto text = [&e](const char* key) {
      const auto it = e.find(key);
      return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string kind = text("event"), job = text("job"), hash = text("hash");
    if (job.empty()) continue;
    const bool accepted = (kind == "end" && text("decision") == "done") || kind == "done";
    if (accepted && !hash.empty())
      hashes[job] = hash;
    else if (accepted || kind == "damaged")
      hashes.erase(job);  // accepted without a hash (an older fk), or withdrawn
  }
  return hashes;
}

}  // namespace fk::orchestrator
