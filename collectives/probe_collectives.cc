// One ProbeCollectiveDef per collective. Shapes and bus factors follow nccl-tests
// (src/all_reduce.cu, all_gather.cu, reduce_scatter.cu, alltoall.cu, broadcast.cu,
// sendrecv.cu: <Coll>GetCollByteCount and <Coll>GetBw; doc/PERFORMANCE.md).
#include "collectives/probe_collectives.h"

#include "core/error.h"

#include <algorithm>

namespace fk::collectives {

namespace {

double factor_one(int) { return 1.0; }
double factor_ring(int n) { return static_cast<double>(n - 1) / n; }  // (n-1)/n
double factor_all_reduce(int n) { return 2.0 * (n - 1) / n; }         // 2(n-1)/n

// all_reduce: count in, count out; S = count * size.
ProbeShape all_reduce_shape(size_t count, int) { return {count, count, count, 0}; }
double all_reduce_expected(const ProbePattern& p, const ProbeShape&, int, int, size_t i) { return p.reduced_value(i); }
void all_reduce_run(Communicator& c, const void* s, void* r, const ProbeShape& sh, DType t, ReduceOp op, int) {
  c.all_reduce(s, r, sh.param_count, t, op);
}

// all_gather: count/n per rank in, (count/n)*n out; S = recv bytes.
ProbeShape all_gather_shape(size_t count, int n) {
  const size_t per = count / static_cast<size_t>(n);
  return {per, per * static_cast<size_t>(n), per, 0};
}
double all_gather_expected(const ProbePattern& p, const ProbeShape& sh, int, int, size_t i) {
  const size_t per = sh.param_count;
  return p.value(static_cast<int>(i / per), i % per);
}
void all_gather_run(Communicator& c, const void* s, void* r, const ProbeShape& sh, DType t, ReduceOp, int) {
  c.all_gather(s, r, sh.param_count, t);
}

// reduce_scatter: (count/n)*n in, count/n out; S = send bytes.
ProbeShape reduce_scatter_shape(size_t count, int n) {
  const size_t per = count / static_cast<size_t>(n);
  return {per * static_cast<size_t>(n), per, per, 0};
}
double reduce_scatter_expected(const ProbePattern& p, const ProbeShape& sh, int rank, int, size_t i) {
  return p.reduced_value(static_cast<size_t>(rank) * sh.param_count + i);
}
void reduce_scatter_run(Communicator& c, const void* s, void* r, const ProbeShape& sh, DType t, ReduceOp op, int) {
  c.reduce_scatter(s, r, sh.param_count, t, op);
}

// all_to_all: n blocks of count/n each way; S = send bytes.
ProbeShape all_to_all_shape(size_t count, int n) {
  const size_t per = count / static_cast<size_t>(n);
  return {per * static_cast<size_t>(n), per * static_cast<size_t>(n), per, 0};
}
double all_to_all_expected(const ProbePattern& p, const ProbeShape& sh, int rank, int, size_t i) {
  const size_t per = sh.param_count;
  const int from = static_cast<int>(i / per);  // recv block q comes from rank q's block `rank`
  return p.value(from, static_cast<size_t>(rank) * per + i % per);
}
void all_to_all_run(Communicator& c, const void* s, void* r, const ProbeShape& sh, DType t, ReduceOp, int) {
  c.all_to_all(s, r, sh.param_count, t);
}

// broadcast: count elements in place from the root; S = count * size.
ProbeShape broadcast_shape(size_t count, int) { return {count, count, count, 0}; }
double broadcast_expected(const ProbePattern& p, const ProbeShape&, int, int root, size_t i) {
  return p.value(root, i);
}
void broadcast_run(Communicator& c, const void*, void* r, const ProbeShape& sh, DType t, ReduceOp, int root) {
  c.broadcast(r, sh.param_count, t, root);
}

// sendrecv: a ring, rank r sends to r+1 and receives from r-1; S = count * size.
ProbeShape sendrecv_shape(size_t count, int) { return {count, count, count, 0}; }
double sendrecv_expected(const ProbePattern& p, const ProbeShape&, int rank, int, size_t i) {
  return p.value((rank - 1 + p.ranks) % p.ranks, i);
}
void sendrecv_run(Communicator& c, const void* s, void* r, const ProbeShape& sh, DType t, ReduceOp, int) {
  const int n = c.size();
  c.send_recv(s, sh.param_count, (c.rank() + 1) % n, r, sh.param_count, (c.rank() - 1 + n) % n, t, 0);
}

const ProbeCollectiveDef kDefs[] = {
    {ProbeCollective::kAllReduce, "all_reduce", true, false, all_reduce_shape, factor_all_reduce, all_reduce_expected,
     all_reduce_run},
    {ProbeCollective::kAllGather, "all_gather", false, false, all_gather_shape, factor_ring, all_gather_expected,
     all_gather_run},
    {ProbeCollective::kReduceScatter, "reduce_scatter", true, false, reduce_scatter_shape, factor_ring,
     reduce_scatter_expected, reduce_scatter_run},
    {ProbeCollective::kAllToAll, "all_to_all", false, false, all_to_all_shape, factor_ring, all_to_all_expected,
     all_to_all_run},
    {ProbeCollective::kBroadcast, "broadcast", false, true, broadcast_shape, factor_one, broadcast_expected,
     broadcast_run},
    {ProbeCollective::kSendRecv, "sendrecv", false, false, sendrecv_shape, factor_one, sendrecv_expected, sendrecv_run},
};

}  // namespace

const ProbeCollectiveDef& probe_collective_def(ProbeCollective c) {
  for (const ProbeCollectiveDef& d : kDefs)
    if (d.kind == c) return d;
  fail(ErrorKind::kInternal, "probe: unknown collective {}", static_cast<int>(c));
}

std::string_view probe_collective_name(ProbeCollective c) { return probe_collective_def(c).name; }

std::optional<ProbeCollective> probe_collective_parse(std::string_view name) {
  for (const ProbeCollectiveDef& d : kDefs)
    if (d.name == name) return d.kind;
  return std::nullopt;
}

std::vector<ProbeCollective> probe_collectives_all() {
  std::vector<ProbeCollective> out;
  for (const ProbeCollectiveDef& d : kDefs) out.push_back(d.kind);
  return out;
}

bool probe_collective_reduces(ProbeCollective c) { return probe_collective_def(c).reduces; }

double probe_bus_factor(ProbeCollective c, int ranks) {
  if (ranks < 1) fail(ErrorKind::kInvalidArgument, "probe_bus_factor: ranks must be >= 1, got {}", ranks);
  return probe_collective_def(c).bus_factor(ranks);
}

ProbeShape probe_shape(ProbeCollective c, size_t bytes, DType dtype, int ranks) {
  if (ranks < 1) fail(ErrorKind::kInvalidArgument, "probe_shape: ranks must be >= 1, got {}", ranks);
  const size_t esize = dtype_size(dtype);
  ProbeShape s = probe_collective_def(c).shape(bytes / esize, ranks);
  s.bytes = std::max(s.send_count, s.recv_count) * esize;
  return s;
}

}  // namespace fk::collectives
