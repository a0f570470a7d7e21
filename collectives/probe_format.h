// Formats bandwidth-probe rows as an nccl-tests-like table: one block per collective
// (a header naming it and the rank count, column titles with units, one line per size)
// and a closing line with the average bus bandwidth over all rows, as nccl-tests
// prints. Pure function of the rows: golden-tested in tests/collectives.
#pragma once

#include "collectives/bandwidth_probe.h"

#include <string>
#include <vector>

namespace fk::collectives {

// Columns: size (B), count (elements), type, redop ("-" when the collective does not
// reduce), root (-1 unless broadcast), time (us), algbw (GB/s), busbw (GB/s), #wrong.
std::string probe_format_table(const std::vector<ProbeRow>& rows);

}  // namespace fk::collectives
