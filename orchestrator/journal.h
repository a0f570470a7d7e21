// The orchestrator's journal: an append-only file of JSON lines in the results folder
// (.fk-journal.jsonl), one per event, each flushed and fsynced before the orchestrator
// acts on it. After a crash (even kill -9), replaying it tells what was planned, which
// attempts were started (and their native ids: pid or Slurm job id), how they ended,
// which candidates were quarantined. The job files in the results folder remain the
// truth about completion: a job whose file exists is done, whatever the journal says.
// A torn last line (crash mid-write) is ignored on replay.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace fk::orchestrator {

class Journal {
 public:
  // Opens (creating) `path` for appending. Throws fk::Error(kIo) naming it.
  explicit Journal(std::string path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends one event ({"t": unix seconds, "event": name, ...fields}) and hands it to
  // the kernel (so it survives the orchestrator's death, kill -9 included). It reaches
  // the disk (fsync) at once when `durable`, else within sync_interval_s: losing the
  // last events to a machine crash only reruns work (job files are the truth).
  void append(const std::string& event, nlohmann::json fields = nlohmann::json::object(), bool durable = false);
  // fsync now.
  void sync();
  const std::string& path() const { return path_; }

  // Every complete event of a journal file (empty when it does not exist).
  static std::vector<nlohmann::json> read(const std::string& path);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  double last_sync_ = 0;
  double sync_interval_s_ = 0.5;
};

}  // namespace fk::orchestrator
