// GPU test under mpirun (label gpu): nccl_from_mpi bootstraps an NCCL communicator from
// the MPI world (one GPU per rank), and it agrees with the MPI backend on the same
// exactly known data; the bandwidth probe runs on it with 0 wrong elements.
#include "collectives/bandwidth_probe.h"
#include "collectives/nccl_communicator.h"
#include "conformance.h"
#include "device_space.h"
#include "mpi_test_env.h"

namespace fk::collectives::testing {
namespace {

namespace cf = conformance;

class NcclFromMpi : public MpiTest {
 protected:
  void SetUp() override {
    const int devices = cuda_device_count();
    ok_ = devices >= world().size();
    EXPECT_TRUE(ok_) << "needs one GPU per rank: " << world().size() << " ranks, " << devices << " GPUs";
  }
  bool ok_ = false;
};

TEST_F(NcclFromMpi, BootstrapsAndMatchesTheContract) {
  if (!ok_) return;  // every rank sees the same counts, so every rank returns here
  std::unique_ptr<NcclCommunicator> nccl = nccl_from_mpi(world(), world().rank());
  EXPECT_EQ(nccl->rank(), world().rank());
  EXPECT_EQ(nccl->size(), world().size());
  DeviceSpace ds(nccl->device());
  BufferSpace& space = *ds.space;
  for (DType t : {DType::kF32, DType::kBF16, DType::kI64})
    for (size_t count : cf::test_counts()) {
      cf::check_all_reduce(*nccl, space, t, ReduceOp::kSum, count, false);
      cf::check_all_gather(*nccl, space, t, count);
      cf::check_all_to_all(*nccl, space, t, count);
    }
  ProbeOptions o;
  o.max_bytes = 1 << 16;
  o.iters = 3;
  for (const ProbeRow& r : probe_run(*nccl, o, space)) EXPECT_EQ(r.wrong, 0);
}

}  // namespace
}  // namespace fk::collectives::testing
