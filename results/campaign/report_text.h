// The text reporter of `fk report`: turns ReportData into the terminal report
// (docs/reports.md shows an example). Pure formatting: no file access.
#pragma once

#include "results/campaign/report_data.h"

#include <string>

namespace fk::results {

// The whole text report.
std::string report_text(const ReportData& data);

}  // namespace fk::results
