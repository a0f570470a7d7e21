// parity_check OURS.safetensors EXPECTED.safetensors [TOLERANCE]
//
// Compares every tensor of EXPECTED (HF's outputs) with the same tensor of OURS (fk
// forward's): same shape, relative L2 error ||ours - hf|| / ||hf|| (in fp64) at most
// TOLERANCE (default 1e-5). Prints one line per tensor; exit 0 when all pass, 1 when
// any fails or is missing, 2 on unreadable input.
#include "core/error.h"
#include "core/safetensors.h"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fmt::print(stderr, "usage: parity_check OURS.safetensors EXPECTED.safetensors [TOLERANCE]\n");
    return 2;
  }
  const double tol = argc == 4 ? std::atof(argv[3]) : 1e-5;
  try {
    const fk::SafetensorsFile ours(argv[1]), hf(argv[2]);
    int failed = 0;
    for (const auto& name : hf.names()) {
      if (!ours.has(name)) {
        fmt::print("{:<22} MISSING in {}\n", name, argv[1]);
        ++failed;
        continue;
      }
      if (ours.entry(name).shape != hf.entry(name).shape) {
        fmt::print("{:<22} SHAPE [{}] vs HF [{}]\n", name, fmt::join(ours.entry(name).shape, ", "),
                   fmt::join(hf.entry(name).shape, ", "));
        ++failed;
        continue;
      }
      const fk::Tensor a = ours.read(name, fk::DType::kF64), b = hf.read(name, fk::DType::kF64);
      double num = 0, den = 0;
      for (int64_t i = 0; i < b.numel(); ++i) {
        const double d = a.data_as<double>()[i] - b.data_as<double>()[i];
        num += d * d;
        den += b.data_as<double>()[i] * b.data_as<double>()[i];
      }
      const double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
      const bool ok = std::isfinite(rel) && rel <= tol;
      failed += ok ? 0 : 1;
      fmt::print("{:<22} rel L2 {:.3e} {}\n", name, rel, ok ? "ok" : fmt::format("FAIL (> {:.0e})", tol));
    }
    fmt::print("{}: {} of {} tensors within {:.0e}\n", failed == 0 ? "PARITY" : "NO PARITY",
               static_cast<int>(hf.names().size()) - failed, hf.names().size(), tol);
    return failed == 0 ? 0 : 1;
  } catch (const fk::Error& e) {
    fmt::print(stderr, "parity_check: {}\n", e.what());
    return 2;
  }
}
