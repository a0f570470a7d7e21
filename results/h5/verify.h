// verify_file: reads every byte an HDF5 file's objects hold, so that HDF5 checks every
// checksum on the way (metadata checksums of 1.10-format files, and the filters of any
// chunked dataset; docs/results-schema.md, "Checksums").
//
// It first checks the whole-file checksum of files fk wrote (file_sum.h), then opens
// `path`, walks every group below the root (links to objects already seen
// are not walked again), and reads every attribute and every dataset in full (large
// datasets in slabs of at most 64 MiB). Damaged files can make HDF5 itself crash or
// loop, so callers run this in a child process with a time limit
// (results/campaign/file_check.h); it is not meant to be called in a process that
// must survive a damaged file.
#pragma once

#include <cstdint>
#include <string>

namespace fk::h5 {

struct VerifyResult {
  bool ok = false;
  std::string problem;  // first failure ("jobs/x/kernel_stage/instances: cannot read dataset: ...")
  int64_t objects = 0, attributes = 0;
  uint64_t bytes = 0;  // dataset bytes read (in memory form)
};

VerifyResult verify_file(const std::string& path);

}  // namespace fk::h5
