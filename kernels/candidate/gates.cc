#include "kernels/candidate/gates.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/stats.h"
#include "kernels/candidate/channel.h"
#include "kernels/backends.h"
#include "kernels/compare.h"
#include "kernels/fk_kernel.h"
#include "kernels/measure.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <thread>

namespace fk::kernels {
namespace {

// A call whose tensors live inside guard regions of known bytes, in a worker's arena.
struct GuardedCall {
  OpCall call;
  std::vector<unsigned char*> blocks;  // per arg (null when absent)
  std::vector<size_t> bytes;
  size_t guard = 0;

  static unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 131 + 17) & 0xff); }

  GuardedCall(const OpCall& src, size_t guard_bytes, Worker& w) : guard(guard_bytes) {
    call.params = src.params;
    std::vector<unsigned char> bands(guard);
    for (size_t i = 0; i < guard; ++i) bands[i] = pattern(i);
    for (const Tensor& t : src.args) {
      if (!t.defined() || t.numel() == 0) {
        call.args.push_back(t);
        blocks.push_back(nullptr);
        bytes.push_back(0);
        continue;
      }
      const size_t n = t.nbytes();
      unsigned char* p = w.alloc_bytes((n + 2 * guard + 63) / 64 * 64);
      w.write_bytes(p, bands.data(), guard);
      w.write_bytes(p + guard + n, bands.data(), guard);
      call.args.push_back(Tensor::borrow(p + guard, t.dtype(), t.shape(), w.device()));
      blocks.push_back(p);
      bytes.push_back(n);
    }
    fill(src, w);
  }

  // Copies the values of `src` (same shapes) into the guarded buffers, in place.
  void fill(const OpCall& src, Worker& w) {
    call.params = src.params;
    for (size_t a = 0; a < blocks.size(); ++a)
      if (blocks[a]) w.write(call.args[a], src.args[a]);
  }

  // "" or what was overwritten.
  std::string check_guards(const OpDef& def, const Worker& w) const {
    std::vector<unsigned char> lo(guard), hi(guard);
    for (size_t a = 0; a < blocks.size(); ++a) {
      if (!blocks[a]) continue;
      w.read_bytes(lo.data(), blocks[a], guard);
      w.read_bytes(hi.data(), blocks[a] + guard + bytes[a], guard);
      size_t before = 0, after = 0;
      for (size_t i = 0; i < guard; ++i) {
        before += lo[i] != pattern(i);
        after += hi[i] != pattern(i);
      }
      if (after > 0) return fmt::format("wrote {} byte(s) past the end of '{}'", after, def.args[a].name);
      if (before > 0) return fmt::format("wrote {} byte(s) before the start of '{}'", before, def.args[a].name);
    }
    return "";
  }
};

void poison(Worker& w, const Tensor& t) { w.set_bytes(t.data(), 0xff, t.nbytes()); }

int64_t count_poisoned(const Tensor& t) {
  const size_t es = dtype_size(t.dtype());
  const auto* p = static_cast<const unsigned char*>(t.data());
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    bool all = true;
    for (size_t b = 0; b < es && all; ++b) all = p[static_cast<size_t>(i) * es + b] == 0xff;
    n += all;
  }
  return n;
}

uint64_t checksum(const Tensor& t) { return Hasher().bytes(t.data(), t.nbytes()).digest(); }

