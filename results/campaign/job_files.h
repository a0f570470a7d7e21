// Finding the per-job result files in a results folder (fk-runner --results DIR).
//
// A job file is a regular file named "<job id>.h5" directly in the folder. Writers'
// temporary files ("<name>.tmp.<pid>.<n>", left behind only by a crash) are never job
// files, whatever they end in. Subfolders are not searched. Nothing here opens HDF5.
#pragma once

#include <string>
#include <vector>

namespace fk::results {

struct JobFileScan {
  std::vector<std::string> files;      // paths of the *.h5 files, sorted by name
  std::vector<std::string> temporary;  // paths of the skipped "*.tmp.*" files
};

// Scans `dir`. kNotFound when `dir` does not exist or is not a folder; kIo when it
// cannot be listed.
JobFileScan job_files_scan(const std::string& dir);

// True for a writer's temporary file name ("x.h5.tmp.123.0").
bool job_file_is_temporary(const std::string& file_name);

}  // namespace fk::results
