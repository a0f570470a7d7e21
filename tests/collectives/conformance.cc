#include "conformance.h"

#include "collectives/probe_pattern.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace fk::collectives::conformance {

namespace {

// Data-movement value of element i of rank r: an integer in [-100, 100] ([0, 100] for
// uint8), exact in every dtype, different for neighbouring ranks and elements.
double move_value(DType dtype, int rank, size_t i) {
  const auto v = static_cast<int64_t>((static_cast<size_t>(rank) * 37 + i * 11 + 5) % 201);
  return dtype == DType::kU8 ? static_cast<double>(v % 101) : static_cast<double>(v - 100);
}

// Reduction input: an integer in [-3, 3]; sums over <= 8 ranks stay exact in bf16.
double reduce_value(int rank, size_t i) {
  return static_cast<double>(static_cast<int64_t>((static_cast<size_t>(rank) * 3 + i * 5) % 7) - 3);
}

double reduce_over_ranks(int ranks, size_t i, ReduceOp op) {
  double acc = reduce_value(0, i);
  for (int q = 1; q < ranks; ++q)
    acc = op == ReduceOp::kSum ? acc + reduce_value(q, i) : std::max(acc, reduce_value(q, i));
  return acc;
}

std::string trace(const Communicator& comm, std::string_view what, DType dtype, size_t count) {
  return fmt::format("{} {} count {} on rank {} of {} ({})", what, dtype_name(dtype), count, comm.rank(), comm.size(),
                     comm.backend());
}

// Host staging of one device/host buffer of `n` elements.
struct Staged {
  DType dtype;
  size_t n;
  std::vector<unsigned char> host;
  SpaceBuffer dev;
  Staged(BufferSpace& space, DType t, size_t count)
      : dtype(t), n(count), host(std::max<size_t>(count, 1) * dtype_size(t)), dev(space, count * dtype_size(t)) {}
  void set(size_t i, double v) { probe_store(dtype, host.data(), i, v); }
  double get(size_t i) const { return probe_load(dtype, host.data(), i); }
  void poison() { probe_poison(dtype, host.data(), n); }
  void upload() { dev.upload(host.data(), n * dtype_size(dtype)); }
  void download() { dev.download(host.data(), n * dtype_size(dtype)); }
};

// Compares every element; reports the first few mismatches and the total.
template <typename Expected>
void expect_elements(const Staged& got, Expected&& expected, const std::string& what) {
  size_t wrong = 0;
  for (size_t i = 0; i < got.n; ++i) {
    const double want = expected(i);
    const double have = got.get(i);
    if (!(have == want)) {
      if (++wrong <= 3) ADD_FAILURE() << what << ": element " << i << " is " << have << ", expected " << want;
    }
  }
  EXPECT_EQ(wrong, 0u) << what << ": wrong elements";
}

}  // namespace

std::vector<DType> movement_dtypes() {
  return {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64, DType::kU8};
}

std::vector<DType> reduction_dtypes() {
  return {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64};
}

std::vector<size_t> test_counts() { return {0, 1, 7, 33, 300}; }

void check_all_reduce(Communicator& comm, BufferSpace& space, DType dtype, ReduceOp op, size_t count, bool in_place) {
  const std::string what =
      trace(comm, fmt::format("all_reduce {}{}", reduce_op_name(op), in_place ? " in place" : ""), dtype, count);
  Staged send(space, dtype, count), recv(space, dtype, count);
  for (size_t i = 0; i < count; ++i) send.set(i, reduce_value(comm.rank(), i));
  send.upload();
  recv.poison();
  recv.upload();
  Staged& out = in_place ? send : recv;
  comm.all_reduce(send.dev.data(), out.dev.data(), count, dtype, op);
  comm.synchronize();
  out.download();
  expect_elements(
      out, [&](size_t i) { return reduce_over_ranks(comm.size(), i, op); }, what);
}

void check_all_gather(Communicator& comm, BufferSpace& space, DType dtype, size_t count) {
  const std::string what = trace(comm, "all_gather", dtype, count);
  const auto n = static_cast<size_t>(comm.size());
  Staged send(space, dtype, count), recv(space, dtype, count * n);
  for (size_t i = 0; i < count; ++i) send.set(i, move_value(dtype, comm.rank(), i));
  send.upload();
  recv.poison();
  recv.upload();
  comm.all_gather(send.dev.data(), recv.dev.data(), count, dtype);
  comm.synchronize();
  recv.download();
  expect_elements(
      recv, [&](size_t i) { return move_value(dtype, static_cast<int>(i / count), i % count); }, what);
}

