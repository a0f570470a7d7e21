// Backend-neutral checks of the Communicator contract, run once per backend: by every
// MPI rank under mpirun (host memory) and by every GPU thread of the NCCL test (device
// memory, through a BufferSpace). Each check stages exactly predictable small-integer
// inputs, runs one operation, synchronizes and compares every element with EXPECT_*
// (never ASSERT_*: a rank that returned early would leave the others in a collective).
// All ranks must call the same checks in the same order.
#pragma once

#include "collectives/buffer_space.h"
#include "collectives/communicator.h"

#include <vector>

namespace fk::collectives::conformance {

// Every dtype (data movement) / every dtype the reductions take in the tests.
std::vector<DType> movement_dtypes();
std::vector<DType> reduction_dtypes();
// Counts covering zero, one, odd and a few hundred elements.
std::vector<size_t> test_counts();

void check_all_reduce(Communicator& comm, BufferSpace& space, DType dtype, ReduceOp op, size_t count, bool in_place);
void check_all_gather(Communicator& comm, BufferSpace& space, DType dtype, size_t count);
void check_reduce_scatter(Communicator& comm, BufferSpace& space, DType dtype, ReduceOp op, size_t count);
void check_all_to_all(Communicator& comm, BufferSpace& space, DType dtype, size_t count);
// Uneven blocks, including empty ones: rank r sends (2r + q) % 3 + extra elements to q.
void check_all_to_allv(Communicator& comm, BufferSpace& space, DType dtype, size_t extra);
void check_broadcast(Communicator& comm, BufferSpace& space, DType dtype, size_t count, int root);
// A ring of blocking send/recv (even ranks send first); needs size() >= 2.
void check_send_recv_ring(Communicator& comm, BufferSpace& space, DType dtype, size_t count);
// A ring through send_recv (also with one rank: a self exchange).
void check_send_recv_combined(Communicator& comm, BufferSpace& space, DType dtype, size_t count);
// split(color = rank % 2, key = -rank): sizes, reversed order, sums within the group,
// and color < 0 giving nullptr.
void check_split(Communicator& comm, BufferSpace& space);

}  // namespace fk::collectives::conformance
