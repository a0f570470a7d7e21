// Shared state of the multi-rank test binary (main in mpi_test_main.cc).
//
// Every rank runs every test. MpiTest's TearDown exchanges "did this test fail here?"
// over MPI_COMM_WORLD, so a failure on any rank fails the test on every rank (with the
// failing ranks named), and ranks stay in step test by test. A rank stuck in a
// collective (because another left it) is ended by the watchdog in main, which prints
// the test's name and exits non-zero: the run fails, it never hangs.
#pragma once

#include "collectives/communicator.h"

#include <gtest/gtest.h>

namespace fk::collectives::testing {

// A Communicator over MPI_COMM_WORLD, alive for the whole test run.
Communicator& world();

class MpiTest : public ::testing::Test {
 protected:
  void TearDown() override;
};

}  // namespace fk::collectives::testing
