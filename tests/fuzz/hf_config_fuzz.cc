// libFuzzer entry: any bytes as an HF config.json must import into a validated
// architecture or fail with fk::Error naming the file; never a crash or another exception.
#include "core/error.h"
#include "core/spec/hf_config.h"

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
    return 0;  // not JSON: the importer's file reader reports that itself
  }
  try {
    (void)fk::spec::hf_config_import(j, "fuzz/config.json");
  } catch (const fk::Error&) {
  } catch (...) {
    std::abort();  // nlohmann type errors, std::out_of_range...: must be fk::Error naming the field
  }
  return 0;
}
