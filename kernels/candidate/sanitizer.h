// compute-sanitizer around a candidate's worker (`fk check --sanitize`): where the tool
// is, which of its tools we run, and what its log says.
//
// The candidate's worker is started as `compute-sanitizer --tool T --log-file F ...
// fk-candidate-worker ...` (kernels/candidate/worker.h WorkerConfig::sanitizer). The log
// is written by the sanitizer's own process into a folder the sandboxed worker cannot
// write, and read by the supervisor after each instance: every error record the tool
// printed there is a finding against the candidate. Findings can only fail a
// candidate, never pass one; the gates still run as without the sanitizer, untimed
// (its instrumentation makes every timing meaningless).
#pragma once

#include "kernels/candidate/verdict.h"

#include <string>
#include <string_view>
#include <vector>

namespace fk::kernels {

// The tools it takes are spec::sanitizer_tools() (core/spec/campaign.h).

// Where compute-sanitizer is: $FK_COMPUTE_SANITIZER, else $CUDA_HOME/bin, else
// /usr/local/cuda/bin, else the PATH. "" when none is found (or the variable names a
// file that is not executable: then `why` says so).
std::string compute_sanitizer_path(std::string* why = nullptr);

enum class SanitizerFindingKind {
  kMemory,         // memcheck: an access outside any allocation, misaligned, a bad free...
  kRace,           // racecheck: a shared-memory hazard reported as an error
  kUninitialized,  // initcheck: a read of device memory nothing wrote
  kSync,           // synccheck: a barrier misused or divergent
  kOther,          // an error record of a kind not listed here
};

struct SanitizerFinding {
  SanitizerFindingKind kind = SanitizerFindingKind::kOther;
  std::string text;  // the record's headline and its first detail lines, joined with "; "
};

// The error records of a compute-sanitizer log (the lines behind its "=========" prefix).
// A record ends where the next top-level line begins; the last one counts only when
// `complete` (the tool has finished writing, e.g. its process ended), so that a record
// read half-written is not reported twice. API errors ("Program hit ...") and
// warnings are not findings: the candidate's return codes already show the first,
// and the second are the tool's hints.
std::vector<SanitizerFinding> sanitizer_findings(std::string_view log, bool complete);

// The verdict for findings (PASSED with "" when there are none): memory errors give
// INCORRECT_SHAPE (it touched memory outside its tensors), the others
// INCORRECT_NUMERICAL (its results rest on a race or on unwritten memory). The reason
// names the tool, the count and the first finding of the worst kind.
VerdictReason sanitizer_verdict(const std::string& tool, const std::vector<SanitizerFinding>& findings);

}  // namespace fk::kernels