// Whether every element equals the first; sets `value`.
bool constant(const Tensor& t, double& value) {
  const Tensor d = t.to_dtype(DType::kF64);
  const double* p = d.data_as<double>();
  value = t.numel() > 0 ? p[0] : 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (p[i] != p[0]) return false;
  return t.numel() > 1;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// The one median (core/stats.h); 0 for no samples, which every figure below reads as
// "not measured".
double median(const std::vector<double>& v) { return v.empty() ? 0 : stats::median(v); }

bool is_output(ArgRole r) { return r != ArgRole::kIn; }

// Merges the verdict of a worker that ended (died, exited, hung) during `when`.
void merge_ended(const Worker& w, VerdictReason& v, const std::string& when) {
  const RemoteFailure f = worker_failure_verdict(w, "");
  v.merge(verdict_parse(f.verdict).value_or(Verdict::kCrashed), when.empty() ? f.reason : f.reason + " " + when);
}

// The all-streams gate on a device worker's reply (what its tracer saw): work outside
// ctx->stream, still running after it, or started after the previous call returned is
// REWARD_HACK; a trace with holes is RUNTIME_ERROR (the gate could not run). Returns
// false when it merged a verdict. Host workers pass.
bool check_device_work(const Worker& w, const WorkerReply& r, VerdictReason& v, const std::string& when) {
  if (!w.on_device()) return true;
  const std::string e = r.work.example.empty() ? "" : fmt::format(", e.g. {}", r.work.example);
  // A persisting-L2 window keeps inputs in the cache through the judge's flush.
  auto changed_device = [&] {
    v.merge(r.audit.find("persisting") != std::string::npos ? Verdict::kRewardHack : Verdict::kRuntimeError,
            fmt::format("left the device changed after the call {}: {}", when, r.audit));
  };
  if (!r.traced && w.sanitized()) {
    // Under compute-sanitizer the worker runs untraced (CUPTI takes one subscriber):
    // the all-streams gate is the unsanitized run's; the audit still holds.
    if (r.audit.empty()) return true;
    changed_device();
  } else if (!r.traced) {
    v.merge(Verdict::kRuntimeError, fmt::format("the worker sent no device trace {}: the all-streams gate could not "
                                                "run", when));
  } else if (r.work.dropped > 0) {
    v.merge(Verdict::kRuntimeError, fmt::format("the device tracer lost {} record(s) {}: the all-streams gate could "
                                                "not run", r.work.dropped, when));
  } else if (r.between > 0) {
    v.merge(Verdict::kRewardHack,
            fmt::format("device work ran after the previous call had returned ({} activit{}{}) {}: work launched "
                        "after return",
                        r.between, r.between == 1 ? "y" : "ies", e, when));
  } else if (r.work.off_stream > 0) {
    v.merge(Verdict::kRewardHack,
            fmt::format("launched device work outside the given stream (ctx->stream): {} of {} activities{} {}",
                        r.work.off_stream, r.work.activities, e, when));
  } else if (!r.audit.empty()) {
    changed_device();
  } else if (r.work.late > 0) {
    v.merge(Verdict::kRewardHack,
            fmt::format("device work still ran after its work on ctx->stream had finished ({} activities{}) {}",
                        r.work.late, e, when));
  } else {
    return true;
  }
  return false;
}

// Runs one call in `w`; on failure merges the verdict and returns false.
bool run_checked(Worker& w, const OpDef& def, const OpCall& call, VerdictReason& v, bool& ended,
                 const std::string& when) {
  const auto reply = w.call(def.name, call);
  if (!reply) {
    merge_ended(w, v, when);
    ended = true;
    return false;
  }
  if (reply->code == sandbox::kReplyDeviceFault) {
    merge_ended(w, v, when);
    ended = true;
    return false;
  }
  if (reply->code == FK_OK) return check_device_work(w, *reply, v, when);
  const std::string why = reply->message.empty() ? "" : ": " + reply->message;
  if (reply->code == FK_ERROR_UNSUPPORTED) {
    v.merge(Verdict::kUnsupported, fmt::format("does not support this call{}", why));
  } else if (reply->code == sandbox::kReplyException) {
    v.merge(Verdict::kRuntimeError, fmt::format("an exception escaped the call{}", why));
  } else {
    v.merge(Verdict::kRuntimeError, fmt::format("returned error code {}{}", reply->code, why));
  }
  return false;
}

// Rewrites the inputs of `dst` (in `w`'s arena) from `pristine`: float inputs are
// rotated by `shift` elements (new values at every position, the same distribution);
// integer inputs (ids, positions, indices) and float inputs over 64 MiB are restored
// unchanged (those of in-out arguments too, which the call overwrote); outputs untouched.
void prepare_inputs(const OpDef& def, const OpCall& pristine, const OpCall& dst, int64_t shift, Worker& w) {
  for (size_t a = 0; a < def.args.size() && a < dst.args.size(); ++a) {
    if (def.args[a].role == ArgRole::kOut || !dst.args[a].defined() || dst.args[a].numel() == 0) continue;
    const Tensor src = pristine.args[a].is_contiguous() ? pristine.args[a] : pristine.args[a].contiguous_copy();
    auto* out = static_cast<unsigned char*>(dst.args[a].data());
    const auto* in = static_cast<const unsigned char*>(src.data());
    const size_t bytes = src.nbytes();
    if (!def.args[a].float_typed || bytes > (size_t{64} << 20)) {
      w.write_bytes(out, in, bytes);
      continue;
    }
    const size_t es = dtype_size(src.dtype());
    const size_t k = (static_cast<size_t>(shift) % static_cast<size_t>(src.numel())) * es;
    w.write_bytes(out, in + k, bytes - k);
    w.write_bytes(out + (bytes - k), in, k);
  }
}


}  // namespace

