// The orchestrator's journal: an append-only file of JSON lines in the results folder
// (.fk-journal.jsonl), one per event, each flushed and fsynced before the orchestrator
// acts on it. After a crash (even kill -9), replaying it tells what was planned, which
// attempts were started (and their native ids: pid or Slurm job id), how they ended,
// which candidates were quarantined, and the content hash (results/h5/file_sum.h) of
// each job file when it was accepted ("hash" of an `end` event decided "done", or of a
// `done` event for a file found on disk; a `damaged` event withdraws it).
//
// The job files in the results folder remain the truth about completion, checked
// against the journal: a job is done when its file exists and is intact — its
// whole-file checksum matches, when it has one, and its content hash is the one the
// journal recorded, when it recorded one — whatever else the journal says. A file
// that fails is not done: fk run moves it aside (<id>.h5.damaged) and runs the job
// again; fk collect leaves it out. A torn last line (crash mid-write) is ignored on
// replay.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
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
  // The content hash each job's file had when it was last accepted, by job id, from
  // `events` in order (see above); jobs without a standing hash are absent.
  static std::map<std::string, std::string> job_hashes(const std::vector<nlohmann::json>& events);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  double last_sync_ = 0;
  double sync_interval_s_ = 0.5;
};

}  // namespace fk::orchestrator
