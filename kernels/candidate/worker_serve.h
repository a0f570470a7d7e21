// fk-candidate-worker's entry (kernels/candidate/worker_serve.cc): serves one
// supervisor over the arena channel, or (--exec) runs a command inside the sandbox.
#pragma once

namespace fk::kernels {

// Returns the process exit status. Expects the operator registry to be populated.
int worker_main(int argc, char** argv);

}  // namespace fk::kernels
