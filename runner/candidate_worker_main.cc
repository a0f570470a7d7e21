// fk-candidate-worker: the sandboxed process in which candidate code runs
// (kernels/candidate/worker.h). Started by fk-runner and fk check; not meant to be run by hand.
#include "kernels/candidate/worker_serve.h"
#include "kernels/op.h"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  try {
    fk::kernels::register_builtin_ops();
    return fk::kernels::worker_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk-candidate-worker: %s\n", e.what());
    return 3;
  }
}
