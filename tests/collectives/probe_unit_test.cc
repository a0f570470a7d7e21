// Bandwidth-probe formulas without MPI: nccl-tests' bus-bandwidth factors and byte
// counts S per collective, the sweep shapes (including sizes that round to 0 per rank),
// the verifiable pattern's exactness in fp16/bf16 for up to 1024 ranks, and the
// table formatter against a golden output.
#include "collectives/bandwidth_probe.h"
#include "collectives/probe_format.h"
#include "collectives/probe_pattern.h"
#include "core/error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace fk::collectives {
namespace {

using C = ProbeCollective;

TEST(ProbeFormulas, BusFactorsAreNcclTests) {
  for (int n : {1, 2, 3, 4, 8, 16}) {
    const double d = n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kAllReduce, n), 2.0 * (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kReduceScatter, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kAllGather, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kAllToAll, n), (d - 1) / d) << n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kBroadcast, n), 1.0) << n;
    EXPECT_DOUBLE_EQ(probe_bus_factor(C::kSendRecv, n), 1.0) << n;
  }
  EXPECT_DOUBLE_EQ(probe_bus_factor(C::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(probe_bus_factor(C::kAllGather, 4), 0.75);
  EXPECT_THROW(probe_bus_factor(C::kAllReduce, 0), Error);
}

TEST(ProbeFormulas, ShapesAndBytesPerCollective) {
  // 1 MiB of fp32 = 262144 elements on 8 ranks.
  const size_t B = 1 << 20, N = B / 4;
  ProbeShape s = probe_shape(C::kAllReduce, B, DType::kF32, 8);
  EXPECT_EQ(s.send_count, N);
  EXPECT_EQ(s.recv_count, N);
  EXPECT_EQ(s.param_count, N);
  EXPECT_EQ(s.bytes, B);  // S = count * size
  s = probe_shape(C::kAllGather, B, DType::kF32, 8);
  EXPECT_EQ(s.send_count, N / 8);
  EXPECT_EQ(s.recv_count, N);
  EXPECT_EQ(s.param_count, N / 8);
  EXPECT_EQ(s.bytes, B);  // S = count * size * n
  s = probe_shape(C::kReduceScatter, B, DType::kF32, 8);
  EXPECT_EQ(s.send_count, N);
  EXPECT_EQ(s.recv_count, N / 8);
  EXPECT_EQ(s.param_count, N / 8);
  EXPECT_EQ(s.bytes, B);
  s = probe_shape(C::kAllToAll, B, DType::kF32, 8);
  EXPECT_EQ(s.send_count, N);
  EXPECT_EQ(s.recv_count, N);
  EXPECT_EQ(s.param_count, N / 8);
  EXPECT_EQ(s.bytes, B);
  s = probe_shape(C::kBroadcast, B, DType::kBF16, 8);
  EXPECT_EQ(s.param_count, B / 2);
  EXPECT_EQ(s.bytes, B);
  s = probe_shape(C::kSendRecv, B, DType::kF16, 3);
  EXPECT_EQ(s.param_count, B / 2);
  EXPECT_EQ(s.bytes, B);
}

TEST(ProbeFormulas, SplitCollectivesRoundDownPerRank) {
  // 100 bytes of fp32 = 25 elements over 3 ranks: 8 per rank, S = 96 bytes.
  ProbeShape s = probe_shape(C::kAllGather, 100, DType::kF32, 3);
  EXPECT_EQ(s.param_count, 8u);
  EXPECT_EQ(s.recv_count, 24u);
  EXPECT_EQ(s.bytes, 96u);
  s = probe_shape(C::kAllToAll, 100, DType::kF32, 3);
  EXPECT_EQ(s.bytes, 96u);
  // Fewer elements than ranks: count 0, S = 0 (nccl-tests runs these too).
  s = probe_shape(C::kReduceScatter, 8, DType::kF32, 8);
  EXPECT_EQ(s.param_count, 0u);
  EXPECT_EQ(s.bytes, 0u);
  // A partial element is dropped: 7 bytes of fp32 is one element.
  EXPECT_EQ(probe_shape(C::kAllReduce, 7, DType::kF32, 2).param_count, 1u);
}

TEST(ProbeFormulas, CollectiveNamesRoundTrip) {
  EXPECT_EQ(probe_collectives_all().size(), 6u);
  for (ProbeCollective c : probe_collectives_all()) EXPECT_EQ(probe_collective_parse(probe_collective_name(c)), c);
  EXPECT_FALSE(probe_collective_parse("allreduce").has_value());
  EXPECT_TRUE(probe_collective_reduces(C::kAllReduce));
  EXPECT_TRUE(probe_collective_reduces(C::kReduceScatter));
  EXPECT_FALSE(probe_collective_reduces(C::kAllToAll));
}

// Accumulates in the element type, one rounding per step, in rank order and reversed:
// the pattern must make every order exact.
double stepwise(const ProbePattern& p, size_t i, bool reversed) {
  float acc = 0;
  for (int k = 0; k < p.ranks; ++k) {
    const int q = reversed ? p.ranks - 1 - k : k;
    acc = p.op == ReduceOp::kSum
              ? acc + static_cast<float>(p.value(q, i))
              : (k == 0 ? static_cast<float>(p.value(q, i)) : std::max(acc, static_cast<float>(p.value(q, i))));
    float rounded[1] = {acc};
    dtype_round_trip(rounded, 1, p.dtype);
    acc = rounded[0];
  }
  return acc;
}

TEST(ProbePattern, SumsAreExactInHalfPrecisionForManyRanks) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int ranks : {1, 2, 3, 8, 100, 127, 128, 129, 300, 1024, 4096}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
        const ProbePattern p{7, ranks, dtype, true, op};
        for (size_t i = 0; i < 64; ++i) {
          const double exact = p.reduced_value(i);
          EXPECT_EQ(stepwise(p, i, false), exact) << dtype_name(dtype) << " ranks " << ranks << " i " << i;
          EXPECT_EQ(stepwise(p, i, true), exact) << dtype_name(dtype) << " ranks " << ranks << " i " << i;
        }
      }
    }
  }
}