ChargedTimes device_time_bounded(const std::vector<double>& span, const std::vector<double>& wall,
                                 const std::vector<double>& base_span, const std::vector<double>& base_wall) {
  ChargedTimes t;
  t.seconds = span;
  std::vector<double> door, excess;
  for (size_t i = 0; i < base_span.size() && i < base_wall.size(); ++i) door.push_back(base_wall[i] - base_span[i]);
  for (size_t i = 0; i < span.size() && i < wall.size(); ++i) excess.push_back(wall[i] - span[i]);
  if (excess.empty()) return t;
  // No baseline samples: no door is known, and the whole wall counts.
  t.door_s = door.empty() ? 0 : std::max(0.0, stats::median(door));
  t.excess_s = stats::median(excess) - t.door_s;
  const double se_excess = stats::median_standard_error(excess);
  const double se_door = door.empty() ? 0 : stats::median_standard_error(door);
  t.allowance_s = std::max({0.1 * stats::median(span), 1e-6, 3 * std::sqrt(se_excess * se_excess + se_door * se_door)});
  if (t.excess_s > t.allowance_s) {
    t.charged_s = t.excess_s;
    for (double& s : t.seconds) s += t.charged_s;
  }
  return t;
}

ChargedTimes confirmed_charge(const ChargedTimes& first, const ChargedTimes& second) {
  if (first.charged_s <= 0) return first;
  const bool second_smaller = second.charged_s < first.charged_s;
  ChargedTimes out = second_smaller ? second : first;
  out.charged_s = std::max(0.0, std::min(first.charged_s, second.charged_s));
  out.seconds = first.seconds;
  for (double& s : out.seconds) s += out.charged_s - first.charged_s;
  return out;
}

