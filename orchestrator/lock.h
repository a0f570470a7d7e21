// One orchestrator per results folder: an exclusive flock() on <results>/.fk-lock,
// held for the process's life (released by the kernel even after kill -9). The file
// records who holds it, so a second `fk run` can say who and since when.
#pragma once

#include <optional>
#include <string>

namespace fk::orchestrator {

class ResultsLock {
 public:
  // Takes the lock or throws fk::Error(kInvalidArgument) naming the holder.
  explicit ResultsLock(const std::string& results_dir);
  ~ResultsLock();
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;

  // "pid 1234 on host h since 2026-11-30T15:00:00Z", when someone holds it.
  static std::optional<std::string> holder(const std::string& results_dir);

 private:
  int fd_ = -1;
};

}  // namespace fk::orchestrator
