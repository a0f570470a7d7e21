#include "results/campaign/job_files.h"

#include "core/error.h"

#include <algorithm>
#include <filesystem>

namespace fk::results {
namespace fs = std::filesystem;

bool job_file_is_temporary(const std::string& file_name) { return file_name.find(".tmp.") != std::string::npos; }

JobFileScan job_files_scan(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(ErrorKind::kNotFound, "{}: no such results folder", dir);
  JobFileScan scan;
  fs::directory_iterator it(dir, ec);
  if (ec) fail(ErrorKind::kIo, "{}: cannot list the folder: {}", dir, ec.message());
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (job_file_is_temporary(name)) {
      scan.temporary.push_back(entry.path().string());
      continue;
    }
    if (entry.path().extension() != ".h5" || !entry.is_regular_file(ec)) continue;
    scan.files.push_back(entry.path().string());
  }
  std::sort(scan.files.begin(), scan.files.end());
  std::sort(scan.temporary.begin(), scan.temporary.end());
  return scan;
}

}  // namespace fk::results
