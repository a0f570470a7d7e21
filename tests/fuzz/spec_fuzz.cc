// libFuzzer entry: any bytes, loaded as a spec file, must give either a spec or
// diagnostics; never a crash, a hang, an exception or a sanitizer report.
#include "core/spec/spec_file.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fk::spec::Diagnostics diags;
  try {
    auto spec = fk::spec::spec_load_string(text, "fuzz/campaigns/input.yaml", diags);
    if (!spec && diags.ok()) std::abort();  // a failed load must say why
  } catch (...) {
    std::abort();  // the loader reports problems as diagnostics, never by throwing
  }
  return 0;
}
