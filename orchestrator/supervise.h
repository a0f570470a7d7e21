// One attempt supervised as `fk run` supervises its attempts, for commands that run
// fk-runner once outside a campaign run (`fk check`). The local executor runs it in its
// own process group under the attempt's time limit (SIGTERM to the group, SIGKILL 5 s
// later); the heartbeat listener stops it when it falls silent for longer than the
// heartbeat timeout; SIGINT/SIGTERM stop it, a second one kills it at once. Nothing it
// started outlives the call. Blocks until the attempt has ended.
#pragma once

#include "orchestrator/executor.h"

#include <functional>
#include <string>

namespace fk::orchestrator {

struct SuperviseOptions {
  double heartbeat_timeout_s = 0;  // 0: no heartbeat watch
  // Each line of the attempt's output (its log file) as it is written.
  std::function<void(const std::string&)> on_line;
};

struct SupervisedAttempt {
  AttemptResult result;  // kTimedOut also when it was stopped as hung (reason says which)
  int signal = 0;        // the SIGINT/SIGTERM that stopped it; 0 when none came
};

// Runs `request` (its heartbeat address is filled in here) on this machine.
SupervisedAttempt supervise_local(LaunchRequest request, const SuperviseOptions& options);

}  // namespace fk::orchestrator
