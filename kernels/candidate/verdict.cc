#include "kernels/candidate/verdict.h"

namespace fk::kernels {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPassed: return "PASSED";
    case Verdict::kUnsupported: return "UNSUPPORTED";
    case Verdict::kIncorrectNumerical: return "INCORRECT_NUMERICAL";
    case Verdict::kIncorrectShape: return "INCORRECT_SHAPE";
    case Verdict::kRewardHack: return "REWARD_HACK";
    case Verdict::kRuntimeError: return "RUNTIME_ERROR";
    case Verdict::kTimeout: return "TIMEOUT";
    case Verdict::kCrashed: return "CRASHED";
    case Verdict::kCompileError: return "COMPILE_ERROR";
  }
  return "?";
}

std::optional<Verdict> verdict_parse(std::string_view name) {
  for (Verdict v : {Verdict::kPassed, Verdict::kUnsupported, Verdict::kIncorrectNumerical, Verdict::kIncorrectShape,
                    Verdict::kRewardHack, Verdict::kRuntimeError, Verdict::kTimeout, Verdict::kCrashed,
                    Verdict::kCompileError})
    if (verdict_name(v) == name) return v;
  return std::nullopt;
}

int verdict_severity(Verdict v) { return static_cast<int>(v); }

void VerdictReason::merge(Verdict v, const std::string& why) {
  if (verdict_severity(v) > verdict_severity(verdict)) {
    verdict = v;
    reason = why;
  }
}

}  // namespace fk::kernels
