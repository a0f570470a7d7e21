// MPI-backend specifics: fp16/bf16 sums rounded once from fp32, capability answers,
// wrapping an existing MPI_Comm, and error paths (bad arguments and MPI failures
// become fk::Error, never an abort).
#include "collectives/mpi_check.h"
#include "collectives/mpi_communicator.h"
#include "core/error.h"
#include "mpi_test_env.h"

#include <cstring>
#include <vector>

namespace fk::collectives::testing {
namespace {

using MpiBackend = MpiTest;

template <typename F>
ErrorKind kind_of_error(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "expected an fk::Error";
  return ErrorKind::kInternal;
}

// Rank 0 contributes 1, every other rank 2^-8. Accumulating in bf16 step by step would
// round 1 + 2^-8 (a tie) back to 1 at every step; fp32 accumulation rounds once.
TEST_F(MpiBackend, HalfSumsRoundOnceFromFp32) {
  const int n = world().size();
  const float exact = 1.0f + static_cast<float>(n - 1) * (1.0f / 256.0f);
  {
    BFloat16 in(world().rank() == 0 ? 1.0f : 1.0f / 256.0f), out;
    world().all_reduce(&in, &out, 1, DType::kBF16, ReduceOp::kSum);
    EXPECT_EQ(out.bits, BFloat16(exact).bits) << "bf16 sum over " << n << " ranks: got " << static_cast<float>(out);
  }
  {
    // fp16: 1 + k * 2^-11 with the same tie structure (fp16 spacing at 1 is 2^-10).
    const float small = 1.0f / 2048.0f;
    const float exact16 = 1.0f + static_cast<float>(n - 1) * small;
    Half in(world().rank() == 0 ? 1.0f : small), out;
    world().all_reduce(&in, &out, 1, DType::kF16, ReduceOp::kSum);
    EXPECT_EQ(out.bits, Half(exact16).bits) << "fp16 sum over " << n << " ranks: got " << static_cast<float>(out);
  }
  if (n == 3) {  // the case where step-by-step rounding would give 1.0
    BFloat16 in(world().rank() == 0 ? 1.0f : 1.0f / 256.0f), out;
    world().all_reduce(&in, &out, 1, DType::kBF16, ReduceOp::kSum);
    EXPECT_EQ(static_cast<float>(out), 1.0078125f);
  }
}

TEST_F(MpiBackend, SupportsEveryFloatAndIntegerButNotBytes) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64}) {
    EXPECT_TRUE(world().supports(t, ReduceOp::kSum)) << dtype_name(t);
    EXPECT_TRUE(world().supports(t, ReduceOp::kMax)) << dtype_name(t);
  }
  EXPECT_FALSE(world().supports(DType::kU8, ReduceOp::kSum));
  uint8_t b = 1;
  EXPECT_EQ(kind_of_error([&] { world().all_reduce(&b, &b, 1, DType::kU8, ReduceOp::kSum); }), ErrorKind::kUnsupported);
}

TEST_F(MpiBackend, WrapsAnExistingMpiCommunicator) {
  // The runner splits MPI_COMM_WORLD into job groups and wraps each one.
  const int r = world().rank();
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, r / 2, r, &group);
  {
    std::unique_ptr<Communicator> comm = mpi_wrap(group);
    int size = 0;
    MPI_Comm_size(group, &size);
    EXPECT_EQ(comm->size(), size);
    EXPECT_EQ(comm->rank(), r % 2);
    int64_t one = 1, total = 0;
    comm->all_reduce(&one, &total, 1, DType::kI64, ReduceOp::kSum);
    EXPECT_EQ(total, size);
    // The wrapper owns a duplicate: the caller's communicator keeps its error handler.
    MPI_Errhandler handler;
    MPI_Comm_get_errhandler(group, &handler);
    EXPECT_EQ(handler, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&handler);
  }
  MPI_Comm_free(&group);
}

TEST_F(MpiBackend, MpiCheckNamesTheOperationCallAndMpiError) {
  std::string message;
  try {
    mpi_check(MPI_ERR_RANK, "MPI_Recv", "recv");
    ADD_FAILURE() << "mpi_check did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    message = e.what();
    EXPECT_NE(std::string(e.where().file_name()).find("mpi_backend_test.cc"), std::string::npos)
        << "the error should point at the caller: " << e.where_string();
  }
  EXPECT_NE(message.find("recv: MPI_Recv failed"), std::string::npos) << message;
  EXPECT_NE(message.find("MPI_ERR_RANK"), std::string::npos) << message;
  EXPECT_NO_THROW(mpi_check(MPI_SUCCESS, "MPI_Barrier", "barrier"));
}

