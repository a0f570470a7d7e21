// Wall-clock helpers shared by the runner and the result files.
#pragma once

#include <string>

namespace fk {

// The current UTC time as ISO 8601 with seconds: "2026-11-30T18:04:05Z".
std::string utc_now_iso();

}  // namespace fk
