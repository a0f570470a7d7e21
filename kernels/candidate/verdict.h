// Verdicts on a candidate kernel, from best to worst, with the rule that combines
// them: the worst verdict over every shape, round and stage wins, and keeps its reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fk::kernels {

enum class Verdict {
  kPassed,
  kUnsupported,         // the candidate does not handle this dtype/shape (FK_ERROR_UNSUPPORTED)
  kIncorrectNumerical,  // outside tolerance, NaN/Inf, unwritten, constant, less accurate, drifts
  kIncorrectShape,      // wrote outside its tensors' elements
  kRewardHack,          // cached results, work after return, modified inputs, buffer-reuse timing
  kRuntimeError,        // returned an error code, or the ABI check failed
  kTimeout,             // exceeded the time limit
  kCrashed,             // died (signal, CUDA sticky error)
  kCompileError,        // did not build with the production flags
};

std::string_view verdict_name(Verdict v);  // "PASSED", "INCORRECT_NUMERICAL", ...
std::optional<Verdict> verdict_parse(std::string_view name);
int verdict_severity(Verdict v);            // larger is worse

struct VerdictReason {
  Verdict verdict = Verdict::kPassed;
  std::string reason;
  // Keeps the worse of the two (the first one on ties).
  void merge(Verdict v, const std::string& why);
  void merge(const VerdictReason& other) { merge(other.verdict, other.reason); }
};

}  // namespace fk::kernels
