// libFuzzer entry: any bytes as a job file (fk plan --emit, read by fk-runner) must give
// jobs within the spec limits or fk::Error naming the file; never a crash or another exception.
#include "core/error.h"
#include "core/spec/job.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  try {
    (void)fk::spec::job_file_from_json(j, "fuzz/jobs.json");
  } catch (const fk::Error&) {
  } catch (...) {
    std::abort();
  }
  return 0;
}
