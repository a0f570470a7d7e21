// The probe's driver: option checks, the size sweep, warm-up, timing, verification
// and the cross-rank reductions of time (max) and wrong elements (sum). The
// per-collective parts are in probe_collectives.cc.
#include "collectives/bandwidth_probe.h"

#include "collectives/probe_collectives.h"
#include "core/error.h"

#include <chrono>
#include <limits>

namespace fk::collectives {

namespace {

void validate(const Communicator& comm, const ProbeOptions& o) {
  if (o.collectives.empty()) fail(ErrorKind::kInvalidArgument, "probe: no collectives requested");
  if (o.min_bytes < 1) fail(ErrorKind::kInvalidArgument, "probe: min_bytes must be >= 1");
  if (o.max_bytes < o.min_bytes)
    fail(ErrorKind::kInvalidArgument, "probe: max_bytes {} is below min_bytes {}", o.max_bytes, o.min_bytes);
  if (o.step_factor < 2) fail(ErrorKind::kInvalidArgument, "probe: step_factor must be >= 2, got {}", o.step_factor);
  if (o.warmup_iters < 0 || o.iters < 1 || o.check_runs < 1)
    fail(ErrorKind::kInvalidArgument, "probe: need warmup_iters >= 0, iters >= 1, check_runs >= 1 (got {}, {}, {})",
         o.warmup_iters, o.iters, o.check_runs);
  if (o.root < 0 || o.root >= comm.size())
    fail(ErrorKind::kInvalidArgument, "probe: root {} is outside the communicator's ranks [0, {})", o.root,
         comm.size());
  for (ProbeCollective c : o.collectives)
    if (probe_collective_reduces(c) && !comm.supports(o.dtype, o.op))
      fail(ErrorKind::kUnsupported, "probe: the {} backend cannot {} {} with {}", comm.backend(),
           probe_collective_name(c), dtype_name(o.dtype), reduce_op_name(o.op));
}

// Reduces one scalar over all ranks through `space` (device memory for NCCL).
template <typename T>
T reduce_scalar(Communicator& comm, BufferSpace& space, T value, DType dtype, ReduceOp op) {
  SpaceBuffer buf(space, sizeof(T));
  buf.upload(&value, sizeof(T));
  comm.all_reduce(buf.data(), buf.data(), 1, dtype, op);
  comm.synchronize();
  buf.download(&value, sizeof(T));
  return value;
}

// Sizes min, min*f, ... <= max, stopping before overflow.
std::vector<size_t> sweep_sizes(const ProbeOptions& o) {
  std::vector<size_t> out;
  for (size_t b = o.min_bytes; b <= o.max_bytes; b *= o.step_factor) {
    out.push_back(b);
    if (b > std::numeric_limits<size_t>::max() / o.step_factor) break;
  }
  return out;
}

class RowRunner {
 public:
  RowRunner(Communicator& comm, const ProbeOptions& o, BufferSpace& space, const ProbeCollectiveDef& def, size_t bytes)
      : comm_(comm),
        o_(o),
        space_(space),
        def_(def),
        shape_(probe_shape(def.kind, bytes, o.dtype, comm.size())),
        esize_(dtype_size(o.dtype)),
        send_(space, shape_.send_count * esize_),
        recv_(space, shape_.recv_count * esize_),
        host_(std::max(shape_.send_count, shape_.recv_count) * esize_) {}

  ProbeRow run() {
    fill_inputs(0);
    for (int i = 0; i < o_.warmup_iters; ++i) run_once();
    comm_.synchronize();
    comm_.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o_.iters; ++i) run_once();
    comm_.synchronize();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - t0;
    const double local_s = elapsed.count() / o_.iters;
    const double seconds = reduce_scalar<double>(comm_, space_, local_s, DType::kF64, ReduceOp::kMax);

    int64_t wrong = 0;
    for (int c = 0; c < o_.check_runs; ++c) wrong += check(static_cast<uint64_t>(c) + 1);
    wrong = reduce_scalar<int64_t>(comm_, space_, wrong, DType::kI64, ReduceOp::kSum);

    ProbeRow row;
    row.collective = def_.kind;
    row.ranks = comm_.size();
    row.bytes = shape_.bytes;
    row.count = shape_.param_count;
    row.dtype = o_.dtype;
    if (def_.reduces) row.op = o_.op;
    row.root = def_.kind == ProbeCollective::kBroadcast ? o_.root : -1;
    row.time_us = seconds * 1e6;
    row.algbw_gbs = seconds > 0 ? static_cast<double>(shape_.bytes) / 1e9 / seconds : 0.0;
    row.busbw_gbs = row.algbw_gbs * def_.bus_factor(comm_.size());
    row.wrong = wrong;
    return row;
  }

 private:
  ProbePattern pattern(uint64_t seed) const { return {seed, comm_.size(), o_.dtype, def_.reduces, o_.op}; }

  // Uploads this rank's inputs for `seed` and poisons the receive buffer.
  void fill_inputs(uint64_t seed) {
    const ProbePattern p = pattern(seed);
    const int rank = comm_.rank();
    if (def_.in_place) {
      if (rank == o_.root)
        for (size_t i = 0; i < shape_.recv_count; ++i) probe_store(o_.dtype, host_.data(), i, p.value(rank, i));
      else
        probe_poison(o_.dtype, host_.data(), shape_.recv_count);
      recv_.upload(host_.data(), shape_.recv_count * esize_);
      return;
    }
    for (size_t i = 0; i < shape_.send_count; ++i) probe_store(o_.dtype, host_.data(), i, p.value(rank, i));
    send_.upload(host_.data(), shape_.send_count * esize_);
    probe_poison(o_.dtype, host_.data(), shape_.recv_count);
    recv_.upload(host_.data(), shape_.recv_count * esize_);
  }

  void run_once() { def_.run(comm_, send_.data(), recv_.data(), shape_, o_.dtype, o_.op, o_.root); }

  // One verified run with fresh inputs; returns this rank's wrong elements.
  int64_t check(uint64_t seed) {
    fill_inputs(seed);
    run_once();
    comm_.synchronize();
    recv_.download(host_.data(), shape_.recv_count * esize_);
    const ProbePattern p = pattern(seed);
    int64_t wrong = 0;
    for (size_t i = 0; i < shape_.recv_count; ++i) {
      const double want = def_.expected(p, shape_, comm_.rank(), o_.root, i);
      if (!(probe_load(o_.dtype, host_.data(), i) == want)) ++wrong;
    }
    return wrong;
  }

  Communicator& comm_;
  const ProbeOptions& o_;
  BufferSpace& space_;
  const ProbeCollectiveDef& def_;
  ProbeShape shape_;
  size_t esize_;
  SpaceBuffer send_, recv_;
  std::vector<unsigned char> host_;
};

}  // namespace

std::vector<ProbeRow> probe_run(Communicator& comm, const ProbeOptions& options, BufferSpace& space) {
  validate(comm, options);
  std::vector<ProbeRow> rows;
  for (ProbeCollective c : options.collectives) {
    const ProbeCollectiveDef& def = probe_collective_def(c);
    for (size_t bytes : sweep_sizes(options)) rows.push_back(RowRunner(comm, options, space, def, bytes).run());
  }
  return rows;
}

}  // namespace fk::collectives
