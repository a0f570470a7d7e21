// fk-candidate-worker: checks one candidate kernel's op instances in its own process
// (runner/candidate_check.h). Reads one JSON request on stdin; prints "BEGIN <i>" and
// one JSON result line per instance on stdout. Not meant to be run by hand.
#include "kernels/op.h"
#include "runner/candidate_check.h"

#include <fmt/format.h>
#include <iostream>
#include <iterator>
#include <string>

int main() {
  try {
    fk::kernels::register_builtin_ops();
    const std::string request((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    return fk::runner::candidate_worker_main(request);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fk-candidate-worker: {}\n", e.what());
    return 3;
  }
}
