// libFuzzer entry: any bytes as a .safetensors file must open and read cleanly or fail
// with fk::Error naming the file; never a crash, a hang, an overflow or a sanitizer report.
#include "core/error.h"
#include "core/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "fuzz-" + std::to_string(getpid()) + ".safetensors";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  try {
    fk::SafetensorsFile file(path);
    for (const auto& name : file.names()) {
      const auto& e = file.entry(name);
      if (e.numel() < 0) std::abort();
      if (e.numel() <= (int64_t{1} << 20)) (void)file.read(name, fk::DType::kF32);
    }
  } catch (const fk::Error&) {
    // A refused file: the expected outcome for most inputs.
  } catch (...) {
    std::abort();  // only fk::Error may leave the reader
  }
  return 0;
}
