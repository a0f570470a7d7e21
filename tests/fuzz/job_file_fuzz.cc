// libFuzzer entry: any bytes as a job file (fk plan --emit, read by fk-runner) must give
// jobs within the spec limits or fk::Error naming the file; never a crash or another exception.
// The text goes through job_file_parse (what job_file_read runs: jobs converted as they
// are parsed); whatever it accepts, the whole-document reader must accept alike.
#include "core/error.h"
#include "core/spec/job.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fk::spec::JobFile streamed;
  try {
    streamed = fk::spec::job_file_parse(text, "fuzz/jobs.json");
  } catch (const fk::Error&) {
    return 0;
  } catch (...) {
    std::abort();
  }
  try {
    const fk::spec::JobFile whole = fk::spec::job_file_from_json(nlohmann::json::parse(text), "fuzz/jobs.json");
    if (whole.jobs.size() != streamed.jobs.size()) std::abort();
    for (size_t i = 0; i < whole.jobs.size(); ++i)
      if (whole.jobs[i].id != streamed.jobs[i].id || !(whole.jobs[i].arch == streamed.jobs[i].arch)) std::abort();
  } catch (...) {
    std::abort();
  }
  return 0;
}