void check_reduce_scatter(Communicator& comm, BufferSpace& space, DType dtype, ReduceOp op, size_t count) {
  const std::string what = trace(comm, fmt::format("reduce_scatter {}", reduce_op_name(op)), dtype, count);
  const auto n = static_cast<size_t>(comm.size());
  Staged send(space, dtype, count * n), recv(space, dtype, count);
  for (size_t i = 0; i < count * n; ++i) send.set(i, reduce_value(comm.rank(), i));
  send.upload();
  recv.poison();
  recv.upload();
  comm.reduce_scatter(send.dev.data(), recv.dev.data(), count, dtype, op);
  comm.synchronize();
  recv.download();
  const size_t base = static_cast<size_t>(comm.rank()) * count;
  expect_elements(
      recv, [&](size_t i) { return reduce_over_ranks(comm.size(), base + i, op); }, what);
}

void check_all_to_all(Communicator& comm, BufferSpace& space, DType dtype, size_t count) {
  const std::string what = trace(comm, "all_to_all", dtype, count);
  const auto n = static_cast<size_t>(comm.size());
  Staged send(space, dtype, count * n), recv(space, dtype, count * n);
  for (size_t i = 0; i < count * n; ++i) send.set(i, move_value(dtype, comm.rank(), i));
  send.upload();
  recv.poison();
  recv.upload();
  comm.all_to_all(send.dev.data(), recv.dev.data(), count, dtype);
  comm.synchronize();
  recv.download();
  // Block q of recv is block `rank` of rank q's send buffer.
  const size_t mine = static_cast<size_t>(comm.rank()) * count;
  expect_elements(
      recv, [&](size_t i) { return move_value(dtype, static_cast<int>(i / count), mine + i % count); }, what);
}

void check_all_to_allv(Communicator& comm, BufferSpace& space, DType dtype, size_t extra) {
  const std::string what = trace(comm, "all_to_allv", dtype, extra);
  const int n = comm.size(), r = comm.rank();
  auto block = [&](int from, int to) { return static_cast<size_t>((2 * from + to) % 3) + extra; };
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t stotal = 0, rtotal = 0;
  for (int q = 0; q < n; ++q) {
    const auto i = static_cast<size_t>(q);
    sc[i] = block(r, q);
    sd[i] = stotal + 1;  // a one-element gap before each block: displacements are honoured
    stotal += sc[i] + 1;
    rc[i] = block(q, r);
    rd[i] = rtotal + 1;
    rtotal += rc[i] + 1;
  }
  // Element j of the block from `from` to `to`.
  auto value = [&](int from, int to, size_t j) { return move_value(dtype, from * 8 + to, j); };
  Staged send(space, dtype, stotal), recv(space, dtype, rtotal);
  send.poison();
  for (int q = 0; q < n; ++q)
    for (size_t j = 0; j < sc[static_cast<size_t>(q)]; ++j) send.set(sd[static_cast<size_t>(q)] + j, value(r, q, j));
  send.upload();
  recv.poison();
  recv.upload();
  comm.all_to_allv(send.dev.data(), sc, sd, recv.dev.data(), rc, rd, dtype);
  comm.synchronize();
  recv.download();
  std::vector<double> expected(rtotal, std::nan(""));
  for (int q = 0; q < n; ++q)
    for (size_t j = 0; j < rc[static_cast<size_t>(q)]; ++j) expected[rd[static_cast<size_t>(q)] + j] = value(q, r, j);
  // Gaps between blocks must keep the poison (NaN for floats, a sentinel otherwise).
  Staged probe(space, dtype, 1);
  probe.poison();
  const double poison = probe.get(0);
  size_t wrong = 0;
  for (size_t i = 0; i < rtotal; ++i) {
    const double have = recv.get(i);
    const bool ok =
        std::isnan(expected[i]) ? (std::isnan(poison) ? std::isnan(have) : have == poison) : have == expected[i];
    if (!ok && ++wrong <= 3) ADD_FAILURE() << what << ": element " << i << " is " << have;
  }
  EXPECT_EQ(wrong, 0u) << what;
}

