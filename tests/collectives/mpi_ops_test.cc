// The Communicator contract on the MPI backend: every operation x dtype x count
// (zero, one, odd, a few hundred), sum and max, in place and out of place, on the
// world communicator of this mpirun (1, 2, 3, 4 or 8 ranks).
#include "collectives/buffer_space.h"
#include "conformance.h"
#include "mpi_test_env.h"

namespace fk::collectives::testing {
namespace {

namespace cf = conformance;

using MpiOps = MpiTest;

TEST_F(MpiOps, AllReduceEveryDtypeOpCountInAndOutOfPlace) {
  for (DType dtype : cf::reduction_dtypes())
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax})
      for (size_t count : cf::test_counts())
        for (bool in_place : {false, true})
          cf::check_all_reduce(world(), host_buffer_space(), dtype, op, count, in_place);
}

TEST_F(MpiOps, AllGatherEveryDtypeAndCount) {
  for (DType dtype : cf::movement_dtypes())
    for (size_t count : cf::test_counts()) cf::check_all_gather(world(), host_buffer_space(), dtype, count);
}

TEST_F(MpiOps, ReduceScatterEveryDtypeOpAndCount) {
  for (DType dtype : cf::reduction_dtypes())
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax})
      for (size_t count : cf::test_counts()) cf::check_reduce_scatter(world(), host_buffer_space(), dtype, op, count);
}

TEST_F(MpiOps, AllToAllEveryDtypeAndCount) {
  for (DType dtype : cf::movement_dtypes())
    for (size_t count : cf::test_counts()) cf::check_all_to_all(world(), host_buffer_space(), dtype, count);
}

TEST_F(MpiOps, AllToAllvUnevenAndEmptyBlocks) {
  for (DType dtype : cf::movement_dtypes())
    for (size_t extra : {size_t{0}, size_t{5}}) cf::check_all_to_allv(world(), host_buffer_space(), dtype, extra);
}

TEST_F(MpiOps, BroadcastFromEveryRoot) {
  for (DType dtype : cf::movement_dtypes())
    for (size_t count : cf::test_counts())
      for (int root = 0; root < world().size(); ++root)
        cf::check_broadcast(world(), host_buffer_space(), dtype, count, root);
}

// send_recv everywhere (with one rank it is a self exchange); the ring of blocking
// send/recv needs a second rank (a blocking send to oneself is outside the contract).
TEST_F(MpiOps, PointToPoint) {
  for (DType dtype : cf::movement_dtypes())
    for (size_t count : cf::test_counts()) {
      cf::check_send_recv_combined(world(), host_buffer_space(), dtype, count);
      if (world().size() >= 2) cf::check_send_recv_ring(world(), host_buffer_space(), dtype, count);
    }
}

TEST_F(MpiOps, Split) { cf::check_split(world(), host_buffer_space()); }

TEST_F(MpiOps, BarrierAndSynchronizeReturn) {
  world().barrier();
  world().synchronize();
  EXPECT_EQ(world().backend(), "mpi");
}

}  // namespace
}  // namespace fk::collectives::testing