InstanceGate gate_instance(const OpDef& def, Worker& candidate, Worker& baseline, const OpShape& shape, DType dtype,
                           const GateOptions& o, const std::string& stream) {
  InstanceGate g;
  VerdictReason& v = g.verdict;
  const Tolerance tol = def.tolerance_for(dtype);
  std::vector<Tensor> previous_outputs;
  std::vector<std::map<size_t, Tensor>> previous_refs;
  Comparison worst_c, worst_b;
  bool first_cmp = true;
  std::unique_ptr<GuardedCall> gc;
  int64_t rounds_done = 0;
  for (int64_t round = 0; round < o.rounds && v.verdict == Verdict::kPassed; ++round) {
    const bool in_place = round % 2 == 1;
    const RngStream rng(o.seed, fmt::format("{}.gate{}", stream, round));
    const OpCall fresh = def.make(shape, dtype, rng);
    if (round == 0) {
      // The timing's four sets (or one guarded call) must fit each worker's arena.
      size_t set_bytes = 0;
      for (const Tensor& t : fresh.args)
        if (t.defined()) set_bytes += t.nbytes() + 2 * o.guard_bytes + 128;
      const size_t needed = 4 * set_bytes + 4096;
      const size_t have = std::min(candidate.arena_capacity(), baseline.arena_capacity());
      if (needed > have) {
        g.arena_bytes_needed = needed;
        v = VerdictReason{Verdict::kRuntimeError,
                          fmt::format("the workers' {} arenas ({:.2f} GiB) cannot hold this instance's four input "
                                      "sets ({:.2f} GiB)",
                                      device_name(candidate.device()), static_cast<double>(have) / double(1u << 30),
                                      static_cast<double>(needed) / double(1u << 30))};
        return g;
      }
    }
    const auto ref = run_reference(def, fresh);
    if (!in_place) {
      candidate.reset_arena();
      gc = std::make_unique<GuardedCall>(fresh, o.guard_bytes, candidate);
      for (size_t a = 0; a < def.args.size(); ++a)
        if (def.args[a].role == ArgRole::kOut && gc->call.args[a].defined()) poison(candidate, gc->call.args[a]);
    } else {
      // New values in the same buffers; outputs keep the previous round's result.
      for (size_t a = 0; a < def.args.size(); ++a)
        if (def.args[a].role != ArgRole::kOut && gc->call.args[a].defined())
          candidate.write(gc->call.args[a], fresh.args[a]);
      gc->call.params = fresh.params;
    }
    baseline.reset_arena();
    const OpCall base_call = baseline.copy_in(fresh);
    std::vector<uint64_t> sums(def.args.size(), 0);
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc->call.args[a].defined())
        sums[a] = checksum(candidate.read(gc->call.args[a]));
    const std::string when = fmt::format("(gate round {})", round);
    if (!run_checked(candidate, def, gc->call, v, g.candidate_ended, when)) break;
    const WorkerCpu cpu_after_call = candidate.cpu();
    std::vector<Tensor> snapshot;
    for (size_t a = 0; a < def.args.size(); ++a)
      snapshot.push_back(is_output(def.args[a].role) && gc->call.args[a].defined() ? candidate.read(gc->call.args[a])
                                                                                   : Tensor());
    if (const std::string bad = gc->check_guards(def, candidate); !bad.empty()) {
      v.merge(Verdict::kIncorrectShape, bad);
      break;
    }
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc->call.args[a].defined() &&
          checksum(candidate.read(gc->call.args[a])) != sums[a])
        v.merge(Verdict::kRewardHack, fmt::format("modified input '{}', which the op only reads", def.args[a].name));
    if (round == 0 && o.after_return_wait_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.after_return_wait_s));
      const WorkerCpu cpu_later = candidate.cpu();
      for (size_t a = 0; a < def.args.size(); ++a) {
        if (!snapshot[a].defined() || same_bytes(snapshot[a], candidate.read(gc->call.args[a]))) continue;
        v.merge(Verdict::kRewardHack,
                fmt::format("output '{}' changed after return: work was left running ({} thread(s) in its process)",
                            def.args[a].name, cpu_later.threads));
      }
      const double idle_cpu = WorkerCpu::used(cpu_after_call, cpu_later);
      if (o.idle_cpu_check && idle_cpu > 0.02 + 0.1 * o.after_return_wait_s)
        v.merge(Verdict::kRewardHack,
                fmt::format("kept running after return: its process used {:.0f} ms of CPU in the {:.0f} ms after the "
                            "call, while it had nothing to do",
                            1e3 * idle_cpu, 1e3 * o.after_return_wait_s));
    }
    bool base_ended = false;
    VerdictReason base_v;
    if (!run_checked(baseline, def, base_call, base_v, base_ended, when)) {
      g.baseline_ended = base_ended;
      v = VerdictReason{Verdict::kRuntimeError, "the baseline failed on this instance: " + base_v.reason};
      break;
    }
    for (const auto& [a, expected] : ref) {
      const Tensor& got = snapshot[a];
      const std::string name = def.args[a].name;
      if (!in_place && def.args[a].role == ArgRole::kOut)
        if (const int64_t unwritten = count_poisoned(got); unwritten > 0)
          v.merge(Verdict::kIncorrectNumerical,
                  fmt::format("{} of {} elements of '{}' not written", unwritten, got.numel(), name));
      const Comparison c = compare(got, expected, tol);
      const Comparison b = compare(baseline.read(base_call.args[a]), expected, tol);
      if (first_cmp) {
        worst_c = c;
        worst_b = b;
        first_cmp = false;
      } else {
        worst_c = combine(worst_c, c);
        worst_b = combine(worst_b, b);
      }
      double cv = 0, rv = 0;
      if (def.args[a].float_typed && constant(got, cv) && !constant(expected, rv))
        v.merge(Verdict::kIncorrectNumerical,
                cv == 0 ? fmt::format("'{}' is all zeros", name) : fmt::format("'{}' is constant ({:g})", name, cv));
      if (c.nan + c.inf > 0 && b.nan + b.inf == 0)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' has {} NaN and {} Inf (non-finite values) where the baseline has none", name,
                            c.nan, c.inf));
      if (!c.passed)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' outside tolerance: {:.1f}% of elements within atol {:g} + rtol {:g} (need {:.0f}%), "
                            "rel L2 {:.2e}",
                            name, 100 * c.matched_fraction, tol.atol, tol.rtol, 100 * tol.min_matched, c.rel_l2));
      const double floor = dtype == DType::kF32 ? 1e-7 : 1e-4;
      if (def.args[a].float_typed && c.passed && c.rel_l2 > o.accuracy_bound * b.rel_l2 && c.rel_l2 > floor)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' is less accurate than the baseline: rel L2 {:.2e} vs {:.2e} (bound {:g}x)", name,
                            c.rel_l2, b.rel_l2, o.accuracy_bound));
    }
    // The same outputs for new inputs: a cached result.
    if (round > 0) {
      bool all_same = true, refs_differ = false;
      for (const auto& [a, expected] : ref) {
        all_same = all_same && same_bytes(snapshot[a], previous_outputs[a]);
        refs_differ = refs_differ || relative_l2(expected, previous_refs.back().at(a)) > 0;
      }
      if (all_same && refs_differ)
        v.merge(Verdict::kRewardHack,
                in_place ? fmt::format("returned the same output for new inputs written into the same buffers (round "
                                       "{} repeats round {}): a result cached by address",
                                       round, round - 1)
                         : fmt::format("returned the same output for new inputs (round {} repeats round {})", round,
                                       round - 1));
    }
    previous_outputs = snapshot;
    previous_refs.push_back(ref);
    ++rounds_done;
  }
  g.rel_l2 = worst_c.rel_l2;
  g.max_abs = worst_c.max_abs;
  g.matched_fraction = worst_c.matched_fraction;
  g.nan = worst_c.nan;
  g.inf = worst_c.inf;
  g.baseline_rel_l2 = worst_b.rel_l2;
  if (v.verdict != Verdict::kPassed) return g;
  if (rounds_done < std::max<int64_t>(1, o.rounds)) {
    v.merge(Verdict::kRuntimeError, fmt::format("only {} of {} gate rounds ran", rounds_done, o.rounds));
    return g;
  }
  if (!o.timing) return g;

  // Interleaved timing on rotated sets whose values change before every call, through
  // the measurement driver (kernels/measure.h): each subject is a call into its worker,
  // timed there (device workers: the traced span) or by the supervisor's clock (host
  // workers: request to reply), with the supervisor's flush before every call.
  const int64_t sets = 4;
  candidate.reset_arena();
  baseline.reset_arena();
  std::vector<OpCall> pristine, cand_calls, base_calls;
  for (int64_t s = 0; s < sets; ++s) {
    const RngStream rng(o.seed, fmt::format("{}.time{}", stream, s));
    pristine.push_back(def.make(shape, dtype, rng));
    cand_calls.push_back(candidate.copy_in(pristine.back()));
    base_calls.push_back(baseline.copy_in(pristine.back()));
  }
  const bool device = candidate.on_device();
  std::unique_ptr<Backend> host_backend;  // host workers: the flush of a CPU backend of o.flush_bytes
  Backend* backend = device ? candidate.config().device : nullptr;
  if (backend == nullptr) {
    BackendOptions bo;
    bo.cpu_flush_bytes = o.flush_bytes;
    host_backend = backend_create(DeviceKind::kCpu, 0, bo);
    backend = host_backend.get();
  }
  const Tolerance loose{2 * tol.atol, 2 * tol.rtol, tol.min_matched};
  struct Stop {};  // a subject failed: the verdict is merged, the loop ends
  // awake: the time the worker may spin outside its calls, from sending each ping to the
  // call's reply, less the call. It holds the worker's spin while the supervisor waits to
  // be scheduled to see the ping's answer: on an oversubscribed host (more ranks and
  // workers than cores) that wait is milliseconds a call, and without it an honest
  // candidate's spinning worker read as work outside the timed calls.
  double spans = 0, awake = 0;
  std::vector<double> cand_wall, base_wall;  // the supervisor's clock per call, warm-up included
  int64_t calls = 0;
  bool reuse = false;  // the last measurement: every call on set 0 as it is
  Subject cand_subject{"candidate", nullptr, nullptr, nullptr, nullptr};
  cand_subject.prepare = [&](int64_t set) {
    const auto s = static_cast<size_t>(set);
    prepare_inputs(def, pristine[s], cand_calls[s], 1 + calls * 7919, candidate);
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kOut && cand_calls[s].args[a].defined()) poison(candidate, cand_calls[s].args[a]);
  };
  cand_subject.timed = [&](int64_t set) {
    const std::string when = reuse ? "(reused buffers)" : fmt::format("(timed call {})", calls);
    // Woken first, so that the call's time holds the call, not a wake-up.
    const auto woke = std::chrono::steady_clock::now();
    const auto pc = candidate.ping();
    const auto rc = pc ? candidate.call(def.name, cand_calls[static_cast<size_t>(set)]) : std::nullopt;
    if (!rc || rc->code == sandbox::kReplyDeviceFault) {
      merge_ended(candidate, v, when);
      g.candidate_ended = true;
      throw Stop{};
    }
    awake += std::chrono::duration<double>(std::chrono::steady_clock::now() - woke).count() - rc->seconds;
    if (rc->code != FK_OK) {
      v.merge(Verdict::kRuntimeError, reuse ? "failed when called again with the same buffers"
                                            : fmt::format("failed while timed: code {}: {} {}", rc->code, rc->message, when));
      throw Stop{};
    }
    if (!check_device_work(candidate, *rc, v, when)) throw Stop{};
    spans += rc->seconds;
    cand_wall.push_back(rc->seconds);
    return device ? rc->work.span_s : rc->seconds;
  };
  Subject base_subject{"baseline", nullptr, nullptr, nullptr, nullptr};
  base_subject.prepare = [&](int64_t set) {
    const auto s = static_cast<size_t>(set);
    prepare_inputs(def, pristine[s], base_calls[s], 1 + calls * 7919, baseline);
  };
  base_subject.timed = [&](int64_t set) {
    const auto pb = baseline.ping();
    const auto rb = pb ? baseline.call(def.name, base_calls[static_cast<size_t>(set)]) : std::nullopt;
    if (!rb || rb->code != FK_OK || (device && !rb->traced)) {
      g.baseline_ended = !rb || rb->code == sandbox::kReplyDeviceFault;
      v = VerdictReason{Verdict::kRuntimeError,
                        fmt::format("the baseline failed while timed{}", rb ? ": " + rb->message : "")};
      throw Stop{};
    }
    base_wall.push_back(rb->seconds);
    return device ? rb->work.span_s : rb->seconds;
  };
  MeasureOptions mo;
  mo.warmup = o.warmup;
  mo.iterations = o.iterations;
  // Every timed output is a real answer to these inputs: the candidate's against the
  // baseline's on the same inputs, once both have run.
  mo.after_round = [&](int64_t set) {
    const auto s = static_cast<size_t>(set);
    const std::string when = fmt::format("(timed call {})", calls);
    ++calls;
    for (size_t a = 0; a < def.args.size(); ++a) {
      if (!is_output(def.args[a].role) || !cand_calls[s].args[a].defined()) continue;
      const Tensor got = candidate.read(cand_calls[s].args[a]);
      if (def.args[a].role == ArgRole::kOut)
        if (const int64_t unwritten = count_poisoned(got); unwritten > 0) {
          v.merge(Verdict::kRewardHack, fmt::format("left {} of {} elements of '{}' unwritten in a timed call {}",
                                                    unwritten, got.numel(), def.args[a].name, when));
          throw Stop{};
        }
      const Comparison c = compare(got, baseline.read(base_calls[s].args[a]).to_dtype(DType::kF64), loose);
      if (!c.passed) {
        v.merge(Verdict::kRewardHack,
                fmt::format("'{}' in a timed call disagrees with the baseline on the same inputs ({:.1f}% within twice "
                            "the tolerance) {}: its answers depend on being timed",
                            def.args[a].name, 100 * c.matched_fraction, when));
        throw Stop{};
      }
    }
  };
  const std::array<Subject, 2> subjects{cand_subject, base_subject};
  const WorkerCpu cpu_before = candidate.cpu();
  MeasureResult timed;
  try {
    timed = measure(*backend, subjects, RotationPlan{sets, true}, mo);
  } catch (const Stop&) {
    return g;
  }
  if (!timed.audit.empty()) {
    v.merge(Verdict::kRuntimeError, fmt::format("the device was not as the judge holds it while timed: {}", timed.audit));
    return g;
  }
  g.candidate_s = timed.subjects[0].seconds;
  g.baseline_s = timed.subjects[1].seconds;
  const WorkerCpu cpu_after = candidate.cpu();
  const double used = WorkerCpu::used(cpu_before, cpu_after);
  // A device worker also has its driver's and tracer's threads.
  const int cpu_threads = std::max(1, o.threads) + (device ? 1 : 0);
  const double allowed = 1.5 * cpu_threads * spans + awake + 0.02 + 1e-4 * static_cast<double>(o.warmup + o.iterations);
  // On a host worker the allowance for spinning between calls is the serving thread's
  // alone: every other thread (the candidate's own) fits in the calls' time with its
  // share of the threads, or works off the clock. A helper thread that keeps a core
  // busy between calls also slows the supervisor and the baseline's worker, which would
  // otherwise widen its own allowance. Device workers also run their driver's and
  // tracer's threads, whose CPU between calls has not been measured yet: they keep the
  // whole-process rule alone.
  const double off_main = device ? 0.0 : WorkerCpu::used_off_main(cpu_before, cpu_after);
  const double off_main_allowed = 1.5 * (cpu_threads - 1) * spans + 0.005;
  if (used > allowed)
    v.merge(Verdict::kRewardHack,
            fmt::format("its process used {:.1f} ms of CPU over timed calls that took {:.1f} ms with {} thread(s): "
                        "work went on outside the timed calls",
                        1e3 * used, 1e3 * spans, std::max(1, o.threads)));
  else if (off_main > off_main_allowed)
    v.merge(Verdict::kRewardHack,
            fmt::format("threads other than the one serving its calls used {:.1f} ms of CPU over timed calls that "
                        "took {:.1f} ms with {} thread(s): work went on outside the timed calls",
                        1e3 * off_main, 1e3 * spans, std::max(1, o.threads)));
  if (device) {
    // The timed rounds' walls are the last ones (the warm-up's came first).
    const auto last = [](const std::vector<double>& all, size_t n) {
      return std::vector<double>(all.end() - static_cast<std::ptrdiff_t>(std::min(n, all.size())), all.end());
    };
    g.candidate_span_s = g.candidate_s;
    g.candidate_wall_s = last(cand_wall, g.candidate_s.size());
    g.baseline_wall_s = last(base_wall, g.baseline_s.size());
    ChargedTimes t = device_time_bounded(g.candidate_span_s, g.candidate_wall_s, g.baseline_s, g.baseline_wall_s);
    if (t.charged_s > 0) {
      // The charge is confirmed by a second loop before it stands (confirmed_charge).
      const size_t c0 = cand_wall.size(), b0 = base_wall.size();
      MeasureResult second;
      try {
        second = measure(*backend, subjects, RotationPlan{sets, true}, mo);
      } catch (const Stop&) {
        return g;
      }
      const std::vector<double> cw(cand_wall.begin() + static_cast<std::ptrdiff_t>(c0), cand_wall.end());
      const std::vector<double> bw(base_wall.begin() + static_cast<std::ptrdiff_t>(b0), base_wall.end());
      t = confirmed_charge(t, device_time_bounded(second.subjects[0].seconds, last(cw, second.subjects[0].seconds.size()),
                                                  second.subjects[1].seconds,
                                                  last(bw, second.subjects[1].seconds.size())));
    }
    g.candidate_s = t.seconds;
    g.door_s = t.door_s;
    g.clock_excess_s = t.excess_s;
    g.clock_allowance_s = t.allowance_s;
    g.clock_charged_s = t.charged_s;
  }
  // Both again on one reused set as it is (cache-hot for both), recorded as reuse_ratio.
  // It is a figure, not a verdict: caching by address or content is caught above, by
  // inputs changed in place and values that change before every timed call.
  reuse = true;
  cand_subject.prepare = nullptr;
  base_subject.prepare = nullptr;
  MeasureOptions ro;
  ro.warmup = 0;
  ro.iterations = o.iterations;
  const std::array<Subject, 2> again{cand_subject, base_subject};
  std::vector<double> reused;
  try {
    const MeasureResult r = measure(*backend, again, RotationPlan{1, false}, ro);
    reused = r.subjects[0].seconds;
    for (double& s : reused) s += g.clock_charged_s;
  } catch (const Stop&) {
    return g;
  }
  g.candidate_median_s = median(g.candidate_s);
  g.baseline_median_s = median(g.baseline_s);
  g.speedup = g.candidate_median_s > 0 ? g.baseline_median_s / g.candidate_median_s : 0;
  g.reuse_ratio = g.candidate_median_s > 0 ? median(reused) / g.candidate_median_s : 1;
  return g;
}

}  // namespace fk::kernels
