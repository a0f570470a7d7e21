// The bandwidth probe on the MPI backend: a tiny sweep of every collective and several
// dtypes finds 0 wrong elements and sane numbers; a communicator that corrupts its
// results is caught by the verification (so "0 wrong" means something).
#include "collectives/bandwidth_probe.h"
#include "collectives/probe_format.h"
#include "core/error.h"
#include "mpi_test_env.h"

namespace fk::collectives::testing {
namespace {

using ProbeMpi = MpiTest;

ProbeOptions tiny(DType dtype, ReduceOp op) {
  ProbeOptions o;
  o.dtype = dtype;
  o.op = op;
  o.min_bytes = 8;
  o.max_bytes = 2048;
  o.step_factor = 4;
  o.warmup_iters = 1;
  o.iters = 2;
  o.check_runs = 2;
  o.root = world().size() - 1;
  return o;
}

TEST_F(ProbeMpi, TinySweepHasNoWrongElements) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
      const ProbeOptions o = tiny(dtype, op);
      const std::vector<ProbeRow> rows = probe_run(world(), o);
      ASSERT_EQ(rows.size(), 6u * 5u);  // 6 collectives x sizes 8, 32, 128, 512, 2048
      for (size_t i = 0; i < rows.size(); ++i) {
        const ProbeRow& r = rows[i];
        SCOPED_TRACE(probe_format_table({r}));
        const ProbeCollective c = probe_collectives_all()[i / 5];
        const ProbeShape shape = probe_shape(c, size_t{8} << (2 * (i % 5)), dtype, world().size());
        EXPECT_EQ(r.collective, c);
        EXPECT_EQ(r.bytes, shape.bytes);
        EXPECT_EQ(r.count, shape.param_count);
        EXPECT_EQ(r.dtype, dtype);
        EXPECT_EQ(r.wrong, 0);
        EXPECT_EQ(r.ranks, world().size());
        EXPECT_GT(r.time_us, 0.0);
        const double algbw = static_cast<double>(r.bytes) / 1e3 / r.time_us;  // bytes/us/1e3 = GB/s
        EXPECT_NEAR(r.algbw_gbs, algbw, 1e-9 * algbw);
        EXPECT_DOUBLE_EQ(r.busbw_gbs, r.algbw_gbs * probe_bus_factor(c, r.ranks));
        EXPECT_EQ(r.op.has_value(), probe_collective_reduces(c));
        EXPECT_EQ(r.root, c == ProbeCollective::kBroadcast ? o.root : -1);
      }
    }
  }
}

TEST_F(ProbeMpi, RowsAreIdenticalOnEveryRank) {
  ProbeOptions o = tiny(DType::kF32, ReduceOp::kSum);
  o.collectives = {ProbeCollective::kAllReduce};
  const std::vector<ProbeRow> rows = probe_run(world(), o);
  for (const ProbeRow& r : rows) {
    double t = r.time_us, tmax = 0;
    world().all_reduce(&t, &tmax, 1, DType::kF64, ReduceOp::kMax);
    EXPECT_EQ(t, tmax) << "time must already be the max over ranks";
  }
}

// Wraps a communicator and adds 1 to the first element of every all_reduce / all_gather
// result on rank 0.
class Corrupting final : public Communicator {
 public:
  explicit Corrupting(Communicator& inner) : in_(inner) {}
  int rank() const override { return in_.rank(); }
  int size() const override { return in_.size(); }
  std::string backend() const override { return in_.backend(); }
  bool supports(DType d, ReduceOp op) const override { return in_.supports(d, op); }
  void all_reduce(const void* s, void* r, size_t n, DType d, ReduceOp op) override {
    in_.all_reduce(s, r, n, d, op);
    if (n > 0 && d == DType::kF32 && rank() == 0) static_cast<float*>(r)[0] += 1.0f;
  }
  void all_gather(const void* s, void* r, size_t n, DType d) override {
    in_.all_gather(s, r, n, d);
    if (n > 0 && d == DType::kF32 && rank() == 0) static_cast<float*>(r)[0] += 1.0f;
  }
  void reduce_scatter(const void* s, void* r, size_t n, DType d, ReduceOp op) override {
    in_.reduce_scatter(s, r, n, d, op);
  }
  void all_to_all(const void* s, void* r, size_t n, DType d) override { in_.all_to_all(s, r, n, d); }
  void all_to_allv(const void* s, const std::vector<size_t>& sc, const std::vector<size_t>& sd, void* r,
                   const std::vector<size_t>& rc, const std::vector<size_t>& rd, DType d) override {
    in_.all_to_allv(s, sc, sd, r, rc, rd, d);
  }
  void broadcast(void* b, size_t n, DType d, int root) override { in_.broadcast(b, n, d, root); }
  void send(const void* b, size_t n, DType d, int p, int t) override { in_.send(b, n, d, p, t); }
  void recv(void* b, size_t n, DType d, int p, int t) override { in_.recv(b, n, d, p, t); }
  void send_recv(const void* s, size_t sn, int dst, void* r, size_t rn, int src, DType d, int t) override {
    in_.send_recv(s, sn, dst, r, rn, src, d, t);
  }
  void barrier() override { in_.barrier(); }
  void synchronize() override { in_.synchronize(); }
  std::unique_ptr<Communicator> split(int c, int k) override { return in_.split(c, k); }

 private:
  Communicator& in_;
};

TEST_F(ProbeMpi, VerificationCatchesWrongResults) {
  Corrupting bad(world());
  ProbeOptions o = tiny(DType::kF32, ReduceOp::kSum);
  o.collectives = {ProbeCollective::kAllReduce, ProbeCollective::kAllGather, ProbeCollective::kBroadcast};
  o.min_bytes = 64;
  o.max_bytes = 64;
  const std::vector<ProbeRow> rows = probe_run(bad, o);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].wrong, o.check_runs) << "all_reduce: one wrong element per check run on rank 0";
  EXPECT_EQ(rows[1].wrong, o.check_runs) << "all_gather: one wrong element per check run on rank 0";
  EXPECT_EQ(rows[2].wrong, 0) << "broadcast is not corrupted";
}

TEST_F(ProbeMpi, BadOptionsAndUnsupportedReductionsThrow) {
  ProbeOptions o = tiny(DType::kF32, ReduceOp::kSum);
  o.min_bytes = 0;
  EXPECT_THROW(probe_run(world(), o), Error);
  o = tiny(DType::kF32, ReduceOp::kSum);
  o.max_bytes = 4;
  o.min_bytes = 8;
  EXPECT_THROW(probe_run(world(), o), Error);
  o = tiny(DType::kU8, ReduceOp::kSum);
  try {
    probe_run(world(), o);
    ADD_FAILURE() << "uint8 all_reduce on MPI should be unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
  }
  o.collectives = {ProbeCollective::kAllGather, ProbeCollective::kSendRecv};  // uint8 moves fine
  for (const ProbeRow& r : probe_run(world(), o)) EXPECT_EQ(r.wrong, 0);
}

}  // namespace
}  // namespace fk::collectives::testing