TEST(ProbePattern, ValuesVaryAndRoundTripEveryDtype) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64, DType::kU8}) {
    const ProbePattern p{1, 4, dtype, false, ReduceOp::kSum};
    std::set<double> seen;
    std::vector<unsigned char> buf(64 * dtype_size(dtype));
    for (size_t i = 0; i < 64; ++i) {
      const double v = p.value(static_cast<int>(i % 4), i);
      seen.insert(v);
      probe_store(dtype, buf.data(), i, v);
      EXPECT_EQ(probe_load(dtype, buf.data(), i), v) << dtype_name(dtype);
    }
    EXPECT_GT(seen.size(), 20u) << dtype_name(dtype) << ": values should differ between elements";
    probe_poison(dtype, buf.data(), 64);
    for (size_t i = 0; i < 64; ++i) EXPECT_FALSE(probe_load(dtype, buf.data(), i) == p.value(0, i));
  }
  // A different seed changes the data (so a stale result cannot pass a check run).
  const ProbePattern a{1, 2, DType::kF32, false, ReduceOp::kSum}, b{2, 2, DType::kF32, false, ReduceOp::kSum};
  int same = 0;
  for (size_t i = 0; i < 100; ++i) same += a.value(0, i) == b.value(0, i);
  EXPECT_LT(same, 10);
}

TEST(ProbeFormat, GoldenTable) {
  ProbeRow a;
  a.collective = C::kAllReduce;
  a.ranks = 8;
  a.bytes = 1048576;
  a.count = 262144;
  a.dtype = DType::kF32;
  a.op = ReduceOp::kSum;
  a.time_us = 123.456;
  a.algbw_gbs = 8.4935;
  a.busbw_gbs = 14.8636;
  a.wrong = 0;
  ProbeRow b = a;
  b.bytes = 8;
  b.count = 2;
  b.time_us = 6.2149;
  b.algbw_gbs = 0.0013;
  b.busbw_gbs = 0.0022;
  b.wrong = 3;
  ProbeRow c;
  c.collective = C::kBroadcast;
  c.ranks = 1;
  c.bytes = 4194304;
  c.count = 2097152;
  c.dtype = DType::kBF16;
  c.root = 0;
  c.time_us = 15000.4;
  c.algbw_gbs = 279.6;
  c.busbw_gbs = 279.6;
  const std::string golden =
      "# all_reduce on 8 ranks\n"
      "#       size         count    type   redop    root       time     algbw     busbw    #wrong\n"
      "#        (B)    (elements)                               (us)    (GB/s)    (GB/s)\n"
      "     1048576        262144    fp32     sum      -1      123.5      8.49     14.86         0\n"
      "           8             2    fp32     sum      -1       6.21      0.00      0.00         3\n"
      "# broadcast on 1 rank\n"
      "#       size         count    type   redop    root       time     algbw     busbw    #wrong\n"
      "#        (B)    (elements)                               (us)    (GB/s)    (GB/s)\n"
      "     4194304       2097152    bf16       -       0      15000    279.60    279.60         0\n"
      "# Avg bus bandwidth: 98.1553 GB/s over 3 rows\n";
  EXPECT_EQ(probe_format_table({a, b, c}), golden);
  EXPECT_EQ(probe_format_table({}), "");
}

}  // namespace
}  // namespace fk::collectives
