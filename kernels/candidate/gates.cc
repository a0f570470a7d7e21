#include "kernels/candidate/gates.h"

#include "core/error.h"
#include "core/hash.h"
#include "core/stats.h"
#include "kernels/candidate/channel.h"
#include "kernels/compare.h"
#include "kernels/fk_kernel.h"

#include <algorithm>
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
    for (const Tensor& t : src.args) {
      if (!t.defined() || t.numel() == 0) {
        call.args.push_back(t);
        blocks.push_back(nullptr);
        bytes.push_back(0);
        continue;
      }
      const size_t n = t.nbytes();
      unsigned char* p = w.alloc_bytes((n + 2 * guard + 63) / 64 * 64);
      for (size_t i = 0; i < guard; ++i) p[i] = p[guard + n + i] = pattern(i);
      call.args.push_back(Tensor::borrow(p + guard, t.dtype(), t.shape()));
      blocks.push_back(p);
      bytes.push_back(n);
    }
    fill(src);
  }

  // Copies the values of `src` (same shapes) into the guarded buffers, in place.
  void fill(const OpCall& src) {
    call.params = src.params;
    for (size_t a = 0; a < blocks.size(); ++a) {
      if (!blocks[a]) continue;
      const Tensor c = src.args[a].is_contiguous() ? src.args[a] : src.args[a].contiguous_copy();
      std::memcpy(blocks[a] + guard, c.data(), bytes[a]);
    }
  }

  // "" or what was overwritten.
  std::string check_guards(const OpDef& def) const {
    for (size_t a = 0; a < blocks.size(); ++a) {
      if (!blocks[a]) continue;
      const unsigned char* p = blocks[a];
      size_t before = 0, after = 0;
      for (size_t i = 0; i < guard; ++i) {
        before += p[i] != pattern(i);
        after += p[guard + bytes[a] + i] != pattern(i);
      }
      if (after > 0) return fmt::format("wrote {} byte(s) past the end of '{}'", after, def.args[a].name);
      if (before > 0) return fmt::format("wrote {} byte(s) before the start of '{}'", before, def.args[a].name);
    }
    return "";
  }
};

void poison(const Tensor& t) { std::memset(t.data(), 0xff, t.nbytes()); }

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