void check_broadcast(Communicator& comm, BufferSpace& space, DType dtype, size_t count, int root) {
  const std::string what = trace(comm, fmt::format("broadcast from {}", root), dtype, count);
  Staged buf(space, dtype, count);
  if (comm.rank() == root)
    for (size_t i = 0; i < count; ++i) buf.set(i, move_value(dtype, root, i));
  else
    buf.poison();
  buf.upload();
  comm.broadcast(buf.dev.data(), count, dtype, root);
  comm.synchronize();
  buf.download();
  expect_elements(
      buf, [&](size_t i) { return move_value(dtype, root, i); }, what);
}

void check_send_recv_ring(Communicator& comm, BufferSpace& space, DType dtype, size_t count) {
  const std::string what = trace(comm, "send/recv ring", dtype, count);
  const int n = comm.size(), r = comm.rank();
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  Staged send(space, dtype, count), recv(space, dtype, count);
  for (size_t i = 0; i < count; ++i) send.set(i, move_value(dtype, r, i));
  send.upload();
  recv.poison();
  recv.upload();
  if (r % 2 == 0) {
    comm.send(send.dev.data(), count, dtype, next, 7);
    comm.recv(recv.dev.data(), count, dtype, prev, 7);
  } else {
    comm.recv(recv.dev.data(), count, dtype, prev, 7);
    comm.send(send.dev.data(), count, dtype, next, 7);
  }
  comm.synchronize();
  recv.download();
  expect_elements(
      recv, [&](size_t i) { return move_value(dtype, prev, i); }, what);
}

void check_send_recv_combined(Communicator& comm, BufferSpace& space, DType dtype, size_t count) {
  const std::string what = trace(comm, "send_recv ring", dtype, count);
  const int n = comm.size(), r = comm.rank();
  const int next = (r + 1) % n, prev = (r - 1 + n) % n;
  Staged send(space, dtype, count), recv(space, dtype, count);
  for (size_t i = 0; i < count; ++i) send.set(i, move_value(dtype, r, i));
  send.upload();
  recv.poison();
  recv.upload();
  comm.send_recv(send.dev.data(), count, next, recv.dev.data(), count, prev, dtype, 3);
  comm.synchronize();
  recv.download();
  expect_elements(
      recv, [&](size_t i) { return move_value(dtype, prev, i); }, what);
}

void check_split(Communicator& comm, BufferSpace& space) {
  const int n = comm.size(), r = comm.rank();
  std::unique_ptr<Communicator> half = comm.split(r % 2, -r);
  if (half == nullptr) {
    ADD_FAILURE() << "split(" << r % 2 << ", " << -r << ") gave nullptr on rank " << r;
    return;
  }
  const int members = (n - r % 2 + 1) / 2;  // ranks with my parity
  EXPECT_EQ(half->size(), members);
  // key = -rank orders the group by descending parent rank.
  int expected_rank = 0;
  for (int q = r + 2; q < n; q += 2) ++expected_rank;
  EXPECT_EQ(half->rank(), expected_rank);
  // Sum of parent ranks over the group: only my parity contributes.
  Staged v(space, DType::kI64, 1);
  v.set(0, r);
  v.upload();
  half->all_reduce(v.dev.data(), v.dev.data(), 1, DType::kI64, ReduceOp::kSum);
  half->synchronize();
  v.download();
  int64_t want = 0;
  for (int q = r % 2; q < n; q += 2) want += q;
  EXPECT_EQ(v.get(0), static_cast<double>(want)) << "split sum on rank " << r;
  // color < 0: this rank opts out; the others form a group of everyone else.
  std::unique_ptr<Communicator> rest = comm.split(r == 0 ? -1 : 0, r);
  if (r == 0) {
    EXPECT_EQ(rest, nullptr);
  } else if (rest != nullptr) {
    EXPECT_EQ(rest->size(), n - 1);
    EXPECT_EQ(rest->rank(), r - 1);
  } else {
    ADD_FAILURE() << "split with color 0 gave nullptr on rank " << r;
  }
}

}  // namespace fk::collectives::conformance