TEST_F(MpiBackend, BadArgumentsAreInvalidArgumentNotAnAbort) {
  Communicator& c = world();
  const int n = c.size();
  float x[4] = {};
  std::string message;
  EXPECT_EQ(kind_of_error([&] { c.recv(x, 1, DType::kF32, n, 0); }, &message), ErrorKind::kInvalidArgument);
  EXPECT_NE(message.find("peer " + std::to_string(n)), std::string::npos) << message;
  EXPECT_EQ(kind_of_error([&] { c.recv(x, 1, DType::kF32, -1, 0); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([&] { c.send(x, 1, DType::kF32, n + 3, 0); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([&] { c.send(x, 1, DType::kF32, 0, -5); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([&] { c.broadcast(x, 1, DType::kF32, n); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([&] { c.send_recv(x, 1, n, x + 1, 1, 0, DType::kF32, 0); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([&] { c.reduce_scatter(x, x, 1, DType::kF32, ReduceOp::kSum); }),
            ErrorKind::kInvalidArgument);
  const std::vector<size_t> short_vec(static_cast<size_t>(n) + 1, 0), ok(static_cast<size_t>(n), 0);
  EXPECT_EQ(kind_of_error([&] { c.all_to_allv(x, short_vec, ok, x + 1, ok, ok, DType::kF32); }),
            ErrorKind::kInvalidArgument);
  // After all that the communicator still works.
  int64_t one = 1, total = 0;
  c.all_reduce(&one, &total, 1, DType::kI64, ReduceOp::kSum);
  EXPECT_EQ(total, n);
}

TEST_F(MpiBackend, MpiFailuresBecomeRuntimeErrors) {
  Communicator& c = world();
  const int n = c.size(), me = c.rank();
  const int next = (me + 1) % n, prev = (me - 1 + n) % n;
  int32_t out[4] = {1, 2, 3, 4}, in[4] = {};
  std::string message;
  // Four elements into a two-element receive around the ring: MPI reports
  // MPI_ERR_TRUNCATE on every rank (with one rank, the self exchange is checked by us).
  EXPECT_EQ(kind_of_error([&] { c.send_recv(out, 4, next, in, 2, prev, DType::kI32, 11); }, &message),
            ErrorKind::kRuntime);
  if (n >= 2) {
    EXPECT_NE(message.find("send_recv: MPI_Sendrecv failed: MPI_ERR_TRUNCATE"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("sends 4 elements but receives 2"), std::string::npos) << message;
  }
  // Two elements into a four-element receive: MPI succeeds, the count check does not.
  EXPECT_EQ(kind_of_error([&] { c.send_recv(out, 2, next, in, 4, prev, DType::kI32, 12); }, &message),
            ErrorKind::kRuntime);
  if (n >= 2) {
    EXPECT_NE(message.find("expected 4 elements from rank " + std::to_string(prev) + " (tag 12), received 2"),
              std::string::npos)
        << message;
  } else {
    EXPECT_NE(message.find("sends 2 elements but receives 4"), std::string::npos) << message;
  }
  // The communicator is still usable afterwards.
  int64_t one = 1, total = 0;
  c.all_reduce(&one, &total, 1, DType::kI64, ReduceOp::kSum);
  EXPECT_EQ(total, n);
}

TEST_F(MpiBackend, ZeroCountCallsCompleteWithNullBuffers) {
  Communicator& c = world();
  const std::vector<size_t> zeros(static_cast<size_t>(c.size()), 0);
  c.all_reduce(nullptr, nullptr, 0, DType::kBF16, ReduceOp::kSum);
  c.all_reduce(nullptr, nullptr, 0, DType::kF32, ReduceOp::kMax);
  c.all_gather(nullptr, nullptr, 0, DType::kF16);
  c.reduce_scatter(nullptr, nullptr, 0, DType::kF16, ReduceOp::kSum);
  c.all_to_all(nullptr, nullptr, 0, DType::kI32);
  c.all_to_allv(nullptr, zeros, zeros, nullptr, zeros, zeros, DType::kI64);
  c.broadcast(nullptr, 0, DType::kF32, c.size() - 1);
  c.send_recv(nullptr, 0, (c.rank() + 1) % c.size(), nullptr, 0, (c.rank() - 1 + c.size()) % c.size(), DType::kF32, 0);
  int64_t one = 1, total = 0;
  c.all_reduce(&one, &total, 1, DType::kI64, ReduceOp::kSum);
  EXPECT_EQ(total, c.size());
}

TEST_F(MpiBackend, AdoptRefusesWorldAndNull) {
  EXPECT_EQ(kind_of_error([] { MpiCommunicator::adopt(MPI_COMM_WORLD); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(kind_of_error([] { MpiCommunicator::adopt(MPI_COMM_NULL); }), ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace fk::collectives::testing