// Runs one call in `w`; on failure merges the verdict and returns false.
bool run_checked(Worker& w, const OpDef& def, const OpCall& call, VerdictReason& v, bool& ended,
                 const std::string& when) {
  const auto reply = w.call(def.name, call);
  if (!reply) {
    merge_ended(w, v, when);
    ended = true;
    return false;
  }
  if (reply->code == FK_OK) return true;
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

// Rewrites the inputs of `dst` from `pristine`: float inputs are rotated by `shift`
// elements (new values at every position, the same distribution), integer inputs
// (ids, positions, indices) copied unchanged; outputs untouched.
void prepare_inputs(const OpDef& def, const OpCall& pristine, const OpCall& dst, int64_t shift) {
  for (size_t a = 0; a < def.args.size() && a < dst.args.size(); ++a) {
    if (def.args[a].role == ArgRole::kOut || !dst.args[a].defined() || dst.args[a].numel() == 0) continue;
    const Tensor& src = pristine.args[a];
    auto* out = static_cast<unsigned char*>(dst.args[a].data());
    const auto* in = static_cast<const unsigned char*>(src.data());
    const size_t bytes = src.nbytes();
    if (!def.args[a].float_typed || bytes > (size_t{64} << 20)) {
      std::memcpy(out, in, bytes);
      continue;
    }
    const size_t es = dtype_size(src.dtype());
    const size_t k = (static_cast<size_t>(shift) % static_cast<size_t>(src.numel())) * es;
    std::memcpy(out, in + k, bytes - k);
    std::memcpy(out + (bytes - k), in, k);
  }
}

}  // namespace

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
    const auto ref = run_reference(def, fresh);
    if (!in_place) {
      candidate.reset_arena();
      gc = std::make_unique<GuardedCall>(fresh, o.guard_bytes, candidate);
      for (size_t a = 0; a < def.args.size(); ++a)
        if (def.args[a].role == ArgRole::kOut && gc->call.args[a].defined()) poison(gc->call.args[a]);
    } else {
      // New values in the same buffers; outputs keep the previous round's result.
      for (size_t a = 0; a < def.args.size(); ++a)
        if (def.args[a].role != ArgRole::kOut && gc->call.args[a].defined())
          std::memcpy(gc->call.args[a].data(), fresh.args[a].contiguous_copy().data(), gc->bytes[a]);
      gc->call.params = fresh.params;
    }
    baseline.reset_arena();
    const OpCall base_call = baseline.copy_in(fresh);
    std::vector<uint64_t> sums(def.args.size(), 0);
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc->call.args[a].defined()) sums[a] = checksum(gc->call.args[a]);
    const std::string when = fmt::format("(gate round {})", round);
    if (!run_checked(candidate, def, gc->call, v, g.candidate_ended, when)) break;
    const WorkerCpu cpu_after_call = candidate.cpu();
    std::vector<Tensor> snapshot;
    for (size_t a = 0; a < def.args.size(); ++a)
      snapshot.push_back(is_output(def.args[a].role) && gc->call.args[a].defined() ? gc->call.args[a].contiguous_copy()
                                                                                   : Tensor());
    if (const std::string bad = gc->check_guards(def); !bad.empty()) {
      v.merge(Verdict::kIncorrectShape, bad);
      break;
    }
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc->call.args[a].defined() && checksum(gc->call.args[a]) != sums[a])
        v.merge(Verdict::kRewardHack, fmt::format("modified input '{}', which the op only reads", def.args[a].name));
    if (round == 0 && o.after_return_wait_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.after_return_wait_s));
      const WorkerCpu cpu_later = candidate.cpu();
      for (size_t a = 0; a < def.args.size(); ++a) {
        if (!snapshot[a].defined() || same_bytes(snapshot[a], gc->call.args[a])) continue;
        v.merge(Verdict::kRewardHack,
                fmt::format("output '{}' changed after return: work was left running ({} thread(s) in its process)",
                            def.args[a].name, cpu_later.threads));
      }
      const double idle_cpu = WorkerCpu::used(cpu_after_call, cpu_later);
      if (idle_cpu > 0.02 + 0.1 * o.after_return_wait_s)
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
      const Comparison b = compare(base_call.args[a], expected, tol);
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

  // Interleaved timing on rotated sets whose values change before every call.
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
  std::vector<unsigned char> flush(o.flush_bytes, 1);
  auto flush_caches = [&] {
    for (size_t b = 0; b < flush.size(); b += 64) flush[b] = static_cast<unsigned char>(flush[b] + 1);
  };
  const Tolerance loose{2 * tol.atol, 2 * tol.rtol, tol.min_matched};
  double spans = 0, awake = 0;  // awake: the worker spinning between a ping and its call
  const WorkerCpu cpu_before = candidate.cpu();
  for (int64_t i = 0; i < o.warmup + o.iterations; ++i) {
    const size_t s = static_cast<size_t>(i % sets);
    const int64_t shift = 1 + i * 7919;
    prepare_inputs(def, pristine[s], cand_calls[s], shift);
    prepare_inputs(def, pristine[s], base_calls[s], shift);
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kOut && cand_calls[s].args[a].defined()) poison(cand_calls[s].args[a]);
    const std::string when = fmt::format("(timed call {})", i);
    // Each worker is woken before the flush, so the timed span holds the call, not a wake-up.
    const auto pc = candidate.ping();
    const auto woke = std::chrono::steady_clock::now();
    flush_caches();
    const auto rc = pc ? candidate.call(def.name, cand_calls[s]) : std::nullopt;
    if (rc) awake += std::chrono::duration<double>(std::chrono::steady_clock::now() - woke).count() - rc->seconds;
    if (!rc) {
      merge_ended(candidate, v, when);
      g.candidate_ended = true;
      return g;
    }
    if (rc->code != FK_OK) {
      v.merge(Verdict::kRuntimeError, fmt::format("failed while timed: code {}: {} {}", rc->code, rc->message, when));
      return g;
    }
    const auto pb = baseline.ping();
    flush_caches();
    const auto rb = pb ? baseline.call(def.name, base_calls[s]) : std::nullopt;
    if (!rb || rb->code != FK_OK) {
      g.baseline_ended = !rb;
      v = VerdictReason{Verdict::kRuntimeError, "the baseline failed while timed"};
      return g;
    }
    spans += rc->seconds;
    if (i >= o.warmup) {
      g.candidate_s.push_back(rc->seconds);
      g.baseline_s.push_back(rb->seconds);
    }
    // Every timed output is a real answer to these inputs.
    for (size_t a = 0; a < def.args.size(); ++a) {
      if (!is_output(def.args[a].role) || !cand_calls[s].args[a].defined()) continue;
      const Tensor& got = cand_calls[s].args[a];
      if (def.args[a].role == ArgRole::kOut)
        if (const int64_t unwritten = count_poisoned(got); unwritten > 0) {
          v.merge(Verdict::kRewardHack, fmt::format("left {} of {} elements of '{}' unwritten in a timed call {}",
                                                    unwritten, got.numel(), def.args[a].name, when));
          return g;
        }
      const Comparison c = compare(got, base_calls[s].args[a].to_dtype(DType::kF64), loose);
      if (!c.passed) {
        v.merge(Verdict::kRewardHack,
                fmt::format("'{}' in a timed call disagrees with the baseline on the same inputs ({:.1f}% within twice "
                            "the tolerance) {}: its answers depend on being timed",
                            def.args[a].name, 100 * c.matched_fraction, when));
        return g;
      }
    }
  }
  const double used = WorkerCpu::used(cpu_before, candidate.cpu());
  const double allowed = 1.5 * std::max(1, o.threads) * spans + awake + 0.02 +
                         1e-4 * static_cast<double>(o.warmup + o.iterations);
  if (used > allowed)
    v.merge(Verdict::kRewardHack,
            fmt::format("its process used {:.1f} ms of CPU over timed calls that took {:.1f} ms with {} thread(s): "
                        "work went on outside the timed calls",
                        1e3 * used, 1e3 * spans, std::max(1, o.threads)));
  // Both again on one reused set (cache-hot for both), recorded as reuse_ratio. It is a
  // figure, not a verdict: caching by address or content is caught above, by inputs
  // changed in place and values that change before every timed call.
  std::vector<double> reused, base_reused;
  for (int64_t i = 0; i < o.iterations; ++i) {
    const auto pc = candidate.ping();
    const auto rc = pc ? candidate.call(def.name, cand_calls[0]) : std::nullopt;
    const auto pb = baseline.ping();
    const auto rb = pb ? baseline.call(def.name, base_calls[0]) : std::nullopt;
    if (!rc || !rb || rc->code != FK_OK || rb->code != FK_OK) {
      if (!rc) {
        merge_ended(candidate, v, "(reused buffers)");
        g.candidate_ended = true;
      } else {
        v.merge(Verdict::kRuntimeError, "failed when called again with the same buffers");
      }
      return g;
    }
    reused.push_back(rc->seconds);
    base_reused.push_back(rb->seconds);
  }
  g.candidate_median_s = median(g.candidate_s);
  g.baseline_median_s = median(g.baseline_s);
  g.speedup = g.candidate_median_s > 0 ? g.baseline_median_s / g.candidate_median_s : 0;
  g.reuse_ratio = g.candidate_median_s > 0 ? median(reused) / g.candidate_median_s : 1;
  return g;
}

}  // namespace fk::kernels
